//! An aggregate over a table scan folds each row into its group while the
//! scan visits it, and a LIMIT without ORDER BY (or ordered by the primary
//! key) stops the scan once it has its rows (issue 11, item 3): memory does
//! not grow with the table.
//! Measured as the growth of this process's peak RSS (reset through
//! `/proc/self/clear_refs`) while the queries run over 200,000 rows of
//! ~120 bytes with a 4 MiB page cache; collecting the rows first (what the
//! query engine did before) grew it by 35 MB here.
//!
//! Its own test binary: no other test allocates while it measures. The
//! same table then checks that aggregates folded on several threads
//! (`sql::exec::parallel`) answer exactly what one scan answers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use common::cfg;
use tributary::{Config, Database, Value};

const ROWS: i64 = 200_000;
/// Peak RSS growth allowed while the aggregates run.
const BOUND_MB: f64 = 16.0;

fn status_kb(field: &str) -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse::<f64>().ok())
        .unwrap_or_else(|| panic!("{field} missing in /proc/self/status"))
}

#[test]
fn aggregates_over_a_scan_do_not_collect_the_rows() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut config: Config = cfg();
    config.storage.cache_bytes = 4 << 20;
    let db = Database::open_with(dir.path(), config).expect("open");
    let mut s = db.session();
    s.execute_script(
        "CREATE DATABASE m; USE m;
         CREATE TABLE t (id BIGINT PRIMARY KEY, txt VARCHAR(100), n INT)",
    )
    .expect("ddl");
    let filler = "x".repeat(90);
    for lo in (0..ROWS).step_by(1000) {
        let values: Vec<String> = (lo..lo + 1000)
            .map(|i| format!("({i},'{i:09}{filler}',{})", i % 100))
            .collect();
        s.execute(&format!("INSERT INTO t VALUES {}", values.join(",")))
            .expect("insert");
    }
    // One untimed pass so the measured ones start from a warm state.
    s.execute("SELECT COUNT(*) FROM t").expect("warm-up");

    std::fs::write("/proc/self/clear_refs", "5").expect("reset peak RSS");
    let before_kb = status_kb("VmRSS:");
    let r = s
        .execute("SELECT COUNT(*), SUM(n), MAX(txt) FROM t WHERE n >= 10")
        .expect("aggregate");
    let with_filter: i64 = (0..ROWS).filter(|i| i % 100 >= 10).count() as i64;
    let sum: i64 = (0..ROWS).map(|i| i % 100).filter(|n| *n >= 10).sum();
    assert_eq!(r.rows.len(), 1);
    assert_eq!(r.rows[0][0], Value::Int(with_filter));
    assert_eq!(r.rows[0][1].to_string(), sum.to_string());
    assert_eq!(
        r.rows[0][2],
        Value::Text(format!("{:09}{filler}", ROWS - 1))
    );
    let r = s
        .execute("SELECT n % 4, COUNT(*), MIN(id) FROM t GROUP BY n % 4 ORDER BY 1")
        .expect("group by");
    assert_eq!(r.rows.len(), 4);
    for (g, row) in r.rows.iter().enumerate() {
        assert_eq!(row[0], Value::Int(g as i64));
        assert_eq!(row[1], Value::Int(ROWS / 4));
        assert_eq!(row[2], Value::Int(g as i64));
    }
    let grown_mb = (status_kb("VmHWM:") - before_kb) / 1024.0;
    eprintln!("peak RSS growth while aggregating {ROWS} rows: {grown_mb:.1} MB");
    assert!(
        grown_mb < BOUND_MB,
        "peak RSS grew by {grown_mb:.1} MB while aggregating {ROWS} rows (bound {BOUND_MB} MB)"
    );

    // A LIMIT without ORDER BY, or ordered by the primary key, stops the
    // scan once it has its rows (collecting every row first grew the peak
    // RSS by 120 MB here).
    std::fs::write("/proc/self/clear_refs", "5").expect("reset peak RSS");
    let before_kb = status_kb("VmRSS:");
    let r = s.execute("SELECT * FROM t LIMIT 5").expect("limit");
    let ids: Vec<Value> = r.rows.iter().map(|row| row[0].clone()).collect();
    assert_eq!(ids, (0..5).map(Value::Int).collect::<Vec<_>>());
    let r = s
        .execute("SELECT id, txt FROM t WHERE n = 3 LIMIT 2 OFFSET 1")
        .expect("limit offset");
    let ids: Vec<Value> = r.rows.iter().map(|row| row[0].clone()).collect();
    assert_eq!(ids, vec![Value::Int(103), Value::Int(203)]);
    let r = s
        .execute("SELECT id FROM t WHERE id >= 1000 AND n < 2 LIMIT 3")
        .expect("range limit");
    let ids: Vec<Value> = r.rows.iter().map(|row| row[0].clone()).collect();
    assert_eq!(
        ids,
        vec![Value::Int(1000), Value::Int(1001), Value::Int(1100)]
    );
    // ORDER BY the primary key is the scan's own order: it stops too.
    let r = s
        .execute("SELECT * FROM t ORDER BY id LIMIT 3 OFFSET 2")
        .expect("order by key");
    let ids: Vec<Value> = r.rows.iter().map(|row| row[0].clone()).collect();
    assert_eq!(ids, vec![Value::Int(2), Value::Int(3), Value::Int(4)]);
    let r = s
        .execute("SELECT id, txt FROM t WHERE id > 150000 AND n = 5 ORDER BY id LIMIT 2")
        .expect("range order by key");
    let ids: Vec<Value> = r.rows.iter().map(|row| row[0].clone()).collect();
    assert_eq!(ids, vec![Value::Int(150005), Value::Int(150105)]);
    let grown_mb = (status_kb("VmHWM:") - before_kb) / 1024.0;
    eprintln!("peak RSS growth for LIMIT over {ROWS} rows: {grown_mb:.1} MB");
    assert!(
        grown_mb < BOUND_MB,
        "peak RSS grew by {grown_mb:.1} MB for a LIMIT over {ROWS} rows (bound {BOUND_MB} MB)"
    );
    drop(s);
    parallel_aggregates_answer_what_one_scan_answers(&db);
}

/// Each query twice: as written (folded on several threads, the table being
/// large enough) and with `AND CONNECTION_ID() > 0` (a host function keeps
/// it on one thread): the rows must be equal, in the same order — group
/// order without ORDER BY is first-seen order — at the latest state, at an
/// older snapshot while rows change, and with the transaction's own writes.
fn parallel_aggregates_answer_what_one_scan_answers(db: &Database) {
    const QUERIES: &[&str] = &[
        "SELECT COUNT(*), SUM(n), AVG(n), MIN(txt), MAX(txt), COUNT(txt), MIN(id) FROM t WHERE {w}",
        "SELECT n % 7, COUNT(*), SUM(id), MIN(id), MAX(txt) FROM t WHERE {w} GROUP BY n % 7",
        "SELECT txt > '00012', COUNT(*), MAX(n) FROM t WHERE {w} AND id % 3 = 0 GROUP BY 1",
        "SELECT n, COUNT(*) FROM t WHERE {w} AND n BETWEEN 20 AND 25 GROUP BY n",
        "SELECT COUNT(*), SUM(n) FROM t WHERE {w} AND n > 1000",
        // Text in arithmetic: a non-numeric one ('new', 'own') warns (1292)
        // on whichever thread folds its row.
        "SELECT COUNT(*), MAX(n) FROM t WHERE {w} AND txt + 1 > 0",
        // DECIMAL sums (exact partial sums merged): column-like products,
        // quotients holding more digits than they show, mixed signs.
        "SELECT COUNT(*), SUM(n * 1.25), AVG(id * 0.01), SUM((n - 50) / 7), AVG(n / 3) FROM t WHERE {w}",
        "SELECT n % 3, SUM(n * 1.25 - id * 0.001), AVG(id * (1 - n * 0.01)) FROM t WHERE {w} GROUP BY n % 3",
        // Grouped, a quotient is rounded to its shown digits at each step
        // (MySQL's temporary table): with mixed signs, where the ranges
        // are cut changes the sum, so those run on one thread.
        "SELECT n % 3, SUM((n - 50) / 32), AVG((id - 100000) / 64) FROM t WHERE {w} GROUP BY n % 3",
    ];
    let both = |s: &mut tributary::Session| -> Vec<Vec<Vec<Value>>> {
        QUERIES
            .iter()
            .map(|q| {
                let par = s.execute(&q.replace("{w}", "n >= 0")).expect("parallel");
                let one = s
                    .execute(&q.replace("{w}", "n >= 0 AND CONNECTION_ID() > 0"))
                    .expect("one scan");
                assert_eq!(par.rows, one.rows, "{q}");
                assert_eq!(par.warnings, one.warnings, "{q}: warnings");
                par.rows
            })
            .collect()
    };
    let before = tributary::testing::scans_run();
    let mut a = db.session();
    a.execute("USE m").expect("use");
    let latest = both(&mut a);
    assert!(
        tributary::testing::scans_run() >= before + QUERIES.len() as u64,
        "the aggregates did not run on several threads"
    );
    // An older snapshot while another session deletes and changes rows.
    a.execute("START TRANSACTION WITH CONSISTENT SNAPSHOT")
        .expect("begin");
    assert_eq!(both(&mut a), latest);
    let mut b = db.session();
    b.execute_script(
        "USE m; DELETE FROM t WHERE id < 30000; UPDATE t SET n = n + 1 WHERE id % 5 = 0;
         INSERT INTO t VALUES (-1, 'new', 3), (300000, 'zzz', 8)",
    )
    .expect("changes");
    assert_eq!(both(&mut a), latest, "the snapshot's answers changed");
    // Own writes: the transaction's rows are counted.
    a.execute("INSERT INTO t VALUES (250000, 'own', 6)")
        .expect("own write");
    let own = both(&mut a);
    assert_ne!(own, latest);
    let before = tributary::testing::scans_run();
    let w = a
        .execute("SELECT COUNT(*) FROM t WHERE n >= 0 AND txt + 1 > 0")
        .expect("warning query");
    assert!(tributary::testing::scans_run() > before, "not parallel");
    assert_eq!(
        w.warnings.len(),
        tributary::testing::MAX_WARNINGS,
        "every row's text warns: a scan thread's warnings are lost"
    );
    a.execute("ROLLBACK").expect("rollback");
    let now = both(&mut a);
    assert_ne!(now, latest, "the other session's changes are seen");
}
