//! The window operator is bounded like every operator (issue 39 item 2,
//! issue 41 items 2 and 4): past its sort budget it spills (decision 027),
//! the partition it holds while computing is charged to the statement's
//! memory budget — past it the statement fails with 1114 and gives back
//! everything — and KILL QUERY stops it while it sorts / computes.
//! Waits are polls with deadlines, never sleeps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::thread;
use std::time::{Duration, Instant};

use tributary::{SqlError, Value};

use common::{open_budgeted, q, wait_until};

const MIB: u64 = 1 << 20;
/// Rows of the series: seconds of window work in a debug build.
const N: u64 = 1_000_000;
/// Bytes one one-integer row is charged (`budget::row_size`).
const ROW: u64 = 72;
/// A charge may lag by one unflushed step per reservation.
const SLACK: u64 = 2 * MIB;
const STOP: Duration = Duration::from_secs(2);
const WAIT: Duration = Duration::from_secs(60);

/// Rows of the series the budget test windows over.
const PART_N: u64 = 300_000;

fn status(s: &mut tributary::Session, name: &str) -> u64 {
    let r = q(s, &format!("SHOW STATUS LIKE '{name}'"));
    match r.first().map(|r| &r[1]) {
        Some(Value::Text(v)) => v.parse().unwrap(),
        other => panic!("{name}: {other:?}"),
    }
}

/// A window whose units pass its sort budget spills (decision 027) and
/// answers; one partition past what the statement may hold fails with
/// 1114 (a partition is held whole while its values are computed), nothing
/// is left charged, and the session goes on.
#[test]
fn a_window_spills_and_one_partition_past_the_budget_fails_with_1114() {
    let (_dir, db) = open_budgeted(128 * MIB);
    let mut s = db.session();
    // Without the window the same rows fit.
    let r = q(
        &mut s,
        &format!(
            "SELECT COUNT(*) FROM (SELECT result, result % 10 AS p FROM generate_series(1, {PART_N}) g) d"
        ),
    );
    assert_eq!(r, vec![vec![Value::Int(PART_N as i64)]]);
    assert_eq!(db.engine().budget.used(), 0);
    // Ten partitions, a text key evaluated per row: spilled (past 16 ×
    // the smallest sort buffer), answered.
    q(&mut s, "SET sort_buffer_size = 32768");
    let files = status(&mut s, "Created_tmp_files");
    let r = q(
        &mut s,
        &format!(
            "SELECT COUNT(*), SUM(w) FROM (SELECT result, SUM(result) OVER (PARTITION BY \
             result % 10 ORDER BY result DESC, CONCAT('k', result)) AS w \
             FROM generate_series(1, {PART_N}) g) d"
        ),
    );
    assert!(status(&mut s, "Created_tmp_files") > files, "did not spill");
    // Each residue class's running sums from the top, summed.
    let n = PART_N as i64;
    let mut total = 0i64;
    for p in 0..10i64 {
        let mut run = 0;
        for v in (1..=n).rev().filter(|v| v % 10 == p) {
            run += v;
            total += run;
        }
    }
    assert_eq!(r[0][0], Value::Int(n));
    assert_eq!(r[0][1].to_string(), total.to_string());
    assert_eq!(db.engine().budget.used(), 0);
    // One partition of every row: held whole, past the statement's limit.
    let sql = format!(
        "SELECT COUNT(*) FROM (SELECT result, SUM(result) OVER (ORDER BY result DESC, \
         CONCAT('k', result)) AS w FROM generate_series(1, {PART_N}) g) d"
    );
    let e = s
        .execute(&sql)
        .map(|r| r.rows)
        .expect_err("past the budget");
    assert_eq!(e.code, 1114, "{e:?}");
    assert_eq!(
        db.engine().budget.used(),
        0,
        "the window left bytes charged"
    );
    // A small window over the same shape answers (and is right).
    let r = q(
        &mut s,
        "SELECT MAX(w), SUM(w) FROM (SELECT SUM(result) OVER (PARTITION BY result % 10 \
         ORDER BY result DESC) AS w FROM generate_series(1, 1000) g) d",
    );
    // Partition p (1..=10, p = 10 for residue 0) holds p, p+10, …, p+990;
    // its running sums from the top; the largest is the partition's total.
    let mut total = 0i64;
    let mut max = 0i64;
    for p in 1..=10i64 {
        let mut run = 0;
        for k in (0..100).rev() {
            run += p + 10 * k;
            total += run;
        }
        max = max.max(run);
    }
    assert_eq!(r[0][0].to_string(), max.to_string());
    assert_eq!(r[0][1].to_string(), total.to_string());
}

/// KILL QUERY stops a window operator within [`STOP`] once the statement
/// is inside it (its keys charged), and nothing stays charged.
#[test]
fn kill_query_stops_a_window() {
    let (_dir, db) = open_budgeted(2048 * MIB);
    let mut admin = db.session();
    let mut victim = db.session();
    let id = victim.connection_id();
    let sql = format!(
        "SELECT COUNT(*) FROM (SELECT ROW_NUMBER() OVER (ORDER BY result DESC) AS a, \
         SUM(result) OVER (PARTITION BY result % 3 ORDER BY result DESC) AS b \
         FROM generate_series(1, {N}) g) d"
    );
    let h = {
        let sql = sql.clone();
        thread::spawn(move || {
            let r: Result<Vec<Vec<Value>>, SqlError> = victim.execute(&sql).map(|r| r.rows);
            (r, victim)
        })
    };
    // The series and its copy are charged before the window's keys.
    let charged = 3 * N * ROW - SLACK;
    wait_until("the window charged its keys", WAIT, || {
        db.engine().budget.used() >= charged || h.is_finished()
    });
    let killed_at = Instant::now();
    q(&mut admin, &format!("KILL QUERY {id}"));
    let (r, mut s) = h.join().unwrap();
    let took = killed_at.elapsed();
    eprintln!("KILL QUERY stopped the window in {took:?}");
    let e = r.expect_err("killed");
    assert_eq!(e.code, 1317, "{e:?}");
    assert!(took < STOP, "{took:?} to stop");
    assert_eq!(
        db.engine().budget.used(),
        0,
        "the window left bytes charged"
    );
    assert_eq!(q(&mut s, "SELECT 1"), vec![vec![Value::Int(1)]]);
}
