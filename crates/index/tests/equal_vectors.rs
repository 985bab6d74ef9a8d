//! Many equal vectors (issue 38, item 8): every key stays findable and the
//! build takes about as long as for distinct vectors. Before decision 020
//! each key was its own graph node: 20,000 copies of one 128-d vector took
//! 30–70 s to add and left ~19,000 of them unreachable.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::time::{Duration, Instant};

use tributary_index::{HnswOptions, Metric, VectorIndex};

mod common;
use common::Rng;

const DIMS: usize = 128;
/// Generous for a debug build on a loaded 2-core CI machine; the build
/// itself takes milliseconds (tens of seconds before decision 020).
const BUILD_BOUND: Duration = Duration::from_secs(20);

/// The beam of the searches that look for every key: uniform 128-d
/// vectors are HNSW's hard case, where the default beam (64) misses a few
/// distinct vectors too, duplicates or not.
const BEAM: usize = 256;

/// The keys a search for `v` returns when asked for all `ties` copies
/// plus a margin (as CHECK INDEX asks).
fn found(ix: &VectorIndex, v: &[f32], ties: usize) -> Vec<u64> {
    let k = ties + 16;
    let mut keys: Vec<u64> = ix
        .search_with_ef(v, k, k.max(BEAM))
        .expect("search")
        .into_iter()
        .map(|(key, _)| key)
        .collect();
    keys.sort_unstable();
    keys
}

#[test]
fn twenty_thousand_equal_vectors_build_fast_and_are_all_found() {
    let mut rng = Rng::new(0x2545_F491_4F6C_DD1D);
    let same = rng.vector(DIMS);
    let n = 20_000u64;
    let mut ix = VectorIndex::new(HnswOptions::new(DIMS, Metric::L2)).expect("index");
    let t = Instant::now();
    for k in 0..n {
        ix.upsert(k, &same).expect("upsert");
    }
    // A few distinct vectors beside them.
    let others: Vec<Vec<f32>> = (0..50).map(|_| rng.vector(DIMS)).collect();
    for (i, v) in others.iter().enumerate() {
        ix.upsert(n + i as u64, v).expect("upsert");
    }
    let took = t.elapsed();
    assert!(took < BUILD_BOUND, "20k equal vectors took {took:?}");
    assert_eq!(ix.len(), n as usize + others.len());
    assert_eq!(ix.live_nodes(), 1 + others.len());
    // Every copy is found, at distance 0.
    let all = found(&ix, &same, n as usize);
    assert_eq!(&all[..n as usize], (0..n).collect::<Vec<_>>().as_slice());
    // k counts keys: the 10 smallest keys of the tie, all at distance 0.
    let top = ix.search(&same, 10).expect("search");
    assert_eq!(
        top.iter().map(|h| h.0).collect::<Vec<_>>(),
        (0..10).collect::<Vec<_>>()
    );
    assert!(top.iter().all(|h| h.1 == 0.0), "{top:?}");
    for (i, v) in others.iter().enumerate() {
        assert_eq!(ix.search(v, 1).expect("search")[0].0, n + i as u64);
    }
    // After a save and load, and after a compaction.
    let back = VectorIndex::from_bytes(&ix.to_bytes().expect("save")).expect("load");
    assert_eq!(found(&back, &same, n as usize), all);
    ix.compact().expect("compact");
    assert_eq!(found(&ix, &same, n as usize), all);
}

#[test]
fn half_duplicates_survive_deletes_updates_round_trips_and_compaction() {
    let mut rng = Rng::new(88_172_645_463_325_252);
    let distinct: Vec<Vec<f32>> = (0..5_000).map(|_| rng.vector(DIMS)).collect();
    // Keys 0..5000 hold the distinct vectors; 5000..10000 copies of them.
    let mut cur: Vec<Option<usize>> = (0..5_000).map(Some).collect();
    for _ in 0..5_000 {
        cur.push(Some(rng.below(5_000)));
    }
    let mut ix = VectorIndex::new(HnswOptions::new(DIMS, Metric::L2)).expect("index");
    let t = Instant::now();
    for (k, v) in cur.iter().enumerate() {
        ix.upsert(k as u64, &distinct[v.expect("set")])
            .expect("upsert");
    }
    assert!(t.elapsed() < BUILD_BOUND, "took {:?}", t.elapsed());
    assert_eq!(ix.live_nodes(), 5_000);
    let check = |ix: &VectorIndex, cur: &[Option<usize>], phase: &str| {
        let mut holders: Vec<Vec<u64>> = vec![Vec::new(); distinct.len()];
        for (k, v) in cur.iter().enumerate() {
            if let Some(i) = v {
                holders[*i].push(k as u64);
            }
        }
        assert_eq!(ix.len(), cur.iter().flatten().count(), "{phase}");
        let mut lost = 0;
        for (i, keys) in holders.iter().enumerate() {
            if keys.is_empty() {
                continue;
            }
            let got = found(ix, &distinct[i], keys.len());
            lost += keys
                .iter()
                .filter(|k| got.binary_search(k).is_err())
                .count();
            // Deleted keys are never returned.
            assert!(got.iter().all(|k| ix.contains(*k)), "{phase}");
        }
        assert_eq!(lost, 0, "{phase}: keys not found by their own vector");
    };
    check(&ix, &cur, "built");
    // Delete every third key, move every seventh to another existing vector.
    for (k, slot) in cur.iter_mut().enumerate() {
        if k % 3 == 0 {
            assert!(ix.remove(k as u64).expect("remove"));
            *slot = None;
        } else if k % 7 == 0 {
            let to = rng.below(5_000);
            ix.upsert(k as u64, &distinct[to]).expect("upsert");
            *slot = Some(to);
        }
    }
    check(&ix, &cur, "after deletes and updates");
    let back = VectorIndex::from_bytes(&ix.to_bytes().expect("save")).expect("load");
    assert_eq!(back.tombstones(), ix.tombstones());
    check(&back, &cur, "loaded");
    ix.compact().expect("compact");
    assert_eq!(ix.tombstones(), 0);
    check(&ix, &cur, "compacted");
}

#[test]
fn a_node_outlives_its_first_key_and_a_copy_revives_a_tombstone() {
    let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::L2)).expect("index");
    for k in 1..=3 {
        ix.upsert(k, &[1.0, 2.0]).expect("upsert");
    }
    ix.upsert(9, &[5.0, 5.0]).expect("upsert");
    assert!(ix.remove(1).expect("remove"));
    let hits = ix.search(&[1.0, 2.0], 3).expect("search");
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![2, 3, 9]);
    // Key 2 moves away, key 3 is deleted: the node is a tombstone.
    ix.upsert(2, &[5.0, 5.0]).expect("upsert");
    assert!(ix.remove(3).expect("remove"));
    assert_eq!(ix.tombstones(), 1);
    assert_eq!(ix.live_nodes(), 1);
    let hits = ix.search(&[1.0, 2.0], 5).expect("search");
    assert_eq!(hits.iter().map(|h| h.0).collect::<Vec<_>>(), vec![2, 9]);
    // The vector comes back (as -0.0 = 0.0 would): the tombstone lives again.
    ix.upsert(4, &[1.0, 2.0]).expect("upsert");
    assert_eq!((ix.tombstones(), ix.live_nodes()), (0, 2));
    ix.upsert(5, &[-0.0, 1.0]).expect("upsert");
    ix.upsert(6, &[0.0, 1.0]).expect("upsert");
    assert_eq!(ix.live_nodes(), 3);
    assert_eq!(ix.search(&[1.0, 2.0], 1).expect("search")[0].0, 4);
}

#[test]
fn deferred_equal_vectors_join_one_node() {
    let mut rng = Rng::new(42);
    let same = rng.vector(DIMS);
    let n = 20_000u64;
    let mut ix = VectorIndex::new(HnswOptions::new(DIMS, Metric::Cosine)).expect("index");
    let t = Instant::now();
    for k in 0..n {
        ix.upsert_deferred(k, &same).expect("upsert");
    }
    // The tail held them (the graph had no such vector) until it was
    // full; the first add made the node the rest then joined.
    assert_eq!(found(&ix, &same, n as usize).len(), n as usize);
    while ix.add_deferred(16).expect("add") > 0 {}
    assert!(t.elapsed() < BUILD_BOUND, "took {:?}", t.elapsed());
    assert_eq!((ix.tail_len(), ix.live_nodes()), (0, 1));
    assert_eq!(found(&ix, &same, n as usize), (0..n).collect::<Vec<_>>());
    // Once the node exists a copy joins it at once, without the tail.
    ix.upsert_deferred(n, &same).expect("upsert");
    assert_eq!(ix.tail_len(), 0);
    assert_eq!(ix.len(), n as usize + 1);
}

#[test]
fn filtered_search_over_a_tie_counts_and_asks_each_key_once() {
    let mut ix = VectorIndex::new(HnswOptions::new(DIMS, Metric::L2)).expect("index");
    let mut rng = Rng::new(7);
    let same = rng.vector(DIMS);
    for k in 0..5_000u64 {
        ix.upsert(k, &same).expect("upsert");
    }
    // Enough distinct nodes that the graph is walked, not scanned.
    for k in 5_000..7_000u64 {
        ix.upsert(k, &rng.vector(DIMS)).expect("upsert");
    }
    let asked = std::cell::RefCell::new(std::collections::HashMap::<u64, usize>::new());
    let keep = |k: u64| {
        *asked.borrow_mut().entry(k).or_default() += 1;
        k % 1_000 == 7 || k == 6_001
    };
    let hits = ix
        .try_search_filtered(&same, 4, 64, &keep)
        .expect("search")
        .expect("a slot");
    assert_eq!(
        hits.iter().map(|h| h.0).collect::<Vec<_>>(),
        vec![7, 1_007, 2_007, 3_007]
    );
    assert!(asked.borrow().values().all(|&n| n == 1));
}
