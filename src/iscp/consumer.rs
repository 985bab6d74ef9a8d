//! Consumers: apply one job's slice of changes (or one initial-build unit)
//! to its index and commit the index state, the new watermark and the
//! job-row check in **one** transaction.
//!
//! Three kinds behind one entry point: async B-tree (entries written to the
//! hidden table), HNSW (usearch) and full-text (tantivy) — the last two keep
//! their durable state as a base plus the source's change log (see
//! [`crate::iscp::live`]), so their units commit the watermark and, now and
//! then, a new base. Synchronous vector/full-text indexes have a
//! checkpoint-only unit ([`checkpoint_unit`]): their writers maintain them.
//! Asynchronous ones write their bases beside their units
//! ([`start_base_writer`]), so a base never holds up the apply path.
//! Lock order inside the commit transaction: hidden-table rows first, the
//! job row **last** and with no wait after it — so a DDL that holds the job
//! row never waits on a consumer, and a paused consumer never holds the job
//! row. Never writes the job row except through [`log::guarded_update`].

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use tributary_fault::points;
use tributary_storage::{Change, ChangeKind, Transaction, TxnOptions};

use crate::catalog::entries;
use crate::catalog::IndexKind;
use crate::error::SqlError;
use crate::iscp::background::on_background_thread;
use crate::iscp::live::{self, hex, unhex};
use crate::iscp::log::{self, GuardRefusal, JobRow, JobState, Stage, UnitError};
use crate::iscp::runtime::{Role, TaskKind};
use crate::iscp::{now_ms, Iscp, LiveHandle};

/// How a work unit ended.
#[derive(Debug)]
pub enum Outcome {
    /// Committed; `more` = more work is already known to be pending.
    Committed { more: bool },
    /// Canceled, fenced or superseded: nothing written.
    Stopped(String),
    /// Failed: the kind says whether the job retries.
    Failed { error: UnitError, msg: String },
    /// Nothing was due (a synchronous index with no checkpoint to write).
    Idle,
}

fn fault_outcome(e: tributary_fault::FaultError) -> Outcome {
    match e {
        tributary_fault::FaultError::Canceled { .. } => Outcome::Stopped("canceled".into()),
        other => Outcome::Failed {
            error: UnitError::Injected,
            msg: other.to_string(),
        },
    }
}

fn sql_outcome(e: SqlError) -> Outcome {
    // Lock conflicts and I/O are temporary; corrupt data / bad vectors are
    // permanent.
    let error = match e.code {
        1205 | 1213 => UnitError::LockConflict,
        1105 if e.message.contains("index error") => UnitError::IndexRefused,
        1105 if e.message.contains("corrupt") => UnitError::Corrupt,
        _ => UnitError::Temporary,
    };
    Outcome::Failed {
        error,
        msg: e.message,
    }
}

fn begin(iscp: &Iscp) -> Result<Box<dyn Transaction>, SqlError> {
    Ok(iscp.storage.begin(TxnOptions {
        lock_wait_timeout: crate::iscp::UNIT_LOCK_WAIT,
        read_only: false,
        ..TxnOptions::default()
    })?)
}

/// How long a base writer waits for a moment when its index's memory
/// equals a committed watermark (no unit staged or pending) before it
/// leaves the base to a later tick.
const BASE_SETTLE_WAIT: Duration = Duration::from_secs(2);

/// Changes decoded at a time while staging an incremental full-text unit
/// (tantivy indexes on its own thread; the lock is held only to hand them
/// over).
/// Pause before retrying a snapshot-pin whose slot is busy (cancellable):
/// short, since the holder is one in-flight base write.
const PIN_RETRY_PAUSE: Duration = Duration::from_millis(10);
const STAGE_SLICE: usize = 512;
/// Changes staged per write-lock hold of an incremental HNSW unit: usearch
/// inserts at a few thousand vectors/s on one core, so 64 keep each hold
/// around 10–20 ms and a search never waits behind a whole batch (issue 17).
const HNSW_STAGE_SLICE: usize = 64;

/// What every index kind implements: where its cancellation fault points
/// sit and how one batch of changes is applied inside the unit's commit
/// transaction. The runner and the unit logic never look at the kind.
pub trait IndexConsumer: Send + Sync {
    /// Fault point hit before the apply phase.
    fn before_apply_point(&self) -> &'static str;
    /// Fault point hit after the apply, before the commit (persist phase).
    fn before_save_point(&self) -> Option<&'static str>;
    /// Apply `changes` for job `j`, writing its hidden table inside `txn`;
    /// `ts` is the job's watermark once the unit commits. Runs on a
    /// blocking thread. Changes kept in memory are published by
    /// [`Iscp::live_committed`] after the commit.
    fn apply(
        &self,
        iscp: &Iscp,
        j: &JobRow,
        txn: &mut dyn Transaction,
        changes: &[Change],
        ts: u64,
        unit: Unit,
    ) -> Result<(), SqlError>;
    /// Where the source's change log must be kept from once a unit with
    /// watermark `wm` committed (`None`: leave the registration).
    fn retain_from(&self, iscp: &Iscp, j: &JobRow, wm: u64) -> Option<u64>;
}

/// What kind of work unit an apply belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Changes read from the change log.
    Incremental,
    /// Rows of the initial build's snapshot scan; `done` = the last unit.
    Build { done: bool },
}

/// Async secondary (B-tree) index: entries go straight to the hidden table.
pub struct BTreeConsumer;

impl IndexConsumer for BTreeConsumer {
    fn before_apply_point(&self) -> &'static str {
        points::ISCP_LONG_BEFORE_EXEC
    }
    fn before_save_point(&self) -> Option<&'static str> {
        None
    }
    fn apply(
        &self,
        _iscp: &Iscp,
        j: &JobRow,
        txn: &mut dyn Transaction,
        changes: &[Change],
        _ts: u64,
        _unit: Unit,
    ) -> Result<(), SqlError> {
        let target = entries::Target {
            storage_id: j.spec.storage_id,
            name: &j.spec.index,
            unique: matches!(j.spec.kind, IndexKind::BTree { unique: true }),
            collations: j.spec.key_collations(),
        };
        // DDL refuses UNIQUE on an asynchronous index: a duplicate found
        // here could only fail the job, not the statement that wrote it.
        debug_assert!(!target.unique, "asynchronous UNIQUE index {}", j.spec.index);
        for c in changes {
            if let Some(o) = &c.old {
                let ov = live::cols_of(o, &j.spec.columns)?;
                entries::delete(txn, &target, &ov, &c.key)?;
            }
            if let Some(n) = &c.new {
                let nv = live::cols_of(n, &j.spec.columns)?;
                entries::put(txn, &target, &nv, &c.key)?;
            }
        }
        Ok(())
    }
    fn retain_from(&self, _iscp: &Iscp, _j: &JobRow, wm: u64) -> Option<u64> {
        // The entries are the index: nothing before the watermark is needed.
        Some(wm)
    }
}

/// HNSW (usearch) or full-text (tantivy): apply to the in-memory index;
/// the unit commits the watermark, and a new base when one is due.
pub struct LiveConsumer {
    pub hnsw: bool,
}

impl IndexConsumer for LiveConsumer {
    fn before_apply_point(&self) -> &'static str {
        if self.hnsw {
            points::ISCP_LONG_HNSW_BEFORE_UPDATE
        } else {
            points::ISCP_LONG_BEFORE_EXEC
        }
    }
    fn before_save_point(&self) -> Option<&'static str> {
        self.hnsw.then_some(points::ISCP_LONG_HNSW_BEFORE_SAVE)
    }
    fn apply(
        &self,
        iscp: &Iscp,
        j: &JobRow,
        txn: &mut dyn Transaction,
        changes: &[Change],
        ts: u64,
        unit: Unit,
    ) -> Result<(), SqlError> {
        let source = live::Source::of(j.key.table_id, &j.spec);
        let entry = iscp.live_for_consumer(j)?;
        // Staged only: tantivy indexes on its own thread while the unit
        // commits; `Iscp::live_committed` publishes.
        let Unit::Build { done } = unit else {
            return self.apply_incremental(j, &entry, &source, changes, ts, iscp);
        };
        // Initial build: searches evaluate exactly until it is done, so
        // nothing waits on this lock but other units of the job.
        let mut g = entry.write();
        let sid = j.spec.storage_id;
        let ops = source.ops(changes)?;
        g.index.set_writer_threads(iscp.config.iscp_build_threads);
        g.index.stage(&ops)?;
        g.index.check_budget(iscp.config.index_memory_budget)?;
        if done {
            // Units index small batches: one thread (one segment a commit).
            g.index.set_writer_threads(1);
            live::checkpoint(
                iscp.storage.as_ref(),
                txn,
                j.key.job_id,
                &j.spec,
                &mut g.index,
                ts,
            )?;
            g.based_at(ts, 0);
        } else {
            live::persist_build(txn, sid, ts, j.status.iterations as u32, &ops)?;
        }
        g.pending_ts = Some(ts);
        Ok(())
    }
    fn retain_from(&self, iscp: &Iscp, j: &JobRow, _wm: u64) -> Option<u64> {
        // Replay on load starts at the base.
        iscp.cached(j.key.job_id).map(|h| h.read().base_ts)
    }
}

impl LiveConsumer {
    /// An incremental unit, never holding the memory's write lock for long
    /// (issue 17): changes are decoded outside the lock and staged a slice
    /// at a time, the lock released between slices; HNSW vectors go to the
    /// index's tail, searched exactly, and [`add_deferred`] adds them to
    /// the graph after the unit commits (`staging_to` tells
    /// searches that the changes up to `ts` are partly in — they evaluate
    /// those keys exactly); a due compaction builds the new graph while
    /// searches go on. Bases are written beside the units
    /// ([`start_base_writer`]), never by them.
    fn apply_incremental(
        &self,
        j: &JobRow,
        entry: &crate::iscp::LiveHandle,
        source: &live::Source,
        changes: &[Change],
        ts: u64,
        iscp: &Iscp,
    ) -> Result<(), SqlError> {
        let t = std::time::Instant::now();
        entry.write().staging_to = Some(ts);
        let slice = if self.hnsw {
            HNSW_STAGE_SLICE
        } else {
            STAGE_SLICE
        };
        for part in changes.chunks(slice) {
            let ops = source.ops(part)?;
            let mut g = entry.write();
            if self.hnsw {
                g.index.stage_deferred(&ops)?;
            } else {
                g.index.stage(&ops)?;
            }
            g.since_base += ops.len() as u64;
            g.index.check_budget(iscp.config.index_memory_budget)?;
        }
        let staged_ms = t.elapsed().as_millis() as u64;
        if self.hnsw {
            iscp.compact_if_due(entry)?;
        }
        let mut g = entry.write();
        g.pending_ts = Some(ts);
        g.staging_to = None;
        tracing::debug!(
            job_id = j.key.job_id,
            changes = changes.len(),
            staged_ms,
            total_ms = t.elapsed().as_millis() as u64,
            "incremental unit applied"
        );
        Ok(())
    }
}

/// The consumer of an index kind.
pub fn consumer_for(kind: &IndexKind) -> &'static dyn IndexConsumer {
    match kind {
        IndexKind::BTree { .. } => &BTreeConsumer,
        IndexKind::Hnsw { .. } => &LiveConsumer { hnsw: true },
        IndexKind::FullText { .. } => &LiveConsumer { hnsw: false },
    }
}

/// The common tail of every unit: fault point, guarded job-row update
/// (locked last), commit. Runs on a blocking thread.
fn commit_unit(
    iscp: &Iscp,
    mut txn: Box<dyn Transaction>,
    j: &JobRow,
    token: &CancellationToken,
    f: impl FnOnce(&mut JobRow),
) -> Result<Outcome, SqlError> {
    if let Err(e) = tributary_fault::hit_blocking(
        points::ISCP_LONG_BEFORE_WATERMARK,
        Some(&j.spec.index),
        Some(token),
    ) {
        txn.rollback();
        return Ok(fault_outcome(e));
    }
    if token.is_cancelled() {
        txn.rollback();
        return Ok(Outcome::Stopped("canceled before commit".into()));
    }
    match log::guarded_update(txn.as_mut(), &j.key, j.status.iterations, |row| {
        f(row);
        row.state = JobState::Completed;
        row.status.error_code = 0;
        row.status.error_msg.clear();
        row.status.retries = 0;
        row.status.last_run_ms = now_ms();
    })? {
        Ok(_) => {
            txn.commit()?;
            iscp.live_committed(j.key.job_id, j.status.iterations);
            Ok(Outcome::Committed { more: false })
        }
        Err(GuardRefusal::CasLost { expected, found }) => {
            txn.rollback();
            Ok(Outcome::Stopped(format!(
                "superseded (iteration {expected} vs {found})"
            )))
        }
        Err(r) => {
            txn.rollback();
            Ok(Outcome::Stopped(format!("job no longer live: {r:?}")))
        }
    }
}

async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T, Outcome> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Outcome::Failed {
            error: UnitError::Temporary,
            msg: format!("consumer task failed: {e}"),
        })
}

/// The apply phase shared by every unit: fault point, apply on a blocking
/// thread inside a fresh transaction, persist fault point. Returns the open
/// transaction for [`commit_unit`].
async fn apply_phase(
    iscp: &Arc<Iscp>,
    j: &JobRow,
    changes: Vec<Change>,
    ts: u64,
    unit: Unit,
    token: &CancellationToken,
) -> Result<Box<dyn Transaction>, Outcome> {
    let consumer = consumer_for(&j.spec.kind);
    let idx = Some(j.spec.index.as_str());
    tributary_fault::hit(consumer.before_apply_point(), idx, token)
        .await
        .map_err(fault_outcome)?;
    let mut txn = begin(iscp).map_err(sql_outcome)?;
    let (iscp2, j2) = (iscp.clone(), j.clone());
    let txn = match blocking(move || {
        consumer
            .apply(&iscp2, &j2, txn.as_mut(), &changes, ts, unit)
            .map(|_| txn)
    })
    .await
    {
        Ok(Ok(t)) => t,
        Ok(Err(e)) => return Err(sql_outcome(e)),
        Err(o) => return Err(o),
    };
    if let Some(p) = consumer.before_save_point() {
        if let Err(e) = tributary_fault::hit(p, idx, token).await {
            txn.rollback();
            return Err(fault_outcome(e));
        }
    }
    Ok(txn)
}

/// Deferred HNSW vectors are added to the graph this many at a time, the
/// index's write lock released between slices (about 10 ms at 100k+
/// 128-d vectors, `crates/index/examples/add_cost.rs`).
const DEFER_SLICE: usize = 16;

/// Move job `j`'s deferred HNSW vectors into the graph
/// (`tributary_index::vector` module docs) for at most half a tick, so
/// that the job's next unit starts within a tick even under a steady
/// stream; returns how many are left. Memory means the same before and
/// after (a deferred vector is searched exactly), so nothing is written.
/// A failed add drops the cached index (the next use reloads it, adding
/// directly), so a failing add is not retried tick after tick.
pub async fn add_deferred(iscp: &Arc<Iscp>, j: &JobRow, token: &CancellationToken) -> usize {
    let budget = iscp.config.iscp_interval / 2;
    let Some(h) = iscp.cached(j.key.job_id) else {
        return 0;
    };
    let (iscp2, job_id, tok) = (iscp.clone(), j.key.job_id, token.clone());
    let left = blocking(move || {
        let t = std::time::Instant::now();
        let mut added = 0;
        let left = loop {
            if tok.is_cancelled() || t.elapsed() >= budget {
                break h.read().index.deferred();
            }
            let mut g = h.write();
            match g.index.add_deferred(DEFER_SLICE) {
                Ok(n) => added += n,
                Err(e) => {
                    tracing::warn!(job_id, error = %e.message, "deferred HNSW add failed; reloading");
                    drop(g);
                    iscp2.invalidate(job_id);
                    break 0;
                }
            }
            let left = g.index.deferred();
            if left == 0 {
                break 0;
            }
        };
        if added > 0 {
            tracing::debug!(
                job_id,
                added,
                left,
                ms = t.elapsed().as_millis() as u64,
                "deferred HNSW adds"
            );
        }
        left
    })
    .await;
    left.unwrap_or(0)
}

/// Whether job `j`'s cached index holds deferred HNSW vectors.
pub fn has_deferred(iscp: &Iscp, j: &JobRow) -> bool {
    iscp.cached(j.key.job_id)
        .is_some_and(|h| h.read().index.deferred() > 0)
}

/// One incremental unit: apply `slice` (changes in (watermark, to_ts]).
pub async fn incremental_unit(
    iscp: &Arc<Iscp>,
    j: &JobRow,
    slice: Vec<Change>,
    to_ts: u64,
    token: &CancellationToken,
) -> Outcome {
    let n = slice.len() as u64;
    let txn = match apply_phase(iscp, j, slice, to_ts, Unit::Incremental, token).await {
        Ok(t) => t,
        Err(o) => return o,
    };
    let (iscp2, j2, tok) = (iscp.clone(), j.clone(), token.clone());
    let r = blocking(move || {
        commit_unit(&iscp2, txn, &j2, &tok, |row| {
            row.watermark = to_ts;
            row.status.rows_applied += n;
        })
    })
    .await;
    finish(iscp, j, r, Some(to_ts))
}

fn finish(
    iscp: &Iscp,
    j: &JobRow,
    r: Result<Result<Outcome, SqlError>, Outcome>,
    new_wm: Option<u64>,
) -> Outcome {
    let out = match r {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => sql_outcome(e),
        Err(o) => o,
    };
    match &out {
        Outcome::Committed { .. } => {
            let low = new_wm.and_then(|w| consumer_for(&j.spec.kind).retain_from(iscp, j, w));
            unit_committed(iscp, j, low);
        }
        _ => iscp.invalidate(j.key.job_id),
    }
    out
}

/// Bookkeeping after any unit of `j` committed: this runner's iteration
/// count, waiters on job progress, and — when `retain_from` is given — the
/// job's change-log registration on its source.
fn unit_committed(iscp: &Iscp, j: &JobRow, retain_from: Option<u64>) {
    iscp.note_committed(j.key.job_id, j.status.iterations + 1);
    iscp.notify_progress();
    if let Some(low) = retain_from {
        let source = live::Source::of(j.key.table_id, &j.spec);
        iscp.storage
            .set_consumer_watermark(&consumer_name(j.key.job_id), source.table(), low);
    }
}

/// Storage consumer name of a job (keeps its change log from GC).
pub fn consumer_name(job_id: u64) -> String {
    format!("iscp:{job_id}")
}

/// One initial-build unit: read up to `iscp_max_batch` rows after the
/// durable checkpoint, apply, and commit the new checkpoint. The build's
/// watermark is the snapshot ts of its first unit; changes after it are
/// replayed by the incremental stage (idempotent by primary key), so a
/// build resumed after a crash (at a later snapshot) is still exact.
pub async fn initial_build_unit(
    iscp: &Arc<Iscp>,
    j: &JobRow,
    token: &CancellationToken,
) -> Outcome {
    let first = j.status.build_ts == 0;
    let build_ts = if first {
        // Register the change-log consumer first: a user table's change log
        // may be stored only while it has one (`set_change_log_on_demand`), so
        // every commit after the snapshot below has its entries. Then take
        // the build snapshot with an open transaction pinning GC and move
        // the watermark to it before releasing it, so no GC can drop changes
        // after the snapshot in between.
        let consumer = consumer_name(j.key.job_id);
        iscp.storage
            .set_consumer_watermark(&consumer, j.key.table_id, iscp.storage.latest_ts());
        let pin = match iscp.storage.begin(TxnOptions {
            lock_wait_timeout: crate::iscp::PIN_LOCK_WAIT,
            read_only: true,
            ..TxnOptions::default()
        }) {
            Ok(p) => p,
            Err(e) => return sql_outcome(e.into()),
        };
        let ts = pin.start_ts();
        iscp.storage
            .set_consumer_watermark(&consumer, j.key.table_id, ts);
        pin.rollback();
        ts
    } else {
        j.status.build_ts
    };
    let after = j.status.build_after.as_deref().and_then(unhex);
    let snap = iscp.storage.latest_ts();
    let cap = iscp.config.iscp_max_batch.max(1);
    let rows = match iscp
        .storage
        .snapshot_scan(j.key.table_id, snap, after.as_deref(), cap)
    {
        Ok(r) => r,
        Err(e) => return sql_outcome(e.into()),
    };
    let total = if first {
        match iscp
            .storage
            .snapshot_scan(j.key.table_id, snap, None, usize::MAX)
        {
            Ok(all) => all.len() as u64,
            Err(e) => return sql_outcome(e.into()),
        }
    } else {
        j.status.build_total
    };
    let done = rows.len() < cap;
    let last_key = rows.last().map(|(k, _)| k.clone());
    let n = rows.len() as u64;
    let changes: Vec<Change> = rows
        .into_iter()
        .enumerate()
        .map(|(i, (k, v))| Change {
            commit_ts: snap,
            seq: i as u32,
            kind: ChangeKind::Insert,
            key: k,
            old: None,
            new: Some(v),
        })
        .collect();
    // Memory and delta records are keyed by the build watermark: replay
    // order is execution order, and the incremental stage starts above it.
    let txn = match apply_phase(iscp, j, changes, build_ts, Unit::Build { done }, token).await {
        Ok(t) => t,
        Err(o) => return o,
    };
    let (iscp2, j2, tok) = (iscp.clone(), j.clone(), token.clone());
    let r = blocking(move || {
        commit_unit(&iscp2, txn, &j2, &tok, |row| {
            row.status.build_ts = build_ts;
            row.status.build_total = total.max(row.status.build_done + n);
            row.status.build_done += n;
            row.status.rows_applied += n;
            if let Some(k) = &last_key {
                row.status.build_after = Some(hex(k));
            }
            if done {
                row.status.stage = Stage::Incremental;
                row.watermark = build_ts;
            }
        })
    })
    .await;
    let out = finish(iscp, j, r, None);
    match out {
        Outcome::Committed { .. } => Outcome::Committed { more: true },
        o => o,
    }
}

/// A checkpoint unit: write a new base of a synchronous vector/full-text
/// index when one is due, as its own guarded transaction. It is the only
/// unit of a synchronous index's job (whose writers maintain the index: the
/// unit first catches this CN's copy up with the entry log, and the base's
/// position becomes the job's watermark). Asynchronous jobs write theirs
/// with [`start_base_writer`]. The memory lock is released before any fault
/// point or commit, so a stalled unit never holds up writers or searches.
pub async fn checkpoint_unit(iscp: &Arc<Iscp>, j: &JobRow, token: &CancellationToken) -> Outcome {
    let consumer = consumer_for(&j.spec.kind);
    let idx = Some(j.spec.index.as_str());
    if let Err(e) = tributary_fault::hit(consumer.before_apply_point(), idx, token).await {
        return fault_outcome(e);
    }
    let (iscp2, j2) = (iscp.clone(), j.clone());
    let prepared = blocking(move || -> Result<_, SqlError> {
        let h = if j2.spec.is_sync_live() {
            let latest = iscp2.storage.latest_ts();
            iscp2.sync_catch_up(&j2.key, &j2.spec, latest, false)?
        } else {
            iscp2.live_for_consumer(&j2)?
        };
        let serializing = std::time::Instant::now();
        let (blob, pos, n) = {
            let mut g = h.write();
            if !g.checkpoint_due(&iscp2.config) || g.pending_ts.is_some() {
                return Ok(None);
            }
            (g.index.base_blob()?, g.watermark, g.since_base)
        };
        // Memory unlocked: writers and searches go on while the chunks
        // are written and the base installed.
        let sid = j2.spec.storage_id;
        let base = live::NewBase {
            why: "due",
            gen: pos,
            blob: &blob,
            serialize: serializing.elapsed(),
            assemble: Duration::ZERO,
        };
        let chunks = live::write_base(
            iscp2.storage.as_ref(),
            j2.key.job_id,
            &j2.spec,
            base,
            &|| false,
        )?;
        let mut txn = begin(&iscp2)?;
        if let Err(e) = live::install_base(txn.as_mut(), sid, pos, chunks) {
            txn.rollback();
            return Err(e);
        }
        Ok(Some((txn, pos, n)))
    })
    .await;
    let (txn, pos, n) = match prepared {
        Ok(Ok(Some(p))) => p,
        Ok(Ok(None)) => return Outcome::Idle,
        Ok(Err(e)) => return sql_outcome(e),
        Err(o) => return o,
    };
    if let Some(p) = consumer.before_save_point() {
        if let Err(e) = tributary_fault::hit(p, idx, token).await {
            txn.rollback();
            return fault_outcome(e);
        }
    }
    let sync = j.spec.is_sync_live();
    let (iscp2, j2, tok) = (iscp.clone(), j.clone(), token.clone());
    let r = blocking(move || {
        commit_unit(&iscp2, txn, &j2, &tok, |row| {
            row.watermark = row.watermark.max(pos);
            if sync {
                row.status.rows_applied += n;
            }
        })
    })
    .await;
    let out = match r {
        Ok(Ok(o)) => o,
        Ok(Err(e)) => sql_outcome(e),
        Err(o) => o,
    };
    // A failed or refused checkpoint leaves the memory as it was.
    if let Outcome::Committed { .. } = out {
        if let Some(h) = iscp.cached(j.key.job_id) {
            let mut g = h.write();
            let after = g.since_base.saturating_sub(n);
            g.based_at(pos, after);
        }
        unit_committed(iscp, j, Some(pos));
        purge_old_bases(iscp, j, token).await;
    }
    out
}

/// After a base was installed: delete the other generations' chunks in
/// small transactions of their own, on a low-priority thread; what a
/// failure or a stop leaves, the next purge deletes.
async fn purge_old_bases(iscp: &Arc<Iscp>, j: &JobRow, token: &CancellationToken) {
    let (iscp2, sid, tok) = (iscp.clone(), j.spec.storage_id, token.clone());
    let purged = on_background_thread(move || {
        live::purge_stale_chunks(iscp2.storage.as_ref(), sid, &|| tok.is_cancelled())
            .map_err(|e| e.message)
    })
    .await
    .and_then(|r| r);
    if let Err(e) = purged {
        tracing::info!(job_id = j.key.job_id, error = %e, "old base chunks left to the next purge");
    }
}

/// Start writing a base of an asynchronous vector / full-text job's index
/// beside its work units when one is due (issue 16: writing a base never
/// stops the job from applying changes). The writer registers in the
/// runtime as the job's [`Role::Base`] — at most one per job, cancelled and
/// drained by a DROP like a unit — and runs on `tracker`. Returns whether
/// one was started.
pub fn start_base_writer(
    iscp: &Arc<Iscp>,
    j: &JobRow,
    parent: &CancellationToken,
    tracker: &tokio_util::task::TaskTracker,
) -> bool {
    let job_id = j.key.job_id;
    if j.spec.is_sync_live() || matches!(j.spec.kind, IndexKind::BTree { .. }) {
        return false;
    }
    let Some(h) = iscp.cached(job_id) else {
        return false;
    };
    if !h.read().checkpoint_due(&iscp.config) {
        return false;
    }
    let Some((token, guard)) = iscp.runtime.register(job_id, Role::Base, parent) else {
        return false;
    };
    let (iscp, j) = (iscp.clone(), j.clone());
    tracker.spawn(async move {
        let _tg = iscp.runtime.task(TaskKind::BaseWriter, Some(job_id));
        match write_base_beside_units(&iscp, &j, h, &token).await {
            Ok(Some(pos)) => tracing::debug!(job_id, base_ts = pos, "base installed"),
            Ok(None) => {}
            Err(e) => tracing::info!(job_id, error = %e, "base not written; a later tick retries"),
        }
        drop(guard);
    });
    true
}

/// The base writer's work: serialize the index at a moment when its memory
/// equals the job's committed watermark `pos` (holding its lock only for
/// that), write the chunks a few per transaction with the memory unlocked
/// while units go on, then install the base in a transaction of its own
/// that touches no job row (so it never conflicts with a unit's commit),
/// only if the job is still live and the installed base is older. Returns
/// the installed base's ts, `None` when nothing was written.
async fn write_base_beside_units(
    iscp: &Arc<Iscp>,
    j: &JobRow,
    h: LiveHandle,
    token: &CancellationToken,
) -> Result<Option<u64>, String> {
    // The copy's buffer, allocated and touched (not zeroes: `vec![0; n]`
    // maps untouched pages) before the lock and at low priority.
    let len = h.read().index.base_buffer_len();
    let mut buf = Some(on_background_thread(move || vec![0xA5u8; len]).await?);
    let deadline = std::time::Instant::now() + BASE_SETTLE_WAIT;
    let (parts, pos, n, serialize) = loop {
        let (iscp2, h2, b) = (iscp.clone(), h.clone(), buf.take().unwrap_or_default());
        let got = blocking(move || -> Result<_, SqlError> {
            // Searches go on while the index is copied (a shared lock
            // that only excludes units); a full-text index whose files a
            // segment merge is replacing needs it whole.
            let g = h2.upgradable_read();
            if !g.checkpoint_due(&iscp2.config) {
                return Ok(Err((false, b)));
            }
            if g.pending_ts.is_some() || g.staging_to.is_some() {
                return Ok(Err((true, b)));
            }
            let t = std::time::Instant::now();
            let (pos, n) = (g.watermark, g.since_base);
            let parts = match g.index.base_parts_shared(b)? {
                Some(p) => p,
                None => parking_lot::RwLockUpgradableReadGuard::upgrade(g)
                    .index
                    .base_parts()?,
            };
            Ok(Ok((parts, pos, n, t.elapsed())))
        })
        .await
        .map_err(|o| format!("{o:?}"))?
        .map_err(|e| e.message)?;
        match got {
            Ok(p) => break p,
            Err((false, _)) => return Ok(None),
            Err((true, _)) if std::time::Instant::now() >= deadline => return Ok(None),
            Err((true, b)) => {
                buf = Some(b);
                tokio::select! {
                    _ = token.cancelled() => return Ok(None),
                    _ = tokio::time::sleep(PIN_RETRY_PAUSE) => {}
                }
            }
        }
    };
    // Assembling and writing the blob is the heavy part: at low priority,
    // behind foreground statements and the job's units.
    let (iscp2, j2, tok) = (iscp.clone(), j.clone(), token.clone());
    let chunks = on_background_thread(move || {
        let t = std::time::Instant::now();
        let blob = parts.into_blob()?;
        let base = live::NewBase {
            why: "due",
            gen: pos,
            blob: &blob,
            serialize,
            assemble: t.elapsed(),
        };
        live::write_base(
            iscp2.storage.as_ref(),
            j2.key.job_id,
            &j2.spec,
            base,
            &|| tok.is_cancelled(),
        )
    })
    .await?
    .map_err(|e| e.message)?;
    tributary_fault::hit(points::ISCP_BASE_BEFORE_INSTALL, Some(&j.spec.index), token)
        .await
        .map_err(|e| e.to_string())?;
    let (iscp2, j2, tok) = (iscp.clone(), j.clone(), token.clone());
    let installed = blocking(move || -> Result<bool, SqlError> {
        let mut txn = begin(&iscp2)?;
        let r = (|| -> Result<bool, SqlError> {
            let live = log::read_job(txn.as_mut(), &j2.key, false)?
                .is_some_and(|row| row.drop_at.is_none() && !row.state.is_protected());
            if !live || tok.is_cancelled() {
                return Ok(false);
            }
            live::install_base_if_newer(txn.as_mut(), j2.spec.storage_id, pos, chunks)
        })();
        match r {
            Ok(true) => {
                txn.commit()?;
                Ok(true)
            }
            other => {
                txn.rollback();
                other
            }
        }
    })
    .await
    .map_err(|o| format!("{o:?}"))?
    .map_err(|e| e.message)?;
    if !installed {
        return Ok(None);
    }
    {
        let mut g = h.write();
        let after = g.since_base.saturating_sub(n);
        g.based_at(pos, after);
    }
    // Replay now starts at the new base: the change log before it may go.
    let source = live::Source::of(j.key.table_id, &j.spec);
    iscp.storage
        .set_consumer_watermark(&consumer_name(j.key.job_id), source.table(), pos);
    purge_old_bases(iscp, j, token).await;
    Ok(Some(pos))
}
