//! The ISCP runner: one per deployment (a lease in storage), a loop of
//! ticks. Each tick (1) hands every dropped-but-not-Canceled job to the
//! cancel queue ([`crate::iscp::drop`]) — which is also the recovery path at
//! start-up — and (2) schedules a bounded work unit per table with live
//! jobs: the retriever reads the table's changes once from the lowest
//! watermark of its jobs (at most `iscp_max_batch`, cut at a transaction
//! boundary) and fans the batch out over bounded channels to one consumer
//! per job, each of which applies its slice and commits index state plus
//! watermark in one guarded transaction ([`crate::iscp::consumer`]).
//!
//! Every task is registered in the runtime's task registry and owned by a
//! `JoinSet` of its parent; cancellation flows runner → table iteration →
//! consumer/retriever through child tokens. The runner never writes a job
//! row itself.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{mpsc, Semaphore};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tracing::Instrument;
use tributary_fault::points;
use tributary_storage::{Change, TxnOptions};

use crate::iscp::consumer::{self, Outcome};
use crate::iscp::log::{self, JobRow, JobState, Stage};
use crate::iscp::runtime::TaskKind;
use crate::iscp::{now_ms, Iscp};

/// Name of the runner lease in storage.
pub const RUNNER_LEASE: &str = "iscp_runner";

/// Bounded channel capacity between retriever and each consumer.
pub const FANOUT_CHANNEL: usize = 1;

/// Runner state kept between ticks.
pub struct Runner {
    iscp: Arc<Iscp>,
    token: CancellationToken,
    /// Jobs handed to a table iteration that has not registered their
    /// consumers yet (afterwards the runtime's consumer map tracks them).
    scheduled: Arc<Mutex<HashSet<u64>>>,
    canceling: Arc<Mutex<HashSet<u64>>>,
    workers: Arc<Semaphore>,
    tasks: JoinSet<()>,
    /// Background base writers (one per job at most); cancelled with the
    /// runner's token and waited for before [`Runner::run`] returns.
    base_writers: TaskTracker,
    leader: bool,
    /// The lease check failed at the last tick (its warning is logged once
    /// per streak of failures).
    lease_failing: bool,
    /// Lease checks failed in a row and when the last one did: the next is
    /// tried only after [`Iscp::retry_backoff`] (a full disk or an
    /// unreachable store is not retried at every tick).
    lease_failures: (u32, std::time::Instant),
    last_gc: std::time::Instant,
    log: log::LogTail,
}

impl Runner {
    /// A runner for `iscp`, stopped by `token`.
    pub fn new(iscp: Arc<Iscp>, token: CancellationToken) -> Self {
        let workers = Arc::new(Semaphore::new(iscp.config.iscp_workers.max(1)));
        let log = log::LogTail::new(&format!("iscp:log-tail:{}", iscp.config.node_name));
        Runner {
            iscp,
            token,
            scheduled: Arc::default(),
            canceling: Arc::default(),
            workers,
            tasks: JoinSet::new(),
            base_writers: TaskTracker::new(),
            leader: false,
            lease_failing: false,
            lease_failures: (0, std::time::Instant::now()),
            last_gc: std::time::Instant::now(),
            log,
        }
    }

    /// Run until cancelled; joins every child task before returning.
    pub async fn run(mut self) {
        let _g = self.iscp.runtime.task(TaskKind::Runner, None);
        let interval = self.iscp.config.iscp_interval;
        loop {
            self.tick().await;
            // Reap finished children (bounded set).
            while let Some(r) = self.tasks.try_join_next() {
                if let Err(e) = r {
                    tracing::error!(error = %e, "ISCP task panicked");
                }
            }
            tokio::select! {
                _ = self.token.cancelled() => break,
                _ = tokio::time::sleep(interval) => {}
                _ = self.iscp.wake.notified() => {}
            }
        }
        self.tasks.abort_all();
        while self.tasks.join_next().await.is_some() {}
        // Their tokens are children of ours: each stops at its next check.
        self.base_writers.close();
        self.base_writers.wait().await;
        if self.leader {
            self.iscp
                .storage
                .release_lease(RUNNER_LEASE, &self.iscp.config.node_name);
        }
    }

    async fn tick(&mut self) {
        let node = self.iscp.config.node_name.clone();
        let (failures, failed_at) = self.lease_failures;
        // At most a lease TTL apart: a store that comes back is noticed soon.
        let wait = self
            .iscp
            .retry_backoff(failures)
            .min(self.iscp.config.lease_ttl);
        if failures > 0 && failed_at.elapsed() < wait {
            return;
        }
        let lease = self
            .iscp
            .storage
            .try_lease(RUNNER_LEASE, &node, self.iscp.config.lease_ttl);
        self.lease_failures = match &lease {
            Ok(_) => (0, failed_at),
            Err(_) => (failures.saturating_add(1), std::time::Instant::now()),
        };
        if lease.is_ok() && std::mem::take(&mut self.lease_failing) {
            tracing::info!(node = %node, "ISCP lease check works again");
        }
        match lease {
            Ok(true) => {
                if !self.leader {
                    tracing::info!(node = %node, "became the ISCP runner");
                }
                self.leader = true;
            }
            Ok(false) => {
                if self.leader {
                    tracing::warn!(node = %node, "lost the ISCP runner lease");
                }
                self.leader = false;
                self.iscp
                    .is_runner
                    .store(false, std::sync::atomic::Ordering::Release);
                self.log.reset(self.iscp.storage.as_ref());
                // Copies this CN loaded for searches of since-dropped indexes.
                self.iscp.sweep_if_due();
                return;
            }
            Err(e) => {
                // Once per outage, not once per tick.
                if !self.lease_failing {
                    tracing::warn!(error = %e, "ISCP lease check failed; retrying every tick");
                }
                self.lease_failing = true;
                self.leader = false;
                self.iscp
                    .is_runner
                    .store(false, std::sync::atomic::Ordering::Release);
                self.log.reset(self.iscp.storage.as_ref());
                return;
            }
        }
        self.iscp
            .is_runner
            .store(true, std::sync::atomic::Ordering::Release);
        if self.last_gc.elapsed() >= self.iscp.config.gc_interval {
            self.last_gc = std::time::Instant::now();
            let storage = self.iscp.storage.clone();
            let retention = self.iscp.config.iscp_log_retention;
            self.tasks.spawn(async move {
                let gc = move || -> Result<tributary_storage::GcStats, crate::error::SqlError> {
                    let mut txn = storage.begin(TxnOptions::default())?;
                    let removed = log::gc_canceled(txn.as_mut(), retention)?;
                    txn.commit()?;
                    if removed > 0 {
                        tracing::info!(removed, "removed old Canceled rows from mo_iscp_log");
                    }
                    Ok(storage.gc()?)
                };
                match tokio::task::spawn_blocking(gc).await {
                    Ok(Ok(st)) => tracing::debug!(?st, "storage GC"),
                    Ok(Err(e)) => tracing::warn!(error = %e, "storage GC failed"),
                    Err(e) => tracing::warn!(error = %e, "storage GC task failed"),
                }
            });
        }
        if let Err(e) = self.log.refresh(self.iscp.storage.as_ref()) {
            tracing::warn!(error = %e, "reading mo_iscp_log failed");
            return;
        }
        let jobs = self.log.jobs();
        let mut by_table: BTreeMap<u64, Vec<JobRow>> = BTreeMap::new();
        for j in jobs {
            if j.drop_at.is_some() || j.state == JobState::Canceling {
                if j.state != JobState::Canceled && self.canceling.lock().insert(j.key.job_id) {
                    let iscp = self.iscp.clone();
                    let token = self.token.clone();
                    let set = self.canceling.clone();
                    self.tasks.spawn(async move {
                        let id = j.key.job_id;
                        crate::iscp::drop::finalize(iscp, j, token).await;
                        set.lock().remove(&id);
                    });
                }
                continue;
            }
            if !schedulable(&j, &self.iscp)
                || self.iscp.runtime.is_running(j.key.job_id)
                || self.iscp.is_stale(&j)
                || self.scheduled.lock().contains(&j.key.job_id)
            {
                continue;
            }
            by_table.entry(j.key.table_id).or_default().push(j);
        }
        for (table, jobs) in by_table {
            {
                let mut sched = self.scheduled.lock();
                for j in &jobs {
                    sched.insert(j.key.job_id);
                }
            }
            let iscp = self.iscp.clone();
            let token = self.token.child_token();
            let sched = self.scheduled.clone();
            let workers = self.workers.clone();
            let base_writers = self.base_writers.clone();
            self.tasks.spawn(async move {
                // Bounded worker pool: wait for a permit (cancellable).
                let permit = tokio::select! {
                    p = workers.acquire_owned() => p.ok(),
                    _ = token.cancelled() => None,
                };
                let ids: Vec<u64> = jobs.iter().map(|j| j.key.job_id).collect();
                if permit.is_some() {
                    let span = tracing::info_span!("iscp_table", table);
                    table_iteration(iscp, table, jobs, token, &sched, base_writers)
                        .instrument(span)
                        .await;
                }
                let mut s = sched.lock();
                for id in ids {
                    s.remove(&id);
                }
            });
        }
    }
}

/// Whether a live job may start a work unit now (state, fence, backoff).
fn schedulable(j: &JobRow, iscp: &Iscp) -> bool {
    if j.state != JobState::Completed || iscp.runtime.is_fenced(j.key.job_id) {
        return false;
    }
    // Backs off after failures this runner saw, written to the row or not.
    if iscp.in_failure_backoff(j.key.job_id) {
        return false;
    }
    if j.status.retries > 0 {
        let base = iscp.config.iscp_retry_base.as_millis() as u64;
        let cap = iscp.config.iscp_retry_cap.as_millis() as u64;
        let backoff = base
            .saturating_mul(1u64 << j.status.retries.min(20))
            .min(cap);
        if now_ms() < j.status.last_run_ms.saturating_add(backoff) {
            return false;
        }
    }
    true
}

/// One bounded work unit for one table: initial-build units for jobs still
/// in the init stage, then one shared change read for the others.
///
/// Consumers are registered at submit (a DROP from then on cancels them) and
/// run concurrently: a stalled job never holds up the other jobs of its
/// table — they are scheduled again by the next tick while it waits.
async fn table_iteration(
    iscp: Arc<Iscp>,
    table: u64,
    jobs: Vec<JobRow>,
    token: CancellationToken,
    scheduled: &Mutex<HashSet<u64>>,
    base_writers: TaskTracker,
) {
    let _g = iscp.runtime.task(TaskKind::TableIteration, None);
    let mut regs = Vec::new();
    {
        // Registered (or refused) now: from here on the runtime's consumer
        // map, not `scheduled`, keeps a job from being scheduled twice.
        let mut s = scheduled.lock();
        for j in jobs {
            s.remove(&j.key.job_id);
            if let Some(reg) = iscp.runtime.register_consumer(j.key.job_id, &token) {
                regs.push((j, reg));
            }
        }
    }
    let mut set = JoinSet::new();
    let mut incr = Vec::new();
    for (j, reg) in regs {
        let input = if j.spec.is_sync_live() {
            Input::Checkpoint
        } else if j.status.stage == Stage::Init {
            Input::Build
        } else {
            incr.push((j, reg));
            continue;
        };
        let iscp2 = iscp.clone();
        set.spawn(async move { run_consumer(&iscp2, &j, input, reg).await });
    }
    fan_out(&iscp, table, incr, &mut set, (&token, &base_writers)).await;
    while let Some(r) = set.join_next().await {
        if let Err(e) = r {
            tracing::error!(error = %e, "ISCP consumer task panicked");
        }
    }
}

type Registration = (CancellationToken, crate::iscp::runtime::ConsumerGuard);

/// What a consumer works on in its unit.
enum Input {
    /// The next initial-build unit (snapshot scan).
    Build,
    /// A checkpoint unit (a synchronous index's only kind of unit).
    Checkpoint,
    /// A slice of the change log, sent by the retriever; the unit's
    /// watermark.
    Changes(mpsc::Receiver<Arc<Vec<Change>>>, u64),
    /// No new changes, but deferred HNSW vectors to add to the graph.
    Deferred,
}

/// Read the table's changes once from the lowest watermark of `incr` and
/// fan them out, one bounded channel per consumer.
async fn fan_out(
    iscp: &Arc<Iscp>,
    table: u64,
    incr: Vec<(JobRow, Registration)>,
    set: &mut JoinSet<()>,
    (token, base_writers): (&CancellationToken, &TaskTracker),
) {
    if incr.is_empty() {
        return;
    }
    let latest = iscp.storage.latest_ts();
    let from = incr.iter().map(|(j, _)| j.watermark).min().unwrap_or(0);
    let batch = if from >= latest {
        Ok(Vec::new())
    } else {
        read_batch(iscp, table, from, latest, iscp.config.iscp_max_batch)
    };
    let batch = match batch {
        Ok(b) => b,
        Err(e) => {
            tracing::warn!(table, error = %e, "reading changes failed");
            return;
        }
    };
    let to_ts = batch.last().map(|c| c.commit_ts).unwrap_or(0);
    let (busy, idle): (Vec<_>, Vec<_>) = incr.into_iter().partition(|(j, _)| j.watermark < to_ts);
    // A due base is written beside the units, by a writer of its own (at
    // most one per job): idle or busy, the job goes on applying changes.
    for (j, _) in idle.iter().chain(busy.iter()) {
        consumer::start_base_writer(iscp, j, token, base_writers);
    }
    // Idle jobs with deferred HNSW vectors add them to the graph; the
    // others' registrations drop here, unregistering their consumers.
    for (j, (jt, guard)) in idle {
        if consumer::has_deferred(iscp, &j) {
            let iscp2 = iscp.clone();
            set.spawn(async move {
                run_consumer(&iscp2, &j, Input::Deferred, (jt, guard)).await;
            });
        }
    }
    if busy.is_empty() {
        return;
    }
    let batch = Arc::new(batch);
    for (j, (jt, guard)) in busy {
        let (tx, rx) = mpsc::channel::<Arc<Vec<Change>>>(FANOUT_CHANNEL);
        let iscp2 = iscp.clone();
        let job = j.clone();
        let jt2 = jt.clone();
        set.spawn(async move {
            run_consumer(&iscp2, &job, Input::Changes(rx, to_ts), (jt2, guard)).await;
        });
        // One retriever send per consumer, concurrently: a stalled send to
        // one job never delays its siblings.
        let iscp3 = iscp.clone();
        let batch = batch.clone();
        set.spawn(async move {
            let _rg = iscp3.runtime.task(TaskKind::Retriever, Some(j.key.job_id));
            let index = j.spec.index.clone();
            let sent = async {
                tributary_fault::hit(points::ISCP_FANOUT_BEFORE_SEND, Some(&index), &jt).await?;
                tributary_fault::hit(points::ISCP_LONG_BEFORE_SEND, Some(&index), &jt).await?;
                Ok::<_, tributary_fault::FaultError>(())
            };
            match sent.await {
                Ok(()) => {
                    tokio::select! {
                        // A canceled retriever rejects the data: the batch
                        // is dropped, never queued for a dead consumer.
                        _ = jt.cancelled() => {}
                        r = tx.send(batch) => { let _ = r; }
                    }
                }
                Err(e) => tracing::info!(job = j.key.job_id, error = %e, "fan-out stopped"),
            }
            // Dropping tx closes the channel: the consumer never waits on a
            // sender that will not send.
        });
    }
}

/// Read at most `iscp_max_batch` changes after `from`, never splitting a
/// transaction (unless one transaction alone exceeds the cap, in which case
/// that transaction is read whole).
fn read_batch(
    iscp: &Iscp,
    table: u64,
    from: u64,
    to: u64,
    cap: usize,
) -> Result<Vec<Change>, tributary_storage::StorageError> {
    let cap = cap.max(1);
    let b = iscp.storage.changes(table, from, to, None, cap)?;
    let mut changes = b.changes;
    if b.resume.is_some() {
        let Some(last_ts) = changes.last().map(|c| c.commit_ts) else {
            return Ok(changes);
        };
        let first_ts = changes.first().map(|c| c.commit_ts).unwrap_or(last_ts);
        if first_ts == last_ts {
            // One huge transaction: read the rest of it.
            let mut resume = b.resume;
            while let Some(r) = resume {
                let more = iscp.storage.changes(table, from, last_ts, Some(r), cap)?;
                changes.extend(more.changes);
                resume = more.resume;
            }
        } else {
            changes.retain(|c| c.commit_ts < last_ts);
        }
    }
    Ok(changes)
}

/// Run one job's (already registered) consumer for one work unit; the
/// guard unregisters it and signals the drain when the unit ends.
async fn run_consumer(
    iscp: &Arc<Iscp>,
    j: &JobRow,
    input: Input,
    (token, guard): (CancellationToken, crate::iscp::runtime::ConsumerGuard),
) {
    let _tg = iscp.runtime.task(TaskKind::Consumer, Some(j.key.job_id));
    let started = std::time::Instant::now();
    let index = j.spec.index.clone();
    // After submit to the worker: a DROP now fences the job and cancels the
    // token, so the unit is skipped without writing anything.
    if tributary_fault::hit(points::ISCP_AFTER_SUBMIT, Some(&index), &token)
        .await
        .is_err()
        || token.is_cancelled()
    {
        drop(guard);
        return;
    }
    let span = tracing::info_span!("iscp_job", job_id = j.key.job_id, index = %index, from_ts = j.watermark);
    let outcome = async {
        if let Err(e) =
            tributary_fault::hit(points::ISCP_AFTER_REGISTER_CONSUMER, Some(&index), &token).await
        {
            return Outcome::Stopped(e.to_string());
        }
        match input {
            Input::Build => consumer::initial_build_unit(iscp, j, &token).await,
            Input::Checkpoint => consumer::checkpoint_unit(iscp, j, &token).await,
            Input::Deferred => {
                let left = consumer::add_deferred(iscp, j, &token).await;
                Outcome::Committed { more: left > 0 }
            }
            Input::Changes(mut rx, to_ts) => {
                let batch = tokio::select! {
                    _ = token.cancelled() => return Outcome::Stopped("canceled".into()),
                    b = rx.recv() => b,
                };
                let Some(batch) = batch else {
                    return Outcome::Stopped("retriever closed".into());
                };
                // The batch is in commit order: this job's slice is the part
                // above its watermark (no copy when it is the last holder).
                let n_batch = batch.len();
                let mut slice = Arc::try_unwrap(batch).unwrap_or_else(|shared| shared.to_vec());
                let skip = slice.partition_point(|c| c.commit_ts <= j.watermark);
                slice.drain(..skip);
                // A batch that waited (a stalled send, a busy worker pool)
                // is stale: top it up with what committed since, up to the
                // unit bound, rather than spend a whole unit on it.
                let max = iscp.config.iscp_max_batch.max(1);
                let mut to_ts = to_ts;
                if started.elapsed() >= iscp.config.iscp_interval && slice.len() < max / 2 {
                    let latest = iscp.storage.latest_ts();
                    match read_batch(iscp, j.key.table_id, to_ts, latest, max - slice.len()) {
                        Ok(more) => {
                            if let Some(last) = more.last() {
                                to_ts = last.commit_ts;
                            }
                            slice.extend(more);
                        }
                        Err(e) => tracing::debug!(error = %e, "top-up read failed; unit as sent"),
                    }
                }
                // A unit that was (nearly) full means a backlog, and one that
                // took longer than a tick let a tick's worth of changes pile
                // up: schedule the next unit at once. Quick small units wait
                // for the next tick, so a steady stream is applied in
                // batches, not change by change.
                let large = n_batch.saturating_mul(2) >= iscp.config.iscp_max_batch.max(1);
                let unit = consumer::incremental_unit(iscp, j, slice, to_ts, &token).await;
                match unit {
                    Outcome::Committed { .. } => {
                        // The unit's HNSW vectors are searchable in the
                        // tail: add them to the graph now.
                        let deferred = consumer::add_deferred(iscp, j, &token).await;
                        let large = large || started.elapsed() >= iscp.config.iscp_interval;
                        Outcome::Committed {
                            more: deferred > 0
                                || large
                                    && iscp
                                        .storage
                                        .changes(
                                            j.key.table_id,
                                            to_ts,
                                            iscp.storage.latest_ts(),
                                            None,
                                            1,
                                        )
                                        .is_ok_and(|b| !b.changes.is_empty()),
                        }
                    }
                    o => o,
                }
            }
        }
    }
    .instrument(span)
    .await;
    match outcome {
        Outcome::Committed { more } => {
            iscp.note_unit_committed(j.key.job_id);
            if more {
                iscp.wake.notify_one();
            }
        }
        Outcome::Stopped(why) => {
            tracing::debug!(job = j.key.job_id, why = %why, "consumer stopped")
        }
        Outcome::Idle => {}
        Outcome::Failed { error, msg } => {
            iscp.note_unit_failed(j.key.job_id);
            if !j.spec.is_sync_live() {
                // A synchronous index's memory is right whatever its
                // checkpoint did; an asynchronous one may hold a failed
                // unit's staged changes.
                iscp.invalidate(j.key.job_id);
            }
            if let Err(e) = record_error(iscp, j, error, &msg) {
                tracing::warn!(job = j.key.job_id, error = %e, "recording job error failed");
            }
        }
    }
    drop(guard);
}

fn record_error(
    iscp: &Iscp,
    j: &JobRow,
    error: log::UnitError,
    msg: &str,
) -> Result<(), crate::error::SqlError> {
    let mut txn = iscp.storage.begin(TxnOptions {
        lock_wait_timeout: crate::iscp::BOOKKEEPING_LOCK_WAIT,
        read_only: false,
        ..TxnOptions::default()
    })?;
    let r = log::write_error(txn.as_mut(), &j.key, j.status.iterations, error, msg)?;
    match r {
        Ok(_) => {
            txn.commit()?;
            tracing::warn!(
                job = j.key.job_id,
                ?error,
                code = error.code(),
                permanent = error.is_permanent(),
                msg,
                "ISCP job iteration failed"
            );
        }
        Err(refusal) => {
            txn.rollback();
            tracing::info!(
                job = j.key.job_id,
                ?refusal,
                "error not recorded: job superseded or dropped"
            );
        }
    }
    Ok(())
}
