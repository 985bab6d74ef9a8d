//! Every live key stays reachable by its own vector through updates and
//! deletes (issue 17: usearch's slot reuse after `remove` left nodes that no
//! search could reach — 3 of 2,444 keys in this very workload).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use tributary_index::{HnswOptions, Metric, VectorIndex};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Random upserts (80%) and deletes (20%) over `n` keys; returns the index
/// and each key's current vector.
fn churn(seed: u64, n: u64, steps: u64, dims: usize) -> (VectorIndex, Vec<Option<Vec<f32>>>) {
    let mut rng = Rng(seed);
    let mut ix = VectorIndex::new(HnswOptions::new(dims, Metric::L2)).expect("index");
    let mut cur: Vec<Option<Vec<f32>>> = vec![None; n as usize];
    for _ in 0..steps {
        let k = rng.next() % n;
        if rng.next() % 10 < 2 {
            ix.remove(k).expect("remove");
            cur[k as usize] = None;
        } else {
            let v: Vec<f32> = (0..dims)
                .map(|_| (rng.next() % 1000) as f32 / 10.0)
                .collect();
            ix.upsert(k, &v).expect("upsert");
            cur[k as usize] = Some(v);
        }
    }
    (ix, cur)
}

/// Keys whose own vector a search does not return.
fn unreachable(ix: &VectorIndex, cur: &[Option<Vec<f32>>]) -> Vec<u64> {
    let mut out = Vec::new();
    for (k, v) in cur.iter().enumerate() {
        if let Some(v) = v {
            let hits = ix.search_with_ef(v, 10, 64).expect("search");
            if !hits.iter().any(|(l, _)| *l == k as u64) {
                out.push(k as u64);
            }
        }
    }
    out
}

#[test]
fn updates_and_deletes_keep_every_key_reachable() {
    let (ix, cur) = churn(88_172_645_463_325_252, 3_000, 60_000, 8);
    let live = cur.iter().filter(|v| v.is_some()).count();
    assert_eq!(ix.len(), live);
    assert_eq!(unreachable(&ix, &cur), Vec::<u64>::new());
    // Deleted keys are never returned.
    for (k, v) in cur.iter().enumerate() {
        if v.is_none() {
            assert!(!ix.contains(k as u64));
        }
    }
}

#[test]
fn tombstones_survive_a_round_trip_and_compaction_keeps_everything() {
    let (mut ix, cur) = churn(7, 500, 6_000, 4);
    let bytes = ix.to_bytes().expect("save");
    let back = VectorIndex::from_bytes(&bytes).expect("load");
    assert_eq!(back.len(), ix.len());
    assert_eq!(back.tombstones(), ix.tombstones());
    assert_eq!(unreachable(&back, &cur), Vec::<u64>::new());
    ix.compact().expect("compact");
    assert_eq!(ix.tombstones(), 0);
    assert_eq!(ix.len(), cur.iter().filter(|v| v.is_some()).count());
    assert_eq!(unreachable(&ix, &cur), Vec::<u64>::new());
}
