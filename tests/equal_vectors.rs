//! HNSW indexes over many equal vectors (issue 38, item 8; decision 020):
//! 20,000 copies of one 128-d vector, and a table whose rows are half
//! duplicates, through a synchronous index (maintained by the writing
//! transaction) and an ASYNC one (ISCP): CHECK INDEX OK, every row found
//! by a search for its vector, through deletes and updates of duplicates,
//! a restart and DROP. Before decision 020, CHECK INDEX reported 19,190 of
//! 20,000 rows unreachable and CREATE INDEX took 30–70 s.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use tributary::{Database, Session, Value};

use common::{cfg, job, wait_until};

const DIMS: usize = 128;
/// Generous for a debug build on a loaded 2-core CI machine (the build of
/// 20k equal vectors takes well under a second in a release build).
const BOUND: Duration = Duration::from_secs(60);

fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    s.execute(sql)
        .unwrap_or_else(|e| panic!("{}: {e}", &sql[..sql.len().min(120)]))
        .rows
}

fn ids(rows: &[Vec<Value>]) -> BTreeSet<i64> {
    rows.iter()
        .map(|r| match r[0] {
            Value::Int(i) => i,
            ref o => panic!("not an int: {o}"),
        })
        .collect()
}

fn vlit(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("[{}]", parts.join(","))
}

/// Distinct vectors HNSW keeps findable (8 intrinsic dimensions embedded
/// in 128: uniform 128-d data misses a few rows at the default beam, with
/// or without duplicates, which is not what this file tests).
fn distinct(n: usize, seed: u64) -> Vec<Vec<f32>> {
    let mut x = seed;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % 20_000) as f32 / 10_000.0 - 1.0
    };
    let basis: Vec<Vec<f32>> = (0..8)
        .map(|_| (0..DIMS).map(|_| next()).collect())
        .collect();
    (0..n)
        .map(|_| {
            let z: Vec<f32> = (0..8).map(|_| next()).collect();
            (0..DIMS)
                .map(|j| (0..8).map(|i| z[i] * basis[i][j]).sum())
                .collect()
        })
        .collect()
}

/// `CREATE TABLE t` with rows `(id, vectors[id])`, 500 rows a statement.
fn load(s: &mut Session, vectors: &[Vec<f32>]) {
    q(s, "CREATE DATABASE d");
    q(s, "USE d");
    q(
        s,
        &format!("CREATE TABLE t (id BIGINT PRIMARY KEY, v VECF32({DIMS}))"),
    );
    let lits: Vec<String> = vectors.iter().map(|v| vlit(v)).collect();
    for (c, chunk) in lits.chunks(500).enumerate() {
        let values: Vec<String> = chunk
            .iter()
            .enumerate()
            .map(|(i, l)| format!("({}, '{l}')", c * 500 + i))
            .collect();
        q(s, &format!("INSERT INTO t VALUES {}", values.join(",")));
    }
}

/// CHECK INDEX's verdict and its row (rows, indexed, …).
fn check(s: &mut Session, ix: &str) -> (bool, Vec<Value>) {
    let r = q(s, &format!("CHECK INDEX {ix} ON t"));
    let row = r[0].clone();
    (row.last() == Some(&Value::Text("OK".into())), row)
}

fn assert_check_ok(s: &mut Session, ix: &str, what: &str) {
    let (ok, row) = check(s, ix);
    assert!(ok, "{what}: CHECK INDEX {ix}: {row:?}");
}

/// The ids of the `limit` rows nearest to `v`, answered by the index
/// alone (`fast_search = 1`: no exact evaluation behind it).
fn nearest(s: &mut Session, v: &[f32], limit: usize) -> BTreeSet<i64> {
    q(s, "SET fast_search = 1");
    let got = ids(&q(
        s,
        &format!(
            "SELECT id FROM t ORDER BY l2_distance(v, '{}') LIMIT {limit}",
            vlit(v)
        ),
    ));
    q(s, "SET fast_search = 0");
    got
}

/// Rows are found by a search for their vector asking for all rows that
/// hold that vector: every row of every vector held by 100 rows or more,
/// and of every 16th other vector (CHECK INDEX has searched for every row
/// already; this is the same through SQL, kept CI-sized).
fn assert_all_found(s: &mut Session, rows: &[(i64, Vec<f32>)], what: &str) {
    let mut groups: std::collections::HashMap<Vec<u32>, (Vec<f32>, BTreeSet<i64>)> =
        Default::default();
    for (id, v) in rows {
        let key = v.iter().map(|x| x.to_bits()).collect();
        groups
            .entry(key)
            .or_insert((v.clone(), BTreeSet::new()))
            .1
            .insert(*id);
    }
    let mut groups: Vec<(Vec<f32>, BTreeSet<i64>)> = groups.into_values().collect();
    groups.sort_by_key(|(_, ids)| ids.first().copied());
    let (mut lost, mut searched) = (0, 0);
    for (i, (v, want)) in groups.iter().enumerate() {
        if want.len() < 100 && i % 16 != 0 {
            continue;
        }
        let got = nearest(s, v, want.len());
        lost += want.difference(&got).count();
        searched += want.len();
    }
    assert_eq!(lost, 0, "{what}: rows not found by their own vector");
    assert!(searched > rows.len() / 20, "{what}: too few rows searched");
}

fn create_index(s: &mut Session, is_async: bool) {
    let t = Instant::now();
    q(
        s,
        &format!(
            "CREATE INDEX vi USING HNSW ON t(v) OP_TYPE 'vector_l2_ops'{}",
            if is_async { " ASYNC" } else { "" }
        ),
    );
    assert!(t.elapsed() < BOUND, "CREATE INDEX took {:?}", t.elapsed());
}

/// Wait until an ASYNC index has caught up (CHECK INDEX answers OK).
fn wait_ok(s: &mut Session, what: &str) {
    wait_until(what, BOUND, || {
        s.execute("CHECK INDEX vi ON t")
            .is_ok_and(|r| r.rows[0].last() == Some(&Value::Text("OK".into())))
    });
}

/// 20,000 copies of one vector and 100 distinct rows, then deletes,
/// updates, a restart and DROP.
fn twenty_thousand_equal(is_async: bool, autocommit: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let same = distinct(1, 11).remove(0);
    let others = distinct(100, 12);
    let mut vectors = vec![same.clone(); 20_000];
    vectors.extend(others.iter().cloned());
    let mut rows: Vec<(i64, Vec<f32>)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (i as i64, v.clone()))
        .collect();
    {
        let db = Database::open_with(dir.path(), cfg()).expect("open");
        let mut s = db.session();
        load(&mut s, &vectors);
        if !autocommit {
            q(&mut s, "SET autocommit = 0");
        }
        let t = Instant::now();
        create_index(&mut s, is_async);
        if !autocommit && !is_async {
            // The CREATE committed and built this CN's copy itself: the
            // first search has nothing left to build.
            let j = job(&db, "vi");
            let cached = db.engine().iscp.cached(j.key.job_id);
            assert!(
                cached.is_some_and(|h| h.read().index.len() == vectors.len()),
                "the index was not built by CREATE INDEX"
            );
        }
        if is_async {
            wait_ok(&mut s, "the ASYNC build");
        }
        // The first search answers as fast as the build allows.
        let first = nearest(&mut s, &same, 10);
        assert!(
            t.elapsed() < BOUND,
            "build + first search {:?}",
            t.elapsed()
        );
        assert_eq!(first, (0..10).collect(), "k counts rows (ties by id)");
        assert_check_ok(&mut s, "vi", "built");
        assert_all_found(&mut s, &rows, "built");
        // A filtered search over the tie: 5 of the 20 passing copies (all at
        // distance 0), not rows that fail the filter or lie farther away.
        let passing: BTreeSet<i64> = (0..20).map(|i| i * 1000 + 7).collect();
        for fast in [1, 0] {
            q(&mut s, &format!("SET fast_search = {fast}"));
            let got = ids(&q(
                &mut s,
                &format!(
                    "SELECT id FROM t WHERE id % 1000 = 7 ORDER BY l2_distance(v, '{}') LIMIT 5",
                    vlit(&same)
                ),
            ));
            assert!(
                got.len() == 5 && got.is_subset(&passing),
                "fast_search={fast}: {got:?}"
            );
        }
        q(&mut s, "SET fast_search = 0");
        // Delete every third copy, move every seventh to a distinct vector.
        q(&mut s, "DELETE FROM t WHERE id < 20000 AND id % 3 = 0");
        q(
            &mut s,
            &format!(
                "UPDATE t SET v = '{}' WHERE id < 20000 AND id % 7 = 1",
                vlit(&others[5])
            ),
        );
        if !autocommit {
            q(&mut s, "COMMIT");
        }
        rows.retain(|(id, _)| !(*id < 20_000 && id % 3 == 0));
        for (id, v) in rows.iter_mut() {
            if *id < 20_000 && *id % 7 == 1 {
                *v = others[5].clone();
            }
        }
        if is_async {
            wait_ok(&mut s, "the ASYNC index after deletes and updates");
        }
        assert_check_ok(&mut s, "vi", "after deletes and updates");
        assert_all_found(&mut s, &rows, "after deletes and updates");
    }
    // A restart loads the persisted index.
    let db = Database::open_with(dir.path(), cfg()).expect("reopen");
    let mut s = db.session();
    q(&mut s, "USE d");
    if is_async {
        wait_ok(&mut s, "the ASYNC index after a restart");
    }
    assert_check_ok(&mut s, "vi", "after a restart");
    assert_all_found(&mut s, &rows, "after a restart");
    q(&mut s, "DROP INDEX vi ON t");
    assert_eq!(
        ids(&q(&mut s, "SELECT COUNT(*) FROM t")),
        [rows.len() as i64].into_iter().collect()
    );
}

#[test]
fn sync_index_over_20k_equal_vectors() {
    twenty_thousand_equal(false, true);
}

#[test]
fn sync_index_over_20k_equal_vectors_autocommit_off() {
    twenty_thousand_equal(false, false);
}

#[test]
fn async_index_over_20k_equal_vectors() {
    twenty_thousand_equal(true, true);
}

/// 10,000 distinct vectors and 10,000 copies (50 % duplicates): half the
/// copies spread over the distinct vectors (1–5 rows a vector), half on 10
/// popular ones (500 rows each: a default vector, the same text embedded
/// again and again); the index created first and half the rows inserted
/// through it.
fn half_duplicates(is_async: bool) {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = distinct(10_000, 21);
    let mut vectors = base.clone();
    let mut x = 0x9E37_79B9u64;
    for i in 0..10_000 {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let of = if i % 2 == 0 {
            (x >> 33) as usize % base.len()
        } else {
            (x >> 33) as usize % 10
        };
        vectors.push(base[of].clone());
    }
    let rows: Vec<(i64, Vec<f32>)> = vectors
        .iter()
        .enumerate()
        .map(|(i, v)| (i as i64, v.clone()))
        .collect();
    let db = Database::open_with(dir.path(), cfg()).expect("open");
    let mut s = db.session();
    // Half the rows before the index, half through it.
    load(&mut s, &vectors[..10_000]);
    create_index(&mut s, is_async);
    let lits: Vec<String> = vectors[10_000..].iter().map(|v| vlit(v)).collect();
    let t = Instant::now();
    for (c, chunk) in lits.chunks(500).enumerate() {
        let values: Vec<String> = chunk
            .iter()
            .enumerate()
            .map(|(i, l)| format!("({}, '{l}')", 10_000 + c * 500 + i))
            .collect();
        q(
            &mut s,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
    }
    assert!(t.elapsed() < BOUND, "inserts took {:?}", t.elapsed());
    if is_async {
        wait_ok(&mut s, "the ASYNC index");
    }
    assert_check_ok(&mut s, "vi", "half duplicates");
    assert_all_found(&mut s, &rows, "half duplicates");
}

#[test]
fn sync_index_over_half_duplicates() {
    half_duplicates(false);
}

#[test]
fn async_index_over_half_duplicates() {
    half_duplicates(true);
}
