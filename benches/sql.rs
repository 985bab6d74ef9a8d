//! SQL throughput through the library API, and ISCP propagation against the
//! raw libraries. Plain `std::time` measurement (harness = false); prints
//! one line per metric. Run: `cargo bench --bench sql`.
//!
//! Metrics: single-row autocommit inserts/s, batched inserts (rows/s, 100
//! rows per INSERT), point selects/s, full-scan rows/s, HNSW propagation
//! (rows/s from commit to searchable, 128-d) vs raw usearch add, full-text
//! propagation vs raw tantivy add, vector search QPS.

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
    opts.m = tributary::sql::ddl::DEFAULT_HNSW_M;
    opts.ef_construction = tributary::sql::ddl::DEFAULT_HNSW_EF_CONSTRUCTION;
    opts.ef_search = tributary::sql::ddl::DEFAULT_HNSW_EF_SEARCH;
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

/// Wait until the job has applied every row committed so far (polls the
/// job row only, so the wait itself costs almost nothing).
fn caught_up(db: &Database, job: &str, rows: usize) -> bool {
    let Some(table) = db
        .engine()
        .iscp
        .read_jobs()
        .ok()
        .and_then(|js| js.into_iter().find(|j| j.key.job_name == job))
        .map(|j| j.key.table_id)
    else {
        return false;
    };
    // The commit ts of the table's newest change (computed once).
    let latest = db.engine().storage.latest_ts();
    let target =
        tributary::iscp::log::newest_change_ts(db.engine(), table, 0, latest).unwrap_or(latest);
    wait_until(Duration::from_secs(600), || {
        db.engine().iscp.read_jobs().is_ok_and(|jobs| {
            jobs.iter().any(|j| {
                j.key.job_name == job
                    && j.status.stage == "incremental"
                    && j.watermark >= target
                    && j.status.rows_applied as usize >= rows
            })
        })
    })
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
    let cfg = Config {
        iscp_interval: Duration::from_millis(20),
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

    // --- HNSW propagation vs raw usearch ---
    let n_vec: usize = std::env::var("BENCH_VECTORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let dims = 128;
    s.execute("CREATE TABLE vt (id BIGINT PRIMARY KEY, v VECF32(128))")
        .expect("vt");
    s.execute("CREATE INDEX vidx USING HNSW ON vt(v) OP_TYPE 'vector_l2_ops' ASYNC")
        .expect("hnsw");
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
        "ISCP HNSW propagation (128-d, commit to searchable): {:.0} rows/s ({n_vec} rows, inserts took {:.2}s, caught up: {ok})",
        n_vec as f64 / e.as_secs_f64(),
        insert_done.as_secs_f64()
    );
    let iscp_rate = n_vec as f64 / e.as_secs_f64();
    let raw_rate = raw_usearch_rate(&raw);
    println!(
        "raw usearch add (same data): {raw_rate:.0} rows/s; ratio ISCP/raw = {:.2}",
        iscp_rate / raw_rate
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

    // --- Full-text propagation vs raw tantivy ---
    let n_docs: usize = 20_000;
    let words = [
        "rust", "database", "vector", "index", "search", "engine", "fast", "async", "drop",
        "table", "query", "storage", "commit", "change", "log", "stream", "token", "cancel",
        "drain", "fence",
    ];
    s.execute("CREATE TABLE ft (id BIGINT PRIMARY KEY, body TEXT)")
        .expect("ft");
    s.execute("CREATE FULLTEXT INDEX fti ON ft(body) ASYNC")
        .expect("fti");
    let mut docs = Vec::with_capacity(n_docs);
    let t = Instant::now();
    for chunk in 0..n_docs / 200 {
        let vals: Vec<String> = (0..200)
            .map(|i| {
                let body: Vec<&str> = (0..12)
                    .map(|_| {
                        words[(xorshift(&mut seed) * words.len() as f32) as usize % words.len()]
                    })
                    .collect();
                let body = body.join(" ");
                let v = format!("({}, '{body}')", chunk * 200 + i);
                docs.push(body);
                v
            })
            .collect();
        s.execute(&format!("INSERT INTO ft VALUES {}", vals.join(",")))
            .expect("ftins");
    }
    let ok = caught_up(&db, "index_fti", n_docs);
    let ft_rate = n_docs as f64 / t.elapsed().as_secs_f64();
    println!("ISCP full-text propagation (commit to searchable): {ft_rate:.0} docs/s ({n_docs} docs, caught up: {ok})");
    let mut fx =
        tributary_index::FullTextIndex::new(1, tributary_index::Parser::Default).expect("raw ft");
    let t = Instant::now();
    for (i, d) in docs.iter().enumerate() {
        fx.upsert(i as u64, &[Some(d.as_str())]).expect("add");
        if i % 4096 == 4095 {
            fx.commit().expect("commit");
        }
    }
    fx.commit().expect("commit");
    let raw_ft = n_docs as f64 / t.elapsed().as_secs_f64();
    println!("raw tantivy add_document (same docs, commit per 4096): {raw_ft:.0} docs/s; ratio ISCP/raw = {:.2}", ft_rate / raw_ft);

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

    // --- Backlog propagation (ingestion excluded) vs the raw libraries ---
    let mut seed2 = 4242u64;
    let mut vec_rows = Vec::with_capacity(n_vec);
    let mut raw2: Vec<Vec<f32>> = Vec::with_capacity(n_vec);
    for i in 0..n_vec {
        let lit = vec_lit(&mut seed2, dims);
        raw2.push(parse_lit(&lit));
        vec_rows.push(format!("({i}, '{lit}')"));
    }
    let hnsw_backlog = backlog_rate(
        &db,
        &mut s,
        "vb",
        &[
            "CREATE TABLE vb (id BIGINT PRIMARY KEY, v VECF32(128))",
            "CREATE INDEX vbi USING HNSW ON vb(v) OP_TYPE 'vector_l2_ops' ASYNC",
        ],
        "vbi",
        &vec_rows,
    );
    let raw2_rate = raw_usearch_rate(&raw2);
    println!(
        "ISCP HNSW backlog apply (128-d): {hnsw_backlog:.0} rows/s vs raw usearch {raw2_rate:.0} rows/s; ratio = {:.2}",
        hnsw_backlog / raw2_rate
    );
    let ft_rows: Vec<String> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| format!("({i}, '{d}')"))
        .collect();
    let ft_backlog = backlog_rate(
        &db,
        &mut s,
        "fb",
        &[
            "CREATE TABLE fb (id BIGINT PRIMARY KEY, body TEXT)",
            "CREATE FULLTEXT INDEX fbi ON fb(body) ASYNC",
        ],
        "fbi",
        &ft_rows,
    );
    println!(
        "ISCP full-text backlog apply: {ft_backlog:.0} docs/s vs raw tantivy {raw_ft:.0} docs/s; ratio = {:.2}",
        ft_backlog / raw_ft
    );
    drop(s);
    db.shutdown();
}
