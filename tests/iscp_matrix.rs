//! The ISCP cancellation test matrix (DROP INDEX / ALTER TABLE DROP INDEX /
//! DROP TABLE while an index consumer is at every interesting phase), and
//! the ALTER TABLE column changes that must go through the same DROP
//! protocol (a column under an index dropped, converted or moved).
//!
//! Owns one `#[test]` per matrix row. Every test holds a
//! [`tributary_fault::FaultGuard`] for its whole duration (fault points are
//! process-global and the rows use the same index names), so the rows run
//! one at a time. Tests never sleep to synchronise: they poll a condition
//! with a deadline ([`wait_until`]). This file must never change product
//! state outside its own temporary data directories.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use tributary::testing::{JobRow, JobState, Stage};
use tributary::{Config, Database, Session, Value};
use tributary_fault::{global, FaultGuard};

use common::{
    applied_up_to, cfg, job, ms, point, q, remove_all_points, wait_hits, wait_until, wait_waiters,
};
use tributary_storage::Storage;

const WAIT: Duration = Duration::from_secs(15);

/// Run one statement; return the warnings.
fn q_warn(s: &mut Session, sql: &str) -> Vec<tributary::Warning> {
    match s.execute(sql) {
        Ok(r) => r.warnings,
        Err(e) => panic!("{sql}: {e:?}"),
    }
}

/// `(job_state, job_status, drop_at)` of job `job_id` through SQL.
fn sql_job(s: &mut Session, job_id: u64) -> (i64, String, Value) {
    let rows = q(
        s,
        "SELECT job_id, job_state, job_status, drop_at FROM mo_catalog.mo_iscp_log",
    );
    for r in rows {
        if r[0] == Value::Int(job_id as i64) {
            let state = match &r[1] {
                Value::Int(v) => *v,
                o => panic!("job_state {o:?}"),
            };
            let status = match &r[2] {
                Value::Text(t) => t.clone(),
                o => panic!("job_status {o:?}"),
            };
            return (state, status, r[3].clone());
        }
    }
    panic!("job {job_id} not in mo_iscp_log");
}

fn state_of(db: &Database, job_id: u64) -> JobState {
    db.engine()
        .iscp
        .read_jobs()
        .unwrap()
        .into_iter()
        .find(|j| j.key.job_id == job_id)
        .map(|j| j.state)
        .unwrap_or(JobState::Invalid)
}

fn arm(key: &str, freq: &str, action: &str, iarg: i64, sarg: &str) {
    global().add(key, freq, action, iarg, sarg, false).unwrap();
}

fn hidden_empty(db: &Database, storage_id: u64) -> bool {
    let st: &Arc<dyn Storage> = &db.engine().storage;
    st.snapshot_scan(storage_id, st.latest_ts(), None, 10)
        .map(|r| r.is_empty())
        .unwrap_or(false)
}

/// Row `i` of the test table: distinct vectors on `v` and `w`.
fn row_sql(i: i64) -> String {
    format!(
        "({i},'row {i} rust database','[{},{},{}]','[{},{},1]')",
        i,
        i * 2,
        i * 3,
        i as f64 * 1.5,
        i % 3
    )
}

fn insert_rows(s: &mut Session, from: i64, to: i64) {
    let vals: Vec<String> = (from..=to).map(row_sql).collect();
    q(s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
}

/// Open a database with `config`, create `d.t` and rows 1..=4.
fn setup(config: Config) -> (tempfile::TempDir, Database, Session) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), config).unwrap();
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, v VECF32(3), w VECF32(3))",
    );
    insert_rows(&mut s, 1, 4);
    (dir, db, s)
}

fn wait_incremental(db: &Database, name: &str) -> JobRow {
    wait_until(&format!("{name} reaches stage incremental"), WAIT, || {
        let j = job(db, name);
        j.status.stage == Stage::Incremental && j.state == JobState::Completed
    });
    job(db, name)
}

/// Create async HNSW index `name` on `col` and wait for its initial build.
fn create_hnsw(s: &mut Session, db: &Database, name: &str, col: &str) -> JobRow {
    q(
        s,
        &format!("CREATE INDEX {name} USING HNSW ON t({col}) OP_TYPE 'vector_l2_ops' ASYNC"),
    );
    wait_incremental(db, name)
}

/// Everything a dropped job must end with: Canceled (5) with drop_at set,
/// hidden storage purged, no task, fence or consumer left for it.
fn assert_canceled(db: &Database, s: &mut Session, j: &JobRow) {
    let id = j.key.job_id;
    wait_until(&format!("job {id} Canceled"), WAIT, || {
        state_of(db, id) == JobState::Canceled
    });
    let (state, _status, drop_at) = sql_job(s, id);
    assert_eq!(state, 5, "job_state in mo_iscp_log");
    assert!(!drop_at.is_null(), "drop_at must be set");
    assert!(
        hidden_empty(db, j.spec.storage_id),
        "hidden table {} not purged",
        j.spec.storage_id
    );
    let rt = &db.engine().iscp.runtime;
    wait_until(
        &format!("no task/fence/consumer for job {id}"),
        WAIT,
        || rt.tasks_for_job(id).is_empty() && !rt.is_fenced(id) && !rt.is_running(id),
    );
}

/// Shared shape of rows 1–7: index ready, point armed, rows inserted so a
/// work unit stalls at the point, DROP, then every cleanup check.
fn stall_then_drop(index_sql: &str, name: &str, key: &str, action: &str, iarg: i64) {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    q(&mut s, index_sql);
    let j = wait_incremental(&db, name);
    arm(key, ":::", action, iarg, "");
    insert_rows(&mut s, 10, 12);
    if action == "wait" {
        wait_waiters(key, WAIT);
    } else {
        wait_hits(key, 1, WAIT);
    }
    let t0 = Instant::now();
    let warnings = q_warn(&mut s, &format!("DROP INDEX {name} ON t"));
    let took = t0.elapsed();
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    assert!(took < Duration::from_secs(5), "DROP took {took:?}");
    remove_all_points();
    assert_canceled(&db, &mut s, &j);
    let rt = &db.engine().iscp.runtime;
    let iscp = &db.engine().iscp;
    wait_until("consumers drained, no fence, no cached index", WAIT, || {
        let z = rt.sizes();
        z.consumers == 0 && z.fences == 0 && iscp.live_count() == 0
    });
}

const HNSW_V: &str = "CREATE INDEX idx01 USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC";

#[test]
fn cancel_after_consumer_registration() {
    stall_then_drop(
        HNSW_V,
        "idx01",
        "fj/iscp/cancel/after-register-consumer:idx01",
        "wait",
        0,
    );
}

#[test]
fn cancel_after_worker_submit() {
    stall_then_drop(
        HNSW_V,
        "idx01",
        "fj/iscp/cancel/after-submit:idx01",
        "wait",
        0,
    );
}

#[test]
fn cancel_during_fanout() {
    stall_then_drop(
        HNSW_V,
        "idx01",
        "fj/iscp/cancel/fanout-before-send:idx01",
        "wait",
        0,
    );
}

#[test]
fn cancel_before_hnsw_update() {
    stall_then_drop(
        HNSW_V,
        "idx01",
        "fj/iscp/cancel/long/hnsw-before-update:idx01",
        "sleep",
        30,
    );
}

#[test]
fn cancel_before_hnsw_save() {
    stall_then_drop(
        HNSW_V,
        "idx01",
        "fj/iscp/cancel/long/hnsw-before-save:idx01",
        "sleep",
        30,
    );
}

#[test]
fn cancel_before_watermark_update() {
    stall_then_drop(
        HNSW_V,
        "idx01",
        "fj/iscp/cancel/long/before-watermark:idx01",
        "sleep",
        30,
    );
}

#[test]
fn cancel_before_exec_fulltext_async() {
    stall_then_drop(
        "CREATE FULLTEXT INDEX ft ON t(body) ASYNC",
        "ft",
        "fj/iscp/cancel/long/before-exec:ft",
        "sleep",
        30,
    );
}

#[test]
fn long_wait_via_sleep_before_send() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let j = create_hnsw(&mut s, &db, "idx01", "v");
    let key = "fj/iscp/cancel/long/before-send:idx01";
    let r = q(
        &mut s,
        &format!("SELECT add_fault_point('{key}', ':::', 'sleep', 30, '')"),
    );
    assert_eq!(r, vec![vec![Value::Bool(true)]]);
    insert_rows(&mut s, 10, 12);
    wait_hits(key, 1, WAIT);
    let t0 = Instant::now();
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    let elapsed = t0.elapsed();
    println!(
        "DROP INDEX with before-send sleep 30 returned in {} ms",
        elapsed.as_millis()
    );
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    assert!(elapsed < Duration::from_secs(1), "DROP took {elapsed:?}");
    q(&mut s, &format!("SELECT remove_fault_point('{key}')"));
    tributary_fault::testing::assert_no_armed_points(global());
    assert_canceled(&db, &mut s, &j);
}

/// ALTER TABLE under a consumer stalled in `before-send` (a 30 s sleep):
/// the ALTER's DROP protocol cancels and drains it like DROP INDEX, so the
/// ALTER returns at once, the old job ends Canceled with its storage
/// purged, and `recreated` says whether a new generation must index the
/// new layout.
fn alter_under_stalled_consumer(alter: &str, recreated: bool) {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let j = create_hnsw(&mut s, &db, "idx01", "v");
    let key = "fj/iscp/cancel/long/before-send:idx01";
    arm(key, ":::", "sleep", 30, "");
    insert_rows(&mut s, 10, 12);
    wait_hits(key, 1, WAIT);
    let t0 = Instant::now();
    let warnings = q_warn(&mut s, alter);
    let elapsed = t0.elapsed();
    println!(
        "{alter} with before-send sleep 30 returned in {} ms",
        elapsed.as_millis()
    );
    assert!(warnings.is_empty(), "ALTER warnings: {warnings:?}");
    // Far below the 30 s stall: the consumer was cancelled, not awaited.
    assert!(elapsed < Duration::from_secs(5), "ALTER took {elapsed:?}");
    remove_all_points();
    assert_canceled(&db, &mut s, &j);
    let rows = q(&mut s, "SELECT COUNT(*) FROM t");
    assert_eq!(rows, vec![vec![Value::Int(7)]]);
    if !recreated {
        assert!(q(&mut s, "SHOW INDEX FROM t WHERE Key_name = 'idx01'").is_empty());
        return;
    }
    // A new generation indexes the rewritten rows, and answers like brute
    // force.
    let fresh = wait_incremental(&db, "idx01");
    assert!(fresh.key.job_id > j.key.job_id, "a new generation");
    q(&mut s, "SET fast_search = 1");
    let got = q(
        &mut s,
        "SELECT id FROM t ORDER BY l2_distance(v, '[12,24,36]') LIMIT 2",
    );
    assert_eq!(got, vec![vec![Value::Int(12)], vec![Value::Int(11)]]);
}

#[test]
fn alter_drop_indexed_column_under_stalled_consumer() {
    alter_under_stalled_consumer("ALTER TABLE t DROP COLUMN v", false);
}

#[test]
fn alter_convert_indexed_column_under_stalled_consumer() {
    alter_under_stalled_consumer("ALTER TABLE t MODIFY v VECF32(3) NOT NULL", true);
}

#[test]
fn alter_moving_indexed_column_under_stalled_consumer() {
    alter_under_stalled_consumer("ALTER TABLE t ADD COLUMN extra INT DEFAULT 1 FIRST", true);
}

#[test]
fn alter_leaving_the_index_alone_keeps_its_job() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let j = create_hnsw(&mut s, &db, "idx01", "v");
    // A column after the indexed one: positions unchanged, the rewrite
    // reaches the consumer as ordinary updates.
    q(
        &mut s,
        "ALTER TABLE t ADD COLUMN extra INT DEFAULT 1, MODIFY body VARCHAR(100)",
    );
    insert_rows_extra(&mut s, 10, 12);
    let target = db.engine().storage.latest_ts();
    wait_until(
        "idx01 catches up with the ALTER and the new rows",
        WAIT,
        || applied_up_to(&db, &job(&db, "idx01"), target),
    );
    let now = job(&db, "idx01");
    assert_eq!(now.key.job_id, j.key.job_id, "same generation");
    assert_eq!(now.state, JobState::Completed);
    q(&mut s, "SET fast_search = 1");
    let got = q(
        &mut s,
        "SELECT id FROM t ORDER BY l2_distance(v, '[12,24,36]') LIMIT 2",
    );
    assert_eq!(got, vec![vec![Value::Int(12)], vec![Value::Int(11)]]);
}

fn insert_rows_extra(s: &mut Session, from: i64, to: i64) {
    let vals: Vec<String> = (from..=to)
        .map(|i| format!("{}, 1)", row_sql(i).trim_end_matches(')')))
        .collect();
    q(s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
}

#[test]
fn iteration_already_failed_before_cancel() {
    let _g = FaultGuard::enable();
    // Long backoff so the recorded error stays visible until the DROP.
    let config = Config {
        iscp_retry_base: Duration::from_secs(5),
        iscp_retry_cap: Duration::from_secs(10),
        ..cfg()
    };
    let (_dir, db, mut s) = setup(config);
    let j = create_hnsw(&mut s, &db, "idx01", "v");
    arm(
        "fj/iscp/cancel/long/before-watermark:idx01",
        "1:1::",
        "return",
        0,
        "changesNext",
    );
    insert_rows(&mut s, 10, 12);
    wait_until("job_status records error_code 1", WAIT, || {
        sql_job(&mut s, j.key.job_id).1.contains("\"error_code\":1")
    });
    assert_eq!(state_of(&db, j.key.job_id), JobState::Completed);
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    let (_, _, drop_at) = sql_job(&mut s, j.key.job_id);
    assert!(!drop_at.is_null(), "drop_at set by DROP");
    remove_all_points();
    assert_canceled(&db, &mut s, &j);
}

fn w_of(i: i64) -> [f64; 3] {
    [i as f64 * 1.5, (i % 3) as f64, 1.0]
}

#[test]
fn multiple_jobs_drop_only_idx01() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let j1 = create_hnsw(&mut s, &db, "idx01", "v");
    let j2 = create_hnsw(&mut s, &db, "idx02", "w");
    let key = "fj/iscp/cancel/long/before-send:idx01";
    arm(key, ":::", "sleep", 30, "");
    insert_rows(&mut s, 10, 12);
    wait_hits(key, 1, WAIT);
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    remove_all_points();
    assert_canceled(&db, &mut s, &j1);
    // idx02 keeps advancing.
    let wm = job(&db, "idx02").watermark;
    insert_rows(&mut s, 13, 20);
    let target_ts = db.engine().storage.latest_ts();
    wait_until("idx02 watermark advances past the new rows", WAIT, || {
        let j = job(&db, "idx02");
        j.watermark > wm && applied_up_to(&db, &j, target_ts)
    });
    let j2_now = job(&db, "idx02");
    assert_eq!(j2_now.key.job_id, j2.key.job_id);
    assert_eq!(j2_now.state, JobState::Completed);
    // Brute force order on w.
    let qv = [7.2, 1.0, 1.0];
    let ids: Vec<i64> = (1..=4).chain(10..=20).collect();
    let mut scored: Vec<(f64, i64)> = ids
        .iter()
        .map(|&i| {
            let w = w_of(i);
            let d: f64 = (0..3).map(|k| (w[k] - qv[k]).powi(2)).sum();
            (d, i)
        })
        .collect();
    scored.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    assert!(
        scored[2].0 < scored[3].0,
        "test data must not tie at the cut"
    );
    let expected: Vec<Vec<Value>> = scored[..3]
        .iter()
        .map(|&(_, i)| vec![Value::Int(i)])
        .collect();
    let got = q(
        &mut s,
        "SELECT id FROM t ORDER BY l2_distance(w,'[7.2,1,1]') LIMIT 3",
    );
    assert_eq!(got, expected);
}

#[test]
fn fault_cleanup() {
    let _g = FaultGuard::enable();
    for p in tributary_fault::points::ALL {
        arm(&format!("{p}:idx01"), ":::", "wait", 0, "");
        arm(p, ":::", "sleep", 30, "");
    }
    assert_eq!(
        global().list().len(),
        2 * tributary_fault::points::ALL.len()
    );
    assert!(global().remove("all").unwrap());
    assert!(global().list().is_empty());
    tributary_fault::testing::assert_no_armed_points(global());
}

#[test]
fn task_cleanup() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let j = create_hnsw(&mut s, &db, "idx01", "v");
    insert_rows(&mut s, 10, 12);
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    assert_canceled(&db, &mut s, &j);
    let rt = &db.engine().iscp.runtime;
    wait_until("runtime registries empty", WAIT, || {
        let z = rt.sizes();
        rt.tasks_for_job(j.key.job_id).is_empty() && z.fences == 0 && z.consumers == 0
    });
    tributary_fault::testing::assert_no_armed_points(global());
}

#[test]
fn long_cancel_finalization() {
    let _g = FaultGuard::enable();
    let config = Config {
        drop_wait: ms(300),
        ..cfg()
    };
    let (_dir, db, mut s) = setup(config);
    let j = create_hnsw(&mut s, &db, "idx01", "v");
    arm(
        "fj/iscp/cancel/before-mark-canceled:idx01",
        ":::",
        "sleep",
        5,
        "",
    );
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    assert!(
        warnings.iter().any(|w| w.code == 1105),
        "expected a 1105 warning, got {warnings:?}"
    );
    assert_eq!(
        sql_job(&mut s, j.key.job_id).0,
        6,
        "Canceling right after DROP"
    );
    let t0 = Instant::now();
    wait_until("Canceled after the sleep", Duration::from_secs(15), || {
        state_of(&db, j.key.job_id) == JobState::Canceled
    });
    println!(
        "Canceling -> Canceled after {} ms",
        t0.elapsed().as_millis()
    );
    remove_all_points();
    assert_canceled(&db, &mut s, &j);
}

#[test]
fn mark_canceled_error_once() {
    let _g = FaultGuard::enable();
    let config = Config {
        drop_wait: Duration::ZERO,
        iscp_retry_base: ms(500),
        ..cfg()
    };
    let (_dir, db, mut s) = setup(config);
    let j = create_hnsw(&mut s, &db, "idx01", "v");
    let key = "fj/iscp/cancel/mark-canceled-error:idx01";
    arm(key, "1:1::", "return", 0, "");
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    assert!(
        warnings.iter().any(|w| w.code == 1105),
        "expected a 1105 warning, got {warnings:?}"
    );
    assert_eq!(sql_job(&mut s, j.key.job_id).0, 6, "Canceling at first");
    wait_until("Canceled after the retry", WAIT, || {
        state_of(&db, j.key.job_id) == JobState::Canceled
    });
    let hits = point(key).map(|p| p.hits).unwrap_or(0);
    assert!(
        hits >= 2,
        "first attempt failed, a retry followed (hits {hits})"
    );
    remove_all_points();
    assert_canceled(&db, &mut s, &j);
}

#[test]
fn restart_recovery() {
    let _g = FaultGuard::enable();
    let config = Config {
        drop_wait: ms(200),
        ..cfg()
    };
    let dir = tempfile::tempdir().unwrap();
    let j = {
        let db = Database::open_with(dir.path(), config.clone()).unwrap();
        let mut s = db.session();
        q(&mut s, "CREATE DATABASE d");
        q(&mut s, "USE d");
        q(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, v VECF32(3), w VECF32(3))",
        );
        insert_rows(&mut s, 1, 4);
        let j = create_hnsw(&mut s, &db, "idx01", "v");
        arm(
            "fj/iscp/cancel/before-mark-canceled:idx01",
            ":::",
            "sleep",
            30,
            "",
        );
        let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
        assert!(
            warnings.iter().any(|w| w.code == 1105),
            "expected a 1105 warning, got {warnings:?}"
        );
        assert_eq!(sql_job(&mut s, j.key.job_id).0, 6);
        let t0 = Instant::now();
        db.shutdown();
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "shutdown took {:?}",
            t0.elapsed()
        );
        assert_eq!(state_of(&db, j.key.job_id), JobState::Canceling);
        drop(s);
        drop(db);
        j
    };
    remove_all_points();
    let db = Database::open_with(dir.path(), config).unwrap();
    let mut s = db.session();
    assert_canceled(&db, &mut s, &j);
}

#[test]
fn final_state_check() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let a = create_hnsw(&mut s, &db, "idx_a", "v");
    let b = create_hnsw(&mut s, &db, "idx_b", "w");
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
    let c = wait_incremental(&db, "ft");
    insert_rows(&mut s, 10, 12);
    for sql in [
        "DROP INDEX idx_a ON t",
        "ALTER TABLE t DROP INDEX idx_b",
        "DROP TABLE t",
    ] {
        let warnings = q_warn(&mut s, sql);
        assert!(warnings.is_empty(), "{sql}: warnings {warnings:?}");
    }
    for j in [&a, &b, &c] {
        assert_canceled(&db, &mut s, j);
    }
    let rows = q(
        &mut s,
        "SELECT job_name, job_state FROM mo_catalog.mo_iscp_log",
    );
    assert_eq!(rows.len(), 3);
    for r in rows {
        assert_eq!(r[1], Value::Int(5), "{r:?}");
    }
    tributary_fault::testing::assert_no_armed_points(global());
}

#[test]
fn drop_from_non_runner_cn() {
    drop_from_non_runner(common::Backend::Embedded);
}

#[test]
fn drop_from_non_runner_cn_over_postgres() {
    drop_from_non_runner(common::Backend::Postgres);
}

fn drop_from_non_runner(backend: common::Backend) {
    let _g = FaultGuard::enable();
    let shared = common::Shared::new(backend);
    let a = Database::open_shared(
        shared.for_node("cn-a"),
        Config {
            node_name: "cn-a".into(),
            ..cfg()
        },
    )
    .unwrap();
    let b = Database::open_shared(
        shared.for_node("cn-b"),
        Config {
            node_name: "cn-b".into(),
            iscp_enabled: false,
            ..cfg()
        },
    )
    .unwrap();
    let mut sa = a.session();
    q(&mut sa, "CREATE DATABASE d");
    q(&mut sa, "USE d");
    q(
        &mut sa,
        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, v VECF32(3), w VECF32(3))",
    );
    insert_rows(&mut sa, 1, 4);
    let j = create_hnsw(&mut sa, &a, "idx01", "v");
    assert!(!b.engine().iscp.runner_started(), "cn-b must not run ISCP");
    let key = "fj/iscp/cancel/long/before-watermark:idx01";
    arm(key, ":::", "wait", 0, "");
    insert_rows(&mut sa, 10, 12);
    wait_waiters(key, WAIT);
    let mut sb = b.session();
    q(&mut sb, "USE d");
    let t0 = Instant::now();
    let warnings = q_warn(&mut sb, "DROP INDEX idx01 ON t");
    let took = t0.elapsed();
    assert!(
        took < Duration::from_secs(5),
        "DROP from cn-b took {took:?}"
    );
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    remove_all_points();
    assert_canceled(&a, &mut sb, &j);
    assert!(b.engine().iscp.runtime.sizes().consumers == 0);
}

#[test]
fn drop_during_initial_build_large_table() {
    let _g = FaultGuard::enable();
    let config = Config {
        iscp_max_batch: 200,
        ..cfg()
    };
    let (_dir, db, mut s) = setup(config);
    for batch in 0..10 {
        let from = 100 + batch * 500;
        insert_rows(&mut s, from, from + 499);
    }
    let key = "fj/iscp/cancel/long/hnsw-before-update:idx01";
    arm(key, "3:3::", "sleep", 30, "");
    q(&mut s, HNSW_V);
    wait_hits(key, 3, WAIT);
    let j = job(&db, "idx01");
    assert_eq!(j.status.stage, Stage::Init, "still in the initial build");
    let t0 = Instant::now();
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    let took = t0.elapsed();
    assert!(took < Duration::from_secs(5), "DROP took {took:?}");
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    remove_all_points();
    assert_canceled(&db, &mut s, &j);
}

#[test]
fn recreate_same_name_after_drop() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let old = create_hnsw(&mut s, &db, "idx01", "v");
    let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
    assert!(warnings.is_empty(), "DROP warnings: {warnings:?}");
    q(&mut s, HNSW_V);
    let new = wait_incremental(&db, "idx01");
    assert_ne!(new.key.job_id, old.key.job_id, "a new generation");
    assert_canceled(&db, &mut s, &old);
    let got = q(
        &mut s,
        "SELECT id FROM t ORDER BY l2_distance(v,'[0,0,0]') LIMIT 2",
    );
    assert_eq!(got, vec![vec![Value::Int(1)], vec![Value::Int(2)]]);
    assert_eq!(state_of(&db, new.key.job_id), JobState::Completed);
}

#[test]
fn create_drop_loop_bounded_memory() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    for i in 0..200 {
        q(&mut s, HNSW_V);
        let warnings = q_warn(&mut s, "DROP INDEX idx01 ON t");
        assert!(
            warnings.is_empty(),
            "iteration {i}: DROP warnings: {warnings:?}"
        );
    }
    let iscp = &db.engine().iscp;
    let jobs = iscp.read_jobs().unwrap();
    assert_eq!(jobs.len(), 200);
    assert!(jobs.iter().all(|j| j.state == JobState::Canceled));
    wait_until("runtime registries and index cache empty", WAIT, || {
        let z = iscp.runtime.sizes();
        let no_job_tasks = jobs
            .iter()
            .all(|j| iscp.runtime.tasks_for_job(j.key.job_id).is_empty());
        no_job_tasks && z.fences == 0 && z.consumers == 0 && iscp.live_count() == 0
    });
}

/// Row "Reproduce original DROP INDEX issue" (MatrixOne #25711): ALTER TABLE
/// … DROP INDEX right after inserts used to deadlock with the consumer's
/// hidden-table write. 30 rounds of create / write / immediate drop: no
/// error, no warning, no consumer left, index metadata gone, data intact.
#[test]
fn reproduce_original_drop_index_issue() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    let mut jobs = Vec::new();
    for round in 0..30i64 {
        q(&mut s, HNSW_V);
        let base = 100 + round * 10;
        insert_rows(&mut s, base, base + 4);
        let t0 = Instant::now();
        let w = q_warn(&mut s, "ALTER TABLE t DROP INDEX idx01");
        assert!(w.is_empty(), "round {round}: DROP warnings {w:?}");
        assert!(
            t0.elapsed() < Duration::from_secs(5),
            "round {round}: DROP hung"
        );
        jobs.push(
            db.engine()
                .iscp
                .read_jobs()
                .unwrap()
                .into_iter()
                .max_by_key(|j| j.key.job_id)
                .unwrap(),
        );
    }
    for j in &jobs {
        assert_canceled(&db, &mut s, j);
    }
    let idx = q(
        &mut s,
        "SELECT count(*) FROM mo_catalog.mo_indexes WHERE table_name = 't'",
    );
    assert_eq!(idx[0][0], Value::Int(0), "no index metadata left");
    let n = q(&mut s, "SELECT count(*) FROM t");
    assert_eq!(n[0][0], Value::Int(4 + 30 * 5), "table data intact");
    let z = db.engine().iscp.runtime.sizes();
    assert_eq!((z.consumers, z.fences), (0, 0));
}

/// DROP DATABASE goes through the same protocol for every job of every
/// table in it.
#[test]
fn drop_database_cancels_every_job() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = setup(cfg());
    q(
        &mut s,
        "CREATE TABLE t2 (id INT PRIMARY KEY, body TEXT, k INT)",
    );
    q(
        &mut s,
        "INSERT INTO t2 VALUES (1, 'alpha', 1), (2, 'beta', 2)",
    );
    let a = create_hnsw(&mut s, &db, "idx01", "v");
    q(&mut s, "CREATE FULLTEXT INDEX ft2 ON t2(body) ASYNC");
    q(&mut s, "CREATE INDEX k2 ON t2(k) ASYNC");
    let b = wait_incremental(&db, "ft2");
    let c = wait_incremental(&db, "k2");
    // Stall one consumer so DROP DATABASE meets in-flight work.
    arm(
        "fj/iscp/cancel/long/before-watermark:ft2",
        ":::",
        "sleep",
        30,
        "",
    );
    q(&mut s, "INSERT INTO t2 VALUES (3, 'gamma', 3)");
    wait_hits("fj/iscp/cancel/long/before-watermark:ft2", 1, WAIT);
    let t0 = Instant::now();
    let w = q_warn(&mut s, "DROP DATABASE d");
    assert!(w.is_empty(), "DROP DATABASE warnings {w:?}");
    assert!(t0.elapsed() < Duration::from_secs(5));
    remove_all_points();
    for j in [&a, &b, &c] {
        assert_canceled(&db, &mut s, j);
    }
    let dbs = q(&mut s, "SHOW DATABASES");
    assert!(!dbs.iter().any(|r| r[0] == Value::Text("d".into())));
}
