//! Statement control: `KILL [QUERY | CONNECTION]` stops a running statement
//! wherever it is (a sleep, a lock wait, a long join, a write half done, an
//! `iscp_wait_fresh` wait) with error 1317 and rolls back exactly that
//! statement; `max_execution_time` (variable and hint) stops a SELECT with
//! 3024; the process list shows what runs; KILL refuses unknown ids (1094)
//! and other users' sessions (1095).
//!
//! Each victim runs on its own thread; the test waits (with a deadline)
//! until the process list shows the statement running, kills it, and then
//! bounds how long the victim took to stop — far below what the statement
//! would have taken on its own, so a KILL that is not honoured fails the
//! test instead of passing late. Never a sleep standing in for
//! synchronisation.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::thread;
use std::time::{Duration, Instant};

use tributary::testing::Stage;
use tributary::{Config, Database, Session, SqlError, Value};
use tributary_fault::{global, FaultGuard};

use common::{cfg, job, q, remove_all_points, wait_until, wait_waiters};

/// Bound for anything expected to happen.
const WAIT: Duration = Duration::from_secs(30);
/// How long a killed statement may take to notice: generous for a loaded
/// CI machine, and far below the statements' own length (≥ 60 s).
const STOP: Duration = Duration::from_secs(10);

/// A victim thread: the statement's result, how long it ran, its session.
type Victim = thread::JoinHandle<(Result<Vec<Vec<Value>>, SqlError>, Duration, Session)>;

fn int(rows: &[Vec<Value>]) -> i64 {
    match rows.first().and_then(|r| r.first()) {
        Some(Value::Int(i)) => *i,
        other => panic!("expected one integer, got {other:?}"),
    }
}

fn open(config: Config) -> (tempfile::TempDir, Database, Session) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), config).unwrap();
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE k");
    q(&mut s, "USE k");
    q(&mut s, "CREATE TABLE t (id BIGINT PRIMARY KEY, v BIGINT)");
    let rows: Vec<String> = (1..=300).map(|i| format!("({i}, {i})")).collect();
    q(&mut s, &format!("INSERT INTO t VALUES {}", rows.join(",")));
    (dir, db, s)
}

/// Run `sql` on a new session of `db` (in database `k`) on its own thread;
/// returns the session's connection id and the thread, which yields the
/// statement's result, how long it ran, and the session.
fn spawn(db: &Database, setup: &[&str], sql: &str) -> (u32, Victim) {
    let mut s = db.session();
    q(&mut s, "USE k");
    for st in setup {
        q(&mut s, st);
    }
    let id = s.connection_id();
    let sql = sql.to_string();
    let h = thread::spawn(move || {
        let t0 = Instant::now();
        let r = s.execute(&sql).map(|r| r.rows);
        (r, t0.elapsed(), s)
    });
    (id, h)
}

/// Wait until the process list shows connection `id` running `sql`.
fn wait_running(admin: &mut Session, id: u32, sql: &str) {
    let probe = format!("SELECT COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = {id}");
    wait_until(&format!("connection {id} running {sql}"), WAIT, || {
        let rows = q(admin, &probe);
        rows.first()
            .is_some_and(|r| r[0] == Value::Text("Query".into()) && r[1] == Value::Text(sql.into()))
    });
}

/// Kill `id`'s statement and check it stopped promptly with 1317.
fn kill_and_expect_1317(admin: &mut Session, id: u32, h: Victim, kill: &str) -> Session {
    let killed_at = Instant::now();
    q(admin, &format!("{kill} {id}"));
    let (r, ran, s) = h.join().unwrap();
    let err = r.expect_err("the killed statement must fail");
    assert_eq!(err.code, 1317, "{err:?}");
    assert!(
        killed_at.elapsed() < STOP,
        "took {:?} to stop after KILL (ran {ran:?})",
        killed_at.elapsed()
    );
    s
}

#[test]
fn kill_query_stops_a_sleep_and_the_session_goes_on() {
    let (_dir, db, mut admin) = open(cfg());
    let sql = "SELECT SLEEP(60)";
    let (id, h) = spawn(&db, &[], sql);
    wait_running(&mut admin, id, sql);
    let mut s = kill_and_expect_1317(&mut admin, id, h, "KILL QUERY");
    // The connection stays usable and idle in the list.
    assert_eq!(int(&q(&mut s, "SELECT COUNT(*) FROM t")), 300);
    let rows = q(
        &mut admin,
        &format!("SELECT COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = {id}"),
    );
    assert_eq!(rows, vec![vec![Value::Text("Sleep".into()), Value::Null]]);
}

#[test]
fn kill_query_in_a_lock_wait_rolls_back_only_that_statement() {
    let (_dir, db, mut admin) = open(cfg());
    q(&mut admin, "BEGIN");
    q(&mut admin, "UPDATE t SET v = -1 WHERE id = 1");
    let sql = "UPDATE t SET v = 100 WHERE id = 1";
    // The victim's transaction wrote a row before it blocked: that write
    // must survive the KILL (only the statement is rolled back).
    let (id, h) = spawn(
        &db,
        &[
            "SET innodb_lock_wait_timeout = 600",
            "BEGIN",
            "INSERT INTO t VALUES (1000, 1000)",
        ],
        sql,
    );
    let mut other = db.session();
    q(&mut other, "USE k");
    wait_running(&mut other, id, sql);
    let mut s = kill_and_expect_1317(&mut other, id, h, "KILL QUERY");
    assert!(s.in_transaction(), "KILL QUERY keeps the transaction");
    assert_eq!(int(&q(&mut s, "SELECT COUNT(*) FROM t WHERE id = 1000")), 1);
    q(&mut s, "ROLLBACK");
    // The killed request left no lock behind: the holder commits and a
    // new writer gets the row at once.
    q(&mut admin, "COMMIT");
    q(&mut s, "SET innodb_lock_wait_timeout = 1");
    q(&mut s, "UPDATE t SET v = 7 WHERE id = 1");
    assert_eq!(int(&q(&mut s, "SELECT v FROM t WHERE id = 1")), 7);
    assert_eq!(int(&q(&mut s, "SELECT COUNT(*) FROM t WHERE id = 1000")), 0);
}

#[test]
fn kill_query_stops_a_long_join() {
    let (_dir, db, mut admin) = open(cfg());
    // 300³ = 27 M row triples: minutes in a debug build.
    let sql = "SELECT COUNT(*) FROM t a, t b, t c WHERE a.v + b.v + c.v < 0";
    let (id, h) = spawn(&db, &[], sql);
    wait_running(&mut admin, id, sql);
    kill_and_expect_1317(&mut admin, id, h, "KILL");
}

#[test]
fn killed_write_is_rolled_back_whole() {
    let (_dir, db, mut admin) = open(cfg());
    let before = int(&q(&mut admin, "SELECT SUM(v) FROM t"));
    // Each row sleeps 0.5 s: the statement is killed part-way through.
    let sql = "UPDATE t SET v = v + 1 + SLEEP(0.5)";
    let (id, h) = spawn(&db, &[], sql);
    wait_running(&mut admin, id, sql);
    kill_and_expect_1317(&mut admin, id, h, "KILL QUERY");
    assert_eq!(int(&q(&mut admin, "SELECT SUM(v) FROM t")), before);
}

#[test]
fn kill_query_ends_an_iscp_wait_fresh_wait() {
    let _g = FaultGuard::enable();
    // The wait's own bound (drop_wait) is far longer than STOP.
    let config = Config {
        drop_wait: Duration::from_secs(120),
        ..cfg()
    };
    let (_dir, db, mut admin) = open(config);
    q(
        &mut admin,
        "CREATE TABLE w (id BIGINT PRIMARY KEY, e VECF32(2))",
    );
    q(&mut admin, "INSERT INTO w SELECT id, '[1,1]' FROM t");
    q(
        &mut admin,
        "CREATE INDEX iv USING HNSW ON w(e) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    wait_until("iv built", WAIT, || {
        job(&db, "iv").status.stage == Stage::Incremental
    });
    // Stall the consumer, then write: the index cannot reach the write.
    let key = "fj/iscp/cancel/long/before-send:iv";
    global().add(key, ":::", "wait", 0, "", false).unwrap();
    q(&mut admin, "INSERT INTO w VALUES (5000, '[9,9]')");
    wait_waiters(key, WAIT);
    let sql = "SELECT id FROM w ORDER BY l2_distance(e, '[9,9]') LIMIT 1";
    let (id, h) = spawn(&db, &["SET iscp_wait_fresh = 1"], sql);
    wait_running(&mut admin, id, sql);
    kill_and_expect_1317(&mut admin, id, h, "KILL QUERY");
    remove_all_points();
}

#[test]
fn max_execution_time_stops_a_select_with_3024() {
    let (_dir, _db, mut s) = open(cfg());
    q(&mut s, "SET max_execution_time = 200");
    let t0 = Instant::now();
    let err = s.execute("SELECT SLEEP(60)").unwrap_err();
    assert_eq!(err.code, 3024, "{err:?}");
    assert!(t0.elapsed() >= Duration::from_millis(200));
    assert!(t0.elapsed() < STOP);
    // The limit is for SELECT only (as in MySQL): a write runs on.
    q(&mut s, "UPDATE t SET v = v + SLEEP(0.3) WHERE id = 1");
    // The hint overrides the variable, in both directions.
    q(&mut s, "SET max_execution_time = 0");
    let err = s
        .execute("SELECT /*+ MAX_EXECUTION_TIME(100) */ SLEEP(60)")
        .unwrap_err();
    assert_eq!(err.code, 3024);
    q(&mut s, "SET max_execution_time = 50");
    let r = q(&mut s, "SELECT /*+ MAX_EXECUTION_TIME(60000) */ SLEEP(0.2)");
    assert_eq!(r, vec![vec![Value::Int(0)]]);
    assert_eq!(int(&q(&mut s, "SELECT @@max_execution_time")), 50);
}

#[test]
fn kill_checks_ids_and_owners() {
    let (_dir, db, mut root) = open(cfg());
    q(&mut root, "CREATE USER bob IDENTIFIED BY 'pw'");
    q(&mut root, "CREATE USER eve IDENTIFIED BY 'pw'");
    q(&mut root, "GRANT SELECT ON k.* TO bob");
    let mut bob = db.session();
    bob.set_user("bob", false);
    let mut eve = db.session();
    eve.set_user("eve", false);
    let bob_id = bob.connection_id();
    assert_eq!(
        eve.execute(&format!("KILL {bob_id}")).unwrap_err().code,
        1095
    );
    assert_eq!(root.execute("KILL 4000000000").unwrap_err().code, 1094);
    assert_eq!(root.execute("KILL QUERY 0").unwrap_err().code, 1094);
    // Without SUPER a user sees only their own sessions.
    let seen = q(&mut eve, "SELECT USER FROM information_schema.PROCESSLIST");
    assert_eq!(seen, vec![vec![Value::Text("eve".into())]]);
    let all = q(
        &mut root,
        "SELECT COUNT(*) FROM information_schema.PROCESSLIST",
    );
    assert_eq!(int(&all), 3);
    // A user may kill their own session; the killed session is closed.
    q(&mut bob, &format!("KILL CONNECTION {bob_id}"));
    assert_eq!(bob.execute("SELECT 1").unwrap_err().code, 1927);
    // Root may kill anyone's.
    let eve_id = eve.connection_id();
    q(&mut root, &format!("KILL {eve_id}"));
    assert_eq!(eve.execute("SELECT 1").unwrap_err().code, 1927);
    drop((bob, eve));
    let left = q(&mut root, "SELECT ID FROM information_schema.PROCESSLIST");
    assert_eq!(
        left,
        vec![vec![Value::Int(i64::from(root.connection_id()))]]
    );
}

#[test]
fn kill_query_stops_an_index_build_which_leaves_nothing() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut admin) = open(cfg());
    // Stall the build of `ib` at its first row, kill it there.
    let key = "fj/ddl/index-build:ib";
    global().add(key, ":::", "wait", 0, "", false).unwrap();
    let sql = "CREATE INDEX ib ON t (v)";
    let (id, h) = spawn(&db, &[], sql);
    wait_waiters(key, WAIT);
    wait_running(&mut admin, id, sql);
    kill_and_expect_1317(&mut admin, id, h, "KILL QUERY");
    remove_all_points();
    // Rolled back: no index, and the name is free.
    assert!(q(&mut admin, "SHOW INDEX FROM t WHERE Key_name = 'ib'").is_empty());
    q(&mut admin, sql);
    assert_eq!(
        q(&mut admin, "SHOW INDEX FROM t WHERE Key_name = 'ib'").len(),
        1
    );
}

/// SHOW STATUS carries the storage's counters: every autocommit INSERT is
/// a commit group of its own here (one session), each made durable by a
/// log sync, and `Tributary_latest_ts` moves with them.
#[test]
fn show_status_counts_commit_groups_and_log_syncs() {
    let (_dir, _db, mut s) = open(cfg());
    let counter = |s: &mut Session, name: &str| -> u64 {
        let rows = q(s, &format!("SHOW STATUS LIKE '{name}'"));
        match rows.first().map(|r| r.as_slice()) {
            Some([Value::Text(n), v]) if n == name => match v {
                Value::Int(i) => u64::try_from(*i).unwrap(),
                Value::Text(t) => t.parse().unwrap(),
                other => panic!("{name} = {other:?}"),
            },
            other => panic!("{name}: {other:?}"),
        }
    };
    let groups = counter(&mut s, "Tributary_commit_groups");
    let syncs = counter(&mut s, "Tributary_log_syncs");
    let latest = counter(&mut s, "Tributary_latest_ts");
    assert!(
        groups > 0 && syncs > 0 && latest > 0,
        "{groups} {syncs} {latest}"
    );
    for i in 1000..1010 {
        q(&mut s, &format!("INSERT INTO t VALUES ({i}, {i})"));
    }
    assert!(counter(&mut s, "Tributary_commit_groups") >= groups + 10);
    assert!(counter(&mut s, "Tributary_log_syncs") >= syncs + 10);
    assert!(counter(&mut s, "Tributary_latest_ts") >= latest + 10);
    // The embedded store's seven, whether this node runs ISCP, the
    // statement memory budget's two (used, peak) and the bytes spilled to
    // temporary files (decision 027).
    let all = q(&mut s, "SHOW STATUS LIKE 'Tributary%'");
    assert_eq!(all.len(), 11, "{all:?}");
    assert!(counter(&mut s, "Tributary_iscp_runner") <= 1);
}
