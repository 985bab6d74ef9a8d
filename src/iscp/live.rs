//! In-memory index state of a job (usearch HNSW or tantivy full-text, plus
//! the primary-key ↔ label map) and its persistence in the job's hidden
//! storage table.
//!
//! Hidden-table layout (keys):
//! * `m` — JSON [`Meta`]: base checkpoint ts, chunk count, delta count;
//! * `b` ++ u32 — chunks of the base blob (labels + serialized index);
//! * `d` ++ ts ++ seq — one delta record per work unit since the base.
//!
//! A consumer commit writes only deltas (cost proportional to the change),
//! and rewrites the base every [`CHECKPOINT_DELTAS`] deltas. Loading is the
//! base plus a replay of the deltas in order, so any CN loads the same
//! index. This module never writes the job log.

use std::collections::HashMap;
use std::ops::Bound;

use serde::{Deserialize, Serialize};
use tributary_index::{FullTextIndex, HnswOptions, Metric, Parser, VectorIndex};
use tributary_storage::Transaction;

use crate::catalog::codec::{decode_row, encode_row};
use crate::catalog::IndexKind;
use crate::error::{SqlError, SqlResult};
use crate::iscp::log::JobSpec;
use crate::types::Value;

/// Rewrite the base after this many deltas.
pub const CHECKPOINT_DELTAS: u64 = 20_000;
/// Base blob chunk size in the hidden table.
pub const CHUNK_BYTES: usize = 256 * 1024;

/// Hidden-table metadata record.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Meta {
    pub chunks: u32,
    pub deltas: u64,
}

/// Primary key ↔ index label.
#[derive(Debug, Default, Clone)]
pub struct Labels {
    pub by_pk: HashMap<Vec<u8>, u64>,
    pub by_label: HashMap<u64, Vec<u8>>,
    pub next: u64,
}

impl Labels {
    fn label_for(&mut self, pk: &[u8]) -> u64 {
        if let Some(l) = self.by_pk.get(pk) {
            return *l;
        }
        let l = self.next;
        self.next += 1;
        self.by_pk.insert(pk.to_vec(), l);
        self.by_label.insert(l, pk.to_vec());
        l
    }
    fn remove(&mut self, pk: &[u8]) -> Option<u64> {
        let l = self.by_pk.remove(pk)?;
        self.by_label.remove(&l);
        Some(l)
    }
}

/// The index proper.
#[allow(clippy::large_enum_variant)] // one per job; boxing buys nothing
pub enum IndexData {
    Hnsw(VectorIndex),
    FullText(FullTextIndex),
}

/// One change to apply: upsert (with the indexed column values) or delete.
#[derive(Debug, Clone, PartialEq)]
pub enum Op {
    Upsert { pk: Vec<u8>, vals: Vec<Value> },
    Delete { pk: Vec<u8> },
}

/// A job's in-memory index.
pub struct LiveIndex {
    pub data: IndexData,
    pub labels: Labels,
}

fn ierr(e: impl std::fmt::Display) -> SqlError {
    SqlError::internal(format!("index error: {e}"))
}

/// Vector as f32 (finite by INSERT-time validation).
pub fn to_f32(v: &Value) -> Option<Vec<f32>> {
    match v {
        Value::Vector(x) => Some(x.iter().map(|f| *f as f32).collect()),
        _ => None,
    }
}

impl LiveIndex {
    /// An empty index for a job spec (`dims` of the vector column).
    pub fn new(spec: &JobSpec, dims: usize) -> SqlResult<Self> {
        let data = match &spec.kind {
            IndexKind::Hnsw {
                op_type,
                m,
                ef_construction,
                ef_search,
            } => {
                let metric = Metric::from_op_type(op_type).map_err(ierr)?;
                let mut o = HnswOptions::new(dims, metric);
                o.m = *m;
                o.ef_construction = *ef_construction;
                o.ef_search = *ef_search;
                IndexData::Hnsw(VectorIndex::new(o).map_err(ierr)?)
            }
            IndexKind::FullText { parser } => {
                let p = Parser::from_name(parser).map_err(ierr)?;
                IndexData::FullText(FullTextIndex::new(spec.columns.len(), p).map_err(ierr)?)
            }
            IndexKind::BTree { .. } => {
                return Err(SqlError::internal("B-tree jobs have no in-memory index"))
            }
        };
        Ok(LiveIndex {
            data,
            labels: Labels::default(),
        })
    }

    /// Apply ops in order (idempotent by primary key).
    pub fn apply(&mut self, ops: &[Op]) -> SqlResult<()> {
        for op in ops {
            match op {
                Op::Upsert { pk, vals } => {
                    let label = self.labels.label_for(pk);
                    match &mut self.data {
                        IndexData::Hnsw(ix) => match vals.first().and_then(to_f32) {
                            Some(v) => ix.upsert(label, &v).map_err(ierr)?,
                            None => {
                                // NULL vector: not indexed.
                                ix.remove(label).map_err(ierr)?;
                            }
                        },
                        IndexData::FullText(ix) => {
                            let texts: Vec<Option<String>> = vals
                                .iter()
                                .map(|v| match v {
                                    Value::Null => None,
                                    Value::Text(s) => Some(s.clone()),
                                    other => Some(other.to_string()),
                                })
                                .collect();
                            let refs: Vec<Option<&str>> =
                                texts.iter().map(|t| t.as_deref()).collect();
                            ix.upsert(label, &refs).map_err(ierr)?;
                        }
                    }
                }
                Op::Delete { pk } => {
                    if let Some(label) = self.labels.remove(pk) {
                        match &mut self.data {
                            IndexData::Hnsw(ix) => {
                                ix.remove(label).map_err(ierr)?;
                            }
                            IndexData::FullText(ix) => ix.remove(label).map_err(ierr)?,
                        }
                    }
                }
            }
        }
        if let IndexData::FullText(ix) = &mut self.data {
            ix.commit().map_err(ierr)?;
        }
        Ok(())
    }

    /// Number of indexed entries.
    pub fn len(&self) -> usize {
        match &self.data {
            IndexData::Hnsw(ix) => ix.len(),
            IndexData::FullText(ix) => ix.len(),
        }
    }

    /// Whether empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn base_blob(&mut self) -> SqlResult<Vec<u8>> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.labels.next.to_le_bytes());
        out.extend_from_slice(&(self.labels.by_pk.len() as u64).to_le_bytes());
        let mut pairs: Vec<(&Vec<u8>, &u64)> = self.labels.by_pk.iter().collect();
        pairs.sort();
        for (pk, l) in pairs {
            out.extend_from_slice(&(pk.len() as u32).to_le_bytes());
            out.extend_from_slice(pk);
            out.extend_from_slice(&l.to_le_bytes());
        }
        let ix = match &mut self.data {
            IndexData::Hnsw(ix) => ix.to_bytes().map_err(ierr)?,
            IndexData::FullText(ix) => ix.to_bytes().map_err(ierr)?,
        };
        out.extend_from_slice(&ix);
        Ok(out)
    }

    fn from_base(spec: &JobSpec, blob: &[u8]) -> SqlResult<Self> {
        let bad = || SqlError::internal("corrupt index base blob");
        let mut pos = 0usize;
        let mut take = |n: usize| -> SqlResult<&[u8]> {
            let s = blob.get(pos..pos + n).ok_or_else(bad)?;
            pos += n;
            Ok(s)
        };
        let u64le = |b: &[u8]| {
            let mut a = [0u8; 8];
            a.copy_from_slice(b);
            u64::from_le_bytes(a)
        };
        let next = u64le(take(8)?);
        let n = u64le(take(8)?);
        let mut labels = Labels {
            next,
            ..Default::default()
        };
        for _ in 0..n {
            let mut a = [0u8; 4];
            a.copy_from_slice(take(4)?);
            let len = u32::from_le_bytes(a) as usize;
            let pk = take(len)?.to_vec();
            let l = u64le(take(8)?);
            labels.by_label.insert(l, pk.clone());
            labels.by_pk.insert(pk, l);
        }
        let rest = blob.get(pos..).ok_or_else(bad)?;
        let data = match &spec.kind {
            IndexKind::Hnsw { .. } => IndexData::Hnsw(VectorIndex::from_bytes(rest).map_err(ierr)?),
            IndexKind::FullText { .. } => {
                IndexData::FullText(FullTextIndex::from_bytes(rest).map_err(ierr)?)
            }
            IndexKind::BTree { .. } => return Err(bad()),
        };
        Ok(LiveIndex { data, labels })
    }
}

fn delta_key(ts: u64, seq: u32) -> Vec<u8> {
    let mut k = vec![b'd'];
    k.extend_from_slice(&ts.to_be_bytes());
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

fn chunk_key(i: u32) -> Vec<u8> {
    let mut k = vec![b'b'];
    k.extend_from_slice(&i.to_be_bytes());
    k
}

fn encode_op(op: &Op) -> Vec<u8> {
    let row: Vec<Value> = match op {
        Op::Upsert { pk, vals } => {
            let mut r = vec![Value::Int(0), Value::Text(hex(pk))];
            r.extend(vals.iter().cloned());
            r
        }
        Op::Delete { pk } => vec![Value::Int(1), Value::Text(hex(pk))],
    };
    encode_row(&row)
}

/// A unit's delta record: u32 count, then per op a u32 length and the op.
fn encode_ops(ops: &[Op]) -> Vec<u8> {
    let mut out = Vec::with_capacity(ops.len() * 64);
    out.extend_from_slice(&(ops.len() as u32).to_le_bytes());
    for op in ops {
        let b = encode_op(op);
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(&b);
    }
    out
}

fn decode_ops(b: &[u8]) -> SqlResult<Vec<Op>> {
    let bad = || SqlError::internal("corrupt index delta record");
    let u32_at = |pos: usize| -> SqlResult<usize> {
        let s = b.get(pos..pos + 4).ok_or_else(bad)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as usize)
    };
    let n = u32_at(0)?;
    let mut pos = 4;
    let mut ops = Vec::with_capacity(n.min(b.len()));
    for _ in 0..n {
        let len = u32_at(pos)?;
        pos += 4;
        let rec = b.get(pos..pos + len).ok_or_else(bad)?;
        ops.push(decode_op(rec)?);
        pos += len;
    }
    if pos != b.len() {
        return Err(bad());
    }
    Ok(ops)
}

fn decode_op(b: &[u8]) -> SqlResult<Op> {
    let r = decode_row(b).map_err(|e| SqlError::internal(e.to_string()))?;
    let pk = match r.get(1) {
        Some(Value::Text(h)) => unhex(h).ok_or_else(|| SqlError::internal("bad delta pk"))?,
        _ => return Err(SqlError::internal("bad delta record")),
    };
    match r.first() {
        Some(Value::Int(0)) => Ok(Op::Upsert {
            pk,
            vals: r.get(2..).map(|s| s.to_vec()).unwrap_or_default(),
        }),
        Some(Value::Int(1)) => Ok(Op::Delete { pk }),
        _ => Err(SqlError::internal("bad delta op")),
    }
}

/// Lower-case hex.
pub fn hex(b: &[u8]) -> String {
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push_str(&format!("{x:02x}"));
    }
    s
}

/// Parse lower/upper-case hex.
pub fn unhex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok()))
        .collect()
}

fn read_meta(txn: &mut dyn Transaction, storage_id: u64) -> SqlResult<Meta> {
    match txn.get(storage_id, b"m", false)? {
        None => Ok(Meta::default()),
        Some(b) => {
            serde_json::from_slice(&b).map_err(|e| SqlError::internal(format!("index meta: {e}")))
        }
    }
}

/// Persist a batch of ops (one delta record keyed `(ts, seq)`; `seq` is the
/// job iteration, so a retried unit overwrites its own record) and, past the
/// threshold, a new base. Runs inside the consumer's commit transaction.
pub fn persist(
    txn: &mut dyn Transaction,
    storage_id: u64,
    live: &mut LiveIndex,
    ts: u64,
    seq: u32,
    ops: &[Op],
) -> SqlResult<()> {
    let mut meta = read_meta(txn, storage_id)?;
    if meta.deltas + ops.len() as u64 > CHECKPOINT_DELTAS {
        // New base; drop old deltas and surplus chunks.
        let blob = live.base_blob()?;
        let chunks: Vec<&[u8]> = blob.chunks(CHUNK_BYTES).collect();
        for (i, c) in chunks.iter().enumerate() {
            txn.put(storage_id, &chunk_key(i as u32), c.to_vec())?;
        }
        for i in chunks.len() as u32..meta.chunks {
            txn.delete(storage_id, &chunk_key(i))?;
        }
        let old = txn.scan(
            storage_id,
            Bound::Included(vec![b'd']),
            Bound::Excluded(vec![b'e']),
            usize::MAX,
        )?;
        for (k, _) in old {
            txn.delete(storage_id, &k)?;
        }
        meta = Meta {
            chunks: chunks.len() as u32,
            deltas: 0,
        };
    } else {
        // One record per work unit (not per change): a storage write costs
        // ~10 µs per key, so 16k per-change records would dominate the unit.
        if !ops.is_empty() {
            txn.put(storage_id, &delta_key(ts, seq), encode_ops(ops))?;
        }
        meta.deltas += ops.len() as u64;
    }
    let mb = serde_json::to_vec(&meta).map_err(|e| SqlError::internal(e.to_string()))?;
    txn.put(storage_id, b"m", mb)?;
    Ok(())
}

/// Load a job's index from its hidden table (base + deltas).
pub fn load(txn: &mut dyn Transaction, spec: &JobSpec, dims: usize) -> SqlResult<LiveIndex> {
    let meta = read_meta(txn, spec.storage_id)?;
    let mut live = if meta.chunks == 0 {
        LiveIndex::new(spec, dims)?
    } else {
        let mut blob = Vec::new();
        for i in 0..meta.chunks {
            let c = txn
                .get(spec.storage_id, &chunk_key(i), false)?
                .ok_or_else(|| SqlError::internal("missing index chunk"))?;
            blob.extend_from_slice(&c);
        }
        LiveIndex::from_base(spec, &blob)?
    };
    let deltas = txn.scan(
        spec.storage_id,
        Bound::Included(vec![b'd']),
        Bound::Excluded(vec![b'e']),
        usize::MAX,
    )?;
    let mut ops: Vec<Op> = Vec::new();
    for (_, v) in &deltas {
        ops.extend(decode_ops(v)?);
    }
    live.apply(&ops)?;
    Ok(live)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_records_round_trip_and_reject_garbage() {
        let ops = vec![
            Op::Upsert {
                pk: vec![1, 2, 0],
                vals: vec![Value::Text("rust db".into()), Value::Null],
            },
            Op::Delete { pk: vec![9] },
            Op::Upsert {
                pk: vec![],
                vals: vec![Value::Vector(vec![1.0, -2.0])],
            },
        ];
        let b = encode_ops(&ops);
        assert_eq!(decode_ops(&b).unwrap(), ops);
        assert!(decode_ops(&b[..b.len() - 1]).is_err());
        assert!(decode_ops(&[5, 0, 0, 0]).is_err());
        assert!(decode_ops(&[]).is_err());
    }
}
