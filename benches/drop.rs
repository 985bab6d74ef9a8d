//! DROP INDEX latency of asynchronous (ISCP) indexes. Plain `std::time`
//! measurement (harness = false); prints one line per scenario with p50,
//! p99 and max over `DROP_BENCH_N` repetitions (default 30).
//! Run: `cargo bench --bench drop`.
//!
//! Scenarios, each on a table with a few hundred rows and an ASYNC HNSW
//! index on a `VECF32(8)` column (a FULLTEXT ASYNC index for `before-exec`):
//! * stalled at each `fj/iscp/cancel/long/…` point: the index is created
//!   and caught up, the point is armed for `idx01` with a cancellation-aware
//!   `sleep 30`, one INSERT starts a consumer, and once the point has been
//!   hit the DROP is timed (it returns when the job is Canceled);
//! * no stall, under a steady single-row autocommit insert load from a
//!   second thread: create, wait until caught up, time the DROP.
//!
//! Uses the process-global fault registry directly (a bench cannot share
//! the test guard) and leaves it disabled with nothing armed. Never sleeps
//! to synchronise: conditions are polled with a deadline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tributary::testing::{JobRow, JobState, Stage};
use tributary::{Config, Database, Session};
use tributary_fault::global;

/// Bound of every wait (index caught up, point hit).
const WAIT: Duration = Duration::from_secs(30);
const HNSW: &str = "CREATE INDEX idx01 USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC";
const FULLTEXT: &str = "CREATE FULLTEXT INDEX idx01 ON t(body) ASYNC";
const ROWS: i64 = 300;
const DIMS: usize = 8;

fn wait_until(what: &str, mut f: impl FnMut() -> bool) {
    let end = Instant::now() + WAIT;
    while !f() {
        let now = Instant::now();
        assert!(now < end, "timed out after {WAIT:?} waiting for {what}");
        std::thread::park_timeout((end - now).min(Duration::from_millis(2)));
    }
}

fn exec(s: &mut Session, sql: &str) -> tributary::QueryResult {
    match s.execute(sql) {
        Ok(r) => r,
        Err(e) => panic!("{sql}: {e:?}"),
    }
}

fn row(i: i64) -> String {
    let v: Vec<String> = (0..DIMS)
        .map(|k| format!("{:.3}", ((i * 31 + k as i64 * 7) % 1000) as f32 / 100.0))
        .collect();
    format!("({i},'row {i} rust database bench','[{}]')", v.join(","))
}

/// Newest generation of idx01's job.
fn job(db: &Database) -> Option<JobRow> {
    let jn = tributary::testing::job_name("idx01");
    db.engine()
        .iscp
        .read_jobs()
        .ok()?
        .into_iter()
        .filter(|j| j.key.job_name == jn)
        .max_by_key(|j| j.key.job_id)
}

/// Create idx01 with `create_sql` and wait until its initial build is done
/// and its watermark covers every commit made before the wait started.
fn create_caught_up(db: &Database, s: &mut Session, create_sql: &str) {
    exec(s, create_sql);
    let target = db.engine().storage.latest_ts();
    wait_until("idx01 caught up", || {
        job(db).is_some_and(|j| {
            j.state == JobState::Completed
                && j.status.stage == Stage::Incremental
                && j.watermark >= target
        })
    });
}

/// Time `DROP INDEX idx01 ON t`; panics if it returned before Canceled.
fn timed_drop(s: &mut Session) -> Duration {
    let t0 = Instant::now();
    let r = exec(s, "DROP INDEX idx01 ON t");
    let took = t0.elapsed();
    assert!(
        r.warnings.is_empty(),
        "DROP returned before Canceled: {:?}",
        r.warnings
    );
    took
}

fn point_hits(key: &str) -> u64 {
    global()
        .list()
        .into_iter()
        .find(|p| p.key() == key)
        .map_or(0, |p| p.hits)
}

fn report(name: &str, mut v: Vec<Duration>) {
    v.sort();
    let n = v.len();
    let pct = |p: usize| v[((n * p).div_ceil(100)).clamp(1, n) - 1];
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!(
        "drop latency, {name}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms (n={n})",
        ms(pct(50)),
        ms(pct(99)),
        ms(v[n - 1])
    );
}

fn stalled(
    db: &Database,
    s: &mut Session,
    next_id: &AtomicU64,
    point: &str,
    create_sql: &str,
    n: usize,
) {
    let key = format!("fj/iscp/cancel/{point}:idx01");
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        create_caught_up(db, s, create_sql);
        if let Err(e) = global().add(&key, ":::", "sleep", 30, "", false) {
            panic!("arming {key}: {e}");
        }
        let id = next_id.fetch_add(1, Ordering::Relaxed) as i64;
        exec(s, &format!("INSERT INTO t VALUES {}", row(id)));
        wait_until(&format!("{key} hit"), || point_hits(&key) >= 1);
        times.push(timed_drop(s));
        if let Err(e) = global().remove(&key) {
            panic!("removing {key}: {e}");
        }
    }
    report(&format!("stalled at {point}"), times);
}

fn steady_load(db: &Database, s: &mut Session, n: usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let inserted = Arc::new(AtomicU64::new(0));
    let loader = {
        let db = db.clone();
        let stop = stop.clone();
        let inserted = inserted.clone();
        std::thread::spawn(move || {
            let mut s = db.session();
            exec(&mut s, "USE d");
            let mut id = 10_000_000i64;
            while !stop.load(Ordering::Relaxed) {
                exec(&mut s, &format!("INSERT INTO t VALUES {}", row(id)));
                id += 1;
                inserted.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let t0 = Instant::now();
    let mut times = Vec::with_capacity(n);
    for _ in 0..n {
        create_caught_up(db, s, HNSW);
        times.push(timed_drop(s));
    }
    stop.store(true, Ordering::Relaxed);
    if loader.join().is_err() {
        panic!("insert load thread panicked");
    }
    let rate = inserted.load(Ordering::Relaxed) as f64 / t0.elapsed().as_secs_f64();
    report(
        &format!("no stall, steady insert load ({rate:.0} inserts/s)"),
        times,
    );
}

fn main() {
    let n: usize = std::env::var("DROP_BENCH_N")
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(30);
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = Config {
        iscp_interval: Duration::from_millis(20),
        drop_wait: Duration::from_secs(10),
        ..Config::default()
    };
    let db = Database::open_with(dir.path(), cfg).expect("open");
    let mut s = db.session();
    exec(&mut s, "CREATE DATABASE d");
    exec(&mut s, "USE d");
    exec(
        &mut s,
        &format!("CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32({DIMS}))"),
    );
    let vals: Vec<String> = (1..=ROWS).map(row).collect();
    exec(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    let next_id = AtomicU64::new(ROWS as u64 + 1);

    let reg = global();
    reg.disable();
    reg.enable();
    for (point, create_sql) in [
        ("long/hnsw-before-update", HNSW),
        ("long/hnsw-before-save", HNSW),
        ("long/before-watermark", HNSW),
        ("long/before-send", HNSW),
        ("long/before-exec", FULLTEXT),
    ] {
        stalled(&db, &mut s, &next_id, point, create_sql, n);
    }
    reg.disable();
    steady_load(&db, &mut s, n);
    db.shutdown();
}
