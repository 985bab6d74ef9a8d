//! Group commit (issue 11): concurrent committers share one durable write,
//! timestamps stay strictly increasing and gap-free in commit order, rows
//! and change log become visible together, a failed group fails every one
//! of its transactions, and the periodic mode's loss window is what it
//! says. The crash tests are in `tests/durability.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::collections::BTreeSet;
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use tributary_storage::{Durability, EmbeddedOptions, EmbeddedStorage, Storage, TxnOptions};

const T: u64 = 21;

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

/// Commits queued behind a held commit mutex are written by the next
/// leader as one group: one durable write, consecutive timestamps, each
/// transaction's own.
#[test]
fn queued_commits_are_written_as_one_group() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    let before = s.commit_groups();
    let first = s.latest_ts();
    const N: usize = 8;
    let results = {
        let hold = s.hold_commits();
        let handles: Vec<_> = (0..N)
            .map(|i| {
                let s = s.clone();
                std::thread::spawn(move || {
                    let mut t = s.begin(TxnOptions::default()).unwrap();
                    t.put(T, &(i as u64).to_be_bytes(), vec![i as u8; 10])
                        .unwrap();
                    t.put(T + 1, &(i as u64).to_be_bytes(), vec![1]).unwrap();
                    (i, t.commit())
                })
            })
            .collect();
        wait_until("every commit to queue", || s.queued_commits() == N);
        // Nothing is visible while the group waits.
        assert_eq!(s.latest_ts(), first);
        drop(hold);
        handles
            .into_iter()
            .map(|h| h.join().unwrap())
            .collect::<Vec<_>>()
    };
    assert_eq!(s.commit_groups() - before, 1, "one durable write for all");
    let tss: BTreeSet<u64> = results.iter().map(|(_, r)| *r.as_ref().unwrap()).collect();
    let expected: BTreeSet<u64> = (first + 1..=first + N as u64).collect();
    assert_eq!(tss, expected, "consecutive, distinct timestamps");
    assert_eq!(s.latest_ts(), first + N as u64);
    // Every transaction's changes carry its own timestamp, in both tables.
    for table in [T, T + 1] {
        let changes = s
            .changes(table, first, u64::MAX, None, 100)
            .unwrap()
            .changes;
        assert_eq!(changes.len(), N);
        for (i, r) in &results {
            let ts = *r.as_ref().unwrap();
            let c = changes
                .iter()
                .find(|c| c.key == (*i as u64).to_be_bytes())
                .unwrap();
            assert_eq!(c.commit_ts, ts, "txn {i} in table {table}");
        }
    }
    // A snapshot between two members of the group sees exactly the earlier ones.
    let mid = first + N as u64 / 2;
    let rows = s.snapshot_scan(T, mid, None, usize::MAX).unwrap();
    assert_eq!(rows.len(), N / 2);
}

/// Many threads committing at once: every commit acknowledged exactly once
/// with a distinct timestamp, increasing per thread, no gaps overall; the
/// change log holds each in timestamp order; fewer durable writes than
/// commits.
#[test]
fn concurrent_committers_keep_the_commit_order_contract() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    const THREADS: u64 = 12;
    const PER: u64 = 150;
    let start = Arc::new(Barrier::new(THREADS as usize));
    let handles: Vec<_> = (0..THREADS)
        .map(|th| {
            let s = s.clone();
            let start = start.clone();
            std::thread::spawn(move || {
                start.wait();
                let mut mine = Vec::new();
                for i in 0..PER {
                    let mut t = s.begin(TxnOptions::default()).unwrap();
                    let key = (th * PER + i).to_be_bytes();
                    t.put(T, &key, th.to_be_bytes().to_vec()).unwrap();
                    let ts = t.commit().unwrap();
                    // Visible to a transaction begun after the commit returned.
                    let mut r = s.begin(TxnOptions::default()).unwrap();
                    assert!(r.start_ts() >= ts);
                    assert_eq!(
                        r.get(T, &key, false).unwrap(),
                        Some(th.to_be_bytes().to_vec())
                    );
                    mine.push(ts);
                }
                mine
            })
        })
        .collect();
    let mut all = Vec::new();
    for h in handles {
        let mine = h.join().unwrap();
        assert!(mine.windows(2).all(|w| w[0] < w[1]), "per-thread order");
        all.extend(mine);
    }
    all.sort_unstable();
    let n = THREADS * PER;
    assert_eq!(all, (1..=n).collect::<Vec<_>>(), "distinct, gap-free");
    let changes = s.changes(T, 0, u64::MAX, None, usize::MAX).unwrap().changes;
    assert_eq!(changes.len() as u64, n);
    assert!(changes.windows(2).all(|w| w[0].commit_ts < w[1].commit_ts));
    eprintln!(
        "{n} commits in {} groups and {} log syncs",
        s.commit_groups(),
        s.log_syncs()
    );
    assert!(s.commit_groups() <= n);
    // One sync covers every group written before it began.
    assert!(s.log_syncs() >= 1 && s.log_syncs() <= s.commit_groups());
}

/// A transaction whose writes net to nothing (insert then delete) in a
/// group takes no timestamp and leaves the others' consecutive.
#[test]
fn an_empty_transaction_in_a_group_takes_no_timestamp() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    let first = s.latest_ts();
    let hold = s.hold_commits();
    let spawn = |k: u8, undo: bool| {
        let s = s.clone();
        std::thread::spawn(move || {
            let mut t = s.begin(TxnOptions::default()).unwrap();
            t.put(T, &[k], vec![k]).unwrap();
            if undo {
                t.delete(T, &[k]).unwrap();
            }
            t.commit().unwrap()
        })
    };
    let a = spawn(1, false);
    wait_until("a to queue", || s.queued_commits() == 1);
    let b = spawn(2, true);
    wait_until("b to queue", || s.queued_commits() == 2);
    let c = spawn(3, false);
    wait_until("c to queue", || s.queued_commits() == 3);
    drop(hold);
    let (a, b, c) = (a.join().unwrap(), b.join().unwrap(), c.join().unwrap());
    assert_eq!((a, c), (first + 1, first + 2));
    assert_eq!(b, first, "an empty commit returns its start ts");
    assert_eq!(s.latest_ts(), first + 2);
}

/// Periodic mode: commits are acknowledged before an fsync, the flush
/// thread makes them durable within a period, and a clean close flushes
/// what is left.
#[test]
fn periodic_mode_flushes_within_the_period_and_at_close() {
    let dir = tempfile::tempdir().unwrap();
    let period = Duration::from_millis(20);
    let last;
    {
        let s = EmbeddedStorage::open_with(
            dir.path(),
            EmbeddedOptions {
                durability: Durability::Periodic(period),
                ..Default::default()
            },
        )
        .unwrap();
        let mut ts = 0;
        for i in 0..50u32 {
            let mut t = s.begin(TxnOptions::default()).unwrap();
            t.put(T, &i.to_be_bytes(), b"x".to_vec()).unwrap();
            ts = t.commit().unwrap();
        }
        wait_until("the flush thread", || s.durable_ts() >= ts);
        for i in 50..80u32 {
            let mut t = s.begin(TxnOptions::default()).unwrap();
            t.put(T, &i.to_be_bytes(), b"x".to_vec()).unwrap();
            ts = t.commit().unwrap();
        }
        last = ts;
    }
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    assert_eq!(s.latest_ts(), last);
    assert_eq!(
        s.snapshot_scan(T, last, None, usize::MAX).unwrap().len(),
        80
    );
}

/// The applier lets commits gather before it writes them to the file, but
/// a lone commit still gets there with nobody asking, and a change-log
/// reader is answered with every commit so far (it asks for the queue at
/// once instead of waiting out the gathering).
#[test]
fn the_applier_writes_a_lone_commit_and_hurries_for_a_reader() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    let put = |k: u32| {
        let mut t = s.begin(TxnOptions::default()).unwrap();
        t.put(T, &k.to_be_bytes(), b"v".to_vec()).unwrap();
        t.commit().unwrap()
    };
    let ts = put(0);
    wait_until("the lone commit in the file", || s.applied_ts() >= ts);
    let mut last = ts;
    for k in 1..50 {
        last = put(k);
    }
    let batch = s.changes(T, 0, last, None, 1000).unwrap();
    assert_eq!(batch.changes.len(), 50);
    assert!(s.applied_ts() >= last);
}
