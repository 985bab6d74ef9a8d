//! In-memory multi-version row store.
//!
//! Owns every live row of every table with the versions still needed by
//! some snapshot: per table a `BTreeMap<key, Vec<Version>>` (versions in
//! ascending commit ts) behind its own `RwLock`, plus the table's version GC
//! horizon (`gc_ts`): reads at a `ts` below it are refused because older
//! versions may be gone.
//!
//! This module must never decide commit order or touch the disk; it only
//! installs what the commit path hands it and answers reads at a timestamp.

use std::collections::{BTreeMap, HashMap};
use std::ops::Bound;
use std::sync::Arc;

use parking_lot::RwLock;

use crate::api::{TableId, Ts};

/// One committed version of a row (`None` = deleted).
#[derive(Debug, Clone)]
pub(super) struct Version {
    pub ts: Ts,
    pub value: Option<Vec<u8>>,
}

/// The rows of one table.
#[derive(Debug, Default)]
pub(super) struct TableVersions {
    pub rows: BTreeMap<Vec<u8>, Vec<Version>>,
    /// Reads at `ts < gc_ts` may miss versions.
    pub gc_ts: Ts,
}

/// Newest version visible at `ts`.
fn visible(versions: &[Version], ts: Ts) -> Option<&Version> {
    versions.iter().rev().find(|v| v.ts <= ts)
}

type Shared = Arc<RwLock<TableVersions>>;

/// All tables.
#[derive(Debug, Default)]
pub(super) struct VersionStore {
    tables: RwLock<HashMap<TableId, Shared>>,
}

impl VersionStore {
    fn table(&self, table: TableId) -> Option<Shared> {
        self.tables.read().get(&table).cloned()
    }

    fn table_or_create(&self, table: TableId) -> Shared {
        if let Some(t) = self.table(table) {
            return t;
        }
        self.tables.write().entry(table).or_default().clone()
    }

    /// Ids of all tables held in memory.
    pub fn table_ids(&self) -> Vec<TableId> {
        self.tables.read().keys().copied().collect()
    }

    /// Set the version GC horizon (used at open: only the latest versions
    /// are loaded, so older snapshots cannot be served).
    pub fn set_gc_ts(&self, table: TableId, ts: Ts) {
        let t = self.table_or_create(table);
        let mut g = t.write();
        g.gc_ts = g.gc_ts.max(ts);
    }

    /// Load one row at open.
    pub fn load(&self, table: TableId, key: Vec<u8>, ts: Ts, value: Vec<u8>) {
        let t = self.table_or_create(table);
        t.write().rows.insert(
            key,
            vec![Version {
                ts,
                value: Some(value),
            }],
        );
    }

    /// Keys held for `table` (a key whose newest version is a deletion
    /// counts until GC removes it): a size estimate for planning.
    pub fn key_count(&self, table: TableId) -> u64 {
        self.table(table).map_or(0, |t| t.read().rows.len() as u64)
    }

    /// Value of `key` visible at `ts`.
    pub fn get_at(&self, table: TableId, key: &[u8], ts: Ts) -> Option<Vec<u8>> {
        let t = self.table(table)?;
        let g = t.read();
        g.rows
            .get(key)
            .and_then(|vs| visible(vs, ts))
            .and_then(|v| v.value.clone())
    }

    /// Latest committed value of `key`.
    pub fn latest(&self, table: TableId, key: &[u8]) -> Option<Vec<u8>> {
        self.get_at(table, key, Ts::MAX)
    }

    /// Visit rows visible at `ts` in `(start, end)` in key order until `f`
    /// returns false. Returns `Err(gc_ts)` when `ts` is below the table's
    /// GC horizon.
    pub fn visit_at(
        &self,
        table: TableId,
        ts: Ts,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<(), Ts> {
        let Some(t) = self.table(table) else {
            return Ok(());
        };
        let g = t.read();
        if ts < g.gc_ts {
            return Err(g.gc_ts);
        }
        if !range_is_valid(start, end) {
            return Ok(());
        }
        for (k, vs) in g.rows.range::<[u8], _>((start, end)) {
            if let Some(Version { value: Some(v), .. }) = visible(vs, ts) {
                if !f(k, v) {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Install the writes of a transaction committed at `ts`.
    pub fn install<'a>(
        &self,
        ts: Ts,
        writes: impl IntoIterator<Item = (TableId, &'a [u8], Option<&'a [u8]>)>,
    ) {
        let mut current: Option<(TableId, Shared)> = None;
        for (table, key, value) in writes {
            let t = match &current {
                Some((id, t)) if *id == table => t.clone(),
                _ => {
                    let t = self.table_or_create(table);
                    current = Some((table, t.clone()));
                    t
                }
            };
            let mut g = t.write();
            let version = Version {
                ts,
                value: value.map(<[u8]>::to_vec),
            };
            match g.rows.get_mut(key) {
                Some(vs) => vs.push(version),
                None if value.is_some() => {
                    g.rows.insert(key.to_vec(), vec![version]);
                }
                None => {}
            }
        }
    }

    /// Drop a table from memory.
    pub fn purge(&self, table: TableId) {
        self.tables.write().remove(&table);
    }

    /// Drop versions of `table` nobody at `>= horizon` can see. Returns the
    /// number of versions removed (a key whose only remaining version is an
    /// old tombstone is removed entirely).
    pub fn gc_table(&self, table: TableId, horizon: Ts) -> u64 {
        let Some(t) = self.table(table) else {
            return 0;
        };
        let mut g = t.write();
        g.gc_ts = g.gc_ts.max(horizon);
        let horizon = g.gc_ts;
        let mut removed: u64 = 0;
        g.rows.retain(|_, vs| {
            // Index of the newest version visible at the horizon.
            if let Some(idx) = vs.iter().rposition(|v| v.ts <= horizon) {
                if idx > 0 {
                    vs.drain(..idx);
                    removed += idx as u64;
                }
                if vs.len() == 1 && vs[0].value.is_none() {
                    removed += 1;
                    return false;
                }
            }
            true
        });
        removed
    }
}

/// `BTreeMap::range` panics on inverted or empty-excluded ranges; refuse
/// them up front.
fn range_is_valid(start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
    match (start, end) {
        (Bound::Included(s), Bound::Included(e)) => s <= e,
        (Bound::Included(s), Bound::Excluded(e)) | (Bound::Excluded(s), Bound::Included(e)) => {
            s < e
        }
        (Bound::Excluded(s), Bound::Excluded(e)) => s < e,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(b: &str) -> Option<&[u8]> {
        Some(b.as_bytes())
    }

    #[test]
    fn reads_pick_newest_visible_version() {
        let s = VersionStore::default();
        s.install(1, [(1, &b"k"[..], v("a"))]);
        s.install(3, [(1, &b"k"[..], v("b"))]);
        s.install(5, [(1, &b"k"[..], None)]);
        assert_eq!(s.get_at(1, b"k", 0), None);
        assert_eq!(s.get_at(1, b"k", 2).as_deref(), Some(&b"a"[..]));
        assert_eq!(s.get_at(1, b"k", 4).as_deref(), Some(&b"b"[..]));
        assert_eq!(s.get_at(1, b"k", 5), None);
        assert_eq!(s.latest(1, b"k"), None);
    }

    #[test]
    fn gc_keeps_version_visible_at_horizon() {
        let s = VersionStore::default();
        s.install(1, [(1, &b"k"[..], v("a"))]);
        s.install(3, [(1, &b"k"[..], v("b"))]);
        s.install(5, [(1, &b"k"[..], v("c"))]);
        assert_eq!(s.gc_table(1, 4), 1);
        assert_eq!(s.get_at(1, b"k", 4).as_deref(), Some(&b"b"[..]));
        assert_eq!(s.get_at(1, b"k", 9).as_deref(), Some(&b"c"[..]));
        assert!(s
            .visit_at(1, 3, Bound::Unbounded, Bound::Unbounded, |_, _| true)
            .is_err());
        s.install(6, [(1, &b"k"[..], None)]);
        // Two versions go (b, c) and the tombstone with them.
        assert_eq!(s.gc_table(1, 6), 3);
        assert_eq!(s.table_or_create(1).read().rows.len(), 0);
    }

    #[test]
    fn inverted_range_is_empty_not_panic() {
        let s = VersionStore::default();
        s.install(1, [(1, &b"a"[..], v("x"))]);
        let mut n = 0;
        s.visit_at(
            1,
            1,
            Bound::Excluded(&b"b"[..]),
            Bound::Excluded(&b"b"[..]),
            |_, _| {
                n += 1;
                true
            },
        )
        .unwrap();
        assert_eq!(n, 0);
    }
}
