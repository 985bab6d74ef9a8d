//! Raw library throughput, the baseline the ISCP benchmark compares against:
//! usearch add throughput, search QPS and recall@10 (128-d, 20k vectors), and tantivy
//! add_document + commit throughput (20k docs). One line per metric on stdout.
//!
//! Run: `cargo bench -p tributary-index --bench raw` (set `RAW_BENCH_N` to override N).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::collections::HashSet;
use std::time::Instant;

use tributary_index::{FullTextIndex, HnswOptions, MatchMode, Metric, Parser, VectorIndex};

struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn unit(&mut self) -> f32 {
        ((self.next_u64() >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    }
    fn vector(&mut self, dims: usize) -> Vec<f32> {
        (0..dims).map(|_| self.unit()).collect()
    }
}

/// Clustered data: 200 random centres, points = centre + 0.5 * uniform noise.
fn clustered(rng: &mut Rng, n: usize, dims: usize) -> Vec<Vec<f32>> {
    let centres: Vec<Vec<f32>> = (0..200).map(|_| rng.vector(dims)).collect();
    (0..n)
        .map(|_| {
            let c = &centres[(rng.next_u64() % centres.len() as u64) as usize];
            c.iter().map(|x| x + 0.5 * rng.unit()).collect()
        })
        .collect()
}

fn brute_top10(data: &[Vec<f32>], q: &[f32]) -> HashSet<u64> {
    let mut all: Vec<(u64, f32)> = data
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u64, Metric::L2.distance(v, q)))
        .collect();
    all.sort_by(|a, b| a.1.total_cmp(&b.1));
    all.into_iter().take(10).map(|(k, _)| k).collect()
}

fn vector_bench(name: &str, data: &[Vec<f32>], queries: &[Vec<f32>]) {
    let dims = data[0].len();
    let mut ix = VectorIndex::new(HnswOptions::new(dims, Metric::L2)).expect("index");
    let t = Instant::now();
    for (i, v) in data.iter().enumerate() {
        ix.upsert(i as u64, v).expect("add");
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "usearch_add_{name}: {:.0} vectors/s ({} x {dims}-d, M 16, EF_CONSTRUCTION 128, {secs:.2} s)",
        data.len() as f64 / secs,
        data.len()
    );
    let truth: Vec<HashSet<u64>> = queries.iter().map(|q| brute_top10(data, q)).collect();
    for ef in [64usize, 128, 256] {
        let t = Instant::now();
        let mut hits = 0usize;
        for (q, want) in queries.iter().zip(&truth) {
            let got = ix.search_with_ef(q, 10, ef).expect("search");
            hits += got.iter().filter(|(k, _)| want.contains(k)).count();
        }
        let secs = t.elapsed().as_secs_f64();
        println!(
            "usearch_search_{name}_ef{ef}: {:.0} QPS, recall@10 {:.3} ({} queries, k 10)",
            queries.len() as f64 / secs,
            hits as f64 / (10 * queries.len()) as f64,
            queries.len()
        );
    }
    let t = Instant::now();
    let bytes = ix.to_bytes().expect("to_bytes");
    let ser = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let back = VectorIndex::from_bytes(&bytes).expect("from_bytes");
    let de = t.elapsed().as_secs_f64();
    assert_eq!(back.len(), ix.len());
    println!(
        "usearch_bytes_{name}: {} bytes, to_bytes {:.1} ms, from_bytes {:.1} ms",
        bytes.len(),
        ser * 1e3,
        de * 1e3
    );
}

const WORDS: &[&str] = &[
    "rust",
    "database",
    "index",
    "vector",
    "search",
    "query",
    "table",
    "commit",
    "snapshot",
    "watermark",
    "consumer",
    "runner",
    "drop",
    "cancel",
    "drain",
    "lock",
    "tantivy",
    "usearch",
    "storage",
    "catalog",
    "engine",
    "mysql",
    "protocol",
    "server",
    "client",
    "session",
    "iteration",
    "change",
    "log",
    "hidden",
    "async",
    "hnsw",
    "graph",
    "token",
    "score",
];

fn text_bench(n: usize) {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let docs: Vec<(String, String)> = (0..n)
        .map(|_| {
            let mut s = || {
                let len = 3 + (rng.next_u64() % 20) as usize;
                (0..len)
                    .map(|_| WORDS[(rng.next_u64() % WORDS.len() as u64) as usize])
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            (s(), s())
        })
        .collect();
    let mut ix = FullTextIndex::new(2, Parser::Default).expect("index");
    let t = Instant::now();
    for (i, (a, b)) in docs.iter().enumerate() {
        ix.upsert(i as u64, &[Some(a), Some(b)]).expect("add");
    }
    ix.commit().expect("commit");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "tantivy_add_commit: {:.0} docs/s ({n} docs, 2 fields, one commit, {secs:.2} s)",
        n as f64 / secs
    );
    let t = Instant::now();
    let mut batches = FullTextIndex::new(2, Parser::Default).expect("index");
    for (i, (a, b)) in docs.iter().enumerate() {
        batches.upsert(i as u64, &[Some(a), Some(b)]).expect("add");
        if i % 1000 == 999 {
            batches.commit().expect("commit");
        }
    }
    batches.commit().expect("commit");
    let secs = t.elapsed().as_secs_f64();
    println!(
        "tantivy_add_commit_batched1000: {:.0} docs/s ({n} docs, commit every 1000, {secs:.2} s)",
        n as f64 / secs
    );
    let queries = ["rust database", "watermark cancel", "hnsw graph score"];
    let t = Instant::now();
    let rounds = 300;
    for i in 0..rounds {
        let r = ix
            .search(queries[i % queries.len()], MatchMode::Natural, 10)
            .expect("search");
        assert!(!r.is_empty());
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "tantivy_search_natural: {:.0} QPS (limit 10, {rounds} queries)",
        rounds as f64 / secs
    );
    let t = Instant::now();
    let bytes = ix.to_bytes().expect("to_bytes");
    let ser = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let back = FullTextIndex::from_bytes(&bytes).expect("from_bytes");
    let de = t.elapsed().as_secs_f64();
    assert_eq!(back.len(), n);
    println!(
        "tantivy_bytes: {} bytes, to_bytes {:.1} ms, from_bytes {:.1} ms",
        bytes.len(),
        ser * 1e3,
        de * 1e3
    );
}

fn main() {
    let n: usize = std::env::var("RAW_BENCH_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20_000);
    let mut rng = Rng(0x0123_4567_89ab_cdef);
    let uniform: Vec<Vec<f32>> = (0..n).map(|_| rng.vector(128)).collect();
    let uq: Vec<Vec<f32>> = (0..200).map(|_| rng.vector(128)).collect();
    vector_bench("uniform", &uniform, &uq);
    let data = clustered(&mut rng, n + 200, 128);
    let (data, cq) = data.split_at(n);
    vector_bench("clustered", data, cq);
    text_bench(n);
}
