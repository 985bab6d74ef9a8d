//! Recursive CTEs are bounded like every statement (issue 41, item 3): an
//! unbounded `UNION ALL` recursion under a large `cte_max_recursion_depth`
//! stops on KILL QUERY (1317) and on `max_execution_time` (3024) within a
//! generous bound, and fails past the statement memory budget with 1114,
//! giving back everything it held. Waits are polls with deadlines.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::thread;
use std::time::{Duration, Instant};

use tributary::{Database, Session, Value};

use common::{err, open_budgeted, q, wait_until};

/// How long a stopped statement may take to stop (a loaded debug build on
/// 2 cores).
const STOP: Duration = Duration::from_secs(2);
const WAIT: Duration = Duration::from_secs(60);
const MIB: u64 = 1 << 20;

/// Never ends by itself: one new row per round, forever.
const UNBOUNDED: &str =
    "WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM c) SELECT COUNT(*) FROM c";

fn deep(db: &Database) -> Session {
    let mut s = db.session();
    q(&mut s, "SET cte_max_recursion_depth = 4294967295");
    s
}

#[test]
fn kill_query_stops_an_unbounded_recursion() {
    let (_dir, db) = open_budgeted(2048 * MIB);
    let mut admin = db.session();
    let mut s = deep(&db);
    let id = s.connection_id();
    let h = thread::spawn(move || {
        let r = s.execute(UNBOUNDED).map(|r| r.rows);
        (r, s)
    });
    let probe = format!("SELECT COMMAND, INFO FROM information_schema.PROCESSLIST WHERE ID = {id}");
    wait_until("the recursion running", WAIT, || {
        q(&mut admin, &probe).first().is_some_and(|r| {
            r[0] == Value::Text("Query".into()) && r[1] == Value::Text(UNBOUNDED.into())
        })
    });
    // Some thousands of rounds done: their rows are charged.
    wait_until("rows charged", WAIT, || db.engine().budget.used() >= MIB);
    let killed_at = Instant::now();
    q(&mut admin, &format!("KILL QUERY {id}"));
    let (r, mut s) = h.join().unwrap();
    let took = killed_at.elapsed();
    eprintln!("KILL QUERY stopped the recursion in {took:?}");
    assert_eq!(r.expect_err("killed").code, 1317);
    assert!(took < STOP, "{took:?} to stop");
    assert_eq!(db.engine().budget.used(), 0, "bytes left charged");
    assert_eq!(q(&mut s, "SELECT 1"), vec![vec![Value::Int(1)]]);
}

#[test]
fn max_execution_time_stops_an_unbounded_recursion() {
    let (_dir, db) = open_budgeted(2048 * MIB);
    let mut s = deep(&db);
    q(&mut s, "SET max_execution_time = 200");
    let t0 = Instant::now();
    let e = err(&mut s, UNBOUNDED);
    let took = t0.elapsed();
    eprintln!("max_execution_time 200 ms stopped the recursion after {took:?}");
    assert_eq!(e.code, 3024, "{e:?}");
    assert!(took < Duration::from_millis(200) + STOP, "{took:?}");
    assert_eq!(db.engine().budget.used(), 0);
}

#[test]
fn the_memory_budget_stops_an_unbounded_recursion_with_1114() {
    let (_dir, db) = open_budgeted(16 * MIB);
    let mut s = deep(&db);
    // Each row holds 4 KB of text: the budget is passed after a few
    // thousand rounds.
    let wide = "WITH RECURSIVE c (n, s) AS (SELECT 1, REPEAT('x', 4096) UNION ALL \
                SELECT n + 1, s FROM c) SELECT COUNT(*) FROM c";
    let t0 = Instant::now();
    let e = err(&mut s, wide);
    eprintln!("1114 after {:?}", t0.elapsed());
    assert_eq!(e.code, 1114, "{e:?}");
    assert_eq!(db.engine().budget.used(), 0, "bytes left charged");
    // A doubling recursion fails the same way.
    let doubling = "WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL \
                    SELECT n + 1 FROM c, generate_series(1, 2) g) SELECT COUNT(*) FROM c";
    assert_eq!(err(&mut s, doubling).code, 1114);
    assert_eq!(db.engine().budget.used(), 0, "bytes left charged");
    // The same shapes, bounded, answer under the same budget.
    let bounded = "WITH RECURSIVE c (n) AS (SELECT 1 UNION ALL \
                   SELECT n + 1 FROM c, generate_series(1, 2) g WHERE n < 10) SELECT COUNT(*) FROM c";
    assert_eq!(q(&mut s, bounded), vec![vec![Value::Int(1023)]]);
}

/// A table the recursive block joins is scanned once for the whole
/// recursion, not once per round (EXPLAIN ANALYZE counts the loops), and
/// the answer is the same as with the table read each round.
#[test]
fn a_joined_table_is_scanned_once_per_recursion() {
    let (_dir, db) = open_budgeted(512 * MIB);
    let mut s = db.session();
    for sql in [
        "CREATE DATABASE r",
        "USE r",
        "CREATE TABLE node (id BIGINT PRIMARY KEY, parent BIGINT)",
        "INSERT INTO node SELECT result, (result - 1) DIV 2 FROM generate_series(1, 2046) g",
    ] {
        q(&mut s, sql);
    }
    let walk = "WITH RECURSIVE t (id, d) AS (SELECT 0, 0 UNION ALL \
                SELECT n.id, t.d + 1 FROM t JOIN node n ON n.parent = t.id) \
                SELECT COUNT(*), MAX(d), CAST(SUM(id) AS SIGNED) FROM t";
    assert_eq!(
        q(&mut s, walk),
        vec![vec![
            Value::Int(2047),
            Value::Int(10),
            Value::Int(2_094_081)
        ]]
    );
    let plan: Vec<String> = q(&mut s, &format!("EXPLAIN ANALYZE {walk}"))
        .into_iter()
        .map(|r| match &r[0] {
            Value::Text(t) => t.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    let line = |what: &str| {
        plan.iter()
            .find(|l| l.contains(what))
            .unwrap_or_else(|| panic!("no {what} in {plan:#?}"))
            .clone()
    };
    assert!(line("Hash Join").contains("loops=11"), "{plan:#?}");
    assert!(
        line("Table Scan on r.node").contains("loops=1 "),
        "{plan:#?}"
    );
    assert_eq!(db.engine().budget.used(), 0);
}

/// The step's join with a table on one integer key (kept once per
/// recursion, probed by the working table's keys) answers as the general
/// join does — the same rows in the same order — for an inner and a left
/// join, a table key that is not an integer and a working-table key of
/// another class (which leave the round to the general join), and NULL
/// keys. The general join is forced by a key that is not a plain column
/// (`n.parent + 0`).
#[test]
fn the_integer_key_join_of_a_step_answers_as_the_general_join() {
    let (_dir, db) = open_budgeted(512 * MIB);
    let mut s = db.session();
    for sql in [
        "CREATE DATABASE k",
        "USE k",
        "CREATE TABLE node (id BIGINT PRIMARY KEY, parent BIGINT, tp VARCHAR(10), dp DOUBLE)",
        // Node i's parent is (i * 7919) % (i - 1) + 1 for i > 2: several
        // children per parent, in no key order; every 13th parent is NULL.
        "INSERT INTO node SELECT result, IF(result % 13 = 0, NULL, \
         IF(result <= 2, result - 1, (result * 7919) % (result - 1) + 1)), \
         CAST(IF(result <= 2, result - 1, (result * 7919) % (result - 1) + 1) AS CHAR), \
         IF(result <= 2, result - 1, (result * 7919) % (result - 1) + 1) \
         FROM generate_series(1, 600) g",
    ] {
        q(&mut s, sql);
    }
    let walks = [
        // Inner join, the table on the right of the step.
        "WITH RECURSIVE t (id, d) AS (SELECT 1, 0 UNION ALL \
         SELECT n.id, t.d + 1 FROM t JOIN node n ON {k} = t.id) SELECT * FROM t",
        // The table on the left, a residual condition.
        "WITH RECURSIVE t (id, d) AS (SELECT 1, 0 UNION ALL \
         SELECT n.id, t.d + 1 FROM node n JOIN t ON {k} = t.id AND n.id % 5 <> 0) SELECT * FROM t",
        // A left join (unmatched working rows padded), stopped by WHERE.
        "WITH RECURSIVE t (id, d) AS (SELECT 1, 0 UNION ALL \
         SELECT n.id, t.d + 1 FROM t LEFT JOIN node n ON {k} = t.id WHERE t.id IS NOT NULL) \
         SELECT * FROM t",
        // UNION DISTINCT over a DOUBLE key.
        "WITH RECURSIVE t (id, d) AS (SELECT 1, 0 UNION \
         SELECT n.id, 1 FROM t JOIN node n ON {dk} = t.id) SELECT * FROM t",
        // A text key on the table's side: never the integer table.
        "WITH RECURSIVE t (id, d) AS (SELECT 1, 0 UNION ALL \
         SELECT n.id, t.d + 1 FROM t JOIN node n ON {tk} = t.id) SELECT * FROM t",
        // Working-table keys that are text: the general join's equality.
        "WITH RECURSIVE t (id, d) AS (SELECT CAST('1' AS CHAR(20)), 0 UNION ALL \
         SELECT CAST(n.id AS CHAR(20)), t.d + 1 FROM t JOIN node n ON {k} = t.id) SELECT * FROM t",
    ];
    for w in walks {
        let fast = w
            .replace("{k}", "n.parent")
            .replace("{dk}", "n.dp")
            .replace("{tk}", "n.tp");
        let general = w
            .replace("{k}", "n.parent + 0")
            .replace("{dk}", "n.dp + 0")
            .replace("{tk}", "CONCAT(n.tp, '')");
        let a = q(&mut s, &fast);
        assert!(a.len() > 50, "{fast}: {} rows", a.len());
        assert_eq!(a, q(&mut s, &general), "{fast}");
    }
    assert_eq!(db.engine().budget.used(), 0);
}
