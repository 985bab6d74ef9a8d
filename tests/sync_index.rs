//! Synchronous (non-ASYNC) HNSW and full-text indexes: maintained by the
//! writing transaction itself — entries committed atomically with the rows,
//! this CN's in-memory copy caught up before the statement returns, any
//! other CN's at its next search — with no runner involved; rolled back
//! with the transaction; safe against concurrent DDL (metadata locks);
//! checkpointed and reloaded exactly; dropped through the ISCP protocol.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::collections::BTreeSet;
use std::sync::mpsc;
use std::time::Duration;

use tributary::testing::JobState;
use tributary::{Config, Database, Session, Value};

use common::{cfg, hidden_count, job, ms, wait_until};

const WAIT: Duration = Duration::from_secs(30);

fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    s.execute(sql).unwrap_or_else(|e| panic!("{sql}: {e}")).rows
}

fn ids(rows: &[Vec<Value>]) -> Vec<i64> {
    rows.iter()
        .map(|r| match r[0] {
            Value::Int(i) => i,
            ref o => panic!("not an int: {o}"),
        })
        .collect()
}

fn vec_of(id: i64) -> [f64; 4] {
    let x = id as f64;
    [x, (x * 7.0) % 13.0, (x * 3.0) % 5.0, 1.0]
}

fn vlit(v: &[f64]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("[{}]", parts.join(","))
}

fn knn(s: &mut Session, v: &[f64]) -> Vec<i64> {
    ids(&q(
        s,
        &format!(
            "SELECT id FROM t ORDER BY l2_distance(v, '{}') LIMIT 1",
            vlit(v)
        ),
    ))
}

fn matches(s: &mut Session, word: &str) -> BTreeSet<i64> {
    ids(&q(
        s,
        &format!("SELECT id FROM t WHERE MATCH(body) AGAINST('{word}')"),
    ))
    .into_iter()
    .collect()
}

fn insert_sql(id: i64) -> String {
    format!(
        "INSERT INTO t VALUES ({id}, 'w{id} common', '{}')",
        vlit(&vec_of(id))
    )
}

/// A table with `n` rows (ids 1..=n) and a synchronous HNSW and full-text
/// index on it; the session uses index answers only (`fast_search = 1`),
/// so nothing but the index itself can find a row.
fn setup(s: &mut Session, n: i64) {
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32(4))",
    ] {
        q(s, sql);
    }
    for id in 1..=n {
        q(s, &insert_sql(id));
    }
    q(
        s,
        "CREATE INDEX hv USING HNSW ON t(v) OP_TYPE 'vector_l2_ops'",
    );
    q(s, "CREATE FULLTEXT INDEX ft ON t(body)");
    q(s, "SET fast_search = 1");
}

/// Every row `present` is found by both indexes, every id in `gone` by
/// neither.
fn assert_index_equals(s: &mut Session, present: &[i64], gone: &[i64]) {
    for &id in present {
        assert_eq!(knn(s, &vec_of(id)), vec![id], "k-NN of row {id}");
        assert_eq!(
            matches(s, &format!("w{id}")),
            BTreeSet::from([id]),
            "MATCH of row {id}"
        );
    }
    for &id in gone {
        assert!(matches(s, &format!("w{id}")).is_empty(), "row {id} gone");
        assert_ne!(knn(s, &vec_of(id)), vec![id], "row {id} gone (k-NN)");
    }
    let all: BTreeSet<i64> = present.iter().copied().collect();
    assert_eq!(matches(s, "common"), all, "MATCH of every row");
}

#[test]
fn sync_indexes_are_maintained_by_the_writer_without_any_runner() {
    // No ISCP runner at all on this node: only the writers keep the
    // indexes.
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(
        dir.path(),
        Config {
            iscp_enabled: false,
            ..cfg()
        },
    )
    .unwrap();
    let mut s = db.session();
    setup(&mut s, 30);
    assert!(!db.engine().iscp.runner_started());
    let plan = format!(
        "{:?}",
        q(
            &mut s,
            "EXPLAIN SELECT id FROM t ORDER BY l2_distance(v, '[1,1,1,1]') LIMIT 3"
        )
    );
    assert!(plan.contains("using hv"), "{plan}");
    let present: Vec<i64> = (1..=30).collect();
    assert_index_equals(&mut s, &present, &[]);

    // Insert, update (vector and text), delete: each visible to the very
    // next index-only query.
    q(&mut s, &insert_sql(31));
    assert_eq!(knn(&mut s, &vec_of(31)), vec![31]);
    assert_eq!(matches(&mut s, "w31"), BTreeSet::from([31]));
    q(
        &mut s,
        &format!(
            "UPDATE t SET v = '{}', body = 'moved common' WHERE id = 5",
            vlit(&[100.0, 100.0, 100.0, 100.0])
        ),
    );
    assert_eq!(knn(&mut s, &[100.0, 100.0, 100.0, 100.0]), vec![5]);
    assert_eq!(matches(&mut s, "moved"), BTreeSet::from([5]));
    assert!(matches(&mut s, "w5").is_empty(), "old text of row 5");
    q(&mut s, "DELETE FROM t WHERE id = 7");
    assert!(matches(&mut s, "w7").is_empty());
    assert_ne!(knn(&mut s, &vec_of(7)), vec![7]);

    let status = s.execute("SHOW ISCP STATUS").unwrap();
    let col = |name: &str| {
        status
            .columns
            .iter()
            .position(|c| c.name == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    assert_eq!(status.rows.len(), 2, "{:?}", status.rows);
    for r in &status.rows {
        assert_eq!(r[col("stage")], Value::Text("sync".into()), "{r:?}");
        assert_eq!(r[col("phase")], Value::Text("current".into()), "{r:?}");
        assert_eq!(r[col("table_name")], Value::Text("t".into()), "{r:?}");
        assert_eq!(
            r[col("lag_ts")],
            Value::Int(0),
            "a synchronous index never lags: {r:?}"
        );
    }
    db.shutdown();
}

#[test]
fn sync_index_entries_roll_back_with_the_transaction() {
    let (_dir, db, mut s) = open(cfg());
    setup(&mut s, 10);
    let hv = job(&db, "hv");
    let entries = hidden_count(&db, hv.spec.storage_id);

    q(&mut s, "BEGIN");
    q(&mut s, &insert_sql(11));
    q(&mut s, "ROLLBACK");
    // A failed statement writes nothing either: the second row's duplicate
    // key rolls back the first row's entry with it.
    let err = s
        .execute(&format!(
            "INSERT INTO t VALUES (12, 'w12 common', '{}'), (3, 'dup', '{}')",
            vlit(&vec_of(12)),
            vlit(&vec_of(3))
        ))
        .unwrap_err();
    assert_eq!(err.code, 1062, "{err}");
    assert_eq!(hidden_count(&db, hv.spec.storage_id), entries);
    let present: Vec<i64> = (1..=10).collect();
    assert_index_equals(&mut s, &present, &[11, 12]);

    // And a committed transaction of several statements lands whole.
    q(&mut s, "BEGIN");
    q(&mut s, &insert_sql(11));
    q(&mut s, "DELETE FROM t WHERE id = 2");
    q(&mut s, "COMMIT");
    let present: Vec<i64> = (1..=11).filter(|&i| i != 2).collect();
    assert_index_equals(&mut s, &present, &[2, 12]);
}

fn open(c: Config) -> (tempfile::TempDir, Database, Session) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), c).unwrap();
    let s = db.session();
    (dir, db, s)
}

/// Runs `sql` on a new session of `db` in a thread; the result arrives on
/// the returned channel.
fn run_in_thread(
    db: &std::sync::Arc<Database>,
    sql: &'static [&'static str],
) -> mpsc::Receiver<Result<(), String>> {
    let (tx, rx) = mpsc::channel();
    let db = db.clone();
    std::thread::spawn(move || {
        let mut s = db.session();
        let r = sql
            .iter()
            .try_for_each(|q| s.execute(q).map(|_| ()).map_err(|e| format!("{q}: {e}")));
        let _ = tx.send(r);
    });
    rx
}

#[test]
fn create_index_waits_for_an_open_writer_and_indexes_its_row() {
    let dir = tempfile::tempdir().unwrap();
    let db = std::sync::Arc::new(Database::open_with(dir.path(), cfg()).unwrap());
    let mut a = db.session();
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32(4))",
    ] {
        q(&mut a, sql);
    }
    q(&mut a, &insert_sql(1));
    // A writer's transaction is open on t when the index is created …
    q(&mut a, "BEGIN");
    q(&mut a, &insert_sql(2));
    let ddl = run_in_thread(&db, &["USE d", "CREATE FULLTEXT INDEX ft ON t(body)"]);
    // … so CREATE waits for it (the writer holds t's metadata lock) …
    assert!(
        ddl.recv_timeout(ms(300)).is_err(),
        "CREATE INDEX must wait for the open writer"
    );
    q(&mut a, "COMMIT");
    // … and then indexes the writer's row, which it could otherwise miss.
    ddl.recv_timeout(WAIT)
        .expect("CREATE INDEX finishes after the writer commits")
        .unwrap();
    q(&mut a, "SET fast_search = 1");
    assert_eq!(matches(&mut a, "common"), BTreeSet::from([1, 2]));

    // DROP waits the same way, and a writer never writes an entry of an
    // index that is being dropped.
    q(&mut a, "BEGIN");
    q(&mut a, &insert_sql(3));
    let drop = run_in_thread(&db, &["USE d", "DROP INDEX ft ON t"]);
    assert!(drop.recv_timeout(ms(300)).is_err(), "DROP must wait too");
    q(&mut a, "COMMIT");
    drop.recv_timeout(WAIT).expect("DROP finishes").unwrap();
    let ft = job(&db, "ft");
    assert_eq!(ft.state, JobState::Canceled);
    assert_eq!(hidden_count(&db, ft.spec.storage_id), 0, "entries purged");
    q(&mut a, &insert_sql(4));
    assert_eq!(
        hidden_count(&db, ft.spec.storage_id),
        0,
        "no entry after DROP"
    );
}

#[test]
fn sync_index_write_on_one_cn_is_searchable_on_another_at_once() {
    sync_index_across_cns(common::Backend::Embedded);
}

#[test]
fn sync_index_write_on_one_cn_is_searchable_on_another_at_once_over_postgres() {
    sync_index_across_cns(common::Backend::Postgres);
}

fn sync_index_across_cns(backend: common::Backend) {
    let shared = common::Shared::new(backend);
    let runner = Database::open_shared(
        shared.for_node("cn-a"),
        Config {
            node_name: "cn-a".into(),
            ..cfg()
        },
    )
    .unwrap();
    let sql_only = Database::open_shared(
        shared.for_node("cn-b"),
        Config {
            node_name: "cn-b".into(),
            iscp_enabled: false,
            gc_interval: ms(1),
            ..cfg()
        },
    )
    .unwrap();
    let mut a = runner.session();
    setup(&mut a, 20);
    let mut b = sql_only.session();
    q(&mut b, "USE d");
    q(&mut b, "SET fast_search = 1");
    assert_index_equals(&mut b, &(1..=20).collect::<Vec<_>>(), &[]);
    // Written on A, found on B by its very next query; and back.
    q(&mut a, &insert_sql(21));
    assert_eq!(knn(&mut b, &vec_of(21)), vec![21]);
    assert_eq!(matches(&mut b, "w21"), BTreeSet::from([21]));
    q(&mut b, &insert_sql(22));
    q(&mut b, "DELETE FROM t WHERE id = 1");
    assert_eq!(knn(&mut a, &vec_of(22)), vec![22]);
    let present: Vec<i64> = (2..=22).collect();
    assert_index_equals(&mut a, &present, &[1]);
    assert_index_equals(&mut b, &present, &[1]);

    // Dropped on A: B, which runs no ISCP, forgets its copies by its next
    // index load (bounded memory under create/drop on every CN).
    assert_eq!(sql_only.engine().iscp.live_count(), 2);
    q(&mut a, "DROP INDEX hv ON t");
    q(&mut a, "DROP INDEX ft ON t");
    q(&mut a, "CREATE FULLTEXT INDEX ft2 ON t(body)");
    assert_eq!(matches(&mut b, "w22"), BTreeSet::from([22]));
    assert_eq!(sql_only.engine().iscp.live_count(), 1);
    sql_only.shutdown();
    runner.shutdown();
}

#[test]
fn sync_index_checkpoints_and_reloads_exactly() {
    let dir = tempfile::tempdir().unwrap();
    // A base is due after 40 changes or half the index, whichever is
    // more, or once anything changed and the base is a second old: the
    // age bound makes "a later base" below certain, whatever share of the
    // changes landed before the first base.
    let c = Config {
        index_checkpoint_changes: 40,
        index_checkpoint_age: Duration::from_secs(1),
        ..cfg()
    };
    let present: Vec<i64> = (1..=150).filter(|i| i % 10 != 0).collect();
    let gone: Vec<i64> = (1..=150).filter(|i| i % 10 == 0).collect();
    {
        let db = Database::open_with(dir.path(), c.clone()).unwrap();
        let mut s = db.session();
        setup(&mut s, 100);
        // The runner writes a base once 40 changes piled up, making its
        // position the job's watermark.
        wait_until("a first base of both indexes", WAIT, || {
            ["hv", "ft"].iter().all(|n| job(&db, n).watermark > 0)
        });
        for id in 101..=150 {
            q(&mut s, &insert_sql(id));
        }
        for id in &gone {
            q(&mut s, &format!("DELETE FROM t WHERE id = {id}"));
        }
        let before = job(&db, "hv").watermark;
        wait_until("a later base", WAIT, || job(&db, "hv").watermark > before);
        // More changes after the last base: replayed from the entry log.
        q(&mut s, &insert_sql(151));
        q(&mut s, "DELETE FROM t WHERE id = 151");
        assert_index_equals(&mut s, &present, &gone);
        db.shutdown();
    }
    // A new process: the index is the base plus the replayed entries.
    let db = Database::open_with(dir.path(), c).unwrap();
    let mut s = db.session();
    q(&mut s, "USE d");
    q(&mut s, "SET fast_search = 1");
    assert_index_equals(&mut s, &present, &gone);
    let hv = job(&db, "hv");
    assert_eq!(hv.state, JobState::Completed);
    assert!(hv.status.rows_applied >= 100, "{:?}", hv.status);
}

#[test]
fn drop_cancels_a_checkpoint_stalled_before_its_save() {
    let _g = tributary_fault::FaultGuard::enable();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(
        dir.path(),
        Config {
            index_checkpoint_changes: 10,
            ..cfg()
        },
    )
    .unwrap();
    let mut s = db.session();
    let reg = tributary_fault::global();
    let key = format!("{}:hv", tributary_fault::points::ISCP_LONG_HNSW_BEFORE_SAVE);
    reg.add(&key, ":::", "sleep", 30, "", false).unwrap();
    // 20 rows written by CREATE: a base is due at once, and the unit
    // writing it stalls in a 30 s sleep before saving.
    setup(&mut s, 20);
    common::wait_hits(&key, 1, WAIT);
    let hv = job(&db, "hv");
    assert_eq!(hv.watermark, 0, "no base yet");
    let t = std::time::Instant::now();
    q(&mut s, "DROP INDEX hv ON t");
    assert!(
        t.elapsed() < Duration::from_secs(5),
        "DROP waited {:?} for a stalled checkpoint",
        t.elapsed()
    );
    let hv = job(&db, "hv");
    assert_eq!(hv.state, JobState::Canceled);
    assert_eq!(hidden_count(&db, hv.spec.storage_id), 0, "nothing saved");
    // The other index is untouched and still answers.
    assert_eq!(matches(&mut s, "w3"), BTreeSet::from([3]));
    common::remove_all_points();
}
