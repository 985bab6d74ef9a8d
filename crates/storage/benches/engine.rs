//! Throughput of the embedded engine through the `Storage` trait: durable
//! single-key commits, 100-key batch commits, point gets and scans.
//! Run with `cargo bench -p tributary-storage --bench engine`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::time::{Duration, Instant};

use tributary_storage::{full_range, EmbeddedStorage, Storage, TxnOptions};

const T: u64 = 1;

fn report(metric: &str, n: u64, elapsed: Duration, unit: &str) {
    let rate = n as f64 / elapsed.as_secs_f64();
    println!("{metric:<28} {rate:>12.0} {unit}/s  ({n} in {elapsed:.2?})");
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = EmbeddedStorage::open(dir.path()).expect("open");
    let value = vec![0xAB_u8; 100];

    let n = 2_000u64;
    let start = Instant::now();
    for i in 0..n {
        let mut t = s.begin(TxnOptions::default()).expect("begin");
        t.put(T, &i.to_be_bytes(), value.clone()).expect("put");
        t.commit().expect("commit");
    }
    report("commit_single_key", n, start.elapsed(), "txn");

    let batches = 200u64;
    let start = Instant::now();
    for b in 0..batches {
        let mut t = s.begin(TxnOptions::default()).expect("begin");
        for j in 0..100u64 {
            let k = n + b * 100 + j;
            t.put(T, &k.to_be_bytes(), value.clone()).expect("put");
        }
        t.commit().expect("commit");
    }
    let e = start.elapsed();
    report("commit_batch_100", batches, e, "txn");
    report("commit_batch_100_rows", batches * 100, e, "row");

    let total = n + batches * 100;
    let gets = 200_000u64;
    let mut t = s.begin(TxnOptions::default()).expect("begin");
    let start = Instant::now();
    let mut found = 0u64;
    for i in 0..gets {
        let k = (i * 7919) % total;
        if t.get(T, &k.to_be_bytes(), false).expect("get").is_some() {
            found += 1;
        }
    }
    report("point_get", gets, start.elapsed(), "get");
    assert_eq!(found, gets);

    let rounds = 20u64;
    let start = Instant::now();
    let mut rows = 0u64;
    for _ in 0..rounds {
        let (lo, hi) = full_range();
        rows += t.scan(T, lo, hi, usize::MAX).expect("scan").len() as u64;
    }
    report("scan_txn", rows, start.elapsed(), "row");

    let start = Instant::now();
    let mut rows = 0u64;
    let ts = s.latest_ts();
    for _ in 0..rounds {
        let mut after: Option<Vec<u8>> = None;
        loop {
            let batch = s
                .snapshot_scan(T, ts, after.as_deref(), 1024)
                .expect("snapshot_scan");
            rows += batch.len() as u64;
            match batch.last() {
                Some((k, _)) => after = Some(k.clone()),
                None => break,
            }
        }
    }
    report("snapshot_scan_1024", rows, start.elapsed(), "row");

    let start = Instant::now();
    let mut changes = 0u64;
    let mut resume = None;
    loop {
        let b = s.changes(T, 0, ts, resume, 1024).expect("changes");
        changes += b.changes.len() as u64;
        match b.resume {
            Some(r) => resume = Some(r),
            None => break,
        }
    }
    report("changes_1024", changes, start.elapsed(), "change");
}
