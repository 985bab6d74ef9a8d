//! A join's input scans on several threads (`sql::exec::parallel::scan`):
//! a filtered full scan of a large table, and a lookup join's read of many
//! primary-key prefixes, each cut into runs of consecutive keys read by
//! their own threads and concatenated in key order. Each query here is
//! checked against the same query made to run on one thread (a function
//! call in the scanned table's WHERE keeps a scan on the statement's
//! thread): the same rows in the same order, the same warnings, at the
//! latest snapshot, at an older one while another session writes, and
//! with the transaction's own writes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use common::cfg;
use tributary::{Database, Session, Value};

/// Rows of `o`: past the parallel scan's threshold (100,000).
const ORDERS: i64 = 120_000;
/// Orders with lines in `li` (three each).
const WITH_LINES: i64 = 3_000;

/// (query run on several threads, the same on one thread, scans it runs
/// on several threads).
const QUERIES: [(&str, &str); 3] = [
    // A filtered full scan of `o` probing a hash table built on `n`.
    (
        "SELECT o.id, n.name FROM n JOIN o ON o.d = n.k WHERE o.id % 7 = 3 AND o.d < 40",
        "SELECT o.id, n.name FROM n JOIN o ON o.d = n.k WHERE o.id % 7 = 3 AND o.d < 40 \
         AND o.id + CONNECTION_ID() > 0",
    ),
    // 1,000 orders, then `li` read by 1,000 prefixes of its key.
    (
        "SELECT li.oid, li.line, li.v FROM o JOIN li ON li.oid = o.id \
         WHERE o.id < 2000 AND o.d < 50",
        "SELECT li.oid, li.line, li.v FROM o JOIN li ON li.oid = o.id \
         WHERE o.id < 2000 AND o.d < 50 AND li.v + CONNECTION_ID() > 0",
    ),
    // A filter that warns on every row it tests (text read as a number).
    (
        "SELECT o.id FROM n JOIN o ON o.d = n.k WHERE o.t + 0 > 5 AND o.id % 1000 = 7",
        "SELECT o.id FROM n JOIN o ON o.d = n.k WHERE o.t + 0 > 5 AND o.id % 1000 = 7 \
         AND o.id + CONNECTION_ID() > 0",
    ),
];

/// Runs every query both ways: their rows (asserting that both ways agree
/// and that only the first ran on several threads).
fn both(s: &mut Session) -> Vec<Vec<Vec<Value>>> {
    QUERIES
        .iter()
        .map(|(par_sql, one_sql)| {
            let before = tributary::testing::filtered_scans_run();
            let par = s.execute(par_sql).expect("parallel");
            let after = tributary::testing::filtered_scans_run();
            assert_eq!(after, before + 1, "not on several threads: {par_sql}");
            let one = s.execute(one_sql).expect("one thread");
            assert_eq!(
                tributary::testing::filtered_scans_run(),
                after,
                "on several threads: {one_sql}"
            );
            assert!(!par.rows.is_empty(), "{par_sql}: no rows");
            assert_eq!(par.rows, one.rows, "{par_sql}");
            assert_eq!(par.warnings, one.warnings, "{par_sql}: warnings");
            par.rows
        })
        .collect()
}

#[test]
fn parallel_join_inputs_answer_as_one_scan() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open_with(dir.path(), cfg()).expect("open");
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE p; USE p;
         CREATE TABLE o (id BIGINT PRIMARY KEY, d INT, t VARCHAR(10));
         CREATE TABLE li (oid BIGINT, line INT, v INT, PRIMARY KEY (oid, line));
         CREATE TABLE n (k BIGINT PRIMARY KEY, name VARCHAR(20))",
    )
    .expect("ddl");
    for lo in (0..ORDERS).step_by(2000) {
        let values: Vec<String> = (lo..lo + 2000)
            .map(|i| format!("({i},{},'{}x')", (i * 37) % 100, i % 10))
            .collect();
        s.execute(&format!("INSERT INTO o VALUES {}", values.join(",")))
            .expect("insert o");
    }
    let values: Vec<String> = (0..WITH_LINES)
        .flat_map(|i| (1..=3).map(move |l| format!("({i},{l},{})", (i * l) % 17)))
        .collect();
    s.execute(&format!("INSERT INTO li VALUES {}", values.join(",")))
        .expect("insert li");
    let values: Vec<String> = (0..100).map(|k| format!("({k},'n{k}')")).collect();
    s.execute(&format!("INSERT INTO n VALUES {}", values.join(",")))
        .expect("insert n");

    let latest = both(&mut s);
    // The second query's rows come in `li`'s key order.
    let keys: Vec<(i64, i64)> = latest[1]
        .iter()
        .map(|r| match (&r[0], &r[1]) {
            (Value::Int(a), Value::Int(b)) => (*a, *b),
            other => panic!("not integers: {other:?}"),
        })
        .collect();
    assert!(keys.windows(2).all(|w| w[0] < w[1]), "not in key order");
    assert_eq!(keys.len(), 3 * 1000, "three lines of each of 1,000 orders");

    // An older snapshot while another session deletes and changes rows.
    s.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .expect("begin");
    let mut b = db.session();
    b.execute_script(
        "USE p; DELETE FROM o WHERE id BETWEEN 30000 AND 35000; UPDATE o SET d = d + 1 WHERE id % 5 = 0;
         DELETE FROM li WHERE oid < 500; UPDATE li SET v = v + 1",
    )
    .expect("changes");
    assert_eq!(both(&mut s), latest, "the snapshot's answers changed");
    s.execute("COMMIT").expect("commit");
    let changed = both(&mut s);
    assert_ne!(changed, latest);
    // Own writes: the transaction's rows are seen.
    s.execute("BEGIN").expect("begin");
    s.execute_script(
        "INSERT INTO o VALUES (-3, 10, '9'), (500003, 12, '7');
         INSERT INTO li VALUES (1000, 9, 4), (30006, 1, 2)",
    )
    .expect("own writes");
    let own = both(&mut s);
    assert_ne!(own, changed);
    s.execute("ROLLBACK").expect("rollback");
}
