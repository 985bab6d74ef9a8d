//! In-memory index state of a job (usearch HNSW or tantivy full-text, plus
//! the primary-key ↔ label map) and its persistence in the job's hidden
//! storage table.
//!
//! **Durable state = base + log.** The hidden table holds a *base*: the
//! serialized index reflecting every change up to `base_ts`. The changes
//! after it are not copied anywhere: they are the source's own change log,
//! kept from GC by the job's storage consumer registration at `base_ts`,
//! and replayed on load. The source ([`Source`]) is the base table for an
//! asynchronous index and the hidden table's entries for a synchronous one.
//! So a work unit commits only the job's new watermark (plus, now and then,
//! a new base), and any CN loads the same index: base + replay up to the
//! job's durable watermark (asynchronous) or up to its snapshot
//! (synchronous).
//!
//! Hidden-table layout (keys):
//! * `m` — JSON [`Meta`]: format, base ts, chunk count, build-delta count;
//! * `b` ++ gen ++ u32 — chunks of the base blob (labels + serialized
//!   index), written in transactions of their own before the unit that
//!   installs them (so a large base never stalls other commits);
//! * `d` ++ ts ++ seq — one delta record per initial-build unit (build rows
//!   come from snapshot scans, which no change log can replay); replaced by
//!   the base the last build unit writes;
//! * `e` ++ pk — synchronous indexes only: the row's indexed values,
//!   written by the writing transaction itself.
//!
//! This module never writes the job log.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Bound;

use serde::{Deserialize, Serialize};
use tributary_index::{FullTextIndex, HnswOptions, Metric, Parser, VectorIndex};
use tributary_storage::{Change, ChangeKind, Storage, Transaction};

use crate::catalog::codec::{decode_row, encode_row};
use crate::catalog::IndexKind;
use crate::error::{SqlError, SqlResult};
use crate::iscp::log::JobSpec;
use crate::types::Value;

/// Base blob chunk size in the hidden table.
pub const CHUNK_BYTES: usize = 256 * 1024;
/// Base chunks written per transaction (1 MiB).
const CHUNKS_PER_TXN: usize = 4;
/// Change-log batch size of a replay.
const REPLAY_BATCH: usize = 4096;
/// First byte of a synchronous index entry key.
pub const ENTRY_PREFIX: u8 = b'e';
const META_KEY: &[u8] = b"m";
/// Current hidden-table format: 1 = base at a watermark, in chunks of its
/// own generation, + change-log replay (0 = one base generation, and every
/// unit wrote a delta record).
const FORMAT: u32 = 1;

/// Hidden-table metadata record.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Meta {
    #[serde(default)]
    pub format: u32,
    /// Generation of the base's chunks (its ts; format 1).
    #[serde(default)]
    pub gen: u64,
    pub chunks: u32,
    /// The base reflects every change up to this ts.
    #[serde(default)]
    pub base_ts: u64,
    /// Ops in build delta records.
    pub deltas: u64,
}

/// Hash maps keyed by primary keys (user data): foldhash is several times
/// faster than SipHash on short keys and randomly seeded per map.
type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// Primary key ↔ index label.
#[derive(Debug, Default, Clone)]
pub struct Labels {
    pub by_pk: FastMap<Vec<u8>, u64>,
    pub by_label: FastMap<u64, Vec<u8>>,
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

impl LiveIndex {
    /// About how many bytes this index holds in memory: the HNSW graph and
    /// vectors (usearch's count) or the full-text segments, plus the
    /// primary-key ↔ label map.
    pub fn memory_bytes(&self) -> usize {
        let data = match &self.data {
            IndexData::Hnsw(v) => v.memory_usage(),
            IndexData::FullText(f) => f.memory_usage(),
        };
        // Per label: the key bytes twice (both maps) and ~64 bytes of
        // hash-map entries.
        let labels: usize = self.labels.by_pk.keys().map(|k| 2 * k.len() + 64).sum();
        data + labels
    }

    /// `Err` (a permanent index error: the job goes to Error) when the
    /// index holds more than `budget` bytes.
    pub fn check_budget(&self, budget: Option<usize>) -> SqlResult<()> {
        let Some(budget) = budget else {
            return Ok(());
        };
        let used = self.memory_bytes();
        if used > budget {
            return Err(ierr(format!(
                "memory budget exceeded: the index holds {used} bytes, more than its budget of \
                 {budget} (--index-memory-budget)"
            )));
        }
        Ok(())
    }
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

    /// Apply ops in order (idempotent by primary key) and make them
    /// searchable: [`stage`](Self::stage) then [`publish`](Self::publish).
    pub fn apply(&mut self, ops: &[Op]) -> SqlResult<()> {
        self.stage(ops)?;
        self.publish()
    }

    /// Apply ops in order (idempotent by primary key). HNSW changes are
    /// searchable at once; full-text changes are buffered in tantivy's
    /// writer (indexed by its own thread) until [`publish`](Self::publish).
    pub fn stage(&mut self, ops: &[Op]) -> SqlResult<()> {
        self.stage_with(ops, false)
    }

    /// [`stage`](Self::stage), but HNSW vectors go to the index's tail of
    /// deferred adds (searched exactly; `tributary_index::vector` module
    /// docs) and [`add_deferred`](Self::add_deferred) moves them into the
    /// graph later: an asynchronous index's units then take as long as
    /// reading their changes, not as long as the graph's adds.
    pub fn stage_deferred(&mut self, ops: &[Op]) -> SqlResult<()> {
        self.stage_with(ops, true)
    }

    /// Moves up to `max` deferred HNSW vectors into the graph; how many.
    pub fn add_deferred(&mut self, max: usize) -> SqlResult<usize> {
        match &mut self.data {
            IndexData::Hnsw(ix) => ix.add_deferred(max).map_err(ierr),
            IndexData::FullText(_) => Ok(0),
        }
    }

    /// Threads a full-text index's writer indexes with from now on (an
    /// initial build uses several, units one); HNSW adds stay serial.
    pub fn set_writer_threads(&mut self, n: usize) {
        if let IndexData::FullText(ix) = &mut self.data {
            ix.set_writer_threads(n);
        }
    }

    /// Deferred HNSW vectors not yet in the graph.
    pub fn deferred(&self) -> usize {
        match &self.data {
            IndexData::Hnsw(ix) => ix.tail_len(),
            IndexData::FullText(_) => 0,
        }
    }

    fn stage_with(&mut self, ops: &[Op], deferred: bool) -> SqlResult<()> {
        for op in ops {
            match op {
                Op::Upsert { pk, vals } => {
                    let label = self.labels.label_for(pk);
                    match &mut self.data {
                        IndexData::Hnsw(ix) => match vals.first().and_then(to_f32) {
                            Some(v) if deferred => ix.upsert_deferred(label, &v).map_err(ierr)?,
                            Some(v) => ix.upsert(label, &v).map_err(ierr)?,
                            None => {
                                // NULL vector: not indexed.
                                ix.remove(label).map_err(ierr)?;
                            }
                        },
                        IndexData::FullText(ix) => {
                            let texts: Vec<Option<Cow<'_, str>>> = vals
                                .iter()
                                .map(|v| match v {
                                    Value::Null => None,
                                    Value::Text(s) => Some(Cow::Borrowed(s.as_str())),
                                    other => Some(Cow::Owned(other.to_string())),
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
        Ok(())
    }

    /// Whether staged changes wait for [`publish`](Self::publish).
    pub fn has_pending(&self) -> bool {
        match &self.data {
            IndexData::Hnsw(_) => false,
            IndexData::FullText(ix) => ix.has_pending(),
        }
    }

    /// Make staged full-text changes searchable (waits for tantivy's
    /// indexing thread); a no-op for HNSW.
    pub fn publish(&mut self) -> SqlResult<()> {
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

    /// The serialized index (labels + usearch/tantivy bytes).
    pub fn base_blob(&mut self) -> SqlResult<Vec<u8>> {
        self.base_parts()?.into_blob()
    }

    /// What a base copies out of the index, for a caller holding its lock;
    /// [`BaseParts::into_blob`] assembles the blob after the lock is gone.
    pub fn base_parts(&mut self) -> SqlResult<BaseParts> {
        if let Some(p) = self.base_parts_shared(Vec::new())? {
            return Ok(p);
        }
        let bytes = match &mut self.data {
            IndexData::Hnsw(ix) => ix.to_bytes().map_err(ierr)?,
            IndexData::FullText(ix) => ix.to_bytes().map_err(ierr)?,
        };
        Ok(BaseParts {
            next: self.labels.next,
            labels: self.label_pairs(),
            data: PartsData::Bytes(bytes),
        })
    }

    /// [`base_parts`](Self::base_parts) under a shared lock, so searches go
    /// on: usearch saves into `buf`; a full-text index's committed files
    /// are taken by reference (`None` while its writer holds uncommitted
    /// operations, or a segment merge replaced files meanwhile: the caller
    /// then needs the exclusive [`base_parts`](Self::base_parts)).
    pub fn base_parts_shared(&self, buf: Vec<u8>) -> SqlResult<Option<BaseParts>> {
        let data = match &self.data {
            IndexData::Hnsw(ix) => PartsData::Hnsw(ix.snapshot_into(buf).map_err(ierr)?),
            IndexData::FullText(ix) => match ix.snapshot_files().map_err(ierr)? {
                Some(files) => PartsData::FullText(files),
                None => return Ok(None),
            },
        };
        Ok(Some(BaseParts {
            next: self.labels.next,
            labels: self.label_pairs(),
            data,
        }))
    }

    /// The size of a buffer for [`base_parts_shared`](Self::base_parts_shared)
    /// (allocate it, touched, before taking the lock, so that its pages are
    /// not faulted in while the lock is held): the usearch copy's current
    /// size plus room for what may be added meanwhile; 0 for full text.
    pub fn base_buffer_len(&self) -> usize {
        match &self.data {
            IndexData::Hnsw(ix) => {
                let n = ix.snapshot_len();
                n + n / 64
            }
            IndexData::FullText(_) => 0,
        }
    }

    fn label_pairs(&self) -> Vec<(Vec<u8>, u64)> {
        self.labels
            .by_pk
            .iter()
            .map(|(pk, l)| (pk.clone(), *l))
            .collect()
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

/// An index's base, copied out under its lock ([`LiveIndex::base_parts`]).
pub struct BaseParts {
    next: u64,
    labels: Vec<(Vec<u8>, u64)>,
    data: PartsData,
}

enum PartsData {
    Hnsw(tributary_index::VectorSnapshot),
    FullText(tributary_index::FullTextSnapshot),
    Bytes(Vec<u8>),
}

impl BaseParts {
    /// The base blob: the label map (sorted by primary key), then the
    /// index's own bytes.
    pub fn into_blob(self) -> SqlResult<Vec<u8>> {
        let BaseParts {
            next,
            mut labels,
            data,
        } = self;
        labels.sort_unstable();
        // The index's own bytes: usearch's copy, or serialized here.
        let (snap, bytes) = match data {
            PartsData::Hnsw(snap) => (Some(snap), Vec::new()),
            PartsData::FullText(files) => (None, files.into_bytes().map_err(ierr)?),
            PartsData::Bytes(b) => (None, b),
        };
        let index_len = snap.as_ref().map_or(bytes.len(), |s| s.len_hint());
        let mut out = Vec::with_capacity(
            16 + labels.iter().map(|(pk, _)| 12 + pk.len()).sum::<usize>() + index_len,
        );
        out.extend_from_slice(&next.to_le_bytes());
        out.extend_from_slice(&(labels.len() as u64).to_le_bytes());
        for (pk, l) in labels {
            out.extend_from_slice(&(pk.len() as u32).to_le_bytes());
            out.extend_from_slice(&pk);
            out.extend_from_slice(&l.to_le_bytes());
        }
        match snap {
            Some(snap) => snap.write_into(&mut out),
            None => out.extend_from_slice(&bytes),
        }
        Ok(out)
    }
}

fn delta_key(ts: u64, seq: u32) -> Vec<u8> {
    let mut k = vec![b'd'];
    k.extend_from_slice(&ts.to_be_bytes());
    k.extend_from_slice(&seq.to_be_bytes());
    k
}

/// Key of chunk `i` of base generation `gen` (`b` ++ gen ++ i); format 0
/// had a single generation (`b` ++ i).
fn chunk_key(meta_format: u32, gen: u64, i: u32) -> Vec<u8> {
    let mut k = vec![b'b'];
    if meta_format > 0 {
        k.extend_from_slice(&gen.to_be_bytes());
    }
    k.extend_from_slice(&i.to_be_bytes());
    k
}

/// Key of a synchronous index's entry for primary key `pk`.
pub fn entry_key(pk: &[u8]) -> Vec<u8> {
    let mut k = Vec::with_capacity(pk.len() + 1);
    k.push(ENTRY_PREFIX);
    k.extend_from_slice(pk);
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

/// A build unit's delta record: u32 count, then per op a u32 length and the op.
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
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(b.len() * 2);
    for x in b {
        s.push(DIGITS[(x >> 4) as usize] as char);
        s.push(DIGITS[(x & 15) as usize] as char);
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
    match txn.get(storage_id, META_KEY, false)? {
        None => Ok(Meta {
            format: FORMAT,
            ..Meta::default()
        }),
        Some(b) => {
            serde_json::from_slice(&b).map_err(|e| SqlError::internal(format!("index meta: {e}")))
        }
    }
}

fn write_meta(txn: &mut dyn Transaction, storage_id: u64, meta: &Meta) -> SqlResult<()> {
    let mb = serde_json::to_vec(meta).map_err(|e| SqlError::internal(e.to_string()))?;
    txn.put(storage_id, META_KEY, mb)?;
    Ok(())
}

fn delete_range(txn: &mut dyn Transaction, storage_id: u64, prefix: u8) -> SqlResult<()> {
    let old = txn.scan(
        storage_id,
        Bound::Included(vec![prefix]),
        Bound::Excluded(vec![prefix + 1]),
        usize::MAX,
    )?;
    for (k, _) in old {
        txn.delete(storage_id, &k)?;
    }
    Ok(())
}

/// Write a new base — the serialized index, reflecting every change up to
/// `base_ts` — and make it the index's base inside `txn`, the commit
/// transaction of the unit that makes `base_ts` the job's watermark.
/// Publishes staged full-text changes. See [`write_chunks`].
pub fn checkpoint(
    storage: &dyn Storage,
    txn: &mut dyn Transaction,
    job_id: u64,
    spec: &JobSpec,
    live: &mut LiveIndex,
    base_ts: u64,
) -> SqlResult<()> {
    let serializing = std::time::Instant::now();
    let blob = live.base_blob()?;
    let base = NewBase {
        why: "build",
        gen: base_ts,
        blob: &blob,
        serialize: serializing.elapsed(),
        assemble: std::time::Duration::ZERO,
    };
    let chunks = write_base(storage, job_id, spec, base, &|| false)?;
    install_base(txn, spec.storage_id, base_ts, chunks)
}

/// A serialized base to write: `why` it is written (for the log), its
/// generation (the ts it reflects), its bytes, and how long serializing it
/// held the index's lock.
pub struct NewBase<'a> {
    pub why: &'static str,
    pub gen: u64,
    pub blob: &'a [u8],
    pub serialize: std::time::Duration,
    /// Time spent assembling the blob after the lock was released (zero
    /// when all of it was done under the lock).
    pub assemble: std::time::Duration,
}

/// [`write_chunks`] for job `job_id`'s index, logging what the base cost
/// (issue 16: checkpoint cost made visible): its size, `serialize` (how
/// long serializing it held the index's lock), how long writing its
/// chunks took, and `why` it was written. Every base goes through here.
pub fn write_base(
    storage: &dyn Storage,
    job_id: u64,
    spec: &JobSpec,
    base: NewBase<'_>,
    stop: &dyn Fn() -> bool,
) -> SqlResult<u32> {
    let NewBase {
        why,
        gen,
        blob,
        serialize,
        assemble,
    } = base;
    let writing = std::time::Instant::now();
    let chunks = write_chunks(storage, spec.storage_id, gen, blob, stop)?;
    tracing::info!(
        job_id,
        index = %spec.index,
        why,
        bytes = blob.len(),
        chunks,
        serialize_ms = serialize.as_millis() as u64,
        assemble_ms = assemble.as_millis() as u64,
        write_ms = writing.elapsed().as_millis() as u64,
        "index checkpoint written"
    );
    Ok(chunks)
}

/// Write a base blob as generation `gen` (the base's ts), a few chunks per
/// transaction of its own, so a large base never holds the storage writer
/// — and with it every other commit — for long. The chunks stay invisible
/// to loads until [`install_base`] switches the metadata to them; chunks of
/// an attempt that is never installed are deleted by the next install.
/// Returns the chunk count; stops (an error) before the next transaction
/// once `stop` says so.
pub fn write_chunks(
    storage: &dyn Storage,
    storage_id: u64,
    gen: u64,
    blob: &[u8],
    stop: &dyn Fn() -> bool,
) -> SqlResult<u32> {
    let chunks: Vec<&[u8]> = blob.chunks(CHUNK_BYTES).collect();
    for (n, group) in chunks.chunks(CHUNKS_PER_TXN).enumerate() {
        stopped(stop, "writing the index base")?;
        let mut txn = storage.begin(Default::default())?;
        for (j, c) in group.iter().enumerate() {
            let i = (n * CHUNKS_PER_TXN + j) as u32;
            if let Err(e) = txn.put(storage_id, &chunk_key(FORMAT, gen, i), c.to_vec()) {
                txn.rollback();
                return Err(e.into());
            }
        }
        txn.commit()?;
    }
    Ok(chunks.len() as u32)
}

/// An error (1317, query interrupted) once `stop` says so: the check a
/// long multi-transaction job makes before each transaction.
fn stopped(stop: &dyn Fn() -> bool, what: &str) -> SqlResult<()> {
    if stop() {
        return Err(SqlError::new(
            crate::error::code::QUERY_INTERRUPTED,
            format!("{what} was canceled"),
        ));
    }
    Ok(())
}

/// Make the chunks [`write_chunks`] wrote for generation `gen` the base
/// at `gen` (its ts), inside the unit's commit transaction `txn`: the
/// metadata names them, and any build delta records are deleted. The other
/// generations' chunks are left to [`purge_stale_chunks`] after the commit
/// (deleting a whole base inside this transaction held the storage writer
/// — and every commit behind it — for as long as that took).
pub fn install_base(
    txn: &mut dyn Transaction,
    storage_id: u64,
    gen: u64,
    chunks: u32,
) -> SqlResult<()> {
    let old = read_meta(txn, storage_id)?;
    install_over(txn, storage_id, gen, chunks, &old)
}

/// [`install_base`] over the metadata `old` already read in `txn`.
fn install_over(
    txn: &mut dyn Transaction,
    storage_id: u64,
    gen: u64,
    chunks: u32,
    old: &Meta,
) -> SqlResult<()> {
    if old.deltas > 0 {
        delete_range(txn, storage_id, b'd')?;
    }
    write_meta(
        txn,
        storage_id,
        &Meta {
            format: FORMAT,
            gen,
            chunks,
            base_ts: gen,
            deltas: 0,
        },
    )
}

/// Delete the chunks of every generation but the installed base's (older
/// bases, and attempts that were never installed), `CHUNKS_PER_TXN` per
/// transaction so that no commit waits long behind it; stops (an error)
/// before the next transaction once `stop` says so. Returns how many it
/// deleted. Run after a base is installed; what it leaves (a crash, a stop)
/// the next run deletes.
pub fn purge_stale_chunks(
    storage: &dyn Storage,
    storage_id: u64,
    stop: &dyn Fn() -> bool,
) -> SqlResult<u64> {
    let meta = {
        let mut txn = storage.begin(Default::default())?;
        let m = read_meta(txn.as_mut(), storage_id);
        txn.rollback();
        m?
    };
    if meta.format == 0 || meta.chunks == 0 {
        // A legacy base (its keys carry no generation) or none yet: the
        // next install of a format-1 base purges.
        return Ok(0);
    }
    // Every chunk key but the installed generation's, in two ranges.
    let ours = chunk_key(FORMAT, meta.gen, 0);
    let after_ours = match meta.gen.checked_add(1) {
        Some(g) => chunk_key(FORMAT, g, 0),
        None => vec![b'c'],
    };
    let mut deleted = 0u64;
    for (lo, hi) in [(vec![b'b'], ours), (after_ours, vec![b'c'])] {
        loop {
            stopped(stop, "purging old index bases")?;
            let mut txn = storage.begin(Default::default())?;
            let r = (|| -> SqlResult<usize> {
                let batch = txn.scan(
                    storage_id,
                    Bound::Included(lo.clone()),
                    Bound::Excluded(hi.clone()),
                    CHUNKS_PER_TXN,
                )?;
                for (k, _) in &batch {
                    txn.delete(storage_id, k)?;
                }
                Ok(batch.len())
            })();
            match r {
                Ok(0) => {
                    txn.rollback();
                    break;
                }
                Ok(n) => {
                    txn.commit()?;
                    deleted += n as u64;
                }
                Err(e) => {
                    txn.rollback();
                    return Err(e);
                }
            }
        }
    }
    Ok(deleted)
}

/// [`install_base`] unless the installed base is already at `gen` or later
/// (a writer that lost the race, or a runner that lost its lease, must not
/// move the base back: the change log before the newer base may be gone).
/// Returns whether it installed.
pub fn install_base_if_newer(
    txn: &mut dyn Transaction,
    storage_id: u64,
    gen: u64,
    chunks: u32,
) -> SqlResult<bool> {
    let old = read_meta(txn, storage_id)?;
    if old.chunks > 0 && old.base_ts >= gen {
        return Ok(false);
    }
    install_over(txn, storage_id, gen, chunks, &old)?;
    Ok(true)
}

/// Persist one initial-build unit (not the last: that one writes a base
/// at the build watermark with [`checkpoint`]): a delta record keyed
/// `(build_ts, seq)` (`seq` is the job iteration, so a retried unit
/// overwrites its own record). Build rows come from snapshot scans, not
/// from the change log, so they cannot be replayed from it and are
/// recorded here.
pub fn persist_build(
    txn: &mut dyn Transaction,
    storage_id: u64,
    build_ts: u64,
    seq: u32,
    ops: &[Op],
) -> SqlResult<()> {
    let mut meta = read_meta(txn, storage_id)?;
    if !ops.is_empty() {
        txn.put(storage_id, &delta_key(build_ts, seq), encode_ops(ops))?;
    }
    meta.deltas += ops.len() as u64;
    write_meta(txn, storage_id, &meta)
}

/// Where an index's changes come from, and how they become index ops.
#[derive(Debug, Clone)]
pub enum Source {
    /// An asynchronous index: the base table's change log (full rows).
    Table { table_id: u64, cols: Vec<usize> },
    /// A synchronous index: its hidden table's entries (`e` ++ pk →
    /// indexed values), written by the writing transactions themselves.
    Entries { storage_id: u64 },
}

impl Source {
    /// The source of a job.
    pub fn of(table_id: u64, spec: &JobSpec) -> Source {
        if spec.is_sync_live() {
            Source::Entries {
                storage_id: spec.storage_id,
            }
        } else {
            Source::Table {
                table_id,
                cols: spec.columns.clone(),
            }
        }
    }

    /// The storage table whose change log feeds the index.
    pub fn table(&self) -> u64 {
        match self {
            Source::Table { table_id, .. } => *table_id,
            Source::Entries { storage_id } => *storage_id,
        }
    }

    /// Index ops of `changes` (in order).
    pub fn ops(&self, changes: &[Change]) -> SqlResult<Vec<Op>> {
        let mut ops = Vec::with_capacity(changes.len());
        for c in changes {
            match self {
                Source::Table { cols, .. } => match (c.kind, &c.new) {
                    (ChangeKind::Delete, _) | (_, None) => {
                        ops.push(Op::Delete { pk: c.key.clone() })
                    }
                    (_, Some(n)) => ops.push(Op::Upsert {
                        pk: c.key.clone(),
                        vals: cols_of(n, cols)?,
                    }),
                },
                Source::Entries { .. } => {
                    let Some((&ENTRY_PREFIX, pk)) = c.key.split_first() else {
                        continue; // base chunks and metadata
                    };
                    ops.push(match &c.new {
                        None => Op::Delete { pk: pk.to_vec() },
                        Some(v) => Op::Upsert {
                            pk: pk.to_vec(),
                            vals: decode_row(v).map_err(|e| {
                                SqlError::internal(format!("corrupt index entry: {e}"))
                            })?,
                        },
                    });
                }
            }
        }
        Ok(ops)
    }
}

/// The indexed column values of an encoded row.
pub fn cols_of(row: &[u8], cols: &[usize]) -> SqlResult<Vec<Value>> {
    let mut r = decode_row(row)
        .map_err(|e| SqlError::internal(format!("corrupt row in change log: {e}")))?;
    // Move each value out (no copy of the text), unless a later index
    // column names the same table column again.
    Ok(cols
        .iter()
        .enumerate()
        .map(|(i, &c)| match r.get_mut(c) {
            Some(v) if cols[i + 1..].contains(&c) => v.clone(),
            Some(v) => std::mem::replace(v, Value::Null),
            None => Value::Null,
        })
        .collect())
}

/// Encoded value of a synchronous index entry.
pub fn encode_entry(vals: &[Value]) -> Vec<u8> {
    encode_row(vals)
}

/// An index loaded from its hidden table, positioned at `position`.
pub struct Loaded {
    pub index: LiveIndex,
    /// Base checkpoint ts (change log is replayed above it).
    pub base_ts: u64,
    /// Changes replayed on top of the base (drives the next checkpoint).
    pub since_base: u64,
}

/// Load a job's index from its hidden table as of the snapshot of `txn`:
/// the base, then any build deltas, then a replay of the source's change
/// log in `(base_ts, upto]` — or, for a synchronous index without a base,
/// every entry visible in `txn`.
pub fn load(
    storage: &dyn Storage,
    txn: &mut dyn Transaction,
    spec: &JobSpec,
    source: &Source,
    upto: u64,
) -> SqlResult<Loaded> {
    let meta = read_meta(txn, spec.storage_id)?;
    let mut live = if meta.chunks == 0 {
        LiveIndex::new(spec, spec.dims)?
    } else {
        let mut blob = Vec::new();
        for i in 0..meta.chunks {
            let c = txn
                .get(spec.storage_id, &chunk_key(meta.format, meta.gen, i), false)?
                .ok_or_else(|| SqlError::internal("missing index chunk"))?;
            blob.extend_from_slice(&c);
        }
        LiveIndex::from_base(spec, &blob)?
    };
    if meta.deltas > 0 {
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
        live.stage(&ops)?;
    }
    let since_base = if meta.format < FORMAT {
        // Written before bases were kept at a watermark: its delta records
        // cover everything up to the watermark. Checkpoint at the next unit.
        u64::MAX
    } else if matches!(source, Source::Entries { .. }) && meta.chunks == 0 {
        let rows = txn.scan(
            spec.storage_id,
            Bound::Included(vec![ENTRY_PREFIX]),
            Bound::Excluded(vec![ENTRY_PREFIX + 1]),
            usize::MAX,
        )?;
        let changes: Vec<Change> = rows
            .into_iter()
            .map(|(key, v)| Change {
                commit_ts: upto,
                seq: 0,
                kind: ChangeKind::Insert,
                key,
                old: None,
                new: Some(v),
            })
            .collect();
        live.stage(&source.ops(&changes)?)?;
        changes.len() as u64
    } else {
        replay(storage, source, &mut live, meta.base_ts, upto)?
    };
    live.publish()?;
    Ok(Loaded {
        index: live,
        base_ts: meta.base_ts,
        since_base,
    })
}

/// Apply the source's changes in `(from, upto]` to `live` (staged, not
/// published); returns how many changes were applied.
pub fn replay(
    storage: &dyn Storage,
    source: &Source,
    live: &mut LiveIndex,
    from: u64,
    upto: u64,
) -> SqlResult<u64> {
    let mut n = 0u64;
    if upto <= from {
        return Ok(0);
    }
    let mut resume = None;
    loop {
        let b = storage.changes(source.table(), from, upto, resume, REPLAY_BATCH)?;
        n += b.changes.len() as u64;
        live.stage(&source.ops(&b.changes)?)?;
        match b.resume {
            Some(r) => resume = Some(r),
            None => return Ok(n),
        }
    }
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

    fn ft_spec(storage_id: u64) -> JobSpec {
        JobSpec {
            db: "d".into(),
            table: "t".into(),
            index: "ft".into(),
            kind: IndexKind::FullText {
                parser: "default".into(),
            },
            columns: vec![1],
            storage_id,
            is_async: true,
            dims: 0,
            collations: Vec::new(),
        }
    }

    fn upsert(pk: u8, text: &str) -> Op {
        Op::Upsert {
            pk: vec![pk],
            vals: vec![Value::Text(text.into())],
        }
    }

    fn hits(live: &LiveIndex, word: &str) -> usize {
        match &live.data {
            IndexData::FullText(ix) => ix
                .search(word, tributary_index::MatchMode::Natural, 100)
                .unwrap()
                .len(),
            IndexData::Hnsw(_) => unreachable!("full-text spec"),
        }
    }

    /// A full-text base is taken under a shared lock once nothing is
    /// buffered, and reloads to the same index.
    #[test]
    fn a_full_text_base_needs_no_exclusive_lock() {
        let spec = ft_spec(11);
        let mut live = LiveIndex::new(&spec, 0).unwrap();
        live.stage(&[upsert(1, "alpha"), upsert(2, "beta")])
            .unwrap();
        assert!(
            live.base_parts_shared(Vec::new()).unwrap().is_none(),
            "buffered operations need the writer"
        );
        live.publish().unwrap();
        let blob = live
            .base_parts_shared(Vec::new())
            .unwrap()
            .expect("committed files are copied under a shared lock")
            .into_blob()
            .unwrap();
        let back = LiveIndex::from_base(&spec, &blob).unwrap();
        assert_eq!(back.len(), 2);
        assert_eq!(hits(&back, "alpha"), 1);
        assert_eq!(back.labels.by_pk.len(), 2);
    }

    #[test]
    fn base_plus_change_log_replay_reloads_the_index_at_the_watermark() {
        let dir = tempfile::tempdir().unwrap();
        let storage = tributary_storage::EmbeddedStorage::open(dir.path()).unwrap();
        let (table, hidden) = (10u64, 11u64);
        let spec = ft_spec(hidden);
        let source = Source::Table {
            table_id: table,
            cols: vec![1],
        };
        let write = |k: u8, body: Option<&str>| {
            let mut txn = storage.begin(Default::default()).unwrap();
            match body {
                Some(b) => txn
                    .put(
                        table,
                        &[k],
                        encode_row(&[Value::Int(k as i64), Value::Text(b.into())]),
                    )
                    .unwrap(),
                None => txn.delete(table, &[k]).unwrap(),
            };
            txn.commit().unwrap()
        };
        write(1, Some("alpha"));
        let base_ts = write(2, Some("beta"));
        // The index at base_ts, checkpointed.
        let mut live = LiveIndex::new(&spec, 0).unwrap();
        live.apply(&[upsert(1, "alpha"), upsert(2, "beta")])
            .unwrap();
        let mut txn = storage.begin(Default::default()).unwrap();
        checkpoint(storage.as_ref(), txn.as_mut(), 1, &spec, &mut live, base_ts).unwrap();
        txn.commit().unwrap();
        // Changes after the base live only in the table's change log.
        write(3, Some("gamma"));
        let wm = write(1, None);
        write(4, Some("delta")); // after the watermark: not in the index
        let mut txn = storage.begin(Default::default()).unwrap();
        let l = load(storage.as_ref(), txn.as_mut(), &spec, &source, wm).unwrap();
        txn.rollback();
        assert_eq!(l.base_ts, base_ts);
        assert_eq!(l.since_base, 2, "gamma insert + alpha delete replayed");
        assert_eq!(
            ["alpha", "beta", "gamma", "delta"].map(|w| hits(&l.index, w)),
            [0, 1, 1, 0]
        );
    }

    #[test]
    fn legacy_delta_records_load_without_replay() {
        let dir = tempfile::tempdir().unwrap();
        let storage = tributary_storage::EmbeddedStorage::open(dir.path()).unwrap();
        let spec = ft_spec(11);
        let mut txn = storage.begin(Default::default()).unwrap();
        // Format 0: no format field, every unit a delta record.
        txn.put(11, META_KEY, br#"{"chunks":0,"deltas":2}"#.to_vec())
            .unwrap();
        txn.put(
            11,
            &delta_key(5, 0),
            encode_ops(&[upsert(1, "alpha"), upsert(2, "beta")]),
        )
        .unwrap();
        txn.commit().unwrap();
        let mut txn = storage.begin(Default::default()).unwrap();
        let source = Source::Table {
            table_id: 10,
            cols: vec![1],
        };
        let l = load(storage.as_ref(), txn.as_mut(), &spec, &source, 5).unwrap();
        txn.rollback();
        assert_eq!(l.index.len(), 2);
        assert_eq!(l.since_base, u64::MAX, "a new base is due at the next unit");
    }

    #[test]
    fn a_base_is_installed_whole_and_stale_generations_are_deleted() {
        let dir = tempfile::tempdir().unwrap();
        let storage = tributary_storage::EmbeddedStorage::open(dir.path()).unwrap();
        let hidden = 11u64;
        let spec = ft_spec(hidden);
        let mut live = LiveIndex::new(&spec, 0).unwrap();
        live.apply(&[upsert(1, "alpha")]).unwrap();
        // An attempt whose chunks were written but never installed (a
        // failed or refused unit): invisible to loads.
        let blob = live.base_blob().unwrap();
        write_chunks(storage.as_ref(), hidden, 5, &blob, &|| false).unwrap();
        let source = Source::Table {
            table_id: 10,
            cols: vec![1],
        };
        let mut txn = storage.begin(Default::default()).unwrap();
        let l = load(storage.as_ref(), txn.as_mut(), &spec, &source, 0).unwrap();
        txn.rollback();
        assert_eq!(l.index.len(), 0, "an uninstalled base is not the base");
        // The next checkpoint installs its own generation; the purge after
        // it deletes the stale ones, older (5) and newer (9, an attempt
        // whose install never happened), in small transactions.
        live.apply(&[upsert(2, "beta")]).unwrap();
        let mut txn = storage.begin(Default::default()).unwrap();
        checkpoint(storage.as_ref(), txn.as_mut(), 1, &spec, &mut live, 7).unwrap();
        txn.commit().unwrap();
        write_chunks(storage.as_ref(), hidden, 9, &blob, &|| false).unwrap();
        assert!(
            purge_stale_chunks(storage.as_ref(), hidden, &|| true).is_err(),
            "a stopped purge says so"
        );
        let purged = purge_stale_chunks(storage.as_ref(), hidden, &|| false).unwrap();
        let per_attempt = blob.len().div_ceil(CHUNK_BYTES) as u64;
        assert_eq!(purged, 2 * per_attempt);
        assert_eq!(
            purge_stale_chunks(storage.as_ref(), hidden, &|| false).unwrap(),
            0
        );
        let mut txn = storage.begin(Default::default()).unwrap();
        let keys: Vec<Vec<u8>> = txn
            .scan(
                hidden,
                Bound::Included(vec![b'b']),
                Bound::Excluded(vec![b'c']),
                usize::MAX,
            )
            .unwrap()
            .into_iter()
            .map(|(k, _)| k)
            .collect();
        assert!(!keys.is_empty());
        assert!(
            keys.iter().all(|k| k[1..9] == 7u64.to_be_bytes()),
            "{keys:?}"
        );
        let l = load(storage.as_ref(), txn.as_mut(), &spec, &source, 7).unwrap();
        txn.rollback();
        assert_eq!((l.base_ts, l.index.len()), (7, 2));
    }
}
