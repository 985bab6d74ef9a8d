//! SQL throughput through the library API, and ISCP propagation against the
//! raw libraries. Plain `std::time` measurement (harness = false); prints
//! one line per metric. Run: `cargo bench --bench sql`.
//!
//! Metrics: single-row autocommit inserts/s, batched inserts (rows/s, 100
//! rows per INSERT), point selects/s, full-scan rows/s; ISCP propagation of
//! a committed backlog (rows/s from commit to searchable in the index's
//! memory) for HNSW (128-d) and full-text, each repetition run right after
//! the raw library (usearch add, tantivy add_document) on the same data,
//! medians of `BENCH_REPS` (5); propagation overlapped with ingestion; lag
//! under a steady insert load; vector search QPS and recall@10; the write
//! cost of synchronous (non-ASYNC) indexes.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::time::{Duration, Instant};

use tributary::{Config, Database, Value};

fn xorshift(s: &mut u64) -> f32 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    (*s % 10_000) as f32 / 10_000.0
}

/// The f32 values of a `'[…]'` literal made by [`vec_lit`].
fn parse_lit(lit: &str) -> Vec<f32> {
    lit.trim_matches(|c| c == '[' || c == ']')
        .split(',')
        .filter_map(|x| x.parse().ok())
        .collect()
}

/// Raw usearch add rate (rows/s) for `vectors`, with exactly the options a
/// SQL `CREATE INDEX … USING HNSW` gets by default.
fn raw_usearch_rate(vectors: &[Vec<f32>]) -> f64 {
    let dims = vectors.first().map(|v| v.len()).unwrap_or(1);
    let mut opts = tributary_index::HnswOptions::new(dims, tributary_index::Metric::L2);
    opts.m = tributary::testing::DEFAULT_HNSW_M;
    opts.ef_construction = tributary::testing::DEFAULT_HNSW_EF_CONSTRUCTION;
    opts.ef_search = tributary::testing::DEFAULT_HNSW_EF_SEARCH;
    let mut ix = tributary_index::VectorIndex::new(opts).expect("raw");
    let t = Instant::now();
    for (i, v) in vectors.iter().enumerate() {
        ix.upsert(i as u64, v).expect("add");
    }
    vectors.len() as f64 / t.elapsed().as_secs_f64()
}

fn vec_lit(s: &mut u64, d: usize) -> String {
    let v: Vec<String> = (0..d).map(|_| format!("{:.4}", xorshift(s))).collect();
    format!("[{}]", v.join(","))
}

fn wait_until(deadline: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + deadline;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::park_timeout(Duration::from_millis(5));
    }
    false
}

/// Wait until the job has applied every row committed so far **and** the
/// index's in-memory view (what a search uses) covers them. Polls the job
/// row and the cache only, so the wait itself costs almost nothing.
fn caught_up(db: &Database, job: &str, rows: usize) -> bool {
    let Some((table, job_id)) = db
        .engine()
        .iscp
        .read_jobs()
        .ok()
        .and_then(|js| js.into_iter().find(|j| j.key.job_name == job))
        .map(|j| (j.key.table_id, j.key.job_id))
    else {
        return false;
    };
    // The commit ts of the table's newest change (computed once).
    let latest = db.engine().storage.latest_ts();
    let target =
        tributary::testing::newest_change_ts(db.engine().storage.as_ref(), table, 0, latest)
            .unwrap_or(latest);
    let iscp = &db.engine().iscp;
    wait_until(Duration::from_secs(600), || {
        let durable = iscp.read_jobs().is_ok_and(|jobs| {
            jobs.iter().any(|j| {
                j.key.job_name == job
                    && j.status.stage == tributary::testing::Stage::Incremental
                    && j.watermark >= target
                    && j.status.rows_applied as usize >= rows
            })
        });
        durable
            && iscp
                .cached(job_id)
                .is_some_and(|h| h.read().view_ts() >= target)
    })
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Raw tantivy add_document rate (docs/s) for `docs`, committing every
/// `commit_every` documents (ISCP's unit size) and at the end.
fn raw_tantivy_rate(docs: &[String], commit_every: usize) -> f64 {
    let mut fx =
        tributary_index::FullTextIndex::new(1, tributary_index::Parser::Default).expect("raw ft");
    let t = Instant::now();
    for (i, d) in docs.iter().enumerate() {
        fx.upsert(i as u64, &[Some(d.as_str())]).expect("add");
        if i % commit_every == commit_every - 1 {
            fx.commit().expect("commit");
        }
    }
    fx.commit().expect("commit");
    docs.len() as f64 / t.elapsed().as_secs_f64()
}

/// `reps` alternating runs of the raw library and of ISCP on a backlog of
/// the same rows; prints and returns (median raw, median ISCP).
fn compare_backlog(
    label: &str,
    reps: usize,
    mut raw: impl FnMut() -> f64,
    mut iscp: impl FnMut(usize) -> f64,
) -> (f64, f64) {
    let (mut r, mut i) = (Vec::new(), Vec::new());
    for rep in 0..reps {
        r.push(raw());
        i.push(iscp(rep));
        println!(
            "  {label} rep {rep}: raw {:.0}/s, ISCP {:.0}/s, ratio {:.2}",
            r[rep],
            i[rep],
            i[rep] / r[rep]
        );
    }
    let (mr, mi) = (median(r), median(i));
    println!(
        "{label}: ISCP backlog apply {mi:.0}/s vs raw {mr:.0}/s (medians of {reps}); ratio = {:.2}",
        mi / mr
    );
    (mr, mi)
}

/// Backlog propagation: stall the index's retriever, commit `rows` into
/// `table`, release the stall and time until the index is level — the pure
/// apply rate of ISCP on a backlog (ingestion not included).
fn backlog_rate(
    db: &Database,
    s: &mut tributary::Session,
    table: &str,
    ddl: &[&str],
    index: &str,
    rows: &[String],
) -> f64 {
    for q in ddl {
        s.execute(q).expect("ddl");
    }
    let job = format!("index_{index}");
    caught_up(db, &job, 0);
    let reg = tributary_fault::global();
    reg.enable();
    let point = format!("{}:{index}", tributary_fault::points::ISCP_LONG_BEFORE_SEND);
    reg.add(&point, ":::", "wait", 0, "", false).expect("arm");
    for chunk in rows.chunks(200) {
        s.execute(&format!("INSERT INTO {table} VALUES {}", chunk.join(",")))
            .expect("backlog insert");
    }
    let t = Instant::now();
    reg.remove(&point).expect("remove");
    let ok = caught_up(db, &job, rows.len());
    let rate = rows.len() as f64 / t.elapsed().as_secs_f64();
    assert!(ok, "backlog for {index} not applied");
    reg.disable();
    rate
}

fn main() {
    let n_single: usize = std::env::var("BENCH_SINGLE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2_000);
    let n_batch_rows: usize = 20_000;
    let dir = tempfile::tempdir().expect("tempdir");
    // No age-based checkpoints: a base of an earlier phase's index written
    // in the middle of a later measurement would be noise.
    let cfg = Config {
        iscp_interval: Duration::from_millis(20),
        index_checkpoint_age: Duration::from_secs(3600),
        ..Config::default()
    };
    let db = Database::open_with(dir.path(), cfg).expect("open");
    let mut s = db.session();
    for q in [
        "CREATE DATABASE b",
        "USE b",
        "CREATE TABLE kv (id BIGINT PRIMARY KEY, v VARCHAR(64))",
    ] {
        s.execute(q).expect(q);
    }
    let t = Instant::now();
    for i in 0..n_single {
        s.execute(&format!("INSERT INTO kv VALUES ({i}, 'value-{i}')"))
            .expect("insert");
    }
    let e = t.elapsed();
    println!(
        "library single-row autocommit insert: {:.0} rows/s ({n_single} rows)",
        n_single as f64 / e.as_secs_f64()
    );

    let t = Instant::now();
    let mut id = n_single;
    for _ in 0..n_batch_rows / 100 {
        let vals: Vec<String> = (0..100)
            .map(|_| {
                id += 1;
                format!("({id}, 'value-{id}')")
            })
            .collect();
        s.execute(&format!("INSERT INTO kv VALUES {}", vals.join(",")))
            .expect("batch");
    }
    let e = t.elapsed();
    println!(
        "library batched insert (100 rows/stmt): {:.0} rows/s ({n_batch_rows} rows)",
        n_batch_rows as f64 / e.as_secs_f64()
    );

    let total = id;
    let n_point = 20_000;
    let mut seed = 7u64;
    let t = Instant::now();
    for _ in 0..n_point {
        let k = (xorshift(&mut seed) * total as f32) as usize;
        let r = s
            .execute(&format!("SELECT v FROM kv WHERE id = {k}"))
            .expect("point");
        assert!(r.rows.len() <= 1);
    }
    let e = t.elapsed();
    println!(
        "library point select: {:.0} queries/s",
        n_point as f64 / e.as_secs_f64()
    );

    let t = Instant::now();
    let r = s
        .execute("SELECT count(*) FROM kv WHERE v LIKE 'value-%'")
        .expect("scan");
    let e = t.elapsed();
    let cnt = match r.rows.first().and_then(|r| r.first()) {
        Some(Value::Int(c)) => *c,
        _ => 0,
    };
    println!(
        "library full scan with filter: {:.0} rows/s ({cnt} rows)",
        cnt as f64 / e.as_secs_f64()
    );

    let reps: usize = std::env::var("BENCH_REPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5);
    let n_vec: usize = std::env::var("BENCH_VECTORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let dims = 128;
    let unit = Config::default().iscp_max_batch;
    let words = [
        "rust", "database", "vector", "index", "search", "engine", "fast", "async", "drop",
        "table", "query", "storage", "commit", "change", "log", "stream", "token", "cancel",
        "drain", "fence",
    ];

    // --- Backlog propagation (ingestion excluded) vs the raw libraries ---
    // Rows are committed while the index's retriever is stalled; the clock
    // runs from the release of the stall until the index's in-memory view
    // covers every row (searchable from the index alone).
    let mut seed2 = 4242u64;
    let mut vec_rows = Vec::with_capacity(n_vec);
    let mut raw2: Vec<Vec<f32>> = Vec::with_capacity(n_vec);
    for i in 0..n_vec {
        let lit = vec_lit(&mut seed2, dims);
        raw2.push(parse_lit(&lit));
        vec_rows.push(format!("({i}, '{lit}')"));
    }
    compare_backlog(
        "HNSW (128-d, M 32, EF_CONSTRUCTION 128), rows",
        reps,
        || raw_usearch_rate(&raw2),
        |rep| {
            backlog_rate(
                &db,
                &mut s,
                &format!("vb{rep}"),
                &[
                    &format!("CREATE TABLE vb{rep} (id BIGINT PRIMARY KEY, v VECF32(128))"),
                    &format!(
                        "CREATE INDEX vbi{rep} USING HNSW ON vb{rep}(v) OP_TYPE 'vector_l2_ops' ASYNC"
                    ),
                ],
                &format!("vbi{rep}"),
                &vec_rows,
            )
        },
    );
    let n_docs: usize = 20_000;
    let mut docs = Vec::with_capacity(n_docs);
    let mut seed = 42u64;
    for _ in 0..n_docs {
        let body: Vec<&str> = (0..12)
            .map(|_| words[(xorshift(&mut seed) * words.len() as f32) as usize % words.len()])
            .collect();
        docs.push(body.join(" "));
    }
    let ft_rows: Vec<String> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| format!("({i}, '{d}')"))
        .collect();
    compare_backlog(
        &format!("full-text (12-word docs; raw commits every {unit}), docs"),
        reps,
        || raw_tantivy_rate(&docs, unit),
        |rep| {
            backlog_rate(
                &db,
                &mut s,
                &format!("fb{rep}"),
                &[
                    &format!("CREATE TABLE fb{rep} (id BIGINT PRIMARY KEY, body TEXT)"),
                    &format!("CREATE FULLTEXT INDEX fbi{rep} ON fb{rep}(body) ASYNC"),
                ],
                &format!("fbi{rep}"),
                &ft_rows,
            )
        },
    );

    // --- Propagation overlapped with ingestion ---
    // Bounded by the SQL ingestion rate when that is slower than the raw
    // library; reported with the ingestion time and the catch-up after the
    // last commit.
    s.execute("CREATE TABLE vt (id BIGINT PRIMARY KEY, v VECF32(128))")
        .expect("vt");
    s.execute("CREATE INDEX vidx USING HNSW ON vt(v) OP_TYPE 'vector_l2_ops' ASYNC")
        .expect("hnsw");
    caught_up(&db, "index_vidx", 0);
    let mut seed = 42u64;
    let mut raw: Vec<Vec<f32>> = Vec::with_capacity(n_vec);
    let t = Instant::now();
    for chunk in 0..n_vec / 100 {
        let vals: Vec<String> = (0..100)
            .map(|i| {
                let lit = vec_lit(&mut seed, dims);
                let v = parse_lit(&lit);
                raw.push(v);
                format!("({}, '{lit}')", chunk * 100 + i)
            })
            .collect();
        s.execute(&format!("INSERT INTO vt VALUES {}", vals.join(",")))
            .expect("vins");
    }
    let insert_done = t.elapsed();
    let ok = caught_up(&db, "index_vidx", n_vec);
    let e = t.elapsed();
    println!(
        "HNSW ingestion + propagation overlapped: {:.0} rows/s end to end ({n_vec} rows; inserts took {:.2}s = {:.0} rows/s; searchable {:.0} ms after the last commit; caught up: {ok})",
        n_vec as f64 / e.as_secs_f64(),
        insert_done.as_secs_f64(),
        n_vec as f64 / insert_done.as_secs_f64(),
        (e - insert_done).as_secs_f64() * 1000.0
    );
    s.execute("CREATE TABLE ft (id BIGINT PRIMARY KEY, body TEXT)")
        .expect("ft");
    s.execute("CREATE FULLTEXT INDEX fti ON ft(body) ASYNC")
        .expect("fti");
    caught_up(&db, "index_fti", 0);
    let t = Instant::now();
    for chunk in ft_rows.chunks(200) {
        s.execute(&format!("INSERT INTO ft VALUES {}", chunk.join(",")))
            .expect("ftins");
    }
    let insert_done = t.elapsed();
    let ok = caught_up(&db, "index_fti", n_docs);
    let e = t.elapsed();
    println!(
        "full-text ingestion + propagation overlapped: {:.0} docs/s end to end ({n_docs} docs; inserts took {:.2}s = {:.0} docs/s; searchable {:.0} ms after the last commit; caught up: {ok})",
        n_docs as f64 / e.as_secs_f64(),
        insert_done.as_secs_f64(),
        n_docs as f64 / insert_done.as_secs_f64(),
        (e - insert_done).as_secs_f64() * 1000.0
    );

    // Vector search QPS and recall@10 against brute force (fresh default).
    let nq = 200;
    let mut recall_sum = 0.0;
    let mut elapsed = Duration::ZERO;
    for _ in 0..nq {
        let q = vec_lit(&mut seed, dims);
        let qv = parse_lit(&q);
        let t = Instant::now();
        let r = s
            .execute(&format!(
                "SELECT id FROM vt ORDER BY l2_distance(v, '{q}') LIMIT 10"
            ))
            .expect("knn");
        elapsed += t.elapsed();
        assert_eq!(r.rows.len(), 10);
        let mut exact: Vec<(f32, usize)> = raw
            .iter()
            .enumerate()
            .map(|(i, v)| {
                (
                    v.iter()
                        .zip(&qv)
                        .map(|(a, b)| (a - b) * (a - b))
                        .sum::<f32>(),
                    i,
                )
            })
            .collect();
        exact.sort_by(|a, b| a.0.total_cmp(&b.0));
        let truth: std::collections::HashSet<i64> =
            exact.iter().take(10).map(|(_, i)| *i as i64).collect();
        let hits = r
            .rows
            .iter()
            .filter(|row| matches!(row[0], Value::Int(id) if truth.contains(&id)))
            .count();
        recall_sum += hits as f64 / 10.0;
    }
    println!(
        "vector search through SQL (k=10, fresh): {:.0} QPS, recall@10 {:.3} (uniform random 128-d, {n_vec} rows)",
        nq as f64 / elapsed.as_secs_f64(),
        recall_sum / nq as f64
    );

    // --- Lag under a steady insert load ---
    let rate = 200.0; // rows per second
    let secs = 5.0;
    let n = (rate * secs) as usize;
    let job = db
        .engine()
        .iscp
        .read_jobs()
        .expect("jobs")
        .into_iter()
        .find(|j| j.key.job_name == "index_vidx")
        .expect("vidx job");
    let mut pending: Vec<(u64, Instant)> = Vec::new();
    let mut lags: Vec<f64> = Vec::new();
    let start = Instant::now();
    for i in 0..n {
        let due = start + Duration::from_secs_f64(i as f64 / rate);
        while Instant::now() < due {
            std::thread::park_timeout(due.saturating_duration_since(Instant::now()));
        }
        let lit = vec_lit(&mut seed, dims);
        s.execute(&format!("INSERT INTO vt VALUES ({}, '{lit}')", n_vec + i))
            .expect("steady");
        pending.push((db.engine().storage.latest_ts(), Instant::now()));
        if let Ok(Some(j)) = db.engine().iscp.read_job(&job.key) {
            let now = Instant::now();
            pending.retain(|(ts, at)| {
                if *ts <= j.watermark {
                    lags.push(now.duration_since(*at).as_secs_f64() * 1000.0);
                    false
                } else {
                    true
                }
            });
        }
    }
    let _ = wait_until(Duration::from_secs(60), || {
        if let Ok(Some(j)) = db.engine().iscp.read_job(&job.key) {
            let now = Instant::now();
            pending.retain(|(ts, at)| {
                if *ts <= j.watermark {
                    lags.push(now.duration_since(*at).as_secs_f64() * 1000.0);
                    false
                } else {
                    true
                }
            });
        }
        pending.is_empty()
    });
    lags.sort_by(|a, b| a.total_cmp(b));
    let pct = |p: f64| {
        lags.get(((lags.len() as f64 - 1.0) * p) as usize)
            .copied()
            .unwrap_or(f64::NAN)
    };
    println!(
        "HNSW lag under steady load ({rate:.0} rows/s for {secs:.0} s, 128-d, interval 20 ms): p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({} samples)",
        pct(0.5),
        pct(0.99),
        lags.last().copied().unwrap_or(f64::NAN),
        lags.len()
    );

    // --- Write cost of synchronous (non-ASYNC) indexes ---
    // The same rows into a table without index, with a synchronous HNSW
    // index and with a synchronous full-text index: the writer pays the
    // index update (entry write + in-memory apply before it returns).
    let n_sync = 2_000usize;
    let mut seed3 = 99u64;
    let sync_rows: Vec<String> = (0..n_sync)
        .map(|i| {
            format!(
                "({i}, '{}', '{}')",
                docs[i % docs.len()],
                vec_lit(&mut seed3, dims)
            )
        })
        .collect();
    for (n_table, (name, ddl)) in [
        ("no index", None),
        (
            "synchronous HNSW (128-d)",
            Some("CREATE INDEX {t}_i USING HNSW ON {t}(v) OP_TYPE 'vector_l2_ops'"),
        ),
        (
            "synchronous full-text",
            Some("CREATE FULLTEXT INDEX {t}_i ON {t}(body)"),
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let mut rates = Vec::new();
        for (k, per_stmt) in [(0, 1usize), (1, 100usize)] {
            let t = format!("sw{n_table}_{k}");
            s.execute(&format!(
                "CREATE TABLE {t} (id BIGINT PRIMARY KEY, body TEXT, v VECF32(128))"
            ))
            .expect("sync table");
            if let Some(d) = ddl {
                s.execute(&d.replace("{t}", &t)).expect("sync index");
            }
            let n = if per_stmt == 1 { n_sync / 4 } else { n_sync };
            let start = Instant::now();
            for chunk in sync_rows[..n].chunks(per_stmt) {
                s.execute(&format!("INSERT INTO {t} VALUES {}", chunk.join(",")))
                    .expect("sync insert");
            }
            rates.push(n as f64 / start.elapsed().as_secs_f64());
        }
        println!(
            "insert into a table with {name}: {:.0} rows/s single-row autocommit, {:.0} rows/s 100 rows/stmt",
            rates[0], rates[1]
        );
    }
    drop(s);
    db.shutdown();
}
