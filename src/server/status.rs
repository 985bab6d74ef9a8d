//! The status page (`GET /` on the admin endpoint): ISCP jobs with state,
//! lag and build progress, plots of each job's lag and of the commit rate
//! over the last minutes, recent errors, armed fault points, connections.
//!
//! Owns a sampler (one sample a second, the last ten minutes kept) and the
//! page's server-rendered HTML with inline SVG plots: no script, no
//! library, so the page works wherever HTML does; it reloads itself every
//! two seconds. Also owns the process-wide ring of recent statement errors
//! the server reports here.
//!
//! Error messages (of statements and of jobs) carry row values of any
//! session (`Duplicate entry 'alice@example' …`): the page shows them
//! only to a request carrying the admin token ([`Status::render`]'s
//! `full`); without it, codes only. It never shows statement text.
//!
//! It never writes to storage; every read is a read-only snapshot.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::db::Database;
use crate::iscp::log::JobState;
use crate::iscp::status::JobStatus;

/// Samples kept: one a second for ten minutes.
const KEEP: usize = 600;
/// Recent errors kept.
const ERRORS: usize = 20;
/// How often the status page samples (its charts are per second).
const SAMPLE_EVERY: Duration = Duration::from_secs(1);

/// One sample: when, the newest commit timestamp, and each job's lag.
#[derive(Clone)]
struct Sample {
    at_ms: u64,
    latest_ts: u64,
    /// (job label, commits behind).
    lags: Vec<(String, i64)>,
}

/// A statement that failed, for the page.
#[derive(Clone)]
struct RecentError {
    at_ms: u64,
    code: u16,
    message: String,
}

static RECENT_ERRORS: Mutex<VecDeque<RecentError>> = Mutex::new(VecDeque::new());

/// Remember a failed statement's error for the status page.
pub fn record_error(code: u16, message: &str) {
    let mut e = RECENT_ERRORS.lock();
    if e.len() == ERRORS {
        e.pop_front();
    }
    let mut message = message.to_string();
    if message.len() > 300 {
        let mut cut = 300;
        while !message.is_char_boundary(cut) {
            cut -= 1;
        }
        message.truncate(cut);
    }
    e.push_back(RecentError {
        at_ms: crate::iscp::now_ms(),
        code,
        message,
    });
}

/// The sampler's history and the engine it reads.
pub struct Status {
    db: Database,
    samples: Mutex<VecDeque<Sample>>,
}

impl Status {
    pub fn new(db: Database) -> Arc<Status> {
        Arc::new(Status {
            db,
            samples: Mutex::new(VecDeque::new()),
        })
    }

    /// Sample every second until `stop`.
    pub async fn run(self: Arc<Self>, stop: CancellationToken) {
        loop {
            let s = self.clone();
            match tokio::task::spawn_blocking(move || s.sample()).await {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::debug!(error = %e, "status sample failed"),
                Err(e) => tracing::warn!(error = %e, "status sampler task failed"),
            }
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = tokio::time::sleep(SAMPLE_EVERY) => {}
            }
        }
    }

    /// Every job's status ([`crate::iscp::status::JobStatus`], the one
    /// computation SHOW ISCP STATUS and `/metrics` use too).
    fn jobs(&self) -> Result<Vec<JobStatus>, crate::error::SqlError> {
        self.db.engine().iscp.job_statuses(0)
    }

    /// Take one sample (blocking: reads the job log).
    pub fn sample(&self) -> Result<(), crate::error::SqlError> {
        let latest_ts = self.db.engine().storage.latest_ts();
        let lags = self
            .jobs()?
            .into_iter()
            .filter(|j| j.state != JobState::Canceled)
            .map(|j| (j.label(), j.lag_ts as i64))
            .collect();
        let mut s = self.samples.lock();
        if s.len() == KEEP {
            s.pop_front();
        }
        s.push_back(Sample {
            at_ms: crate::iscp::now_ms(),
            latest_ts,
            lags,
        });
        Ok(())
    }

    /// The page (blocking: reads the job log). Error messages only when
    /// `full` (the request carried the admin token); else codes only.
    pub fn render(&self, full: bool) -> String {
        let engine = self.db.engine();
        let jobs = self.jobs();
        let samples: Vec<Sample> = self.samples.lock().iter().cloned().collect();
        let mut h = String::with_capacity(16 << 10);
        h.push_str(
            "<!doctype html><html><head><meta charset=\"utf-8\">\
             <meta http-equiv=\"refresh\" content=\"2\"><title>Tributary status</title>\
             <style>body{font-family:sans-serif;margin:1.5em}table{border-collapse:collapse}\
             td,th{border:1px solid #ccc;padding:2px 8px;text-align:left}\
             svg{background:#fafafa;border:1px solid #ddd}h2{margin-top:1.2em}</style>\
             </head><body><h1>Tributary</h1>",
        );
        if !full {
            h.push_str(
                "<p id=\"redacted\">Error messages are hidden: they carry row values. \
                 Send <code>Authorization: Bearer &lt;admin token&gt;</code> to see them.</p>",
            );
        }
        let sessions = engine
            .processes
            .status()
            .into_iter()
            .find(|(k, _)| *k == "Threads_connected")
            .map_or(0, |(_, v)| v);
        let runner = engine
            .iscp
            .is_runner
            .load(std::sync::atomic::Ordering::Acquire);
        let _ = write!(
            h,
            "<p id=\"summary\">node <b>{}</b> · ISCP runner: <b>{}</b> · sessions: \
             <b id=\"sessions\">{sessions}</b> · latest commit ts: <b>{}</b></p>",
            esc(&engine.config.node_name),
            if runner { "yes" } else { "no" },
            engine.storage.latest_ts()
        );
        h.push_str("<h2>Commit rate (commits/s)</h2>");
        let rate: Vec<(u64, f64)> = samples
            .windows(2)
            .map(|w| {
                let dt = (w[1].at_ms.saturating_sub(w[0].at_ms)).max(1) as f64 / 1000.0;
                (
                    w[1].at_ms,
                    w[1].latest_ts.saturating_sub(w[0].latest_ts) as f64 / dt,
                )
            })
            .collect();
        plot(&mut h, "commit-rate", &rate);
        h.push_str("<h2 id=\"jobs\">ISCP jobs</h2>");
        match &jobs {
            Ok(jobs) if jobs.is_empty() => h.push_str("<p>No jobs.</p>"),
            Ok(jobs) => {
                h.push_str(
                    "<table><tr><th>job</th><th>state</th><th>phase</th><th>lag (commits)</th>\
                     <th>lag (ms)</th><th>build</th><th>error</th></tr>",
                );
                for j in jobs {
                    // The message may carry row values: the code only
                    // without the token.
                    let error = j.error.as_ref().map_or(String::new(), |(c, m)| {
                        if full {
                            format!("{c}: {m}")
                        } else {
                            c.to_string()
                        }
                    });
                    let _ = write!(
                        h,
                        "<tr class=\"job\" data-job=\"{l}\"><td>{l}</td><td>{}</td><td>{}</td>\
                         <td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                        esc(j.state.name()),
                        esc(j.phase.name()),
                        j.lag_ts,
                        j.lag_ms.map_or("–".to_string(), |v| v.to_string()),
                        esc(&j.progress.text()),
                        esc(&error),
                        l = esc(&j.label()),
                    );
                }
                h.push_str("</table>");
                for j in jobs.iter().filter(|j| j.state != JobState::Canceled) {
                    let label = j.label();
                    let series: Vec<(u64, f64)> = samples
                        .iter()
                        .filter_map(|s| {
                            s.lags
                                .iter()
                                .find(|(l, _)| *l == label)
                                .map(|(_, lag)| (s.at_ms, *lag as f64))
                        })
                        .collect();
                    let _ = write!(h, "<h3>Lag of {} (commits behind)</h3>", esc(&label));
                    plot(&mut h, &format!("lag-{label}"), &series);
                }
            }
            Err(e) => {
                let _ = write!(h, "<p>Reading the jobs failed: {}</p>", esc(&e.to_string()));
            }
        }
        h.push_str("<h2>Recent errors</h2>");
        let errors: Vec<RecentError> = RECENT_ERRORS.lock().iter().rev().cloned().collect();
        if errors.is_empty() {
            h.push_str("<p id=\"errors\">None.</p>");
        } else {
            h.push_str("<table id=\"errors\"><tr><th>ago</th><th>code</th><th>message</th></tr>");
            let now = crate::iscp::now_ms();
            for e in errors {
                let _ = write!(
                    h,
                    "<tr><td>{} s</td><td>{}</td><td>{}</td></tr>",
                    now.saturating_sub(e.at_ms) / 1000,
                    e.code,
                    if full { esc(&e.message) } else { "–".into() }
                );
            }
            h.push_str("</table>");
        }
        h.push_str("<h2>Armed fault points</h2>");
        let points = tributary_fault::global().list();
        if points.is_empty() {
            h.push_str("<p id=\"faults\">None.</p>");
        } else {
            h.push_str("<ul id=\"faults\">");
            for p in points {
                let name = match &p.target {
                    Some(t) => format!("{}:{t}", p.name),
                    None => p.name.clone(),
                };
                let _ = write!(
                    h,
                    "<li>{} — {:?} ({}), freq '{}', {} hits</li>",
                    esc(&name),
                    p.action,
                    p.iarg,
                    esc(&p.freq),
                    p.hits
                );
            }
            h.push_str("</ul>");
        }
        h.push_str("</body></html>");
        h
    }
}

/// An inline SVG line plot of `(unix ms, value)`: the x axis spans the
/// samples kept (up to ten minutes, at least a minute), now at the right.
fn plot(h: &mut String, id: &str, series: &[(u64, f64)]) {
    const W: f64 = 600.0;
    const HT: f64 = 120.0;
    let now = crate::iscp::now_ms();
    let oldest = series.first().map_or(now, |(t, _)| *t);
    let span = (now.saturating_sub(oldest) as f64).clamp(60_000.0, KEEP as f64 * 1000.0);
    let max = series.iter().map(|(_, v)| *v).fold(1.0_f64, f64::max);
    let points: Vec<String> = series
        .iter()
        .map(|(t, v)| {
            let age = now.saturating_sub(*t) as f64;
            let x = (W - age / span * W).clamp(0.0, W);
            let y = HT - (v / max) * (HT - 10.0);
            format!("{x:.1},{y:.1}")
        })
        .collect();
    let _ = write!(
        h,
        "<svg id=\"{id}\" class=\"plot\" width=\"{W}\" height=\"{HT}\" \
         viewBox=\"0 0 {W} {HT}\" data-samples=\"{n}\" data-max=\"{max}\">\
         <text x=\"4\" y=\"12\" font-size=\"10\">max {max:.1} · last {secs} s</text>\
         <polyline fill=\"none\" stroke=\"#2a6\" stroke-width=\"1.5\" points=\"{}\"/></svg>",
        points.join(" "),
        id = esc(id),
        n = series.len(),
        secs = (span / 1000.0).round(),
    );
}

/// HTML-escape text.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_escaped() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    /// Without the token the page shows the codes of recent errors but
    /// never their messages (which carry other sessions' row values).
    #[test]
    fn error_messages_only_with_the_token() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::open(dir.path()).unwrap();
        let status = Status::new(db.clone());
        let secret = "alice-7f3a9@secret.example";
        let mut s = db.session();
        s.execute("CREATE DATABASE d").unwrap();
        s.execute("CREATE TABLE d.t (e VARCHAR(64) PRIMARY KEY)")
            .unwrap();
        s.execute(&format!("INSERT INTO d.t VALUES ('{secret}')"))
            .unwrap();
        let e = s
            .execute(&format!("INSERT INTO d.t VALUES ('{secret}')"))
            .unwrap_err();
        assert_eq!(e.code, 1062);
        record_error(e.code, &e.message);
        let open = status.render(false);
        assert!(!open.contains(secret), "{open}");
        assert!(open.contains("<td>1062</td>"), "{open}");
        assert!(open.contains("id=\"redacted\""));
        let full = status.render(true);
        assert!(full.contains(secret), "{full}");
        assert!(!full.contains("id=\"redacted\""));
        db.shutdown();
    }

    #[test]
    fn a_plot_has_one_point_per_sample() {
        let now = crate::iscp::now_ms();
        let mut h = String::new();
        plot(
            &mut h,
            "p",
            &[(now - 2000, 1.0), (now - 1000, 4.0), (now, 2.0)],
        );
        assert!(h.contains("data-samples=\"3\""), "{h}");
        let points = h
            .split("points=\"")
            .nth(1)
            .unwrap()
            .split('"')
            .next()
            .unwrap();
        assert_eq!(points.split(' ').count(), 3);
    }
}
