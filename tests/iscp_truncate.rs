//! TRUNCATE TABLE under ASYNC (ISCP) vector, full-text and B-tree indexes: the old
//! generations go through the DROP protocol — their consumers, stalled in
//! the middle of a batch of old rows, are cancelled and never apply it —
//! and the new generations start from the empty table, so a search right
//! after TRUNCATE answers nothing (with the fresh tail and index-only),
//! and after new inserts exactly the new rows.
//!
//! Tests hold a [`FaultGuard`] (fault points are process-global) and wait
//! on conditions with deadlines, never on sleeps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use tributary::testing::{JobState, Stage};
use tributary::{Database, Session, Value};
use tributary_fault::{global, FaultGuard};

use common::{cfg, job, remove_all_points, wait_until, wait_waiters};

const WAIT: Duration = Duration::from_secs(30);
const DIMS: usize = 4;

fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match s.execute(sql) {
        Ok(r) => r.rows,
        Err(e) => panic!("{sql}: {} {}", e.code, e.message),
    }
}

fn ids(rows: &[Vec<Value>]) -> Vec<i64> {
    rows.iter()
        .map(|r| match r.first() {
            Some(Value::Int(i)) => *i,
            other => panic!("expected an id, got {other:?}"),
        })
        .collect()
}

/// Row `id`'s vector: distinct for every id (the first component is the
/// id), so the nearest row to it is itself.
fn vector(id: i64) -> [f32; DIMS] {
    [id as f32, (id * id % 97) as f32, (id * 7 % 31) as f32, 1.0]
}

fn vlit(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// Insert rows `ids` saying `word` (and "common").
fn insert(s: &mut Session, ids: impl Iterator<Item = i64>, word: &str) {
    let vals: Vec<String> = ids
        .map(|i| format!("({i}, '{word} w{i} common', '{}')", vlit(&vector(i))))
        .collect();
    q(s, &format!("INSERT INTO t VALUES {}", vals.join(", ")));
}

fn nearest(s: &mut Session, id: i64, k: usize) -> Vec<i64> {
    ids(&q(
        s,
        &format!(
            "SELECT id FROM t ORDER BY l2_distance(v, '{}') LIMIT {k}",
            vlit(&vector(id))
        ),
    ))
}

fn matching(s: &mut Session, word: &str) -> BTreeSet<i64> {
    ids(&q(
        s,
        &format!("SELECT id FROM t WHERE MATCH(body) AGAINST('{word}')"),
    ))
    .into_iter()
    .collect()
}

/// Whether index `name`'s newest job is live, incremental and has applied
/// every change of its table.
fn caught_up(db: &Database, name: &str) -> bool {
    let j = job(db, name);
    let storage = db.engine().storage.as_ref();
    j.state == JobState::Completed
        && j.status.stage == Stage::Incremental
        && tributary::testing::newest_change_ts(
            storage,
            j.key.table_id,
            j.watermark,
            storage.latest_ts(),
        )
        .is_ok_and(|newest| newest == j.watermark)
}

fn wait_caught_up(db: &Database) {
    wait_until("idx_v, ft and bb caught up", WAIT, || {
        caught_up(db, "idx_v") && caught_up(db, "ft") && caught_up(db, "bb")
    });
}

/// The rows whose body is row `id`'s with `word` (the ASYNC B-tree `bb`
/// over `body` is compared with the rows by CHECK INDEX at the end).
fn by_body(s: &mut Session, id: i64, word: &str) -> Vec<i64> {
    ids(&q(
        s,
        &format!("SELECT id FROM t WHERE body = '{word} w{id} common'"),
    ))
}

/// The search modes: the fresh tail merged (default), index only, and
/// waiting for the index to be fresh (used once the consumers run).
const MODES: [&str; 3] = [
    "SET fast_search = 0, iscp_wait_fresh = 0",
    "SET fast_search = 1, iscp_wait_fresh = 0",
    "SET fast_search = 0, iscp_wait_fresh = 1",
];

#[test]
fn async_hnsw_and_fulltext_are_empty_after_truncate_then_follow_new_rows() {
    let _g = FaultGuard::enable();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE e");
    q(&mut s, "USE e");
    q(
        &mut s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32(4))",
    );
    insert(&mut s, 1..=200, "old");
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
    q(&mut s, "CREATE INDEX bb ON t(body) ASYNC");
    wait_caught_up(&db);
    assert_eq!(nearest(&mut s, 17, 1), vec![17]);
    assert_eq!(by_body(&mut s, 17, "old"), vec![17]);
    assert_eq!(matching(&mut s, "old").len(), 200);
    let old_jobs = [job(&db, "idx_v").key, job(&db, "ft").key];

    // Both consumers stalled in the middle of a batch of old rows.
    let points = [
        "fj/iscp/cancel/long/hnsw-before-update:idx_v",
        "fj/iscp/cancel/long/before-exec:ft",
    ];
    for p in points {
        global().add(p, ":::", "wait", 0, "", false).unwrap();
    }
    insert(&mut s, 201..=260, "stale");
    for p in points {
        wait_waiters(p, WAIT);
    }
    // The DROP protocol cancels the stalled consumers: TRUNCATE waits for
    // their finalization (bounded by drop_wait) and reports none pending.
    let t0 = Instant::now();
    let r = s.execute("TRUNCATE TABLE t").unwrap();
    assert!(
        r.warnings.is_empty(),
        "old generations finalized: {:?}",
        r.warnings
    );
    assert!(t0.elapsed() < cfg().drop_wait, "{:?}", t0.elapsed());
    let jobs = db.engine().iscp.read_jobs().unwrap();
    for k in &old_jobs {
        let j = jobs.iter().find(|j| j.key == *k).expect("old job row");
        assert_eq!(j.state, JobState::Canceled, "{k:?}");
    }
    // The new generations are new jobs over the new storage.
    let new_v = job(&db, "idx_v").key;
    assert!(new_v.job_id > old_jobs[0].job_id && new_v.table_id != old_jobs[0].table_id);

    // Right after TRUNCATE (the new consumers still stalled at the same
    // points): nothing, with the fresh tail and index-only.
    for mode in &MODES[..2] {
        q(&mut s, mode);
        assert!(nearest(&mut s, 17, 10).is_empty(), "{mode}");
        assert!(nearest(&mut s, 230, 10).is_empty(), "{mode}");
        for w in ["old", "stale", "common"] {
            assert!(matching(&mut s, w).is_empty(), "{mode}: {w}");
        }
        assert!(by_body(&mut s, 17, "old").is_empty(), "{mode}");
        assert!(by_body(&mut s, 230, "stale").is_empty(), "{mode}");
    }
    remove_all_points();
    q(&mut s, MODES[0]);

    // New rows: found (fresh tail), then by the caught-up indexes alone.
    insert(&mut s, 1001..=1080, "new");
    let new_ids: BTreeSet<i64> = (1001..=1080).collect();
    assert_eq!(matching(&mut s, "new"), new_ids);
    assert_eq!(nearest(&mut s, 1040, 1), vec![1040]);
    wait_caught_up(&db);
    // Other commits move timestamps past the indexes' watermarks: a
    // caught-up index is still fresh (no wait for iscp_wait_fresh, nor for
    // CHECK INDEX below).
    q(&mut s, "CREATE TABLE other (id INT PRIMARY KEY)");
    q(&mut s, "INSERT INTO other VALUES (1)");
    for mode in MODES {
        q(&mut s, mode);
        let t0 = Instant::now();
        assert_eq!(nearest(&mut s, 1001, 1), vec![1001], "{mode}");
        assert!(
            t0.elapsed() < cfg().drop_wait / 2,
            "{mode}: {:?}",
            t0.elapsed()
        );
        assert_eq!(matching(&mut s, "common"), new_ids, "{mode}");
        assert!(matching(&mut s, "old").is_empty(), "{mode}");
        assert!(matching(&mut s, "stale").is_empty(), "{mode}");
        for id in [1001, 1040, 1080] {
            assert_eq!(nearest(&mut s, id, 1), vec![id], "{mode}");
            assert_eq!(by_body(&mut s, id, "new"), vec![id], "{mode}");
        }
        assert!(by_body(&mut s, 17, "old").is_empty(), "{mode}");
        // Near an old row's position: only new rows.
        let near = nearest(&mut s, 230, 10);
        assert_eq!(near.len(), 10, "{mode}");
        assert!(near.iter().all(|i| new_ids.contains(i)), "{mode}: {near:?}");
    }
    for ix in ["idx_v", "ft", "bb"] {
        let t0 = Instant::now();
        let r = q(&mut s, &format!("CHECK INDEX {ix} ON t"));
        assert_eq!(r[0].last(), Some(&Value::Text("OK".into())), "{r:?}");
        // It waits (up to 30 s) only for an index that is behind.
        assert!(t0.elapsed() < Duration::from_secs(10), "{:?}", t0.elapsed());
    }
    db.shutdown();
}

/// A writer's open transaction holds TRUNCATE off (it locks the table's
/// catalog record exclusively); once the writer commits, TRUNCATE empties
/// the table with the writer's rows, and every index stays equal to it.
#[test]
fn truncate_waits_for_an_open_writer_then_takes_its_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut a = db.session();
    let mut b = db.session();
    q(&mut a, "CREATE DATABASE e");
    q(&mut a, "USE e");
    q(&mut b, "USE e");
    q(
        &mut a,
        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, n INT, KEY kn (n), FULLTEXT ft (body))",
    );
    q(
        &mut a,
        "INSERT INTO t VALUES (1, 'apple', 1), (2, 'pear', 2)",
    );
    q(&mut a, "BEGIN");
    q(&mut a, "INSERT INTO t VALUES (3, 'apple tart', 3)");
    let b_id = b.connection_id();
    let h = std::thread::spawn(move || (b.execute("TRUNCATE TABLE t").map(|_| ()), b));
    wait_until("TRUNCATE running", WAIT, || {
        let r = q(
            &mut a,
            &format!("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = {b_id} AND INFO LIKE 'TRUNCATE%'"),
        );
        r == vec![vec![Value::Int(1)]]
    });
    // Still waiting for the writer: the table is whole.
    assert_eq!(
        q(&mut a, "SELECT COUNT(*) FROM t"),
        vec![vec![Value::Int(3)]]
    );
    q(&mut a, "COMMIT");
    let (r, _b) = h.join().unwrap();
    assert!(r.is_ok(), "{r:?}");
    assert!(q(&mut a, "SELECT * FROM t").is_empty());
    assert!(matching(&mut a, "apple").is_empty());
    q(&mut a, "INSERT INTO t VALUES (3, 'apple again', 3)");
    assert_eq!(matching(&mut a, "apple"), BTreeSet::from([3]));
    for ix in ["kn", "ft"] {
        let r = q(&mut a, &format!("CHECK INDEX {ix} ON t"));
        assert_eq!(r[0].last(), Some(&Value::Text("OK".into())), "{r:?}");
    }
    db.shutdown();
}
