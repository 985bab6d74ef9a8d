//! Multi-version rows: the rows on disk, the recent versions in memory.
//!
//! The redb file's `rows` table holds every row as of the applier's last
//! write (`table ++ key -> commit_ts ++ value`; a deleted row is absent;
//! see `apply`). Reads go through redb's own ordered B-tree and its bounded page
//! cache, so memory does not grow with the data and opening the database
//! reads no rows.
//!
//! What snapshots still need of the past lives in memory, in each table's
//! **overlay**: for every key committed after the table's overlay horizon
//! `gc_ts`, its chain of versions — the version visible at the horizon
//! (stored with ts 0, "since before the horizon"; `None` when the key did
//! not exist) followed by every newer one, the newest the latest committed
//! version — also the row on disk once the applier has written it. The
//! overlay therefore grows with the write rate times the age of the oldest
//! snapshot or consumer watermark (and the applier's lag, bounded by the
//! commit log's size), not with the table; GC (`gc_table`) trims it as the
//! horizon moves, never a chain whose newest version some open reader's
//! file may lack.
//!
//! A read at snapshot `ts` (`ts >= gc_ts`, else refused) takes the key's
//! chain when it has one (it holds every version since before the
//! horizon), and otherwise the row on disk, whose commit ts is then
//! `<= ts` (a newer one without a chain is reported as corruption, never
//! shown). Reads never assume the file holds a key's newest version. This
//! is exact because of two orders:
//! * the commit path installs a group's chains **before** it publishes the
//!   group (and removes them again if its log write fails), and the
//!   applier writes a group to redb only after that, so a reader that sees
//!   a newer row on disk finds its chain;
//! * a reader registers the applied ts and then opens its redb read
//!   transaction **before** it looks at the overlay, and GC removes a chain
//!   only once its newest version is at or below the horizon *and* at or
//!   below every registered reader's applied ts (`apply::trim_bound`) — so
//!   a chain a reader misses belongs to a row whose disk version its own
//!   file holds.
//!
//! This module must never decide commit order or write to the file; it
//! installs what the commit path hands it and answers reads at a
//! timestamp.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use foldhash::HashMap;
use parking_lot::RwLock;
use redb::{ReadOnlyTable, ReadTransaction};

use super::durable::{io, row_key, rows_of_table, split_u64, ROWS};
use crate::api::{Result, StorageError, TableId, Ts};

/// The `rows` table as one redb read transaction sees it (it keeps that
/// transaction's snapshot of the file alive).
pub(super) type Rows = ReadOnlyTable<&'static [u8], &'static [u8]>;

/// Open the `rows` table in `r`.
pub(super) fn open_rows(r: &ReadTransaction) -> Result<Rows> {
    r.open_table(ROWS).map_err(io)
}

/// One committed version of a row (`None` = absent).
#[derive(Debug, Clone)]
pub(super) struct Version {
    pub ts: Ts,
    pub value: Option<Vec<u8>>,
}

/// The in-memory part of one table.
#[derive(Debug, Default)]
pub(super) struct TableVersions {
    /// Version chains of the keys committed after `gc_ts` (see the module
    /// doc), oldest first.
    pub overlay: BTreeMap<Vec<u8>, Vec<Version>>,
    /// Reads at `ts < gc_ts` may miss versions.
    pub gc_ts: Ts,
    /// Rows on disk (committed, latest versions): a planner's estimate.
    pub rows: u64,
    /// No key the table holds, in the overlay or on disk, is greater:
    /// `Some(None)` when it holds none, `None` until first learnt
    /// ([`VersionStore::latest`]); then raised by every install. A key
    /// above it is absent without a read of the file — the primary-key
    /// check of an INSERT of ever larger ids (an auto-increment key) was
    /// ~8 % of a 100-row INSERT's time in that read.
    pub max_key: Option<Option<Vec<u8>>>,
    /// For a table every statement reads (a catalog,
    /// [`VersionStore::cache_latest`]): latest values read from the file
    /// (`None`: absent) of keys without a chain, so the next latest read
    /// of the key needs no file read. Filled only while the key has no
    /// chain, under the write latch, by a registered reader (so its file
    /// holds the key's newest version: see [`VersionStore::latest`]);
    /// an install of the key removes it. `None`: not kept.
    pub latest_cache: Option<HashMap<Vec<u8>, Option<Vec<u8>>>>,
}

/// Keys whose latest value one table's [`TableVersions::latest_cache`]
/// holds at most (further ones are read from the file each time).
const LATEST_CACHE_MAX: usize = 65_536;

/// Learn `t`'s key bound ([`TableVersions::max_key`]): the larger of the
/// last key of the table in `rows` and the last key of its overlay, read
/// after it under the table's write latch. `rows` belongs to a registered
/// reader (`apply::register_reader`), so a row written to the file after
/// `rows` was opened still has its chain in the overlay (GC trims no chain
/// newer than a registered reader's file), and a chain GC trims before the
/// latch is taken is a row `rows` holds; a write installed meanwhile is in
/// the overlay too (installs take the same latch).
fn learn_max_key(t: &Shared, rows: &Rows, table: TableId) -> Result<()> {
    let last = rows_of_table(rows, table)?
        .next_back()
        .transpose()
        .map_err(io)?;
    let on_disk = match last {
        Some((k, _)) => Some(
            k.value()
                .get(8..)
                .ok_or_else(|| StorageError::Corrupt("short row key".into()))?
                .to_vec(),
        ),
        None => None,
    };
    let mut g = t.write();
    if g.max_key.is_none() {
        let in_memory = g.overlay.keys().next_back().cloned();
        g.max_key = Some(on_disk.max(in_memory));
    }
    Ok(())
}

/// Newest version visible at `ts`.
fn visible(versions: &[Version], ts: Ts) -> Option<&Version> {
    versions.iter().rev().find(|v| v.ts <= ts)
}

type Shared = Arc<RwLock<TableVersions>>;

/// A row as stored on disk: its commit ts and value.
fn decode_row(v: &[u8]) -> Result<(Ts, &[u8])> {
    split_u64(v).ok_or_else(|| StorageError::Corrupt("short row value".into()))
}

/// What one committed write did, for [`VersionStore::install`].
pub(super) struct Installed<'a> {
    pub table: TableId,
    pub key: &'a [u8],
    pub old: Option<&'a [u8]>,
    pub new: Option<&'a [u8]>,
}

/// All tables.
#[derive(Debug, Default)]
pub(super) struct VersionStore {
    tables: RwLock<HashMap<TableId, Shared>>,
    /// Versions (chain entries) in all overlays.
    entries: AtomicUsize,
    /// Tables purged whose rows the background purge is still deleting
    /// from the file: they read as empty.
    purging: RwLock<HashSet<TableId>>,
    /// `purging.len()`, so reads of other tables skip the set.
    purging_n: AtomicUsize,
    /// Run by [`VersionStore::latest`] between its file read and its
    /// cache fill (tests: a commit landing in that gap).
    #[cfg(test)]
    before_cache_fill: TestHook,
}

/// A closure a test runs once at a point of a read.
#[cfg(test)]
#[derive(Default)]
struct TestHook(parking_lot::Mutex<Option<Box<dyn FnOnce() + Send>>>);

#[cfg(test)]
impl std::fmt::Debug for TestHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TestHook")
    }
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

    /// Ids of all tables known in memory.
    pub fn table_ids(&self) -> Vec<TableId> {
        self.tables.read().keys().copied().collect()
    }

    /// Set the version GC horizon (at open no older version is known, so
    /// snapshots before a table's last commit cannot be served).
    pub fn set_gc_ts(&self, table: TableId, ts: Ts) {
        let t = self.table_or_create(table);
        let mut g = t.write();
        g.gc_ts = g.gc_ts.max(ts);
    }

    /// Set a table's row count (at open).
    pub fn set_rows(&self, table: TableId, rows: u64) {
        self.table_or_create(table).write().rows = rows;
    }

    /// Rows `table` holds on disk: a size estimate for planning.
    pub fn key_count(&self, table: TableId) -> u64 {
        self.table(table).map_or(0, |t| t.read().rows)
    }

    /// Every table's row count.
    pub fn row_counts(&self) -> Vec<(TableId, u64)> {
        let tables: Vec<(TableId, Shared)> = self
            .tables
            .read()
            .iter()
            .map(|(id, t)| (*id, t.clone()))
            .collect();
        tables
            .into_iter()
            .map(|(id, t)| (id, t.read().rows))
            .collect()
    }

    /// Refuse a read below the table's horizon.
    fn check_horizon(&self, table: TableId, ts: Ts) -> Result<()> {
        let gc_ts = self.table(table).map_or(0, |t| t.read().gc_ts);
        if ts < gc_ts {
            return Err(StorageError::ChangesGone { table, gc_ts });
        }
        Ok(())
    }

    /// Value of `key` visible at `ts`, read in `rows` (of a read
    /// transaction begun before this call looks at the overlay).
    pub fn get_at(
        &self,
        rows: &Rows,
        table: TableId,
        key: &[u8],
        ts: Ts,
    ) -> Result<Option<Vec<u8>>> {
        if self.is_purging(table) {
            return Ok(None);
        }
        // A key's chain, when it has one, holds every version since before
        // the horizon: it answers alone (as in `visit_at`).
        if let Some(found) = self.chain_read(table, key, |vs| {
            visible(vs, ts).and_then(|v| v.value.clone())
        }) {
            return Ok(found);
        }
        match rows.get(row_key(table, key).as_slice()).map_err(io)? {
            Some(v) => {
                let (row_ts, value) = decode_row(v.value())?;
                // Newer than `ts` with no chain: cannot happen (see the
                // module doc); never show a version the snapshot must not
                // see.
                if row_ts > ts {
                    return Err(StorageError::Corrupt(format!(
                        "row of table {table} committed at {row_ts} has no older version for snapshot {ts}"
                    )));
                }
                Ok(Some(value.to_vec()))
            }
            None => Ok(None),
        }
    }

    /// Latest committed value of `key`: its chain's newest version, else
    /// the row on disk (or the table's [`TableVersions::latest_cache`] of
    /// it). `rows` belongs to a registered reader.
    pub fn latest(&self, rows: &Rows, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        if self.is_purging(table) {
            return Ok(None);
        }
        let t = self.table(table);
        let mut cached_table = false;
        if let Some(t) = &t {
            let g = t.read();
            if let Some(vs) = g.overlay.get(key) {
                return Ok(vs.last().and_then(|v| v.value.clone()));
            }
            if let Some(c) = &g.latest_cache {
                if let Some(v) = c.get(key) {
                    metrics::counter!("tributary_cache_hits_total", "cache" => "catalog")
                        .increment(1);
                    return Ok(v.clone());
                }
                metrics::counter!("tributary_cache_misses_total", "cache" => "catalog")
                    .increment(1);
                cached_table = true;
            }
            if g.max_key.is_none() {
                drop(g);
                learn_max_key(t, rows, table)?;
            }
        }
        let value = match rows.get(row_key(table, key).as_slice()).map_err(io)? {
            Some(v) => Some(decode_row(v.value())?.1.to_vec()),
            None => None,
        };
        #[cfg(test)]
        if let Some(f) = self.before_cache_fill.0.lock().take() {
            f();
        }
        if let (true, Some(t)) = (cached_table, &t) {
            // Still no chain: any version committed since `rows` was
            // opened would have one (GC trims no chain newer than a
            // registered reader's file), so `value` is the newest.
            let mut g = t.write();
            if !g.overlay.contains_key(key) {
                if let Some(c) = g
                    .latest_cache
                    .as_mut()
                    .filter(|c| c.len() < LATEST_CACHE_MAX)
                {
                    c.insert(key.to_vec(), value.clone());
                }
            }
        }
        Ok(value)
    }

    /// Keep `table`'s latest values in memory once read (see
    /// [`TableVersions::latest_cache`]).
    pub fn cache_latest(&self, table: TableId) {
        let t = self.table_or_create(table);
        t.write().latest_cache.get_or_insert_with(HashMap::default);
    }

    /// Whether `table` holds no key at or above `key` (so `key` has no
    /// latest version), known without reading the file; false when the
    /// table's key bound is not learnt yet.
    pub fn above_all_keys(&self, table: TableId, key: &[u8]) -> bool {
        let Some(t) = self.table(table) else {
            return false;
        };
        let g = t.read();
        match &g.max_key {
            Some(Some(max)) => key > max.as_slice(),
            Some(None) => true,
            None => false,
        }
    }

    /// `f` of `key`'s chain, if it has one.
    fn chain_read<T>(
        &self,
        table: TableId,
        key: &[u8],
        f: impl FnOnce(&[Version]) -> T,
    ) -> Option<T> {
        let t = self.table(table)?;
        let g = t.read();
        g.overlay.get(key).map(|vs| f(vs))
    }

    /// Visit rows visible at `ts` in `(start, end)` in key order until `f`
    /// returns false. Fails with `ChangesGone` below the table's horizon.
    pub fn visit_at(
        &self,
        rows: &Rows,
        table: TableId,
        ts: Ts,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        mut f: impl FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.check_horizon(table, ts)?;
        if !range_is_valid(start, end) || self.is_purging(table) {
            return Ok(());
        }
        // The overlay's say on the range, fetched a batch at a time so no
        // latch is held while `f` runs.
        let mut chains = Chains {
            table: self.table(table),
            ts,
            from: start.map(<[u8]>::to_vec),
            end,
            batch: std::collections::VecDeque::new(),
        };
        let lo = match start {
            Bound::Included(s) => Bound::Included(row_key(table, s)),
            Bound::Excluded(s) => Bound::Excluded(row_key(table, s)),
            Bound::Unbounded => Bound::Included(table.to_be_bytes().to_vec()),
        };
        let hi = match end {
            Bound::Included(e) => Bound::Included(row_key(table, e)),
            Bound::Excluded(e) => Bound::Excluded(row_key(table, e)),
            Bound::Unbounded => match table.checked_add(1) {
                Some(next) => Bound::Excluded(next.to_be_bytes().to_vec()),
                None => Bound::Unbounded,
            },
        };
        let range = rows
            .range::<&[u8]>((as_ref(&lo), as_ref(&hi)))
            .map_err(io)?;
        for item in range {
            let (k, v) = item.map_err(io)?;
            let key = &k.value()[8..];
            // Chains of keys before this row: rows absent on disk now but
            // present at `ts`.
            while let Some((ck, cv)) = chains.peek() {
                if ck.as_slice() >= key {
                    break;
                }
                if let Some(cv) = cv {
                    if !f(ck, cv) {
                        return Ok(());
                    }
                }
                chains.pop();
            }
            let (row_ts, value) = decode_row(v.value())?;
            let go_on = match chains.peek() {
                Some((ck, cv)) if ck.as_slice() == key => {
                    let go_on = match cv {
                        Some(cv) => f(key, cv),
                        None => true,
                    };
                    chains.pop();
                    go_on
                }
                _ if row_ts <= ts => f(key, value),
                // Newer than `ts` with no chain: cannot happen (see the
                // module doc); never show a version the snapshot must not
                // see.
                _ => {
                    return Err(StorageError::Corrupt(format!(
                        "row of table {table} committed at {row_ts} has no older version for snapshot {ts}"
                    )))
                }
            };
            if !go_on {
                return Ok(());
            }
        }
        while let Some((ck, cv)) = chains.peek() {
            if let Some(cv) = cv {
                if !f(ck, cv) {
                    break;
                }
            }
            chains.pop();
        }
        Ok(())
    }

    /// Up to `parts - 1` increasing keys that cut `table` into `parts`
    /// ranges of about equal key span: interpolated between the first and
    /// the last key on disk, on their first 8 bytes read as a big-endian
    /// number (exact spans for integer primary keys, an approximation for
    /// others). Empty when the table has fewer than two distinct such
    /// prefixes. The cuts only balance the work: any keys are correct.
    pub fn split_keys(&self, rows: &Rows, table: TableId, parts: usize) -> Result<Vec<Vec<u8>>> {
        if self.is_purging(table) {
            return Ok(Vec::new());
        }
        let mut range = rows_of_table(rows, table)?;
        let prefix = |k: &[u8]| {
            let mut b = [0u8; 8];
            let key = k.get(8..).unwrap_or_default();
            let n = key.len().min(8);
            b[..n].copy_from_slice(&key[..n]);
            u64::from_be_bytes(b)
        };
        let first = match range.next() {
            Some(item) => prefix(item.map_err(io)?.0.value()),
            None => return Ok(Vec::new()),
        };
        let last = match range.next_back() {
            Some(item) => prefix(item.map_err(io)?.0.value()),
            None => return Ok(Vec::new()),
        };
        let span = u128::from(last.saturating_sub(first));
        let parts = parts.max(1) as u128;
        let mut out: Vec<Vec<u8>> = Vec::new();
        for i in 1..parts {
            let cut = u128::from(first) + span * i / parts;
            let cut = u64::try_from(cut)
                .unwrap_or(u64::MAX)
                .to_be_bytes()
                .to_vec();
            if cut.as_slice() > first.to_be_bytes().as_slice()
                && out.last().is_none_or(|p| p < &cut)
            {
                out.push(cut);
            }
        }
        Ok(out)
    }

    /// Add the versions of a transaction committed at `ts` to the overlay.
    /// Called before the write reaches the file (see the module doc).
    pub fn install<'a>(&self, ts: Ts, writes: impl IntoIterator<Item = Installed<'a>>) {
        let mut current: Option<(TableId, Shared)> = None;
        for w in writes {
            let t = match &current {
                Some((id, t)) if *id == w.table => t.clone(),
                _ => {
                    let t = self.table_or_create(w.table);
                    current = Some((w.table, t.clone()));
                    t
                }
            };
            let mut g = t.write();
            if let Some(c) = g.latest_cache.as_mut() {
                c.remove(w.key);
            }
            let version = Version {
                ts,
                value: w.new.map(<[u8]>::to_vec),
            };
            match (w.old.is_some(), w.new.is_some()) {
                (false, true) => g.rows += 1,
                (true, false) => g.rows = g.rows.saturating_sub(1),
                _ => {}
            }
            if w.new.is_some() {
                if let Some(max) = &mut g.max_key {
                    match max {
                        Some(m) if w.key > m.as_slice() => {
                            m.clear();
                            m.extend_from_slice(w.key);
                        }
                        Some(_) => {}
                        None => *max = Some(w.key.to_vec()),
                    }
                }
            }
            match g.overlay.get_mut(w.key) {
                Some(vs) => {
                    vs.push(version);
                    self.entries.fetch_add(1, Ordering::Relaxed);
                }
                None => {
                    let before = Version {
                        ts: 0,
                        value: w.old.map(<[u8]>::to_vec),
                    };
                    g.overlay.insert(w.key.to_vec(), vec![before, version]);
                    self.entries.fetch_add(2, Ordering::Relaxed);
                }
            }
        }
    }

    /// Take back what [`VersionStore::install`] added at `ts` (its write
    /// failed): versions at `ts` go, and a chain left with only its
    /// before-image goes with them.
    pub fn uninstall<'a>(&self, ts: Ts, writes: impl IntoIterator<Item = Installed<'a>>) {
        for w in writes {
            let Some(t) = self.table(w.table) else {
                continue;
            };
            let mut g = t.write();
            if let Some(c) = g.latest_cache.as_mut() {
                c.remove(w.key);
            }
            match (w.old.is_some(), w.new.is_some()) {
                (false, true) => g.rows = g.rows.saturating_sub(1),
                (true, false) => g.rows += 1,
                _ => {}
            }
            if let Some(vs) = g.overlay.get_mut(w.key) {
                let before = vs.len();
                vs.retain(|v| v.ts != ts);
                let mut gone = before - vs.len();
                if vs.len() <= 1 {
                    gone += vs.len();
                    g.overlay.remove(w.key);
                }
                self.entries.fetch_sub(gone, Ordering::Relaxed);
            }
        }
    }

    /// Drop a table from memory; until [`VersionStore::purged`] it reads
    /// as empty whatever of it the file still holds.
    pub fn purge(&self, table: TableId) {
        {
            let mut p = self.purging.write();
            p.insert(table);
            self.purging_n.store(p.len(), Ordering::Release);
        }
        if let Some(t) = self.tables.write().remove(&table) {
            let n: usize = t.read().overlay.values().map(Vec::len).sum();
            self.entries.fetch_sub(n, Ordering::Relaxed);
        }
    }

    /// The file holds nothing more of a purged table.
    pub fn purged(&self, table: TableId) {
        let mut p = self.purging.write();
        p.remove(&table);
        self.purging_n.store(p.len(), Ordering::Release);
    }

    /// Whether `table` is being purged (reads as empty).
    pub fn is_purging(&self, table: TableId) -> bool {
        self.purging_n.load(Ordering::Acquire) > 0 && self.purging.read().contains(&table)
    }

    /// Drop versions of `table` nobody at `>= horizon` can see. Returns the
    /// number of versions removed (a chain whose newest version is at or
    /// below the horizon goes entirely: the row on disk is that version).
    /// A chain whose newest version is above `on_disk_upto` stays (only
    /// its versions older than the horizon go): the row on disk may not be
    /// that version yet, for some open reader.
    pub fn gc_table(&self, table: TableId, horizon: Ts, on_disk_upto: Ts) -> u64 {
        let Some(t) = self.table(table) else {
            return 0;
        };
        let mut g = t.write();
        g.gc_ts = g.gc_ts.max(horizon);
        let horizon = g.gc_ts;
        let mut removed: u64 = 0;
        // What counts as a removed version: a value or a deletion, not a
        // chain's "absent before" marker, nor the newest version of a row
        // (which stays, on disk).
        let real = |v: &Version| v.ts > 0 || v.value.is_some();
        let mut gone = 0usize;
        g.overlay.retain(|_, vs| {
            // Index of the newest version visible at the horizon.
            let Some(idx) = vs.iter().rposition(|v| v.ts <= horizon) else {
                return true;
            };
            let newest = vs.last().map_or(0, |v| v.ts);
            if idx + 1 == vs.len() && newest <= on_disk_upto {
                let on_disk = vs.last().is_some_and(|v| v.value.is_some());
                let n = vs.iter().filter(|v| real(v)).count() - usize::from(on_disk);
                removed += n as u64;
                gone += vs.len();
                return false;
            }
            removed += vs[..idx].iter().filter(|v| real(v)).count() as u64;
            gone += idx;
            vs.drain(..idx);
            true
        });
        self.entries.fetch_sub(gone, Ordering::Relaxed);
        removed
    }

    /// Versions held in memory (all tables): what the overlay costs.
    pub fn overlay_versions(&self) -> usize {
        self.entries.load(Ordering::Relaxed)
    }
}

/// Chains an overlay range holds, in key order, as visible at `ts`
/// (`None`: absent at `ts`), read under the table's latch a batch at a time.
struct Chains<'a> {
    table: Option<Shared>,
    ts: Ts,
    /// Where the next batch starts.
    from: Bound<Vec<u8>>,
    end: Bound<&'a [u8]>,
    batch: std::collections::VecDeque<(Vec<u8>, Option<Vec<u8>>)>,
}

/// Chains fetched per latch.
const CHAIN_BATCH: usize = 256;

impl Chains<'_> {
    fn peek(&mut self) -> Option<&(Vec<u8>, Option<Vec<u8>>)> {
        if self.batch.is_empty() {
            self.refill();
        }
        self.batch.front()
    }

    fn pop(&mut self) {
        self.batch.pop_front();
    }

    fn refill(&mut self) {
        let Some(t) = self.table.clone() else {
            return;
        };
        if !range_is_valid(as_ref(&self.from), self.end) {
            return;
        }
        let ts = self.ts;
        {
            let g = t.read();
            self.batch.extend(
                g.overlay
                    .range::<[u8], _>((as_ref(&self.from), self.end))
                    .take(CHAIN_BATCH)
                    .map(|(k, vs)| (k.clone(), visible(vs, ts).and_then(|v| v.value.clone()))),
            );
        }
        match self.batch.back() {
            Some((k, _)) if self.batch.len() == CHAIN_BATCH => {
                self.from = Bound::Excluded(k.clone());
            }
            // Fewer than a batch: the range is done.
            _ => self.table = None,
        }
    }
}

/// A borrowed view of an owned bound.
fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(v) => Bound::Included(v.as_slice()),
        Bound::Excluded(v) => Bound::Excluded(v.as_slice()),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// `BTreeMap::range` panics on inverted or empty-excluded ranges; refuse
/// them up front.
pub(super) fn range_is_valid(start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
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
    use std::sync::Arc;

    use super::super::commit::Durability;
    use super::super::durable::{tests::txn, Durable};
    use super::*;
    use crate::api::ChangeKind;

    const T: TableId = 7;

    fn write(d: &Durable, ts: Ts, key: &[u8], value: &[u8]) {
        let group = txn(ts, &[(T, ChangeKind::Update, key, Some(value))]);
        d.commit_group(
            [(ts, &group[..])],
            &Default::default(),
            Durability::Immediate,
        )
        .unwrap();
    }

    fn rows(d: &Durable) -> Rows {
        open_rows(&d.db.begin_read().unwrap()).unwrap()
    }

    /// A commit that installs the key after a latest read found no chain
    /// and read the file, but before that read fills the cache: the value
    /// read (older) is not cached, so once GC trims the new chain a latest
    /// read finds the new value in the file, not the old one in the cache.
    #[test]
    fn a_value_read_while_a_commit_installs_the_key_is_not_cached() {
        let dir = tempfile::tempdir().unwrap();
        let d = Arc::new(Durable::open_file(dir.path(), 1 << 20).unwrap());
        let vs = Arc::new(VersionStore::default());
        vs.cache_latest(T);
        write(&d, 1, b"k", b"v1");
        let old = rows(&d);
        let (vs2, d2) = (vs.clone(), d.clone());
        *vs.before_cache_fill.0.lock() = Some(Box::new(move || {
            vs2.install(
                2,
                [Installed {
                    table: T,
                    key: b"k",
                    old: Some(b"v1"),
                    new: Some(b"v2"),
                }],
            );
            write(&d2, 2, b"k", b"v2");
        }));
        // The read began before the commit: either value is right for it.
        assert_eq!(vs.latest(&old, T, b"k").unwrap(), Some(b"v1".to_vec()));
        drop(old);
        // The commit's version is on disk and no reader lacks it: trimmed.
        vs.gc_table(T, 2, 2);
        assert_eq!(vs.overlay_versions(), 0);
        assert_eq!(vs.latest(&rows(&d), T, b"k").unwrap(), Some(b"v2".to_vec()));
        // Read from the file now, with no chain: cached, and served.
        assert_eq!(vs.latest(&rows(&d), T, b"k").unwrap(), Some(b"v2".to_vec()));
        let cached = vs
            .table(T)
            .unwrap()
            .read()
            .latest_cache
            .as_ref()
            .map(|c| c.len());
        assert_eq!(cached, Some(1));
    }
}
