//! What one HNSW add costs as the graph grows, on clustered data like
//! `scripts/bench_lag.py`'s (64 Gaussian centres, σ 0.6), at the default
//! options (M 16, EF_CONSTRUCTION 128):
//! `cargo run --release -p tributary-index --example add_cost -- [n] [dims]`.
//! Then it times searches (top 10, the default beam) with an empty tail of
//! deferred adds and with a full one ([`TAIL_CAP`] vectors).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test
use std::time::Instant;

use tributary_index::{HnswOptions, Metric, VectorIndex, TAIL_CAP};

struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        ((self.0 >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    fn normal(&mut self) -> f32 {
        let (a, b) = (self.unit(), self.unit());
        ((-2.0 * a.ln()).sqrt() * (2.0 * std::f64::consts::PI * b).cos()) as f32
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(160_000);
    let dims: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(128);
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let centres: Vec<Vec<f32>> = (0..64)
        .map(|_| (0..dims).map(|_| rng.normal()).collect())
        .collect();
    let mut ix = VectorIndex::new(HnswOptions::new(dims, Metric::L2)).expect("index");
    let step = 10_000;
    let mut t = Instant::now();
    for k in 0..n {
        let c = &centres[(rng.unit() * 64.0) as usize % 64];
        let v: Vec<f32> = c.iter().map(|x| x + 0.6 * rng.normal()).collect();
        ix.upsert(k, &v).expect("upsert");
        if (k + 1) % step == 0 {
            let us = t.elapsed().as_secs_f64() * 1e6 / step as f64;
            println!("rows {:>7}: {us:.0} µs per add", k + 1);
            t = Instant::now();
        }
    }
    let queries: Vec<Vec<f32>> = (0..1000)
        .map(|_| {
            let c = &centres[(rng.unit() * 64.0) as usize % 64];
            c.iter().map(|x| x + 0.6 * rng.normal()).collect()
        })
        .collect();
    let time_searches = |ix: &VectorIndex, what: &str| {
        let t = Instant::now();
        for q in &queries {
            ix.search(q, 10).expect("search");
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / queries.len() as f64;
        println!("search, {what}: {us:.0} µs");
    };
    time_searches(&ix, "tail empty");
    for k in n..n + TAIL_CAP as u64 {
        let c = &centres[(rng.unit() * 64.0) as usize % 64];
        let v: Vec<f32> = c.iter().map(|x| x + 0.6 * rng.normal()).collect();
        ix.upsert_deferred(k, &v).expect("upsert_deferred");
    }
    time_searches(&ix, &format!("tail of {}", ix.tail_len()));
}
