//! A windowed block whose ORDER BY is a prefix of its last window's keys
//! (PARTITION BY ascending, then the window's ORDER BY) is not sorted
//! again: the window operator left its rows in that order
//! (`plan::window::sorted_as`), and only the rows LIMIT keeps are
//! projected. Each query here is checked against the same ORDER BY
//! applied by an outer block (which always sorts), over data with ties,
//! NULLs, text under a case-insensitive collation, DECIMALs and both
//! directions — matching keys, near misses (a direction, an order, a
//! second window) and LIMIT / OFFSET alike.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use common::{cfg, q, Lcg};
use tributary::Database;

#[test]
fn presorted_windows_answer_as_a_sort_does() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE w");
    q(&mut s, "USE w");
    q(
        &mut s,
        "CREATE TABLE t (id INT PRIMARY KEY, p INT, s VARCHAR(10), d DECIMAL(8,2))",
    );
    let mut rng = Lcg(41);
    let texts = ["a", "A", "b", "B", "ab", "c"];
    let rows: Vec<String> = (0..3000)
        .map(|id| {
            let p = match rng.next() % 9 {
                0 => "NULL".to_string(),
                n => (n % 5).to_string(),
            };
            let s = match rng.next() % 8 {
                0 => "NULL".to_string(),
                n => format!("'{}'", texts[n as usize % texts.len()]),
            };
            let d = match rng.next() % 7 {
                0 => "NULL".to_string(),
                n => format!("{}.{:02}", n as i64 - 3, rng.next() % 100),
            };
            format!("({id}, {p}, {s}, {d})")
        })
        .collect();
    q(&mut s, &format!("INSERT INTO t VALUES {}", rows.join(", ")));
    // (window calls, ORDER BY, LIMIT clause)
    let cases: [(&[&str], &str, &str); 9] = [
        // The ORDER BY is the window's keys: no second sort.
        (
            &["SUM(d) OVER (PARTITION BY p ORDER BY s, id ROWS UNBOUNDED PRECEDING)"],
            "p, s, id",
            "LIMIT 50",
        ),
        (
            &["ROW_NUMBER() OVER (PARTITION BY p, s ORDER BY d DESC, id)"],
            "p, s, d DESC, id",
            "LIMIT 20 OFFSET 37",
        ),
        (
            &["RANK() OVER (ORDER BY s DESC, d, id DESC)"],
            "s DESC, d, id DESC",
            "",
        ),
        (
            &["COUNT(*) OVER (PARTITION BY id ORDER BY p)"],
            "id",
            "LIMIT 10 OFFSET 2990",
        ),
        // Near misses: sorted again.
        (
            &["SUM(d) OVER (PARTITION BY p ORDER BY s, id ROWS UNBOUNDED PRECEDING)"],
            "p DESC, s, id",
            "LIMIT 50",
        ),
        (
            &["ROW_NUMBER() OVER (PARTITION BY p ORDER BY d, id)"],
            "p, d DESC, id",
            "LIMIT 40",
        ),
        (&["ROW_NUMBER() OVER (ORDER BY s, id)"], "id, s", "LIMIT 30"),
        (
            &[
                "ROW_NUMBER() OVER (ORDER BY p, id)",
                "DENSE_RANK() OVER (ORDER BY d DESC, id)",
            ],
            "p, id",
            "LIMIT 60",
        ),
        (
            &[
                "DENSE_RANK() OVER (ORDER BY d DESC, id)",
                "ROW_NUMBER() OVER (ORDER BY p, id)",
            ],
            "p, id",
            "LIMIT 60 OFFSET 5",
        ),
    ];
    for (calls, order, limit) in cases {
        let calls: Vec<String> = calls
            .iter()
            .enumerate()
            .map(|(i, c)| format!("{c} AS w{i}"))
            .collect();
        let names: Vec<String> = (0..calls.len()).map(|i| format!("w{i}")).collect();
        let direct = format!(
            "SELECT id, p, s, d, {} FROM t ORDER BY {order} {limit}",
            calls.join(", ")
        );
        let sorted = format!(
            "SELECT id, p, s, d, {} FROM (SELECT id, p, s, d, {} FROM t) x ORDER BY {order} {limit}",
            names.join(", "),
            calls.join(", ")
        );
        let got = q(&mut s, &direct);
        let want = q(&mut s, &sorted);
        assert!(!want.is_empty(), "{sorted}");
        let at = got.iter().zip(&want).position(|(g, w)| g != w);
        assert!(
            got.len() == want.len() && at.is_none(),
            "{direct}: {} rows vs {}, first difference at {at:?}",
            got.len(),
            want.len()
        );
    }
}
