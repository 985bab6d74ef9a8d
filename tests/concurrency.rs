//! Concurrency through the library API (issue #2): many sessions doing
//! conflicting updates, a provoked deadlock that is detected (1213), the
//! lock-wait timeout (1205), a unique-key insert race (1062) and snapshot
//! isolation inside an explicit transaction.
//!
//! Owns only its own temporary data directories. Every session runs in its
//! own `std::thread`; threads are ordered with `Barrier`s and channels, and
//! every wait on another thread is bounded (`recv_timeout`), never a sleep.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use tributary::{Database, QueryResult, Session, SqlError, SqlResult, Value};

/// Upper bound for any single wait on another thread.
const WAIT: Duration = Duration::from_secs(30);

const DEADLOCK: u16 = 1213;
const LOCK_WAIT_TIMEOUT: u16 = 1205;
const DUP_ENTRY: u16 = 1062;

/// A fresh database `t` in a temp dir, with `setup` statements run in it.
fn open(setup: &[&str]) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s = db.session();
    s.execute("CREATE DATABASE t").unwrap();
    s.execute("USE t").unwrap();
    for q in setup {
        s.execute(q).unwrap_or_else(|e| panic!("{q}: {e:?}"));
    }
    (dir, db)
}

/// A session with `t` as current database.
fn session(db: &Database) -> Session {
    let mut s = db.session();
    s.execute("USE t").unwrap();
    s
}

fn int_of(r: &QueryResult) -> i64 {
    match r.rows.as_slice() {
        [row] => match row.as_slice() {
            [Value::Int(n)] => *n,
            other => panic!("expected one INT column, got {other:?}"),
        },
        rows => panic!("expected exactly one row, got {rows:?}"),
    }
}

fn query_int(s: &mut Session, sql: &str) -> i64 {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    int_of(&r)
}

/// Run `f` on its own thread and return a receiver for its result, so the
/// caller can wait with a deadline instead of an unbounded `join`.
fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> mpsc::Receiver<T> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx
}

fn recv<T>(rx: &mpsc::Receiver<T>, what: &str) -> T {
    rx.recv_timeout(WAIT)
        .unwrap_or_else(|e| panic!("{what}: no result within {WAIT:?} ({e})"))
}

#[test]
fn many_sessions_conflicting_updates_lose_nothing() {
    let (_dir, db) = open(&[
        "CREATE TABLE c (id INT PRIMARY KEY, n INT)",
        "INSERT INTO c VALUES (1, 0)",
    ]);
    const THREADS: usize = 8;
    const PER_THREAD: usize = 50;
    let start = Arc::new(Barrier::new(THREADS));
    let rxs: Vec<_> = (0..THREADS)
        .map(|_| {
            let mut s = session(&db);
            let start = start.clone();
            spawn(move || -> SqlResult<()> {
                start.wait();
                for _ in 0..PER_THREAD {
                    let r = s.execute("UPDATE c SET n = n + 1 WHERE id = 1")?;
                    assert_eq!(r.affected_rows, 1);
                }
                Ok(())
            })
        })
        .collect();
    for (i, rx) in rxs.iter().enumerate() {
        recv(rx, &format!("updater {i}")).unwrap_or_else(|e| panic!("updater {i}: {e:?}"));
    }
    let mut s = session(&db);
    assert_eq!(
        query_int(&mut s, "SELECT n FROM c WHERE id = 1"),
        (THREADS * PER_THREAD) as i64
    );
}

#[test]
fn many_sessions_read_modify_write_for_update_lose_nothing() {
    let (_dir, db) = open(&[
        "CREATE TABLE c (id INT PRIMARY KEY, n INT)",
        "INSERT INTO c VALUES (1, 0)",
    ]);
    const THREADS: usize = 4;
    const PER_THREAD: usize = 25;
    let start = Arc::new(Barrier::new(THREADS));
    let rxs: Vec<_> = (0..THREADS)
        .map(|_| {
            let mut s = session(&db);
            let start = start.clone();
            spawn(move || -> SqlResult<()> {
                start.wait();
                for _ in 0..PER_THREAD {
                    s.execute("BEGIN")?;
                    let n = int_of(&s.execute("SELECT n FROM c WHERE id = 1 FOR UPDATE")?);
                    let r = s.execute(&format!("UPDATE c SET n = {} WHERE id = 1", n + 1))?;
                    assert_eq!(r.affected_rows, 1);
                    s.execute("COMMIT")?;
                }
                Ok(())
            })
        })
        .collect();
    for (i, rx) in rxs.iter().enumerate() {
        recv(rx, &format!("worker {i}")).unwrap_or_else(|e| panic!("worker {i}: {e:?}"));
    }
    let mut s = session(&db);
    assert_eq!(
        query_int(&mut s, "SELECT n FROM c WHERE id = 1"),
        (THREADS * PER_THREAD) as i64
    );
}

#[test]
fn provoked_deadlock_is_detected_with_1213() {
    let (_dir, db) = open(&[
        "CREATE TABLE d (id INT PRIMARY KEY, n INT)",
        "INSERT INTO d VALUES (1, 1), (2, 2)",
    ]);
    let mut a = session(&db);
    let mut b = session(&db);
    a.execute("BEGIN").unwrap();
    a.execute("UPDATE d SET n = 10 WHERE id = 1").unwrap();
    b.execute("BEGIN").unwrap();
    b.execute("UPDATE d SET n = 20 WHERE id = 2").unwrap();

    // Both now issue the crossing update. Whichever of the two starts
    // waiting second closes the cycle and must be chosen as the victim, so
    // the order in which they arrive after the barrier does not matter.
    let go = Arc::new(Barrier::new(2));
    let ga = go.clone();
    let rx_a = spawn(move || {
        ga.wait();
        let r = a.execute("UPDATE d SET n = 12 WHERE id = 2");
        (a, r)
    });
    let gb = go;
    let rx_b = spawn(move || {
        gb.wait();
        let r = b.execute("UPDATE d SET n = 21 WHERE id = 1");
        (b, r)
    });
    let (a, ra) = recv(&rx_a, "session A");
    let (b, rb) = recv(&rx_b, "session B");

    let code = |r: &SqlResult<QueryResult>| r.as_ref().err().map(|e: &SqlError| e.code);
    let (mut survivor, mut victim, a_won) = match (code(&ra), code(&rb)) {
        (None, Some(DEADLOCK)) => (a, b, true),
        (Some(DEADLOCK), None) => (b, a, false),
        other => {
            panic!("expected exactly one 1213 and one success, got {other:?}: {ra:?} / {rb:?}")
        }
    };
    // InnoDB semantics: the victim's whole transaction was rolled back.
    assert!(
        !victim.in_transaction(),
        "deadlock victim must have its transaction rolled back"
    );
    assert!(survivor.in_transaction());
    // The victim's connection stays usable.
    assert_eq!(query_int(&mut victim, "SELECT count(*) FROM d"), 2);
    survivor.execute("COMMIT").unwrap();

    let (want1, want2) = if a_won { (10, 12) } else { (21, 20) };
    let mut s = session(&db);
    assert_eq!(query_int(&mut s, "SELECT n FROM d WHERE id = 1"), want1);
    assert_eq!(query_int(&mut s, "SELECT n FROM d WHERE id = 2"), want2);
}

#[test]
fn lock_wait_timeout_is_1205() {
    let (_dir, db) = open(&[
        "CREATE TABLE w (id INT PRIMARY KEY, n INT)",
        "INSERT INTO w VALUES (1, 1)",
    ]);
    let mut a = session(&db);
    let mut b = session(&db);
    b.execute("SET innodb_lock_wait_timeout = 0.3").unwrap();
    a.execute("BEGIN").unwrap();
    a.execute("UPDATE w SET n = 100 WHERE id = 1").unwrap();

    // B blocks only itself, so it can run on this thread; but bound it
    // anyway in case the timeout is not honoured.
    let rx = spawn(move || {
        let t = Instant::now();
        let r = b.execute("UPDATE w SET n = 200 WHERE id = 1");
        (b, r, t.elapsed())
    });
    let (mut b, r, took) = recv(&rx, "session B");
    let e = r.expect_err("B's update of a row locked by A must time out");
    assert_eq!(e.code, LOCK_WAIT_TIMEOUT, "{e:?}");
    assert!(
        took >= Duration::from_millis(250) && took <= Duration::from_secs(5),
        "lock wait lasted {took:?}, expected about 0.3 s"
    );
    // The connection stays usable, and sees the committed value.
    assert_eq!(query_int(&mut b, "SELECT n FROM w WHERE id = 1"), 1);
    a.execute("COMMIT").unwrap();
    assert_eq!(query_int(&mut b, "SELECT n FROM w WHERE id = 1"), 100);
    // With A's lock gone B's update goes through.
    b.execute("UPDATE w SET n = 200 WHERE id = 1").unwrap();
    assert_eq!(query_int(&mut a, "SELECT n FROM w WHERE id = 1"), 200);
}

/// `ROLLBACK TO SAVEPOINT` undoes the writes after the savepoint but keeps
/// the row locks they took, as InnoDB does: another session still waits
/// for the row until the transaction ends.
#[test]
fn rollback_to_savepoint_keeps_row_locks() {
    let (_dir, db) = open(&[
        "CREATE TABLE w (id INT PRIMARY KEY, n INT)",
        "INSERT INTO w VALUES (1, 1), (2, 2)",
    ]);
    let mut a = session(&db);
    let mut b = session(&db);
    b.execute("SET innodb_lock_wait_timeout = 0.3").unwrap();
    a.execute("BEGIN").unwrap();
    a.execute("UPDATE w SET n = 20 WHERE id = 2").unwrap();
    a.execute("SAVEPOINT s").unwrap();
    a.execute("UPDATE w SET n = 10 WHERE id = 1").unwrap();
    a.execute("ROLLBACK TO SAVEPOINT s").unwrap();
    assert_eq!(query_int(&mut a, "SELECT n FROM w WHERE id = 1"), 1);
    assert_eq!(query_int(&mut a, "SELECT n FROM w WHERE id = 2"), 20);
    let rx = spawn(move || {
        let r = b.execute("UPDATE w SET n = 100 WHERE id = 1");
        (b, r)
    });
    let (mut b, r) = recv(&rx, "session B");
    assert_eq!(r.expect_err("row 1 stays locked").code, LOCK_WAIT_TIMEOUT);
    a.execute("COMMIT").unwrap();
    b.execute("UPDATE w SET n = 100 WHERE id = 1").unwrap();
    assert_eq!(query_int(&mut b, "SELECT n FROM w WHERE id = 1"), 100);
    assert_eq!(query_int(&mut b, "SELECT n FROM w WHERE id = 2"), 20);
}

fn err_code(s: &mut Session, sql: &str) -> u16 {
    s.execute(sql).expect_err(sql).code
}

/// Snapshots as InnoDB takes them (answers checked against MariaDB):
/// REPEATABLE READ reads the snapshot of the transaction's first read (of
/// START TRANSACTION WITH CONSISTENT SNAPSHOT when it says so), READ
/// COMMITTED one per statement, own uncommitted writes seen at both.
#[test]
fn isolation_levels_take_snapshots_as_innodb() {
    let (_dir, db) = open(&[
        "CREATE TABLE t (id INT PRIMARY KEY, v INT)",
        "INSERT INTO t VALUES (1, 1)",
    ]);
    let mut a = session(&db);
    let mut b = session(&db);
    let count = "SELECT COUNT(*) FROM t";
    // REPEATABLE READ: the snapshot is the first read's, not BEGIN's.
    a.execute("BEGIN").unwrap();
    b.execute("INSERT INTO t VALUES (2, 2)").unwrap();
    assert_eq!(query_int(&mut a, count), 2);
    b.execute("INSERT INTO t VALUES (3, 3)").unwrap();
    assert_eq!(query_int(&mut a, count), 2);
    a.execute("COMMIT").unwrap();
    a.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .unwrap();
    b.execute("INSERT INTO t VALUES (4, 4)").unwrap();
    assert_eq!(query_int(&mut a, count), 3);
    a.execute("COMMIT").unwrap();
    // READ COMMITTED for the session: each statement sees the newest
    // commits and the transaction's own writes.
    a.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .unwrap();
    let r = a.execute("SELECT @@transaction_isolation").unwrap();
    assert_eq!(r.rows, vec![vec![Value::Text("READ-COMMITTED".into())]]);
    a.execute("BEGIN").unwrap();
    assert_eq!(query_int(&mut a, count), 4);
    a.execute("INSERT INTO t VALUES (10, 10)").unwrap();
    b.execute("INSERT INTO t VALUES (5, 5)").unwrap();
    assert_eq!(query_int(&mut a, count), 6);
    b.execute("UPDATE t SET v = 50 WHERE id = 5").unwrap();
    assert_eq!(query_int(&mut a, "SELECT v FROM t WHERE id = 5"), 50);
    // Characteristics cannot change inside a transaction (1568).
    assert_eq!(
        err_code(&mut a, "SET TRANSACTION ISOLATION LEVEL REPEATABLE READ"),
        1568
    );
    a.execute("SAVEPOINT s").unwrap();
    a.execute("DELETE FROM t WHERE id = 10").unwrap();
    a.execute("ROLLBACK TO s").unwrap();
    assert_eq!(query_int(&mut a, count), 6);
    a.execute("COMMIT").unwrap();
    assert_eq!(query_int(&mut b, count), 6);
    a.execute("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        .unwrap();
    // SET TRANSACTION without a scope: the next transaction only.
    a.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .unwrap();
    a.execute("BEGIN").unwrap();
    assert_eq!(query_int(&mut a, count), 6);
    b.execute("INSERT INTO t VALUES (6, 6)").unwrap();
    assert_eq!(query_int(&mut a, count), 7);
    a.execute("COMMIT").unwrap();
    a.execute("BEGIN").unwrap();
    assert_eq!(query_int(&mut a, count), 7);
    b.execute("INSERT INTO t VALUES (7, 7)").unwrap();
    assert_eq!(query_int(&mut a, count), 7);
    a.execute("COMMIT").unwrap();
    // SET TRANSACTION READ ONLY: the next transaction cannot write (1792).
    a.execute("SET TRANSACTION READ ONLY").unwrap();
    a.execute("BEGIN").unwrap();
    assert_eq!(err_code(&mut a, "INSERT INTO t VALUES (8, 8)"), 1792);
    a.execute("COMMIT").unwrap();
    a.execute("BEGIN").unwrap();
    a.execute("INSERT INTO t VALUES (8, 8)").unwrap();
    a.execute("COMMIT").unwrap();
    // Levels not run here are refused by name, never run as another.
    for sql in [
        "SET TRANSACTION ISOLATION LEVEL SERIALIZABLE",
        "SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED",
        "SET SESSION TRANSACTION READ ONLY",
    ] {
        assert_eq!(err_code(&mut a, sql), 1235, "{sql}");
    }
    // autocommit = 0: the first statement opens the transaction.
    a.execute("SET autocommit = 0").unwrap();
    a.execute("SET TRANSACTION ISOLATION LEVEL READ COMMITTED")
        .unwrap();
    assert_eq!(query_int(&mut a, count), 9);
    assert_eq!(
        err_code(&mut a, "SET TRANSACTION ISOLATION LEVEL READ COMMITTED"),
        1568
    );
    b.execute("INSERT INTO t VALUES (9, 9)").unwrap();
    assert_eq!(query_int(&mut a, count), 10);
    a.execute("COMMIT").unwrap();
}

fn ids(s: &mut Session, sql: &str) -> Vec<i64> {
    let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
    r.rows
        .iter()
        .map(|row| match row.as_slice() {
            [Value::Int(n)] => *n,
            other => panic!("expected one INT column, got {other:?}"),
        })
        .collect()
}

/// `FOR UPDATE SKIP LOCKED` passes over rows another transaction holds
/// (a job queue's two workers take different jobs); `NOWAIT` fails at once
/// with MySQL 8's 3572 instead of waiting (MariaDB, whose NOWAIT is a zero
/// lock-wait timeout, answers 1205 there); a plain locking read still
/// waits. Rows are locked only by the reads that lock them.
#[test]
fn skip_locked_and_nowait_as_mysql() {
    let (_dir, db) = open(&[
        "CREATE TABLE jobs (id INT PRIMARY KEY, state VARCHAR(10), k INT, KEY (k))",
        "INSERT INTO jobs VALUES (1, 'new', 1), (2, 'new', 1), (3, 'new', 2), (4, 'done', 2)",
    ]);
    let mut a = session(&db);
    let mut b = session(&db);
    b.execute("SET innodb_lock_wait_timeout = 0.3").unwrap();
    a.execute("BEGIN").unwrap();
    assert_eq!(
        ids(&mut a, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE"),
        [1]
    );
    b.execute("BEGIN").unwrap();
    let sql = "SELECT id FROM jobs WHERE state = 'new' ORDER BY id LIMIT 2 FOR UPDATE SKIP LOCKED";
    assert_eq!(ids(&mut b, sql), [2, 3]);
    assert_eq!(
        err_code(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT"),
        3572
    );
    assert!(b.in_transaction(), "3572 fails the statement only");
    assert_eq!(
        ids(
            &mut b,
            "SELECT id FROM jobs WHERE id = 1 FOR UPDATE SKIP LOCKED"
        ),
        Vec::<i64>::new()
    );
    assert_eq!(
        ids(&mut b, "SELECT id FROM jobs FOR SHARE SKIP LOCKED"),
        [2, 3, 4]
    );
    assert_eq!(
        ids(&mut b, "SELECT id FROM jobs WHERE id = 4 FOR UPDATE NOWAIT"),
        [4]
    );
    assert_eq!(
        err_code(&mut b, "SELECT id FROM jobs FOR UPDATE NOWAIT"),
        3572
    );
    assert_eq!(
        ids(
            &mut b,
            "SELECT id FROM jobs WHERE k = 1 FOR UPDATE SKIP LOCKED"
        ),
        [2]
    );
    // Without an option the statement waits as before.
    assert_eq!(
        err_code(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE"),
        LOCK_WAIT_TIMEOUT
    );
    // A plain read is never skipped.
    assert_eq!(ids(&mut b, "SELECT id FROM jobs ORDER BY id"), [1, 2, 3, 4]);
    b.execute("COMMIT").unwrap();
    a.execute("COMMIT").unwrap();
    assert_eq!(
        ids(&mut b, "SELECT id FROM jobs WHERE id = 1 FOR UPDATE NOWAIT"),
        [1]
    );
    assert_eq!(
        err_code(
            &mut b,
            "SELECT id FROM jobs WHERE id = 1 FOR UPDATE OF jobs NOWAIT"
        ),
        1235
    );
}

#[test]
fn unique_insert_race_one_winner() {
    let (_dir, db) = open(&["CREATE TABLE u (id INT PRIMARY KEY, who INT)"]);
    const THREADS: usize = 8;
    let start = Arc::new(Barrier::new(THREADS));
    let rxs: Vec<_> = (0..THREADS)
        .map(|i| {
            let mut s = session(&db);
            let start = start.clone();
            spawn(move || {
                start.wait();
                s.execute(&format!("INSERT INTO u VALUES (7, {i})"))
            })
        })
        .collect();
    let mut winners = Vec::new();
    for (i, rx) in rxs.iter().enumerate() {
        match recv(rx, &format!("inserter {i}")) {
            Ok(r) => {
                assert_eq!(r.affected_rows, 1);
                winners.push(i as i64);
            }
            Err(e) => assert_eq!(e.code, DUP_ENTRY, "inserter {i}: {e:?}"),
        }
    }
    assert_eq!(winners.len(), 1, "exactly one insert must win: {winners:?}");
    let mut s = session(&db);
    assert_eq!(query_int(&mut s, "SELECT count(*) FROM u"), 1);
    assert_eq!(
        query_int(&mut s, "SELECT who FROM u WHERE id = 7"),
        winners[0]
    );
}

#[test]
fn snapshot_isolation_in_explicit_txn() {
    let (_dir, db) = open(&[
        "CREATE TABLE s (id INT PRIMARY KEY)",
        "INSERT INTO s VALUES (1), (2), (3)",
    ]);
    let mut a = session(&db);
    a.execute("BEGIN").unwrap();
    assert_eq!(query_int(&mut a, "SELECT count(*) FROM s"), 3);

    let mut b = session(&db);
    let rx = spawn(move || -> SqlResult<()> {
        b.execute("INSERT INTO s VALUES (4), (5)")?;
        Ok(())
    });
    recv(&rx, "session B").unwrap();

    // Same transaction: still the snapshot taken at the start.
    assert_eq!(query_int(&mut a, "SELECT count(*) FROM s"), 3);
    assert_eq!(
        a.execute("SELECT id FROM s WHERE id = 4")
            .unwrap()
            .rows
            .len(),
        0
    );
    a.execute("COMMIT").unwrap();
    assert_eq!(query_int(&mut a, "SELECT count(*) FROM s"), 5);
}
