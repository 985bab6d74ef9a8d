//! What each ISCP job is doing, computed once for every reader.
//!
//! Owns [`JobStatus`] (phase, lag in commits, milliseconds and changes,
//! build progress, last checkpoint, error) and [`job_statuses`], the one
//! function that computes it from the job log, the change log and this
//! CN's cached indexes. `SHOW ISCP STATUS`, `/metrics` and the admin status
//! page render it; none of them reads another's output, so a column added
//! to one cannot break the others.
//!
//! This module must never write: it reads job rows, the change log and the
//! catalog in the caller's transaction and nothing else.

use std::collections::HashMap;

use tributary_storage::{Storage, Transaction, Ts};

use crate::catalog::{self, TableDef};
use crate::error::SqlResult;
use crate::iscp::log::{JobKey, JobRow, JobState, Stage};
use crate::iscp::Iscp;

/// What a job is doing, as a reader names it (the job row's state says
/// less: a job is `Completed` between two units of a build too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Its initial build is running.
    Building,
    /// Built, with changes it has not applied yet.
    CatchingUp,
    /// Built and nothing to apply.
    Current,
    /// Its last unit failed with a temporary error; it will retry.
    Retrying,
    /// Being dropped.
    Canceling,
    /// Dropped (kept listed for a while).
    Canceled,
    /// Stopped by a permanent error.
    Error,
}

impl Phase {
    /// The name `SHOW ISCP STATUS` and the status page show.
    pub fn name(self) -> &'static str {
        match self {
            Phase::Building => "building",
            Phase::CatchingUp => "catching up",
            Phase::Current => "current",
            Phase::Retrying => "retrying",
            Phase::Canceling => "canceling",
            Phase::Canceled => "canceled",
            Phase::Error => "error",
        }
    }
}

/// An initial build's progress: rows done of the rows it reads (`total` is
/// `None` once the build is over).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Progress {
    pub done: u64,
    pub total: Option<u64>,
}

impl Progress {
    /// `done/total`, or `done` after the build.
    pub fn text(&self) -> String {
        match self.total {
            Some(total) => format!("{}/{total}", self.done),
            None => "done".into(),
        }
    }

    /// The finished fraction, 0 to 1 (1 after the build).
    pub fn fraction(&self) -> f64 {
        match self.total {
            None => 1.0,
            Some(0) => 0.0,
            Some(total) => (self.done as f64 / total as f64).min(1.0),
        }
    }
}

/// One job's status.
#[derive(Debug, Clone, PartialEq)]
pub struct JobStatus {
    pub key: JobKey,
    /// Database and table by name (`None` once the table is gone).
    pub db: Option<String>,
    pub table: Option<String>,
    pub phase: Phase,
    pub state: JobState,
    /// DROP has marked it (it is being canceled).
    pub dropped: bool,
    /// A synchronous index: written by the writing transactions, never
    /// lagging.
    pub sync: bool,
    pub stage: Stage,
    pub watermark: Ts,
    /// Commits between the watermark and the newest change of the table.
    pub lag_ts: u64,
    /// Age of the oldest change not applied (`None`: this process does not
    /// remember when it was committed).
    pub lag_ms: Option<u64>,
    /// Changes not applied, counted up to the cap the caller asked for
    /// (`None` when it asked for none).
    pub lag_changes: Option<usize>,
    pub rows_applied: u64,
    pub iterations: u64,
    pub retries: u32,
    pub progress: Progress,
    /// When this CN last wrote a checkpoint (base) of the index, Unix ms.
    pub checkpoint_ms: Option<u64>,
    /// HNSW vectors searchable in the index's tail but not yet in its graph.
    pub deferred: usize,
    /// The last unit's error, code and message.
    pub error: Option<(u32, String)>,
}

impl JobStatus {
    /// The index's name (the job's name without its prefix).
    pub fn index_name(&self) -> &str {
        self.key.job_name.trim_start_matches("index_")
    }

    /// `db.table.index`.
    pub fn label(&self) -> String {
        format!(
            "{}.{}.{}",
            self.db.as_deref().unwrap_or(""),
            self.table.as_deref().unwrap_or(""),
            self.index_name()
        )
    }
}

/// Every job's status, read in `txn`; `lag_changes_cap` > 0 also counts
/// the changes not applied, up to that many.
pub fn job_statuses(
    storage: &dyn Storage,
    iscp: &Iscp,
    txn: &mut dyn Transaction,
    lag_changes_cap: usize,
) -> SqlResult<Vec<JobStatus>> {
    let latest = storage.latest_ts();
    let jobs = crate::iscp::log::read_all(txn)?;
    let mut tables: HashMap<u64, Option<TableDef>> = HashMap::new();
    let mut out = Vec::with_capacity(jobs.len());
    for j in jobs {
        let table = match tables.get(&j.key.table_id) {
            Some(t) => t.clone(),
            None => {
                let t = catalog::table_by_id(txn, j.key.table_id)?;
                tables.insert(j.key.table_id, t.clone());
                t
            }
        };
        out.push(one(
            storage,
            iscp,
            txn,
            j,
            table.as_ref(),
            latest,
            lag_changes_cap,
        )?);
    }
    Ok(out)
}

fn one(
    storage: &dyn Storage,
    iscp: &Iscp,
    txn: &mut dyn Transaction,
    j: JobRow,
    table: Option<&TableDef>,
    latest: Ts,
    lag_changes_cap: usize,
) -> SqlResult<JobStatus> {
    // A synchronous index is written by the writing transactions
    // themselves: it never lags (its watermark is its last base).
    let sync = j.spec.is_sync_live();
    let lag_ts = if j.state.is_terminal() || sync {
        0
    } else {
        let newest =
            crate::iscp::log::newest_change_ts(storage, j.key.table_id, j.watermark, latest)?;
        newest.saturating_sub(j.watermark)
    };
    // Lag in time: the age of the oldest change the job has not applied,
    // when this process remembers when it was committed; and in changes.
    let (lag_ms, lag_changes) = if lag_ts == 0 {
        (Some(0), (lag_changes_cap > 0).then_some(0))
    } else {
        let limit = lag_changes_cap.max(1);
        let batch = storage
            .changes(j.key.table_id, j.watermark, latest, None, limit)
            .ok();
        let ms = batch
            .as_ref()
            .and_then(|b| b.changes.first().map(|c| c.commit_ts))
            .and_then(|ts| storage.commit_time_ms(ts))
            .map(|at| crate::iscp::now_ms().saturating_sub(at));
        let n = (lag_changes_cap > 0).then(|| batch.map_or(0, |b| b.changes.len()));
        (ms, n)
    };
    let (deferred, checkpoint_ms) = iscp.cached(j.key.job_id).map_or((0, None), |h| {
        let g = h.read();
        (g.index.deferred(), g.checkpoint_ms)
    });
    let building = !sync && j.status.stage == Stage::Init;
    let phase = match j.state {
        JobState::Canceling => Phase::Canceling,
        JobState::Canceled => Phase::Canceled,
        JobState::Error => Phase::Error,
        _ if j.status.error_code != 0 => Phase::Retrying,
        _ if building => Phase::Building,
        _ if lag_ts > 0 => Phase::CatchingUp,
        _ => Phase::Current,
    };
    // A build's total is written with its first unit: before that, count
    // the rows it will read (keys only, at this snapshot).
    let progress = match table {
        _ if !building => Progress {
            done: j.status.build_done,
            total: None,
        },
        Some(t) if j.status.build_total == 0 && !j.state.is_terminal() => {
            let mut n = 0u64;
            txn.scan_visit(
                t.id,
                std::ops::Bound::Unbounded,
                std::ops::Bound::Unbounded,
                &mut |_, _| {
                    n += 1;
                    true
                },
            )?;
            Progress {
                done: j.status.build_done,
                total: Some(n),
            }
        }
        _ => Progress {
            done: j.status.build_done,
            total: Some(j.status.build_total),
        },
    };
    Ok(JobStatus {
        db: table.map(|t| t.db.clone()),
        table: table.map(|t| t.name.clone()),
        phase,
        state: j.state,
        dropped: j.drop_at.is_some(),
        sync,
        stage: j.status.stage,
        watermark: j.watermark,
        lag_ts,
        lag_ms,
        lag_changes,
        rows_applied: j.status.rows_applied,
        iterations: j.status.iterations,
        retries: j.status.retries,
        progress,
        checkpoint_ms,
        deferred,
        error: (j.status.error_code != 0).then_some((j.status.error_code, j.status.error_msg)),
        key: j.key,
    })
}

impl Iscp {
    /// [`job_statuses`] in a transaction of its own.
    pub fn job_statuses(&self, lag_changes_cap: usize) -> SqlResult<Vec<JobStatus>> {
        let mut txn = self
            .storage
            .begin(tributary_storage::TxnOptions::default())?;
        let r = job_statuses(self.storage.as_ref(), self, txn.as_mut(), lag_changes_cap);
        txn.rollback();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_text_and_fraction() {
        let p = |done, total| Progress { done, total };
        assert_eq!(p(3, Some(10)).text(), "3/10");
        assert_eq!(p(3, None).text(), "done");
        assert_eq!(p(3, None).fraction(), 1.0);
        assert_eq!(p(0, Some(0)).fraction(), 0.0);
        assert_eq!(p(5, Some(10)).fraction(), 0.5);
        assert_eq!(p(12, Some(10)).fraction(), 1.0);
    }

    #[test]
    fn phase_names_are_distinct() {
        let all = [
            Phase::Building,
            Phase::CatchingUp,
            Phase::Current,
            Phase::Retrying,
            Phase::Canceling,
            Phase::Canceled,
            Phase::Error,
        ];
        let names: std::collections::HashSet<_> = all.iter().map(|p| p.name()).collect();
        assert_eq!(names.len(), all.len());
    }
}
