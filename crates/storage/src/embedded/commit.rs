//! Group commit: concurrent committers share one durable write.
//!
//! Owns the commit queue and the commit path from a transaction's final
//! writes to its record in the commit log (`flush` takes it from there to
//! a published `latest_ts`). A committer queues its writes and
//! then takes the commit mutex. Whoever holds the mutex is the group's
//! leader: it drains the queue — its own request and every request queued
//! while the previous group was being written — and for each one in queue
//! order assigns the next commit timestamp and builds its change-log
//! entries; then it installs the group's versions in the memory overlay
//! (invisible until published), writes the whole group as **one** record
//! of the commit log (`log`), queues it for a sync (`flush`) and lets the
//! mutex go: the next group is numbered and written while this one is
//! synced. `flush` runs one `fdatasync` at a time, each covering every
//! group written before it, then publishes those groups' last timestamp,
//! hands every member its result and queues them for the applier
//! (`apply`), which writes them to redb later in a larger transaction. A
//! committer that finds the mutex taken waits on its own request's slot,
//! not on the mutex: it is woken with its result, or — by whoever releases
//! the mutex ([`CommitGuard`]), when it is the first request still queued —
//! to lead the next group; so a finished group's members do not file
//! through the mutex one by one before the next group can start. One
//! committer alone pays what it paid before: it leads a group of one and
//! syncs it itself.
//!
//! Guarantees, the same as one commit at a time (see [`crate::api`]):
//! * commit timestamps strictly increase, in queue order;
//! * `Ok(ts)` is returned only after the group's log record is durable
//!   (or, in [`Durability::Periodic`] mode, written to the log and synced
//!   within the period) and installed, and `latest_ts` covers it; rows and
//!   their change-log entries become visible together, when `latest_ts`
//!   passes their timestamp;
//! * a failed write or sync fails **every** request of the group (a sync:
//!   of every group it covers), and none of them stays installed or is
//!   acknowledged.
//!
//! Requests of one group write disjoint keys: each holds the exclusive row
//! locks of its keys until its commit returns, so a request's "before"
//! images (the latest committed versions) cannot be changed by another
//! request of the same group. A transaction hands in the before images it
//! read under those locks (its primary-key check, an UPDATE's read; up to
//! 64 KiB of them), and the leader looks up only the others — half of a
//! single-row commit's leader work was that lookup and its redb reader.
//! Debug builds (every test) look every one up and check the handed-in
//! image against it.
//!
//! This module must never queue a group for a sync before it is written
//! and installed, and never acknowledge a request itself unless it changes
//! nothing or failed before its write (`flush` acknowledges the rest).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, MutexGuard};

use super::changelog;
use super::engine::Inner;
use super::flush::{self, Member};
use super::mvcc::Installed;
use crate::api::{Change, Result, StorageError, TableId, Ts};

/// Values by key and table: table → key → value (`None`: absent).
pub(super) type FinalWrites = BTreeMap<TableId, BTreeMap<Vec<u8>, Option<Vec<u8>>>>;

/// A transaction's latest write of a key.
#[derive(Debug)]
pub(super) struct OwnWrite {
    /// The new value (`None` deletes).
    pub value: Option<Vec<u8>>,
    /// How many writes the transaction made before this one.
    pub pos: u64,
}

/// A transaction's final writes: table → key → latest write.
pub(super) type OwnWrites = BTreeMap<TableId, BTreeMap<Vec<u8>, OwnWrite>>;

/// How commits reach stable storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Every acknowledged commit is on stable storage (one fsync per
    /// group). The default.
    #[default]
    Immediate,
    /// Commits are written to the commit log without an fsync and flushed to
    /// stable storage every period by a background thread (like InnoDB's
    /// `innodb_flush_log_at_trx_commit=2` or SQLite's `synchronous=NORMAL`).
    /// A crash of the process or the machine loses at most the commits
    /// acknowledged in the last period before it (plus the flush's own
    /// duration); what survives is always a prefix of the commit order,
    /// every transaction whole or absent.
    Periodic(Duration),
}

impl std::str::FromStr for Durability {
    type Err = String;

    /// `immediate`, or `periodic:<ms>` with 1 ≤ ms ≤ 60 000.
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let s = s.trim();
        if s.eq_ignore_ascii_case("immediate") {
            return Ok(Durability::Immediate);
        }
        let ms = s
            .strip_prefix("periodic:")
            .ok_or_else(|| format!("unknown durability {s:?}: use immediate or periodic:<ms>"))?;
        match ms.trim().parse::<u64>() {
            Ok(ms @ 1..=60_000) => Ok(Durability::Periodic(Duration::from_millis(ms))),
            _ => Err(format!("bad period in {s:?}: milliseconds from 1 to 60000")),
        }
    }
}

impl std::fmt::Display for Durability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Durability::Immediate => f.write_str("immediate"),
            Durability::Periodic(p) => write!(f, "periodic:{}", p.as_millis()),
        }
    }
}

/// Where a leader leaves a request's result, and how a waiting committer
/// is woken: with its result, or to lead the next group.
#[derive(Default)]
struct SlotState {
    result: Option<Result<Ts>>,
    /// Set by [`wake_next`]: the commit mutex was released while this
    /// request was still queued.
    lead: bool,
}

#[derive(Default)]
pub(super) struct SlotInner {
    state: Mutex<SlotState>,
    cv: Condvar,
}

pub(super) type Slot = Arc<SlotInner>;

impl SlotInner {
    pub(super) fn set(&self, r: Result<Ts>) {
        self.state.lock().result = Some(r);
        self.cv.notify_one();
    }

    fn wake_to_lead(&self) {
        self.state.lock().lead = true;
        self.cv.notify_one();
    }

    /// Wait until a result is here (`Some`) or this committer is asked to
    /// lead (`None`). Both are flags under the slot's mutex, so a wake-up
    /// before the wait is not lost.
    fn wait(&self) -> Option<Result<Ts>> {
        let mut g = self.state.lock();
        loop {
            if let Some(r) = g.result.take() {
                return Some(r);
            }
            if std::mem::take(&mut g.lead) {
                return None;
            }
            self.cv.wait(&mut g);
        }
    }
}

/// The commit mutex, held: by a group's leader, GC, a table purge or a
/// test. Dropping it releases the mutex and then wakes the first queued
/// request to lead ([`wake_next`]), whoever held it — so no queued request
/// is left waiting for a leader.
pub(crate) struct CommitGuard<'a> {
    inner: &'a Inner,
    guard: Option<MutexGuard<'a, Ts>>,
}

impl<'a> CommitGuard<'a> {
    /// Take the commit mutex (waiting for it).
    pub(super) fn lock(inner: &'a Inner) -> Self {
        Self {
            inner,
            guard: Some(inner.commit_mu.lock()),
        }
    }

    fn try_lock(inner: &'a Inner) -> Option<Self> {
        inner.commit_mu.try_lock().map(|g| Self {
            inner,
            guard: Some(g),
        })
    }

    /// Release the mutex to a thread waiting for it, if any, before this
    /// one can take it again (GC between two batches). The first queued
    /// request is woken first, so it is usually waiting for the mutex by
    /// then; if not, it gets it after one more batch.
    pub(super) fn unlock_fair(mut self) {
        wake_next(self.inner);
        if let Some(g) = self.guard.take() {
            MutexGuard::unlock_fair(g);
        }
    }
}

impl Drop for CommitGuard<'_> {
    fn drop(&mut self) {
        if let Some(g) = self.guard.take() {
            drop(g);
        }
        wake_next(self.inner);
    }
}

/// Wake the first queued request, if any, to lead the next group.
fn wake_next(inner: &Inner) {
    let first = inner.queue.pending.lock().first().map(|r| r.slot.clone());
    if let Some(slot) = first {
        slot.wake_to_lead();
    }
}

/// One queued commit.
struct Request {
    writes: OwnWrites,
    /// Before images the transaction read under its exclusive locks (a
    /// subset of the written keys, or more); the rest are looked up.
    known: FinalWrites,
    /// Returned when the writes net to nothing.
    start_ts: Ts,
    slot: Slot,
}

/// Commits waiting for a leader.
#[derive(Default)]
pub(super) struct CommitQueue {
    pending: Mutex<Vec<Request>>,
}

impl CommitQueue {
    /// Requests waiting now.
    pub fn len(&self) -> usize {
        self.pending.lock().len()
    }
}

/// Commit `writes` (a transaction begun at `start_ts`): queue them, then
/// lead a group or find the result an earlier leader left. Returns the
/// commit timestamp, or `start_ts` when the writes change nothing.
pub(super) fn commit(
    inner: &Inner,
    start_ts: Ts,
    writes: OwnWrites,
    known: FinalWrites,
) -> Result<Ts> {
    inner.check_poison()?;
    let slot: Slot = Arc::default();
    inner.queue.pending.lock().push(Request {
        writes,
        known,
        start_ts,
        slot: slot.clone(),
    });
    // Lead at once if nobody does; else wait for a result or a call to
    // lead (then queue for the mutex fairly, behind GC's hand-over).
    let mut g = match CommitGuard::try_lock(inner) {
        Some(g) => g,
        None => match slot.wait() {
            Some(r) => return r,
            None => CommitGuard::lock(inner),
        },
    };
    // Lead everything queued: our request, unless a leader that took the
    // mutex before us (after we were woken) took it into its group.
    let group = std::mem::take(&mut *inner.queue.pending.lock());
    let sync = match g.guard.as_mut() {
        Some(last) => lead(inner, last, group),
        None => false,
    };
    // The next group is numbered and written while this one is synced.
    drop(g);
    if sync {
        flush::sync_round(inner);
    }
    // Our request is in a group now, whose sync leaves its result. A call
    // to lead that came before we took the mutex is stale: ignore it.
    loop {
        if let Some(r) = slot.wait() {
            return r;
        }
    }
}

/// Number `group` (the caller holds the commit mutex, whose value `last`
/// is the last assigned timestamp), install it and write it to the commit
/// log as one record; requests that change nothing, or fail, get their
/// result at once. Returns whether the caller is to sync the log now
/// ([`flush::sync_round`], after letting the commit mutex go).
fn lead(inner: &Inner, last: &mut Ts, group: Vec<Request>) -> bool {
    let fail_all = |slots: &mut dyn Iterator<Item = Slot>, e: &StorageError| {
        for s in slots {
            s.set(Err(e.clone()));
        }
    };
    if let Err(e) = inner.check_poison() {
        fail_all(&mut group.into_iter().map(|r| r.slot), &e);
        return false;
    }
    // The rows as of now, opened when a before image is not known: every
    // key of the group is exclusively locked by its request, so the latest
    // committed version is its "before" image.
    let mut rows = None;
    let mut numbered: Vec<Member> = Vec::with_capacity(group.len());
    let mut ts = *last;
    for mut req in group {
        let Some(next) = ts.checked_add(1) else {
            req.slot.set(Err(StorageError::Corrupt(
                "commit timestamp exhausted".into(),
            )));
            continue;
        };
        let mut failed = None;
        // The writes move into the changes (no copy of a key or value).
        let count = req.writes.values().map(BTreeMap::len).sum();
        let writes = std::mem::take(&mut req.writes)
            .into_iter()
            .flat_map(|(t, m)| m.into_iter().map(move |(k, w)| (t, k, w.value)));
        let changes = changelog::build_changes(next, count, writes, |t, k| {
            let known = req.known.get_mut(&t).and_then(|m| m.remove(k));
            if known.is_some() && !cfg!(debug_assertions) {
                return known.flatten();
            }
            let r = match &mut rows {
                Some(open) => open,
                None => match inner.rows_reader() {
                    Ok(open) => rows.insert(open),
                    Err(e) => {
                        failed.get_or_insert(e);
                        return None;
                    }
                },
            };
            match inner.versions.latest(r, t, k) {
                Ok(latest) => {
                    // Debug builds (every test) check the transaction's image.
                    if let Some(known) = known {
                        debug_assert_eq!(known, latest, "before image of table {t}");
                    }
                    latest
                }
                Err(e) => {
                    failed.get_or_insert(e);
                    None
                }
            }
        });
        if let Some(e) = failed {
            req.slot.set(Err(e));
            continue;
        }
        if changes.is_empty() {
            req.slot.set(Ok(req.start_ts));
            continue;
        }
        ts = next;
        numbered.push(Member {
            ts: next,
            changes,
            slot: req.slot,
        });
    }
    drop(rows);
    if numbered.is_empty() {
        return false;
    }
    // Older versions go to memory before the new ones reach the file (see
    // `mvcc`): a reader that finds a newer row finds what it replaced.
    // They stay invisible until `latest_ts` passes them (`flush`).
    for n in &numbered {
        inner.versions.install(n.ts, installed(&n.changes));
    }
    let records: Vec<(Ts, &[(TableId, Change)])> = numbered
        .iter()
        .map(|n| (n.ts, n.changes.as_slice()))
        .collect();
    let written = write_log(inner, &records);
    drop(records);
    if let Err(e) = written {
        for n in numbered.iter().rev() {
            inner.versions.uninstall(n.ts, installed(&n.changes));
        }
        fail_all(&mut numbered.into_iter().map(|n| n.slot), &e);
        return false;
    }
    *last = ts;
    inner.flush.push(numbered)
}

/// Write a group's records to the commit log (not synced: `flush` does
/// that). When the log is full, it starts again at its beginning once the
/// applier has put every record in it into the file.
fn write_log(inner: &Inner, records: &[(Ts, &[(TableId, Change)])]) -> Result<()> {
    inner.check_poison()?;
    let mut log = inner.log.lock();
    if !log.fits(records) && log.last_ts() > 0 {
        // Groups still being synced are completed by whoever syncs them
        // (never a holder of this lock), then applied.
        inner.apply.wait_applied(log.last_ts())?;
        log.rewind();
    }
    // `fits` encoded the group.
    log.append_encoded(records.last().map(|r| r.0))
}

/// A transaction's changes as the version store takes them.
pub(super) fn installed(changes: &[(TableId, Change)]) -> impl Iterator<Item = Installed<'_>> {
    changes.iter().map(|(t, c)| Installed {
        table: *t,
        key: &c.key,
        old: c.old.as_deref(),
        new: c.new.as_deref(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durability_parses_and_prints() {
        assert_eq!("immediate".parse(), Ok(Durability::Immediate));
        assert_eq!(
            "periodic:10".parse(),
            Ok(Durability::Periodic(Duration::from_millis(10)))
        );
        assert_eq!(
            Durability::Periodic(Duration::from_millis(25)).to_string(),
            "periodic:25"
        );
        for bad in [
            "periodic:0",
            "periodic:-1",
            "periodic:x",
            "fast",
            "periodic:60001",
        ] {
            assert!(bad.parse::<Durability>().is_err(), "{bad}");
        }
    }
}
