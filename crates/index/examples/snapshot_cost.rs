//! Measures what a base of an HNSW index costs under its lock
//! (`VectorIndex::snapshot`) and after it (`VectorSnapshot::into_bytes`):
//! `cargo run --release -p tributary-index --example snapshot_cost -- [n] [dims]`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test
use std::time::Instant;

use tributary_index::{HnswOptions, Metric, VectorIndex};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(50_000);
    let dims: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(128);
    let mut ix = VectorIndex::new(HnswOptions::new(dims, Metric::L2)).expect("index");
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    let t = Instant::now();
    for k in 0..n {
        let v: Vec<f32> = (0..dims)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x % 10_000) as f32 / 10_000.0
            })
            .collect();
        ix.upsert(k, &v).expect("upsert");
    }
    println!("built {n} × {dims} in {:?}", t.elapsed());
    for round in 0..3 {
        let t = Instant::now();
        let snap = ix.snapshot().expect("snapshot");
        let locked = t.elapsed();
        let t = Instant::now();
        let bytes = snap.into_bytes();
        println!(
            "round {round}: snapshot {locked:?}, into_bytes {:?}, {} bytes",
            t.elapsed(),
            bytes.len()
        );
    }
}
