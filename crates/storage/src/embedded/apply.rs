//! The applier: writes committed groups from the commit log into redb.
//!
//! A commit is durable once its group's record is in the commit log
//! ([`super::log`]) and visible once its chains are in the overlay
//! ([`super::mvcc`]); redb receives it later, here, in large transactions
//! (rows, change log, table ts), which spreads redb's copy-on-write commit
//! over many groups. After each write the applied ts moves and chains that
//! every reader can now find on disk are trimmed.
//!
//! Owns the queue of groups not yet in redb, the applied ts and the
//! registry of open redb readers (the applied ts each saw when it opened:
//! a chain may leave memory only once every reader's file has it).
//!
//! This module must never apply a group out of commit order, never move
//! the applied ts past what a durable redb transaction holds, and never
//! drop a group that failed to apply (it is retried).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::engine::Inner;
use crate::api::{Change, Result, StorageError, TableId, Ts};

/// One committed transaction waiting for redb.
pub(super) type Applied = (Ts, Vec<(TableId, Change)>);

/// How long a reader of the change log (or a purge) waits for the applier
/// before it reports the storage as failing.
const APPLY_WAIT: Duration = Duration::from_secs(30);
/// About how many bytes of changes one redb transaction of the applier
/// writes (at least one group).
const APPLY_BATCH_BYTES: usize = 1 << 20;
/// The overlay size below which the applier never trims it.
pub(super) const TRIM_MIN: usize = 4096;
/// Pause before the first retry of a failed apply; it doubles at each
/// failure in a row up to [`RETRY_PAUSE_MAX`] (a waiter wakes it at once).
const RETRY_PAUSE: Duration = Duration::from_millis(50);
/// Longest pause between retries of a failing apply.
const RETRY_PAUSE_MAX: Duration = Duration::from_secs(1);
/// How often a failing applier logs that it still fails.
const RETRY_LOG_EVERY: Duration = Duration::from_secs(30);
/// How long the applier lets commits gather before it writes them, unless
/// about [`APPLY_BATCH_BYTES`] are queued or someone waits for them: each
/// redb transaction is a copy-on-write commit with its own fsync, so one
/// per single-row commit cost as much disk time and CPU as the commit
/// itself. Readers never wait for it (they read the memtable); change-log
/// readers, purges, GC and a full commit log ask for the queue at once.
/// At 32 clients' single-row INSERTs the applier spent 5.5 µs of CPU per
/// row gathering 10 ms, 3.9 µs gathering 100 ms (decision 016).
const APPLY_GATHER: Duration = Duration::from_millis(100);

#[derive(Default)]
struct State {
    queue: VecDeque<Applied>,
    stop: bool,
    /// The last apply's failure, until one succeeds.
    failing: Option<String>,
    /// Held back by [`ApplyQueue::pause`] (crash tests).
    paused: bool,
    /// When the oldest queued group arrived.
    since: Option<Instant>,
    /// Bytes of changes queued.
    bytes: usize,
    /// Threads in [`ApplyQueue::wait_applied`]: the queue is written at once.
    waiting: usize,
    /// The applier has taken a batch out of the queue and not yet either
    /// applied it or put it back.
    in_flight: bool,
}

/// Bytes of changes of one group, as the applier counts them.
pub(super) fn group_bytes(changes: &[(TableId, Change)]) -> usize {
    changes
        .iter()
        .map(|(_, c)| {
            c.key.len() + c.old.as_ref().map_or(0, Vec::len) + c.new.as_ref().map_or(0, Vec::len)
        })
        .sum()
}

/// Groups waiting for redb, and who waits for them.
#[derive(Default)]
pub(super) struct ApplyQueue {
    state: Mutex<State>,
    /// Wakes the applier.
    work: Condvar,
    /// Wakes those waiting for the applied ts to move.
    applied_cv: Condvar,
    /// Every commit at or below it is in redb, durably.
    pub applied_ts: AtomicU64,
    /// Open redb readers: applied ts at open -> how many.
    readers: Arc<Mutex<BTreeMap<Ts, usize>>>,
}

/// An open reader's registration (see [`ApplyQueue::register_reader`]).
pub(super) struct ReaderGuard {
    readers: Arc<Mutex<BTreeMap<Ts, usize>>>,
    at: Ts,
}

impl ReaderGuard {
    /// The applied ts it registered.
    pub fn at(&self) -> Ts {
        self.at
    }
}

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        let mut g = self.readers.lock();
        if let Some(n) = g.get_mut(&self.at) {
            *n -= 1;
            if *n == 0 {
                g.remove(&self.at);
            }
        }
    }
}

impl ApplyQueue {
    pub fn new(applied: Ts) -> Self {
        ApplyQueue {
            applied_ts: AtomicU64::new(applied),
            ..Default::default()
        }
    }

    /// Register a reader about to open a redb read transaction: call
    /// before opening it, keep the guard as long as it is used.
    pub fn register_reader(&self) -> ReaderGuard {
        let mut g = self.readers.lock();
        let at = self.applied_ts.load(Ordering::Acquire);
        *g.entry(at).or_insert(0) += 1;
        ReaderGuard {
            readers: self.readers.clone(),
            at,
        }
    }

    /// How many registered readers are open.
    pub fn open_readers(&self) -> usize {
        self.readers.lock().values().sum()
    }

    /// Chains whose newest version is at or below this may leave memory:
    /// every open reader's file holds them.
    pub fn trim_bound(&self) -> Ts {
        let g = self.readers.lock();
        let applied = self.applied_ts.load(Ordering::Acquire);
        g.keys().next().copied().unwrap_or(applied).min(applied)
    }

    /// Queue committed groups for redb (in commit order).
    pub fn push(&self, groups: impl IntoIterator<Item = Applied>) {
        let mut g = self.state.lock();
        let was_empty = g.queue.is_empty();
        for group in groups {
            g.bytes += group_bytes(&group.1);
            g.queue.push_back(group);
        }
        g.since.get_or_insert_with(Instant::now);
        // The applier sleeps without a deadline on an empty queue, and
        // until the gather deadline otherwise.
        let wake = was_empty || g.bytes >= APPLY_BATCH_BYTES || g.waiting > 0;
        drop(g);
        if wake {
            self.work.notify_one();
        }
    }

    /// Wait until every commit at or below `ts` is in redb. Fails when
    /// the applier keeps failing (a full disk): at once if it was already
    /// failing and makes no progress within a retry or two.
    pub fn wait_applied(&self, ts: Ts) -> Result<()> {
        if self.applied_ts.load(Ordering::Acquire) >= ts {
            return Ok(());
        }
        let start = Instant::now();
        let mut g = self.state.lock();
        g.waiting += 1;
        self.work.notify_one();
        let r = self.wait_applied_locked(&mut g, ts, start);
        g.waiting -= 1;
        r
    }

    fn wait_applied_locked(
        &self,
        g: &mut parking_lot::MutexGuard<'_, State>,
        ts: Ts,
        start: Instant,
    ) -> Result<()> {
        while self.applied_ts.load(Ordering::Acquire) < ts {
            let limit = if g.failing.is_some() {
                RETRY_PAUSE * 10
            } else {
                APPLY_WAIT
            };
            let deadline = start + limit;
            if self.applied_cv.wait_until(g, deadline).timed_out()
                && self.applied_ts.load(Ordering::Acquire) < ts
            {
                let why = g
                    .failing
                    .clone()
                    .unwrap_or_else(|| format!("no progress in {limit:?}"));
                return Err(StorageError::Io(format!(
                    "commit {ts} is durable but cannot be written to the data file yet: {why}"
                )));
            }
        }
        Ok(())
    }

    /// While the applier fails (a full disk): the changes of `table`
    /// committed after the applied ts and at or below `upto`, in commit
    /// order, with that applied ts — read from the queue, where every
    /// durable commit the file lacks waits. `None` when that is not the
    /// whole answer: the applier is not failing, holds a batch it took out,
    /// or a commit at or below `upto` is published but not queued yet.
    pub fn failing_tail(&self, table: TableId, upto: Ts) -> Option<(Ts, Vec<Change>)> {
        let g = self.state.lock();
        let applied = self.applied_ts.load(Ordering::Acquire);
        let queued_to = g.queue.back().map_or(applied, |(ts, _)| *ts);
        if g.failing.is_none() || g.in_flight || queued_to.max(applied) < upto {
            return None;
        }
        debug_assert!(g.queue.front().is_none_or(|(ts, _)| *ts > applied));
        let tail: Vec<Change> = g
            .queue
            .iter()
            .take_while(|(ts, _)| *ts <= upto)
            .flat_map(|(_, changes)| changes.iter())
            .filter(|(t, _)| *t == table)
            .map(|(_, c)| c.clone())
            .collect();
        // Groups are queued in commit order and a group's changes of one
        // table in `seq` order (`changelog::build_changes`).
        debug_assert!(tail
            .windows(2)
            .all(|w| (w[0].commit_ts, w[0].seq) < (w[1].commit_ts, w[1].seq)));
        Some((applied, tail))
    }

    /// Hold the applier back (or let it go on): for tests of a crash with
    /// commits only in the log. Stopping overrides it.
    pub fn pause(&self, paused: bool) {
        self.state.lock().paused = paused;
        self.work.notify_all();
    }

    /// Ask the applier to finish what is queued and stop.
    pub fn stop(&self) {
        self.state.lock().stop = true;
        self.work.notify_all();
    }
}

/// The applier thread's loop: until stopped (and the queue drained), write
/// what is queued to redb in one transaction, then publish and trim.
pub(super) fn run(inner: &Inner) {
    let q = &inner.apply;
    // While writes fail: since when, when it was last logged, and the
    // pause before the next try (doubling up to RETRY_PAUSE_MAX).
    let mut failing_since: Option<Instant> = None;
    let mut logged = Instant::now();
    let mut pause = RETRY_PAUSE;
    loop {
        let (batch, bytes): (Vec<Applied>, usize) = {
            let mut g = q.state.lock();
            loop {
                if g.stop {
                    break;
                }
                if g.queue.is_empty() || g.paused {
                    q.work.wait(&mut g);
                    continue;
                }
                // Let commits gather (see APPLY_GATHER).
                let due = g.since.map_or_else(Instant::now, |t| t + APPLY_GATHER);
                if g.waiting > 0 || g.bytes >= APPLY_BATCH_BYTES || Instant::now() >= due {
                    break;
                }
                q.work.wait_until(&mut g, due);
            }
            if g.queue.is_empty() {
                return;
            }
            // Groups in commit order, up to about APPLY_BATCH_BYTES: a redb
            // write transaction holds what it changes in memory until it
            // commits.
            let mut bytes = 0usize;
            let mut n = 0usize;
            for (_, changes) in &g.queue {
                if n > 0 && bytes >= APPLY_BATCH_BYTES {
                    break;
                }
                bytes += group_bytes(changes);
                n += 1;
            }
            g.bytes -= bytes;
            if n == g.queue.len() {
                g.since = None;
            }
            g.in_flight = true;
            (g.queue.drain(..n).collect(), bytes)
        };
        let last = batch.last().map_or(0, |b| b.0);
        let groups = || batch.iter().map(|(ts, ch)| (*ts, ch.as_slice()));
        inner.let_small_writers_go();
        let skip = inner.skip_changes(groups());
        // A full disk is found before redb is touched (`durably_sized`): a
        // failed redb write would make every read fail until the file is
        // reopened.
        let written = inner.durably_sized(super::space::pages_for(bytes), |d| {
            d.commit_group(groups(), &skip, super::commit::Durability::Immediate)
        });
        match written {
            Ok(()) => {
                if let Some(since) = failing_since.take() {
                    tracing::warn!(
                        failed_for_ms = since.elapsed().as_millis() as u64,
                        "writes to the data file work again"
                    );
                }
                pause = RETRY_PAUSE;
                {
                    let mut g = q.state.lock();
                    g.failing = None;
                    g.in_flight = false;
                    q.applied_ts.store(last, Ordering::Release);
                    // The next reader sees this write, and the shared one
                    // holds back no trim once its last user is done: gone
                    // before anyone waiting for this apply (a GC) wakes.
                    inner.forget_shared_rows();
                }
                q.applied_cv.notify_all();
                // Chains now on disk leave memory: whenever the overlay has
                // doubled since the last trim (amortised O(1) per write).
                if inner.versions.overlay_versions() >= inner.trim_at.load(Ordering::Relaxed) {
                    super::gc::trim_versions(inner);
                    let left = inner.versions.overlay_versions();
                    inner
                        .trim_at
                        .store(left.saturating_mul(2).max(TRIM_MIN), Ordering::Relaxed);
                }
            }
            Err(e) => {
                // Logged when it starts failing and then every
                // RETRY_LOG_EVERY, not at every retry.
                if failing_since.is_none() || logged.elapsed() >= RETRY_LOG_EVERY {
                    tracing::error!(
                        error = %e,
                        failing_for_ms = failing_since.map_or(0, |t| t.elapsed().as_millis() as u64),
                        "applying commits to the data file failed; retrying"
                    );
                    logged = Instant::now();
                }
                failing_since.get_or_insert_with(Instant::now);
                let mut g = q.state.lock();
                g.failing = Some(e.to_string());
                g.in_flight = false;
                q.applied_cv.notify_all();
                for b in batch.into_iter().rev() {
                    g.bytes += group_bytes(&b.1);
                    g.queue.push_front(b);
                }
                g.since.get_or_insert_with(Instant::now);
                let stopping = g.stop;
                if !stopping {
                    q.work.wait_for(&mut g, pause);
                }
                pause = (pause * 2).min(RETRY_PAUSE_MAX);
                drop(g);
                if stopping {
                    // Leave the rest to the log's replay at the next open.
                    return;
                }
                let _ = inner.check_poison();
            }
        }
    }
}
