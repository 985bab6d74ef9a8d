//! [`EmbeddedStorage`]: the embedded backend's shared state and its
//! [`Storage`] implementation.
//!
//! Owns the commit mutex, the published `latest_ts`, the set of open
//! snapshots, consumer watermarks and the poison flag, and wires the
//! version store, lock manager, commit log, applier and redb file
//! together; at open it replays the commit log past the file's last
//! applied commit.
//!
//! This module must never publish a timestamp before the commit it names is
//! durable and installed, and never write to a file that failed before it
//! was reopened and checked against memory.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Mutex, RwLock};

use super::commit::Durability;
use super::durable::Durable;
use super::locks::LockManager;
use super::mvcc::VersionStore;
use super::txn::EmbeddedTxn;
use super::{changelog, gc, lease};
use crate::api::{
    ChangeBatch, GcStats, Result, Storage, StorageError, TableId, Transaction, Ts, TxnId,
    TxnOptions,
};

/// How an [`EmbeddedStorage`] is opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EmbeddedOptions {
    /// How commits reach stable storage.
    pub durability: Durability,
    /// Bytes of the file's page cache (redb's): what memory rows and change
    /// log take, whatever their size on disk. Default
    /// [`default_cache_bytes`].
    pub cache_bytes: usize,
    /// Bytes the commit log is preallocated to: how much committed data
    /// may wait for the data file — and so about how much memory the
    /// not-yet-applied versions take (up to ~4x it). `None`: a sixteenth
    /// of `cache_bytes`,
    /// at least 4 MiB and at most 64 MiB.
    pub log_bytes: Option<u64>,
}

impl Default for EmbeddedOptions {
    fn default() -> Self {
        EmbeddedOptions {
            durability: Durability::Immediate,
            cache_bytes: default_cache_bytes(),
            log_bytes: None,
        }
    }
}

/// The default page cache: an eighth of the machine's memory, at least
/// 32 MiB and at most 4 GiB (256 MiB where the memory cannot be read).
pub fn default_cache_bytes() -> usize {
    const MIB: usize = 1 << 20;
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
            .map(|kb| kb.saturating_mul(1024))
    });
    match total {
        Some(bytes) => (bytes / 8).clamp(32 * MIB, 4096 * MIB),
        None => 256 * MIB,
    }
}

/// New pages a small durable write (a lease, a watermark, a sequence, a
/// GC batch) may take.
const SMALL_WRITE: u64 = 1 << 20;

/// Longest the applier holds back for small durable writes before its
/// next batch.
const APPLIER_YIELD: Duration = Duration::from_millis(50);

/// How long reopening the file after an I/O failure waits for statements
/// still reading the old one.
const REOPEN_WAIT: Duration = Duration::from_secs(2);
/// Poll interval of that wait: readers finish within a scan chunk.
const REOPEN_POLL: Duration = Duration::from_millis(5);
/// Poll interval of the applier while small durable writes go first
/// (each is one short redb commit, well under a millisecond of work).
const SMALL_WRITERS_POLL: Duration = Duration::from_micros(200);

/// State shared by the storage handle and its transactions.
pub(super) struct Inner {
    /// The redb file; `None` only while it is being reopened after an I/O
    /// failure (see [`Inner::recover`]).
    pub durable: RwLock<Option<Durable>>,
    /// The data directory (to reopen the file).
    pub dir: PathBuf,
    /// What the storage was opened with.
    pub options: EmbeddedOptions,
    pub versions: VersionStore,
    pub locks: LockManager,
    /// Newest fully visible commit.
    pub latest_ts: AtomicU64,
    /// Held by the leader of a commit group; holds the last assigned
    /// commit ts.
    pub commit_mu: Mutex<Ts>,
    /// Commits waiting for a group leader.
    pub queue: super::commit::CommitQueue,
    /// Newest commit known to be on stable storage.
    pub durable_ts: AtomicU64,
    /// Commit groups written (one log record each) since open.
    pub groups_written: AtomicU64,
    /// Commit-log syncs on the commit path since open (see `flush`).
    pub log_syncs: AtomicU64,
    /// Overlay size (versions) at which the commit path trims it next.
    pub trim_at: std::sync::atomic::AtomicUsize,
    /// When recent commits happened (reporting only).
    pub clock: super::clock::CommitClock,
    /// Start timestamps of open transactions (multiset).
    pub active: Mutex<BTreeMap<Ts, usize>>,
    pub next_txn: AtomicU64,
    /// consumer -> table -> low watermark.
    pub watermarks: Mutex<HashMap<String, HashMap<TableId, Ts>>>,
    /// Which tables' changes are stored (locked after `watermarks` when
    /// both are held).
    pub gate: Mutex<changelog::Gate>,
    /// Tables with stored data (rows or change log) -> last commit ts.
    pub table_ts: Mutex<HashMap<TableId, Ts>>,
    /// Where commit groups become durable (see `log`).
    pub log: Mutex<super::log::CommitLog>,
    /// Syncs the log without its lock (see `flush`).
    pub log_sync: super::log::LogSync,
    /// Groups written to the log, waiting for a sync.
    pub flush: super::flush::FlushQueue,
    /// Groups durable in the log, not yet in redb, and the applied ts.
    pub apply: super::apply::ApplyQueue,
    /// First durable failure since the file was last (re)opened: durable
    /// work fails until [`Inner::recover`] has reopened the file.
    pub poison: Mutex<Option<String>>,
    /// The reader statements share until the applier next writes (see
    /// [`Inner::rows_reader`]).
    pub shared_rows: Mutex<Option<Arc<SharedRows>>>,
    /// Small durable writes in progress or waiting ([`Inner::durably`]):
    /// the applier lets them go before its next batch.
    pub small_writers: std::sync::atomic::AtomicUsize,
}

/// A registered `rows` reader (see `apply`): what [`Inner::rows_reader`]
/// hands out. Dropping the last handle ends its redb read transaction and
/// its registration.
pub(super) struct SharedRows {
    rows: super::mvcc::Rows,
    /// The applied ts it was registered at.
    applied: Ts,
    _guard: super::apply::ReaderGuard,
}

impl std::ops::Deref for SharedRows {
    type Target = super::mvcc::Rows;

    fn deref(&self) -> &Self::Target {
        &self.rows
    }
}

impl Inner {
    /// Before durable work: if a previous operation failed (a full disk, an
    /// I/O error), reopen the file and go on if it is exactly in the state
    /// memory has; otherwise fail with the original error. Reads of memory
    /// never call this: they keep working while writes fail.
    pub fn check_poison(&self) -> Result<()> {
        let msg = match &*self.poison.lock() {
            Some(msg) => msg.clone(),
            None => return Ok(()),
        };
        self.recover(&msg)
    }

    /// Reopen the redb file after an I/O failure. Succeeds only when the
    /// file's last commit is the last commit memory holds (the failed
    /// commit left no trace); a commit that reached the file without being
    /// installed in memory keeps the storage failed until a restart loads
    /// it.
    fn recover(&self, cause: &str) -> Result<()> {
        let mut g = self.durable.write();
        if self.poison.lock().is_none() {
            return Ok(()); // another thread recovered meanwhile
        }
        // redb refuses further work after an I/O error; close and reopen.
        self.forget_shared_rows();
        *g = None;
        // The file stays locked while statements still hold read
        // transactions of the old handle (they fail at their next uncached
        // page and let go); new readers wait for this lock.
        self.wait_for_old_readers();
        let reopened = Durable::open_file(&self.dir, self.options.cache_bytes).and_then(|d| {
            let stored = d.commit_ts()?;
            let memory = self.apply.applied_ts.load(Ordering::Acquire);
            if stored == memory {
                Ok(d)
            } else {
                Err(StorageError::Io(format!(
                    "after an I/O failure the file holds commit {stored} but memory {memory}; restart to recover"
                )))
            }
        });
        match reopened {
            Ok(d) => {
                *g = Some(d);
                *self.poison.lock() = None;
                tracing::warn!(cause, "storage recovered from an I/O failure");
                Ok(())
            }
            Err(e) => {
                tracing::debug!(cause, error = %e, "storage still failing");
                // Keep the file closed; the next write tries again.
                Err(StorageError::Io(format!("{cause} (retry: {e})")))
            }
        }
    }

    /// Wait (at most [`REOPEN_WAIT`]) until no registered reader of the
    /// closed file is left, so that reopening it finds it unlocked.
    fn wait_for_old_readers(&self) {
        let deadline = std::time::Instant::now() + REOPEN_WAIT;
        while self.apply.open_readers() > 0 && std::time::Instant::now() < deadline {
            std::thread::sleep(REOPEN_POLL);
        }
    }

    /// Run a durable write that needs about `pages` bytes of new pages:
    /// refused (with nothing marked failed) when the disk lacks room for
    /// them and its reserve ([`super::space`]), so that redb never meets a
    /// full disk — after a failed write it refuses every read until the
    /// file is reopened, which waits for every statement reading it. An
    /// I/O failure marks the storage failed until [`Inner::check_poison`]
    /// recovers it.
    pub fn durably_sized<T>(&self, pages: u64, f: impl FnOnce(&Durable) -> Result<T>) -> Result<T> {
        super::space::check_room(&self.dir, pages).map_err(StorageError::Io)?;
        self.durably_unchecked(f)
    }

    /// [`Inner::durably_sized`] for a small write (a lease, a watermark, a
    /// sequence, a batch of deletes). The applier lets it go first: redb
    /// has one write transaction at a time and does not queue them fairly,
    /// so behind a backlog of applier batches a statement's sequence or
    /// watermark write (which KILL cannot interrupt) waited for the whole
    /// backlog.
    pub fn durably<T>(&self, f: impl FnOnce(&Durable) -> Result<T>) -> Result<T> {
        self.small_writers.fetch_add(1, Ordering::AcqRel);
        struct Done<'a>(&'a std::sync::atomic::AtomicUsize);
        impl Drop for Done<'_> {
            fn drop(&mut self) {
                self.0.fetch_sub(1, Ordering::AcqRel);
            }
        }
        let _done = Done(&self.small_writers);
        self.durably_sized(SMALL_WRITE, f)
    }

    /// The applier's wait before its next write while small durable writes
    /// are waiting (at most [`APPLIER_YIELD`], so a stream of them cannot
    /// starve it).
    pub fn let_small_writers_go(&self) {
        let deadline = std::time::Instant::now() + APPLIER_YIELD;
        while self.small_writers.load(Ordering::Acquire) > 0 && std::time::Instant::now() < deadline
        {
            std::thread::sleep(SMALL_WRITERS_POLL);
        }
    }

    /// A read of the file (no room needed); a failure marks the storage
    /// failed like a write's.
    pub fn durable_read<T>(&self, f: impl FnOnce(&Durable) -> Result<T>) -> Result<T> {
        self.durably_unchecked(f)
    }

    fn durably_unchecked<T>(&self, f: impl FnOnce(&Durable) -> Result<T>) -> Result<T> {
        self.check_poison()?;
        let g = self.durable.read();
        let Some(d) = g.as_ref() else {
            return Err(StorageError::Io(
                "storage file is closed after an I/O failure".into(),
            ));
        };
        // redb asserts that a write transaction which began before another
        // one's I/O failure is not committed: contain that as the I/O
        // failure it is (the file is reopened before the next use).
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(d))).unwrap_or_else(
            |panic| {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Err(StorageError::Io(format!(
                    "the data file refused a write after an earlier I/O failure ({what})"
                )))
            },
        );
        drop(g);
        if let Err(StorageError::Io(msg)) = &r {
            tracing::error!(error = %msg, "storage I/O failed; writes fail until it recovers");
            self.forget_shared_rows();
            let mut p = self.poison.lock();
            if p.is_none() {
                *p = Some(msg.clone());
            }
        }
        r
    }

    /// A read transaction on the file: rows and change log as of now (see
    /// `mvcc` for how it combines with the in-memory versions). After a
    /// failed write the file is reopened first (redb refuses every use of
    /// a file after an I/O error); reads fail only while that fails.
    pub fn read_txn(&self) -> Result<redb::ReadTransaction> {
        // redb refuses reads too after a failed write: reopen first.
        if self.poison.lock().is_some() {
            self.check_poison()?;
        }
        let g = self.durable.read();
        let Some(d) = g.as_ref() else {
            return Err(StorageError::Io(
                "storage file is closed after an I/O failure".into(),
            ));
        };
        d.db.begin_read().map_err(super::durable::io)
    }

    /// A registered redb reader's `rows` table (see `apply`: chains it may
    /// need stay in memory while a handle lives). Readers are shared: the
    /// last one opened is handed out again while the applied ts has not
    /// moved, so a statement pays an `Arc` clone instead of a redb read
    /// transaction and a table lookup (~4k instructions, 5 % of a
    /// single-row INSERT). Any registered reader serves any read, a
    /// snapshot's or the latest committed row's, however old (`mvcc`'s
    /// module doc): a row it lacks is one committed after its applied ts,
    /// whose chain GC keeps in memory while it is registered. The applier
    /// drops the shared one after each write ([`Inner::forget_shared_rows`]),
    /// so an idle server pins no old pages and holds back no trim.
    pub fn rows_reader(&self) -> Result<Arc<SharedRows>> {
        let applied = self.apply.applied_ts.load(Ordering::Acquire);
        if let Some(r) = self.shared_rows.lock().as_ref() {
            if r.applied == applied {
                return Ok(r.clone());
            }
        }
        let guard = self.apply.register_reader();
        let rows = super::mvcc::open_rows(&self.read_txn()?)?;
        let r = Arc::new(SharedRows {
            rows,
            applied: guard.at(),
            _guard: guard,
        });
        // Shared only while still current, checked under the lock the
        // applier's `forget_shared_rows` takes after it moves the applied
        // ts: a reader registered before an apply that finished meanwhile
        // would otherwise stay shared, and registered, until the next one.
        let mut g = self.shared_rows.lock();
        let old = if self.apply.applied_ts.load(Ordering::Acquire) == r.applied {
            g.replace(r.clone())
        } else {
            g.take()
        };
        drop(g);
        drop(old);
        Ok(r)
    }

    /// Stop handing out the shared reader (the applier wrote, or the file
    /// failed); handles already out keep it until dropped.
    pub fn forget_shared_rows(&self) {
        let old = self.shared_rows.lock().take();
        drop(old);
    }

    /// Register a snapshot at the current `latest_ts`.
    pub fn register_snapshot(&self) -> Ts {
        let mut active = self.active.lock();
        let ts = self.latest_ts.load(Ordering::Acquire);
        *active.entry(ts).or_insert(0) += 1;
        ts
    }

    /// The tables of `groups` whose change-log entries the applier leaves
    /// out (see [`changelog::Gate`]), decided now.
    pub fn skip_changes<'a>(
        &self,
        groups: impl IntoIterator<Item = (Ts, &'a [(TableId, crate::api::Change)])>,
    ) -> HashSet<TableId> {
        let wms = self.watermarks.lock();
        self.gate.lock().skip(groups, |t| consumed(&wms, t))
    }

    /// Forget one snapshot at `ts`.
    pub fn unregister_snapshot(&self, ts: Ts) {
        let mut active = self.active.lock();
        if let Some(n) = active.get_mut(&ts) {
            *n -= 1;
            if *n == 0 {
                active.remove(&ts);
            }
        }
    }
}

/// Whether any consumer has a watermark on `table`.
fn consumed(wms: &HashMap<String, HashMap<TableId, Ts>>, table: TableId) -> bool {
    wms.values().any(|m| m.contains_key(&table))
}

/// The embedded storage engine (in-memory MVCC over a redb file).
pub struct EmbeddedStorage {
    inner: Arc<Inner>,
    /// The applier thread (see `apply`).
    applier: Option<std::thread::JoinHandle<()>>,
    /// The thread that syncs the commit log under load (see `flush`).
    syncer: Option<std::thread::JoinHandle<()>>,
    /// The periodic-durability flush thread (periodic mode only).
    flusher: Option<Flusher>,
}

impl Drop for EmbeddedStorage {
    fn drop(&mut self) {
        // Groups still being synced complete first (and go to the applier).
        self.inner.flush.stop();
        if let Some(h) = self.syncer.take() {
            if h.join().is_err() {
                tracing::error!("the storage sync thread panicked");
            }
        }
        self.inner.apply.stop();
        if let Some(h) = self.applier.take() {
            if h.join().is_err() {
                tracing::error!("the storage applier panicked");
            }
        }
        // Everything is in the file now (unless applying failed): the next
        // open need not read the log.
        if self.inner.apply.applied_ts.load(Ordering::Acquire)
            == self.inner.latest_ts.load(Ordering::Acquire)
        {
            if let Err(e) = self.inner.log.lock().clear() {
                tracing::warn!(error = %e, "commit log not cleared at close");
            }
        }
        if let Some(f) = self.flusher.take() {
            f.stop();
        }
        // No shared read transaction outlives the file's last writes (redb
        // writes its allocator state when the database closes).
        self.inner.forget_shared_rows();
        let counts = self.inner.versions.row_counts();
        if let Err(e) = self.inner.durably(|d| d.save_row_counts(&counts)) {
            tracing::warn!(error = %e, "row counts not saved at close");
        }
    }
}

/// The thread that makes periodic-mode commits durable: every period, if
/// anything was committed since its last flush, one fsynced write. Owned
/// by [`EmbeddedStorage`], stopped and joined (after a last flush) when it
/// is dropped.
struct Flusher {
    stop: Arc<(Mutex<bool>, parking_lot::Condvar)>,
    handle: std::thread::JoinHandle<()>,
}

impl Flusher {
    fn start(inner: Arc<Inner>, period: Duration) -> Result<Flusher> {
        let stop = Arc::new((Mutex::new(false), parking_lot::Condvar::new()));
        let stop2 = stop.clone();
        let handle = std::thread::Builder::new()
            .name("storage flush".into())
            .spawn(move || loop {
                let stopping = {
                    let (flag, cv) = &*stop2;
                    let mut g = flag.lock();
                    if !*g {
                        cv.wait_for(&mut g, period);
                    }
                    *g
                };
                flush_once(&inner);
                if stopping {
                    break;
                }
            })
            .map_err(|e| StorageError::Io(format!("cannot start the flush thread: {e}")))?;
        Ok(Flusher { stop, handle })
    }

    fn stop(self) {
        let (flag, cv) = &*self.stop;
        *flag.lock() = true;
        cv.notify_all();
        if self.handle.join().is_err() {
            tracing::error!("the storage flush thread panicked");
        }
    }
}

/// Start a storage thread running `run` (joined by [`EmbeddedStorage`]'s
/// drop).
fn spawn_owned(
    name: &str,
    inner: &Arc<Inner>,
    run: fn(&Inner),
) -> Result<std::thread::JoinHandle<()>> {
    let inner = inner.clone();
    std::thread::Builder::new()
        .name(name.into())
        .spawn(move || run(&inner))
        .map_err(|e| StorageError::Io(format!("cannot start the {name} thread: {e}")))
}

/// Make every commit written so far durable, if any is not yet.
fn flush_once(inner: &Inner) {
    // Every commit up to `target` is in the file: `latest_ts` is published
    // after its group's write.
    let target = inner.latest_ts.load(Ordering::Acquire);
    if target <= inner.durable_ts.load(Ordering::Acquire) {
        return;
    }
    // Without the log writer's lock: commits go on being written meanwhile.
    match inner.log_sync.sync() {
        Ok(()) => {
            inner.durable_ts.fetch_max(target, Ordering::AcqRel);
        }
        Err(e) => tracing::error!(error = %e, "periodic flush failed"),
    }
}

impl std::fmt::Debug for EmbeddedStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedStorage")
            .field("latest_ts", &self.inner.latest_ts.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl EmbeddedStorage {
    /// Open (or create) the storage in directory `dir`, every commit
    /// durable when acknowledged.
    pub fn open(dir: &Path) -> Result<Arc<EmbeddedStorage>> {
        Self::open_with(dir, EmbeddedOptions::default())
    }

    /// Open (or create) the storage in directory `dir` with `options`. Reads
    /// no rows: only per-table bookkeeping and consumer watermarks.
    pub fn open_with(dir: &Path, options: EmbeddedOptions) -> Result<Arc<EmbeddedStorage>> {
        Self::open_inner(dir, options).map_err(|e| super::space::explain_open_failure(dir, e))
    }

    fn open_inner(dir: &Path, options: EmbeddedOptions) -> Result<Arc<EmbeddedStorage>> {
        let durability = options.durability;
        let durable = Durable::open_file(dir, options.cache_bytes)?;
        // Groups durable in the log but not in the file: apply them first.
        let stored = durable.commit_ts()?;
        let log_bytes = options.log_bytes.unwrap_or_else(|| {
            (options.cache_bytes as u64 / 16).clamp(4 << 20, super::log::LOG_BYTES)
        });
        let (mut log, pending) = super::log::CommitLog::open(dir, log_bytes, stored)?;
        // Read before the replay, which leaves them as they are.
        let stored_watermarks = durable.watermarks()?;
        let consumed_tables: HashSet<TableId> = stored_watermarks.iter().map(|w| w.1).collect();
        let mut gate = changelog::Gate::new(durable.on_demand()?);
        if !pending.is_empty() {
            tracing::info!(
                groups = pending.len(),
                from = pending[0].0,
                "replaying the commit log"
            );
            let bytes: usize = pending
                .iter()
                .map(|(_, ch)| super::apply::group_bytes(ch))
                .sum();
            super::space::check_room(dir, super::space::pages_for(bytes))
                .map_err(|why| StorageError::Io(format!("replaying the commit log: {why}")))?;
            // Entries left out as the applier would leave them out.
            let skip = gate.skip(pending.iter().map(|(ts, ch)| (*ts, ch.as_slice())), |t| {
                consumed_tables.contains(&t)
            });
            durable.commit_group(
                pending.iter().map(|(ts, ch)| (*ts, ch.as_slice())),
                &skip,
                Durability::Immediate,
            )?;
        }
        log.rewind();
        let loaded = durable.load()?;
        gate.since_open(&consumed_tables, &loaded.table_ts);
        let versions = VersionStore::default();
        let rows: u64 = loaded.row_counts.values().sum();
        for (table, n) in &loaded.row_counts {
            versions.set_rows(*table, *n);
        }
        // No older version survives a restart: snapshots older than a
        // table's last commit cannot be served.
        for (table, ts) in &loaded.table_ts {
            versions.set_gc_ts(*table, *ts);
        }
        for table in &loaded.purging {
            versions.purge(*table);
        }
        let mut watermarks: HashMap<String, HashMap<TableId, Ts>> = HashMap::new();
        for (consumer, table, ts) in stored_watermarks {
            watermarks.entry(consumer).or_default().insert(table, ts);
        }
        tracing::info!(
            dir = %dir.display(),
            commit_ts = loaded.commit_ts,
            rows,
            cache_bytes = options.cache_bytes,
            "embedded storage opened"
        );
        let inner = Inner {
            durable: RwLock::new(Some(durable)),
            dir: dir.to_path_buf(),
            options,
            versions,
            locks: LockManager::default(),
            latest_ts: AtomicU64::new(loaded.commit_ts),
            commit_mu: Mutex::new(loaded.commit_ts),
            queue: Default::default(),
            durable_ts: AtomicU64::new(loaded.commit_ts),
            groups_written: AtomicU64::new(0),
            log_syncs: AtomicU64::new(0),
            trim_at: std::sync::atomic::AtomicUsize::new(super::apply::TRIM_MIN),
            clock: Default::default(),
            active: Mutex::new(BTreeMap::new()),
            next_txn: AtomicU64::new(1),
            watermarks: Mutex::new(watermarks),
            gate: Mutex::new(gate),
            table_ts: Mutex::new(loaded.table_ts),
            poison: Mutex::new(None),
            shared_rows: Mutex::new(None),
            small_writers: Default::default(),
            log_sync: log.syncer(),
            flush: Default::default(),
            log: Mutex::new(log),
            apply: super::apply::ApplyQueue::new(loaded.commit_ts),
        };
        let inner = Arc::new(inner);
        let applier = spawn_owned("storage apply", &inner, super::apply::run)?;
        let syncer = spawn_owned("storage sync", &inner, super::flush::run)?;
        let flusher = match durability {
            Durability::Immediate => None,
            Durability::Periodic(period) => Some(Flusher::start(inner.clone(), period)?),
        };
        tracing::info!(%durability, "commit durability");
        Ok(Arc::new(EmbeddedStorage {
            inner,
            applier: Some(applier),
            syncer: Some(syncer),
            flusher,
        }))
    }

    /// Commit groups written since open: each is one record of the commit
    /// log carrying one or more transactions.
    pub fn commit_groups(&self) -> u64 {
        self.inner.groups_written.load(Ordering::Relaxed)
    }

    /// Syncs (`fdatasync`) of the commit log on the commit path since open
    /// (immediate mode): one covers every group written before it, so
    /// there are at most as many as groups.
    pub fn log_syncs(&self) -> u64 {
        self.inner.log_syncs.load(Ordering::Relaxed)
    }

    /// Older row versions held in memory for snapshots and consumers (the
    /// rows themselves are on disk): what the version overlay costs.
    pub fn overlay_versions(&self) -> usize {
        self.inner.versions.overlay_versions()
    }

    /// Make the commit log's next sync fail as a disk error would: the
    /// groups it covers fail and the log refuses writes until a restart.
    /// For tests of that path.
    #[doc(hidden)]
    pub fn fail_next_log_sync(&self) {
        self.inner.log_sync.fail_next();
    }

    /// Transactions queued for a commit group right now.
    pub fn queued_commits(&self) -> usize {
        self.inner.queue.len()
    }

    /// Hold every commit back until the returned guard drops: commits
    /// queue meanwhile, and the first to run after it leads them all as one
    /// group. For tests and diagnostics that must know what a group holds.
    pub fn hold_commits(&self) -> impl Drop + '_ {
        super::commit::CommitGuard::lock(&self.inner)
    }

    /// Newest commit known to be on stable storage: `latest_ts()` in
    /// immediate mode; in periodic mode the last commit the flush thread
    /// made durable.
    pub fn durable_ts(&self) -> Ts {
        match self.inner.options.durability {
            Durability::Immediate => self.inner.latest_ts.load(Ordering::Acquire),
            Durability::Periodic(_) => self.inner.durable_ts.load(Ordering::Acquire),
        }
    }

    /// Hold the applier back until the returned guard drops: commits are
    /// then durable in the commit log only (for crash tests of the replay).
    pub fn pause_applier(&self) -> impl Drop + '_ {
        struct Resume<'a>(&'a Inner);
        impl Drop for Resume<'_> {
            fn drop(&mut self) {
                self.0.apply.pause(false);
            }
        }
        self.inner.apply.pause(true);
        Resume(&self.inner)
    }

    /// The newest commit ts the data file holds (every commit at or below
    /// it is there), without asking the applier to hurry.
    pub fn applied_ts(&self) -> Ts {
        self.inner.apply.applied_ts.load(Ordering::Acquire)
    }

    /// Wait until every commit so far is in the data file (not only in the
    /// commit log): for tests and tools that look at the file itself.
    pub fn wait_applied(&self) -> Result<()> {
        self.inner
            .apply
            .wait_applied(self.inner.latest_ts.load(Ordering::Acquire))
    }

    /// Begin a transaction returning the concrete type.
    pub fn begin_embedded(&self, opts: TxnOptions) -> Result<EmbeddedTxn> {
        // Reads are served from memory even while the file is failing;
        // a write transaction's commit checks (and recovers) the file.
        Ok(EmbeddedTxn::new(self.inner.clone(), opts))
    }

    /// Transactions blocked in a row-lock wait right now, in id order
    /// (diagnostics: lock-wait views, and tests that must know a request is
    /// waiting before they act).
    pub fn lock_waiters(&self) -> Vec<TxnId> {
        self.inner.locks.waiters()
    }
}

impl EmbeddedStorage {
    /// [`Storage::changes`] while the applier cannot write (a full disk):
    /// the file's change log up to the applied ts, then the queued commits
    /// above it, as the applier will store them. `None` where the queue
    /// cannot give the whole answer (see [`super::apply::ApplyQueue::failing_tail`])
    /// or the table's changes may not be stored at all (an on-demand table
    /// nobody consumes: the applier decides that when it writes).
    fn changes_while_failing(
        &self,
        table: TableId,
        from: Ts,
        to: Ts,
        visible: Ts,
        resume: Option<(Ts, u32)>,
        limit: usize,
    ) -> Result<Option<ChangeBatch>> {
        let upto = to.min(visible);
        let stored = {
            let wms = self.inner.watermarks.lock();
            !self.inner.gate.lock().is_on_demand(table) || consumed(&wms, table)
        };
        if !stored {
            return Ok(None);
        }
        let Some((applied, tail)) = self.inner.apply.failing_tail(table, upto) else {
            return Ok(None);
        };
        let skipped = self.inner.gate.lock().skipped(table);
        let mut batch = self.inner.durable_read(|d| {
            changelog::read(
                d,
                table,
                from,
                to.min(applied),
                visible,
                skipped,
                resume,
                limit,
            )
        })?;
        if batch.resume.is_some() {
            return Ok(Some(batch)); // the limit was reached in the file
        }
        let after = changelog::read_after(from, resume);
        for c in tail {
            if (c.commit_ts, c.seq) <= after || c.commit_ts <= from {
                continue;
            }
            if batch.changes.len() == limit {
                batch.resume = batch.changes.last().map(|c| (c.commit_ts, c.seq));
                break;
            }
            batch.changes.push(c);
        }
        Ok(Some(batch))
    }
}

impl Storage for EmbeddedStorage {
    fn begin(&self, opts: TxnOptions) -> Result<Box<dyn Transaction>> {
        Ok(Box::new(self.begin_embedded(opts)?))
    }

    fn latest_ts(&self) -> Ts {
        self.inner.latest_ts.load(Ordering::Acquire)
    }

    fn commit_time_ms(&self, ts: Ts) -> Option<u64> {
        self.inner.clock.time_of(ts)
    }

    fn changes(
        &self,
        table: TableId,
        from: Ts,
        to: Ts,
        resume: Option<(Ts, u32)>,
        limit: usize,
    ) -> Result<ChangeBatch> {
        if self.inner.versions.is_purging(table) {
            return Ok(ChangeBatch::default());
        }
        let visible = self.latest_ts();
        // Changes are visible when their rows are: wait for the applier to
        // have written them to the file's change log.
        if let Err(e) = self.inner.apply.wait_applied(to.min(visible)) {
            // It cannot (a full disk): the rest is still queued in memory.
            return self
                .changes_while_failing(table, from, to, visible, resume, limit)?
                .ok_or(e);
        }
        // Every commit up to `visible` was applied: its skips are counted.
        let skipped = self.inner.gate.lock().skipped(table);
        self.inner
            .durable_read(|d| changelog::read(d, table, from, to, visible, skipped, resume, limit))
    }

    fn snapshot_scan(
        &self,
        table: TableId,
        ts: Ts,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out = Vec::new();
        if limit == 0 {
            return Ok(out);
        }
        let start = match after {
            Some(a) => std::ops::Bound::Excluded(a),
            None => std::ops::Bound::Unbounded,
        };
        let rows = self.inner.rows_reader()?;
        self.inner.versions.visit_at(
            &rows,
            table,
            ts,
            start,
            std::ops::Bound::Unbounded,
            |k, v| {
                out.push((k.to_vec(), v.to_vec()));
                out.len() < limit
            },
        )?;
        Ok(out)
    }

    fn set_consumer_watermark(&self, consumer: &str, table: TableId, low_watermark: Ts) {
        let mut wms = self.inner.watermarks.lock();
        // The first consumer of an on-demand table: the entries the applier
        // skipped so far stay unreadable, also after a restart.
        let horizon = {
            let gate = self.inner.gate.lock();
            if gate.is_on_demand(table) && !consumed(&wms, table) {
                gate.skipped(table)
            } else {
                0
            }
        };
        let prev = wms.get(consumer).and_then(|m| m.get(&table)).copied();
        if prev == Some(low_watermark) && horizon == 0 {
            return;
        }
        // Moving an existing watermark forward needs no fsync: a crash
        // before the next durable write of the file only brings back a lower
        // one, which keeps more. A new or lowered watermark, or a raised
        // horizon, is durable on return (the ISCP log reader advances its
        // watermark every tick: an fsynced redb commit each time slowed the
        // commit log's own fsyncs).
        let durable = horizon != 0 || prev.is_none_or(|p| low_watermark < p);
        if let Err(e) = self
            .inner
            .durably(|d| d.set_watermark(consumer, table, low_watermark, horizon, durable))
        {
            tracing::error!(consumer, table, error = %e, "persisting consumer watermark failed");
        }
        wms.entry(consumer.to_string())
            .or_default()
            .insert(table, low_watermark);
    }

    fn remove_consumer(&self, consumer: &str) {
        let mut wms = self.inner.watermarks.lock();
        if let Err(e) = self.inner.durably(|d| d.remove_consumer(consumer)) {
            tracing::error!(consumer, error = %e, "removing consumer failed");
        }
        wms.remove(consumer);
    }

    fn cache_latest(&self, table: TableId) {
        self.inner.versions.cache_latest(table);
    }

    fn purge_table(&self, table: TableId) -> Result<()> {
        // Serialise with commits so no commit of this table interleaves.
        let _commit = super::commit::CommitGuard::lock(&self.inner);
        // No commit in flight: every group written is synced and published.
        super::flush::wait_empty(&self.inner);
        // Nothing of the table may reach the file after the purge.
        self.inner
            .apply
            .wait_applied(self.inner.latest_ts.load(Ordering::Acquire))?;
        // Marked durably, hidden from reads at once; the rows and change
        // log are deleted by GC passes in bounded batches (a table of 300k
        // rows took 24 s to delete in one transaction, holding the commit
        // mutex the whole time).
        self.inner.durably(|d| d.mark_purge(table))?;
        self.inner.versions.purge(table);
        self.inner.gate.lock().forget(table);
        self.inner.table_ts.lock().remove(&table);
        tracing::info!(table, "table purged; its rows go in the background");
        Ok(())
    }

    fn try_lease(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool> {
        self.inner
            .durably(|d| lease::try_lease(d, name, holder, ttl))
    }

    fn release_lease(&self, name: &str, holder: &str) {
        if let Err(e) = self
            .inner
            .durably(|d| lease::release_lease(d, name, holder))
        {
            tracing::error!(name, holder, error = %e, "releasing lease failed");
        }
    }

    fn gc(&self) -> Result<GcStats> {
        gc::run(&self.inner)
    }

    fn next_id(&self, sequence: &str) -> Result<u64> {
        self.inner.durably(|d| d.next_id(sequence))
    }

    fn status(&self) -> Vec<(&'static str, u64)> {
        let i = &self.inner;
        vec![
            (
                "Tributary_commit_groups",
                i.groups_written.load(Ordering::Relaxed),
            ),
            ("Tributary_log_syncs", self.log_syncs()),
            (
                "Tributary_applied_ts",
                i.apply.applied_ts.load(Ordering::Acquire),
            ),
            ("Tributary_latest_ts", i.latest_ts.load(Ordering::Acquire)),
            // Bytes of the data directory's files (the redb file and the
            // commit log).
            (
                "Tributary_data_bytes",
                std::fs::read_dir(&i.dir)
                    .map(|d| {
                        d.filter_map(|e| e.ok()?.metadata().ok())
                            .filter(|m| m.is_file())
                            .map(|m| m.len())
                            .sum()
                    })
                    .unwrap_or(0),
            ),
            // Pages the page cache evicted since open (it was full).
            (
                "Tributary_cache_evictions",
                i.durable
                    .read()
                    .as_ref()
                    .map_or(0, |d| d.db.cache_stats().evictions()),
            ),
            (
                "Tributary_overlay_versions",
                i.versions.overlay_versions() as u64,
            ),
        ]
    }

    fn set_change_log_on_demand(&self, table: TableId, on_demand: bool) -> Result<()> {
        // Under the applier's decision locks (see `skip_changes`): back to
        // "always", the entries skipped so far stay unreadable, durably.
        let _wms = self.inner.watermarks.lock();
        let mut gate = self.inner.gate.lock();
        if gate.is_on_demand(table) == on_demand {
            return Ok(());
        }
        let horizon = gate.skipped(table);
        self.inner
            .durably(|d| d.set_on_demand(table, on_demand, horizon))?;
        gate.set_on_demand(table, on_demand);
        Ok(())
    }
}
