//! Prometheus metrics: the process's recorder and what `GET /metrics` on
//! the admin endpoint renders.
//!
//! Owns the recorder (the `metrics` crate's global recorder, a
//! `metrics-exporter-prometheus` one, installed once per process by
//! [`Metrics::install`]) and the gauges that are read from the engine at
//! scrape time — storage counters, connections, every ISCP job's state, lag
//! and progress, armed fault points. Events (statements, commits, fsyncs,
//! lock waits, connections refused) are recorded where they happen with
//! the `metrics` macros; without an installed recorder those are no-ops.
//! Every name is listed in `docs/OPERATIONS.md`.
//!
//! It never formats exposition text itself and never writes anything.

use std::sync::Arc;
use std::time::Duration;

use metrics::{counter, gauge};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

use crate::db::Database;

/// Histogram buckets in seconds: 100 µs to 60 s.
const SECONDS_BUCKETS: &[f64] = &[
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0, 30.0, 60.0,
];

/// Changes after a job's watermark counted exactly for
/// `tributary_iscp_job_lag_changes`; more show as this many.
const LAG_CHANGES_CAP: usize = 100_000;
/// A job's gauges not refreshed for this long (its row collected) leave
/// the scrape: twenty scrapes at Prometheus's default 15 s.
const GONE_GAUGE_IDLE: Duration = Duration::from_secs(300);

/// The installed recorder and the engine its scrape-time gauges read.
pub struct Metrics {
    handle: PrometheusHandle,
    db: Database,
}

impl Metrics {
    /// Install the process's recorder (once: a second call fails) for
    /// `db`'s metrics.
    pub fn install(db: Database) -> Result<Arc<Metrics>, String> {
        let handle = PrometheusBuilder::new()
            .set_buckets_for_metric(Matcher::Suffix("_seconds".to_string()), SECONDS_BUCKETS)
            .map_err(|e| e.to_string())?
            // Scrape-time gauges of a job that is gone (its row collected)
            // stop being refreshed and disappear.
            .idle_timeout(metrics_util::MetricKindMask::GAUGE, Some(GONE_GAUGE_IDLE))
            .install_recorder()
            .map_err(|e| e.to_string())?;
        describe();
        Ok(Arc::new(Metrics { handle, db }))
    }

    /// The exposition text: scrape-time gauges refreshed first.
    pub fn render(&self) -> String {
        self.collect();
        self.handle.run_upkeep();
        self.handle.render()
    }

    /// Drain histogram buffers (call now and then between scrapes).
    pub fn upkeep(&self) {
        self.handle.run_upkeep();
    }

    fn collect(&self) {
        let engine = self.db.engine();
        for (name, value) in engine.storage.status() {
            let short = name.trim_start_matches("Tributary_").to_ascii_lowercase();
            gauge!(format!("tributary_storage_{short}")).set(value as f64);
        }
        for (name, value) in engine.processes.status() {
            if name == "Threads_connected" {
                gauge!("tributary_sessions").set(value as f64);
            }
        }
        gauge!("tributary_fault_points_armed").set(tributary_fault::global().list().len() as f64);
        gauge!("tributary_iscp_runner").set(
            if engine
                .iscp
                .is_runner
                .load(std::sync::atomic::Ordering::Acquire)
            {
                1.0
            } else {
                0.0
            },
        );
        if let Err(e) = self.collect_jobs() {
            tracing::warn!(error = %e, "reading ISCP jobs for metrics failed");
        }
    }

    /// Per job, labelled by database, table, index and job id
    /// ([`crate::iscp::status::JobStatus`], the one computation SHOW ISCP
    /// STATUS renders too).
    fn collect_jobs(&self) -> Result<(), crate::error::SqlError> {
        for j in self.db.engine().iscp.job_statuses(LAG_CHANGES_CAP)? {
            let labels = [
                ("db", j.db.clone().unwrap_or_default()),
                ("table", j.table.clone().unwrap_or_default()),
                ("index", j.index_name().to_string()),
                ("job_id", j.key.job_id.to_string()),
            ];
            gauge!("tributary_iscp_job_state", &labels).set(j.state as i64 as f64);
            if let Some(ms) = j.lag_ms {
                gauge!("tributary_iscp_job_lag_seconds", &labels).set(ms as f64 / 1000.0);
            }
            gauge!("tributary_iscp_job_lag_changes", &labels)
                .set(j.lag_changes.unwrap_or(0) as f64);
            gauge!("tributary_iscp_job_rows_applied", &labels).set(j.rows_applied as f64);
            gauge!("tributary_iscp_job_units", &labels).set(j.iterations as f64);
            gauge!("tributary_iscp_job_retries", &labels).set(f64::from(j.retries));
            gauge!("tributary_iscp_job_error_code", &labels)
                .set(j.error.as_ref().map_or(0.0, |(c, _)| f64::from(*c)));
            gauge!("tributary_iscp_job_build_progress", &labels).set(j.progress.fraction());
        }
        Ok(())
    }
}

/// A statement's kind for metric labels: its first keyword, among a fixed
/// set (so user text never becomes a label value).
pub fn statement_kind(sql: &str) -> &'static str {
    let word = sql
        .trim_start()
        .split(|c: char| !c.is_ascii_alphabetic())
        .next()
        .unwrap_or("");
    const KINDS: &[&str] = &[
        "select", "insert", "update", "delete", "replace", "create", "drop", "alter", "truncate",
        "set", "show", "begin", "start", "commit", "rollback", "explain", "use", "grant", "revoke",
        "lock", "unlock", "kill", "with", "describe",
    ];
    KINDS
        .iter()
        .find(|k| k.eq_ignore_ascii_case(word))
        .copied()
        .unwrap_or("other")
}

/// Count a finished statement and its time.
pub fn statement_done(kind: &'static str, ok: bool, took: Duration) {
    let outcome = if ok { "ok" } else { "error" };
    counter!("tributary_statements_total", "kind" => kind, "outcome" => outcome).increment(1);
    metrics::histogram!("tributary_statement_duration_seconds", "kind" => kind)
        .record(took.as_secs_f64());
}

fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_counter!(
        "tributary_statements_total",
        "Statements by kind (first keyword) and outcome"
    );
    describe_histogram!(
        "tributary_statement_duration_seconds",
        Unit::Seconds,
        "Statement latency by kind (DROP's is kind=\"drop\")"
    );
    describe_counter!("tributary_connections_total", "Connections accepted");
    describe_counter!(
        "tributary_connections_refused_total",
        "Connections refused, by reason (max_connections, max_user_connections)"
    );
    describe_gauge!("tributary_connections_open", "Open client connections");
    describe_gauge!("tributary_sessions", "Sessions in the process list");
    describe_counter!("tributary_commits_total", "Writing transactions committed");
    describe_histogram!(
        "tributary_commit_duration_seconds",
        Unit::Seconds,
        "Commit latency, durable"
    );
    describe_counter!(
        "tributary_fsyncs_total",
        "Durable writes (fsyncs) of the embedded store"
    );
    describe_histogram!(
        "tributary_fsync_duration_seconds",
        Unit::Seconds,
        "fsync latency"
    );
    describe_counter!(
        "tributary_lock_waits_total",
        "Row-lock requests that had to wait"
    );
    describe_counter!(
        "tributary_deadlocks_total",
        "Lock waits refused as deadlocks (1213)"
    );
    describe_counter!(
        "tributary_lock_wait_timeouts_total",
        "Lock waits that timed out (1205)"
    );
    describe_gauge!(
        "tributary_fault_points_armed",
        "Fault points armed in this process"
    );
    describe_gauge!(
        "tributary_iscp_runner",
        "1 on the node holding the ISCP runner lease"
    );
    describe_gauge!(
        "tributary_iscp_job_state",
        "Job state (1 pending … 3 completed, 4 error, 5 canceled, 6 canceling)"
    );
    describe_gauge!(
        "tributary_iscp_job_lag_seconds",
        Unit::Seconds,
        "Age of the oldest change the job has not applied"
    );
    describe_gauge!(
        "tributary_iscp_job_lag_changes",
        "Changes after the job's watermark (counted up to 100000)"
    );
    describe_gauge!(
        "tributary_iscp_job_rows_applied",
        "Rows the job has applied"
    );
    describe_gauge!(
        "tributary_iscp_job_units",
        "Work units the job has committed"
    );
    describe_gauge!(
        "tributary_iscp_job_retries",
        "Retries since the job's last success"
    );
    describe_gauge!(
        "tributary_iscp_job_error_code",
        "The job's last error code (0: none)"
    );
    describe_gauge!(
        "tributary_iscp_job_build_progress",
        "Initial build progress, 0 to 1"
    );
}

#[cfg(test)]
mod tests {
    use super::statement_kind;

    #[test]
    fn statement_kinds_are_a_fixed_set() {
        assert_eq!(statement_kind("  SELECT 1"), "select");
        assert_eq!(statement_kind("drop index i on t"), "drop");
        assert_eq!(statement_kind("(SELECT 1)"), "other");
        assert_eq!(statement_kind("'; DROP TABLE x"), "other");
        assert_eq!(statement_kind("frobnicate"), "other");
    }
}
