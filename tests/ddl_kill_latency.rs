//! KILL QUERY ends every DDL statement promptly wherever its time goes
//! (issue 39, deliverable 2): while it waits for a durable write of its
//! ids (the data file busy with a large transaction in front of it) and
//! while it builds an index. Nothing of a killed DDL is left behind.
//!
//! The durable write is held up by fault point
//! [`tributary_fault::points::STORAGE_FREE_SPACE`] armed with `wait` (every
//! durable write of the data file reads the free space first), so the
//! tests do not depend on how long a large transaction takes to apply.
//! Every test holds a [`FaultGuard`] (fault points are process-global);
//! tests never sleep to synchronise: they wait on a condition with a
//! deadline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::thread;
use std::time::{Duration, Instant};

use tributary::{Database, Session, SqlError, Value};
use tributary_fault::{global, points, FaultGuard};

use common::{cfg, remove_all_points, wait_until, wait_waiters};

const WAIT: Duration = Duration::from_secs(30);
/// Most a killed statement may take to answer here (debug build, a
/// loaded CI machine; the release figures are in docs/SECURITY.md).
const STOP: Duration = Duration::from_secs(2);

fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match s.execute(sql) {
        Ok(r) => r.rows,
        Err(e) => panic!("{sql}: {} {}", e.code, e.message),
    }
}

type Victim = thread::JoinHandle<(Result<(), SqlError>, Session)>;

fn spawn(mut s: Session, sql: &str) -> (u32, Victim) {
    let id = s.connection_id();
    let sql = sql.to_string();
    (
        id,
        thread::spawn(move || {
            let r = s.execute(&sql).map(|_| ());
            (r, s)
        }),
    )
}

/// KILL QUERY `id`; the victim's outcome and how long it took to answer.
/// Fails (after releasing every fault point, so the victim can end) when
/// the victim has not answered within [`WAIT`].
fn kill(
    admin: &mut Session,
    id: u32,
    h: Victim,
    sql: &str,
) -> (Result<(), SqlError>, Session, Duration) {
    let t = Instant::now();
    q(admin, &format!("KILL QUERY {id}"));
    while !h.is_finished() && t.elapsed() < WAIT {
        thread::park_timeout(Duration::from_millis(1));
    }
    let took = t.elapsed();
    if !h.is_finished() {
        let waiting = tributary_fault::global().list();
        remove_all_points();
        let _ = h.join();
        panic!("`{sql}` had not answered {took:?} after KILL (fault points then: {waiting:?})");
    }
    let (r, s) = h.join().unwrap();
    (r, s, took)
}

/// Wait until connection `id` is running `sql` (information_schema.PROCESSLIST).
fn wait_running(admin: &mut Session, id: u32, sql: &str) {
    let probe = format!("SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {id}");
    wait_until(&format!("connection {id} running `{sql}`"), WAIT, || {
        q(admin, &probe) == vec![vec![Value::Text(sql.to_string())]]
    });
}

fn tables(s: &mut Session) -> Vec<Vec<Value>> {
    q(s, "SHOW TABLES FROM k")
}

/// Each DDL that allocates ids durably (a database, a table, an index's
/// storage) is killed while that write cannot reach the data file: 1317
/// at once and nothing created; once the file takes writes again the
/// same statement succeeds, with ids no earlier object has.
#[test]
fn a_ddl_waiting_for_its_durable_ids_is_killable() {
    let _g = FaultGuard::enable();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut admin = db.session();
    q(&mut admin, "CREATE DATABASE k");
    q(&mut admin, "CREATE TABLE k.t (id INT PRIMARY KEY, v INT)");
    q(&mut admin, "INSERT INTO k.t VALUES (1, 1), (2, 2)");
    let before = tables(&mut admin);
    for sql in [
        "CREATE TABLE k.fresh (a INT)",
        "CREATE INDEX iv ON k.t (v)",
        "CREATE DATABASE k2",
        "CREATE TABLE k.fresh2 (a INT, FULLTEXT f (b), b TEXT)",
    ] {
        // `iarg` -1: once released, the free space is read as usual.
        global()
            .add(points::STORAGE_FREE_SPACE, ":::", "wait", -1, "", false)
            .unwrap();
        let (id, h) = spawn(db.session(), sql);
        wait_waiters(points::STORAGE_FREE_SPACE, WAIT);
        // The waiter may be the applier writing the rows above: KILL QUERY
        // only once the victim runs its statement (before it, KILL finds
        // nothing to stop, as MySQL's does).
        wait_running(&mut admin, id, sql);
        let (r, _s, took) = kill(&mut admin, id, h, sql);
        let e = r.expect_err(sql);
        assert_eq!(e.code, 1317, "{sql}: {e:?}");
        assert!(took < STOP, "{sql}: answered {took:?} after KILL");
        remove_all_points();
        // Nothing of it exists.
        assert_eq!(tables(&mut admin), before, "{sql}");
        assert_eq!(
            q(&mut admin, "SHOW INDEX FROM k.t").len(),
            1,
            "{sql}: only the primary key"
        );
        assert!(
            q(&mut admin, "SHOW DATABASES LIKE 'k2'").is_empty(),
            "{sql}"
        );
    }
    // Run to the end now: every object gets an id of its own.
    q(&mut admin, "CREATE TABLE k.fresh (a INT)");
    q(&mut admin, "CREATE INDEX iv ON k.t (v)");
    q(&mut admin, "CREATE DATABASE k2");
    q(
        &mut admin,
        "CREATE TABLE k.fresh2 (a INT, FULLTEXT f (b), b TEXT)",
    );
    q(&mut admin, "INSERT INTO k.fresh VALUES (7)");
    q(&mut admin, "INSERT INTO k.fresh2 VALUES (8, 'pear')");
    assert_eq!(
        q(&mut admin, "SELECT a FROM k.fresh"),
        vec![vec![Value::Int(7)]]
    );
    assert_eq!(
        q(&mut admin, "SELECT v FROM k.t WHERE v = 2"),
        vec![vec![Value::Int(2)]]
    );
    assert_eq!(
        q(
            &mut admin,
            "SELECT a FROM k.fresh2 WHERE MATCH(b) AGAINST ('pear')"
        ),
        vec![vec![Value::Int(8)]]
    );
    let ids: Vec<Vec<Value>> = q(
        &mut admin,
        "SELECT rel_id FROM mo_catalog.mo_tables \
         UNION ALL SELECT index_table_id FROM mo_catalog.mo_indexes",
    );
    let mut seen = std::collections::HashSet::new();
    for r in &ids {
        let Value::Int(id) = r[0] else {
            panic!("an id: {r:?}")
        };
        assert!(seen.insert(id), "id {id} twice: {ids:?}");
    }
    db.shutdown();
}

/// Fill `k.big` with `rows` rows (one transaction per 20,000).
fn big_table(s: &mut Session, rows: u64) {
    q(s, "CREATE DATABASE k");
    q(
        s,
        "CREATE TABLE k.big (id INT PRIMARY KEY, v VARCHAR(40), body TEXT)",
    );
    let step = 20_000;
    for lo in (1..=rows).step_by(step as usize) {
        q(
            s,
            &format!(
                "INSERT INTO k.big SELECT result, CONCAT('v', result % 977), \
                 CONCAT('word', result % 5003, ' other', result % 7) \
                 FROM generate_series({lo}, {})",
                (lo + step - 1).min(rows)
            ),
        );
    }
}

/// A CREATE INDEX and a CREATE FULLTEXT INDEX are killed in the middle of
/// their build (a fault point there waits until the test has seen a few
/// thousand rows written, then lets the build go on): 1317 within
/// [`STOP`] (the time is printed) and no index left behind; the table
/// still answers, and the same statement then runs to the end.
#[test]
fn an_index_build_answers_a_kill_promptly_and_leaves_nothing() {
    let _g = FaultGuard::enable();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut admin = db.session();
    let rows = 60_000;
    big_table(&mut admin, rows);
    for (name, sql) in [
        ("iv", "CREATE INDEX iv ON k.big (v)"),
        ("ft", "CREATE FULLTEXT INDEX ft ON k.big (body)"),
    ] {
        let point = format!("{}:{name}", points::DDL_INDEX_BUILD);
        // The 40th checkpoint (40 * 1,024 rows written) waits.
        global()
            .add(&point, "40:40::", "wait", 0, "", false)
            .unwrap();
        let (id, h) = spawn(db.session(), sql);
        wait_waiters(&point, WAIT);
        // Let it build on, then KILL it while it writes.
        global().remove(&point).unwrap();
        let (r, _s, took) = kill(&mut admin, id, h, sql);
        eprintln!("KILL QUERY of {sql} answered in {took:?}");
        let e = r.expect_err(sql);
        assert_eq!(e.code, 1317, "{sql}: {e:?}");
        assert!(took < STOP, "{sql}: answered {took:?} after KILL");
        remove_all_points();
        assert_eq!(
            q(&mut admin, "SHOW INDEX FROM k.big").len(),
            1,
            "{sql}: only the primary key"
        );
        assert_eq!(
            q(&mut admin, "SELECT COUNT(*) FROM k.big"),
            vec![vec![Value::Int(rows as i64)]]
        );
    }
    q(&mut admin, "CREATE INDEX iv ON k.big (v)");
    q(&mut admin, "CREATE FULLTEXT INDEX ft ON k.big (body)");
    assert_eq!(
        q(&mut admin, "SELECT COUNT(*) FROM k.big WHERE v = 'v5'"),
        vec![vec![Value::Int(
            (1..=rows).filter(|i| i % 977 == 5).count() as i64
        )]]
    );
    assert_eq!(
        q(
            &mut admin,
            "SELECT COUNT(*) FROM k.big WHERE MATCH(body) AGAINST ('word17')"
        ),
        vec![vec![Value::Int(
            (1..=rows).filter(|i| i % 5003 == 17).count() as i64
        )]]
    );
    wait_until("nothing left charged", WAIT, || {
        db.engine().budget.used() == 0
    });
    db.shutdown();
}
