//! A derived table's ROW_NUMBER / RANK / DENSE_RANK rows that its reader's
//! WHERE rejects by value (`rn <= 3`) are not passed on by the window
//! (`plan::window::push_cut`), and a window whose rows a LIMIT above stops
//! computes only the partitions passed on (`exec::window::sort_last`).
//! Each cut query is checked against the same query written so that no
//! cut applies (the bound as `rn + 0 <= k`), over data with ties, NULLs
//! and many partitions; EXPLAIN ANALYZE shows the window passed on fewer
//! rows, and the warnings of a window argument show only the partitions
//! the LIMIT reads were computed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use common::{cfg, q, Lcg};
use tributary::{Database, Value};

fn setup(s: &mut tributary::Session) {
    q(s, "CREATE DATABASE w");
    q(s, "USE w");
    q(
        s,
        "CREATE TABLE t (id INT PRIMARY KEY, p INT, v INT, x VARCHAR(5))",
    );
    let mut rng = Lcg(7);
    let rows: Vec<String> = (0..3000)
        .map(|id| {
            // Some 400 partitions and a NULL one; ties and NULLs in v.
            let pn = rng.next() % 400;
            let p = match rng.next() % 50 {
                0 => "NULL".to_string(),
                _ => pn.to_string(),
            };
            // Not a number (a warning when added to one) past p 300.
            let x = if pn >= 300 && p != "NULL" { "bad" } else { "1" };
            let v = match rng.next() % 9 {
                0 => "NULL".to_string(),
                n => (n % 4).to_string(),
            };
            format!("({id}, {p}, {v}, '{x}')")
        })
        .collect();
    q(s, &format!("INSERT INTO t VALUES {}", rows.join(", ")));
}

/// The window's rows passed on, from EXPLAIN ANALYZE.
fn window_rows(s: &mut tributary::Session, sql: &str) -> f64 {
    let plan = q(s, &format!("EXPLAIN ANALYZE FORMAT=TREE {sql}"));
    let text: String = plan
        .iter()
        .flatten()
        .map(|v| match v {
            Value::Text(t) => t.clone(),
            _ => String::new(),
        })
        .collect();
    let line = text
        .lines()
        .find(|l| l.contains("Window aggregate"))
        .unwrap_or_else(|| panic!("no window in {text}"));
    let rows = line.split("rows=").nth(1).expect("rows=");
    rows.split(|c: char| !c.is_ascii_digit() && c != '.')
        .next()
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn cut_windows_answer_as_uncut_ones() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    setup(&mut s);
    let total = q(&mut s, "SELECT COUNT(*) FROM t")[0][0].clone();
    assert_eq!(total, Value::Int(3000));
    // (window call, bound with `rn`, bound without a cut, cut expected)
    let cases: [(&str, &str, &str, bool); 9] = [
        (
            "ROW_NUMBER() OVER (PARTITION BY p ORDER BY v DESC, id)",
            "rn <= 3",
            "rn + 0 <= 3",
            true,
        ),
        (
            "ROW_NUMBER() OVER (PARTITION BY p ORDER BY v, id)",
            "rn < 2",
            "rn + 0 < 2",
            true,
        ),
        (
            "ROW_NUMBER() OVER (PARTITION BY p ORDER BY v)",
            "2 >= rn",
            "2 >= rn + 0",
            true,
        ),
        (
            "RANK() OVER (PARTITION BY p ORDER BY v)",
            "rn <= 2",
            "rn + 0 <= 2",
            true,
        ),
        (
            "DENSE_RANK() OVER (PARTITION BY x ORDER BY v DESC)",
            "rn = 2",
            "rn + 0 = 2",
            true,
        ),
        (
            "ROW_NUMBER() OVER (ORDER BY v, id)",
            "5 > rn",
            "5 > rn + 0",
            true,
        ),
        // Not cut: another function, or a bound from below.
        (
            "NTILE(3) OVER (PARTITION BY p ORDER BY id)",
            "rn <= 1",
            "rn + 0 <= 1",
            false,
        ),
        (
            "ROW_NUMBER() OVER (PARTITION BY p ORDER BY id)",
            "rn >= 3",
            "rn + 0 >= 3",
            false,
        ),
        (
            "COUNT(*) OVER (PARTITION BY p ORDER BY id)",
            "rn <= 2",
            "rn + 0 <= 2",
            false,
        ),
    ];
    for (call, bound, plain, cut) in cases {
        let inner = format!("SELECT id, p, v, x, {call} AS rn FROM t");
        let a = format!("SELECT * FROM ({inner}) d WHERE {bound} AND id >= 0 ORDER BY p, rn, id");
        let b = format!("SELECT * FROM ({inner}) d WHERE {plain} AND id >= 0 ORDER BY p, rn, id");
        let got = q(&mut s, &a);
        let want = q(&mut s, &b);
        assert!(
            !want.is_empty() && want.len() < 3000,
            "{b}: {} rows",
            want.len()
        );
        assert_eq!(got, want, "{a}");
        let (ra, rb) = (window_rows(&mut s, &a), window_rows(&mut s, &b));
        assert_eq!(rb, 3000.0, "{b}");
        if cut {
            assert!(ra < rb, "{a}: the window passed on {ra} rows");
        } else {
            assert_eq!(ra, rb, "{a}");
        }
    }
    // Never cut: a derived LIMIT or DISTINCT, a window that is not the
    // last, a bound on the outer side of another block.
    let never = [
        "SELECT * FROM (SELECT id, p, ROW_NUMBER() OVER (PARTITION BY p ORDER BY id) AS rn \
         FROM t ORDER BY id LIMIT 500) d WHERE rn <= 2 ORDER BY id",
        "SELECT * FROM (SELECT DISTINCT p, ROW_NUMBER() OVER (PARTITION BY p ORDER BY id) AS rn \
         FROM t) d WHERE rn <= 2 ORDER BY p, rn",
        "SELECT * FROM (SELECT id, p, ROW_NUMBER() OVER (PARTITION BY p ORDER BY id) AS rn, \
         SUM(v) OVER (PARTITION BY v ORDER BY id) AS s FROM t) d WHERE rn <= 2 ORDER BY id",
    ];
    for sql in never {
        let plain = sql.replace("rn <= 2", "rn + 0 <= 2");
        assert_eq!(q(&mut s, sql), q(&mut s, &plain), "{sql}");
        assert_eq!(window_rows(&mut s, sql), 3000.0, "{sql}");
    }
}

#[test]
fn a_limit_above_stops_the_window() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    setup(&mut s);
    // `x + 0` warns once per row computed past p 300 (1292): with the
    // ORDER BY the window's own, LIMIT 5 reads the first partitions only,
    // and only their group (at most a batch of rows) is computed.
    let lazy = "SELECT p, id, SUM(x + 0) OVER (PARTITION BY p ORDER BY id \
                ROWS UNBOUNDED PRECEDING) AS r FROM t ORDER BY p, id LIMIT 5";
    let rows = q(&mut s, lazy);
    assert_eq!(rows.len(), 5);
    assert_eq!(q(&mut s, "SHOW WARNINGS").len(), 0, "{lazy}");
    // The same rows as the whole window's, sorted afresh (which computes
    // every partition: warned).
    let whole = "SELECT p, id, r FROM (SELECT p, id, SUM(x + 0) OVER (PARTITION BY p ORDER BY id \
                 ROWS UNBOUNDED PRECEDING) AS r FROM t) d ORDER BY p, id LIMIT 5";
    assert_eq!(rows, q(&mut s, whole));
    assert!(!q(&mut s, "SHOW WARNINGS").is_empty(), "{whole}");
}
