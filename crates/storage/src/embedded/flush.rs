//! The log flush: makes written commit groups durable and completes them.
//!
//! A group's leader ([`super::commit`]) numbers its group, installs it in
//! the overlay and writes it to the commit log under the commit mutex,
//! queues it here and lets the mutex go: the next group is numbered,
//! installed and written while this one's `fdatasync` runs. One sync at a
//! time, and each covers every group written before it started (InnoDB's
//! split of log write and log flush). When it returns, the syncing thread
//! completes those groups in commit order — records each table's last
//! commit, publishes `latest_ts`, hands them to the applier — and leaves
//! every member's result in its slot.
//!
//! Who syncs: a leader that finds no sync running syncs itself, so one
//! committer alone pays one `fdatasync` and no thread hand-over. A sync
//! that ends with more groups written hands the next sync to the flush
//! thread ([`run`]), which goes on syncing while groups keep coming: under
//! load a sync starts as soon as the previous one has completed its
//! groups, without waiting for a committer's thread to be scheduled, and
//! no committer's thread is kept syncing for others.
//!
//! Guarantees (those of [`super::commit`]): a result is left only after a
//! sync that began after the group's write returned; groups complete in
//! commit order, so `latest_ts` never covers a commit that is not durable
//! and installed; a failed sync fails every group queued (each is
//! uninstalled, none acknowledged) and the log accepts no further write
//! until a restart, after which such a group is whole or absent (its record
//! may have reached the disk, as after any failed fsync).
//!
//! This module must never complete a group before a sync that started
//! after its write, never out of commit order, and never sync while
//! holding the commit mutex or the log writer's lock.

use std::collections::VecDeque;
use std::sync::atomic::Ordering;

use parking_lot::{Condvar, Mutex};

use super::commit::{installed, Durability, Slot};
use super::engine::Inner;
use crate::api::{Change, Result, StorageError, TableId, Ts};

/// A transaction of a written group: its commit ts, its changes and where
/// its committer waits.
pub(super) struct Member {
    pub ts: Ts,
    pub changes: Vec<(TableId, Change)>,
    pub slot: Slot,
}

#[derive(Default)]
struct State {
    /// Groups written to the log and not yet completed, oldest first.
    pending: VecDeque<Vec<Member>>,
    /// A thread is syncing (or has been asked to: `handed`).
    syncing: bool,
    /// The flush thread is to run the next sync.
    handed: bool,
    /// The flush thread is to exit once nothing is pending.
    stop: bool,
}

/// Groups written to the commit log, waiting for a sync.
#[derive(Default)]
pub(super) struct FlushQueue {
    state: Mutex<State>,
    /// Wakes the flush thread.
    work: Condvar,
    /// Signalled after each completed sync.
    done: Condvar,
}

impl FlushQueue {
    /// Queue a group just written to the log (the caller holds the commit
    /// mutex, so groups arrive in commit order). Returns whether the
    /// caller is to sync now ([`sync_round`]): no sync is running.
    pub fn push(&self, group: Vec<Member>) -> bool {
        if group.is_empty() {
            return false;
        }
        let mut s = self.state.lock();
        s.pending.push_back(group);
        !std::mem::replace(&mut s.syncing, true)
    }

    /// Let the flush thread exit once nothing is pending.
    pub fn stop(&self) {
        self.state.lock().stop = true;
        self.work.notify_all();
    }
}

/// Sync the log once and complete every group written before the sync
/// began. The caller has been made the syncing thread ([`FlushQueue::push`]
/// returned `true`, or a hand-over to the flush thread).
pub(super) fn sync_round(inner: &Inner) {
    while sync_once(inner) {}
}

/// One sync and its completions. Returns whether the caller is to sync
/// again: more is pending and the flush thread is stopping.
fn sync_once(inner: &Inner) -> bool {
    let q = &inner.flush;
    // This sync covers the groups pending now (only the syncing thread
    // takes groups out, so they stay at the front).
    let covered = q.state.lock().pending.len();
    let synced = match inner.options.durability {
        Durability::Immediate => {
            inner.log_syncs.fetch_add(1, Ordering::Relaxed);
            inner.log_sync.sync()
        }
        // Written is enough; the periodic flusher syncs.
        Durability::Periodic(_) => Ok(()),
    };
    let mut s = q.state.lock();
    // On failure every queued group fails: the log now refuses writes, so
    // none written after this one could become durable either.
    let n = match &synced {
        Ok(()) => covered,
        Err(_) => s.pending.len(),
    };
    let groups: Vec<Vec<Member>> = s.pending.drain(..n).collect();
    let slots = match synced {
        Ok(()) => complete(inner, groups),
        Err(e) => fail(inner, groups, &e),
    };
    let again = if s.pending.is_empty() {
        s.syncing = false;
        false
    } else if s.stop {
        true
    } else {
        s.handed = true;
        q.work.notify_one();
        false
    };
    drop(s);
    q.done.notify_all();
    for (slot, r) in slots {
        slot.set(r);
    }
    again
}

/// Publish durable groups, in commit order (the caller holds the flush
/// state's lock): each table's last commit, the commit clock, `latest_ts`,
/// the applier's queue. Returns the results to hand out.
fn complete(inner: &Inner, groups: Vec<Vec<Member>>) -> Vec<(Slot, Result<Ts>)> {
    let Some(last) = groups.last().and_then(|g| g.last()).map(|m| m.ts) else {
        return Vec::new();
    };
    // Published in commit order: every ts above the last published one,
    // strictly increasing.
    debug_assert!(
        groups
            .iter()
            .flatten()
            .try_fold(inner.latest_ts.load(Ordering::Acquire), |prev, m| {
                (m.ts > prev).then_some(m.ts)
            })
            .is_some(),
        "commit timestamps published out of order"
    );
    {
        let mut tts = inner.table_ts.lock();
        for m in groups.iter().flatten() {
            for (t, _) in &m.changes {
                tts.insert(*t, m.ts);
            }
            inner.clock.record(m.ts);
        }
    }
    inner
        .groups_written
        .fetch_add(groups.len() as u64, Ordering::Relaxed);
    inner.latest_ts.store(last, Ordering::Release);
    tracing::trace!(groups = groups.len(), ts = last, "commit groups durable");
    let mut slots = Vec::new();
    let mut applied = Vec::new();
    for m in groups.into_iter().flatten() {
        slots.push((m.slot, Ok(m.ts)));
        applied.push((m.ts, m.changes));
    }
    // The file gets them later, in the applier's next transaction.
    inner.apply.push(applied);
    slots
}

/// Take failed groups back out of the overlay, newest first.
fn fail(inner: &Inner, groups: Vec<Vec<Member>>, e: &StorageError) -> Vec<(Slot, Result<Ts>)> {
    tracing::error!(error = %e, groups = groups.len(), "commit log sync failed");
    let mut slots = Vec::new();
    for m in groups.into_iter().flatten().rev() {
        inner.versions.uninstall(m.ts, installed(&m.changes));
        slots.push((m.slot, Err(e.clone())));
    }
    slots
}

/// Wait until every group written so far is completed, syncing if no one
/// is. Callers holding the commit mutex (a table purge) then know no
/// commit is in flight.
pub(super) fn wait_empty(inner: &Inner) {
    let q = &inner.flush;
    let mut s = q.state.lock();
    while !s.pending.is_empty() {
        if s.syncing {
            q.done.wait(&mut s);
        } else {
            s.syncing = true;
            drop(s);
            sync_round(inner);
            s = q.state.lock();
        }
    }
}

/// The flush thread: runs every sync handed to it until stopped (and
/// nothing is pending). Owned by the storage, joined when it closes.
pub(super) fn run(inner: &Inner) {
    let q = &inner.flush;
    loop {
        {
            let mut s = q.state.lock();
            while !s.handed {
                if s.stop && s.pending.is_empty() {
                    return;
                }
                q.work.wait(&mut s);
            }
            s.handed = false;
        }
        sync_round(inner);
    }
}
