//! `CHECK TABLE` finds a damaged index: a stray entry written straight into
//! an ASYNC B-tree index's storage (what no statement can do) turns the
//! table's answer from `status OK` to an `error` row naming the index and
//! `Corrupt`, as MySQL reports a damaged table; CHECK INDEX agrees.
//! The well-formed answers are in tests/sql/maintenance.sql.
//!
//! Tests never sleep to synchronise: they poll with a deadline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::time::Duration;

use tributary::testing::{btree_entry_key, encode_key, Collation};
use tributary::{Database, Session, Value};

use common::{cfg, job, q, wait_until};

const WAIT: Duration = Duration::from_secs(60);

/// CHECK TABLE t's rows as (Msg_type, Msg_text).
fn check_table(s: &mut Session) -> Vec<(String, String)> {
    q(s, "CHECK TABLE t")
        .into_iter()
        .map(|r| (r[2].to_string(), r[3].to_string()))
        .collect()
}

#[test]
fn check_table_reports_a_stray_index_entry_as_corrupt() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open_with(dir.path(), cfg()).expect("open");
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(&mut s, "CREATE TABLE t (id INT PRIMARY KEY, c INT)");
    let rows: Vec<String> = (0..100).map(|i| format!("({i}, {})", i % 7)).collect();
    q(&mut s, &format!("INSERT INTO t VALUES {}", rows.join(", ")));
    q(&mut s, "CREATE INDEX a ON t(c) ASYNC");
    let ok = vec![("status".to_string(), "OK".to_string())];
    // The checker waits for the index to catch up; it may still call
    // rows pending (a note) until the consumer has applied them.
    wait_until("CHECK TABLE t is OK", WAIT, || check_table(&mut s) == ok);

    // An entry for a row that does not exist (id 12345, c = 3).
    let storage_id = job(&db, "a").spec.storage_id;
    let key = btree_entry_key(
        &[Value::Int(3)],
        &[Collation::Utf8mb4Bin],
        &encode_key(&[Value::Int(12345)]),
        false,
    );
    let st = &db.engine().storage;
    let mut txn = st.begin(Default::default()).expect("begin");
    txn.put(storage_id, &key, Vec::new()).expect("put");
    txn.commit().expect("commit");

    let got = check_table(&mut s);
    assert_eq!(got.len(), 2, "{got:?}");
    assert_eq!(got[0].0, "error", "{got:?}");
    assert!(
        got[0].1.starts_with("Index 'a':") && got[0].1.contains("1 stale"),
        "{got:?}"
    );
    assert_eq!(got[1], ("error".into(), "Corrupt".into()));
    let r = q(&mut s, "CHECK INDEX a ON t");
    assert_eq!(r[0][8].to_string(), "MISMATCH");
}
