//! Keys over a case-insensitive column through the paths a golden file
//! cannot wait for: an ASYNC B-tree index, whose entries the ISCP consumer
//! writes from its job spec (the key collations recorded there), compared
//! entry for entry with the keys the column's collation gives, before and
//! after ALTERs that change the column's collation; and a synchronous
//! index over the same column, checked by CHECK INDEX (which encodes the
//! expected entries under the table's collations).
//!
//! Tests never sleep to synchronise: they poll with a deadline
//! (`common::wait_until`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use tributary::testing::{btree_entry_key, encode_key, Collation};
use tributary::{Database, Session, Value};

use common::{cfg, job, q, wait_until};

const WAIT: Duration = Duration::from_secs(60);

/// CHECK INDEX's row: (status, rows, indexed, pending).
fn check(s: &mut Session, ix: &str) -> (String, i64, i64, i64) {
    let r = q(s, &format!("CHECK INDEX {ix} ON t"));
    let int = |v: &Value| match v {
        Value::Int(i) => *i,
        other => panic!("not an int: {other:?}"),
    };
    let row = &r[0];
    (row[8].to_string(), int(&row[2]), int(&row[3]), int(&row[7]))
}

/// CHECK INDEX of a synchronous index: OK over `rows` rows.
fn assert_index_ok(s: &mut Session, ix: &str, rows: i64) {
    assert_eq!(
        check(s, ix),
        ("OK".into(), rows, rows, 0),
        "CHECK INDEX {ix}"
    );
}

/// The entries an index over `t.c` of collation `coll` must hold.
fn expected_entries(s: &mut Session, coll: Collation) -> BTreeSet<Vec<u8>> {
    q(s, "SELECT id, c FROM t")
        .into_iter()
        .map(|r| {
            let pk = encode_key(&r[..1]);
            btree_entry_key(&r[1..], &[coll], &pk, false)
        })
        .collect()
}

/// Wait until ASYNC index `ix`'s entry table is exactly the entries of the
/// table's rows under `coll`.
fn wait_async_entries(db: &Database, s: &mut Session, ix: &str, coll: Collation) {
    let want = expected_entries(s, coll);
    let storage_id = job(db, ix).spec.storage_id;
    let st = &db.engine().storage;
    let mut got = BTreeSet::new();
    let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        wait_until(&format!("index {ix}: entries under {coll}"), WAIT, || {
            got = st
                .snapshot_scan(storage_id, st.latest_ts(), None, usize::MAX)
                .expect("scan")
                .into_iter()
                .map(|(k, _)| k)
                .collect();
            got == want
        })
    }));
    if ok.is_err() {
        panic!(
            "index {ix}: {} entries, {} expected, {} in common",
            got.len(),
            want.len(),
            got.intersection(&want).count()
        );
    }
}

/// Values that collide under utf8mb4_general_ci in groups of four.
fn fill(s: &mut Session, from: i64, to: i64) {
    let vals: Vec<String> = (from..to)
        .map(|i| {
            let w = match i % 4 {
                0 => format!("word{}", i / 4),
                1 => format!("WORD{}", i / 4),
                2 => format!("Wörd{} ", i / 4),
                _ => format!("wÖrd{}", i / 4),
            };
            format!("({i}, '{w}')")
        })
        .collect();
    q(s, &format!("INSERT INTO t VALUES {}", vals.join(", ")));
}

fn count(s: &mut Session, sql: &str) -> i64 {
    match q(s, sql).first().and_then(|r| r.first()) {
        Some(Value::Int(n)) => *n,
        other => panic!("{sql}: {other:?}"),
    }
}

#[test]
fn async_and_sync_btree_over_a_ci_column_follow_its_collation() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open_with(dir.path(), cfg()).expect("open");
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, c VARCHAR(20) COLLATE utf8mb4_general_ci)",
    );
    fill(&mut s, 0, 200);
    // Built from the existing rows, then maintained from the change log.
    q(&mut s, "CREATE INDEX a ON t(c) ASYNC");
    q(&mut s, "CREATE INDEX b ON t(c)");
    assert_eq!(
        job(&db, "a").spec.key_collations(),
        vec![Collation::Utf8mb4GeneralCi]
    );
    fill(&mut s, 200, 300);
    q(&mut s, "UPDATE t SET c = UPPER(c) WHERE id % 5 = 0");
    q(&mut s, "DELETE FROM t WHERE id % 7 = 0");
    let rows = count(&mut s, "SELECT COUNT(*) FROM t");
    wait_async_entries(&db, &mut s, "a", Collation::Utf8mb4GeneralCi);
    assert_index_ok(&mut s, "b", rows);
    // The synchronous index answers a lookup through the collation: all
    // four spellings of word4 (id 16..19), none deleted or updated.
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t WHERE c = 'WORD4'"), 4);
    assert_eq!(
        count(&mut s, "SELECT COUNT(*) FROM t WHERE c = 'wórd4  '"),
        4
    );

    // To a binary collation and back: both indexes rebuilt under the new
    // key encoding (the ASYNC one as a new job with the new collations).
    q(
        &mut s,
        "ALTER TABLE t MODIFY c VARCHAR(20) COLLATE utf8mb4_bin",
    );
    assert!(job(&db, "a").spec.collations.is_empty());
    wait_async_entries(&db, &mut s, "a", Collation::Utf8mb4Bin);
    assert_index_ok(&mut s, "b", rows);
    assert_eq!(count(&mut s, "SELECT COUNT(*) FROM t WHERE c = 'WORD4'"), 1);
    q(
        &mut s,
        "ALTER TABLE t MODIFY c VARCHAR(20) COLLATE utf8mb4_general_ci",
    );
    assert_eq!(
        job(&db, "a").spec.key_collations(),
        vec![Collation::Utf8mb4GeneralCi]
    );
    fill(&mut s, 300, 320);
    let rows = count(&mut s, "SELECT COUNT(*) FROM t");
    wait_async_entries(&db, &mut s, "a", Collation::Utf8mb4GeneralCi);
    assert_index_ok(&mut s, "b", rows);

    // A UNIQUE over the column cannot be built: every group collides.
    let e = s
        .execute("CREATE UNIQUE INDEX u ON t(c)")
        .expect_err("duplicates under the collation");
    assert_eq!(e.code, 1062, "{e:?}");
    drop(s);
    db.shutdown();
}
