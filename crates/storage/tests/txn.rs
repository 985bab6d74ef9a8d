//! Transactions: snapshot isolation, own writes, savepoints, row locks
//! (shared and exclusive), deadlocks, lock-wait timeouts and concurrent
//! read-modify-write.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::ops::Bound;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use tributary_storage::{full_range, EmbeddedStorage, LockWait, Storage, StorageError, TxnOptions};

const T: u64 = 7;

fn open() -> (tempfile::TempDir, Arc<EmbeddedStorage>) {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    (dir, s)
}

fn put_commit(s: &EmbeddedStorage, key: &[u8], value: &[u8]) -> u64 {
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, key, value.to_vec()).unwrap();
    t.commit().unwrap()
}

fn opts(timeout_ms: u64) -> TxnOptions {
    TxnOptions {
        lock_wait_timeout: Duration::from_millis(timeout_ms),
        read_only: false,
        ..TxnOptions::default()
    }
}

/// Upper bound for anything that is expected to happen.
const LONG: Duration = Duration::from_secs(10);

/// Lock-wait timeout (ms) of requests that must be woken by a release or
/// fail with a deadlock: longer than [`LONG`], so a lost wake-up or a missed
/// deadlock fails the test instead of being rescued by the timeout.
const WAIT_MS: u64 = 30_000;

/// What [`spawn_put_commit`]'s thread reports: the put's result (the value
/// it replaced) and, if it succeeded, the commit's.
type PutCommit = (
    Result<Option<Vec<u8>>, StorageError>,
    Result<Result<u64, StorageError>, StorageError>,
);

/// In a thread: `txn` puts `k` = "1" (waiting for its lock) and commits.
fn spawn_put_commit(
    mut txn: Box<dyn tributary_storage::Transaction>,
) -> (mpsc::Receiver<PutCommit>, thread::JoinHandle<()>) {
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let r = txn.put(T, b"k", b"1".to_vec());
        let c = r.clone().map(|_| txn.commit());
        tx.send((r, c)).unwrap();
    });
    (rx, h)
}

/// The [`spawn_put_commit`] thread replaced "0" and committed "1".
fn assert_put_committed(
    s: &EmbeddedStorage,
    rx: &mpsc::Receiver<PutCommit>,
    h: thread::JoinHandle<()>,
) {
    let (r, c) = rx.recv_timeout(LONG).unwrap();
    assert_eq!(r, Ok(Some(b"0".to_vec())));
    assert!(c.unwrap().is_ok());
    h.join().unwrap();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"k", false).unwrap(), Some(b"1".to_vec()));
}

/// Wait (bounded by [`LONG`]) until `txn` is blocked in a lock wait. Fails if
/// the blocked call's result arrives on `done` first, i.e. it was not blocked.
fn wait_until_blocked<R: std::fmt::Debug>(s: &EmbeddedStorage, txn: u64, done: &mpsc::Receiver<R>) {
    let deadline = Instant::now() + LONG;
    loop {
        if s.lock_waiters().contains(&txn) {
            return;
        }
        match done.try_recv() {
            Ok(r) => panic!("txn {txn} was not blocked: {r:?}"),
            Err(mpsc::TryRecvError::Disconnected) => panic!("txn {txn}'s thread died"),
            Err(mpsc::TryRecvError::Empty) => {}
        }
        assert!(Instant::now() < deadline, "txn {txn} never blocked");
        thread::yield_now();
    }
}

/// A transaction that is waiting must stay waiting: its result has not
/// arrived and it is still registered as a lock waiter.
fn assert_still_blocked<R: std::fmt::Debug>(
    s: &EmbeddedStorage,
    txn: u64,
    done: &mpsc::Receiver<R>,
) {
    if let Ok(r) = done.recv_timeout(Duration::from_millis(100)) {
        panic!("txn {txn} was not blocked: {r:?}");
    }
    assert!(s.lock_waiters().contains(&txn), "txn {txn} stopped waiting");
}

#[test]
fn snapshot_does_not_see_later_commits() {
    let (_d, s) = open();
    put_commit(&s, b"a", b"1");
    let mut reader = s.begin(TxnOptions::default()).unwrap();
    put_commit(&s, b"a", b"2");
    put_commit(&s, b"b", b"x");
    assert_eq!(reader.get(T, b"a", false).unwrap(), Some(b"1".to_vec()));
    assert_eq!(reader.get(T, b"b", false).unwrap(), None);
    let (lo, hi) = full_range();
    assert_eq!(
        reader.scan(T, lo, hi, usize::MAX).unwrap(),
        vec![(b"a".to_vec(), b"1".to_vec())]
    );
    // A locking read is a current read.
    assert_eq!(reader.get(T, b"a", true).unwrap(), Some(b"2".to_vec()));
    let mut fresh = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(fresh.get(T, b"a", false).unwrap(), Some(b"2".to_vec()));
}

#[test]
fn own_writes_are_visible_and_scan_merges() {
    let (_d, s) = open();
    for k in [b"a", b"c", b"e"] {
        put_commit(&s, k, b"old");
    }
    let mut t = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(t.put(T, b"b", b"new".to_vec()).unwrap(), None);
    assert_eq!(
        t.put(T, b"c", b"new".to_vec()).unwrap(),
        Some(b"old".to_vec())
    );
    assert_eq!(t.delete(T, b"e").unwrap(), Some(b"old".to_vec()));
    t.put(T, b"f", b"new".to_vec()).unwrap();
    assert_eq!(t.get(T, b"c", false).unwrap(), Some(b"new".to_vec()));
    assert_eq!(t.get(T, b"e", false).unwrap(), None);
    let (lo, hi) = full_range();
    let rows = t.scan(T, lo, hi, usize::MAX).unwrap();
    let keys: Vec<(&[u8], &[u8])> = rows
        .iter()
        .map(|(k, v)| (k.as_slice(), v.as_slice()))
        .collect();
    assert_eq!(
        keys,
        vec![
            (&b"a"[..], &b"old"[..]),
            (b"b", b"new"),
            (b"c", b"new"),
            (b"f", b"new")
        ]
    );
    // Bounds and limit.
    let rows = t
        .scan(
            T,
            Bound::Excluded(b"a".to_vec()),
            Bound::Included(b"f".to_vec()),
            2,
        )
        .unwrap();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].0, b"b");
    assert_eq!(rows[1].0, b"c");
    // Inverted range is empty, not a panic.
    let rows = t
        .scan(
            T,
            Bound::Included(b"z".to_vec()),
            Bound::Excluded(b"a".to_vec()),
            10,
        )
        .unwrap();
    assert!(rows.is_empty());
}

#[test]
fn commit_timestamps_strictly_increase() {
    let (_d, s) = open();
    let mut last = s.latest_ts();
    for i in 0..20u32 {
        let ts = put_commit(&s, &i.to_be_bytes(), b"v");
        assert!(ts > last, "{ts} <= {last}");
        assert_eq!(s.latest_ts(), ts);
        last = ts;
    }
    // Empty and read-only transactions return their start ts.
    let t = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(t.commit().unwrap(), last);
    let mut ro = s
        .begin(TxnOptions {
            read_only: true,
            ..TxnOptions::default()
        })
        .unwrap();
    assert!(matches!(
        ro.put(T, b"x", b"y".to_vec()),
        Err(StorageError::ReadOnly)
    ));
    assert_eq!(ro.commit().unwrap(), last);
}

#[test]
fn refresh_snapshot_sees_new_commits_and_keeps_own_writes() {
    let (_d, s) = open();
    put_commit(&s, b"a", b"0");
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, b"own", b"1".to_vec()).unwrap();
    let before = t.start_ts();
    let ts = put_commit(&s, b"a", b"1");
    put_commit(&s, b"b", b"2");
    // Still the old snapshot until it is refreshed.
    assert_eq!(t.get(T, b"a", false).unwrap(), Some(b"0".to_vec()));
    assert_eq!(t.get(T, b"b", false).unwrap(), None);
    t.refresh_snapshot().unwrap();
    assert!(t.start_ts() >= ts && t.start_ts() > before);
    assert_eq!(t.get(T, b"a", false).unwrap(), Some(b"1".to_vec()));
    assert_eq!(t.get(T, b"b", false).unwrap(), Some(b"2".to_vec()));
    assert_eq!(t.get(T, b"own", false).unwrap(), Some(b"1".to_vec()));
    let (lo, hi) = full_range();
    assert_eq!(t.scan(T, lo, hi, 10).unwrap().len(), 3);
    t.commit().unwrap();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"own", false).unwrap(), Some(b"1".to_vec()));
}

#[test]
fn locking_reads_without_waiting() {
    let (_d, s) = open();
    put_commit(&s, b"a", b"1");
    put_commit(&s, b"b", b"2");
    let mut holder = s.begin(TxnOptions::default()).unwrap();
    holder.get(T, b"a", true).unwrap();
    // A long timeout: a request that waited would fail the test's bound.
    let mut t = s.begin(opts(60_000)).unwrap();
    t.set_lock_wait(LockWait::NoWait).unwrap();
    assert!(matches!(
        t.get(T, b"a", true),
        Err(StorageError::LockNotAvailable)
    ));
    assert_eq!(t.get(T, b"b", true).unwrap(), Some(b"2".to_vec()));
    t.set_lock_wait(LockWait::SkipLocked).unwrap();
    assert_eq!(t.get(T, b"a", true).unwrap(), None);
    // Its own lock is no obstacle; a plain read is never skipped.
    assert_eq!(t.get(T, b"b", true).unwrap(), Some(b"2".to_vec()));
    assert_eq!(t.get(T, b"a", false).unwrap(), Some(b"1".to_vec()));
    holder.rollback();
    assert_eq!(t.get(T, b"a", true).unwrap(), Some(b"1".to_vec()));
    t.set_lock_wait(LockWait::Wait).unwrap();
    t.commit().unwrap();
}

#[test]
fn savepoint_rollback_undoes_later_writes_only() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, b"k", b"1".to_vec()).unwrap();
    let sp = t.savepoint();
    t.put(T, b"k", b"2".to_vec()).unwrap();
    t.put(T, b"other", b"x".to_vec()).unwrap();
    assert_eq!(t.get(T, b"k", false).unwrap(), Some(b"2".to_vec()));
    t.rollback_to(sp);
    assert_eq!(t.get(T, b"k", false).unwrap(), Some(b"1".to_vec()));
    assert_eq!(t.get(T, b"other", false).unwrap(), None);
    assert!(t.has_writes());
    let sp0 = tributary_storage::Savepoint(0);
    let mut t2 = s.begin(TxnOptions::default()).unwrap();
    t2.put(T, b"z", b"z".to_vec()).unwrap();
    t2.rollback_to(sp0);
    assert!(!t2.has_writes());
    drop(t2);
    t.commit().unwrap();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"k", false).unwrap(), Some(b"1".to_vec()));
    assert_eq!(r.get(T, b"other", false).unwrap(), None);
}

#[test]
fn ended_transaction_is_closed_and_rollback_discards() {
    let (_d, s) = open();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, b"k", b"v".to_vec()).unwrap();
    t.rollback();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"k", false).unwrap(), None);
    // The lock was released by the rollback.
    let mut w = s.begin(opts(200)).unwrap();
    w.put(T, b"k", b"v".to_vec()).unwrap();
}

#[test]
fn lock_blocks_until_holder_commits() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut holder = s.begin(TxnOptions::default()).unwrap();
    holder.put(T, b"k", b"1".to_vec()).unwrap();
    let (tx, rx) = mpsc::channel();
    let s2 = s.clone();
    let waiter = thread::spawn(move || {
        let mut t = s2.begin(opts(10_000)).unwrap();
        tx.send(()).unwrap();
        let v = t.get(T, b"k", true).unwrap();
        t.commit().unwrap();
        v
    });
    rx.recv().unwrap();
    // The waiter cannot finish while we hold the lock.
    assert!(!waiter.is_finished());
    holder.commit().unwrap();
    assert_eq!(waiter.join().unwrap(), Some(b"1".to_vec()));
}

#[test]
fn lock_wait_times_out() {
    let (_d, s) = open();
    let mut holder = s.begin(TxnOptions::default()).unwrap();
    holder.lock(T, b"k").unwrap();
    let mut t = s.begin(opts(200)).unwrap();
    let started = Instant::now();
    assert_eq!(
        t.put(T, b"k", b"v".to_vec()),
        Err(StorageError::LockWaitTimeout)
    );
    assert!(started.elapsed() >= Duration::from_millis(200));
    // The transaction survives: other rows still work.
    t.put(T, b"other", b"v".to_vec()).unwrap();
}

#[test]
fn deadlock_fails_exactly_one_requester() {
    let (_d, s) = open();
    let barrier = Arc::new(Barrier::new(2));
    let mut handles = Vec::new();
    for (first, second) in [(b"a", b"b"), (b"b", b"a")] {
        let s = s.clone();
        let barrier = barrier.clone();
        handles.push(thread::spawn(move || {
            let mut t = s.begin(opts(20_000)).unwrap();
            t.lock(T, first).unwrap();
            barrier.wait();
            let r = t.lock(T, second);
            match r {
                Err(StorageError::Deadlock) => {
                    t.rollback();
                    false
                }
                Ok(()) => {
                    t.commit().unwrap();
                    true
                }
                Err(e) => panic!("unexpected {e}"),
            }
        }));
    }
    let results: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results.iter().filter(|ok| **ok).count(), 1, "{results:?}");
}

#[test]
fn concurrent_locked_increments_lose_nothing() {
    let (_d, s) = open();
    put_commit(&s, b"counter", &0u64.to_be_bytes());
    let threads: Vec<_> = (0..10)
        .map(|_| {
            let s = s.clone();
            thread::spawn(move || {
                for _ in 0..50 {
                    let mut t = s.begin(opts(30_000)).unwrap();
                    let v = t.get(T, b"counter", true).unwrap().unwrap();
                    let n = u64::from_be_bytes(v.try_into().unwrap());
                    t.put(T, b"counter", (n + 1).to_be_bytes().to_vec())
                        .unwrap();
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let mut r = s.begin(TxnOptions::default()).unwrap();
    let v = r.get(T, b"counter", false).unwrap().unwrap();
    assert_eq!(u64::from_be_bytes(v.try_into().unwrap()), 500);
}

#[test]
fn two_txns_hold_shared_lock_together() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut a = s.begin(opts(200)).unwrap();
    let mut b = s.begin(opts(200)).unwrap();
    assert_eq!(a.get_for_share(T, b"k").unwrap(), Some(b"0".to_vec()));
    // An exclusive lock would make this time out.
    assert_eq!(b.get_for_share(T, b"k").unwrap(), Some(b"0".to_vec()));
    // Both still hold S: a writer times out, and re-asking S is a no-op.
    let mut w = s.begin(opts(100)).unwrap();
    assert_eq!(
        w.put(T, b"k", b"1".to_vec()),
        Err(StorageError::LockWaitTimeout)
    );
    assert_eq!(a.get_for_share(T, b"k").unwrap(), Some(b"0".to_vec()));
    a.commit().unwrap();
    assert_eq!(
        w.put(T, b"k", b"1".to_vec()),
        Err(StorageError::LockWaitTimeout),
        "b still holds S"
    );
    b.commit().unwrap();
    w.put(T, b"k", b"1".to_vec()).unwrap();
}

#[test]
fn shared_blocks_exclusive_until_holder_commits() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut holder = s.begin(TxnOptions::default()).unwrap();
    holder.get_for_share(T, b"k").unwrap();
    let writer = s.begin(opts(WAIT_MS)).unwrap();
    let writer_id = writer.id();
    let (rx, h) = spawn_put_commit(writer);
    wait_until_blocked(&s, writer_id, &rx);
    assert_still_blocked(&s, writer_id, &rx);
    holder.commit().unwrap();
    assert_put_committed(&s, &rx, h);
}

#[test]
fn exclusive_blocks_shared_and_share_read_is_current() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    // The reader's snapshot predates the writer's commit.
    let mut reader = s.begin(opts(WAIT_MS)).unwrap();
    let reader_id = reader.id();
    let mut holder = s.begin(TxnOptions::default()).unwrap();
    holder.put(T, b"k", b"1".to_vec()).unwrap();
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let shared = reader.get_for_share(T, b"k");
        let snapshot = reader.get(T, b"k", false);
        tx.send((shared, snapshot)).unwrap();
        reader.commit().unwrap();
    });
    wait_until_blocked(&s, reader_id, &rx);
    assert_still_blocked(&s, reader_id, &rx);
    holder.commit().unwrap();
    let (shared, snapshot) = rx.recv_timeout(LONG).unwrap();
    // Current read, not the snapshot.
    assert_eq!(shared, Ok(Some(b"1".to_vec())));
    assert_eq!(snapshot, Ok(Some(b"0".to_vec())));
    h.join().unwrap();
}

#[test]
fn sole_shared_holder_upgrades_to_exclusive() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut t = s.begin(opts(200)).unwrap();
    t.get_for_share(T, b"k").unwrap();
    assert_eq!(t.put(T, b"k", b"1".to_vec()).unwrap(), Some(b"0".to_vec()));
    // Now exclusive: another share request waits and times out.
    let mut other = s.begin(opts(100)).unwrap();
    assert_eq!(
        other.get_for_share(T, b"k"),
        Err(StorageError::LockWaitTimeout)
    );
    // X covers S.
    assert_eq!(t.get_for_share(T, b"k").unwrap(), Some(b"1".to_vec()));
    t.commit().unwrap();
    assert_eq!(other.get_for_share(T, b"k").unwrap(), Some(b"1".to_vec()));
}

#[test]
fn two_shared_holders_upgrading_deadlock_one() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let timeout = opts(WAIT_MS);
    let mut t1 = s.begin(timeout.clone()).unwrap();
    let mut t2 = s.begin(timeout).unwrap();
    let t1_id = t1.id();
    t1.get_for_share(T, b"k").unwrap();
    t2.get_for_share(T, b"k").unwrap();
    let (rx, h) = spawn_put_commit(t1);
    // t1 waits for t2's S; t2 asking X now would wait for t1: a cycle.
    wait_until_blocked(&s, t1_id, &rx);
    let started = Instant::now();
    assert_eq!(t2.put(T, b"k", b"2".to_vec()), Err(StorageError::Deadlock));
    assert!(started.elapsed() < LONG / 2, "deadlock was not immediate");
    // The deadlock did not end t2: t1 waits until t2 rolls back.
    assert_still_blocked(&s, t1_id, &rx);
    t2.rollback();
    assert_put_committed(&s, &rx, h);
}

#[test]
fn two_shared_holders_upgrading_concurrently_fail_exactly_one() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let barrier = Arc::new(Barrier::new(2));
    let handles: Vec<_> = [b"1", b"2"]
        .into_iter()
        .map(|v| {
            let s = s.clone();
            let barrier = barrier.clone();
            thread::spawn(move || {
                let mut t = s.begin(opts(WAIT_MS)).unwrap();
                t.get_for_share(T, b"k").unwrap();
                barrier.wait();
                match t.put(T, b"k", v.to_vec()) {
                    Err(StorageError::Deadlock) => {
                        t.rollback();
                        false
                    }
                    Ok(_) => {
                        t.commit().unwrap();
                        true
                    }
                    Err(e) => panic!("unexpected {e}"),
                }
            })
        })
        .collect();
    let results: Vec<bool> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(results.iter().filter(|ok| **ok).count(), 1, "{results:?}");
}

#[test]
fn cycle_through_shared_holder_is_a_deadlock() {
    let (_d, s) = open();
    let mut t1 = s.begin(opts(WAIT_MS)).unwrap();
    let mut t2 = s.begin(opts(WAIT_MS)).unwrap();
    let t1_id = t1.id();
    t1.get_for_share(T, b"a").unwrap();
    t2.put(T, b"b", b"2".to_vec()).unwrap();
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let r = t1.lock(T, b"b");
        tx.send(r).unwrap();
        t1.rollback();
    });
    wait_until_blocked(&s, t1_id, &rx);
    let started = Instant::now();
    assert_eq!(t2.lock(T, b"a"), Err(StorageError::Deadlock));
    assert!(started.elapsed() < LONG / 2, "deadlock was not immediate");
    assert_still_blocked(&s, t1_id, &rx);
    t2.rollback();
    assert_eq!(rx.recv_timeout(LONG).unwrap(), Ok(()));
    h.join().unwrap();
}

#[test]
fn shared_request_times_out() {
    let (_d, s) = open();
    let mut holder = s.begin(TxnOptions::default()).unwrap();
    holder.lock(T, b"k").unwrap();
    let mut t = s.begin(opts(200)).unwrap();
    let started = Instant::now();
    assert_eq!(t.get_for_share(T, b"k"), Err(StorageError::LockWaitTimeout));
    assert!(started.elapsed() >= Duration::from_millis(200));
    // The transaction survives and holds nothing on `k`.
    assert_eq!(t.get_for_share(T, b"other").unwrap(), None);
    holder.commit().unwrap();
    assert_eq!(t.get_for_share(T, b"k").unwrap(), None);
}

#[test]
fn get_for_share_sees_own_uncommitted_writes() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    put_commit(&s, b"gone", b"0");
    let mut t = s.begin(opts(200)).unwrap();
    t.put(T, b"k", b"mine".to_vec()).unwrap();
    t.put(T, b"new", b"fresh".to_vec()).unwrap();
    t.delete(T, b"gone").unwrap();
    assert_eq!(t.get_for_share(T, b"k").unwrap(), Some(b"mine".to_vec()));
    assert_eq!(t.get_for_share(T, b"new").unwrap(), Some(b"fresh".to_vec()));
    assert_eq!(t.get_for_share(T, b"gone").unwrap(), None);
    // Other transactions still see the committed value.
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"k", false).unwrap(), Some(b"0".to_vec()));
}

#[test]
fn read_only_get_for_share_fails_like_a_write_and_locks_nothing() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut ro = s
        .begin(TxnOptions {
            read_only: true,
            ..TxnOptions::default()
        })
        .unwrap();
    let err = ro.get_for_share(T, b"k");
    assert!(matches!(err, Err(StorageError::ReadOnly)), "{err:?}");
    assert_eq!(err, ro.put(T, b"k", b"1".to_vec()));
    // No lock was taken.
    let mut w = s.begin(opts(100)).unwrap();
    w.put(T, b"k", b"1".to_vec()).unwrap();
    w.commit().unwrap();
}

#[test]
fn cycle_through_any_of_several_shared_holders_is_a_deadlock() {
    let (_d, s) = open();
    // Six transactions hold S(a); one of them (picked by `w`) waits for X(b),
    // held by `t2`. `t2` asking X(a) waits for all six: a cycle.
    for w in 0..6 {
        let mut readers: Vec<_> = (0..6).map(|_| s.begin(opts(WAIT_MS)).unwrap()).collect();
        for r in &mut readers {
            r.get_for_share(T, b"a").unwrap();
        }
        let mut t2 = s.begin(opts(WAIT_MS)).unwrap();
        t2.put(T, b"b", b"2".to_vec()).unwrap();
        let mut waiter = readers.remove(w);
        let waiter_id = waiter.id();
        let (tx, rx) = mpsc::channel();
        let h = thread::spawn(move || {
            let r = waiter.lock(T, b"b");
            tx.send(r).unwrap();
            waiter.rollback();
        });
        wait_until_blocked(&s, waiter_id, &rx);
        let started = Instant::now();
        assert_eq!(t2.lock(T, b"a"), Err(StorageError::Deadlock), "via {w}");
        assert!(started.elapsed() < LONG / 2, "deadlock was not immediate");
        t2.rollback();
        assert_eq!(rx.recv_timeout(LONG).unwrap(), Ok(()));
        h.join().unwrap();
        for r in readers {
            r.rollback();
        }
    }
}

type Txn = Box<dyn tributary_storage::Transaction>;
type Read = Result<Option<Vec<u8>>, StorageError>;

/// In a thread: `txn` takes a shared lock on `k` and reports what it read;
/// the thread returns the transaction.
fn spawn_share(mut txn: Txn) -> (mpsc::Receiver<Read>, thread::JoinHandle<Txn>) {
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        tx.send(txn.get_for_share(T, b"k")).unwrap();
        txn
    });
    (rx, h)
}

#[test]
fn queued_exclusive_is_not_starved_by_later_shared_requests() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut reader = s.begin(TxnOptions::default()).unwrap();
    reader.get_for_share(T, b"k").unwrap();
    let writer = s.begin(opts(WAIT_MS)).unwrap();
    let writer_id = writer.id();
    let (wrx, wh) = spawn_put_commit(writer);
    wait_until_blocked(&s, writer_id, &wrx);
    // A later shared request queues behind the waiting writer although it
    // is compatible with the current (shared) holder.
    let late = s.begin(opts(WAIT_MS)).unwrap();
    let late_id = late.id();
    let (lrx, lh) = spawn_share(late);
    wait_until_blocked(&s, late_id, &lrx);
    assert_still_blocked(&s, writer_id, &wrx);
    reader.commit().unwrap();
    assert_put_committed(&s, &wrx, wh);
    // … and reads the writer's value (a current read) once it is through.
    assert_eq!(lrx.recv_timeout(LONG).unwrap(), Ok(Some(b"1".to_vec())));
    lh.join().unwrap().rollback();
}

#[test]
fn shared_waiters_resume_when_a_queued_exclusive_gives_up() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    let mut reader = s.begin(TxnOptions::default()).unwrap();
    reader.get_for_share(T, b"k").unwrap();
    // The writer gives up after 300 ms (its lock-wait timeout) …
    let writer = s.begin(opts(300)).unwrap();
    let writer_id = writer.id();
    let (wrx, wh) = spawn_put_commit(writer);
    wait_until_blocked(&s, writer_id, &wrx);
    let late = s.begin(opts(WAIT_MS)).unwrap();
    let late_id = late.id();
    let (lrx, lh) = spawn_share(late);
    wait_until_blocked(&s, late_id, &lrx);
    let (r, _) = wrx.recv_timeout(LONG).unwrap();
    assert_eq!(r, Err(StorageError::LockWaitTimeout));
    wh.join().unwrap();
    // … and the shared request behind it is granted at once, long before
    // its own timeout, while the first reader still holds its lock.
    assert_eq!(lrx.recv_timeout(LONG).unwrap(), Ok(Some(b"0".to_vec())));
    lh.join().unwrap().rollback();
    reader.rollback();
}

#[test]
fn cycle_through_a_queued_exclusive_request_is_a_deadlock() {
    let (_d, s) = open();
    put_commit(&s, b"k", b"0");
    // t1 holds X(a); t2 holds S(k); t3 waits for X(k) (behind t2); t1 asks
    // S(k) and queues behind t3. t2 asking X(a) closes t2 → t1 → t3 → t2.
    let mut t1 = s.begin(opts(WAIT_MS)).unwrap();
    t1.put(T, b"a", b"x".to_vec()).unwrap();
    let mut t2 = s.begin(opts(WAIT_MS)).unwrap();
    t2.get_for_share(T, b"k").unwrap();
    let t3 = s.begin(opts(WAIT_MS)).unwrap();
    let t3_id = t3.id();
    let (rx3, h3) = spawn_put_commit(t3);
    wait_until_blocked(&s, t3_id, &rx3);
    let t1_id = t1.id();
    let (rx1, h1) = spawn_share(t1);
    wait_until_blocked(&s, t1_id, &rx1);
    let started = Instant::now();
    assert_eq!(t2.put(T, b"a", b"y".to_vec()), Err(StorageError::Deadlock));
    assert!(started.elapsed() < LONG / 2, "deadlock was not immediate");
    // Breaking the cycle lets everyone through in order.
    t2.rollback();
    assert_put_committed(&s, &rx3, h3);
    assert_eq!(rx1.recv_timeout(LONG).unwrap(), Ok(Some(b"1".to_vec())));
    h1.join().unwrap().rollback();
}

/// `scan_visit` stopped after every `chunk` rows and resumed after the last
/// key it saw (as the SQL scan does) visits exactly the rows of a model
/// of snapshot + own writes, in key order, for every chunk size; `scan`
/// with a limit is a prefix of it.
#[test]
fn scan_visit_in_chunks_matches_a_model() {
    use std::collections::BTreeMap;
    let (_d, s) = open();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut t = s.begin(TxnOptions::default()).unwrap();
    for i in 0..60u64 {
        if next() % 2 == 0 {
            let k = format!("k{i:03}").into_bytes();
            t.put(T, &k, b"old".to_vec()).unwrap();
            model.insert(k, b"old".to_vec());
        }
    }
    t.commit().unwrap();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    for _ in 0..40 {
        let k = format!("k{:03}", next() % 70).into_bytes();
        if next() % 3 == 0 {
            t.delete(T, &k).unwrap();
            model.remove(&k);
        } else {
            t.put(T, &k, b"new".to_vec()).unwrap();
            model.insert(k, b"new".to_vec());
        }
    }
    let want: Vec<(Vec<u8>, Vec<u8>)> = model.into_iter().collect();
    for chunk in 1..=7usize {
        let mut got: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut start: Bound<Vec<u8>> = Bound::Unbounded;
        loop {
            let mut last = None;
            let mut seen = 0;
            let sb = match &start {
                Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
                _ => Bound::Unbounded,
            };
            t.scan_visit(T, sb, Bound::Unbounded, &mut |k, v| {
                got.push((k.to_vec(), v.to_vec()));
                seen += 1;
                if seen == chunk {
                    last = Some(k.to_vec());
                    return false;
                }
                true
            })
            .unwrap();
            match last {
                Some(k) => start = Bound::Excluded(k),
                None => break,
            }
        }
        assert_eq!(got, want, "chunk {chunk}");
        let (lo, hi) = full_range();
        let limited = t.scan(T, lo, hi, chunk).unwrap();
        assert_eq!(limited[..], want[..chunk.min(want.len())], "limit {chunk}");
    }
}

#[test]
fn an_interrupt_stops_a_long_scan_and_a_deadline_too() {
    let (_d, s) = open();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    for i in 0..5_000u32 {
        t.put(T, &i.to_be_bytes(), b"v".to_vec()).unwrap();
    }
    t.commit().unwrap();
    let token = tokio_util::sync::CancellationToken::new();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    r.set_interrupt(tributary_storage::Interrupt::new(token.clone(), None));
    // Cancelled part-way: the visit stops within a check interval.
    let mut seen = 0u32;
    let out = r.scan_visit(T, Bound::Unbounded, Bound::Unbounded, &mut |_, _| {
        seen += 1;
        if seen == 10 {
            token.cancel();
        }
        true
    });
    assert_eq!(out, Err(StorageError::Interrupted));
    assert!(seen < 2_048, "visited {seen} rows after the KILL");
    assert_eq!(r.check_interrupt(), Err(StorageError::Interrupted));
    // A passed deadline fires at once; a fresh statement's interrupt does not.
    let past = tributary_storage::Interrupt::new(
        tokio_util::sync::CancellationToken::new(),
        Some(Instant::now()),
    );
    r.set_interrupt(past);
    assert_eq!(
        r.scan(T, Bound::Unbounded, Bound::Unbounded, usize::MAX),
        Err(StorageError::Interrupted)
    );
    r.set_interrupt(tributary_storage::Interrupt::default());
    assert_eq!(
        r.scan(T, Bound::Unbounded, Bound::Unbounded, usize::MAX)
            .unwrap()
            .len(),
        5_000
    );
}

/// Own writes and savepoints against a model that keeps every write in
/// order (what the transaction kept before decision 032): random puts,
/// deletes, savepoints and rollbacks — to any savepoint handed out,
/// including ones a rollback made stale — over a few keys, each step
/// checked by point reads and a scan, and the commit by a new reader.
#[test]
fn savepoints_and_overwrites_match_a_write_log_model() {
    let (_d, s) = open();
    for k in 0u8..4 {
        put_commit(&s, &[b'k', k], b"committed");
    }
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    for round in 0..40 {
        let mut t = s.begin(TxnOptions::default()).unwrap();
        // The model: every write in order; a savepoint is a length.
        let mut log: Vec<(Vec<u8>, Option<Vec<u8>>)> = Vec::new();
        let mut sps = Vec::new();
        for step in 0..60 {
            let key = vec![b'k', next(6) as u8];
            match next(10) {
                0..=3 => {
                    let v = format!("{round}.{step}").into_bytes();
                    t.put(T, &key, v.clone()).unwrap();
                    log.push((key, Some(v)));
                }
                4..=5 => {
                    t.delete(T, &key).unwrap();
                    log.push((key, None));
                }
                6..=7 => sps.push((t.savepoint(), log.len())),
                _ => {
                    if sps.is_empty() {
                        continue;
                    }
                    let (sp, len) = sps[next(sps.len() as u64) as usize];
                    t.rollback_to(sp);
                    log.truncate(len.min(log.len()));
                }
            }
            let model = |k: &[u8]| -> Option<Vec<u8>> {
                match log.iter().rev().find(|(lk, _)| lk.as_slice() == k) {
                    Some((_, v)) => v.clone(),
                    None => (k[1] < 4).then(|| b"committed".to_vec()),
                }
            };
            let mut want = Vec::new();
            for k in 0u8..6 {
                let key = [b'k', k];
                let got = t.get(T, &key, false).unwrap();
                assert_eq!(got, model(&key), "round {round} step {step} key {k}");
                if let Some(v) = got {
                    want.push((key.to_vec(), v));
                }
            }
            let mut scanned = Vec::new();
            t.scan_visit(T, Bound::Unbounded, Bound::Unbounded, &mut |k, v| {
                scanned.push((k.to_vec(), v.to_vec()));
                true
            })
            .unwrap();
            assert_eq!(scanned, want, "round {round} step {step}");
            assert_eq!(t.has_writes(), !log.is_empty());
        }
        // Commit half of the rounds; the committed state is the model's.
        if round % 2 == 0 {
            let mut expect = Vec::new();
            for k in 0u8..6 {
                let key = [b'k', k];
                if let Some(v) = t.get(T, &key, false).unwrap() {
                    expect.push((key.to_vec(), v));
                }
            }
            t.commit().unwrap();
            let mut r = s.begin(TxnOptions::default()).unwrap();
            let mut got = Vec::new();
            r.scan_visit(T, Bound::Unbounded, Bound::Unbounded, &mut |k, v| {
                got.push((k.to_vec(), v.to_vec()));
                true
            })
            .unwrap();
            assert_eq!(got, expect, "round {round} committed");
            // Back to the starting state for the next round.
            let mut w = s.begin(TxnOptions::default()).unwrap();
            for k in 0u8..6 {
                let key = [b'k', k];
                if k < 4 {
                    w.put(T, &key, b"committed".to_vec()).unwrap();
                } else {
                    w.delete(T, &key).unwrap();
                }
            }
            w.commit().unwrap();
        } else {
            t.rollback();
        }
    }
}

/// A transaction's write set past its limit: the write is refused with
/// `TxnTooLarge` and not recorded; a rollback to a savepoint gives its
/// bytes back, so later writes fit again; the transaction commits what it
/// kept.
#[test]
fn a_write_past_the_limit_is_refused_and_not_recorded() {
    let (_d, s) = open();
    let opts = TxnOptions {
        write_limit: tributary_storage::write_budget::WriteLimit {
            bytes: 64 << 10,
            setting: "the_limit".into(),
            global: None,
        },
        ..TxnOptions::default()
    };
    let mut t = s.begin(opts).unwrap();
    t.put(T, b"first", b"kept".to_vec()).unwrap();
    let sp = t.savepoint();
    let mut n = 0u32;
    let e = loop {
        match t.put(T, &n.to_be_bytes(), vec![7; 1000]) {
            Ok(_) => n += 1,
            Err(e) => break e,
        }
        assert!(n < 1000, "no limit");
    };
    assert_eq!(
        e,
        StorageError::TxnTooLarge {
            setting: "the_limit".into()
        }
    );
    assert!(n > 10, "only {n} writes fit");
    // The refused write is not there, the others are.
    assert_eq!(t.get(T, &n.to_be_bytes(), false).unwrap(), None);
    assert_eq!(
        t.get(T, &0u32.to_be_bytes(), false).unwrap(),
        Some(vec![7; 1000])
    );
    t.rollback_to(sp);
    // Their bytes came back (the locks stay, and are small).
    for i in 0..n / 2 {
        t.put(T, &i.to_be_bytes(), vec![8; 1000]).unwrap();
    }
    t.commit().unwrap();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"first", false).unwrap(), Some(b"kept".to_vec()));
    assert_eq!(
        r.get(T, &0u32.to_be_bytes(), false).unwrap(),
        Some(vec![8; 1000])
    );
    assert_eq!(r.get(T, &(n - 1).to_be_bytes(), false).unwrap(), None);
}
