//! End-to-end ISCP tests through SQL (issue #4 item 8): HNSW recall on 10k
//! random vectors, full-text results equal to a brute-force term match,
//! UPDATE/DELETE reflected in the indexes, independent progress of several
//! jobs on one table, fresh-by-default search with stalled consumers,
//! `iscp_wait_fresh`, the initial build of a prefilled table, a SIGKILL of
//! a writer process during propagation followed by recovery, and
//! read-your-writes on non-ASYNC indexes.
//!
//! Owns one `#[test]` per scenario plus the `#[ignore]`d child entry point
//! [`crash_child_writer`] that the crash test re-executes. Every test holds
//! a [`tributary_fault::FaultGuard`] for its whole duration (fault points
//! are process-global and the tests share index names), so they run one at
//! a time. Tests never sleep to synchronise: they poll a condition with a
//! deadline ([`wait_until`]). This file must never change product state
//! outside its own temporary data directories.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::collections::{BTreeSet, HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use tributary::testing::{JobState, Stage};
use tributary::{Config, Database, Session, Value};
use tributary_fault::{global, FaultGuard};

use common::{cfg, hidden_count, job, ms, point, remove_all_points, wait_until, wait_waiters};

const WAIT: Duration = Duration::from_secs(30);
const CRASH_ENV: &str = "TRIBUTARY_CRASH_DIR";

/// Like [`wait_until`] but returns whether the condition held in time.
fn holds_within(timeout: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return true;
        }
        let now = Instant::now();
        if now >= deadline {
            return false;
        }
        std::thread::park_timeout((deadline - now).min(ms(5)));
    }
}

/// Run one statement; panic with the SQL on error.
fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match s.execute(sql) {
        Ok(r) => r.rows,
        Err(e) => {
            let shown: String = sql.chars().take(300).collect();
            panic!("{shown}: {e:?}")
        }
    }
}

/// The first column of every row as an integer.
fn ids(rows: &[Vec<Value>]) -> Vec<i64> {
    rows.iter()
        .map(|r| match r.first() {
            Some(Value::Int(v)) => *v,
            o => panic!("expected an integer id, got {o:?}"),
        })
        .collect()
}

fn id_set(rows: &[Vec<Value>]) -> BTreeSet<i64> {
    ids(rows).into_iter().collect()
}

/// Seeded xorshift64* generator.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in [0, 1).
    fn f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    fn vector(&mut self, dims: usize) -> Vec<f32> {
        (0..dims).map(|_| self.f32()).collect()
    }
}

/// SQL vector literal (shortest round-trip f32 spelling).
fn vlit(v: &[f32]) -> String {
    let parts: Vec<String> = v.iter().map(|x| format!("{x}")).collect();
    format!("[{}]", parts.join(","))
}

fn l2(a: &[f32], b: &[f32]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(x, y)| (*x as f64 - *y as f64).powi(2))
        .sum::<f64>()
}

/// Brute-force top-`k` ids by L2 distance (ties by id).
fn brute_top(rows: &HashMap<i64, Vec<f32>>, qv: &[f32], k: usize) -> Vec<i64> {
    let mut d: Vec<(f64, i64)> = rows.iter().map(|(id, v)| (l2(v, qv), *id)).collect();
    d.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    d.into_iter().take(k).map(|(_, id)| id).collect()
}

/// Commit ts of the newest change of `table` after `after` (or `after`).
fn newest_change(db: &Database, table: u64, after: u64) -> u64 {
    let latest = db.engine().storage.latest_ts();
    tributary::testing::newest_change_ts(db.engine().storage.as_ref(), table, after, latest)
        .unwrap()
}

/// Whether `name`'s job is live, incremental and has applied every change
/// of its table (the lag SHOW ISCP STATUS reports is 0) — in the job row and
/// in this node's memory: `fast_search` answers from the in-memory index
/// alone, which publishes a unit only after the unit's commit (a copy with
/// no unit in flight catches up from the change log at the next search).
fn caught_up(db: &Database, name: &str) -> bool {
    let j = job(db, name);
    j.state == JobState::Completed
        && j.status.stage == Stage::Incremental
        && newest_change(db, j.key.table_id, j.watermark) == j.watermark
        && db.engine().iscp.cached(j.key.job_id).is_none_or(|h| {
            let g = h.read();
            g.watermark >= j.watermark || (g.pending_ts.is_none() && g.staging_to.is_none())
        })
}

fn wait_caught_up(db: &Database, names: &[&str], timeout: Duration) {
    wait_until(
        &format!("indexes {names:?} caught up with their table"),
        timeout,
        || names.iter().all(|n| caught_up(db, n)),
    );
}

/// Run a write and return the commit ts of its change to `table`.
fn write_ts(db: &Database, s: &mut Session, table: u64, sql: &str) -> u64 {
    let before = db.engine().storage.latest_ts();
    q(s, sql);
    let ts = newest_change(db, table, before);
    assert!(ts > before, "{sql} produced no change in table {table}");
    ts
}

/// `SHOW ISCP STATUS` as one map (column name → value) per job.
fn iscp_status(s: &mut Session) -> Vec<HashMap<String, Value>> {
    let r = s.execute("SHOW ISCP STATUS").unwrap();
    r.rows
        .into_iter()
        .map(|row| {
            r.columns
                .iter()
                .map(|c| c.name.clone())
                .zip(row)
                .collect::<HashMap<_, _>>()
        })
        .collect()
}

fn status_of(s: &mut Session, index: &str) -> HashMap<String, Value> {
    let jn = Value::Text(tributary::testing::job_name(index));
    iscp_status(s)
        .into_iter()
        .filter(|r| r.get("job_name") == Some(&jn))
        .max_by_key(|r| match r.get("job_id") {
            Some(Value::Int(v)) => *v,
            _ => 0,
        })
        .unwrap_or_else(|| panic!("{index} not in SHOW ISCP STATUS"))
}

fn int(v: Option<&Value>) -> i64 {
    match v {
        Some(Value::Int(i)) => *i,
        o => panic!("expected an integer, got {o:?}"),
    }
}

fn text(v: Option<&Value>) -> String {
    match v {
        Some(Value::Text(t)) => t.clone(),
        o => panic!("expected text, got {o:?}"),
    }
}

fn arm_wait(key: &str) {
    global().add(key, ":::", "wait", 0, "", false).unwrap();
}

/// Open a fresh database in a temp dir with `USE e2e`.
fn open(config: Config) -> (tempfile::TempDir, Database, Session) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), config).unwrap();
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE e2e");
    q(&mut s, "USE e2e");
    (dir, db, s)
}

fn knn_sql(col: &str, qv: &[f32], k: usize) -> String {
    format!(
        "SELECT id FROM t ORDER BY l2_distance({col}, '{}') LIMIT {k}",
        vlit(qv)
    )
}

// ---------------------------------------------------------------- test 1

#[test]
fn hnsw_recall_at_10_on_10k_random_128d() {
    let _g = FaultGuard::enable();
    const N: i64 = 10_000;
    const DIMS: usize = 128;
    const BATCH: i64 = 200;
    let t0 = Instant::now();
    let (_dir, db, mut s) = open(cfg());
    q(
        &mut s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, v VECF32(128))",
    );
    let mut rng = Rng::new(0x5EED_0001);
    let mut rows: HashMap<i64, Vec<f32>> = HashMap::new();
    let mut insert = |s: &mut Session, rows: &mut HashMap<i64, Vec<f32>>, from: i64| {
        let mut vals = Vec::with_capacity(BATCH as usize);
        for id in from..from + BATCH {
            let v = rng.vector(DIMS);
            vals.push(format!("({id},'{}')", vlit(&v)));
            rows.insert(id, v);
        }
        q(s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    };
    let mut next = 1;
    while next <= N / 2 {
        insert(&mut s, &mut rows, next);
        next += BATCH;
    }
    q(
        &mut s,
        "CREATE INDEX idx USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    while next <= N {
        insert(&mut s, &mut rows, next);
        next += BATCH;
    }
    assert_eq!(rows.len(), N as usize);
    println!("inserted {N} rows in {} ms", t0.elapsed().as_millis());
    wait_caught_up(&db, &["idx"], Duration::from_secs(90));
    let st = status_of(&mut s, "idx");
    assert_eq!(int(st.get("lag_ts")), 0, "{st:?}");
    assert!(int(st.get("rows_applied")) >= N, "{st:?}");
    assert_eq!(text(st.get("stage")), "incremental");
    println!("index caught up after {} ms", t0.elapsed().as_millis());

    q(&mut s, "SET fast_search = 1");
    let probe = rng.vector(DIMS);
    let plan = q(&mut s, &format!("EXPLAIN {}", knn_sql("v", &probe, 10)));
    let plan_text = format!("{plan:?}");
    assert!(
        plan_text.contains("Vector Index Search"),
        "EXPLAIN: {plan_text}"
    );
    let queries = 100;
    let mut hits = 0usize;
    for _ in 0..queries {
        let qv = rng.vector(DIMS);
        let got: HashSet<i64> = ids(&q(&mut s, &knn_sql("v", &qv, 10)))
            .into_iter()
            .collect();
        let want = brute_top(&rows, &qv, 10);
        hits += want.iter().filter(|id| got.contains(id)).count();
    }
    let recall = hits as f64 / (queries * 10) as f64;
    println!(
        "HNSW mean recall@10 = {recall:.4} over {queries} queries (total {} ms)",
        t0.elapsed().as_millis()
    );
    assert!(recall >= 0.95, "mean recall@10 {recall:.4} < 0.95");
}

// ---------------------------------------------------------------- test 2

fn vocab(n: usize) -> Vec<String> {
    const SYL: [&str; 10] = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "pu"];
    (0..n)
        .map(|i| {
            format!(
                "{}{}{}",
                SYL[i % 10],
                SYL[(i / 10) % 10],
                SYL[(i * 7 + 3) % 10]
            )
        })
        .collect()
}

#[test]
fn fulltext_equals_brute_force_term_match() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = open(cfg());
    q(&mut s, "CREATE TABLE d (id BIGINT PRIMARY KEY, body TEXT)");
    let words = vocab(50);
    assert_eq!(words.iter().collect::<HashSet<_>>().len(), 50);
    let mut rng = Rng::new(0x5EED_0002);
    let mut docs: HashMap<i64, HashSet<String>> = HashMap::new();
    for chunk in 0..10 {
        let mut vals = Vec::new();
        for id in chunk * 100 + 1..=chunk * 100 + 100 {
            let len = 3 + rng.below(8);
            let ws: Vec<&str> = (0..len).map(|_| words[rng.below(50)].as_str()).collect();
            // Mixed case: the analyzer lower-cases.
            let body = ws
                .iter()
                .enumerate()
                .map(|(i, w)| {
                    if i % 3 == 0 {
                        w.to_uppercase()
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ");
            docs.insert(
                id,
                body.split_whitespace().map(|w| w.to_lowercase()).collect(),
            );
            vals.push(format!("({id},'{body}')"));
        }
        q(&mut s, &format!("INSERT INTO d VALUES {}", vals.join(",")));
    }
    q(&mut s, "CREATE FULLTEXT INDEX ft ON d(body) ASYNC");
    wait_caught_up(&db, &["ft"], WAIT);

    let brute = |pred: &dyn Fn(&HashSet<String>) -> bool| -> BTreeSet<i64> {
        docs.iter()
            .filter(|(_, ws)| pred(ws))
            .map(|(id, _)| *id)
            .collect()
    };
    for fast in [false, true] {
        q(&mut s, &format!("SET fast_search = {}", u8::from(fast)));
        let mut rng = Rng::new(0x5EED_0003);
        for i in 0..30 {
            let terms: Vec<String> = (0..1 + i % 2)
                .map(|_| words[rng.below(50)].clone())
                .collect();
            let query = terms.join(" ");
            let got = id_set(&q(
                &mut s,
                &format!("SELECT id FROM d WHERE MATCH(body) AGAINST('{query}')"),
            ));
            let want = brute(&|ws| terms.iter().any(|t| ws.contains(t)));
            assert!(!want.is_empty());
            assert_eq!(got, want, "natural query '{query}' (fast_search={fast})");
        }
        for _ in 0..10 {
            let a = words[rng.below(50)].clone();
            let mut b = words[rng.below(50)].clone();
            while b == a {
                b = words[rng.below(50)].clone();
            }
            let got = id_set(&q(
                &mut s,
                &format!("SELECT id FROM d WHERE MATCH(body) AGAINST('+{a} -{b}' IN BOOLEAN MODE)"),
            ));
            let want = brute(&|ws| ws.contains(&a) && !ws.contains(&b));
            assert_eq!(got, want, "boolean query '+{a} -{b}' (fast_search={fast})");
        }
    }
    q(&mut s, "SET fast_search = 0");
    let w = &words[7];
    let rows = q(
        &mut s,
        &format!(
            "SELECT id, MATCH(body) AGAINST('{w}') AS s FROM d WHERE MATCH(body) AGAINST('{w}') ORDER BY s DESC"
        ),
    );
    let want = brute(&|ws| ws.contains(w));
    assert_eq!(id_set(&rows), want, "scored query for {w}");
    let scores: Vec<f64> = rows
        .iter()
        .map(|r| match r.get(1) {
            Some(Value::Float(f)) => *f,
            o => panic!("score {o:?}"),
        })
        .collect();
    assert!(scores.iter().all(|x| *x > 0.0), "scores {scores:?}");
    assert!(
        scores.windows(2).all(|p| p[0] >= p[1]),
        "scores not descending: {scores:?}"
    );
}

// ---------------------------------------------------------------- test 3

/// `t (id, body, v VECF32(dims))` with `n` random rows; body of row i is
/// "orig{i} common".
fn vec_text_table(s: &mut Session, rng: &mut Rng, n: i64, dims: usize) -> HashMap<i64, Vec<f32>> {
    q(
        s,
        &format!("CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32({dims}))"),
    );
    let mut rows = HashMap::new();
    let mut vals = Vec::new();
    for id in 1..=n {
        let v = rng.vector(dims);
        vals.push(format!("({id},'orig{id} common','{}')", vlit(&v)));
        rows.insert(id, v);
    }
    q(s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    rows
}

fn match_ids(s: &mut Session, word: &str) -> BTreeSet<i64> {
    id_set(&q(
        s,
        &format!("SELECT id FROM t WHERE MATCH(body) AGAINST('{word}')"),
    ))
}

#[test]
fn updates_and_deletes_reflected() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = open(cfg());
    let mut rng = Rng::new(0x5EED_0004);
    let mut rows = vec_text_table(&mut s, &mut rng, 200, 8);
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
    wait_caught_up(&db, &["idx_v", "ft"], WAIT);
    let old7 = rows[&7].clone();
    let old9 = rows[&9].clone();
    let new7 = vec![5.0f32; 8];
    q(
        &mut s,
        &format!(
            "UPDATE t SET v = '{}', body = 'renamed7 common' WHERE id = 7",
            vlit(&new7)
        ),
    );
    q(&mut s, "DELETE FROM t WHERE id = 9");
    rows.insert(7, new7.clone());
    rows.remove(&9);
    wait_caught_up(&db, &["idx_v", "ft"], WAIT);
    for fast in [true, false] {
        q(&mut s, &format!("SET fast_search = {}", u8::from(fast)));
        let top = ids(&q(&mut s, &knn_sql("v", &new7, 1)));
        assert_eq!(
            top,
            vec![7],
            "updated row at its new position (fast={fast})"
        );
        let near_old = ids(&q(&mut s, &knn_sql("v", &old7, 10)));
        assert!(
            !near_old.contains(&7),
            "row 7 still found at its old position (fast={fast}): {near_old:?}"
        );
        assert_eq!(near_old, brute_top(&rows, &old7, 10), "fast={fast}");
        let near9 = ids(&q(&mut s, &knn_sql("v", &old9, 10)));
        assert!(
            !near9.contains(&9),
            "deleted row 9 returned (fast={fast}): {near9:?}"
        );
        assert_eq!(near9, brute_top(&rows, &old9, 10), "fast={fast}");
        assert!(match_ids(&mut s, "orig7").is_empty(), "fast={fast}");
        assert_eq!(match_ids(&mut s, "renamed7"), BTreeSet::from([7]));
        assert!(match_ids(&mut s, "orig9").is_empty(), "fast={fast}");
        let common = match_ids(&mut s, "common");
        assert_eq!(common.len(), 199, "fast={fast}");
        assert!(!common.contains(&9));
    }
}

// ---------------------------------------------------------------- test 4

#[test]
fn two_hnsw_and_fulltext_advance_independently() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = open(cfg());
    q(
        &mut s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32(4), w VECF32(4))",
    );
    let mut rng = Rng::new(0x5EED_0005);
    let mut row = |id: i64| {
        format!(
            "({id},'tok{id} common','{}','{}')",
            vlit(&rng.vector(4)),
            vlit(&rng.vector(4))
        )
    };
    let vals: Vec<String> = (1..=20).map(&mut row).collect();
    q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    q(
        &mut s,
        "CREATE INDEX idx_w USING HNSW ON t(w) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
    wait_caught_up(&db, &["idx_v", "idx_w", "ft"], WAIT);
    let table = job(&db, "idx_v").key.table_id;
    let wm_v0 = job(&db, "idx_v").watermark;

    let key = "fj/iscp/cancel/long/hnsw-before-update:idx_v";
    arm_wait(key);
    let vals: Vec<String> = (21..=25).map(&mut row).collect();
    let ts_a = write_ts(
        &db,
        &mut s,
        table,
        &format!("INSERT INTO t VALUES {}", vals.join(",")),
    );
    wait_waiters(key, WAIT);
    wait_until("idx_w and ft pass batch A", WAIT, || {
        job(&db, "idx_w").watermark >= ts_a && job(&db, "ft").watermark >= ts_a
    });
    assert_eq!(job(&db, "idx_v").watermark, wm_v0, "idx_v is stalled");

    for round in 0..3 {
        let from = 26 + round * 5;
        let vals: Vec<String> = (from..from + 5).map(&mut row).collect();
        let ts_b = write_ts(
            &db,
            &mut s,
            table,
            &format!("INSERT INTO t VALUES {}", vals.join(",")),
        );
        let advanced = holds_within(Duration::from_secs(10), || {
            job(&db, "idx_w").watermark >= ts_b && job(&db, "ft").watermark >= ts_b
        });
        let (w, f, v) = (job(&db, "idx_w"), job(&db, "ft"), job(&db, "idx_v"));
        assert!(
            advanced,
            "round {round}: siblings did not pass ts {ts_b} while idx_v is stalled: \
             idx_w wm {}, ft wm {}, idx_v wm {}",
            w.watermark, f.watermark, v.watermark
        );
        assert!(v.watermark < ts_a, "idx_v must not advance while stalled");
        assert!(point(key).is_some_and(|p| p.waiters >= 1));
    }
    remove_all_points();
    wait_caught_up(&db, &["idx_v", "idx_w", "ft"], WAIT);
    q(&mut s, "SET fast_search = 1");
    assert_eq!(match_ids(&mut s, "common").len(), 40);
}

// ---------------------------------------------------------------- test 5

#[test]
fn fresh_by_default_with_stalled_consumer() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = open(cfg());
    let mut rng = Rng::new(0x5EED_0006);
    let rows = vec_text_table(&mut s, &mut rng, 100, 8);
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
    wait_caught_up(&db, &["idx_v", "ft"], WAIT);
    let table = job(&db, "idx_v").key.table_id;
    let kv = "fj/iscp/cancel/long/before-send:idx_v";
    let kf = "fj/iscp/cancel/long/before-send:ft";
    arm_wait(kv);
    arm_wait(kf);
    let qv = vec![-1.0f32; 8];
    let close: Vec<f32> = qv.iter().map(|x| x + 0.01).collect();
    assert!(brute_top(&rows, &qv, 1)[0] != 1000);
    let ts = write_ts(
        &db,
        &mut s,
        table,
        &format!(
            "INSERT INTO t VALUES (1000,'zebracorn common','{}')",
            vlit(&close)
        ),
    );
    // Default settings: the fresh tail is merged.
    assert_eq!(ids(&q(&mut s, &knn_sql("v", &qv, 1))), vec![1000]);
    assert_eq!(match_ids(&mut s, "zebracorn"), BTreeSet::from([1000]));
    let (jv, jf) = (job(&db, "idx_v"), job(&db, "ft"));
    assert!(
        jv.watermark < ts && jf.watermark < ts,
        "consumers must still be stalled: idx_v wm {}, ft wm {}, insert ts {ts}",
        jv.watermark,
        jf.watermark
    );
    // Index only: the stalled indexes do not have the row.
    q(&mut s, "SET fast_search = 1");
    let top = ids(&q(&mut s, &knn_sql("v", &qv, 1)));
    assert_eq!(top, brute_top(&rows, &qv, 1), "index-only answer");
    assert!(match_ids(&mut s, "zebracorn").is_empty());
    assert!(job(&db, "idx_v").watermark < ts);
    remove_all_points();
    wait_caught_up(&db, &["idx_v", "ft"], WAIT);
    assert_eq!(ids(&q(&mut s, &knn_sql("v", &qv, 1))), vec![1000]);
    assert_eq!(match_ids(&mut s, "zebracorn"), BTreeSet::from([1000]));
}

/// `(id, MATCH score)` of every row matching `against`, best first.
fn scored(s: &mut Session, sql: &str) -> Vec<(i64, f64)> {
    q(s, sql)
        .iter()
        .map(|r| match (r.first(), r.get(1)) {
            (Some(Value::Int(id)), Some(Value::Float(x))) => (*id, *x),
            o => panic!("expected (id, score), got {o:?}"),
        })
        .collect()
}

fn assert_same_scores(what: &str, got: &[(i64, f64)], want: &[(i64, f64)]) {
    let ids = |v: &[(i64, f64)]| v.iter().map(|(i, _)| *i).collect::<Vec<_>>();
    assert_eq!(ids(got), ids(want), "{what}: rows or their order");
    for ((id, a), (_, b)) in got.iter().zip(want) {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs().max(1.0),
            "{what}: row {id} scored {a}, expected {b}"
        );
    }
}

/// MATCH scores share one scale whatever answers them (issue 14, item 2):
/// rows in an ASYNC full-text index's fresh tail score exactly what they
/// score once the index has them (BM25 against the view's statistics plus
/// the tail's), so ORDER BY relevance interleaves tail and index rows
/// correctly; and the exact path (a join) scores the same BM25 with the
/// table as its corpus.
#[test]
fn fulltext_scores_share_one_scale_across_index_tail_and_exact_paths() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = open(cfg());
    let mut rng = Rng::new(0x5EED_0014);
    let words = ["alpha", "beta", "gamma", "delta", "omega"];
    q(&mut s, "CREATE TABLE p (id BIGINT PRIMARY KEY, body TEXT)");
    q(&mut s, "CREATE TABLE o (id BIGINT PRIMARY KEY)");
    let mut vals = Vec::new();
    for id in 1..=200 {
        let len = 2 + rng.below(12);
        let body: Vec<&str> = (0..len).map(|_| words[rng.below(words.len())]).collect();
        vals.push(format!("({id},'{}')", body.join(" ")));
    }
    q(&mut s, &format!("INSERT INTO p VALUES {}", vals.join(",")));
    q(&mut s, "CREATE FULLTEXT INDEX ft ON p(body) ASYNC");
    wait_caught_up(&db, &["ft"], WAIT);
    let table = job(&db, "ft").key.table_id;
    arm_wait("fj/iscp/cancel/long/before-send:ft");
    // New rows the stalled index does not have: a very good match, a
    // middling one and a poor one for the queries below.
    let ts = write_ts(
        &db,
        &mut s,
        table,
        "INSERT INTO p VALUES (1001,'alpha alpha beta'),(1002,'beta gamma delta omega omega'),\
         (1003,'omega delta delta gamma gamma omega alpha delta gamma omega omega delta')",
    );
    q(&mut s, "INSERT INTO o SELECT id FROM p");
    let queries = [
        "alpha beta",
        "+alpha -omega",
        "\"gamma delta\" alpha",
        "(beta gamma) >omega",
    ];
    let sql = |against: &str, limit: &str| {
        let mode = if against.contains(['+', '-', '"', '(']) {
            " IN BOOLEAN MODE"
        } else {
            ""
        };
        format!(
            "SELECT id, MATCH(body) AGAINST('{against}'{mode}) AS r FROM p \
             WHERE MATCH(body) AGAINST('{against}'{mode}) ORDER BY r DESC, id{limit}"
        )
    };
    let join = |against: &str| {
        let mode = if against.contains(['+', '-', '"', '(']) {
            " IN BOOLEAN MODE"
        } else {
            ""
        };
        format!(
            "SELECT p.id, MATCH(p.body) AGAINST('{against}'{mode}) AS r FROM p JOIN o ON o.id = p.id \
             WHERE MATCH(p.body) AGAINST('{against}'{mode}) ORDER BY r DESC, p.id"
        )
    };
    let mut during = Vec::new();
    for against in queries {
        let all = scored(&mut s, &sql(against, ""));
        let top = scored(&mut s, &sql(against, " LIMIT 5"));
        assert!(
            all.iter().any(|(id, _)| *id > 1000),
            "{against}: a tail row must match"
        );
        during.push((all, top));
    }
    assert!(
        job(&db, "ft").watermark < ts,
        "the index must still be stalled while the tail is scored"
    );
    remove_all_points();
    wait_caught_up(&db, &["ft"], WAIT);
    for (against, (all, top)) in queries.into_iter().zip(during) {
        let after = scored(&mut s, &sql(against, ""));
        assert_same_scores(&format!("{against}: tail vs indexed"), &all, &after);
        let after_top = scored(&mut s, &sql(against, " LIMIT 5"));
        assert_same_scores(&format!("{against}: top 5"), &top, &after_top);
        let exact = scored(&mut s, &join(against));
        assert_same_scores(&format!("{against}: exact vs indexed"), &exact, &after);
    }
}

/// The base position of `name`'s index as this CN's memory knows it.
/// Call `insert(i)` for i = 0, 1, … until a base writer waits at fault
/// point `key` (armed by the caller); returns how many inserts that took.
fn until_base_writer_parks(key: &str, mut insert: impl FnMut(usize)) -> usize {
    let mut inserted = 0;
    while point(key).is_none_or(|p| p.waiters == 0) {
        insert(inserted);
        inserted += 1;
        assert!(
            inserted < 400,
            "no base writer started after {inserted} inserts"
        );
    }
    inserted
}

/// What [`with_async_hnsw`] opens: the data directory, the database, a
/// session in `e2e`, the row generator and the rows.
type HnswFixture = (
    tempfile::TempDir,
    Database,
    Session,
    Rng,
    HashMap<i64, Vec<f32>>,
);

/// A fresh database with `t` (100 rows of 8-d vectors, `vec_text_table`)
/// and an ASYNC HNSW index `idx_v` on it that has caught up; the generator
/// and the rows.
fn with_async_hnsw(config: Config, seed: u64) -> HnswFixture {
    let (dir, db, mut s) = open(config);
    let mut rng = Rng::new(seed);
    let rows = vec_text_table(&mut s, &mut rng, 100, 8);
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    wait_caught_up(&db, &["idx_v"], WAIT);
    (dir, db, s, rng, rows)
}

/// Close `db` (and its session), open the same directory again in `e2e`
/// and wait until `indexes` have caught up.
fn restart(
    dir: &tempfile::TempDir,
    config: Config,
    (db, s): (Database, Session),
    indexes: &[&str],
) -> (Database, Session) {
    drop(s);
    drop(db);
    let db = Database::open_with(dir.path(), config).unwrap();
    let mut s = db.session();
    q(&mut s, "USE e2e");
    wait_caught_up(&db, indexes, WAIT);
    (db, s)
}

fn base_ts(db: &Database, name: &str) -> u64 {
    let id = job(db, name).key.job_id;
    db.engine()
        .iscp
        .cached(id)
        .map(|h| h.read().base_ts)
        .unwrap_or(0)
}

/// Issue 16, item 1: a base (checkpoint) is written beside the job's units,
/// never by them. With a base writer parked after writing its chunks and
/// before installing them, steady inserts keep reaching the watermark one
/// unit at a time; once released, the base is installed at the position it
/// was serialized at, a restart loads it plus the change log after it and
/// the index equals the table; and a DROP while a base is in flight cancels
/// and drains the writer with the unit (nothing left behind).
#[test]
fn a_checkpoint_in_flight_never_stops_the_watermark() {
    let _g = FaultGuard::enable();
    let config = Config {
        index_checkpoint_changes: 20,
        ..cfg()
    };
    let (dir, db, mut s, mut rng, mut rows) = with_async_hnsw(config.clone(), 0x5EED_0161);
    let table = job(&db, "idx_v").key.table_id;
    let key = "fj/iscp/cancel/base-before-install:idx_v";
    arm_wait(key);
    let built_base = base_ts(&db, "idx_v");
    // One unit takes an interval (20 ms here) plus its work: a row must be
    // applied well within this, whatever the base writer is doing.
    let unit_bound = Duration::from_secs(2);
    let mut next_id = 1000;
    let mut insert = |s: &mut Session, rows: &mut HashMap<i64, Vec<f32>>| {
        let v = rng.vector(8);
        let ts = write_ts(
            &db,
            s,
            table,
            &format!(
                "INSERT INTO t VALUES ({next_id},'new{next_id}','{}')",
                vlit(&v)
            ),
        );
        rows.insert(next_id, v);
        next_id += 1;
        let t0 = Instant::now();
        wait_until(
            &format!("watermark reaches the insert at {ts}"),
            unit_bound,
            || job(&db, "idx_v").watermark >= ts,
        );
        t0.elapsed()
    };
    // Steady inserts until a base is due (the index has 100 rows: 50
    // changes) and its writer is parked before the install.
    until_base_writer_parks(key, |_| {
        insert(&mut s, &mut rows);
    });
    assert!(db
        .engine()
        .iscp
        .runtime
        .is_writing_base(job(&db, "idx_v").key.job_id));
    // A base is in flight: the units go on.
    let mut slowest = Duration::ZERO;
    for _ in 0..40 {
        slowest = slowest.max(insert(&mut s, &mut rows));
    }
    println!("slowest insert-to-watermark with a base in flight: {slowest:?}");
    assert!(
        point(key).is_some_and(|p| p.waiters == 1),
        "the writer stays parked"
    );
    assert_eq!(base_ts(&db, "idx_v"), built_base, "nothing installed yet");
    let in_flight_wm = job(&db, "idx_v").watermark;
    remove_all_points();
    wait_until("the base is installed", WAIT, || {
        base_ts(&db, "idx_v") > built_base
    });
    let installed = base_ts(&db, "idx_v");
    assert!(
        installed < in_flight_wm,
        "the base is at the position it was serialized at ({installed}), \
         behind the units that ran meanwhile ({in_flight_wm})"
    );
    // Restart: base + change log after it.
    let (db, mut s) = restart(&dir, config, (db, s), &["idx_v"]);
    q(&mut s, "SET fast_search = 1");
    let mut missed = Vec::new();
    for (id, v) in &rows {
        if ids(&q(&mut s, &knn_sql("v", v, 1))) != vec![*id] {
            missed.push(*id);
        }
    }
    assert!(
        missed.is_empty(),
        "rows not found by the reloaded index: {missed:?}"
    );
    // A DROP while a base is in flight.
    arm_wait(key);
    until_base_writer_parks(key, |i| {
        let id = 5000 + i;
        q(
            &mut s,
            &format!("INSERT INTO t VALUES ({id},'d{id}','{}')", vlit(&[0.5; 8])),
        );
        wait_until("the insert is applied", unit_bound, || {
            caught_up(&db, "idx_v")
        });
    });
    let j = job(&db, "idx_v");
    let t0 = Instant::now();
    q(&mut s, "DROP INDEX idx_v ON t");
    assert!(
        t0.elapsed() < Duration::from_secs(1),
        "DROP took {:?}",
        t0.elapsed()
    );
    let rt = db.engine().iscp.runtime.clone();
    wait_until("the dropped job is drained and finalized", WAIT, || {
        rt.tasks_for_job(j.key.job_id).is_empty()
            && !rt.is_writing_base(j.key.job_id)
            && !rt.is_fenced(j.key.job_id)
    });
    assert_eq!(hidden_count(&db, j.spec.storage_id), 0, "hidden table left");
    remove_all_points();
}

/// A full-text index's base is copied from its committed files without
/// the index's write lock (decision 013, issue 16 item 1): while a base is
/// in flight, units go on and searches answer; the base it installs
/// reloads to every row after a restart.
#[test]
fn a_full_text_base_in_flight_stops_neither_units_nor_searches() {
    let _g = FaultGuard::enable();
    let config = Config {
        index_checkpoint_changes: 20,
        ..cfg()
    };
    let (dir, db, mut s) = open(config.clone());
    let mut rng = Rng::new(0x5EED_0162);
    vec_text_table(&mut s, &mut rng, 100, 4);
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
    wait_caught_up(&db, &["ft"], WAIT);
    let table = job(&db, "ft").key.table_id;
    let key = "fj/iscp/cancel/base-before-install:ft";
    arm_wait(key);
    let built_base = base_ts(&db, "ft");
    let unit_bound = Duration::from_secs(2);
    let mut next_id = 1000;
    let mut insert = |s: &mut Session| {
        let ts = write_ts(
            &db,
            s,
            table,
            &format!("INSERT INTO t VALUES ({next_id},'new{next_id} common',NULL)"),
        );
        next_id += 1;
        wait_until(
            &format!("watermark reaches the insert at {ts}"),
            unit_bound,
            || job(&db, "ft").watermark >= ts,
        );
    };
    let inserted = until_base_writer_parks(key, |_| insert(&mut s));
    // A base is in flight: units apply and searches answer.
    for _ in 0..20 {
        insert(&mut s);
    }
    q(&mut s, "SET fast_search = 1");
    assert_eq!(
        match_ids(&mut s, "common").len(),
        100 + inserted + 20,
        "a search while the base is in flight"
    );
    assert_eq!(base_ts(&db, "ft"), built_base, "nothing installed yet");
    remove_all_points();
    wait_until("the base is installed", WAIT, || {
        base_ts(&db, "ft") > built_base
    });
    let (_db, mut s) = restart(&dir, config, (db, s), &["ft"]);
    q(&mut s, "SET fast_search = 1");
    assert_eq!(match_ids(&mut s, "common").len(), 100 + inserted + 20);
    for id in [1, 50, 1000, 1000 + inserted as i64 + 19] {
        let word = if id < 1000 {
            format!("orig{id}")
        } else {
            format!("new{id}")
        };
        assert_eq!(match_ids(&mut s, &word), BTreeSet::from([id]), "{word}");
    }
    remove_all_points();
}

// ---------------------------------------------------------------- test 6

#[test]
fn wait_fresh_setting_waits_for_catch_up() {
    let _g = FaultGuard::enable();
    let config = cfg();
    let drop_wait = config.drop_wait;
    let (_dir, db, mut s) = open(config);
    let mut rng = Rng::new(0x5EED_0007);
    let _rows = vec_text_table(&mut s, &mut rng, 100, 8);
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    wait_caught_up(&db, &["idx_v"], WAIT);
    let table = job(&db, "idx_v").key.table_id;
    q(&mut s, "SET iscp_wait_fresh = 1");
    for (round, fast) in [(0, false), (1, true)] {
        q(&mut s, &format!("SET fast_search = {}", u8::from(fast)));
        let id = 2000 + round;
        let qv = vec![-3.0f32 - round as f32; 8];
        let ts = write_ts(
            &db,
            &mut s,
            table,
            &format!("INSERT INTO t VALUES ({id},'new{id}','{}')", vlit(&qv)),
        );
        let t0 = Instant::now();
        let top = ids(&q(&mut s, &knn_sql("v", &qv, 1)));
        let took = t0.elapsed();
        let wm = job(&db, "idx_v").watermark;
        println!(
            "wait_fresh query (fast_search={fast}) took {} ms",
            took.as_millis()
        );
        assert_eq!(top, vec![id], "fast_search={fast}");
        assert!(
            wm >= ts,
            "query returned before the index reached {ts} (wm {wm})"
        );
        assert!(
            took < drop_wait,
            "the wait ran into its bound ({took:?}): it did not see the catch-up"
        );
    }
}

// ---------------------------------------------------------------- test 7

#[test]
fn initial_build_on_prefilled_table() {
    let _g = FaultGuard::enable();
    const N: i64 = 3000;
    let config = Config {
        iscp_max_batch: 250,
        ..cfg()
    };
    let (_dir, db, mut s) = open(config);
    q(
        &mut s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, k INT, body TEXT, v VECF32(8))",
    );
    let words = vocab(30);
    let mut rng = Rng::new(0x5EED_0008);
    let mut vecs: HashMap<i64, Vec<f32>> = HashMap::new();
    let mut docs: HashMap<i64, HashSet<String>> = HashMap::new();
    for chunk in 0..(N / 500) {
        let mut vals = Vec::new();
        for id in chunk * 500 + 1..=chunk * 500 + 500 {
            let v = rng.vector(8);
            let ws: Vec<String> = (0..3).map(|_| words[rng.below(30)].clone()).collect();
            vals.push(format!(
                "({id},{},'{}','{}')",
                id % 100,
                ws.join(" "),
                vlit(&v)
            ));
            vecs.insert(id, v);
            docs.insert(id, ws.into_iter().collect());
        }
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
    q(&mut s, "CREATE INDEX b ON t(k) ASYNC");
    let names = ["idx_v", "ft", "b"];
    let mut seen: HashMap<&str, BTreeSet<String>> = HashMap::new();
    let mut intermediate = 0usize;
    let mut checks = 0usize;
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let mut all_done = true;
        for n in names {
            let st = status_of(&mut s, n);
            let p = text(st.get("progress"));
            if p != "done" {
                all_done = false;
                let (done, total) = p
                    .split_once('/')
                    .unwrap_or_else(|| panic!("progress text {p:?}"));
                let (done, total): (i64, i64) = (done.parse().unwrap(), total.parse().unwrap());
                assert!(done <= N && (total == N || total == 0), "{n}: {p}");
                if done > 0 && done < N {
                    intermediate += 1;
                }
            }
            seen.entry(n).or_default().insert(p);
        }
        // Queries during the build are exact.
        if checks < 6 {
            checks += 1;
            let qv = rng.vector(8);
            assert_eq!(
                ids(&q(&mut s, &knn_sql("v", &qv, 5))),
                brute_top(&vecs, &qv, 5),
                "k-NN during the build"
            );
            let w = words[rng.below(30)].clone();
            let want: BTreeSet<i64> = docs
                .iter()
                .filter(|(_, ws)| ws.contains(&w))
                .map(|(id, _)| *id)
                .collect();
            assert_eq!(match_ids(&mut s, &w), want, "MATCH during the build");
            let k = rng.below(100) as i64;
            let want: BTreeSet<i64> = (1..=N).filter(|id| id % 100 == k).collect();
            assert_eq!(
                id_set(&q(&mut s, &format!("SELECT id FROM t WHERE k = {k}"))),
                want
            );
        }
        if all_done {
            break;
        }
        assert!(Instant::now() < deadline, "build not done: {seen:?}");
        std::thread::park_timeout(ms(5));
    }
    println!("progress texts seen: {seen:?}; intermediate observations: {intermediate}");
    for n in names {
        assert!(seen[n].contains("done"));
        let j = job(&db, n);
        assert_eq!(j.status.build_done, N as u64, "{n}");
        assert_eq!(j.status.build_total, N as u64, "{n}");
    }
    wait_caught_up(&db, &names, WAIT);
    let b = job(&db, "b");
    assert_eq!(hidden_count(&db, b.spec.storage_id), N as usize);
    q(&mut s, "SET fast_search = 1");
    let qv = rng.vector(8);
    let got = ids(&q(&mut s, &knn_sql("v", &qv, 5)));
    assert_eq!(got[0], brute_top(&vecs, &qv, 1)[0]);
    let w = words[3].clone();
    let want: BTreeSet<i64> = docs
        .iter()
        .filter(|(_, ws)| ws.contains(&w))
        .map(|(id, _)| *id)
        .collect();
    assert_eq!(match_ids(&mut s, &w), want);
}

// ---------------------------------------------------------------- test 8

const CRASH_DIMS: usize = 8;

fn crash_vec(id: i64, version: i64) -> Vec<f32> {
    let mut r = Rng::new(((id as u64) << 20) ^ (version as u64) ^ 0xC0FFEE);
    r.vector(CRASH_DIMS)
}

/// Child side of [`crash_during_propagation_then_restart`]: writes until it
/// is killed (or a bound is reached). Passes at once without the env var.
#[test]
#[ignore = "child process of crash_during_propagation_then_restart"]
fn crash_child_writer() {
    let Some(dir) = std::env::var_os(CRASH_ENV) else {
        return;
    };
    let db = Database::open_with(Path::new(&dir), cfg()).unwrap();
    let mut s = db.session();
    if s.execute("USE e2e").is_err() {
        q(&mut s, "CREATE DATABASE e2e");
        q(&mut s, "USE e2e");
        q(
            &mut s,
            "CREATE TABLE t (id BIGINT PRIMARY KEY, k INT, body TEXT, v VECF32(8), tag TEXT)",
        );
        q(
            &mut s,
            "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
        );
        q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body) ASYNC");
        q(&mut s, "CREATE INDEX b ON t(k) ASYNC");
        // Synchronous twins, written by the writer's own transactions.
        q(
            &mut s,
            "CREATE INDEX idx_sv USING HNSW ON t(v) OP_TYPE 'vector_cosine_ops'",
        );
        q(&mut s, "CREATE FULLTEXT INDEX fts ON t(tag)");
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut n = 0i64;
    let mut id = 0i64;
    while n < 100_000 && Instant::now() < deadline {
        id += 1;
        let sql = match id % 5 {
            3 if id > 2 => {
                let u = id - 1;
                format!(
                    "UPDATE t SET v = '{}', body = 'u{u} ver{id} common', k = {}, tag = 's{u} t{id}' WHERE id = {u}",
                    vlit(&crash_vec(u, id)),
                    id % 17
                )
            }
            4 if id > 3 => format!("DELETE FROM t WHERE id = {}", id - 3),
            _ => format!(
                "INSERT INTO t VALUES ({id},{},'u{id} ver0 common','{}','s{id} t0')",
                id % 17,
                vlit(&crash_vec(id, 0))
            ),
        };
        q(&mut s, &sql);
        n += 1;
        println!("committed {n}");
    }
}

#[test]
fn crash_during_propagation_then_restart() {
    let _g = FaultGuard::enable();
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut child = Command::new(exe)
        .args([
            "--exact",
            "crash_child_writer",
            "--nocapture",
            "--ignored",
            "--test-threads=1",
        ])
        .env(CRASH_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::sync_channel::<u64>(1024);
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(n) = line.strip_prefix("committed ") {
                if let Ok(n) = n.trim().parse::<u64>() {
                    if tx.send(n).is_err() {
                        break;
                    }
                }
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut commits = 0u64;
    while commits < 50 {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(n) => commits = n,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("child stopped before 50 commits ({commits}): {e}");
            }
        }
    }
    child.kill().unwrap();
    let status = child.wait().unwrap();
    drop(rx);
    reader.join().unwrap();
    println!("killed the writer after {commits} commits ({status:?})");
    assert!(!status.success(), "the child must have been killed");

    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    q(&mut s, "USE e2e");
    q(&mut s, "SET fast_search = 1");
    let rows = q(&mut s, "SELECT id, v FROM t");
    assert!(rows.len() >= 20, "rows after the crash: {}", rows.len());
    let present: BTreeSet<i64> = id_set(&rows);
    let max_id = *present.iter().max().unwrap();
    // The synchronous indexes equal the table at once — before any
    // background work: their entries were committed with the rows.
    for r in &rows {
        let (Value::Int(id), Value::Vector(v)) = (&r[0], &r[1]) else {
            panic!("{r:?}");
        };
        let v: Vec<f32> = v.iter().map(|x| *x as f32).collect();
        let sql = format!(
            "SELECT id FROM t ORDER BY cosine_distance(v, '{}') LIMIT 1",
            vlit(&v)
        );
        assert_eq!(ids(&q(&mut s, &sql)), vec![*id], "sync HNSW, row {id}");
        let tag = format!("SELECT id FROM t WHERE MATCH(tag) AGAINST('s{id}')");
        assert_eq!(
            id_set(&q(&mut s, &tag)),
            BTreeSet::from([*id]),
            "sync FT, row {id}"
        );
    }
    for id in (1..=max_id).filter(|i| !present.contains(i)) {
        let tag = format!("SELECT id FROM t WHERE MATCH(tag) AGAINST('s{id}')");
        assert!(
            q(&mut s, &tag).is_empty(),
            "deleted row {id} in the sync FT index"
        );
    }
    let names = ["idx_v", "ft", "b"];
    wait_caught_up(&db, &names, WAIT);
    for r in &rows {
        let id = match &r[0] {
            Value::Int(v) => *v,
            o => panic!("{o:?}"),
        };
        let v: Vec<f32> = match &r[1] {
            Value::Vector(v) => v.iter().map(|x| *x as f32).collect(),
            o => panic!("{o:?}"),
        };
        assert_eq!(
            ids(&q(&mut s, &knn_sql("v", &v, 1))),
            vec![id],
            "HNSW lookup of row {id} by its own vector"
        );
        assert_eq!(
            match_ids(&mut s, &format!("u{id}")),
            BTreeSet::from([id]),
            "full-text lookup of row {id}"
        );
    }
    for id in 1..=max_id {
        if !present.contains(&id) {
            assert!(
                match_ids(&mut s, &format!("u{id}")).is_empty(),
                "deleted row {id} still in the full-text index"
            );
        }
    }
    assert_eq!(match_ids(&mut s, "common"), present);
    let b = job(&db, "b");
    assert_eq!(
        hidden_count(&db, b.spec.storage_id),
        rows.len(),
        "async B-tree entries vs table rows"
    );
    // The consistency checker agrees, for every vector/full-text index.
    for ix in ["idx_v", "ft", "idx_sv", "fts", "b"] {
        assert_index_consistent(&mut s, ix, "t");
    }
}

/// `CHECK INDEX` reports no missing, unreachable or stale entry.
fn assert_index_consistent(s: &mut Session, index: &str, table: &str) {
    let r = s
        .execute(&format!("CHECK INDEX {index} ON {table}"))
        .unwrap_or_else(|e| panic!("CHECK INDEX {index}: {e}"));
    let row = &r.rows[0];
    let status = row.last().cloned();
    assert_eq!(
        status,
        Some(Value::Text("OK".into())),
        "CHECK INDEX {index}: {:?}",
        r.columns
            .iter()
            .map(|c| &c.name)
            .zip(row)
            .collect::<Vec<_>>()
    );
}

// ---------------------------------------------------------------- test 9

#[test]
fn sync_index_read_your_writes() {
    let _g = FaultGuard::enable();
    let (_dir, _db, mut s) = open(cfg());
    let mut rng = Rng::new(0x5EED_0009);
    let _rows = vec_text_table(&mut s, &mut rng, 50, 8);
    q(
        &mut s,
        "CREATE INDEX i USING HNSW ON t(v) OP_TYPE 'vector_l2_ops'",
    );
    q(&mut s, "CREATE FULLTEXT INDEX ft ON t(body)");
    // Complete when CREATE returns: no waiting for any background work.
    q(&mut s, "SET fast_search = 1");
    for round in 0..5i64 {
        let id = 3000 + round;
        let qv = vec![-2.0f32 - round as f32; 8];
        q(
            &mut s,
            &format!(
                "INSERT INTO t VALUES ({id},'sync{id} common','{}')",
                vlit(&qv)
            ),
        );
        assert_eq!(
            ids(&q(&mut s, &knn_sql("v", &qv, 1))),
            vec![id],
            "round {round}: k-NN right after the INSERT"
        );
        assert_eq!(
            match_ids(&mut s, &format!("sync{id}")),
            BTreeSet::from([id]),
            "round {round}: MATCH right after the INSERT"
        );
    }
}

// ---------------------------------------------------------------- status

/// SHOW ISCP STATUS tells what a job is doing (issue 16, item 4): its
/// table by name; `building` with progress `0/<rows>` while the first
/// unit of a build is stalled (before it, the total is counted, not
/// `0/0`), `catching up` while changes wait behind a stalled incremental
/// consumer, and `current` once it has applied everything.
#[test]
fn iscp_status_reports_building_catching_up_and_current() {
    let _g = FaultGuard::enable();
    let (_dir, db, mut s) = open(cfg());
    let mut rng = Rng::new(0x5EED_0016);
    vec_text_table(&mut s, &mut rng, 300, 8);
    let key = "fj/iscp/cancel/long/hnsw-before-update:idx_v";
    arm_wait(key);
    q(
        &mut s,
        "CREATE INDEX idx_v USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    wait_waiters(key, WAIT);
    let st = status_of(&mut s, "idx_v");
    assert_eq!(text(st.get("db")), "e2e", "{st:?}");
    assert_eq!(text(st.get("table_name")), "t", "{st:?}");
    assert_eq!(text(st.get("phase")), "building", "{st:?}");
    assert_eq!(text(st.get("stage")), "init", "{st:?}");
    assert_eq!(text(st.get("progress")), "0/300", "{st:?}");
    remove_all_points();
    wait_caught_up(&db, &["idx_v"], WAIT);
    let st = status_of(&mut s, "idx_v");
    assert_eq!(text(st.get("phase")), "current", "{st:?}");
    assert_eq!(text(st.get("progress")), "done", "{st:?}");
    assert_eq!(int(st.get("lag_ts")), 0, "{st:?}");
    assert_eq!(int(st.get("lag_ms")), 0, "{st:?}");
    // The build's last unit wrote a base on this CN.
    assert!(text(st.get("last_checkpoint")).ends_with(" UTC"), "{st:?}");
    // A stalled incremental consumer with a change waiting behind it.
    let table = job(&db, "idx_v").key.table_id;
    let send = "fj/iscp/cancel/long/before-send:idx_v";
    arm_wait(send);
    write_ts(
        &db,
        &mut s,
        table,
        "INSERT INTO t VALUES (1000,'new','[1,1,1,1,1,1,1,1]')",
    );
    wait_waiters(send, WAIT);
    let st = status_of(&mut s, "idx_v");
    assert_eq!(text(st.get("phase")), "catching up", "{st:?}");
    assert!(int(st.get("lag_ts")) > 0, "{st:?}");
    // The waiting change ages: its lag in milliseconds grows.
    wait_until("lag_ms to reach 50 ms", WAIT, || {
        int(status_of(&mut s, "idx_v").get("lag_ms")) >= 50
    });
    remove_all_points();
    wait_caught_up(&db, &["idx_v"], WAIT);
    assert_eq!(text(status_of(&mut s, "idx_v").get("phase")), "current");
}

/// How many of `rows` the index (`fast_search = 1`, beam 400) returns as
/// their own vector's nearest row.
fn found_by_own_vector(s: &mut Session, rows: &HashMap<i64, Vec<f32>>) -> usize {
    q(s, "SET fast_search = 1");
    q(s, "SET hnsw_ef_search = 400");
    let found = rows
        .iter()
        .filter(|(id, v)| ids(&q(s, &knn_sql("v", v, 1))) == vec![**id])
        .count();
    q(s, "SET fast_search = 0");
    found
}

fn deferred_of(db: &Database, name: &str) -> usize {
    let id = job(db, name).key.job_id;
    db.engine()
        .iscp
        .cached(id)
        .map(|h| h.read().index.deferred())
        .unwrap_or(0)
}

/// Issue 16, item 2: an ASYNC HNSW unit puts its vectors in the index's
/// tail of deferred adds, which searches scan exactly, and the graph takes
/// them in after the unit, also once no more changes come (a 5 ms tick
/// here: the adds run a tick at a time). Every row is found by its own
/// vector through the index alone as soon as the job has applied it, while
/// the tail is still being added and after it is empty, and a restart
/// (whose base may carry a tail) finds them too.
#[test]
fn deferred_hnsw_adds_are_searchable_at_once_and_reach_the_graph() {
    let config = Config {
        iscp_interval: Duration::from_millis(5),
        index_checkpoint_changes: 3_000,
        ..cfg()
    };
    let (dir, db, mut s, mut rng, mut rows) = with_async_hnsw(config.clone(), 0x5EED_0162);
    for batch in 0..12i64 {
        let mut vals = Vec::new();
        for id in 1000 + batch * 1000..2000 + batch * 1000 {
            let v = rng.vector(8);
            vals.push(format!("({id},'new{id}','{}')", vlit(&v)));
            rows.insert(id, v);
        }
        q(&mut s, &format!("INSERT INTO t VALUES {}", vals.join(",")));
    }
    wait_caught_up(&db, &["idx_v"], WAIT);
    let tail_then = deferred_of(&db, "idx_v");
    assert!(
        tail_then > 0,
        "12,000 adds cannot all fit in the units' ticks"
    );
    let shown = int(status_of(&mut s, "idx_v").get("deferred"));
    assert!(shown > 0, "SHOW ISCP STATUS shows the tail: {shown}");
    let sample: HashMap<i64, Vec<f32>> = rows
        .iter()
        .filter(|(id, _)| *id % 40 == 0)
        .map(|(id, v)| (*id, v.clone()))
        .collect();
    assert_eq!(
        found_by_own_vector(&mut s, &sample),
        sample.len(),
        "with {tail_then} vectors deferred"
    );
    wait_until("the deferred adds reached the graph", WAIT, || {
        deferred_of(&db, "idx_v") == 0
    });
    assert_eq!(int(status_of(&mut s, "idx_v").get("deferred")), 0);
    assert_eq!(found_by_own_vector(&mut s, &sample), sample.len());
    let (_db, mut s) = restart(&dir, config, (db, s), &["idx_v"]);
    assert_eq!(found_by_own_vector(&mut s, &sample), sample.len());
}

// ---------------------------------------------------------------- change log on demand

/// Whether a change-log read of `table` from `from` reports it gone.
fn changes_gone(db: &Database, table: u64, from: u64) -> bool {
    let latest = db.engine().storage.latest_ts();
    match db
        .engine()
        .storage
        .changes(table, from, latest, None, usize::MAX)
    {
        Err(tributary_storage::StorageError::ChangesGone { .. }) => true,
        Ok(_) => false,
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// A user table no ISCP index reads stores no change log (a read of it
/// fails as after a GC: never an empty answer); CREATE INDEX of an HNSW
/// index switches it on before the index reads it, so the build and every
/// later write reach the index, and fresh search after a write finds it.
#[test]
fn a_table_keeps_a_change_log_once_an_iscp_index_reads_it() {
    let (_dir, db, mut s) = open(cfg());
    q(
        &mut s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, v VECF32(2))",
    );
    q(&mut s, "INSERT INTO t VALUES (1, '[0,0]'), (2, '[5,5]')");
    q(&mut s, "UPDATE t SET v = '[9,9]' WHERE id = 2");
    let table = {
        let mut txn = db.engine().storage.begin(Default::default()).unwrap();
        tributary::testing::require_table(txn.as_mut(), "e2e", "t", false)
            .unwrap()
            .id
    };
    assert!(
        changes_gone(&db, table, 0),
        "nothing stored, nothing claimed"
    );
    q(
        &mut s,
        "CREATE INDEX idx USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC",
    );
    let after_create = db.engine().storage.latest_ts();
    let w = write_ts(&db, &mut s, table, "INSERT INTO t VALUES (3, '[1,1]')");
    assert!(w > after_create);
    assert!(!changes_gone(&db, table, after_create));
    wait_caught_up(&db, &["idx"], Duration::from_secs(60));
    assert_eq!(
        ids(&q(&mut s, &knn_sql("v", &[0.0, 0.0], 3))),
        vec![1, 3, 2]
    );
    q(&mut s, "DELETE FROM t WHERE id = 1");
    assert_eq!(ids(&q(&mut s, &knn_sql("v", &[0.0, 0.0], 3))), vec![3, 2]);
}
