//! Transactions: snapshot isolation, own writes, savepoints, row locks,
//! deadlocks, lock-wait timeouts and concurrent read-modify-write.

use std::ops::Bound;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use tributary_storage::{full_range, EmbeddedStorage, Storage, StorageError, TxnOptions};

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
    }
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
        Err(StorageError::TxnClosed(_))
    ));
    assert_eq!(ro.commit().unwrap(), last);
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
