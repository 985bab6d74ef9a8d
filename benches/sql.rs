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
                let v: Vec<f32> = lit
                    .trim_matches(|c| c == '[' || c == ']')
                    .split(',')
                    .filter_map(|x| x.parse().ok())
                    .collect();
                raw.push(v);
                format!("({}, '{lit}')", chunk * 100 + i)
            })
            .collect();
        s.execute(&format!("INSERT INTO vt VALUES {}", vals.join(",")))
            .expect("vins");
    }
    let insert_done = t.elapsed();
    let ok = wait_until(Duration::from_secs(600), || {
        let r = s.execute("SHOW ISCP STATUS").expect("status");
        r.rows.iter().any(|row| {
            matches!(&row[1], Value::Text(n) if n == "index_vidx")
                && matches!(&row[7], Value::Int(n) if *n as usize >= n_vec)
                && matches!(&row[6], Value::Int(0))
        })
    });
    let e = t.elapsed();
    println!(
        "ISCP HNSW propagation (128-d, commit to searchable): {:.0} rows/s ({n_vec} rows, inserts took {:.2}s, caught up: {ok})",
        n_vec as f64 / e.as_secs_f64(),
        insert_done.as_secs_f64()
    );
    let iscp_rate = n_vec as f64 / e.as_secs_f64();
    let mut ix = tributary_index::VectorIndex::new(tributary_index::HnswOptions::new(
        dims,
        tributary_index::Metric::L2,
    ))
    .expect("raw");
    let t = Instant::now();
    for (i, v) in raw.iter().enumerate() {
        ix.upsert(i as u64, v).expect("add");
    }
    let raw_rate = n_vec as f64 / t.elapsed().as_secs_f64();
    println!(
        "raw usearch add (same data): {raw_rate:.0} rows/s; ratio ISCP/raw = {:.2}",
        iscp_rate / raw_rate
    );

    let nq = 200;
    let t = Instant::now();
    for _ in 0..nq {
        let q = vec_lit(&mut seed, dims);
        let r = s
            .execute(&format!(
                "SELECT id FROM vt ORDER BY l2_distance(v, '{q}') LIMIT 10"
            ))
            .expect("knn");
        assert_eq!(r.rows.len(), 10);
    }
    println!(
        "vector search through SQL (k=10, fresh): {:.0} QPS",
        nq as f64 / t.elapsed().as_secs_f64()
    );
    drop(s);
    db.shutdown();
}
