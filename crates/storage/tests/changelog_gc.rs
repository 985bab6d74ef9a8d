//! Change log (kinds, net effect, ordering, batching, bounds, visibility)
//! and GC (versions and change log, consumer watermarks).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::sync::Arc;

use tributary_storage::{
    Change, ChangeKind, EmbeddedStorage, Storage, StorageError, Transaction, TxnOptions,
};

const T: u64 = 3;
const U: u64 = 4;

fn open() -> (tempfile::TempDir, Arc<EmbeddedStorage>) {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    (dir, s)
}

fn begin(s: &EmbeddedStorage) -> Box<dyn Transaction> {
    s.begin(TxnOptions::default()).unwrap()
}

fn all_changes(s: &EmbeddedStorage, table: u64, from: u64) -> Vec<Change> {
    s.changes(table, from, u64::MAX, None, usize::MAX)
        .unwrap()
        .changes
}

#[test]
fn kinds_and_net_effect_per_transaction() {
    let (_d, s) = open();
    let mut t = begin(&s);
    t.put(T, b"a", b"1".to_vec()).unwrap();
    t.put(T, b"b", b"1".to_vec()).unwrap();
    let ts1 = t.commit().unwrap();

    let mut t = begin(&s);
    t.put(T, b"a", b"2".to_vec()).unwrap(); // update
    t.put(T, b"a", b"3".to_vec()).unwrap(); // same key again: one change
    t.delete(T, b"b").unwrap(); // delete
    t.put(T, b"c", b"x".to_vec()).unwrap(); // insert then delete: nothing
    t.delete(T, b"c").unwrap();
    t.delete(T, b"never").unwrap(); // absent before and after: nothing
    t.put(U, b"other", b"u".to_vec()).unwrap();
    let ts2 = t.commit().unwrap();

    let ch = all_changes(&s, T, 0);
    let summary: Vec<_> = ch
        .iter()
        .map(|c| {
            (
                c.commit_ts,
                c.seq,
                c.kind,
                c.key.as_slice(),
                c.old.clone(),
                c.new.clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                ts1,
                0,
                ChangeKind::Insert,
                &b"a"[..],
                None,
                Some(b"1".to_vec())
            ),
            (
                ts1,
                1,
                ChangeKind::Insert,
                &b"b"[..],
                None,
                Some(b"1".to_vec())
            ),
            (
                ts2,
                0,
                ChangeKind::Update,
                &b"a"[..],
                Some(b"1".to_vec()),
                Some(b"3".to_vec())
            ),
            (
                ts2,
                1,
                ChangeKind::Delete,
                &b"b"[..],
                Some(b"1".to_vec()),
                None
            ),
        ]
    );
    // Other tables are separate logs with their own seq.
    let u = all_changes(&s, U, 0);
    assert_eq!(u.len(), 1);
    assert_eq!((u[0].commit_ts, u[0].seq), (ts2, 0));
    // A transaction whose writes cancel out commits nothing.
    let mut t = begin(&s);
    t.put(T, b"tmp", b"x".to_vec()).unwrap();
    t.delete(T, b"tmp").unwrap();
    assert_eq!(t.commit().unwrap(), ts2);
}

#[test]
fn from_to_bounds_are_exclusive_inclusive() {
    let (_d, s) = open();
    let mut tss = Vec::new();
    for i in 0..5u8 {
        let mut t = begin(&s);
        t.put(T, &[i], vec![i]).unwrap();
        tss.push(t.commit().unwrap());
    }
    let got: Vec<u64> = s
        .changes(T, tss[1], tss[3], None, 100)
        .unwrap()
        .changes
        .iter()
        .map(|c| c.commit_ts)
        .collect();
    assert_eq!(got, vec![tss[2], tss[3]]);
    assert!(s
        .changes(T, tss[4], u64::MAX, None, 100)
        .unwrap()
        .changes
        .is_empty());
    assert!(s
        .changes(T, tss[3], tss[1], None, 100)
        .unwrap()
        .changes
        .is_empty());
}

#[test]
fn large_transaction_batches_with_resume() {
    let (_d, s) = open();
    let mut t = begin(&s);
    for i in 0..1000u32 {
        t.put(T, &i.to_be_bytes(), b"v".to_vec()).unwrap();
    }
    let ts = t.commit().unwrap();
    let mut t = begin(&s);
    t.put(T, b"last", b"v".to_vec()).unwrap();
    let ts_last = t.commit().unwrap();

    let mut seen = Vec::new();
    let mut resume = None;
    let mut batches = 0;
    loop {
        let b = s.changes(T, 0, ts_last, resume, 128).unwrap();
        assert!(b.changes.len() <= 128);
        batches += 1;
        seen.extend(b.changes.iter().map(|c| (c.commit_ts, c.seq)));
        match b.resume {
            Some(r) => resume = Some(r),
            None => break,
        }
        assert!(batches < 100, "resume does not progress");
    }
    assert_eq!(seen.len(), 1001);
    assert_eq!(batches, 8);
    let mut expected: Vec<(u64, u32)> = (0..1000).map(|i| (ts, i)).collect();
    expected.push((ts_last, 0));
    assert_eq!(seen, expected);
}

#[test]
fn change_visible_exactly_at_commit() {
    let (_d, s) = open();
    let mut t = begin(&s);
    t.put(T, b"k", b"v".to_vec()).unwrap();
    assert!(all_changes(&s, T, 0).is_empty());
    let before = s.latest_ts();
    let ts = t.commit().unwrap();
    assert_eq!(s.latest_ts(), ts);
    let ch = s
        .changes(T, before, s.latest_ts(), None, 10)
        .unwrap()
        .changes;
    assert_eq!(ch.len(), 1);
    assert_eq!(ch[0].commit_ts, ts);
}

#[test]
fn gc_removes_only_below_horizon() {
    let (_d, s) = open();
    let mut t = begin(&s);
    t.put(T, b"k", b"1".to_vec()).unwrap();
    let ts1 = t.commit().unwrap();
    let mut reader = begin(&s); // snapshot at ts1
    let mut t = begin(&s);
    t.put(T, b"k", b"2".to_vec()).unwrap();
    let ts2 = t.commit().unwrap();

    let stats = s.gc().unwrap();
    // The reader at ts1 still needs version 1 and the change at ts2.
    assert_eq!(stats.versions_removed, 0);
    assert_eq!(stats.changes_removed, 1); // the insert at ts1 <= horizon ts1
    assert_eq!(reader.get(T, b"k", false).unwrap(), Some(b"1".to_vec()));
    assert_eq!(s.snapshot_scan(T, ts1, None, 10).unwrap().len(), 1);
    assert_eq!(all_changes(&s, T, ts1).len(), 1);
    assert!(matches!(
        s.changes(T, 0, ts2, None, 10),
        Err(StorageError::ChangesGone { table: T, gc_ts }) if gc_ts == ts1
    ));
    drop(reader);

    let stats = s.gc().unwrap();
    assert_eq!(stats.versions_removed, 1);
    assert_eq!(stats.changes_removed, 1);
    assert!(matches!(
        s.snapshot_scan(T, ts1, None, 10),
        Err(StorageError::ChangesGone { .. })
    ));
    assert_eq!(
        s.snapshot_scan(T, ts2, None, 10).unwrap(),
        vec![(b"k".to_vec(), b"2".to_vec())]
    );
}

#[test]
fn consumer_watermark_keeps_changes_until_removed() {
    let (_d, s) = open();
    let mut t = begin(&s);
    t.put(T, b"k", b"1".to_vec()).unwrap();
    let ts1 = t.commit().unwrap();
    s.set_consumer_watermark("idx", T, ts1);
    let mut tss = vec![];
    for v in [b"2", b"3"] {
        let mut t = begin(&s);
        t.put(T, b"k", v.to_vec()).unwrap();
        tss.push(t.commit().unwrap());
    }
    // Another table without consumer loses its log to the snapshot horizon.
    let mut t = begin(&s);
    t.put(U, b"x", b"1".to_vec()).unwrap();
    t.commit().unwrap();

    let stats = s.gc().unwrap();
    assert_eq!(stats.changes_removed, 2); // T@ts1 and U@ts
    let ch = all_changes(&s, T, ts1);
    assert_eq!(ch.iter().map(|c| c.commit_ts).collect::<Vec<_>>(), tss);
    // Versions visible at the watermark are kept for initial builds.
    assert_eq!(
        s.snapshot_scan(T, ts1, None, 10).unwrap(),
        vec![(b"k".to_vec(), b"1".to_vec())]
    );
    assert!(all_changes(&s, U, s.latest_ts()).is_empty());

    // Moving the watermark releases what is below it.
    s.set_consumer_watermark("idx", T, tss[0]);
    assert_eq!(s.gc().unwrap().changes_removed, 1);
    s.remove_consumer("idx");
    let stats = s.gc().unwrap();
    assert_eq!(stats.changes_removed, 1);
    assert!(all_changes(&s, T, s.latest_ts()).is_empty());
}

#[test]
fn consumer_watermark_survives_restart() {
    let dir = tempfile::tempdir().unwrap();
    let ts1;
    {
        let s = EmbeddedStorage::open(dir.path()).unwrap();
        let mut t = begin(&s);
        t.put(T, b"k", b"1".to_vec()).unwrap();
        ts1 = t.commit().unwrap();
        s.set_consumer_watermark("idx", T, 0);
        let mut t = begin(&s);
        t.put(T, b"k", b"2".to_vec()).unwrap();
        t.commit().unwrap();
    }
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    assert_eq!(s.gc().unwrap().changes_removed, 0);
    let ch = all_changes(&s, T, 0);
    assert_eq!(ch.len(), 2);
    assert_eq!(ch[0].commit_ts, ts1);
}

#[test]
fn purge_table_removes_rows_and_log_durably() {
    let dir = tempfile::tempdir().unwrap();
    {
        let s = EmbeddedStorage::open(dir.path()).unwrap();
        let mut t = begin(&s);
        t.put(T, b"k", b"1".to_vec()).unwrap();
        t.put(U, b"k", b"1".to_vec()).unwrap();
        t.commit().unwrap();
        s.purge_table(T).unwrap();
        assert!(all_changes(&s, T, 0).is_empty());
        let ts = s.latest_ts();
        assert!(s.snapshot_scan(T, ts, None, 10).unwrap().is_empty());
    }
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    let ts = s.latest_ts();
    assert!(s.snapshot_scan(T, ts, None, 10).unwrap().is_empty());
    assert!(all_changes(&s, T, 0).is_empty());
    assert_eq!(s.snapshot_scan(U, ts, None, 10).unwrap().len(), 1);
    assert_eq!(all_changes(&s, U, 0).len(), 1);
}

/// A purged table reads as empty at once — rows, point reads, changes —
/// and stays so across a restart while its entries are still in the file;
/// GC passes then delete them (in transactions of a bounded size) and
/// nothing of any other table.
#[test]
fn a_purge_hides_the_table_at_once_and_gc_deletes_it_across_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    const ROWS: u32 = 20_000;
    let before_ts;
    {
        let s = EmbeddedStorage::open(dir.path()).unwrap();
        for chunk in 0..4u32 {
            let mut t = begin(&s);
            for k in chunk * ROWS / 4..(chunk + 1) * ROWS / 4 {
                t.put(T, &k.to_be_bytes(), vec![7; 40]).unwrap();
            }
            t.commit().unwrap();
        }
        let mut t = begin(&s);
        for k in 0..10u32 {
            t.put(U, &k.to_be_bytes(), b"u".to_vec()).unwrap();
        }
        t.commit().unwrap();
        // Consumers keep the change logs: the purge has T's to delete, and
        // U's must stay whole.
        s.set_consumer_watermark("idx", T, 0);
        s.set_consumer_watermark("idx", U, 0);
        assert_eq!(all_changes(&s, T, 0).len(), ROWS as usize);
        before_ts = s.latest_ts();
        s.purge_table(T).unwrap();
        assert!(s.snapshot_scan(T, before_ts, None, 10).unwrap().is_empty());
        assert!(all_changes(&s, T, 0).is_empty());
        let mut t = begin(&s);
        assert_eq!(t.get(T, &5u32.to_be_bytes(), false).unwrap(), None);
        assert_eq!(t.get(T, &5u32.to_be_bytes(), true).unwrap(), None);
        t.rollback();
        // Closed before any GC pass: the file still holds T's entries.
    }
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    let ts = s.latest_ts();
    assert!(s.snapshot_scan(T, ts, None, 10).unwrap().is_empty());
    assert!(all_changes(&s, T, 0).is_empty());
    let st = s.gc().unwrap();
    assert_eq!(
        st.purged_entries,
        2 * u64::from(ROWS),
        "every row and change of T deleted, nothing else"
    );
    assert_eq!(s.gc().unwrap().purged_entries, 0);
    assert_eq!(s.snapshot_scan(U, ts, None, 100).unwrap().len(), 10);
    assert_eq!(all_changes(&s, U, 0).len(), 10);
    drop(s);
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    assert_eq!(
        s.gc().unwrap().purged_entries,
        0,
        "the purge mark went with the rows"
    );
    assert!(s
        .snapshot_scan(T, s.latest_ts(), None, 10)
        .unwrap()
        .is_empty());
}

/// Purging takes the same short time for any table size: it marks the
/// table and leaves the deletes to GC. (Deleting 100k rows and their
/// changes inside the call, as it once did, took several seconds while
/// holding the commit mutex.)
#[test]
fn purging_a_large_table_returns_at_once() {
    let (_d, s) = open();
    s.set_consumer_watermark("idx", T, 0);
    for chunk in 0..10u32 {
        let mut t = begin(&s);
        for k in chunk * 10_000..(chunk + 1) * 10_000 {
            t.put(T, &k.to_be_bytes(), vec![1; 100]).unwrap();
        }
        t.commit().unwrap();
    }
    // Everything applied to the file first, so the purge has it to delete.
    assert_eq!(
        s.snapshot_scan(T, s.latest_ts(), None, usize::MAX)
            .unwrap()
            .len(),
        100_000
    );
    s.wait_applied().unwrap();
    let started = std::time::Instant::now();
    s.purge_table(T).unwrap();
    let took = started.elapsed();
    assert!(
        took < std::time::Duration::from_secs(1),
        "purge_table took {took:?}"
    );
    // The deletes are GC's work, not the call's: a pass deletes for at
    // most PURGE_PASS and leaves the rest to the next (a loaded machine
    // needs more than one), never more than there is.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut purged = 0;
    while purged < 200_000 {
        assert!(
            std::time::Instant::now() < deadline,
            "GC purged {purged} of 200000 entries"
        );
        purged += s.gc().unwrap().purged_entries;
    }
    assert_eq!(purged, 200_000);
}

/// GC deletes change-log entries in bounded batches (so commits interleave
/// with it); a pass still removes everything below the horizon, across
/// several tables and across transactions split by the batch bound, and
/// leaves the log exact above it.
#[test]
fn gc_in_batches_removes_everything_below_the_horizon() {
    let (_d, s) = open();
    // 3 × 1000 changes on T (one transaction of 1000 keys straddles batch
    // boundaries), 700 on U.
    for round in 0..3u32 {
        let mut t = begin(&s);
        for k in 0..1000u32 {
            t.put(T, &k.to_be_bytes(), round.to_be_bytes().to_vec())
                .unwrap();
        }
        t.commit().unwrap();
    }
    let mut t = begin(&s);
    for k in 0..700u32 {
        t.put(U, &k.to_be_bytes(), b"u".to_vec()).unwrap();
    }
    let keep_from = t.commit().unwrap();
    // A consumer keeps U's log above `keep_from`; one more change after.
    s.set_consumer_watermark("c", U, keep_from);
    let mut t = begin(&s);
    t.put(U, b"last", b"x".to_vec()).unwrap();
    t.put(T, b"last", b"x".to_vec()).unwrap();
    let last = t.commit().unwrap();
    let st = s.gc().unwrap();
    assert_eq!(st.changes_removed, 3000 + 700 + 1, "{st:?}");
    // T: everything up to the latest commit is gone (no consumer).
    assert!(matches!(
        s.changes(T, 0, u64::MAX, None, usize::MAX),
        Err(StorageError::ChangesGone { .. })
    ));
    assert!(all_changes(&s, T, last).is_empty());
    // U: exactly the change above the consumer's watermark is left.
    let u = all_changes(&s, U, keep_from);
    assert_eq!(u.len(), 1);
    assert_eq!(u[0].key, b"last".to_vec());
    assert!(matches!(
        s.changes(U, keep_from - 1, u64::MAX, None, usize::MAX),
        Err(StorageError::ChangesGone { .. })
    ));
}

/// Large change-log entries (an index base's 256 KiB chunks) are deleted a
/// few MiB per batch, not a thousand at a time; the pass still removes all
/// of them and keeps what a consumer needs, exactly.
#[test]
fn gc_batches_are_bounded_by_bytes_too() {
    let (_d, s) = open();
    let chunk = vec![7u8; 256 * 1024];
    // 40 chunks (10 MiB) in one transaction, more than one batch's bytes.
    let mut t = begin(&s);
    for k in 0..40u32 {
        t.put(T, &k.to_be_bytes(), chunk.clone()).unwrap();
    }
    let first = t.commit().unwrap();
    let mut t = begin(&s);
    for k in 0..40u32 {
        t.put(T, &k.to_be_bytes(), vec![k as u8]).unwrap();
    }
    let second = t.commit().unwrap();
    s.set_consumer_watermark("c", T, first);
    let st = s.gc().unwrap();
    assert_eq!(st.changes_removed, 40, "{st:?}");
    let left = all_changes(&s, T, first);
    assert_eq!(left.len(), 40);
    assert!(left.iter().all(|c| c.commit_ts == second));
    assert!(matches!(
        s.changes(T, first - 1, u64::MAX, None, usize::MAX),
        Err(StorageError::ChangesGone { .. })
    ));
}

/// Commit one put of `key` in `table`.
fn put_one(s: &EmbeddedStorage, table: u64, key: &[u8], value: &[u8]) -> u64 {
    let mut t = begin(s);
    t.put(table, key, value.to_vec()).unwrap();
    t.commit().unwrap()
}

/// `(commit_ts, key, kind)` of each change.
fn summary(ch: Vec<Change>) -> Vec<(u64, Vec<u8>, ChangeKind)> {
    ch.into_iter()
        .map(|c| (c.commit_ts, c.key, c.kind))
        .collect()
}

/// The horizon a change-log read from `from` reports as gone, if it does.
fn gone_from(s: &EmbeddedStorage, table: u64, from: u64) -> Option<u64> {
    match s.changes(table, from, u64::MAX, None, usize::MAX) {
        Err(StorageError::ChangesGone { gc_ts, .. }) => Some(gc_ts),
        Ok(_) => None,
        Err(e) => panic!("unexpected error {e}"),
    }
}

/// A table whose change log is kept on demand stores no entries while no
/// consumer is registered on it — and a read from below its last such
/// commit fails as after a GC instead of answering "nothing changed" —
/// and every change after its first consumer registered, across restarts.
#[test]
fn an_on_demand_change_log_is_stored_only_while_consumed() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    s.set_change_log_on_demand(U, true).unwrap();
    put_one(&s, T, b"t", b"1");
    let u1 = put_one(&s, U, b"a", b"1");
    let u2 = put_one(&s, U, b"b", b"1");
    assert_eq!(gone_from(&s, U, 0), Some(u2));
    assert_eq!(gone_from(&s, U, u1), Some(u2));
    assert!(all_changes(&s, U, u2).is_empty());
    // A table not on demand keeps its log.
    assert_eq!(all_changes(&s, T, 0).len(), 1);

    // The first consumer registers (before the snapshot it reads after).
    let reg = s.latest_ts();
    s.set_consumer_watermark("c", U, reg);
    let u3 = put_one(&s, U, b"c", b"1");
    let u4 = put_one(&s, U, b"a", b"2");
    let want = vec![
        (u3, b"c".to_vec(), ChangeKind::Insert),
        (u4, b"a".to_vec(), ChangeKind::Update),
    ];
    assert_eq!(summary(all_changes(&s, U, reg)), want);
    assert_eq!(gone_from(&s, U, u1), Some(u2));

    // A restart keeps both the entries and the horizon.
    drop(s);
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    assert_eq!(summary(all_changes(&s, U, reg)), want);
    assert_eq!(gone_from(&s, U, u1), Some(u2));

    // The consumer leaves: later commits are skipped again.
    s.remove_consumer("c");
    let u5 = put_one(&s, U, b"d", b"1");
    assert_eq!(gone_from(&s, U, reg), Some(u5));
    drop(s);
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    assert_eq!(gone_from(&s, U, reg), Some(u5));
    assert!(all_changes(&s, U, u5).is_empty());
    assert_eq!(
        s.snapshot_scan(U, s.latest_ts(), None, 10).unwrap().len(),
        4
    );
}

/// A consumer that registers while writers commit, then takes its
/// snapshot, finds every commit after the snapshot in the change log: the
/// snapshot plus the changes after it is exactly the table at the end.
#[test]
fn registering_under_concurrent_commits_misses_no_change() {
    for round in 0..20u64 {
        let (_d, s) = open();
        s.set_change_log_on_demand(U, true).unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writers: Vec<_> = (0..3u64)
            .map(|w| {
                let (s, stop) = (s.clone(), stop.clone());
                std::thread::spawn(move || {
                    let mut i = 0u64;
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) || i < 50 {
                        let key = format!("{w}-{i:06}");
                        put_one(&s, U, key.as_bytes(), &round.to_be_bytes());
                        i += 1;
                    }
                })
            })
            .collect();
        // Let some commits through unconsumed, then register and snapshot.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while s.latest_ts() < 30 {
            assert!(std::time::Instant::now() < deadline, "writers stalled");
            std::thread::yield_now();
        }
        s.set_consumer_watermark("c", U, s.latest_ts());
        let snap = begin(&s);
        let at = snap.start_ts();
        s.set_consumer_watermark("c", U, at);
        drop(snap);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for w in writers {
            w.join().unwrap();
        }
        let mut keys: std::collections::BTreeSet<Vec<u8>> = s
            .snapshot_scan(U, at, None, usize::MAX)
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        for c in all_changes(&s, U, at) {
            assert_eq!(c.kind, ChangeKind::Insert, "round {round}");
            assert!(keys.insert(c.key), "round {round}: a change seen twice");
        }
        let now: Vec<Vec<u8>> = s
            .snapshot_scan(U, s.latest_ts(), None, usize::MAX)
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys.into_iter().collect::<Vec<_>>(), now, "round {round}");
    }
}

/// Switched back to "always", an on-demand table stores every later change
/// with no consumer registered, and the entries skipped before stay
/// unreadable (also after a restart) rather than read as "no change".
#[test]
fn an_on_demand_change_log_switched_back_to_always() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    s.set_change_log_on_demand(U, true).unwrap();
    let u1 = put_one(&s, U, b"a", b"1");
    // Reading makes the applier write (and skip) it first: what is stored
    // is decided when a commit is applied, not when it commits.
    assert_eq!(gone_from(&s, U, 0), Some(u1));
    s.set_change_log_on_demand(U, false).unwrap();
    let u2 = put_one(&s, U, b"b", b"1");
    let want = vec![(u2, b"b".to_vec(), ChangeKind::Insert)];
    assert_eq!(summary(all_changes(&s, U, u1)), want);
    assert_eq!(gone_from(&s, U, 0), Some(u1));
    drop(s);
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    assert_eq!(summary(all_changes(&s, U, u1)), want);
    assert_eq!(gone_from(&s, U, 0), Some(u1));
}
