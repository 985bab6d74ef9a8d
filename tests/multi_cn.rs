//! Several compute nodes over one storage: exactly one runs ISCP (the
//! lease), and an index saved by the runner answers identically when loaded
//! on another CN.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::time::{Duration, Instant};

use common::{Backend, Shared};
use tributary::{Config, Database, Value};

fn cfg(node: &str, iscp: bool) -> Config {
    Config {
        node_name: node.into(),
        iscp_enabled: iscp,
        iscp_interval: Duration::from_millis(20),
        ..Config::default()
    }
}

fn ids(db: &Database, sql: &[&str]) -> Vec<i64> {
    let mut s = db.session();
    let mut last = None;
    for q in sql {
        last = Some(s.execute(q).unwrap_or_else(|e| panic!("{q}: {e}")));
    }
    last.unwrap()
        .rows
        .iter()
        .map(|r| match r[0] {
            Value::Int(i) => i,
            ref o => panic!("not an int: {o}"),
        })
        .collect()
}

#[test]
fn index_saved_on_runner_answers_the_same_on_another_cn() {
    index_saved_on_runner_answers_the_same(Backend::Embedded);
}

#[test]
fn index_saved_on_runner_answers_the_same_on_another_cn_over_postgres() {
    index_saved_on_runner_answers_the_same(Backend::Postgres);
}

fn index_saved_on_runner_answers_the_same(backend: Backend) {
    let shared = Shared::new(backend);
    let a = Database::open_shared(shared.for_node("cn-a"), cfg("cn-a", true)).unwrap();
    let b = Database::open_shared(shared.for_node("cn-b"), cfg("cn-b", true)).unwrap();
    let mut s = a.session();
    for q in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, v VECF32(4))",
    ] {
        s.execute(q).unwrap();
    }
    let mut seed = 9u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 1000) as f64 / 100.0
    };
    let words = ["alpha", "beta", "gamma", "delta"];
    let rows: Vec<String> = (0..300)
        .map(|i| {
            format!(
                "({i}, '{} {}', '[{},{},{},{}]')",
                words[i % 4],
                words[(i / 4) % 4],
                next(),
                next(),
                next(),
                next()
            )
        })
        .collect();
    s.execute(&format!("INSERT INTO t VALUES {}", rows.join(",")))
        .unwrap();
    s.execute("CREATE INDEX vi USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC")
        .unwrap();
    s.execute("CREATE FULLTEXT INDEX ft ON t(body) ASYNC")
        .unwrap();
    // Wait until both jobs are level (on whichever CN is the runner).
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let jobs = a.engine().iscp.read_jobs().unwrap();
        if jobs.len() == 2
            && jobs.iter().all(|j| {
                j.status.stage == tributary::testing::Stage::Incremental
                    && j.status.rows_applied >= 300
            })
        {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "indexes did not catch up: {jobs:?}"
        );
        std::thread::park_timeout(Duration::from_millis(5));
    }
    // Exactly one CN holds the runner lease.
    let runners = [&a, &b]
        .iter()
        .filter(|d| {
            d.engine()
                .iscp
                .is_runner
                .load(std::sync::atomic::Ordering::Acquire)
        })
        .count();
    assert_eq!(runners, 1, "exactly one runner");
    let knn = [
        "USE d",
        "SET fast_search = 1",
        "SELECT id FROM t ORDER BY l2_distance(v, '[5,5,5,5]') LIMIT 10",
    ];
    let fts = [
        "USE d",
        "SET fast_search = 1",
        "SELECT id FROM t WHERE MATCH(body) AGAINST('+alpha +gamma' IN BOOLEAN MODE) ORDER BY id",
    ];
    let (ka, kb) = (ids(&a, &knn), ids(&b, &knn));
    assert_eq!(ka.len(), 10);
    assert_eq!(ka, kb, "same vector answers on both CNs");
    let (fa, fb) = (ids(&a, &fts), ids(&b, &fts));
    assert!(!fa.is_empty());
    assert_eq!(fa, fb, "same full-text answers on both CNs");
    a.shutdown();
    b.shutdown();
}

/// Incremental units with a base every 25 changes: the CN that did not run
/// ISCP loads base + change-log replay and answers exactly as the runner,
/// and as the table itself.
#[test]
fn index_with_frequent_bases_loads_the_same_on_another_cn() {
    index_with_frequent_bases_loads_the_same(Backend::Embedded);
}

#[test]
fn index_with_frequent_bases_loads_the_same_on_another_cn_over_postgres() {
    index_with_frequent_bases_loads_the_same(Backend::Postgres);
}

fn index_with_frequent_bases_loads_the_same(backend: Backend) {
    let shared = Shared::new(backend);
    let c = |node: &str, iscp: bool| Config {
        index_checkpoint_changes: 25,
        ..cfg(node, iscp)
    };
    let storage = shared.for_node("cn-a");
    let a = Database::open_shared(storage.clone(), c("cn-a", true)).unwrap();
    let b = Database::open_shared(shared.for_node("cn-b"), c("cn-b", false)).unwrap();
    let mut s = a.session();
    for q in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, v VECF32(2))",
        "CREATE INDEX vi USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
        "CREATE FULLTEXT INDEX ft ON t(body) ASYNC",
    ] {
        s.execute(q).unwrap();
    }
    // The initial builds (of an empty table) finish first, so the rows
    // below arrive as incremental units and the bases written along the way
    // are past the build. (A build that runs late, after every write, left
    // no change to base past it: the wait below then timed out.)
    let deadline = Instant::now() + Duration::from_secs(30);
    while !a
        .engine()
        .iscp
        .read_jobs()
        .unwrap()
        .iter()
        .all(|j| j.status.stage == tributary::testing::Stage::Incremental)
    {
        assert!(
            Instant::now() < deadline,
            "the initial builds did not finish"
        );
        std::thread::park_timeout(Duration::from_millis(5));
    }
    // 200 rows in 20 statements, then updates and deletes: many units.
    for chunk in 0..20 {
        let rows: Vec<String> = (0..10)
            .map(|i| {
                let id = chunk * 10 + i;
                format!("({id}, 'w{id} all', '[{id},0]')")
            })
            .collect();
        s.execute(&format!("INSERT INTO t VALUES {}", rows.join(",")))
            .unwrap();
    }
    s.execute("UPDATE t SET v = '[1000,0]', body = 'moved all' WHERE id = 7")
        .unwrap();
    s.execute("DELETE FROM t WHERE id >= 150").unwrap();
    let latest = storage.latest_ts();
    let deadline = Instant::now() + Duration::from_secs(30);
    // Caught up, and bases written along the way: the hidden table's
    // metadata names one past the initial build (base writers run beside
    // the units, so a base may land after the watermark does).
    let base_past_build = |j: &tributary::testing::JobRow| {
        let mut txn = storage.begin(Default::default()).unwrap();
        let meta = txn.get(j.spec.storage_id, b"m", false).unwrap().unwrap();
        txn.rollback();
        let meta: serde_json::Value = serde_json::from_slice(&meta).unwrap();
        meta["base_ts"].as_u64().unwrap() > j.status.build_ts
    };
    // Caught up as of `latest` (see `common::applied_up_to`).
    // ... in the job row, and in the runner's memory: `fast_search` answers
    // from the index alone, which publishes a unit only after its commit.
    let caught_up = |j: &tributary::testing::JobRow| {
        common::applied_up_to(&a, j, latest)
            && a.engine().iscp.cached(j.key.job_id).is_none_or(|h| {
                let g = h.read();
                g.watermark >= j.watermark && g.pending_ts.is_none()
            })
    };
    loop {
        let jobs = a.engine().iscp.read_jobs().unwrap();
        if jobs.iter().all(|j| caught_up(j) && base_past_build(j)) {
            break;
        }
        if Instant::now() >= deadline {
            let live: Vec<String> = jobs
                .iter()
                .map(|j| match a.engine().iscp.cached(j.key.job_id) {
                    Some(h) => {
                        let g = h.read();
                        format!(
                            "job {}: caught up {} base_past_build {} watermark {} pending {:?} staging {:?} base_ts {} since_base {} len {}",
                            j.key.job_id,
                            caught_up(j),
                            base_past_build(j),
                            g.watermark,
                            g.pending_ts,
                            g.staging_to,
                            g.base_ts,
                            g.since_base,
                            g.index.len()
                        )
                    }
                    None => format!("job {}: not cached", j.key.job_id),
                })
                .collect();
            panic!("not caught up (latest {latest}), or no base past the build: {live:?} {jobs:?}");
        }
        std::thread::park_timeout(Duration::from_millis(5));
    }
    for (q, want) in [
        (
            "SELECT id FROM t ORDER BY l2_distance(v, '[999,0]') LIMIT 1",
            vec![7],
        ),
        (
            "SELECT id FROM t ORDER BY l2_distance(v, '[149.2,0]') LIMIT 2",
            vec![149, 148],
        ),
        (
            "SELECT id FROM t WHERE MATCH(body) AGAINST('moved')",
            vec![7],
        ),
        ("SELECT id FROM t WHERE MATCH(body) AGAINST('w160')", vec![]),
        ("SELECT id FROM t WHERE MATCH(body) AGAINST('w7')", vec![]),
    ] {
        for (cn, db) in [("cn-a", &a), ("cn-b", &b)] {
            let got = ids(db, &["USE d", "SET fast_search = 1", q]);
            assert_eq!(got, want, "{q} on {cn}");
        }
    }
    let all = "SELECT id FROM t WHERE MATCH(body) AGAINST('all') ORDER BY id";
    let want: Vec<i64> = (0..150).collect();
    assert_eq!(ids(&b, &["USE d", "SET fast_search = 1", all]), want);
    a.shutdown();
    b.shutdown();
}

/// A CN that does not hold the runner lease keeps a cached copy of an index
/// for its searches: after each unit the runner commits, that copy follows
/// the change log up to the job's watermark, so `fast_search` (index only,
/// no tail) on it finds what the unit applied — not one unit late until the
/// next write; and once the index is dropped, the copy goes.
#[test]
fn fast_search_on_a_non_runner_follows_every_unit() {
    fast_search_follows_every_unit(Backend::Embedded);
}

#[test]
fn fast_search_on_a_non_runner_follows_every_unit_over_postgres() {
    fast_search_follows_every_unit(Backend::Postgres);
}

fn fast_search_follows_every_unit(backend: Backend) {
    let shared = Shared::new(backend);
    let storage = shared.for_node("cn-a");
    let sweeping = |node: &str| Config {
        gc_interval: Duration::from_millis(50),
        ..cfg(node, true)
    };
    let a = Database::open_shared(storage.clone(), sweeping("cn-a")).unwrap();
    let runner = |db: &Database| {
        db.engine()
            .iscp
            .is_runner
            .load(std::sync::atomic::Ordering::Acquire)
    };
    common::wait_until("cn-a runs ISCP", Duration::from_secs(30), || runner(&a));
    // cn-b runs a runner task too, which never gets the lease while cn-a
    // holds it: it only sweeps its cache of dropped indexes.
    let b = Database::open_shared(shared.for_node("cn-b"), sweeping("cn-b")).unwrap();
    let mut s = a.session();
    for q in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, v VECF32(2))",
        "INSERT INTO t VALUES (1, 'w1 all', '[1,0]')",
        "CREATE INDEX vi USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
        "CREATE FULLTEXT INDEX ft ON t(body) ASYNC",
    ] {
        s.execute(q).unwrap();
    }
    let fts = [
        "USE d",
        "SET fast_search = 1",
        "SELECT id FROM t WHERE MATCH(body) AGAINST('all') ORDER BY id",
    ];
    let knn = [
        "USE d",
        "SET fast_search = 1",
        "SELECT id FROM t ORDER BY l2_distance(v, '[0,0]') LIMIT 10",
    ];
    let mut want = vec![1];
    for round in 2..6i64 {
        s.execute(&format!(
            "INSERT INTO t VALUES ({round}, 'w{round} all', '[{round},0]')"
        ))
        .unwrap();
        want.push(round);
        let latest = storage.latest_ts();
        common::wait_until("both units applied", Duration::from_secs(30), || {
            ["vi", "ft"].iter().all(|ix| {
                let j = common::job(&a, ix);
                j.status.stage == tributary::testing::Stage::Incremental
                    && common::applied_up_to(&a, &j, latest)
            })
        });
        // b cached its copies at the first round's search; no later write
        // comes after this unit.
        assert_eq!(ids(&b, &fts), want, "full-text on cn-b, round {round}");
        let mut got = ids(&b, &knn);
        got.sort_unstable();
        assert_eq!(got, want, "vector on cn-b, round {round}");
    }
    assert!(!runner(&b), "cn-b searched as a non-runner");
    // Dropped on cn-a: cn-b forgets its copies without another load.
    assert_eq!(b.engine().iscp.live_count(), 2);
    s.execute("DROP INDEX vi ON t").unwrap();
    s.execute("DROP INDEX ft ON t").unwrap();
    common::wait_until("cn-b's copies evicted", Duration::from_secs(30), || {
        b.engine().iscp.live_count() == 0
    });
    a.shutdown();
    b.shutdown();
}
