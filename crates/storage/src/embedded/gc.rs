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

/// Run one GC pass.
pub(super) fn run(inner: &Inner) -> Result<GcStats> {
    inner.check_poison()?;
    let horizons = horizons(inner);
    let mut stats = GcStats::default();
    for (table, h) in &horizons {
        stats.versions_removed += inner.versions.gc_table(*table, *h);
    }
    stats.changes_removed = inner.durably(|d| {
        let w = d.begin_write()?;
        let mut removed: u64 = 0;
        {
            let mut gc_tab = w.open_table(CHANGE_GC).map_err(io)?;
            let mut log = w.open_table(CHANGES).map_err(io)?;
            for (table, h) in &horizons {
                let old = gc_tab
                    .get(*table)
                    .map_err(io)?
                    .map(|g| g.value())
                    .unwrap_or(0);
                if *h <= old {
                    continue;
                }
                log.retain_in((*table, 0, 0)..=(*table, *h, u32::MAX), |_, _| {
                    removed += 1;
                    false
                })
                .map_err(io)?;
                gc_tab.insert(*table, *h).map_err(io)?;
            }
        }
        w.commit().map_err(io)?;
        Ok(removed)
    })?;
    tracing::debug!(
        versions = stats.versions_removed,
        changes = stats.changes_removed,
        "gc pass"
    );
    Ok(stats)
}
