//! The storage contract over PostgreSQL: snapshots, own writes, savepoints,
//! locks in three modes (X, S, IX) with PostgreSQL's deadlock detector and
//! lock_timeout, commit order, the change log, GC, purge, leases and
//! sequences; two nodes on one database. Each test gets its own database in
//! the test process's throwaway cluster (`tributary_pgstore::testing`).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::ops::Bound;
use std::sync::mpsc;
use std::sync::{Arc, Barrier};
use std::thread;
use std::time::{Duration, Instant};

use tributary_pgstore::testing::{cluster, db_of};
use tributary_pgstore::{PgOptions, PgStorage};
use tributary_storage::{
    full_range, ChangeKind, Interrupt, LockWait, Storage, StorageError, Transaction, TxnOptions,
};

const T: u64 = 7;
const LONG: Duration = Duration::from_secs(20);

fn open_db() -> (String, Arc<PgStorage>) {
    let url = cluster().fresh_db();
    let s = PgStorage::open(PgOptions::new(url.clone(), "cn-a")).unwrap();
    (url, s)
}

fn node(url: &str, name: &str) -> Arc<PgStorage> {
    PgStorage::open(PgOptions::new(url, name)).unwrap()
}

fn opts(timeout_ms: u64) -> TxnOptions {
    TxnOptions {
        lock_wait_timeout: Duration::from_millis(timeout_ms),
        read_only: false,
        ..TxnOptions::default()
    }
}

fn put_commit(s: &PgStorage, key: &[u8], value: &[u8]) -> u64 {
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, key, value.to_vec()).unwrap();
    t.commit().unwrap()
}

/// Lock waits in the test's database, from pg_locks.
fn waiters(url: &str) -> u64 {
    cluster()
        .psql(
            "postgres",
            &format!(
                "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \
                 WHERE NOT l.granted AND a.datname = '{}'",
                db_of(url)
            ),
        )
        .parse()
        .unwrap()
}

/// Wait (bounded) until `n` lock waits stand; fails if `done` reports first.
fn wait_blocked<R: std::fmt::Debug>(url: &str, n: u64, done: &mpsc::Receiver<R>) {
    let deadline = Instant::now() + LONG;
    loop {
        if waiters(url) >= n {
            return;
        }
        if let Ok(r) = done.try_recv() {
            panic!("not blocked: {r:?}");
        }
        assert!(Instant::now() < deadline, "never blocked");
        thread::sleep(Duration::from_millis(20));
    }
}

type Txn = Box<dyn Transaction>;

/// In a thread: run `f` on `txn`, report its result, hand the txn back.
fn spawn<R: Send + 'static>(
    mut txn: Txn,
    f: impl FnOnce(&mut Txn) -> R + Send + 'static,
) -> (mpsc::Receiver<R>, thread::JoinHandle<Txn>) {
    let (tx, rx) = mpsc::channel();
    let h = thread::spawn(move || {
        let r = f(&mut txn);
        let _ = tx.send(r);
        txn
    });
    (rx, h)
}

#[test]
fn snapshot_isolation_own_writes_and_scan_merge() {
    let (_url, s) = open_db();
    put_commit(&s, b"a", b"1");
    put_commit(&s, b"c", b"3");
    let mut old = s.begin(TxnOptions::default()).unwrap();
    put_commit(&s, b"b", b"2");
    put_commit(&s, b"a", b"1'");
    let mut d = s.begin(TxnOptions::default()).unwrap();
    d.delete(T, b"c").unwrap();
    d.commit().unwrap();
    // The old snapshot sees neither the later commits nor the delete.
    assert_eq!(old.get(T, b"a", false).unwrap(), Some(b"1".to_vec()));
    assert_eq!(old.get(T, b"b", false).unwrap(), None);
    assert_eq!(old.get(T, b"c", false).unwrap(), Some(b"3".to_vec()));
    // Own writes merge into scans, in key order, deletes hide rows.
    old.put(T, b"bb", b"own".to_vec()).unwrap();
    old.delete(T, b"a").unwrap();
    let (lo, hi) = full_range();
    let rows = old.scan(T, lo, hi, usize::MAX).unwrap();
    assert_eq!(
        rows,
        vec![
            (b"bb".to_vec(), b"own".to_vec()),
            (b"c".to_vec(), b"3".to_vec())
        ]
    );
    old.rollback();
    let mut now = s.begin(TxnOptions::default()).unwrap();
    let rows = now
        .scan(
            T,
            Bound::Included(b"a".to_vec()),
            Bound::Excluded(b"c".to_vec()),
            10,
        )
        .unwrap();
    assert_eq!(
        rows,
        vec![
            (b"a".to_vec(), b"1'".to_vec()),
            (b"b".to_vec(), b"2".to_vec())
        ]
    );
}

#[test]
fn long_scans_page_and_match_a_model() {
    let (_url, s) = open_db();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    for i in 0..3000u32 {
        t.put(T, &i.to_be_bytes(), vec![1; (i % 7) as usize])
            .unwrap();
    }
    t.commit().unwrap();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    // Own writes interleaved with pages.
    for i in (0..3000u32).step_by(500) {
        r.delete(T, &i.to_be_bytes()).unwrap();
    }
    r.put(T, &5000u32.to_be_bytes(), b"x".to_vec()).unwrap();
    let mut seen = Vec::new();
    r.scan_visit(T, Bound::Unbounded, Bound::Unbounded, &mut |k, _| {
        seen.push(u32::from_be_bytes(k.try_into().unwrap()));
        true
    })
    .unwrap();
    let mut want: Vec<u32> = (0..3000).filter(|i| i % 500 != 0).collect();
    want.push(5000);
    assert_eq!(seen, want);
    assert_eq!(r.approx_rows(T), 3000);
}

#[test]
fn commit_timestamps_increase_and_latest_follows() {
    let (_url, s) = open_db();
    let mut last = s.latest_ts();
    for i in 0..20u8 {
        let ts = put_commit(&s, &[i % 3], &[i]);
        assert!(ts > last, "{ts} after {last}");
        assert!(s.latest_ts() >= ts);
        last = ts;
    }
    // An empty or read-only transaction returns its snapshot.
    let t = s.begin(TxnOptions::default()).unwrap();
    let start = t.start_ts();
    assert_eq!(t.commit().unwrap(), start);
}

#[test]
fn refresh_snapshot_sees_new_commits_and_keeps_own_writes() {
    let (_url, s) = open_db();
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

/// NOWAIT / SKIP LOCKED, as the embedded store: a locking read of a row
/// another transaction holds fails at once (`LockNotAvailable`) or reads
/// it as absent, locking nothing; rows nobody holds are locked as usual;
/// the transaction goes on; other lock requests still wait.
#[test]
fn nowait_and_skip_locked_never_wait_for_a_locking_read() {
    let (_url, s) = open_db();
    put_commit(&s, b"a", b"1");
    put_commit(&s, b"b", b"2");
    let mut holder = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(holder.get(T, b"a", true).unwrap(), Some(b"1".to_vec()));
    let mut t = s.begin(opts(300)).unwrap();
    t.set_lock_wait(LockWait::SkipLocked).unwrap();
    let started = Instant::now();
    assert_eq!(t.get(T, b"a", true).unwrap(), None, "a held row is skipped");
    assert_eq!(t.get(T, b"b", true).unwrap(), Some(b"2".to_vec()));
    t.set_lock_wait(LockWait::NoWait).unwrap();
    assert!(matches!(
        t.get(T, b"a", true),
        Err(StorageError::LockNotAvailable)
    ));
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "NOWAIT / SKIP LOCKED waited: {:?}",
        started.elapsed()
    );
    // The transaction goes on, holding b: another one cannot take it.
    assert_eq!(t.get(T, b"b", true).unwrap(), Some(b"2".to_vec()));
    let mut other = s.begin(opts(100)).unwrap();
    other.set_lock_wait(LockWait::NoWait).unwrap();
    assert!(matches!(
        other.get(T, b"b", true),
        Err(StorageError::LockNotAvailable)
    ));
    other.rollback();
    // A plain lock request under SKIP LOCKED still waits (and times out).
    t.set_lock_wait(LockWait::SkipLocked).unwrap();
    assert!(matches!(
        t.lock(T, b"a"),
        Err(StorageError::LockWaitTimeout)
    ));
    t.set_lock_wait(LockWait::Wait).unwrap();
    t.rollback();
    holder.rollback();
    // Once released, NOWAIT takes it.
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.set_lock_wait(LockWait::NoWait).unwrap();
    assert_eq!(t.get(T, b"a", true).unwrap(), Some(b"1".to_vec()));
    t.rollback();
}

#[test]
fn savepoints_undo_later_writes_and_keep_earlier_ones() {
    let (_url, s) = open_db();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, b"a", b"1".to_vec()).unwrap();
    let sp = t.savepoint();
    t.put(T, b"b", b"2".to_vec()).unwrap();
    t.put(T, b"a", b"1'".to_vec()).unwrap();
    t.rollback_to(sp);
    assert_eq!(t.get(T, b"a", false).unwrap(), Some(b"1".to_vec()));
    assert_eq!(t.get(T, b"b", false).unwrap(), None);
    t.commit().unwrap();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    let (lo, hi) = full_range();
    assert_eq!(
        r.scan(T, lo, hi, 10).unwrap(),
        vec![(b"a".to_vec(), b"1".to_vec())]
    );
}

#[test]
fn x_lock_blocks_until_commit_then_reads_the_latest() {
    let (url, s) = open_db();
    put_commit(&s, b"k", b"0");
    let mut a = s.begin(TxnOptions::default()).unwrap();
    a.put(T, b"k", b"1".to_vec()).unwrap();
    let b = s.begin(TxnOptions::default()).unwrap();
    let (rx, h) = spawn(b, |t| t.get(T, b"k", true));
    wait_blocked(&url, 1, &rx);
    a.commit().unwrap();
    assert_eq!(rx.recv_timeout(LONG).unwrap(), Ok(Some(b"1".to_vec())));
    h.join().unwrap().rollback();
}

#[test]
fn lock_wait_times_out_and_the_transaction_goes_on() {
    let (_url, s) = open_db();
    put_commit(&s, b"k", b"0");
    let mut a = s.begin(TxnOptions::default()).unwrap();
    a.lock(T, b"k").unwrap();
    let mut b = s.begin(opts(200)).unwrap();
    b.put(T, b"other", b"kept".to_vec()).unwrap();
    let sp = b.savepoint();
    assert_eq!(
        b.put(T, b"k", b"x".to_vec()),
        Err(StorageError::LockWaitTimeout)
    );
    b.rollback_to(sp);
    // Still usable; its earlier write and lock stand.
    b.put(T, b"more", b"also".to_vec()).unwrap();
    b.commit().unwrap();
    a.rollback();
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"other", false).unwrap(), Some(b"kept".to_vec()));
    assert_eq!(r.get(T, b"more", false).unwrap(), Some(b"also".to_vec()));
    assert_eq!(r.get(T, b"k", false).unwrap(), Some(b"0".to_vec()));
}

#[test]
fn a_deadlock_fails_exactly_one_of_two() {
    let (url, s) = open_db();
    put_commit(&s, b"x", b"0");
    put_commit(&s, b"y", b"0");
    let mut a = s.begin(opts(30_000)).unwrap();
    let mut b = s.begin(opts(30_000)).unwrap();
    a.savepoint();
    b.savepoint();
    a.lock(T, b"x").unwrap();
    b.lock(T, b"y").unwrap();
    let (ra, ha) = spawn(a, |t| t.lock(T, b"y"));
    wait_blocked(&url, 1, &ra);
    let (rb, hb) = spawn(b, |t| t.lock(T, b"x"));
    let ea = ra.recv_timeout(LONG);
    let eb = rb.recv_timeout(LONG);
    let (a, b) = (ha.join().unwrap(), hb.join().unwrap());
    // The victim is reported at once; the survivor got its lock (the
    // victim's locks of the failed statement went with its savepoint).
    let results = [ea.clone(), eb.clone()];
    let deadlocks = results
        .iter()
        .filter(|r| matches!(r, Ok(Err(StorageError::Deadlock))))
        .count();
    let oks = results.iter().filter(|r| matches!(r, Ok(Ok(())))).count();
    assert!(
        (deadlocks, oks) == (1, 1) || deadlocks == 1,
        "{ea:?} {eb:?}"
    );
    a.rollback();
    b.rollback();
}

#[test]
fn concurrent_locked_increments_lose_nothing() {
    let (_url, s) = open_db();
    put_commit(&s, b"n", &0u64.to_be_bytes());
    let threads = 4;
    let per = 25;
    let barrier = Arc::new(Barrier::new(threads));
    let hs: Vec<_> = (0..threads)
        .map(|_| {
            let s = s.clone();
            let barrier = barrier.clone();
            thread::spawn(move || {
                barrier.wait();
                for _ in 0..per {
                    let mut t = s.begin(opts(30_000)).unwrap();
                    let v = t.get(T, b"n", true).unwrap().unwrap();
                    let n = u64::from_be_bytes(v.try_into().unwrap());
                    t.put(T, b"n", (n + 1).to_be_bytes().to_vec()).unwrap();
                    t.commit().unwrap();
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    let mut r = s.begin(TxnOptions::default()).unwrap();
    let v = r.get(T, b"n", false).unwrap().unwrap();
    assert_eq!(
        u64::from_be_bytes(v.try_into().unwrap()),
        (threads * per) as u64
    );
}

#[test]
fn lock_modes_conflict_as_the_contract_says() {
    let (url, s) = open_db();
    put_commit(&s, b"rec", b"v");
    // S + S together; IX + IX together.
    let mut s1 = s.begin(TxnOptions::default()).unwrap();
    let mut s2 = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(s1.get_for_share(T, b"rec").unwrap(), Some(b"v".to_vec()));
    assert_eq!(s2.get_for_share(T, b"rec").unwrap(), Some(b"v".to_vec()));
    // IX waits for the S holders.
    let ix = s.begin(TxnOptions::default()).unwrap();
    let (rx, h) = spawn(ix, |t| t.get_for_intent(T, b"rec"));
    wait_blocked(&url, 1, &rx);
    s1.rollback();
    s2.rollback();
    assert_eq!(rx.recv_timeout(LONG).unwrap(), Ok(Some(b"v".to_vec())));
    let ix1 = h.join().unwrap();
    let mut ix2 = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(ix2.get_for_intent(T, b"rec").unwrap(), Some(b"v".to_vec()));
    // S waits for the IX holders; so does X.
    let sh = s.begin(opts(300)).unwrap();
    let (rs, hs) = spawn(sh, |t| t.get_for_share(T, b"rec"));
    assert_eq!(
        rs.recv_timeout(LONG).unwrap(),
        Err(StorageError::LockWaitTimeout)
    );
    hs.join().unwrap().rollback();
    let mut x = s.begin(opts(300)).unwrap();
    assert_eq!(x.lock(T, b"rec"), Err(StorageError::LockWaitTimeout));
    x.rollback();
    ix1.rollback();
    ix2.rollback();
    // A queued X is not overtaken by a later S (the gate's queue).
    let mut s3 = s.begin(TxnOptions::default()).unwrap();
    s3.get_for_share(T, b"rec").unwrap();
    let xw = s.begin(opts(30_000)).unwrap();
    let (rxw, hxw) = spawn(xw, |t| t.put(T, b"rec", b"w".to_vec()));
    wait_blocked(&url, 1, &rxw);
    let late = s.begin(opts(300)).unwrap();
    let (rl, hl) = spawn(late, |t| t.get_for_share(T, b"rec"));
    assert_eq!(
        rl.recv_timeout(LONG).unwrap(),
        Err(StorageError::LockWaitTimeout)
    );
    hl.join().unwrap().rollback();
    s3.rollback();
    assert_eq!(rxw.recv_timeout(LONG).unwrap(), Ok(Some(b"v".to_vec())));
    hxw.join().unwrap().commit().unwrap();
    // Read-only transactions take no locks.
    let mut ro = s
        .begin(TxnOptions {
            read_only: true,
            ..TxnOptions::default()
        })
        .unwrap();
    assert_eq!(ro.get_for_share(T, b"rec"), Err(StorageError::ReadOnly));
    assert_eq!(ro.put(T, b"rec", vec![]), Err(StorageError::ReadOnly));
}

#[test]
fn a_kill_stops_a_lock_wait() {
    let (url, s) = open_db();
    put_commit(&s, b"k", b"0");
    let mut a = s.begin(TxnOptions::default()).unwrap();
    a.lock(T, b"k").unwrap();
    let mut b = s.begin(opts(30_000)).unwrap();
    let token = tokio_util::sync::CancellationToken::new();
    b.set_interrupt(Interrupt::new(token.clone(), None));
    let (rx, h) = spawn(b, |t| t.lock(T, b"k"));
    wait_blocked(&url, 1, &rx);
    let t0 = Instant::now();
    token.cancel();
    assert_eq!(
        rx.recv_timeout(LONG).unwrap(),
        Err(StorageError::Interrupted)
    );
    assert!(t0.elapsed() < Duration::from_secs(5));
    h.join().unwrap().rollback();
    a.rollback();
}

#[test]
fn change_log_in_commit_order_with_resume_and_gc_horizon() {
    let (_url, s) = open_db();
    let t0 = s.latest_ts();
    let c1 = put_commit(&s, b"a", b"1");
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, b"a", b"2".to_vec()).unwrap();
    t.put(T, b"b", b"1".to_vec()).unwrap();
    t.put(T, b"tmp", b"x".to_vec()).unwrap();
    t.delete(T, b"tmp").unwrap();
    let c2 = t.commit().unwrap();
    let mut d = s.begin(TxnOptions::default()).unwrap();
    d.delete(T, b"a").unwrap();
    let c3 = d.commit().unwrap();
    let all = s.changes(T, t0, u64::MAX, None, 100).unwrap();
    let got: Vec<_> = all
        .changes
        .iter()
        .map(|c| (c.commit_ts, c.seq, c.kind, c.key.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (c1, 0, ChangeKind::Insert, b"a".to_vec()),
            (c2, 0, ChangeKind::Update, b"a".to_vec()),
            (c2, 1, ChangeKind::Insert, b"b".to_vec()),
            (c3, 0, ChangeKind::Delete, b"a".to_vec()),
        ]
    );
    assert_eq!(all.changes[1].old, Some(b"1".to_vec()));
    assert!(all.resume.is_none());
    // Batches cut by the limit resume where they stopped.
    let first = s.changes(T, t0, u64::MAX, None, 2).unwrap();
    assert_eq!(first.changes.len(), 2);
    let rest = s.changes(T, t0, u64::MAX, first.resume, 10).unwrap();
    assert_eq!(first.changes.len() + rest.changes.len(), 4);
    assert_eq!(rest.changes[0].seq, 1);
    // A consumer keeps what it needs; GC drops the rest and says so.
    s.set_consumer_watermark("job", T, c2);
    s.gc().unwrap();
    assert!(s.changes(T, c2, u64::MAX, None, 10).unwrap().changes.len() == 1);
    assert!(matches!(
        s.changes(T, t0, u64::MAX, None, 10),
        Err(StorageError::ChangesGone { .. })
    ));
    // The snapshot at the watermark is still readable.
    let at_c2 = s.snapshot_scan(T, c2, None, 10).unwrap();
    assert_eq!(
        at_c2,
        vec![
            (b"a".to_vec(), b"2".to_vec()),
            (b"b".to_vec(), b"1".to_vec())
        ]
    );
    s.remove_consumer("job");
    let stats = s.gc().unwrap();
    assert!(stats.changes_removed >= 1, "{stats:?}");
    assert!(matches!(
        s.snapshot_scan(T, c2, None, 10),
        Err(StorageError::ChangesGone { .. })
    ));
}

#[test]
fn gc_keeps_what_another_nodes_open_snapshot_needs() {
    let (url, a) = open_db();
    let b = node(&url, "cn-b");
    put_commit(&a, b"k", b"old");
    let mut reader = b.begin(TxnOptions::default()).unwrap();
    // b's heartbeat publishes the snapshot (within a second).
    let deadline = Instant::now() + LONG;
    let start = reader.start_ts();
    loop {
        let published: i64 = cluster()
            .psql(
                db_of(&url),
                &format!(
                    "SELECT min_ts FROM tsr_cn_snapshots WHERE cn = '{}'",
                    b.node_entry()
                ),
            )
            .parse()
            .unwrap();
        if published as u64 <= start {
            break;
        }
        assert!(Instant::now() < deadline, "snapshot never published");
        thread::sleep(Duration::from_millis(50));
    }
    for i in 0..5u8 {
        put_commit(&a, b"k", &[b'n', i]);
    }
    a.gc().unwrap();
    assert_eq!(reader.get(T, b"k", false).unwrap(), Some(b"old".to_vec()));
    reader.rollback();
}

#[test]
fn two_nodes_see_each_others_commits_and_purge_empties_a_table() {
    let (url, a) = open_db();
    let b = node(&url, "cn-b");
    let ts = put_commit(&a, b"k", b"from-a");
    assert!(b.latest_ts() >= ts);
    let mut r = b.begin(TxnOptions::default()).unwrap();
    assert_eq!(r.get(T, b"k", false).unwrap(), Some(b"from-a".to_vec()));
    r.rollback();
    b.purge_table(T).unwrap();
    let mut r = a.begin(TxnOptions::default()).unwrap();
    let (lo, hi) = full_range();
    assert!(r.scan(T, lo, hi, 10).unwrap().is_empty());
    assert_eq!(r.get(T, b"k", false).unwrap(), None);
    assert!(a
        .changes(T, 0, u64::MAX, None, 10)
        .unwrap()
        .changes
        .is_empty());
    let stats = a.gc().unwrap();
    assert!(stats.purged_entries >= 2, "{stats:?}");
}

#[test]
fn leases_and_sequences_use_the_database() {
    let (url, a) = open_db();
    let b = node(&url, "cn-b");
    let ttl = Duration::from_millis(600);
    assert!(a.try_lease("iscp", "a", ttl).unwrap());
    assert!(!b.try_lease("iscp", "b", ttl).unwrap());
    assert!(a.try_lease("iscp", "a", ttl).unwrap());
    // Expiry hands it over (the database's clock decides).
    let deadline = Instant::now() + LONG;
    while !b.try_lease("iscp", "b", ttl).unwrap() {
        assert!(Instant::now() < deadline);
        thread::sleep(Duration::from_millis(100));
    }
    assert!(!a.try_lease("iscp", "a", ttl).unwrap());
    b.release_lease("iscp", "b");
    assert!(a.try_lease("iscp", "a", ttl).unwrap());
    let x = a.next_id("object").unwrap();
    let y = b.next_id("object").unwrap();
    assert!(y > x);
}

fn unavailable<T>(r: &Result<T, StorageError>) -> bool {
    matches!(r, Err(StorageError::Unavailable(_)))
}

/// A node whose heartbeat stops (cut off from PostgreSQL while the others
/// still reach it) refuses new transactions and even reads of its open ones
/// before the other nodes stop counting its snapshots: another node's GC
/// then removes versions that snapshot needed, and the cut-off node must
/// report that it cannot answer rather than answer from what is left.
#[test]
fn a_cut_off_node_fences_itself_before_others_collect_its_snapshot() {
    let url = cluster().fresh_db();
    let mut ao = PgOptions::new(url.clone(), "cn-a");
    ao.dead_after = Duration::from_millis(1500);
    let a = PgStorage::open(ao).unwrap();
    let mut bo = PgOptions::new(url.clone(), "cn-b");
    bo.heartbeat = Duration::from_millis(100);
    bo.fence_after = Duration::from_millis(500);
    let b = PgStorage::open(bo).unwrap();
    put_commit(&a, b"k", b"old");
    let mut reader = b.begin(TxnOptions::default()).unwrap();
    let start = reader.start_ts();
    let deadline = Instant::now() + LONG;
    while cluster()
        .psql(
            db_of(&url),
            &format!(
                "SELECT min_ts FROM tsr_cn_snapshots WHERE cn = '{}'",
                b.node_entry()
            ),
        )
        .parse::<u64>()
        .unwrap()
        > start
    {
        assert!(Instant::now() < deadline, "snapshot never published");
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(reader.get(T, b"k", false).unwrap(), Some(b"old".to_vec()));
    b.pause_heartbeat_for_tests(true);
    for i in 0..3u8 {
        put_commit(&a, b"k", &[i]);
    }
    let deadline = Instant::now() + LONG;
    while !unavailable(&b.begin(TxnOptions::default()).map(|_| ())) {
        assert!(Instant::now() < deadline, "cn-b never fenced itself");
        thread::sleep(Duration::from_millis(20));
    }
    // Once cn-b counts as gone, cn-a's GC removes the old versions.
    let deadline = Instant::now() + LONG;
    while a.gc().unwrap().versions_removed == 0 {
        assert!(Instant::now() < deadline, "cn-a's GC never collected");
        thread::sleep(Duration::from_millis(50));
    }
    let got = reader.get(T, b"k", false);
    assert!(unavailable(&got), "a fenced node answered: {got:?}");
    let (lo, hi) = full_range();
    assert!(unavailable(&reader.scan(T, lo, hi, 10)));
    reader.rollback();
    b.pause_heartbeat_for_tests(false);
    let deadline = Instant::now() + LONG;
    while b.begin(TxnOptions::default()).is_err() {
        assert!(Instant::now() < deadline, "cn-b never came back");
        thread::sleep(Duration::from_millis(20));
    }
}

/// The write set is bounded as on the embedded store (decision 032): a
/// write past the limit is refused with `TxnTooLarge` and not buffered; a
/// rollback to a savepoint gives its bytes back; what was kept commits.
#[test]
fn a_write_past_the_limit_is_refused_and_not_buffered() {
    let (_url, s) = open_db();
    let mut t = s
        .begin(TxnOptions {
            write_limit: tributary_storage::write_budget::WriteLimit {
                bytes: 64 << 10,
                setting: "the_limit".into(),
                global: None,
            },
            ..TxnOptions::default()
        })
        .unwrap();
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
    assert_eq!(t.get(T, &n.to_be_bytes(), false).unwrap(), None);
    t.rollback_to(sp);
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
