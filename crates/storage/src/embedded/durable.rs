//! redb persistence: the one file that makes the embedded backend durable.
//!
//! Owns the table layout inside redb and every write transaction against it.
//! Rows are stored as `table_id BE ++ key -> commit_ts BE ++ value` (latest
//! version only); the change log as `(table, commit_ts, seq) -> encoded
//! change`. Every write here commits with `Durability::Immediate` (fsync),
//! except commit groups in periodic mode, which the periodic flush makes
//! durable.
//!
//! This module must never hold in-memory state of its own or decide
//! visibility: it stores what the engine hands it and reports every redb
//! failure as [`StorageError::Io`].

use std::collections::HashMap;
use std::fmt::Display;
use std::path::Path;

use redb::{Database, Durability, ReadableTable, TableDefinition, WriteTransaction};

use super::changelog;
use crate::api::{Change, ChangeKind, Result, StorageError, TableId, Ts};

/// Latest row versions: `table BE ++ key -> commit_ts BE ++ value`.
pub(super) const ROWS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("rows");
/// Change log: `(table, commit_ts, seq) -> encoded change`.
pub(super) const CHANGES: TableDefinition<(u64, u64, u32), &[u8]> = TableDefinition::new("changes");
/// Scalar counters (`commit_ts`).
pub(super) const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
/// Named id sequences: name -> last allocated id.
pub(super) const SEQUENCES: TableDefinition<&str, u64> = TableDefinition::new("sequences");
/// Per table: rows it holds (latest versions), an estimate saved by GC
/// passes and at close.
pub(super) const ROW_COUNTS: TableDefinition<u64, u64> = TableDefinition::new("row_counts");
/// Per table: commit ts of the last transaction that wrote it; under
/// [`COMMIT_TS_KEY`], the last commit ts of all.
pub(super) const TABLE_TS: TableDefinition<u64, u64> = TableDefinition::new("table_ts");
/// Per table: change-log GC horizon (entries `<=` it are gone).
pub(super) const CHANGE_GC: TableDefinition<u64, u64> = TableDefinition::new("change_gc");
/// Consumer low watermarks: `(consumer, table) -> ts`.
pub(super) const WATERMARKS: TableDefinition<(&str, u64), u64> = TableDefinition::new("watermarks");
/// Leases: name -> encoded (holder, expiry in ms since the Unix epoch).
pub(super) const LEASES: TableDefinition<&str, &[u8]> = TableDefinition::new("leases");
/// Tables purged whose rows and change log are still being deleted, in
/// bounded batches by [`Durable::purge_batch`].
pub(super) const PURGES: TableDefinition<u64, ()> = TableDefinition::new("purges");
/// Tables whose changes are stored only while a consumer reads them (see
/// [`super::changelog::Gate`]).
pub(super) const ON_DEMAND: TableDefinition<u64, ()> = TableDefinition::new("log_on_demand");

const META_COMMIT_TS: &str = "commit_ts";
/// The [`TABLE_TS`] key of the last commit ts (no table has this id).
pub(super) const COMMIT_TS_KEY: u64 = u64::MAX;
/// Set once [`ROW_COUNTS`] is kept (files written before it had none).
const META_ROW_COUNTS: &str = "row_counts_kept";
const DB_FILE: &str = "tributary.redb";

/// Map any redb error to the sticky I/O error.
pub(super) fn io(e: impl Display) -> StorageError {
    StorageError::Io(e.to_string())
}

/// Restrict `path` to its owner (the data directory 0700, its file 0600):
/// table data is nobody else's to read.
fn private(path: &Path, mode: u32) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(io)?;
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// Key of a row in [`ROWS`].
pub(super) fn row_key(table: TableId, key: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(8 + key.len());
    k.extend_from_slice(&table.to_be_bytes());
    k.extend_from_slice(key);
    k
}

/// Every row of `table` in [`ROWS`] (of a read or a write transaction), in
/// key order.
pub(super) fn rows_of_table<T>(
    rows: &T,
    table: TableId,
) -> Result<redb::Range<'_, &'static [u8], &'static [u8]>>
where
    T: ReadableTable<&'static [u8], &'static [u8]>,
{
    let lo = table.to_be_bytes();
    match table.checked_add(1) {
        Some(next) => rows.range::<&[u8]>(lo.as_slice()..next.to_be_bytes().as_slice()),
        None => rows.range::<&[u8]>(lo.as_slice()..),
    }
    .map_err(io)
}

/// Raise `table`'s change-log GC horizon to `h` (reads from below it fail).
fn raise_horizon(w: &WriteTransaction, table: TableId, h: Ts) -> Result<()> {
    if h == 0 {
        return Ok(());
    }
    let mut gc = w.open_table(CHANGE_GC).map_err(io)?;
    let old = gc.get(table).map_err(io)?.map_or(0, |g| g.value());
    if h > old {
        gc.insert(table, h).map_err(io)?;
    }
    Ok(())
}

/// Split a [`ROWS`] key into `(table, key)`.
fn split_row_key(k: &[u8]) -> Result<(TableId, Vec<u8>)> {
    let (t, rest) = split_u64(k).ok_or_else(|| StorageError::Corrupt("short row key".into()))?;
    Ok((t, rest.to_vec()))
}

/// Split a leading big-endian u64 off `b`.
pub(super) fn split_u64(b: &[u8]) -> Option<(u64, &[u8])> {
    let (head, rest) = b.split_first_chunk::<8>()?;
    Some((u64::from_be_bytes(*head), rest))
}

/// What is read from disk at open: bookkeeping only, never rows.
#[derive(Debug, Default)]
pub(super) struct Loaded {
    pub commit_ts: Ts,
    pub table_ts: HashMap<TableId, Ts>,
    /// Rows per table (latest versions).
    pub row_counts: HashMap<TableId, u64>,
    /// Tables whose purge is not finished.
    pub purging: Vec<TableId>,
}

/// The redb database.
pub(super) struct Durable {
    pub db: Database,
}

/// One row write of a commit group: (row key, commit ts, the new value or
/// `None` for a delete).
type RowWrite<'a> = (Vec<u8>, Ts, Option<&'a [u8]>);

impl Durable {
    /// The last commit ts stored in the file: kept in [`TABLE_TS`] under
    /// [`COMMIT_TS_KEY`] (beside the per-table entries every commit writes
    /// anyway, so a commit touches one tree fewer); files from before keep
    /// it in [`META`].
    pub fn commit_ts(&self) -> Result<Ts> {
        let r = self.db.begin_read().map_err(io)?;
        let meta = r.open_table(META).map_err(io)?;
        let old = meta
            .get(META_COMMIT_TS)
            .map_err(io)?
            .map_or(0, |g| g.value());
        let tts = r.open_table(TABLE_TS).map_err(io)?;
        let new = tts.get(COMMIT_TS_KEY).map_err(io)?.map_or(0, |g| g.value());
        Ok(old.max(new))
    }

    /// Persist the row counts (they are an estimate: written by GC passes
    /// and at close, not by every commit).
    pub fn save_row_counts(&self, counts: &[(TableId, u64)]) -> Result<()> {
        let w = self.begin_write()?;
        {
            let mut t = w.open_table(ROW_COUNTS).map_err(io)?;
            for (table, n) in counts {
                t.insert(*table, *n).map_err(io)?;
            }
        }
        w.commit().map_err(io)
    }

    /// Open (or create) the database file without loading it (also used to
    /// reopen it after an I/O failure).
    pub fn open_file(dir: &Path, cache_bytes: usize) -> Result<Self> {
        std::fs::create_dir_all(dir).map_err(io)?;
        private(dir, 0o700)?;
        let db = redb::Builder::new()
            .set_cache_size(cache_bytes)
            .create(dir.join(DB_FILE))
            .map_err(io)?;
        private(&dir.join(DB_FILE), 0o600)?;
        let me = Self { db };
        // Make sure every table exists so read transactions never see
        // `TableDoesNotExist`.
        let w = me.begin_write()?;
        {
            w.open_table(ROWS).map_err(io)?;
            w.open_table(CHANGES).map_err(io)?;
            w.open_table(META).map_err(io)?;
            w.open_table(SEQUENCES).map_err(io)?;
            w.open_table(TABLE_TS).map_err(io)?;
            w.open_table(CHANGE_GC).map_err(io)?;
            w.open_table(WATERMARKS).map_err(io)?;
            w.open_table(LEASES).map_err(io)?;
            w.open_table(ROW_COUNTS).map_err(io)?;
            w.open_table(PURGES).map_err(io)?;
            w.open_table(ON_DEMAND).map_err(io)?;
        }
        w.commit().map_err(io)?;
        Ok(me)
    }

    /// Files written before [`ROW_COUNTS`] existed: count every table's rows
    /// once (one scan, at the first open of such a file).
    fn count_rows_once(&self) -> Result<()> {
        let w = self.begin_write()?;
        {
            let mut meta = w.open_table(META).map_err(io)?;
            if meta.get(META_ROW_COUNTS).map_err(io)?.is_some() {
                return Ok(());
            }
            let mut counts: HashMap<TableId, u64> = HashMap::new();
            let rows = w.open_table(ROWS).map_err(io)?;
            for item in rows.iter().map_err(io)? {
                let (k, _) = item.map_err(io)?;
                let (table, _) = split_row_key(k.value())?;
                *counts.entry(table).or_default() += 1;
            }
            let mut t = w.open_table(ROW_COUNTS).map_err(io)?;
            for (table, n) in counts {
                t.insert(table, n).map_err(io)?;
            }
            meta.insert(META_ROW_COUNTS, 1).map_err(io)?;
        }
        w.commit().map_err(io)
    }

    /// A write transaction that fsyncs on commit.
    pub fn begin_write(&self) -> Result<WriteTransaction> {
        let mut w = self.db.begin_write().map_err(io)?;
        w.set_durability(Durability::Immediate);
        Ok(w)
    }

    /// The bookkeeping [`Loaded`] at open.
    pub fn load(&self) -> Result<Loaded> {
        self.count_rows_once()?;
        let r = self.db.begin_read().map_err(io)?;
        let mut out = Loaded {
            commit_ts: self.commit_ts()?,
            ..Loaded::default()
        };
        let counts = r.open_table(ROW_COUNTS).map_err(io)?;
        for item in counts.iter().map_err(io)? {
            let (k, v) = item.map_err(io)?;
            out.row_counts.insert(k.value(), v.value());
        }
        let tts = r.open_table(TABLE_TS).map_err(io)?;
        for item in tts.iter().map_err(io)? {
            let (k, v) = item.map_err(io)?;
            if k.value() != COMMIT_TS_KEY {
                out.table_ts.insert(k.value(), v.value());
            }
        }
        for item in r.open_table(PURGES).map_err(io)?.iter().map_err(io)? {
            out.purging.push(item.map_err(io)?.0.value());
        }
        Ok(out)
    }

    /// Every consumer watermark: `(consumer, table, ts)`.
    pub fn watermarks(&self) -> Result<Vec<(String, TableId, Ts)>> {
        let r = self.db.begin_read().map_err(io)?;
        let wms = r.open_table(WATERMARKS).map_err(io)?;
        let mut out = Vec::new();
        for item in wms.iter().map_err(io)? {
            let (k, v) = item.map_err(io)?;
            let (consumer, table) = k.value();
            out.push((consumer.to_string(), table, v.value()));
        }
        Ok(out)
    }

    /// Tables whose change log is kept on demand only.
    pub fn on_demand(&self) -> Result<Vec<TableId>> {
        let r = self.db.begin_read().map_err(io)?;
        let t = r.open_table(ON_DEMAND).map_err(io)?;
        let mut out = Vec::new();
        for item in t.iter().map_err(io)? {
            out.push(item.map_err(io)?.0.value());
        }
        Ok(out)
    }

    /// Keep `table`'s change log on demand only, or always; and raise its
    /// change-log GC horizon to `horizon` (the entries skipped so far).
    pub fn set_on_demand(&self, table: TableId, on_demand: bool, horizon: Ts) -> Result<()> {
        let w = self.begin_write()?;
        {
            let mut t = w.open_table(ON_DEMAND).map_err(io)?;
            if on_demand {
                t.insert(table, ()).map_err(io)?;
            } else {
                t.remove(table).map_err(io)?;
            }
            raise_horizon(&w, table, horizon)?;
        }
        w.commit().map_err(io)
    }

    /// Persist a commit group: for each transaction in commit order, its
    /// rows, change-log entries (except those of the tables in `skip`) and
    /// table ts, then the commit ts counter, all in **one** redb
    /// transaction — fsynced with
    /// [`Durability::Immediate`](super::commit::Durability::Immediate),
    /// left for the periodic flush otherwise.
    ///
    /// Only the transaction's end state is written: a key's last write in
    /// the group and a table's last ts. Rows go in key order (a stable
    /// sort keeps each key's writes in commit order), so that consecutive
    /// inserts land in the same, already copied, leaf.
    pub fn commit_group<'a>(
        &self,
        group: impl IntoIterator<Item = (Ts, &'a [(TableId, Change)])>,
        skip: &std::collections::HashSet<TableId>,
        durability: super::commit::Durability,
    ) -> Result<()> {
        let mut w = self.db.begin_write().map_err(io)?;
        w.set_durability(match durability {
            super::commit::Durability::Immediate => Durability::Immediate,
            super::commit::Durability::Periodic(_) => Durability::None,
        });
        {
            let mut log = w.open_table(CHANGES).map_err(io)?;
            let mut writes: Vec<RowWrite<'a>> = Vec::new();
            let mut table_ts: std::collections::BTreeMap<TableId, Ts> = Default::default();
            let mut last_ts = None;
            for (ts, changes) in group {
                for (table, ch) in changes {
                    let new = match (&ch.kind, &ch.new) {
                        (ChangeKind::Delete, _) | (_, None) => None,
                        (_, Some(v)) => Some(v.as_slice()),
                    };
                    writes.push((row_key(*table, &ch.key), ts, new));
                    if !skip.contains(table) {
                        let enc = changelog::encode(ch);
                        log.insert((*table, ts, ch.seq), enc.as_slice())
                            .map_err(io)?;
                    }
                    table_ts.insert(*table, ts);
                }
                last_ts = Some(ts);
            }
            writes.sort_by(|a, b| a.0.cmp(&b.0));
            let mut rows = w.open_table(ROWS).map_err(io)?;
            let mut value_buf = Vec::new();
            for (i, (rk, ts, new)) in writes.iter().enumerate() {
                if writes.get(i + 1).is_some_and(|next| next.0 == *rk) {
                    continue; // a later write of the group replaces it
                }
                match new {
                    None => {
                        rows.remove(rk.as_slice()).map_err(io)?;
                    }
                    Some(v) => {
                        value_buf.clear();
                        value_buf.extend_from_slice(&ts.to_be_bytes());
                        value_buf.extend_from_slice(v);
                        rows.insert(rk.as_slice(), value_buf.as_slice())
                            .map_err(io)?;
                    }
                }
            }
            let mut tts = w.open_table(TABLE_TS).map_err(io)?;
            for (table, ts) in table_ts {
                tts.insert(table, ts).map_err(io)?;
            }
            if let Some(ts) = last_ts {
                tts.insert(COMMIT_TS_KEY, ts).map_err(io)?;
            }
        }
        w.commit().map_err(io)
    }

    /// Mark `table` purged: its bookkeeping goes now, its rows and change
    /// log by [`Durable::purge_batch`] later. Durable on return.
    pub fn mark_purge(&self, table: TableId) -> Result<()> {
        let w = self.begin_write()?;
        {
            w.open_table(PURGES)
                .map_err(io)?
                .insert(table, ())
                .map_err(io)?;
            w.open_table(TABLE_TS)
                .map_err(io)?
                .remove(table)
                .map_err(io)?;
            w.open_table(CHANGE_GC)
                .map_err(io)?
                .remove(table)
                .map_err(io)?;
            w.open_table(ROW_COUNTS)
                .map_err(io)?
                .remove(table)
                .map_err(io)?;
            w.open_table(ON_DEMAND)
                .map_err(io)?
                .remove(table)
                .map_err(io)?;
        }
        w.commit().map_err(io)
    }

    /// One write transaction of a purge: delete at most `budget` rows and
    /// change-log entries of purged tables, in table order. Returns the
    /// number deleted and the tables now fully deleted (their purge mark
    /// goes in the same transaction); a table cut short is continued by
    /// the next call.
    pub fn purge_batch(&self, budget: usize) -> Result<(usize, Vec<TableId>)> {
        let mut w = self.begin_write()?;
        let mut removed = 0;
        let mut done = Vec::new();
        {
            let mut purges = w.open_table(PURGES).map_err(io)?;
            let tables = purges
                .iter()
                .map_err(io)?
                .map(|e| e.map(|(k, _)| k.value()))
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(io)?;
            let mut rows = w.open_table(ROWS).map_err(io)?;
            let mut log = w.open_table(CHANGES).map_err(io)?;
            for table in tables {
                let allowed = budget - removed;
                let keys = rows_of_table(&rows, table)?
                    .take(allowed)
                    .map(|e| e.map(|(k, _)| k.value().to_vec()))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(io)?;
                for k in &keys {
                    rows.remove(k.as_slice()).map_err(io)?;
                }
                removed += keys.len();
                if keys.len() == allowed {
                    // The budget is spent (rows may remain): continue later.
                    break;
                }
                let allowed = budget - removed;
                let entries = log
                    .range((table, 0, 0)..=(table, u64::MAX, u32::MAX))
                    .map_err(io)?
                    .take(allowed)
                    .map(|e| e.map(|(k, _)| k.value()))
                    .collect::<std::result::Result<Vec<_>, _>>()
                    .map_err(io)?;
                for k in &entries {
                    log.remove(k).map_err(io)?;
                }
                removed += entries.len();
                if entries.len() == allowed {
                    break;
                }
                purges.remove(table).map_err(io)?;
                done.push(table);
            }
        }
        // Deleting a purged table's entries need not be durable batch by
        // batch: until its mark goes, a batch lost to a crash is redone by
        // the next pass. An fsync per 8,192 entries halved the foreground
        // write rate while a dropped database of 270k rows was deleted. The
        // batch that removes a mark is durable (and with it every batch
        // before it).
        w.set_durability(if done.is_empty() {
            Durability::None
        } else {
            Durability::Immediate
        });
        w.commit().map_err(io)?;
        Ok((removed, done))
    }

    /// Persist (or move) a consumer watermark and, in the same transaction,
    /// raise the table's change-log GC horizon to `horizon` (0: leave it;
    /// the first consumer of an on-demand table: its skipped entries).
    /// Fsynced only when `durable`; otherwise the next durable commit of the
    /// file carries it.
    pub fn set_watermark(
        &self,
        consumer: &str,
        table: TableId,
        ts: Ts,
        horizon: Ts,
        durable: bool,
    ) -> Result<()> {
        let mut w = self.begin_write()?;
        if !durable {
            w.set_durability(Durability::None);
        }
        w.open_table(WATERMARKS)
            .map_err(io)?
            .insert((consumer, table), ts)
            .map_err(io)?;
        raise_horizon(&w, table, horizon)?;
        w.commit().map_err(io)
    }

    /// Remove every watermark of `consumer`.
    pub fn remove_consumer(&self, consumer: &str) -> Result<()> {
        let w = self.begin_write()?;
        w.open_table(WATERMARKS)
            .map_err(io)?
            .retain(|(c, _), _| c != consumer)
            .map_err(io)?;
        w.commit().map_err(io)
    }

    /// Allocate the next id of a named sequence (first id is 1).
    pub fn next_id(&self, sequence: &str) -> Result<u64> {
        let w = self.begin_write()?;
        let id = {
            let mut t = w.open_table(SEQUENCES).map_err(io)?;
            let last = t.get(sequence).map_err(io)?.map(|g| g.value()).unwrap_or(0);
            let id = last
                .checked_add(1)
                .ok_or_else(|| StorageError::Corrupt(format!("sequence {sequence} exhausted")))?;
            t.insert(sequence, id).map_err(io)?;
            id
        };
        w.commit().map_err(io)?;
        Ok(id)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use redb::ReadableTableMetadata;

    /// One write of a test transaction: `(table, kind, key, new value)`.
    pub(in crate::embedded) type Write<'a> = (TableId, ChangeKind, &'a [u8], Option<&'a [u8]>);

    /// The changes of a transaction committed at `ts`, as the commit path
    /// hands them to [`Durable::commit_group`]: numbered per table in
    /// order.
    pub(in crate::embedded) fn txn(ts: Ts, writes: &[Write<'_>]) -> Vec<(TableId, Change)> {
        let mut seqs: HashMap<TableId, u32> = HashMap::new();
        writes
            .iter()
            .map(|&(table, kind, key, new)| {
                let seq = seqs.entry(table).or_default();
                let ch = Change {
                    commit_ts: ts,
                    seq: *seq,
                    kind,
                    key: key.to_vec(),
                    old: None,
                    new: new.map(<[u8]>::to_vec),
                };
                *seq += 1;
                (table, ch)
            })
            .collect()
    }

    fn row(d: &Durable, table: TableId, key: &[u8]) -> Option<(Ts, Vec<u8>)> {
        let r = d.db.begin_read().unwrap();
        let rows = r.open_table(ROWS).unwrap();
        let v = rows.get(row_key(table, key).as_slice()).unwrap()?;
        let (ts, rest) = split_u64(v.value()).unwrap();
        Some((ts, rest.to_vec()))
    }

    /// A group leaves each key as its last transaction left it, whatever
    /// order the keys came in, and each table's ts at its last change.
    #[test]
    fn a_group_writes_each_keys_last_state_and_each_tables_last_ts() {
        use ChangeKind::*;
        let dir = tempfile::tempdir().unwrap();
        let d = Durable::open_file(dir.path(), 1 << 20).unwrap();
        let groups: Vec<(Ts, Vec<(TableId, Change)>)> = vec![
            (
                1,
                txn(
                    1,
                    &[
                        (7, Insert, b"b", Some(b"b1")),
                        (7, Insert, b"a", Some(b"a1")),
                    ],
                ),
            ),
            (
                2,
                txn(
                    2,
                    &[(7, Delete, b"b", None), (9, Insert, b"z", Some(b"z2"))],
                ),
            ),
            (
                3,
                txn(
                    3,
                    &[
                        (7, Update, b"a", Some(b"a3")),
                        (7, Insert, b"c", Some(b"c3")),
                    ],
                ),
            ),
            (
                4,
                txn(
                    4,
                    &[(7, Delete, b"c", None), (7, Insert, b"c", Some(b"c4"))],
                ),
            ),
        ];
        let skip = std::collections::HashSet::from([9]);
        d.commit_group(
            groups.iter().map(|(ts, ch)| (*ts, ch.as_slice())),
            &skip,
            super::super::commit::Durability::Immediate,
        )
        .unwrap();
        assert_eq!(row(&d, 7, b"a"), Some((3, b"a3".to_vec())));
        assert_eq!(row(&d, 7, b"b"), None);
        assert_eq!(row(&d, 7, b"c"), Some((4, b"c4".to_vec())));
        assert_eq!(row(&d, 9, b"z"), Some((2, b"z2".to_vec())));
        let loaded = d.load().unwrap();
        assert_eq!(loaded.commit_ts, 4);
        assert_eq!(loaded.table_ts.get(&7), Some(&4));
        assert_eq!(loaded.table_ts.get(&9), Some(&2));
        // The change log keeps every change of a table not skipped.
        let r = d.db.begin_read().unwrap();
        let log = r.open_table(CHANGES).unwrap();
        assert_eq!(log.len().unwrap(), 7);
    }
}
