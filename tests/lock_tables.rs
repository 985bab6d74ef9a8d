//! LOCK TABLES between sessions: a READ lock keeps writers and DDL out but
//! lets readers (and other READ locks) in; a WRITE lock keeps every other
//! writer and lock out while its holder writes; taking a lock waits for
//! transactions already writing the table; the locks go with UNLOCK
//! TABLES, START TRANSACTION or the session. "Keeps out" is shown by the
//! other session's statement failing with 1205 after its (short)
//! lock-wait timeout — never by a sleep.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use common::q;

use tributary::{Database, Session, Value};

fn code(s: &mut Session, sql: &str) -> u16 {
    match s.execute(sql) {
        Ok(_) => 0,
        Err(e) => e.code,
    }
}

fn open() -> (tempfile::TempDir, Database, Session, Session) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut a = db.session();
    q(&mut a, "CREATE DATABASE d");
    q(&mut a, "USE d");
    q(&mut a, "CREATE TABLE t (id INT PRIMARY KEY, v INT)");
    q(&mut a, "INSERT INTO t VALUES (1, 1)");
    let mut b = db.session();
    q(&mut b, "USE d");
    // Waits in these tests end after 1 s with 1205.
    q(&mut b, "SET innodb_lock_wait_timeout = 1");
    (dir, db, a, b)
}

#[test]
fn read_lock_keeps_writers_and_ddl_out_and_readers_in() {
    let (_dir, _db, mut a, mut b) = open();
    q(&mut a, "LOCK TABLES t READ");
    assert_eq!(code(&mut b, "INSERT INTO t VALUES (2, 2)"), 1205);
    assert_eq!(code(&mut b, "UPDATE t SET v = 5"), 1205);
    assert_eq!(code(&mut b, "ALTER TABLE t ADD COLUMN w INT"), 1205);
    assert_eq!(code(&mut b, "LOCK TABLES t WRITE"), 1205);
    // Readers and other READ locks get in.
    assert_eq!(q(&mut b, "SELECT v FROM t"), vec![vec![Value::Int(1)]]);
    q(&mut b, "LOCK TABLES t READ");
    q(&mut b, "UNLOCK TABLES");
    // After UNLOCK TABLES the writer goes through.
    q(&mut a, "UNLOCK TABLES");
    q(&mut b, "INSERT INTO t VALUES (2, 2)");
}

#[test]
fn write_lock_lets_only_its_holder_write() {
    let (_dir, _db, mut a, mut b) = open();
    q(&mut a, "LOCK TABLES t WRITE");
    q(&mut a, "INSERT INTO t VALUES (2, 2)");
    q(&mut a, "UPDATE t SET v = v + 10");
    assert_eq!(code(&mut b, "INSERT INTO t VALUES (3, 3)"), 1205);
    assert_eq!(code(&mut b, "LOCK TABLES t READ"), 1205);
    assert_eq!(code(&mut b, "DROP TABLE t"), 1205);
    // Its statements commit one by one (autocommit), as MySQL's do.
    assert_eq!(
        q(&mut b, "SELECT SUM(v) FROM t"),
        vec![vec![Value::Int(23)]]
    );
    // START TRANSACTION releases the locks.
    q(&mut a, "START TRANSACTION");
    q(&mut b, "INSERT INTO t VALUES (3, 3)");
    q(&mut a, "COMMIT");
}

#[test]
fn taking_a_lock_waits_for_open_writers_and_sessions_release_theirs() {
    let (_dir, db, mut a, mut b) = open();
    q(&mut b, "BEGIN");
    q(&mut b, "INSERT INTO t VALUES (2, 2)");
    q(&mut a, "SET innodb_lock_wait_timeout = 1");
    // B's open transaction wrote t: A's lock waits for it.
    assert_eq!(code(&mut a, "LOCK TABLES t READ"), 1205);
    q(&mut b, "COMMIT");
    q(&mut a, "LOCK TABLES t READ");
    assert_eq!(
        q(&mut a, "SELECT COUNT(*) FROM t"),
        vec![vec![Value::Int(2)]]
    );
    assert_eq!(code(&mut b, "INSERT INTO t VALUES (3, 3)"), 1205);
    // A session that ends gives its locks up.
    drop(a);
    q(&mut b, "INSERT INTO t VALUES (3, 3)");
    let mut c = db.session();
    q(&mut c, "USE d");
    q(&mut c, "SET innodb_lock_wait_timeout = 1");
    q(&mut c, "LOCK TABLES t WRITE");
    q(&mut c, "UNLOCK TABLES");
}
