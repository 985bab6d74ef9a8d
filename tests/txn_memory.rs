//! A write transaction cannot exhaust the machine (issue 42 item 4,
//! decision 032): its buffered writes and row locks are charged to
//! `tributary_transaction_memory_limit` and to the node's global memory
//! budget; past either the statement fails with 1197 (ER_TRANS_CACHE_FULL)
//! and is rolled back as a statement — the transaction's earlier
//! statements stay and commit — and the memory is given back.
//!
//! Peak resident memory is read from `/proc/self/status` (VmHWM) around
//! the failing statement: the bound is generous (allocator slack, other
//! tests of this binary running at the same time), but far below what the
//! refused write set would have taken.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use tributary::{Config, Database, Session, Value};

use common::{cfg, err, q};

const MIB: u64 = 1 << 20;

fn open(total: u64) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let config = Config {
        statement_memory_total: total,
        statement_memory: total / 4,
        secure_file_priv: Some(files),
        ..cfg()
    };
    let db = Database::open_with(dir.path().join("data"), config).unwrap();
    (dir, db)
}

/// A file of `rows` lines `id<TAB>v` (v: `width` bytes) from id `from`
/// on, in the node's `secure_file_priv`; its name.
fn file(dir: &tempfile::TempDir, name: &str, from: u64, rows: u64, width: usize) -> String {
    use std::io::Write;
    let path = dir.path().join("files").join(name);
    let v = "x".repeat(width);
    // Streamed: the file's bytes never raise this process's peak.
    let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
    for i in from..from + rows {
        writeln!(out, "{i}\t{v}").unwrap();
    }
    out.flush().unwrap();
    path.display().to_string()
}

fn session(db: &Database) -> Session {
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE IF NOT EXISTS d");
    q(&mut s, "USE d");
    s
}

/// Peak resident set of this process so far, in bytes.
fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

fn count(s: &mut Session, sql: &str) -> i64 {
    match q(s, sql).first().and_then(|r| r.first()) {
        Some(Value::Int(n)) => *n,
        other => panic!("{sql}: {other:?}"),
    }
}

/// A statement whose write set is far past the transaction's limit fails
/// with 1197; the transaction's earlier statements stay and commit, the
/// session and the node go on, and the process's peak memory grew by far
/// less than the refused write set.
#[test]
fn a_write_set_past_the_limit_fails_with_1197_and_keeps_the_transaction() {
    let (dir, db) = open(1024 * MIB);
    // LOAD DATA streams its rows (an INSERT … SELECT would hold the
    // selected rows first, under the statement's own budget).
    let big = file(&dir, "big.txt", 1000, 400_000, 300);
    let load = format!("LOAD DATA INFILE '{big}' INTO TABLE t");
    let mut s = session(&db);
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, v VARCHAR(300), KEY (v(8)))",
    );
    let limit = 4 * MIB;
    q(
        &mut s,
        &format!("SET tributary_transaction_memory_limit = {limit}"),
    );
    q(&mut s, "START TRANSACTION");
    q(
        &mut s,
        "INSERT INTO t SELECT result, REPEAT('a', 100) FROM generate_series(1, 100) g",
    );
    q(&mut s, "UPDATE t SET v = 'b' WHERE id <= 10");
    let before = peak_rss();
    // 400k rows of ~300 bytes and a secondary index: ~300 MB of write set
    // unbounded, 70 times the limit.
    let e = err(&mut s, &load);
    assert_eq!(e.code, 1197, "{e:?}");
    assert!(
        e.message
            .contains("more than 'tributary_transaction_memory_limit' bytes"),
        "{e:?}"
    );
    let grew = peak_rss().saturating_sub(before);
    eprintln!("peak RSS grew by {} MiB", grew / MIB);
    assert!(grew < 96 * MIB, "peak RSS grew by {grew} bytes");
    // The statement was rolled back, the earlier ones are there.
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), 100);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t WHERE v = 'b'"), 10);
    // Its bytes came back: more statements fit in the transaction.
    q(
        &mut s,
        "INSERT INTO t SELECT result + 1000, 'c' FROM generate_series(1, 1000) g",
    );
    q(&mut s, "COMMIT");
    let mut other = session(&db);
    assert_eq!(count(&mut other, "SELECT COUNT(*) FROM t"), 1100);
    assert_eq!(
        count(&mut other, "SELECT COUNT(*) FROM t WHERE v = 'b'"),
        10
    );
    // Nothing is left charged once the transaction ended.
    assert_eq!(db.engine().budget.used(), 0);
    // Under autocommit the failing statement is the whole transaction.
    q(&mut s, "DELETE FROM t WHERE id > 1000");
    let e = err(&mut s, &load);
    assert_eq!(e.code, 1197, "{e:?}");
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), 100);
    assert_eq!(db.engine().budget.used(), 0);
    // A big UPDATE and a big DELETE are bounded the same way.
    q(&mut s, "SET tributary_transaction_memory_limit = 0");
    q(
        &mut s,
        "INSERT INTO t SELECT result + 100000, 'y' FROM generate_series(1, 50000) g",
    );
    q(
        &mut s,
        &format!("SET tributary_transaction_memory_limit = {limit}"),
    );
    assert_eq!(err(&mut s, "UPDATE t SET v = REPEAT('z', 200)").code, 1197);
    assert_eq!(err(&mut s, "DELETE FROM t").code, 1197);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t"), 50_100);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t WHERE v LIKE 'z%'"), 0);
    assert_eq!(db.engine().budget.used(), 0);
}

/// The node's global budget bounds what all transactions hold together:
/// a second transaction's statement fails with 1197 naming it while the
/// first holds its writes, and fits once the first committed.
#[test]
fn transactions_together_are_bounded_by_the_global_budget() {
    let (dir, db) = open(64 * MIB);
    let fa = file(&dir, "a.txt", 1, 60_000, 300);
    let fb = file(&dir, "b.txt", 100_001, 60_000, 300);
    let mut a = session(&db);
    let mut b = session(&db);
    q(
        &mut a,
        "CREATE TABLE g (id INT PRIMARY KEY, v VARCHAR(300))",
    );
    for s in [&mut a, &mut b] {
        // Each alone may take nearly all of the global budget.
        q(
            s,
            &format!("SET tributary_transaction_memory_limit = {}", 60 * MIB),
        );
        q(s, "START TRANSACTION");
    }
    // About 37 MB each (~620 bytes a row): one fits, two do not.
    q(&mut a, &format!("LOAD DATA INFILE '{fa}' INTO TABLE g"));
    let e = err(&mut b, &format!("LOAD DATA INFILE '{fb}' INTO TABLE g"));
    assert_eq!(e.code, 1197, "{e:?}");
    assert!(e.message.contains("'--statement-memory-total'"), "{e:?}");
    q(&mut a, "COMMIT");
    q(&mut b, &format!("LOAD DATA INFILE '{fb}' INTO TABLE g"));
    q(&mut b, "COMMIT");
    assert_eq!(count(&mut a, "SELECT COUNT(*) FROM g"), 120_000);
    assert_eq!(db.engine().budget.used(), 0);
}

/// LOAD DATA under autocommit with `tributary_load_commit_rows` loads a
/// file of any size (each batch a transaction of its own); as one
/// transaction the same file fails with 1197 and loads nothing.
#[test]
fn load_data_in_batches_loads_past_the_limit() {
    let (dir, db) = open(1024 * MIB);
    let mut s = session(&db);
    q(
        &mut s,
        "CREATE TABLE l (id INT PRIMARY KEY, v VARCHAR(300))",
    );
    let rows = 60_000;
    let path = file(&dir, "l.txt", 1, rows, 200);
    let load = format!("LOAD DATA INFILE '{path}' INTO TABLE l");
    // ~20 MB of write set: 10 times the limit.
    q(&mut s, "SET tributary_transaction_memory_limit = 2097152");
    let e = err(&mut s, &load);
    assert_eq!(e.code, 1197, "{e:?}");
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM l"), 0);
    assert_eq!(db.engine().budget.used(), 0);
    q(&mut s, "SET tributary_load_commit_rows = 1000");
    let r = s.execute(&load).unwrap();
    assert_eq!(r.affected_rows, rows);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM l"), rows as i64);
    assert_eq!(db.engine().budget.used(), 0);
}
