//! Rows on disk, older versions in memory (issue 11): every snapshot reads
//! exactly the state at its timestamp — point reads, scans and bounded
//! scans — while newer commits, GC passes and restarts go on around it;
//! the in-memory versions shrink back to nothing once no snapshot needs
//! them. Checked against a model (the committed state after every commit).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::collections::BTreeMap;
use std::ops::Bound;

use tributary_storage::{EmbeddedStorage, Storage, Transaction, TxnOptions};

const T: u64 = 31;
const U: u64 = 32;

/// xorshift64*: a fixed, dependency-free pseudo-random sequence.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

type State = BTreeMap<Vec<u8>, Vec<u8>>;

fn key(i: u64) -> Vec<u8> {
    // Keys of different lengths, some a prefix of others.
    let mut k = format!("k{}", i % 40).into_bytes();
    if i.is_multiple_of(3) {
        k.push(0);
    }
    k
}

/// Commit `value` at `key` of `table` in a transaction of its own; its
/// commit ts.
fn put(s: &EmbeddedStorage, table: u64, key: &[u8], value: &[u8]) -> u64 {
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(table, key, value.to_vec()).unwrap();
    t.commit().unwrap()
}

fn check_snapshot(t: &mut Box<dyn Transaction>, model: &State, rng: &mut Rng) {
    let all = t
        .scan(T, Bound::Unbounded, Bound::Unbounded, usize::MAX)
        .unwrap();
    let expected: Vec<(Vec<u8>, Vec<u8>)> =
        model.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
    assert_eq!(all, expected, "full scan at {}", t.start_ts());
    // The same rows scanned in parts on several threads: each row in
    // exactly one part, parts in key order.
    for n in [2usize, 3] {
        let mut got: Vec<Vec<(Vec<u8>, Vec<u8>)>> = vec![Vec::new(); n];
        {
            let mut visitors: Vec<Box<tributary_storage::PartVisitor<'_>>> = got
                .iter_mut()
                .map(|out| {
                    Box::new(move |k: &[u8], v: &[u8]| {
                        out.push((k.to_vec(), v.to_vec()));
                        true
                    }) as Box<tributary_storage::PartVisitor>
                })
                .collect();
            let mut parts: Vec<&mut tributary_storage::PartVisitor> =
                visitors.iter_mut().map(|b| &mut **b as _).collect();
            t.scan_visit_parts(T, &mut parts).unwrap();
        }
        assert_eq!(got.concat(), expected, "{n}-part scan at {}", t.start_ts());
    }
    for _ in 0..5 {
        let k = key(rng.below(60));
        assert_eq!(t.get(T, &k, false).unwrap(), model.get(&k).cloned(), "get");
    }
    let lo = key(rng.below(60));
    let limit = 1 + rng.below(5) as usize;
    let got = t
        .scan(T, Bound::Excluded(lo.clone()), Bound::Unbounded, limit)
        .unwrap();
    let want: Vec<(Vec<u8>, Vec<u8>)> = model
        .range::<Vec<u8>, _>((Bound::Excluded(lo), Bound::Unbounded))
        .take(limit)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    assert_eq!(got, want, "bounded scan");
}

#[test]
fn snapshots_read_their_state_while_commits_gc_and_restarts_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = EmbeddedStorage::open(dir.path()).unwrap();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut state = State::new();
    // Open snapshots with the state they must see.
    let mut open: Vec<(Box<dyn Transaction>, State)> = Vec::new();
    for round in 0..600 {
        match rng.below(10) {
            0..=4 => {
                let mut t = s.begin(TxnOptions::default()).unwrap();
                let mut next = state.clone();
                for _ in 0..1 + rng.below(4) {
                    let k = key(rng.below(60));
                    if rng.below(3) == 0 {
                        t.delete(T, &k).unwrap();
                        next.remove(&k);
                    } else {
                        let v = format!("v{round}").into_bytes();
                        t.put(T, &k, v.clone()).unwrap();
                        next.insert(k, v);
                    }
                }
                // Another table in the same transaction.
                t.put(U, &key(round), b"u".to_vec()).unwrap();
                if rng.below(8) == 0 {
                    t.rollback();
                } else {
                    t.commit().unwrap();
                    state = next;
                }
            }
            5..=6 => open.push((s.begin(TxnOptions::default()).unwrap(), state.clone())),
            7 => {
                if !open.is_empty() {
                    let i = rng.below(open.len() as u64) as usize;
                    open.swap_remove(i);
                }
            }
            8 => {
                s.gc().unwrap();
            }
            _ => {
                if rng.below(10) == 0 {
                    // Restart: snapshots end, the state stays.
                    open.clear();
                    drop(s);
                    s = EmbeddedStorage::open(dir.path()).unwrap();
                    assert_eq!(s.overlay_versions(), 0, "a restart reads no versions");
                }
            }
        }
        for (t, model) in open.iter_mut() {
            check_snapshot(t, model, &mut rng);
        }
        let mut now = s.begin(TxnOptions::default()).unwrap();
        check_snapshot(&mut now, &state, &mut rng);
    }
    open.clear();
    s.gc().unwrap();
    assert_eq!(
        s.overlay_versions(),
        0,
        "no snapshot left: no older version kept in memory"
    );
    let rows = s.snapshot_scan(T, s.latest_ts(), None, usize::MAX).unwrap();
    assert_eq!(rows.len(), state.len());
}

/// A row deleted after a snapshot is still seen by it — by a point read and
/// by scans, between rows still on disk — and a row inserted after it is
/// not.
#[test]
fn deleted_rows_stay_and_new_rows_stay_out_of_older_snapshots() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    for k in [b"a", b"b", b"c"] {
        t.put(T, k, k.to_vec()).unwrap();
    }
    t.commit().unwrap();
    let mut old = s.begin(TxnOptions::default()).unwrap();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.delete(T, b"b").unwrap();
    t.put(T, b"bb", b"new".to_vec()).unwrap();
    t.put(T, b"c", b"c2".to_vec()).unwrap();
    t.commit().unwrap();
    assert_eq!(old.get(T, b"b", false).unwrap(), Some(b"b".to_vec()));
    assert_eq!(old.get(T, b"bb", false).unwrap(), None);
    let keys = |t: &mut Box<dyn Transaction>| {
        t.scan(T, Bound::Unbounded, Bound::Unbounded, usize::MAX)
            .unwrap()
    };
    assert_eq!(
        keys(&mut old),
        vec![
            (b"a".to_vec(), b"a".to_vec()),
            (b"b".to_vec(), b"b".to_vec()),
            (b"c".to_vec(), b"c".to_vec())
        ]
    );
    let mut now = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(
        keys(&mut now),
        vec![
            (b"a".to_vec(), b"a".to_vec()),
            (b"bb".to_vec(), b"new".to_vec()),
            (b"c".to_vec(), b"c2".to_vec())
        ]
    );
    // A locking read sees the latest version, whatever the snapshot.
    let mut w = s.begin(TxnOptions::default()).unwrap();
    drop(now);
    assert_eq!(w.get(T, b"c", true).unwrap(), Some(b"c2".to_vec()));
    assert!(s.overlay_versions() > 0);
    drop(old);
    w.rollback();
    s.gc().unwrap();
    assert_eq!(s.overlay_versions(), 0);
    assert_eq!(
        s.begin(TxnOptions::default()).unwrap().approx_rows(T),
        3,
        "row count kept by commits"
    );
}

/// Scans of an old snapshot over many changed rows (more than one batch of
/// the overlay), and memory that follows what snapshots hold back: with
/// none open, thousands of commits leave only a bounded overlay.
#[test]
fn many_changed_rows_scan_right_and_the_overlay_stays_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    const N: u32 = 3000;
    let mut t = s.begin(TxnOptions::default()).unwrap();
    for i in 0..N {
        t.put(T, &i.to_be_bytes(), b"old".to_vec()).unwrap();
    }
    t.commit().unwrap();
    let mut old = s.begin(TxnOptions::default()).unwrap();
    for i in 0..N {
        let mut t = s.begin(TxnOptions::default()).unwrap();
        if i % 2 == 0 {
            t.delete(T, &i.to_be_bytes()).unwrap();
        } else {
            t.put(T, &i.to_be_bytes(), b"new".to_vec()).unwrap();
        }
        t.put(T, &(N + i).to_be_bytes(), b"added".to_vec()).unwrap();
        t.commit().unwrap();
    }
    // The old snapshot holds every changed row's older version back.
    assert!(s.overlay_versions() >= 2 * N as usize);
    let rows = old
        .scan(T, Bound::Unbounded, Bound::Unbounded, usize::MAX)
        .unwrap();
    assert_eq!(rows.len(), N as usize);
    assert!(rows.iter().all(|(_, v)| v == b"old"));
    // A scan from the middle, cut short.
    let from = 1000u32.to_be_bytes().to_vec();
    let part = old
        .scan(T, Bound::Included(from), Bound::Unbounded, 700)
        .unwrap();
    let keys: Vec<u32> = part
        .iter()
        .map(|(k, _)| u32::from_be_bytes(k.as_slice().try_into().unwrap()))
        .collect();
    assert_eq!(keys, (1000..1700).collect::<Vec<_>>());
    let mut now = s.begin(TxnOptions::default()).unwrap();
    let rows = now
        .scan(T, Bound::Unbounded, Bound::Unbounded, usize::MAX)
        .unwrap();
    assert_eq!(rows.len(), N as usize / 2 + N as usize);
    drop(now);
    drop(old);
    // No snapshot left: further commits trim the overlay as they go.
    for i in 0..6_000u32 {
        let mut t = s.begin(TxnOptions::default()).unwrap();
        t.put(U, &i.to_be_bytes(), b"x".to_vec()).unwrap();
        t.commit().unwrap();
    }
    // What the applier has not written yet (up to its gather, 100 ms of
    // commits) is still in memory: have it written now, then give its
    // thread the moment it trims in (a deadline, not a sleep).
    s.wait_applied().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while s.overlay_versions() >= 9_000 && std::time::Instant::now() < deadline {
        std::thread::yield_now();
    }
    assert!(
        s.overlay_versions() < 9_000,
        "overlay {} after 6,000 commits (12,000 versions) with no snapshot open",
        s.overlay_versions()
    );
}

/// One statement's reads share a redb reader: snapshot reads keep using it,
/// a locking read (latest committed row) must not once a commit was
/// published after it was opened — neither inside one statement nor in the
/// next one.
#[test]
fn locking_reads_see_commits_published_after_the_statements_reader_opened() {
    let dir = tempfile::tempdir().expect("tempdir");
    let s = EmbeddedStorage::open(dir.path()).expect("open");
    let put = |k: &[u8], v: &[u8]| put(&s, T, k, v);
    put(b"a", b"a0");
    put(b"b", b"b0");
    let mut t = s.begin(TxnOptions::default()).expect("begin");
    // Opens the statement's reader.
    assert_eq!(t.get(T, b"a", true).expect("get"), Some(b"a0".to_vec()));
    put(b"b", b"b1");
    // Same statement: the snapshot read still sees the old row, the
    // locking read the new one.
    assert_eq!(t.get(T, b"b", false).expect("get"), Some(b"b0".to_vec()));
    assert_eq!(t.get(T, b"b", true).expect("get"), Some(b"b1".to_vec()));
    put(b"c", b"c1");
    assert_eq!(t.get_for_share(T, b"c").expect("get"), Some(b"c1".to_vec()));
    // A scan at the snapshot after all that: the state at begin plus own
    // (none) writes.
    let rows = t
        .scan(T, Bound::Unbounded, Bound::Unbounded, usize::MAX)
        .expect("scan");
    assert_eq!(
        rows,
        vec![
            (b"a".to_vec(), b"a0".to_vec()),
            (b"b".to_vec(), b"b0".to_vec())
        ]
    );
    t.rollback();
}

/// A reader whose file predates the applier's write of a commit keeps
/// finding that commit's version in memory: GC leaves a chain in memory
/// while any open reader's file may lack its newest version, even after
/// the applier wrote it.
#[test]
fn a_reader_opened_before_the_apply_still_finds_the_version_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    let s = EmbeddedStorage::open(dir.path()).unwrap();
    let put = |k: &[u8], v: &[u8]| put(&s, T, k, v);
    put(b"k", b"v0");
    put(b"other", b"x");
    s.wait_applied().unwrap();
    let paused = s.pause_applier();
    put(b"k", b"v1"); // in the log and in memory, not in the file
    let mut r = s.begin(TxnOptions::default()).unwrap();
    // Opens (and keeps, for this statement) a reader of the file as it is.
    assert_eq!(r.get(T, b"other", false).unwrap(), Some(b"x".to_vec()));
    drop(paused);
    s.wait_applied().unwrap();
    s.gc().unwrap();
    assert_eq!(
        r.get(T, b"k", false).unwrap(),
        Some(b"v1".to_vec()),
        "the snapshot's version was dropped from memory while its reader's file lacked it"
    );
    r.rollback();
    s.gc().unwrap();
    assert_eq!(s.overlay_versions(), 0, "no reader left: nothing kept");
}

/// The latest-version reads a write's checks make (`get(.., true)`: an
/// INSERT's primary-key check) answer "absent" for a key above every key
/// of the table without reading the file (`mvcc`'s key bound): checked
/// against a model while keys grow (an auto-increment id), land below the
/// largest, get deleted, and while restarts (rows then on disk only), GC
/// and a paused applier (rows then in memory only) come and go.
#[test]
fn latest_reads_find_keys_below_and_above_the_largest() {
    let dir = tempfile::tempdir().unwrap();
    let mut s = EmbeddedStorage::open(dir.path()).unwrap();
    let mut rng = Rng(0x51_7CC1_B727_220A);
    let mut state = State::new();
    let mut next_id = 1_000u64;
    // A table emptied, then learnt empty after a restart, then written.
    let commit = |s: &EmbeddedStorage, k: &[u8], v: Option<&[u8]>| {
        let mut t = s.begin(TxnOptions::default()).unwrap();
        match v {
            Some(v) => t.put(U, k, v.to_vec()).unwrap(),
            None => t.delete(U, k).unwrap(),
        };
        t.commit().unwrap();
    };
    commit(&s, b"k5", Some(b"v"));
    commit(&s, b"k5", None);
    drop(s);
    s = EmbeddedStorage::open(dir.path()).unwrap();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(U, b"k7", true).unwrap(), None);
    r.rollback();
    commit(&s, b"k3", Some(b"v3"));
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(U, b"k3", true).unwrap(), Some(b"v3".to_vec()));
    assert_eq!(r.get(U, b"k7", true).unwrap(), None);
    r.rollback();
    for round in 0..400 {
        // Rows committed now stay out of the file until the round ends.
        let paused = (rng.below(4) == 0).then(|| s.pause_applier());
        let mut t = s.begin(TxnOptions::default()).unwrap();
        let mut next = state.clone();
        // Sometimes written blind (no read first), so that the first read
        // after a restart comes after rows in memory only.
        let blind = rng.below(4) == 0;
        for _ in 0..1 + rng.below(3) {
            let k = match rng.below(4) {
                // Growing ids, as an auto-increment key.
                0 | 1 => {
                    next_id += 1 + rng.below(3);
                    next_id.to_be_bytes().to_vec()
                }
                // Below the largest.
                2 => rng.below(next_id + 1).to_be_bytes().to_vec(),
                // An existing row, deleted.
                _ => match next
                    .keys()
                    .nth(rng.below(next.len().max(1) as u64) as usize)
                {
                    Some(k) => {
                        let k = k.clone();
                        if !blind {
                            assert_eq!(t.get(T, &k, true).unwrap(), next.get(&k).cloned());
                        }
                        t.delete(T, &k).unwrap();
                        next.remove(&k);
                        continue;
                    }
                    None => continue,
                },
            };
            if !blind {
                assert_eq!(
                    t.get(T, &k, true).unwrap(),
                    next.get(&k).cloned(),
                    "locking read of {k:?} in round {round}"
                );
            }
            let v = format!("v{round}").into_bytes();
            t.put(T, &k, v.clone()).unwrap();
            next.insert(k, v);
        }
        t.commit().unwrap();
        state = next;
        // Every key of the model, one past the largest, and a random one.
        let mut r = s.begin(TxnOptions::default()).unwrap();
        for probe in [next_id + 1, next_id + 1_000, rng.below(next_id + 2)] {
            let k = probe.to_be_bytes().to_vec();
            assert_eq!(r.get(T, &k, true).unwrap(), state.get(&k).cloned());
        }
        for (k, v) in &state {
            assert_eq!(
                r.get(T, k, true).unwrap().as_ref(),
                Some(v),
                "round {round}"
            );
        }
        r.rollback();
        drop(paused);
        match rng.below(10) {
            0 => {
                drop(s);
                s = EmbeddedStorage::open(dir.path()).unwrap();
            }
            1 => {
                s.gc().unwrap();
            }
            _ => {}
        }
    }
}

/// A table whose latest values are kept in memory once read
/// (`Storage::cache_latest`, a catalog) answers latest reads exactly as any
/// other: checked against a model while rows are updated, deleted and
/// re-inserted, the applier pauses (rows in memory only), GC trims chains
/// (rows then read from the file, and cached) and restarts clear memory.
#[test]
fn latest_reads_of_a_cached_table_follow_every_commit() {
    const C: u64 = 33;
    let dir = tempfile::tempdir().unwrap();
    let mut s = EmbeddedStorage::open(dir.path()).unwrap();
    s.cache_latest(C);
    let mut rng = Rng(0x0C0F_FEE0_1234_5678);
    let mut state = State::new();
    for round in 0..600 {
        let paused = (rng.below(5) == 0).then(|| s.pause_applier());
        let mut t = s.begin(TxnOptions::default()).unwrap();
        for _ in 0..1 + rng.below(3) {
            let k = key(rng.below(12));
            if rng.below(3) == 0 {
                t.delete(C, &k).unwrap();
                state.remove(&k);
            } else {
                let v = format!("v{round}").into_bytes();
                t.put(C, &k, v.clone()).unwrap();
                state.insert(k, v);
            }
        }
        t.commit().unwrap();
        // Each key twice (the second read may come from the cache), in
        // fresh transactions so that each opens its own reader.
        for _ in 0..2 {
            let mut r = s.begin(TxnOptions::default()).unwrap();
            for i in 0..12 {
                let k = key(i);
                assert_eq!(
                    r.get(C, &k, true).unwrap(),
                    state.get(&k).cloned(),
                    "latest read of {k:?} in round {round}"
                );
            }
            r.rollback();
        }
        drop(paused);
        match rng.below(8) {
            0 => {
                drop(s);
                s = EmbeddedStorage::open(dir.path()).unwrap();
                s.cache_latest(C);
            }
            // GC has the applier write what it queued first.
            1 | 2 => {
                s.gc().unwrap();
            }
            _ => {}
        }
    }
}

/// Latest reads of a cached table never go back in time while one writer
/// keeps updating a key and GC keeps trimming its chains: a value read
/// from the file is cached only while the key has no chain (a version
/// committed after the reader's file was opened has one until that reader
/// is done), and each commit of the key drops the cached value.
#[test]
fn latest_reads_of_a_cached_table_never_go_back_under_concurrent_commits_and_gc() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    const C: u64 = 34;
    let dir = tempfile::tempdir().unwrap();
    let s = Arc::new(EmbeddedStorage::open(dir.path()).unwrap());
    s.cache_latest(C);
    let committed = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    put(&s, C, b"k", &0u64.to_be_bytes());
    let readers: Vec<_> = (0..3)
        .map(|_| {
            let (s, committed, stop) = (s.clone(), committed.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::Acquire) {
                    let floor = committed.load(Ordering::Acquire);
                    let mut r = s.begin(TxnOptions::default()).unwrap();
                    let v = r.get(C, b"k", true).unwrap().expect("the key exists");
                    r.rollback();
                    let got = u64::from_be_bytes(v.try_into().expect("8 bytes"));
                    assert!(got >= floor, "read {got} after {floor} was committed");
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    let gc = {
        let (s, stop) = (s.clone(), stop.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Acquire) {
                s.gc().unwrap();
            }
        })
    };
    for n in 1..=3_000u64 {
        put(&s, C, b"k", &n.to_be_bytes());
        committed.store(n, Ordering::Release);
    }
    stop.store(true, Ordering::Release);
    gc.join().unwrap();
    let reads: u64 = readers.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(reads > 0);
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(
        r.get(C, b"k", true).unwrap(),
        Some(3_000u64.to_be_bytes().to_vec())
    );
    r.rollback();
}
