//! Issue 41: planning runs nothing. A table function's rows are made when
//! its block runs, not when the query is planned: EXPLAIN of a
//! `generate_series` larger than the statement's memory budget answers
//! (its plan only describes the rows), while running it fails with 1114;
//! a correlated subquery over a table function makes its rows once per
//! statement, not once per outer row (as when the plan held them).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use common::{err, open_budgeted, q};
use tributary::testing::table_function_makings;
use tributary::Value;

const MIB: u64 = 1 << 20;

#[test]
fn explain_describes_table_function_rows_without_making_them() {
    let (_dir, db) = open_budgeted(64 * MIB);
    let mut s = db.session();
    let sql = "SELECT * FROM generate_series(1, 10000000) g";
    let plan = q(&mut s, &format!("EXPLAIN {sql}"));
    let text: Vec<String> = plan
        .iter()
        .map(|r| match &r[0] {
            Value::Text(t) => t.clone(),
            other => panic!("EXPLAIN line {other:?}"),
        })
        .collect();
    assert!(
        text.iter()
            .any(|l| l.contains("Function Scan generate_series(1, 10000000) (10000000 rows)")),
        "{text:?}"
    );
    assert_eq!(db.engine().budget.used(), 0);
    // Running it makes the rows: past the budget.
    assert_eq!(err(&mut s, sql).code, 1114);
    assert_eq!(db.engine().budget.used(), 0);
    // Arguments are still checked when planning.
    assert_eq!(
        err(&mut s, "EXPLAIN SELECT * FROM generate_series(1, 2, 0) g").code,
        1210
    );
}

#[test]
fn a_correlated_subquery_reads_one_making_of_the_rows() {
    let (_dir, db) = open_budgeted(256 * MIB);
    let mut s = db.session();
    // 50 outer rows, each running the subquery over the inner series:
    // two makings in all (the outer series and the inner one), not 51.
    let before = table_function_makings();
    let r = q(
        &mut s,
        "SELECT COUNT(*) FROM generate_series(1, 50) o \
         WHERE (SELECT COUNT(*) FROM generate_series(1, 1000) g \
                WHERE g.result <= o.result) = o.result",
    );
    assert_eq!(r, vec![vec![Value::Int(50)]]);
    assert_eq!(table_function_makings() - before, 2);
    // EXPLAIN makes none.
    let before = table_function_makings();
    q(&mut s, "EXPLAIN SELECT * FROM generate_series(1, 1000) g");
    assert_eq!(table_function_makings(), before);
    assert_eq!(db.engine().budget.used(), 0);
}
