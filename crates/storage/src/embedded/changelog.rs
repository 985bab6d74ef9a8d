//! The per-table change log: encoding, net effect per transaction, reads.
//!
//! Owns the byte format of a stored [`Change`] and the `(from, to]` /
//! `resume` / `limit` semantics of [`crate::api::Storage::changes`]. Entries
//! are written by [`super::durable::Durable::commit`] in the same redb
//! transaction as the rows they describe.
//!
//! This module must never write rows, and never return an entry above the
//! caller-provided visibility bound (the engine passes `latest_ts`), so a
//! change is never seen before its transaction is.

use std::collections::BTreeMap;

use super::durable::{io, Durable, CHANGES, CHANGE_GC};
use crate::api::{Change, ChangeBatch, ChangeKind, Result, StorageError, TableId, Ts};

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
/// counting from 0 in each table. `final_writes` maps each written key to
/// the value the transaction leaves; `old` gives the latest committed value.
pub(super) fn build_changes(
    ts: Ts,
    final_writes: &BTreeMap<TableId, BTreeMap<Vec<u8>, Option<Vec<u8>>>>,
    mut old: impl FnMut(TableId, &[u8]) -> Option<Vec<u8>>,
) -> Vec<(TableId, Change)> {
    let mut out = Vec::new();
    for (table, keys) in final_writes {
        let mut seq: u32 = 0;
        for (key, new) in keys {
            let before = old(*table, key);
            if let Some(kind) = net_kind(&before, new) {
                out.push((
                    *table,
                    Change {
                        commit_ts: ts,
                        seq,
                        kind,
                        key: key.clone(),
                        old: before,
                        new: new.clone(),
                    },
                ));
                seq = seq.saturating_add(1);
            }
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

/// Read changes of `table` with `from < commit_ts <= min(to, visible)`.
/// The GC horizon is checked in the same redb snapshot as the read, so a
/// concurrent GC can never silently drop entries from the answer.
pub(super) fn read(
    durable: &Durable,
    table: TableId,
    from: Ts,
    to: Ts,
    visible: Ts,
    resume: Option<(Ts, u32)>,
    limit: usize,
) -> Result<ChangeBatch> {
    let r = durable.db.begin_read().map_err(io)?;
    let gc = r.open_table(CHANGE_GC).map_err(io)?;
    let gc_ts = gc.get(table).map_err(io)?.map(|g| g.value()).unwrap_or(0);
    if from < gc_ts {
        return Err(StorageError::ChangesGone { table, gc_ts });
    }
    let to = to.min(visible);
    let mut batch = ChangeBatch::default();
    if to <= from || limit == 0 {
        return Ok(batch);
    }
    // Position strictly after which we read.
    let (after_ts, after_seq) = match resume {
        Some((ts, seq)) if ts >= from => (ts, seq),
        _ => (from, u32::MAX),
    };
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

    #[test]
    fn net_kinds() {
        let v = Some(b"x".to_vec());
        assert_eq!(net_kind(&None, &None), None);
        assert_eq!(net_kind(&None, &v), Some(ChangeKind::Insert));
        assert_eq!(net_kind(&v, &v), Some(ChangeKind::Update));
        assert_eq!(net_kind(&v, &None), Some(ChangeKind::Delete));
    }
}
