//! ISCP — intra-system change propagation: background consumers that keep
//! asynchronous indexes (HNSW, full-text, B-tree) level with their tables,
//! and the DROP protocol that makes every DDL safe at any instant of that
//! work.
//!
//! Modules: [`log`] (the durable job log and its guarded writes),
//! [`runtime`] (running consumers, fences, task registry), [`runner`] (the
//! leased loop, retriever fan-out), [`consumer`] (work units and their
//! single-transaction commits), [`live`] (in-memory indexes and their
//! persistence), [`mod@drop`] (cancel queue, finalization, recovery),
//! `sql::search` (index-assisted, fresh-by-default queries). See
//! `docs/ISCP.md` for the state machine and the protocol.
//!
//! [`Iscp`] is one CN's handle: it owns the runner thread (a tokio runtime
//! of its own, joined on shutdown) and the in-memory index cache — also
//! the copies of synchronous (non-ASYNC) vector/full-text indexes, which
//! writers and searches catch up with the index's entry log
//! ([`Iscp::sync_catch_up`]) without any runner.

pub mod background;
pub mod consumer;
pub mod drop;
pub mod live;
pub mod log;
pub mod runner;
pub mod runtime;
pub mod status;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, RwLock};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tributary_storage::{Storage, TxnOptions};

use crate::config::Config;
use crate::error::{SqlError, SqlResult};
pub use log::{job_name, JobKey, JobRow, JobState};
use runtime::Runtime;

/// Wall-clock time in Unix ms (job backoff, checkpoint and lag reporting;
/// 0 if the clock is before 1970).
pub fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// A job's in-memory index and the durable state it reflects.
pub struct LiveEntry {
    /// The job this memory belongs to.
    pub key: JobKey,
    pub index: live::LiveIndex,
    /// `job_status.iterations` of the durable state this memory equals.
    pub iteration: u64,
    /// Every change of the source up to this ts is in the (published)
    /// index: the job's durable watermark (asynchronous), or how far this
    /// CN has caught up with the entry log (synchronous).
    pub watermark: u64,
    /// Watermark of a unit staged in memory but not yet committed.
    pub pending_ts: Option<u64>,
    /// Watermark of a unit being staged right now, slice by slice with the
    /// lock released between slices: its changes are partly in the index
    /// (see [`LiveEntry::view_range`]).
    pub staging_to: Option<u64>,
    /// Ts of the durable base this memory was built on (or wrote last).
    pub base_ts: u64,
    /// Changes applied since that base (drives the next checkpoint).
    pub since_base: u64,
    /// When that base was loaded or written.
    pub base_at: Instant,
    /// Unix ms when this CN last wrote a base of it (`None`: not since it
    /// loaded the index). For SHOW ISCP STATUS.
    pub checkpoint_ms: Option<u64>,
}

impl LiveEntry {
    /// The ts whose changes the searchable view reflects: HNSW changes are
    /// searchable as soon as they are staged, full-text ones only once
    /// published (after the unit's commit).
    pub fn view_ts(&self) -> u64 {
        match (&self.index.data, self.pending_ts) {
            (live::IndexData::Hnsw(_), Some(p)) => p.max(self.watermark),
            _ => self.watermark,
        }
    }

    /// The change ts range the searchable view may partly reflect: every
    /// change up to `lo` is in it, changes in `(lo, hi]` may or may not be
    /// (a unit being staged slice by slice). A search evaluates exactly
    /// every key changed between this range and its snapshot.
    pub fn view_range(&self) -> (u64, u64) {
        let lo = self.view_ts();
        let hi = match &self.index.data {
            live::IndexData::Hnsw(_) => self.staging_to.unwrap_or(lo).max(lo),
            // Staged full-text documents are invisible until published.
            live::IndexData::FullText(_) => lo,
        };
        (lo, hi)
    }

    /// Whether a new base is due: after `index_checkpoint_changes` changes
    /// (or half the index, whichever is more, so checkpoint cost stays
    /// proportional to the changes it saves replaying), or after
    /// `index_checkpoint_age` when anything changed at all.
    pub fn checkpoint_due(&self, cfg: &Config) -> bool {
        let len = self.index.len() as u64;
        self.since_base > 0
            && (self.since_base >= cfg.index_checkpoint_changes.max(len / 2)
                || self.base_at.elapsed() >= cfg.index_checkpoint_age)
    }

    /// Record that a base reflecting everything up to `base_ts` is durable;
    /// `applied` changes of this memory came after it.
    pub fn based_at(&mut self, base_ts: u64, applied: u64) {
        self.base_ts = base_ts;
        self.since_base = applied;
        self.base_at = Instant::now();
        self.checkpoint_ms = Some(now_ms());
    }
}

/// Shared handle to a cached index.
pub type LiveHandle = Arc<RwLock<LiveEntry>>;

/// Row-lock wait of a consumer's unit transaction: it locks only its job
/// row, which a DROP (one short transaction) may hold; a longer wait means
/// something is stuck, and the unit is retried with backoff.
pub(crate) const UNIT_LOCK_WAIT: Duration = Duration::from_secs(10);
/// Row-lock wait of the short bookkeeping writes (recording a unit's error,
/// the cancel queue's Canceled): one job row each, retried on failure, so
/// they give up sooner than a unit.
pub(crate) const BOOKKEEPING_LOCK_WAIT: Duration = Duration::from_secs(5);
/// Lock wait of the read-only transaction that pins a build's snapshot: it
/// takes no row lock at all, so the bound only has to be short.
pub(crate) const PIN_LOCK_WAIT: Duration = Duration::from_secs(1);
/// How long stopping the runner waits for its runtime's tasks, each of
/// which watches the runner's cancellation token (a bound, not a pause).
const RUNTIME_SHUTDOWN: Duration = Duration::from_secs(5);
/// How often a statement waiting for an index job (CHECK INDEX, a search
/// that must see its own writes) re-reads the job row. The runner is woken
/// first, so the wait is for its work; the poll only bounds the reaction.
pub(crate) const JOB_POLL: Duration = Duration::from_millis(10);
/// Longest single wait for the progress signal while `wait_drained`
/// re-checks its pending jobs: a job whose row changes without a signal
/// (another node's runner) is seen within this.
const PROGRESS_RECHECK: Duration = Duration::from_millis(20);

/// One CN's ISCP handle.
pub struct Iscp {
    pub storage: Arc<dyn Storage>,
    pub config: Config,
    pub runtime: Arc<Runtime>,
    pub wake: Notify,
    pub is_runner: AtomicBool,
    live: Mutex<HashMap<u64, LiveHandle>>,
    /// Per job: held while a search loads its index, so concurrent searches
    /// wait for (or skip) one load instead of each loading the index.
    loading: Mutex<HashMap<u64, Arc<Mutex<()>>>>,
    /// Iterations this runner has committed per job: a job row older than
    /// this (a stale view) is not scheduled again.
    committed: Mutex<HashMap<u64, u64>>,
    /// Last [`Iscp::evict_dropped`] sweep.
    last_sweep: Mutex<Instant>,
    /// Per job: failed units in a row and when the last one failed — the
    /// backoff that holds even when the failure could not be written to
    /// the job row (a full disk, the store unreachable).
    failures: Mutex<HashMap<u64, (u32, Instant)>>,
    progress: (Mutex<u64>, Condvar),
    thread: Mutex<Option<(CancellationToken, std::thread::JoinHandle<()>)>>,
}

impl Iscp {
    /// A handle (runner not started).
    pub fn new(storage: Arc<dyn Storage>, config: Config) -> Arc<Iscp> {
        Arc::new(Iscp {
            storage,
            config,
            runtime: Arc::new(Runtime::default()),
            wake: Notify::new(),
            is_runner: AtomicBool::new(false),
            live: Mutex::new(HashMap::new()),
            loading: Mutex::new(HashMap::new()),
            committed: Mutex::new(HashMap::new()),
            last_sweep: Mutex::new(Instant::now()),
            failures: Mutex::new(HashMap::new()),
            progress: (Mutex::new(0), Condvar::new()),
            thread: Mutex::new(None),
        })
    }

    /// Start the runner thread (if enabled in the config).
    pub fn start(self: &Arc<Self>) -> SqlResult<()> {
        if !self.config.iscp_enabled {
            return Ok(());
        }
        let mut g = self.thread.lock();
        if g.is_some() {
            return Ok(());
        }
        let token = CancellationToken::new();
        let me = self.clone();
        let t2 = token.clone();
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .max_blocking_threads(8)
            .thread_name("iscp")
            .enable_all()
            .build()
            .map_err(|e| SqlError::internal(format!("cannot start ISCP runtime: {e}")))?;
        let h = std::thread::Builder::new()
            .name(format!("iscp-runner-{}", self.config.node_name))
            .spawn(move || {
                rt.block_on(runner::Runner::new(me, t2).run());
                rt.shutdown_timeout(RUNTIME_SHUTDOWN);
            })
            .map_err(|e| SqlError::internal(format!("cannot spawn ISCP thread: {e}")))?;
        *g = Some((token, h));
        Ok(())
    }

    /// Stop the runner and join it (idempotent).
    pub fn shutdown(&self) {
        let t = self.thread.lock().take();
        if let Some((token, h)) = t {
            token.cancel();
            if h.join().is_err() {
                tracing::error!("ISCP runner thread panicked");
            }
        }
        self.is_runner.store(false, Ordering::Release);
    }

    /// Wake the runner now (after CREATE/DROP on this CN).
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// Whether the runner loop is alive on this CN.
    pub fn runner_started(&self) -> bool {
        self.thread.lock().is_some()
    }

    /// All job rows (fresh read).
    pub fn read_jobs(&self) -> SqlResult<Vec<JobRow>> {
        let mut txn = self.storage.begin(TxnOptions::default())?;
        let r = log::read_all(txn.as_mut());
        txn.rollback();
        r
    }

    /// One job row (fresh read).
    pub fn read_job(&self, key: &JobKey) -> SqlResult<Option<JobRow>> {
        let mut txn = self.storage.begin(TxnOptions::default())?;
        let r = log::read_job(txn.as_mut(), key, false);
        txn.rollback();
        r
    }

    /// Cached index for a consumer, reloaded when it does not match the
    /// job's durable state.
    pub fn live_for_consumer(&self, j: &JobRow) -> SqlResult<LiveHandle> {
        self.cached_or_load(&j.key, &j.spec, |g| g.iteration == j.status.iterations)
    }

    /// The cached index of `key` if `usable`, else a fresh load (cached).
    fn cached_or_load(
        &self,
        key: &JobKey,
        spec: &log::JobSpec,
        usable: impl Fn(&LiveEntry) -> bool,
    ) -> SqlResult<LiveHandle> {
        if let Some(h) = self.cached(key.job_id) {
            if usable(&h.read()) {
                return Ok(h);
            }
        }
        let h = self.load_live(key, spec)?;
        self.cache(key.job_id, &h);
        Ok(h)
    }

    /// Load a job's index from its hidden table: base + replay up to the
    /// job's durable watermark (asynchronous) or up to the load snapshot
    /// (synchronous: every entry committed so far).
    fn load_live(&self, key: &JobKey, spec: &log::JobSpec) -> SqlResult<LiveHandle> {
        let mut txn = self.storage.begin(TxnOptions {
            read_only: true,
            ..Default::default()
        })?;
        let loaded = (|| {
            let row = log::read_job(txn.as_mut(), key, false)?;
            let (iteration, wm) = row
                .map(|r| (r.status.iterations, r.watermark))
                .unwrap_or((0, 0));
            let upto = if spec.is_sync_live() {
                txn.start_ts()
            } else {
                wm
            };
            let source = live::Source::of(key.table_id, spec);
            let l = live::load(self.storage.as_ref(), txn.as_mut(), spec, &source, upto)?;
            Ok::<_, SqlError>((l, iteration, upto))
        })();
        txn.rollback();
        let (l, iteration, watermark) = loaded?;
        Ok(Arc::new(RwLock::new(LiveEntry {
            key: key.clone(),
            index: l.index,
            iteration,
            watermark,
            pending_ts: None,
            staging_to: None,
            base_ts: l.base_ts,
            since_base: l.since_base,
            base_at: Instant::now(),
            checkpoint_ms: None,
        })))
    }

    /// A synchronous index's cached memory on this CN, caught up with every
    /// entry committed up to `upto` (loaded on first use; reloaded when the
    /// entry log it needs was already collected). Full-text changes are
    /// only staged unless `publish` (searches publish; writers leave the
    /// tantivy commit to the next search, so a single-row write does not
    /// pay one).
    pub fn sync_catch_up(
        &self,
        key: &JobKey,
        spec: &log::JobSpec,
        upto: u64,
        publish: bool,
    ) -> SqlResult<LiveHandle> {
        let h = self.cached_or_load(key, spec, |_| true)?;
        let current = |g: &LiveEntry| g.watermark >= upto && !(publish && g.index.has_pending());
        if current(&h.read()) {
            return Ok(h);
        }
        let mut g = h.write();
        if current(&g) {
            drop(g);
            return Ok(h);
        }
        let from = g.watermark;
        let source = live::Source::of(key.table_id, spec);
        let applied = live::replay(self.storage.as_ref(), &source, &mut g.index, from, upto)
            .and_then(|n| {
                if publish {
                    g.index.publish()?;
                }
                Ok(n)
            });
        match applied {
            Ok(n) => {
                g.watermark = g.watermark.max(upto);
                g.since_base += n;
                drop(g);
                if let Err(e) = self.compact_if_due(&h) {
                    // The index stays valid with its tombstones.
                    tracing::warn!(job_id = key.job_id, error = %e, "compaction failed");
                }
                Ok(h)
            }
            Err(e) => {
                // Half-applied memory is not trusted: reload from storage.
                tracing::info!(job_id = key.job_id, error = %e, "reloading synchronous index");
                drop(g);
                self.invalidate(key.job_id);
                let h = self.load_live(key, spec)?;
                self.cache(key.job_id, &h);
                if h.read().watermark < upto {
                    return Err(SqlError::internal(format!(
                        "synchronous index {} cannot catch up to ts {upto}",
                        spec.index
                    )));
                }
                Ok(h)
            }
        }
    }

    /// Index for a search. A cached copy is always usable: the search
    /// evaluates exactly every key changed between the copy's view and its
    /// snapshot ([`LiveEntry::view_range`]), so an older copy costs only a
    /// longer exact tail. When the copy lags the durable job row by more
    /// than the one unit between a consumer's commit and its bookkeeping
    /// (another CN's runner moves the job), **one** search reloads it while
    /// the others go on with the copy; with nothing cached, one search loads
    /// and the others wait for that load. Never a load per search (issue 17:
    /// 64 clients each loading the index after every commit starved every
    /// search for seconds to minutes).
    ///
    /// On a CN that does not run ISCP there is no bookkeeping: a copy
    /// behind the job row follows the source's change log instead
    /// (`Iscp::follow_log`), so `fast_search` there answers at the job's
    /// watermark too, not one unit late.
    pub fn live_for_search(&self, row: &JobRow) -> SqlResult<LiveHandle> {
        let job_id = row.key.job_id;
        let behind = |h: &LiveHandle| h.read().iteration.saturating_add(1) < row.status.iterations;
        let hit =
            || metrics::counter!("tributary_cache_hits_total", "cache" => "index").increment(1);
        let miss =
            || metrics::counter!("tributary_cache_misses_total", "cache" => "index").increment(1);
        if let Some(h) = self.cached(job_id) {
            if !self.is_runner.load(Ordering::Acquire) {
                if let Some(h) = self.follow_log(&h, row) {
                    hit();
                    return Ok(h);
                }
            }
            if !behind(&h) {
                hit();
                return Ok(h);
            }
            let gate = self.load_gate(job_id);
            let Some(_loading) = gate.try_lock() else {
                hit();
                return Ok(h);
            };
            miss();
            let t = Instant::now();
            let fresh = self.load_live(&row.key, &row.spec)?;
            tracing::debug!(
                job_id,
                ms = t.elapsed().as_millis() as u64,
                "search reloaded a stale index"
            );
            return Ok(self.cache_if_newer(job_id, fresh));
        }
        let gate = self.load_gate(job_id);
        let _loading = gate.lock();
        if let Some(h) = self.cached(job_id) {
            hit();
            return Ok(h);
        }
        miss();
        let h = self.load_live(&row.key, &row.spec)?;
        self.cache(job_id, &h);
        Ok(h)
    }

    /// Catch a cached copy of an asynchronous index up with the durable job
    /// row by replaying the source's change log from the copy's watermark
    /// (the durable state is base + change log, so this is the same index a
    /// load would give). `None` when that does not apply (a synchronous
    /// index, a copy from before the initial build finished, one with a unit
    /// in flight, or a failed replay, after which the copy is dropped): the
    /// caller goes on as before.
    fn follow_log(&self, h: &LiveHandle, row: &JobRow) -> Option<LiveHandle> {
        let applies = |g: &LiveEntry| {
            !row.spec.is_sync_live()
                && row.status.stage == log::Stage::Incremental
                && g.watermark >= row.status.build_ts
                && g.pending_ts.is_none()
                && g.staging_to.is_none()
        };
        {
            let g = h.read();
            if g.iteration >= row.status.iterations {
                return Some(h.clone());
            }
            if !applies(&g) {
                return None;
            }
        }
        let mut g = h.write();
        if g.iteration >= row.status.iterations {
            return Some(h.clone());
        }
        if !applies(&g) {
            return None;
        }
        // Units that moved no watermark (a base, deferred vectors) changed
        // nothing a search sees: only the iteration moves then.
        let source = live::Source::of(row.key.table_id, &row.spec);
        let from = g.watermark;
        let applied = live::replay(
            self.storage.as_ref(),
            &source,
            &mut g.index,
            from,
            row.watermark,
        )
        .and_then(|n| g.index.publish().map(|()| n));
        match applied {
            Ok(n) => {
                g.watermark = g.watermark.max(row.watermark);
                g.iteration = row.status.iterations;
                g.since_base += n;
                Some(h.clone())
            }
            Err(e) => {
                tracing::info!(job_id = row.key.job_id, error = %e, "following the change log failed; reloading");
                drop(g);
                self.invalidate(row.key.job_id);
                None
            }
        }
    }

    fn load_gate(&self, job_id: u64) -> Arc<Mutex<()>> {
        let mut g = self.loading.lock();
        if g.len() > 1024 {
            g.retain(|_, m| Arc::strong_count(m) > 1);
        }
        g.entry(job_id).or_default().clone()
    }

    /// Cache `fresh` unless the cached copy is at least as new; returns the
    /// copy now cached.
    fn cache_if_newer(&self, job_id: u64, fresh: LiveHandle) -> LiveHandle {
        let mut live = self.live.lock();
        if let Some(h) = live.get(&job_id) {
            if h.read().iteration >= fresh.read().iteration {
                return h.clone();
            }
        }
        live.insert(job_id, fresh.clone());
        fresh
    }

    /// Rebuild a vector index without its tombstones when they outnumber
    /// its live vectors (decision 008), off the searches' path: the new
    /// graph is built under an upgradable read lock (searches go on; other
    /// mutators wait), then swapped in under a short write lock.
    pub fn compact_if_due(&self, h: &LiveHandle) -> SqlResult<()> {
        let g = h.upgradable_read();
        let live::IndexData::Hnsw(vx) = &g.index.data else {
            return Ok(());
        };
        if !vx.compaction_due() {
            return Ok(());
        }
        let t = Instant::now();
        let fresh = vx
            .compacted()
            .map_err(|e| SqlError::internal(format!("index error: {e}")))?;
        let mut w = parking_lot::RwLockUpgradableReadGuard::upgrade(g);
        w.index.data = live::IndexData::Hnsw(fresh);
        tracing::debug!(
            job_id = w.key.job_id,
            ms = t.elapsed().as_millis() as u64,
            "vector index compacted off the search path"
        );
        Ok(())
    }

    /// A consumer's commit succeeded: publish the staged changes, after
    /// which memory equals the durable state. A failed publish drops the
    /// cached index (the next use reloads it from the hidden table).
    ///
    /// `before` is the iteration the unit started from: a cached copy at
    /// another iteration (a search loaded a fresh one meanwhile) is not the
    /// memory the unit staged into and is left alone.
    pub fn live_committed(&self, job_id: u64, before: u64) {
        let Some(h) = self.cached(job_id) else {
            return;
        };
        let mut g = h.write();
        if g.iteration != before {
            return;
        }
        if let Err(e) = g.index.publish() {
            tracing::warn!(job_id, error = %e, "publishing a committed unit failed; reloading");
            drop(g);
            self.invalidate(job_id);
            return;
        }
        g.iteration += 1;
        if let Some(ts) = g.pending_ts.take() {
            g.watermark = g.watermark.max(ts);
        }
    }

    /// Record that this runner committed iteration `iterations` of a job.
    pub fn note_committed(&self, job_id: u64, iterations: u64) {
        let mut g = self.committed.lock();
        let e = g.entry(job_id).or_insert(0);
        *e = (*e).max(iterations);
    }

    /// Whether `row` is older than what this runner already committed.
    pub fn is_stale(&self, row: &JobRow) -> bool {
        self.committed
            .lock()
            .get(&row.key.job_id)
            .is_some_and(|&c| c > row.status.iterations)
    }

    /// The cached index of a job on this CN, if any.
    pub fn cached(&self, job_id: u64) -> Option<LiveHandle> {
        self.live.lock().get(&job_id).cloned()
    }

    /// Forget the cached index (after a failed or refused commit).
    pub fn invalidate(&self, job_id: u64) {
        self.live.lock().remove(&job_id);
    }

    /// Forget a dropped job's index and progress.
    pub fn drop_live(&self, job_id: u64) {
        self.live.lock().remove(&job_id);
        self.committed.lock().remove(&job_id);
    }

    /// A unit of `job_id` failed: back off before its next one.
    pub fn note_unit_failed(&self, job_id: u64) {
        let mut f = self.failures.lock();
        let e = f.entry(job_id).or_insert((0, Instant::now()));
        e.0 = e.0.saturating_add(1);
        e.1 = Instant::now();
    }

    /// A unit of `job_id` committed: no backoff any more.
    pub fn note_unit_committed(&self, job_id: u64) {
        self.failures.lock().remove(&job_id);
    }

    /// Whether `job_id` failed recently enough to wait: `iscp_retry_base`
    /// doubling per failure in a row, at most `iscp_retry_cap`.
    pub fn in_failure_backoff(&self, job_id: u64) -> bool {
        let f = self.failures.lock();
        let Some((n, at)) = f.get(&job_id) else {
            return false;
        };
        at.elapsed() < self.retry_backoff(*n)
    }

    /// The wait after `n` failures in a row: `iscp_retry_base` doubling
    /// per failure, at most `iscp_retry_cap`.
    pub fn retry_backoff(&self, n: u32) -> std::time::Duration {
        self.config
            .iscp_retry_base
            .saturating_mul(1u32 << n.saturating_sub(1).min(16))
            .min(self.config.iscp_retry_cap)
    }

    /// Cache a freshly loaded index. At most every `gc_interval`, first
    /// drop cached indexes of dropped jobs: the runner CN forgets a job when
    /// it finalizes the drop, every other CN (which may have loaded the
    /// index for searches or synchronous writes) at its next load.
    fn cache(&self, job_id: u64, h: &LiveHandle) {
        self.sweep_if_due();
        self.live.lock().insert(job_id, h.clone());
    }

    /// [`Iscp::evict_dropped`], at most once per `gc_interval`: at every
    /// load, and at every runner tick of a CN that does not hold the lease
    /// (so a CN that loads nothing more still forgets a dropped index's copy
    /// within `gc_interval`).
    pub fn sweep_if_due(&self) {
        let due = {
            let mut last = self.last_sweep.lock();
            let due = last.elapsed() >= self.config.gc_interval;
            if due {
                *last = Instant::now();
            }
            due
        };
        if due && !self.live.lock().is_empty() {
            if let Err(e) = self.evict_dropped() {
                tracing::warn!(error = %e, "index cache sweep failed");
            }
        }
    }

    /// Drop cached indexes whose job is gone or dropped; returns how many.
    pub fn evict_dropped(&self) -> SqlResult<usize> {
        // An entry locked right now is in use (a unit, a catch-up): skip it
        // rather than wait with the cache map locked.
        let keys: Vec<JobKey> = self
            .live
            .lock()
            .values()
            .filter_map(|h| h.try_read().map(|g| g.key.clone()))
            .collect();
        let mut n = 0;
        for k in keys {
            let live = matches!(self.read_job(&k)?, Some(r) if r.drop_at.is_none());
            if !live {
                self.drop_live(k.job_id);
                n += 1;
            }
        }
        Ok(n)
    }

    /// Number of cached indexes (bounded-memory checks).
    pub fn live_count(&self) -> usize {
        self.live.lock().len()
    }

    /// Wake statements waiting on job progress (a unit committed or a job
    /// was canceled).
    pub(crate) fn notify_progress(&self) {
        let mut g = self.progress.0.lock();
        *g += 1;
        self.progress.1.notify_all();
    }

    /// Wait up to `wait` for every job in `keys` to reach Canceled; returns
    /// the ones still pending. Works on any CN: the condition is the durable
    /// job row (another CN's runner finalizes through storage).
    pub fn await_canceled(&self, keys: &[JobKey], wait: Duration) -> Vec<JobKey> {
        self.await_jobs(keys, wait, |r| r.state != JobState::Canceled)
    }

    /// Wake the runner, then re-read the durable job rows after every local
    /// progress notification and at least every 20 ms until no row is
    /// `still_pending` (a missing row is done) or `wait` has passed; returns
    /// the keys still pending.
    fn await_jobs(
        &self,
        keys: &[JobKey],
        wait: Duration,
        still_pending: impl Fn(&JobRow) -> bool,
    ) -> Vec<JobKey> {
        self.wake();
        let deadline = Instant::now() + wait;
        let mut pending: Vec<JobKey> = keys.to_vec();
        loop {
            pending.retain(|k| match self.read_job(k) {
                Ok(Some(r)) => still_pending(&r),
                Ok(None) => false,
                Err(_) => true,
            });
            let now = Instant::now();
            if pending.is_empty() || now >= deadline {
                return pending;
            }
            let mut g = self.progress.0.lock();
            let slice = (deadline - now).min(PROGRESS_RECHECK);
            self.progress.1.wait_for(&mut g, slice);
        }
    }
}
