//! A full disk under the data file (issue 39, item 5): the applier, which
//! moves committed groups from the commit log into redb, finds the disk
//! full before it writes, so redb never sees the failure. Reads of rows
//! and of the change log (the queued commits included) keep working,
//! commits go on while the commit log has room and then fail with an I/O
//! error, and once space returns everything reaches the file — without a
//! restart, and across one.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::sync::Arc;
use std::time::{Duration, Instant};

use tributary_fault::{global, points, FaultGuard};
use tributary_storage::{
    ChangeKind, EmbeddedOptions, EmbeddedStorage, Storage, StorageError, TxnOptions,
};

const T: u64 = 21;

fn open_small(dir: &std::path::Path) -> tributary_storage::Result<Arc<EmbeddedStorage>> {
    EmbeddedStorage::open_with(
        dir,
        EmbeddedOptions {
            log_bytes: Some(1 << 20),
            ..Default::default()
        },
    )
}

fn put(s: &Arc<EmbeddedStorage>, i: u32, len: usize) -> tributary_storage::Result<u64> {
    let mut t = s.begin(TxnOptions::default())?;
    t.put(T, &i.to_be_bytes(), vec![i as u8; len])?;
    t.commit()
}

fn get(s: &Arc<EmbeddedStorage>, i: u32) -> Option<Vec<u8>> {
    let mut r = s.begin(TxnOptions::default()).unwrap();
    let v = r.get(T, &i.to_be_bytes(), false).unwrap();
    r.rollback();
    v
}

/// Every change of `T` above `from`, read in pages of 3.
fn all_changes(s: &Arc<EmbeddedStorage>, from: u64) -> Vec<(u64, u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut resume = None;
    loop {
        let b = s.changes(T, from, s.latest_ts(), resume, 3).unwrap();
        out.extend(b.changes.iter().map(|c| {
            assert_eq!(c.kind, ChangeKind::Insert);
            (c.commit_ts, c.seq, c.key.clone())
        }));
        match b.resume {
            Some(r) => resume = Some(r),
            None => return out,
        }
    }
}

fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !cond() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::yield_now();
    }
}

#[test]
fn a_full_disk_under_the_data_file_keeps_reads_and_the_change_log() {
    let _guard = FaultGuard::enable();
    let dir = tempfile::tempdir().unwrap();
    let s = open_small(dir.path()).unwrap();
    s.set_consumer_watermark("idx", T, 0);
    let first = put(&s, 0, 100).unwrap();
    s.wait_applied().unwrap();
    // The disk is full from now on (as the applier sees it).
    global()
        .add(points::STORAGE_FREE_SPACE, ":::", "echo", 0, "", false)
        .unwrap();
    // Commits go on into the commit log, and are read back at once.
    let mut acked = vec![0u32];
    for i in 1..=20 {
        put(&s, i, 100).unwrap();
        acked.push(i);
    }
    for i in &acked {
        assert_eq!(get(&s, *i), Some(vec![*i as u8; 100]));
    }
    // The file lags behind, and says why.
    let err = s.wait_applied().unwrap_err();
    assert!(
        matches!(&err, StorageError::Io(m) if m.contains("No space left on device")),
        "{err:?}"
    );
    assert!(s.applied_ts() < s.latest_ts());
    // The change log is read from the file and, above it, from the queue.
    let during = all_changes(&s, 0);
    assert_eq!(during.len(), acked.len(), "{during:?}");
    assert!(during
        .windows(2)
        .all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
    assert_eq!(during[0].0, first);
    assert_eq!(all_changes(&s, first), during[1..].to_vec());
    // Commits fail once the commit log is full (it waits for the file).
    let mut failed = None;
    for i in 21..10_000 {
        match put(&s, i, 4096) {
            Ok(_) => acked.push(i),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let err = failed.expect("the commit log filled up");
    assert!(matches!(err, StorageError::Io(_)), "{err:?}");
    assert!(get(&s, 0).is_some(), "reads go on after a refused commit");
    // Space is back: the applier catches up by itself; nothing is lost and
    // the change log read from the file is the one read from the queue.
    global().remove(points::STORAGE_FREE_SPACE).unwrap();
    wait_until("the file catches up", || s.wait_applied().is_ok());
    assert_eq!(s.applied_ts(), s.latest_ts());
    let after = all_changes(&s, 0);
    assert_eq!(after[..during.len()], during[..]);
    assert_eq!(after.len(), acked.len());
    put(&s, 99_999, 10).expect("a write after space returned");
    drop(s);
    let s = open_small(dir.path()).unwrap();
    for i in &acked {
        assert!(get(&s, *i).is_some(), "row {i} after a restart");
    }
}

/// A restart onto a full disk with commits still in the commit log either
/// opens or refuses with a message naming the full disk; it never panics,
/// and once space returns the next start has every acknowledged commit.
#[test]
fn a_restart_onto_a_full_disk_refuses_clearly_and_loses_nothing() {
    let _guard = FaultGuard::enable();
    let dir = tempfile::tempdir().unwrap();
    let s = open_small(dir.path()).unwrap();
    put(&s, 0, 100).unwrap();
    s.wait_applied().unwrap();
    global()
        .add(points::STORAGE_FREE_SPACE, ":::", "echo", 0, "", false)
        .unwrap();
    let acked: Vec<u32> = (1..=10).filter(|i| put(&s, *i, 100).is_ok()).collect();
    assert_eq!(acked.len(), 10);
    drop(s);
    let err = open_small(dir.path()).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("disk is full") && msg.contains("commit log"),
        "{msg}"
    );
    global().remove(points::STORAGE_FREE_SPACE).unwrap();
    let s = open_small(dir.path()).unwrap();
    for i in std::iter::once(0).chain(acked) {
        assert_eq!(get(&s, i), Some(vec![i as u8; 100]), "row {i}");
    }
}
