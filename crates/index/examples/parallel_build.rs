//! What a parallel build costs and saves: builds one index from N
//! clustered vectors serially and with `--threads` workers
//! ([`VectorIndex::upsert_batch`]), and counts, in each, the keys that
//! their own vector does not find at EF_SEARCH 64.
//!
//! `cargo run --release -p tributary-index --example parallel_build -- [n] [threads]`

use std::time::Instant;

use tributary_index::{HnswOptions, Metric, Parallelism, VectorIndex};

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let threads: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(2);
    let dims = 128;
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f32 / (1u64 << 53) as f32
    };
    let centres: Vec<Vec<f32>> = (0..64)
        .map(|_| (0..dims).map(|_| rnd() * 10.0).collect())
        .collect();
    let data: Vec<Vec<f32>> = (0..n)
        .map(|i| centres[i % 64].iter().map(|c| c + rnd() - 0.5).collect())
        .collect();
    let items: Vec<(u64, &[f32])> = data
        .iter()
        .enumerate()
        .map(|(i, v)| (i as u64, v.as_slice()))
        .collect();
    for t in [1, threads] {
        let mut o = HnswOptions::new(dims, Metric::L2);
        o.ef_construction = 64;
        let mut ix = VectorIndex::new(o).expect("index");
        let start = Instant::now();
        let mut readded = 0;
        for chunk in items.chunks(
            std::env::var("CHUNK")
                .ok()
                .and_then(|c| c.parse().ok())
                .unwrap_or(16_384),
        ) {
            readded += ix
                .upsert_batch(
                    chunk,
                    Parallelism {
                        threads: t,
                        on_start: || {},
                    },
                )
                .expect("add");
        }
        let build = start.elapsed();
        let missing = items
            .iter()
            .filter(|(k, v)| {
                !ix.search_with_ef(v, 10, 64)
                    .expect("search")
                    .iter()
                    .any(|(l, _)| l == k)
            })
            .count();
        println!(
            "threads {t}: {n} vectors in {:.2} s ({:.0}/s), re-added {readded}, not found by own vector {missing}",
            build.as_secs_f64(),
            n as f64 / build.as_secs_f64()
        );
    }
}
