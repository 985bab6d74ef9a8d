//! The per-table change log: encoding, net effect per transaction, reads.
//!
//! Owns the byte format of a stored [`Change`], the `(from, to]` /
//! `resume` / `limit` semantics of [`crate::api::Storage::changes`], and
//! the [`Gate`]: which tables' changes are stored at all. Entries are
//! written by the applier ([`super::durable::Durable::commit_group`]) in the
//! same redb transaction as the rows they describe.
//!
//! This module must never write rows, never return an entry above the
//! caller-provided visibility bound (the engine passes `latest_ts`), so a
//! change is never seen before its transaction is, and never answer a read
//! that reaches below a commit whose entries were not stored.

use std::collections::{HashMap, HashSet};

use super::durable::{io, Durable, CHANGES, CHANGE_GC};
use crate::api::{Change, ChangeBatch, ChangeKind, Result, StorageError, TableId, Ts};

/// Which tables' changes the applier stores.
///
/// A table marked *on demand* ([`crate::api::Storage::set_change_log_on_demand`]:
/// a user table, which only ISCP jobs read) has its changes stored only
/// while a consumer watermark is registered on it; unread, they would only
/// cost a second redb insert per row and a GC delete later. Every other
/// table's changes are always stored.
///
/// A commit whose entries were skipped is remembered as the table's
/// `skipped` bound: a read of the change log from below it fails with
/// [`StorageError::ChangesGone`], exactly as if GC had deleted those
/// entries, so nobody mistakes the gap for "nothing changed". The bound is
/// moved when the applier decides (before it writes, under the consumer
/// lock), so a consumer registering afterwards sees it; the registration
/// stores it as the table's durable GC horizon, which keeps it across a
/// restart (at open, an on-demand table without a consumer starts with its
/// last commit as the bound).
#[derive(Debug)]
pub(super) struct Gate {
    on_demand: HashSet<TableId>,
    skipped: HashMap<TableId, Ts>,
}

impl Gate {
    /// A gate over the tables marked on demand, nothing skipped yet.
    pub fn new(on_demand: impl IntoIterator<Item = TableId>) -> Gate {
        Gate {
            on_demand: on_demand.into_iter().collect(),
            skipped: HashMap::new(),
        }
    }

    /// At open: an on-demand table without a consumer may lack entries up
    /// to its last commit (`table_ts`), whichever run skipped them.
    pub fn since_open(&mut self, consumed: &HashSet<TableId>, table_ts: &HashMap<TableId, Ts>) {
        for t in self.on_demand.iter().filter(|t| !consumed.contains(t)) {
            if let Some(ts) = table_ts.get(t) {
                let b = self.skipped.entry(*t).or_insert(*ts);
                *b = (*b).max(*ts);
            }
        }
    }

    /// Store `table`'s changes only while it has a consumer, or always.
    pub fn set_on_demand(&mut self, table: TableId, on_demand: bool) {
        if on_demand {
            self.on_demand.insert(table);
        } else {
            self.on_demand.remove(&table);
        }
    }

    /// Forget `table` (purged).
    pub fn forget(&mut self, table: TableId) {
        self.on_demand.remove(&table);
        self.skipped.remove(&table);
    }

    /// Whether `table` is on demand.
    pub fn is_on_demand(&self, table: TableId) -> bool {
        self.on_demand.contains(&table)
    }

    /// The tables of `groups` whose changes are not to be stored (on
    /// demand, not in `consumed`), their skipped bounds moved to their last
    /// commit in `groups`. Call with the consumer lock held, before writing.
    pub fn skip<'a>(
        &mut self,
        groups: impl IntoIterator<Item = (Ts, &'a [(TableId, Change)])>,
        consumed: impl Fn(TableId) -> bool,
    ) -> HashSet<TableId> {
        let mut out = HashSet::new();
        if self.on_demand.is_empty() {
            return out;
        }
        for (ts, changes) in groups {
            for (t, _) in changes {
                if self.on_demand.contains(t) && (out.contains(t) || !consumed(*t)) {
                    out.insert(*t);
                    let b = self.skipped.entry(*t).or_insert(ts);
                    *b = (*b).max(ts);
                }
            }
        }
        out
    }

    /// The bound below which `table`'s change log has gaps (0: none).
    pub fn skipped(&self, table: TableId) -> Ts {
        self.skipped.get(&table).copied().unwrap_or(0)
    }
}

/// Net change of one key from its latest committed value `old` to the value
/// the transaction leaves, `new`. `None` when nothing observable happened.
pub(super) fn net_kind(old: &Option<Vec<u8>>, new: &Option<Vec<u8>>) -> Option<ChangeKind> {
    match (old, new) {
        (None, None) => None,
        (None, Some(_)) => Some(ChangeKind::Insert),
        (Some(_), Some(_)) => Some(ChangeKind::Update),
        (Some(_), None) => Some(ChangeKind::Delete),
    }
}

/// Build the changes of one transaction, per table in key order with `seq`
/// counting from 0 in each table. `final_writes` yields each written key
/// with the value the transaction leaves, by table and in key order; its
/// keys and values move into the changes. `old` gives the latest
/// committed value. `count`: how many writes there are (the room the
/// changes are given at once).
pub(super) fn build_changes(
    ts: Ts,
    count: usize,
    final_writes: impl IntoIterator<Item = (TableId, Vec<u8>, Option<Vec<u8>>)>,
    mut old: impl FnMut(TableId, &[u8]) -> Option<Vec<u8>>,
) -> Vec<(TableId, Change)> {
    let mut out = Vec::with_capacity(count);
    let mut seq: u32 = 0;
    let mut last_table = None;
    for (table, key, new) in final_writes {
        if last_table != Some(table) {
            last_table = Some(table);
            seq = 0;
        }
        let before = old(table, &key);
        if let Some(kind) = net_kind(&before, &new) {
            out.push((
                table,
                Change {
                    commit_ts: ts,
                    seq,
                    kind,
                    key,
                    old: before,
                    new,
                },
            ));
            seq = seq.saturating_add(1);
        }
    }
    out
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u64).to_be_bytes());
    out.extend_from_slice(b);
}

fn put_opt(out: &mut Vec<u8>, b: &Option<Vec<u8>>) {
    match b {
        None => out.push(0),
        Some(b) => {
            out.push(1);
            put_bytes(out, b);
        }
    }
}

/// Encode the stored part of a change (ts and seq live in the key).
pub(super) fn encode(ch: &Change) -> Vec<u8> {
    let mut out = Vec::with_capacity(
        1 + 8
            + ch.key.len()
            + 18
            + ch.old.as_ref().map_or(0, Vec::len)
            + ch.new.as_ref().map_or(0, Vec::len),
    );
    out.push(match ch.kind {
        ChangeKind::Insert => 1,
        ChangeKind::Update => 2,
        ChangeKind::Delete => 3,
    });
    put_bytes(&mut out, &ch.key);
    put_opt(&mut out, &ch.old);
    put_opt(&mut out, &ch.new);
    debug_assert!(
        decode(ch.commit_ts, ch.seq, &out).is_ok_and(|d| d == *ch),
        "change log encoding does not round-trip"
    );
    out
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn corrupt() -> StorageError {
        StorageError::Corrupt("truncated change-log entry".into())
    }
    fn byte(&mut self) -> Result<u8> {
        let (first, rest) = self.b.split_first().ok_or_else(Self::corrupt)?;
        self.b = rest;
        Ok(*first)
    }
    fn bytes(&mut self) -> Result<Vec<u8>> {
        let (len, rest) = super::durable::split_u64(self.b).ok_or_else(Self::corrupt)?;
        let len = usize::try_from(len).map_err(|_| Self::corrupt())?;
        if rest.len() < len {
            return Err(Self::corrupt());
        }
        let (v, rest) = rest.split_at(len);
        self.b = rest;
        Ok(v.to_vec())
    }
    fn opt(&mut self) -> Result<Option<Vec<u8>>> {
        match self.byte()? {
            0 => Ok(None),
            1 => Ok(Some(self.bytes()?)),
            t => Err(StorageError::Corrupt(format!("bad option tag {t}"))),
        }
    }
}

/// Decode a stored change.
pub(super) fn decode(commit_ts: Ts, seq: u32, b: &[u8]) -> Result<Change> {
    let mut r = Reader { b };
    let kind = match r.byte()? {
        1 => ChangeKind::Insert,
        2 => ChangeKind::Update,
        3 => ChangeKind::Delete,
        k => return Err(StorageError::Corrupt(format!("bad change kind {k}"))),
    };
    let key = r.bytes()?;
    let old = r.opt()?;
    let new = r.opt()?;
    if !r.b.is_empty() {
        return Err(StorageError::Corrupt("trailing bytes in change".into()));
    }
    Ok(Change {
        commit_ts,
        seq,
        kind,
        key,
        old,
        new,
    })
}

/// The position `(commit_ts, seq)` strictly after which a read of
/// `(from, …]` resuming at `resume` goes on.
pub(super) fn read_after(from: Ts, resume: Option<(Ts, u32)>) -> (Ts, u32) {
    match resume {
        Some((ts, seq)) if ts >= from => (ts, seq),
        _ => (from, u32::MAX),
    }
}

/// Read changes of `table` with `from < commit_ts <= min(to, visible)`.
/// The GC horizon is checked in the same redb snapshot as the read, so a
/// concurrent GC can never silently drop entries from the answer; so is
/// `skipped`, the [`Gate`]'s bound (read after every commit up to
/// `visible` was applied).
#[allow(clippy::too_many_arguments)]
pub(super) fn read(
    durable: &Durable,
    table: TableId,
    from: Ts,
    to: Ts,
    visible: Ts,
    skipped: Ts,
    resume: Option<(Ts, u32)>,
    limit: usize,
) -> Result<ChangeBatch> {
    let r = durable.db.begin_read().map_err(io)?;
    let gc = r.open_table(CHANGE_GC).map_err(io)?;
    let gc_ts = gc.get(table).map_err(io)?.map(|g| g.value()).unwrap_or(0);
    let gc_ts = gc_ts.max(skipped);
    if from < gc_ts {
        return Err(StorageError::ChangesGone { table, gc_ts });
    }
    let to = to.min(visible);
    let mut batch = ChangeBatch::default();
    if to <= from || limit == 0 {
        return Ok(batch);
    }
    let (after_ts, after_seq) = read_after(from, resume);
    let start = match (after_ts, after_seq.checked_add(1)) {
        (ts, Some(seq)) => (table, ts, seq),
        (ts, None) => match ts.checked_add(1) {
            Some(next) => (table, next, 0),
            None => return Ok(batch),
        },
    };
    let end = (table, to, u32::MAX);
    if start > end {
        return Ok(batch);
    }
    let log = r.open_table(CHANGES).map_err(io)?;
    for item in log.range(start..=end).map_err(io)? {
        let (k, v) = item.map_err(io)?;
        let (_, ts, seq) = k.value();
        if batch.changes.len() == limit {
            batch.resume = batch.changes.last().map(|c| (c.commit_ts, c.seq));
            break;
        }
        batch.changes.push(decode(ts, seq, v.value())?);
    }
    Ok(batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encode_decode_round_trip() {
        for (old, new, kind) in [
            (None, Some(b"v".to_vec()), ChangeKind::Insert),
            (Some(b"a".to_vec()), Some(Vec::new()), ChangeKind::Update),
            (Some(b"a".to_vec()), None, ChangeKind::Delete),
        ] {
            let ch = Change {
                commit_ts: 7,
                seq: 3,
                kind,
                key: b"key".to_vec(),
                old,
                new,
            };
            assert_eq!(decode(7, 3, &encode(&ch)).unwrap(), ch);
        }
    }

    #[test]
    fn decode_rejects_garbage() {
        assert!(matches!(decode(1, 0, &[]), Err(StorageError::Corrupt(_))));
        assert!(matches!(decode(1, 0, &[9]), Err(StorageError::Corrupt(_))));
        let mut enc = encode(&Change {
            commit_ts: 1,
            seq: 0,
            kind: ChangeKind::Insert,
            key: b"k".to_vec(),
            old: None,
            new: Some(b"v".to_vec()),
        });
        enc.pop();
        assert!(matches!(decode(1, 0, &enc), Err(StorageError::Corrupt(_))));
    }

    fn change(key: &[u8]) -> Change {
        Change {
            commit_ts: 0,
            seq: 0,
            kind: ChangeKind::Insert,
            key: key.to_vec(),
            old: None,
            new: Some(b"v".to_vec()),
        }
    }

    #[test]
    fn the_gate_skips_on_demand_tables_without_a_consumer() {
        let mut g = Gate::new([1]);
        let (a, b) = (
            vec![(1, change(b"a")), (2, change(b"a"))],
            vec![(1, change(b"b"))],
        );
        let groups = [(5, a.as_slice()), (7, b.as_slice())];
        // Table 2 is not on demand: always stored; table 1 unconsumed: skipped.
        assert_eq!(g.skip(groups, |_| false), HashSet::from([1]));
        assert_eq!((g.skipped(1), g.skipped(2)), (7, 0));
        // Consumed: stored, the bound stays.
        assert!(g.skip([(9, a.as_slice())], |t| t == 1).is_empty());
        assert_eq!(g.skipped(1), 7);
        g.forget(1);
        assert_eq!(g.skipped(1), 0);
        assert!(!g.is_on_demand(1));
        // At open: unconsumed on-demand tables start at their last commit.
        let mut g = Gate::new([1, 3]);
        g.since_open(&HashSet::from([3]), &HashMap::from([(1, 4), (3, 6)]));
        assert_eq!((g.skipped(1), g.skipped(3)), (4, 0));
    }

    #[test]
    fn net_kinds() {
        let v = Some(b"x".to_vec());
        assert_eq!(net_kind(&None, &None), None);
        assert_eq!(net_kind(&None, &v), Some(ChangeKind::Insert));
        assert_eq!(net_kind(&v, &v), Some(ChangeKind::Update));
        assert_eq!(net_kind(&v, &None), Some(ChangeKind::Delete));
    }
}
