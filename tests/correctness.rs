//! Regression tests for issue 15 that need more than a golden transcript:
//! result column types (what drivers decode), a filtered vector search over
//! a selective filter on an index of many rows (sync and ASYNC), the exact
//! full-text path reading the statement's own snapshot, and answers that
//! must not depend on whether an index exists.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::time::Duration;

use common::{cfg, wait_until};
use tributary::{ColumnKind, Database, Session, Value};

fn open() -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = Database::open_with(dir.path(), cfg()).expect("open");
    (dir, db)
}

fn ids(s: &mut Session, sql: &str) -> Vec<i64> {
    s.execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .rows
        .iter()
        .map(|r| match r[0] {
            Value::Int(i) => i,
            ref other => panic!("{sql}: id {other:?}"),
        })
        .collect()
}

#[test]
fn result_column_kinds_match_mysql_types() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE k; USE k;
         CREATE TABLE t (id BIGINT PRIMARY KEY AUTO_INCREMENT, d DATE, dt DATETIME, p DECIMAL(10,2), v VECF32(2), n INT);
         INSERT INTO t (d, dt, p, v, n) VALUES ('2024-01-05', '2024-01-05 10:00:00', 3.14159, '[1,2]', 3)",
    )
    .expect("setup");
    let r = s
        .execute("SELECT LAST_INSERT_ID(), d, dt, p, v, n, SUM(n), AVG(n), p * 2, CAST(n AS DECIMAL(5,1)), CAST(dt AS DATE) FROM t GROUP BY d, dt, p, v, n")
        .expect("select");
    let kinds: Vec<ColumnKind> = r.columns.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        vec![
            ColumnKind::Int,
            ColumnKind::Date,
            ColumnKind::DateTime(Some(0)),
            ColumnKind::Decimal {
                precision: 10,
                scale: 2
            },
            ColumnKind::Vector,
            ColumnKind::Int,
            ColumnKind::Decimal {
                precision: 65,
                scale: 0
            },
            // MySQL: AVG of an integer is DECIMAL with 4 fractional digits
            // (precision 14 for INT, 23 for BIGINT: the kind does not tell
            // them apart, so the wider).
            ColumnKind::Decimal {
                precision: 23,
                scale: 4
            },
            // DECIMAL(10,2) * 2: precision p1 + p2 (MariaDB: decimal(11,2)).
            ColumnKind::Decimal {
                precision: 11,
                scale: 2
            },
            ColumnKind::Decimal {
                precision: 5,
                scale: 1
            },
            ColumnKind::Date,
        ]
    );
    let text: Vec<Option<String>> = r.rows[0]
        .iter()
        .zip(&r.columns)
        .map(|(v, c)| tributary::format_value(v, c.kind))
        .collect();
    assert_eq!(text[0].as_deref(), Some("1"), "LAST_INSERT_ID");
    assert_eq!(text[1].as_deref(), Some("2024-01-05"), "DATE");
    assert_eq!(
        text[3].as_deref(),
        Some("3.14"),
        "DECIMAL scale enforced on write"
    );
    assert_eq!(text[8].as_deref(), Some("6.28"));
    assert_eq!(text[9].as_deref(), Some("3.0"));
    assert_eq!(text[10].as_deref(), Some("2024-01-05"));
}

/// FLOOR / CEIL of a DECIMAL are BIGINT while the result has at most 18
/// digits, else DECIMAL (MySQL 8's `Item_func_int_val::resolve_type`);
/// the digits of an integer operand are its type's (INT 10, BIGINT 19),
/// not always BIGINT's. Each kind as MariaDB 10.11 answers.
#[test]
fn floor_ceil_of_decimals_follow_the_argument_digits() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE fc; USE fc;
         CREATE TABLE k (id INT PRIMARY KEY, n INT, b BIGINT, sm SMALLINT, dd DECIMAL(10,2));
         INSERT INTO k VALUES (1, 3, 4, 5, 1.25)",
    )
    .expect("setup");
    let r = s
        .execute(
            "SELECT CEIL(CAST(1 AS DECIMAL(20,2))), CEIL(CAST(1 AS DECIMAL(19,2))), \
             CEILING(FLOOR(0.3) * 3.0), CEIL(n * 2.5), CEIL(b * 2.5), FLOOR(sm * dd), \
             CEIL(CAST(1e0 AS SIGNED) / 12345678.99), FLOOR(-2147483648 * 12345678.99), \
             FLOOR((n + 1) * 1.5) FROM k",
        )
        .expect("select");
    let kinds: Vec<&str> = r
        .columns
        .iter()
        .map(|c| match c.kind {
            ColumnKind::Int => "integer",
            ColumnKind::Decimal { scale: 0, .. } => "decimal",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "decimal", "integer", "integer", "integer", "decimal", "integer", "integer", "decimal",
            "integer"
        ]
    );
    let text: Vec<Option<String>> = r.rows[0]
        .iter()
        .zip(&r.columns)
        .map(|(v, c)| tributary::format_value(v, c.kind))
        .collect();
    assert_eq!(text[7].as_deref(), Some("-26512143754482156"));
    assert_eq!(text[4].as_deref(), Some("10"));
    // UNIX_TIMESTAMP(x) is BIGINT, DECIMAL for a literal with a fraction
    // (it was sent as a string).
    let r = s
        .execute(
            "SELECT UNIX_TIMESTAMP('2023-07-15 18:30:15.250000'), \
             UNIX_TIMESTAMP('2023-07-15 18:30:15'), UNIX_TIMESTAMP('2020-01-31') * 2",
        )
        .expect("select");
    let kinds: Vec<ColumnKind> = r.columns.iter().map(|c| c.kind).collect();
    assert_eq!(
        kinds,
        [
            ColumnKind::Decimal {
                precision: 17,
                scale: 6
            },
            ColumnKind::Int,
            ColumnKind::Int
        ]
    );
}

/// Quotients hold whole 9-digit words counted as MySQL 8's `do_div_mod`
/// counts them (padding of each operand's scale to a word included), and
/// a GROUP BY without DISTINCT aggregates keeps SUM/AVG/MIN/MAX of
/// decimals at their declared scale per step (MySQL's temporary-table
/// grouping), with one: exactly. Values as MariaDB 10.11 answers.
#[test]
fn decimal_quotients_and_grouped_sums_round_as_mysql() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE qd; USE qd;
         CREATE TABLE t (id INT PRIMARY KEY, g INT, d DECIMAL(10,2));
         INSERT INTO t VALUES (1, 1, 1.50), (2, 1, 2.25), (3, 2, 0.10), (4, 2, 3.00)",
    )
    .expect("setup");
    let one = |s: &mut Session, sql: &str| -> Vec<Vec<Option<String>>> {
        let r = s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
        r.rows
            .iter()
            .map(|row| {
                row.iter()
                    .zip(&r.columns)
                    .map(|(v, c)| tributary::format_value(v, c.kind))
                    .collect()
            })
            .collect()
    };
    let strs =
        |v: &[&str]| -> Vec<Option<String>> { v.iter().map(|x| Some(x.to_string())).collect() };
    assert_eq!(
        one(
            &mut s,
            "SELECT (10 + 2147483647) * (0.001 / 0.3), (3.0 / -2.25) * 12345678.99"
        ),
        vec![strs(&["7158278.8566667", "-16460905.3200000"])]
    );
    // No GROUP BY: exact (held digits summed).
    assert_eq!(
        one(&mut s, "SELECT AVG(2 / d), SUM(2 / d) FROM t"),
        vec![strs(&["5.72222222", "22.8889"])]
    );
    // GROUP BY: each step at scale 4.
    assert_eq!(
        one(
            &mut s,
            "SELECT g, AVG(2 / d), SUM(2 / d), MAX(2 / d) * 3 FROM t GROUP BY g ORDER BY g"
        ),
        vec![
            strs(&["1", "1.11110000", "2.2222", "3.9999"]),
            strs(&["2", "10.33335000", "20.6667", "60.0000"])
        ]
    );
    // A DISTINCT aggregate: grouped by sorting, exact again.
    assert_eq!(
        one(
            &mut s,
            "SELECT g, AVG(2 / d), COUNT(DISTINCT d) FROM t GROUP BY g ORDER BY g"
        ),
        vec![
            strs(&["1", "1.11111111", "2"]),
            strs(&["2", "10.33333333", "2"])
        ]
    );
}

/// 2,000 rows, a filter that keeps 1% of them, an HNSW index (synchronous
/// and ASYNC): the search returns LIMIT rows, the same rows exact
/// evaluation returns (before the fix it returned only the filtered rows
/// among the index's first candidates).
#[test]
fn filtered_vector_search_returns_limit_rows() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE f; USE f; CREATE TABLE t (id BIGINT PRIMARY KEY, v VECF32(2), c INT)",
    )
    .expect("setup");
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut rnd = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 10_000) as f64 / 100.0
    };
    let mut values = Vec::new();
    for id in 1..=2000 {
        values.push(format!("({id}, '[{},{}]', {})", rnd(), rnd(), id % 100));
    }
    s.execute(&format!("INSERT INTO t VALUES {}", values.join(",")))
        .expect("insert");
    let q = |c: i64, k: usize| {
        format!("SELECT id FROM t WHERE c = {c} ORDER BY l2_distance(v, '[50,50]'), id LIMIT {k}")
    };
    // Exact answers, with no index at all.
    let exact: Vec<Vec<i64>> = (0..5).map(|c| ids(&mut s, &q(c, 15))).collect();
    for e in &exact {
        assert_eq!(e.len(), 15, "15 of the 20 rows with c = x");
    }
    s.execute("CREATE INDEX vi USING HNSW ON t(v) OP_TYPE 'vector_l2_ops'")
        .expect("sync index");
    // A single sort key (the distance) so the index path is chosen.
    let q1 = |c: i64, k: usize| {
        format!("SELECT id FROM t WHERE c = {c} ORDER BY l2_distance(v, '[50,50]') LIMIT {k}")
    };
    let explain = s
        .execute(&format!("EXPLAIN {}", q1(3, 15)))
        .expect("explain");
    assert!(
        format!("{:?}", explain.rows).contains("Vector Index Search"),
        "the index path is used: {:?}",
        explain.rows
    );
    for (c, e) in exact.iter().enumerate() {
        let mut got = ids(&mut s, &q1(c as i64, 15));
        assert_eq!(got.len(), 15, "c = {c}: LIMIT rows from the index path");
        got.sort();
        let mut want = e.clone();
        want.sort();
        assert_eq!(got, want, "c = {c}: same rows as exact evaluation");
    }
    s.execute("DROP INDEX vi ON t").expect("drop");
    s.execute("CREATE INDEX va USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC")
        .expect("async index");
    wait_until("async build", Duration::from_secs(60), || {
        let j = common::job(&db, "va");
        j.status.stage != tributary::testing::Stage::Init && j.watermark > 0
    });
    for (c, e) in exact.iter().enumerate() {
        let mut got = ids(&mut s, &q1(c as i64, 15));
        got.sort();
        let mut want = e.clone();
        want.sort();
        assert_eq!(got, want, "ASYNC, c = {c}");
    }
}

/// NULL vectors have no distance: they come after every real neighbour,
/// with or without an index, so LIMIT never hides a nearer row behind them.
#[test]
fn null_vectors_sort_after_neighbours_with_and_without_index() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE n; USE n; CREATE TABLE t (id BIGINT PRIMARY KEY, v VECF32(2));
         INSERT INTO t VALUES (1, NULL), (2, '[1,1]'), (3, '[5,5]'), (4, NULL), (5, '[2,2]')",
    )
    .expect("setup");
    let q = "SELECT id FROM t ORDER BY l2_distance(v, '[0,0]') LIMIT 3";
    let q_all = "SELECT id FROM t ORDER BY l2_distance(v, '[0,0]') LIMIT 10";
    let before = (ids(&mut s, q), ids(&mut s, q_all));
    assert_eq!(before.0, vec![2, 5, 3]);
    assert_eq!(&before.1[..3], &[2, 5, 3]);
    s.execute("CREATE INDEX vi USING HNSW ON t(v) OP_TYPE 'vector_l2_ops'")
        .expect("index");
    assert_eq!(ids(&mut s, q), before.0);
    let after = ids(&mut s, q_all);
    assert_eq!(&after[..3], &[2, 5, 3]);
    let mut tail = after[3..].to_vec();
    tail.sort();
    assert_eq!(tail, vec![1, 4]);
}

/// Exact MATCH scoring (no index path: MATCH only in the select list) reads
/// the statement's own snapshot, uncommitted writes of its transaction
/// included — it used to open a transaction of its own.
#[test]
fn exact_match_scores_see_the_transactions_own_writes() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE m; USE m; CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT);
         CREATE FULLTEXT INDEX ft ON t(body);
         INSERT INTO t VALUES (1, 'apple pie')",
    )
    .expect("setup");
    s.execute("BEGIN").expect("begin");
    s.execute("INSERT INTO t VALUES (2, 'apple apple tart')")
        .expect("insert");
    let r = s
        .execute("SELECT id, MATCH(body) AGAINST('apple') > 0 FROM t ORDER BY id")
        .expect("select");
    assert_eq!(r.rows.len(), 2);
    for row in &r.rows {
        assert_eq!(
            tributary::testing::truth(&row[1]),
            Some(true),
            "row {:?} matches 'apple'",
            row[0]
        );
    }
    s.execute("ROLLBACK").expect("rollback");
    assert_eq!(ids(&mut s, "SELECT id FROM t"), vec![1]);
}

/// A filtered scan is evaluated inside the storage scan, 1,024 rows at a
/// time (issue 9's scan path): across chunk boundaries, with the
/// transaction's own uncommitted inserts, updates and deletes interleaved
/// with committed rows, it returns exactly the rows a model says, and a
/// filter that fails on a row (a bad vector literal) fails the statement.
#[test]
fn filtered_scan_in_chunks_sees_own_writes() {
    let (_d, db) = open();
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE k; USE k;
         CREATE TABLE t (id INT PRIMARY KEY, tag VARCHAR(20), n INT)",
    )
    .unwrap();
    // Model: id -> (tag, n). Committed: even ids 0..5000.
    let mut model = std::collections::BTreeMap::new();
    let tag = |i: i64| if i % 3 == 0 { "special" } else { "plain" };
    for chunk in (0..5000i64).step_by(2).collect::<Vec<_>>().chunks(500) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|&i| {
                model.insert(i, (tag(i).to_string(), i % 7));
                format!("({i}, '{}', {})", tag(i), i % 7)
            })
            .collect();
        s.execute(&format!("INSERT INTO t VALUES {}", vals.join(",")))
            .unwrap();
    }
    s.execute("BEGIN").unwrap();
    // Own writes: odd ids inserted, every 5th id updated, every 11th deleted.
    let odd: Vec<String> = (1..5000i64)
        .step_by(2)
        .map(|i| {
            model.insert(i, (tag(i).to_string(), i % 7));
            format!("({i}, '{}', {})", tag(i), i % 7)
        })
        .collect();
    s.execute(&format!("INSERT INTO t VALUES {}", odd.join(",")))
        .unwrap();
    s.execute("UPDATE t SET tag = 'SPECIAL!', n = n + 100 WHERE id % 5 = 0")
        .unwrap();
    for (id, v) in model.iter_mut() {
        if id % 5 == 0 {
            *v = ("SPECIAL!".to_string(), v.1 + 100);
        }
    }
    s.execute("DELETE FROM t WHERE id % 11 = 0").unwrap();
    model.retain(|id, _| id % 11 != 0);
    let want: Vec<i64> = model
        .iter()
        .filter(|(_, (t, n))| t.contains("special") && *n > 3)
        .map(|(id, _)| *id)
        .collect();
    assert!(want.len() > 400, "{}", want.len());
    let sql = "SELECT id FROM t WHERE tag LIKE '%special%' AND n > 3 ORDER BY id";
    assert_eq!(ids(&mut s, sql), want);
    // LIKE compares as `=` does (utf8mb4_bin): case matters.
    let upper: Vec<i64> = model
        .iter()
        .filter(|(_, (t, n))| t.contains("SPECIAL") && *n > 3)
        .map(|(id, _)| *id)
        .collect();
    assert!(!upper.is_empty());
    let sql = "SELECT id FROM t WHERE tag LIKE '%SPECIAL%' AND n > 3 ORDER BY id";
    assert_eq!(ids(&mut s, sql), upper);
    // A key range over chunk boundaries.
    let want_range: Vec<i64> = want
        .iter()
        .copied()
        .filter(|i| (1000..4000).contains(i))
        .collect();
    assert_eq!(
        ids(
            &mut s,
            "SELECT id FROM t WHERE id >= 1000 AND id < 4000 AND tag LIKE '%special%' AND n > 3 ORDER BY id"
        ),
        want_range
    );
    let err = s
        .execute("SELECT id FROM t WHERE n > 3 AND l2_distance(tag, '[1,2]') > 0")
        .unwrap_err();
    assert!(err.to_string().contains("l2_distance"), "{err}");
    s.execute("ROLLBACK").unwrap();
    let committed = ids(
        &mut s,
        "SELECT id FROM t WHERE tag LIKE '%special%' ORDER BY id",
    );
    let want_committed: Vec<i64> = (0..5000).step_by(2).filter(|i| i % 3 == 0).collect();
    assert_eq!(committed, want_committed);
}
