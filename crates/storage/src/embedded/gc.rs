//! Garbage collection of row versions and change-log entries.
//!
//! Owns the GC horizon: per table, `min(oldest open snapshot, lowest
//! consumer watermark on that table, latest_ts)`. Row versions not visible
//! at or after the horizon are dropped from memory; change-log entries with
//! `commit_ts <= horizon` are deleted from redb and the horizon is recorded
//! durably so later reads below it fail with `ChangesGone`.
//!
//! This module must never remove a version an open snapshot or a registered
//! consumer watermark can still see, nor a change above such a watermark.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::Ordering;

use redb::ReadableTable;

use super::durable::{io, CHANGES, CHANGE_GC};
use super::engine::Inner;
use crate::api::{GcStats, Result, TableId, Ts};

/// Per-table GC horizons at this instant.
pub(super) fn horizons(inner: &Inner) -> HashMap<TableId, Ts> {
    let snapshot_horizon = {
        let active = inner.active.lock();
        let latest = inner.latest_ts.load(Ordering::Acquire);
        active.keys().next().copied().unwrap_or(latest).min(latest)
    };
    let mut tables: BTreeSet<TableId> = inner.versions.table_ids().into_iter().collect();
    tables.extend(inner.table_ts.lock().keys().copied());
    let mut out: HashMap<TableId, Ts> = tables.into_iter().map(|t| (t, snapshot_horizon)).collect();
    for per_table in inner.watermarks.lock().values() {
        for (table, wm) in per_table {
            if let Some(h) = out.get_mut(table) {
                *h = (*h).min(*wm);
            }
        }
    }
    out
}

/// Trim the in-memory versions (not the change log) to the current
/// horizons: cheap, no I/O. The commit path calls it whenever the overlay
/// has doubled since the last trim, so memory follows what snapshots and
/// consumers hold back, not the write rate times the GC interval.
pub(super) fn trim_versions(inner: &Inner) -> u64 {
    let on_disk = inner.apply.trim_bound();
    horizons(inner)
        .into_iter()
        .map(|(table, h)| inner.versions.gc_table(table, h, on_disk))
        .sum()
}

/// Change-log entries deleted per redb write transaction. redb has one
/// writer at a time, so every commit waits while GC holds it: GC deletes in
/// bounded batches, each its own transaction, and a waiting commit goes
/// between two batches.
pub(super) const GC_BATCH: usize = 1024;

/// Entries one purge transaction deletes (see [`purge`]).
pub(super) const PURGE_BATCH: usize = 8192;

/// How long one GC pass spends deleting purged tables before it leaves the
/// rest to the next pass.
pub(super) const PURGE_PASS: std::time::Duration = std::time::Duration::from_secs(2);

/// Bytes of change-log entries deleted per batch at most (at least one
/// entry): an index base writes a few hundred 256 KiB chunks, and freeing
/// them all in one transaction held every commit up for most of a second.
pub(super) const GC_BATCH_BYTES: usize = 4 << 20;

/// A table still to collect: `(table, horizon, continuing)`.
type Pending = (TableId, Ts, bool);

/// Run one GC pass.
pub(super) fn run(inner: &Inner) -> Result<GcStats> {
    inner.check_poison()?;
    // What is committed reaches the file first: the change log GC deletes
    // must include it, and its chains can then leave memory.
    inner
        .apply
        .wait_applied(inner.latest_ts.load(Ordering::Acquire))?;
    let horizons = horizons(inner);
    let on_disk = inner.apply.trim_bound();
    let mut stats = GcStats::default();
    for (table, h) in &horizons {
        stats.versions_removed += inner.versions.gc_table(*table, *h, on_disk);
    }
    // Change-log entries above the applied ts are not in the file yet.
    let applied = inner.apply.applied_ts.load(Ordering::Acquire);
    let mut pending: Vec<Pending> = horizons
        .into_iter()
        .map(|(t, h)| (t, h.min(applied), false))
        .collect();
    pending.sort_unstable();
    while !pending.is_empty() {
        // Each batch holds the commit mutex like a commit does and hands it
        // over fairly: a waiting commit runs before the next batch.
        let guard = super::commit::CommitGuard::lock(inner);
        let r = inner.durably(|d| gc_batch(d, &pending));
        guard.unlock_fair();
        let (removed, still) = r?;
        stats.changes_removed += removed;
        pending = still;
    }
    let counts = inner.versions.row_counts();
    inner.durably(|d| d.save_row_counts(&counts))?;
    stats.purged_entries = purge(inner, PURGE_PASS)?;
    tracing::debug!(
        versions = stats.versions_removed,
        changes = stats.changes_removed,
        purged = stats.purged_entries,
        "gc pass"
    );
    Ok(stats)
}

/// Delete rows and change log of purged tables in transactions of at most
/// [`PURGE_BATCH`] entries, for up to `time` (the rest is left to the next
/// pass). No commit writes a purged table, so the commit mutex is not
/// taken. Returns the entries deleted.
pub(super) fn purge(inner: &Inner, time: std::time::Duration) -> Result<u64> {
    let started = std::time::Instant::now();
    let mut removed = 0u64;
    loop {
        let (n, done) = inner.durably(|d| d.purge_batch(PURGE_BATCH))?;
        removed += n as u64;
        for table in done {
            inner.versions.purged(table);
            tracing::info!(table, "purged table deleted from the file");
        }
        if n < PURGE_BATCH || started.elapsed() >= time {
            return Ok(removed);
        }
    }
}

/// One write transaction of a GC pass: delete at most [`GC_BATCH`] (and
/// about [`GC_BATCH_BYTES`])
/// change-log entries at or below the tables' horizons and record each
/// table's new horizon. A table cut short records the ts of its last
/// deleted entry — reads from there on see only entries above it, all
/// intact — and is returned (marked as continuing: its recorded horizon
/// may already equal its target while entries of that ts remain) for the
/// next batch.
fn gc_batch(d: &super::durable::Durable, pending: &[Pending]) -> Result<(u64, Vec<Pending>)> {
    let w = d.begin_write()?;
    let mut removed: u64 = 0;
    let mut still = Vec::new();
    {
        let mut gc_tab = w.open_table(CHANGE_GC).map_err(io)?;
        let mut log = w.open_table(CHANGES).map_err(io)?;
        let mut budget = GC_BATCH;
        let mut bytes_left = GC_BATCH_BYTES;
        for &(table, h, continuing) in pending {
            let old = gc_tab
                .get(table)
                .map_err(io)?
                .map(|g| g.value())
                .unwrap_or(0);
            if h <= old && !continuing {
                continue;
            }
            if budget == 0 || bytes_left == 0 {
                still.push((table, h, continuing));
                continue;
            }
            let mut keys: Vec<(u64, u64, u32)> = Vec::new();
            let mut cut = false;
            for e in log
                .range((table, 0, 0)..=(table, h, u32::MAX))
                .map_err(io)?
            {
                if keys.len() == budget || bytes_left == 0 {
                    cut = true;
                    break;
                }
                let (k, v) = e.map_err(io)?;
                bytes_left = bytes_left.saturating_sub(v.value().len());
                keys.push(k.value());
            }
            for k in &keys {
                log.remove(k).map_err(io)?;
            }
            let finished = !cut;
            budget -= keys.len();
            removed += keys.len() as u64;
            let new_h = match keys.last() {
                Some(last) if !finished => last.1,
                _ => h,
            };
            if new_h > old {
                gc_tab.insert(table, new_h).map_err(io)?;
            }
            if !finished {
                still.push((table, h, true));
            }
        }
    }
    w.commit().map_err(io)?;
    Ok((removed, still))
}
