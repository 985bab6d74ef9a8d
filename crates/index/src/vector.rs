//! HNSW vector index: a thin, safe wrapper over [`usearch::Index`].
//!
//! Owns: validation of vectors (dimension, finiteness), automatic capacity growth,
//! upsert-by-key semantics, conversion of usearch distances into the SQL distances the
//! planner compares (`l2_distance`, `cosine_distance`, inner-product distance), bounding
//! of concurrent searches to the number of reserved usearch thread contexts, and the
//! byte format returned by [`VectorIndex::to_bytes`].
//!
//! ## Equal vectors: one node, many keys
//! The graph's nodes are distinct vectors, not keys. A key whose vector
//! is bit-for-bit equal to one already in the graph (`-0.0` = `0.0`) joins
//! that node: no add, no new node (pgvector does the same with its heap
//! TIDs). HNSW cannot hold many equal vectors: a node's neighbour
//! heuristic keeps one of a group of equal candidates, so the copies lose
//! their in-links (20,000 copies of one vector: 19,190 unreachable) and
//! every add walks a plateau of equal distances (30–70 s to build them).
//! A search asks the graph for nodes and answers keys: each node found
//! stands for its keys, smallest first, so `k` counts keys, and a filtered
//! search accepts a node when one of its keys passes (decision 020).
//! Equality is found through a hash of the vector's bits (`by_hash`),
//! confirmed against the node's stored vector.
//!
//! ## Updates and deletes: tombstones, never slot reuse
//! usearch's own `remove` frees a node's slot for reuse; the next `add` then
//! overwrites the node's neighbour lists, and a node reachable only through
//! the old ones becomes unreachable — a row whose own vector no search finds
//! (measured: 3 of 2,444 keys after 60,000 updates/deletes of 3,000 keys;
//! `tests/reachability.rs`). So this wrapper never removes from usearch: a
//! node no key holds any more stays in the graph as a tombstone (still
//! walked through, never returned, via usearch's filtered search), a new
//! vector gets a new node (ids count up; a tombstone is revived when its
//! vector comes back), and when tombstones outnumber live nodes the graph
//! is rebuilt from the live ones ([`VectorIndex::compact`]). Keys are
//! limited to [`MAX_KEY`].
//!
//! Must never: touch files, know about SQL or transactions, or hand unchecked bytes to
//! usearch — [`VectorIndex::from_bytes`] verifies magic, version and checksum first, so
//! garbage is an error rather than undefined behaviour in C++.
//!
//! ## Deferred adds: the tail
//! An HNSW add costs far more than reading a change (0.5–0.8 ms at 100k–160k
//! 128-d vectors, `examples/add_cost.rs`), and adds cannot run on several
//! threads (decision 014). So an asynchronous index's consumer upserts with
//! [`VectorIndex::upsert_deferred`]: the vector goes to a tail that every
//! search scans exactly and merges with the graph's answer, and
//! [`VectorIndex::add_deferred`] moves tail vectors into the graph later, a
//! few at a time. A row is then searchable as soon as its change is read,
//! and the adds catch up behind it. The tail holds at most [`TAIL_CAP`]
//! vectors: past that, an upsert first adds the oldest ones itself (the
//! writer slows to the graph's pace; searches never scan more). Snapshots
//! carry the tail (format version 3). A deferred vector equal to one in
//! the graph joins its node at once, without the tail.
//!
//! ## Distances
//! `search` returns `(key, distance)` in ascending distance:
//! - [`Metric::L2`]: euclidean distance, `sqrt(sum((a-b)^2))` (usearch computes the
//!   squared distance; we take the square root),
//! - [`Metric::Cosine`]: `1 - cos(a, b)`,
//! - [`Metric::InnerProduct`]: usearch's inner-product distance `1 - dot(a, b)`.
//!
//! ## Scalar type
//! Vectors are accepted as `f32`. With [`HnswOptions::f64`] set, usearch stores them as
//! `f64` internally (a widening cast, so no precision is gained over the `f32` input);
//! otherwise they are stored as `f32`.

use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use usearch::{IndexOptions, MetricKind, ScalarKind};

use crate::codec::{self, Reader};
use crate::{IndexError, Result};

/// Default HNSW connectivity (`M`).
pub const DEFAULT_M: usize = 16;
/// Default `EF_CONSTRUCTION`.
pub const DEFAULT_EF_CONSTRUCTION: usize = 128;
/// Default `EF_SEARCH`.
pub const DEFAULT_EF_SEARCH: usize = 64;

/// Number of usearch thread contexts reserved per index = the maximum number of
/// searches that run at once; further searches wait (bounded by [`SEARCH_SLOT_WAIT`]).
/// Sized to the server's realistic concurrency (a context is a few KiB), so
/// that 64 clients on a small machine queue on CPU, not on a slot.
const SEARCH_THREADS: usize = 64;
/// How long a search waits for a free thread context: [`VectorIndex::try_search_with_ef`]
/// then answers `None` (callers evaluate exactly), [`VectorIndex::search`] fails.
/// Never tens of seconds (issue 17: a 30 s wait here was a stall source).
const SEARCH_SLOT_WAIT: Duration = Duration::from_secs(1);
/// Initial capacity reserved by [`VectorIndex::new`].
const INITIAL_CAPACITY: usize = 64;

const MAGIC: &[u8; 8] = b"TRIBVEC\0";
/// Version 4 stores nodes apart from keys (equal vectors share a node):
/// the next node id, tombstones, (key, node) and (vector hash, node)
/// tables, the tail. Versions 1–3 (usearch key = caller key | generation
/// << 40) still load: their live vectors are added again as they load.
const FORMAT_VERSION: u32 = 4;

/// Most vectors the tail of deferred adds holds (see the module docs): a
/// search scans it exactly, about 0.04 ms per 1,000 128-d vectors
/// (`examples/add_cost.rs`: a full tail adds 0.7 ms).
pub const TAIL_CAP: usize = 16_384;

/// Bits of a caller key in formats 1–3 (the bits above held a generation).
const KEY_BITS: u32 = 40;
/// Largest key [`VectorIndex::upsert`] accepts.
pub const MAX_KEY: u64 = (1 << KEY_BITS) - 1;
/// Graphs of at most this many nodes (live or tombstones) are searched
/// exactly, like Qdrant's `full_scan_threshold`: scanning a thousand
/// vectors costs about what a walk does, and the answer is exact. A walk is
/// not: on low-dimensional data HNSW keeps ~2 links a node, and a node
/// added while tombstones sat where its neighbours now are may be reached
/// by no walk from a nearby query
/// (`tests::a_node_added_among_tombstones_is_found`). Larger graphs bound
/// that loss by compaction ([`VectorIndex::compaction_due`]).
const EXACT_SEARCH_MAX_NODES: usize = 1024;
/// Tombstones below this count never make a compaction due.
const COMPACT_MIN_TOMBSTONES: usize = 1024;
/// A compaction is due ([`VectorIndex::compaction_due`]) when tombstones
/// outnumber live vectors; callers run it off their write path
/// ([`VectorIndex::compacted`]). Only past this many times that threshold
/// does a mutation compact inline (a bound on memory when nobody does).
const COMPACT_INLINE_FACTOR: usize = 4;

/// Distance metric of a vector index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Metric {
    /// Euclidean distance (`vector_l2_ops`).
    L2,
    /// Cosine distance `1 - cos` (`vector_cosine_ops`).
    Cosine,
    /// Inner-product distance `1 - dot` (`vector_ip_ops`).
    InnerProduct,
}

impl Metric {
    /// Parses a MatrixOne `OP_TYPE` (`vector_l2_ops`, `vector_cosine_ops`,
    /// `vector_ip_ops`; case-insensitive).
    pub fn from_op_type(op_type: &str) -> Result<Metric> {
        match op_type.trim().to_ascii_lowercase().as_str() {
            "vector_l2_ops" => Ok(Metric::L2),
            "vector_cosine_ops" => Ok(Metric::Cosine),
            "vector_ip_ops" => Ok(Metric::InnerProduct),
            other => Err(IndexError::InvalidOptions(format!(
                "unknown vector op type {other:?} (expected vector_l2_ops, vector_cosine_ops or vector_ip_ops)"
            ))),
        }
    }

    /// The MatrixOne `OP_TYPE` name of this metric.
    pub fn op_type(self) -> &'static str {
        match self {
            Metric::L2 => "vector_l2_ops",
            Metric::Cosine => "vector_cosine_ops",
            Metric::InnerProduct => "vector_ip_ops",
        }
    }

    fn usearch_kind(self) -> MetricKind {
        match self {
            Metric::L2 => MetricKind::L2sq,
            Metric::Cosine => MetricKind::Cos,
            Metric::InnerProduct => MetricKind::IP,
        }
    }

    /// Converts a raw usearch distance into this metric's SQL distance.
    fn sql_distance(self, raw: f32) -> f32 {
        match self {
            Metric::L2 => raw.max(0.0).sqrt(),
            Metric::Cosine | Metric::InnerProduct => raw,
        }
    }

    /// The SQL distance between two vectors, computed exactly (for brute-force checks
    /// and for rows that are not indexed yet). Same definitions as [`VectorIndex::search`].
    pub fn distance(self, a: &[f32], b: &[f32]) -> f32 {
        match self {
            Metric::L2 => a
                .iter()
                .zip(b)
                .map(|(x, y)| {
                    let d = f64::from(*x) - f64::from(*y);
                    d * d
                })
                .sum::<f64>()
                .sqrt() as f32,
            Metric::Cosine => {
                let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
                for (x, y) in a.iter().zip(b) {
                    let (x, y) = (f64::from(*x), f64::from(*y));
                    dot += x * y;
                    na += x * x;
                    nb += y * y;
                }
                if na == 0.0 && nb == 0.0 {
                    0.0
                } else if na == 0.0 || nb == 0.0 {
                    1.0
                } else {
                    (1.0 - dot / (na.sqrt() * nb.sqrt())) as f32
                }
            }
            Metric::InnerProduct => {
                let dot: f64 = a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| f64::from(*x) * f64::from(*y))
                    .sum();
                (1.0 - dot) as f32
            }
        }
    }
}

/// Options of an HNSW index (MatrixOne names: `M`, `EF_CONSTRUCTION`, `EF_SEARCH`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HnswOptions {
    /// Vector dimension (> 0).
    pub dims: usize,
    /// Distance metric.
    pub metric: Metric,
    /// Graph connectivity `M` (> 0).
    pub m: usize,
    /// Beam width while inserting.
    pub ef_construction: usize,
    /// Default beam width while searching.
    pub ef_search: usize,
    /// Store vectors as `f64` inside usearch (see module docs).
    pub f64: bool,
}

impl HnswOptions {
    /// Options with the defaults `M 16 EF_CONSTRUCTION 128 EF_SEARCH 64`, `f32` storage.
    pub fn new(dims: usize, metric: Metric) -> Self {
        Self {
            dims,
            metric,
            m: DEFAULT_M,
            ef_construction: DEFAULT_EF_CONSTRUCTION,
            ef_search: DEFAULT_EF_SEARCH,
            f64: false,
        }
    }

    fn validate(&self) -> Result<()> {
        if self.dims == 0 {
            return Err(IndexError::InvalidOptions("dims must be > 0".into()));
        }
        if self.m < 2 {
            return Err(IndexError::InvalidOptions("M must be >= 2".into()));
        }
        if self.ef_construction == 0 || self.ef_search == 0 {
            return Err(IndexError::InvalidOptions(
                "EF_CONSTRUCTION and EF_SEARCH must be > 0".into(),
            ));
        }
        Ok(())
    }

    fn usearch_options(&self) -> IndexOptions {
        IndexOptions {
            dimensions: self.dims,
            metric: self.metric.usearch_kind(),
            quantization: if self.f64 {
                ScalarKind::F64
            } else {
                ScalarKind::F32
            },
            connectivity: self.m,
            expansion_add: self.ef_construction,
            expansion_search: self.ef_search,
            multi: false,
        }
    }
}

/// Counting semaphore bounding concurrent searches to the reserved thread contexts.
struct SearchSlots {
    free: Mutex<usize>,
    cv: Condvar,
}

struct SlotGuard<'a>(&'a SearchSlots);

impl SearchSlots {
    fn new(n: usize) -> Self {
        Self {
            free: Mutex::new(n),
            cv: Condvar::new(),
        }
    }

    fn acquire(&self) -> Result<SlotGuard<'_>> {
        self.try_acquire()?
            .ok_or_else(|| IndexError::Vector("timed out waiting for a free search slot".into()))
    }

    /// A slot, or `None` after [`SEARCH_SLOT_WAIT`].
    fn try_acquire(&self) -> Result<Option<SlotGuard<'_>>> {
        let deadline = Instant::now() + SEARCH_SLOT_WAIT;
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            free = match self.cv.wait_timeout(free, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *free -= 1;
        Ok(Some(SlotGuard(self)))
    }
}

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut free = self.0.free.lock().unwrap_or_else(|p| p.into_inner());
        *free += 1;
        drop(free);
        self.0.cv.notify_one();
    }
}

/// A copy of a [`VectorIndex`]'s state taken by [`VectorIndex::snapshot`].
pub struct VectorSnapshot {
    opts: Vec<u8>,
    raw: Vec<u8>,
    next_node: u64,
    dead: Vec<u64>,
    /// (caller key, node) of every key in the graph.
    members: Vec<(u64, u64)>,
    /// (vector hash, node).
    hashes: Vec<(u64, u64)>,
    tail: Vec<(u64, Vec<f32>)>,
}

impl VectorSnapshot {
    /// The bytes [`VectorIndex::to_bytes`] returns for the snapshotted index.
    pub fn into_bytes(self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len_hint());
        self.write_into(&mut out);
        out
    }

    /// About how many bytes [`write_into`](Self::write_into) appends.
    pub fn len_hint(&self) -> usize {
        self.raw.len()
            + self.opts.len()
            + 96
            + 8 * self.dead.len()
            + 16 * self.members.len()
            + 16 * self.hashes.len()
            + self
                .tail
                .iter()
                .map(|(_, v)| 8 + 4 * v.len())
                .sum::<usize>()
    }

    /// Appends [`into_bytes`](Self::into_bytes)'s bytes to `out` (one copy of
    /// usearch's buffer, straight into the caller's).
    pub fn write_into(self, out: &mut Vec<u8>) {
        let VectorSnapshot {
            opts,
            raw,
            next_node,
            mut dead,
            mut members,
            mut hashes,
            mut tail,
        } = self;
        dead.sort_unstable();
        members.sort_unstable();
        hashes.sort_unstable();
        tail.sort_unstable_by_key(|(k, _)| *k);
        let put_u64 = |p: &mut Vec<u8>, x: u64| p.extend_from_slice(&x.to_le_bytes());
        codec::seal_into(out, MAGIC, FORMAT_VERSION, |payload| {
            codec::put_bytes(payload, &opts);
            codec::put_bytes(payload, &raw);
            put_u64(payload, next_node);
            put_u64(payload, dead.len() as u64);
            for u in dead {
                put_u64(payload, u);
            }
            for pairs in [members, hashes] {
                put_u64(payload, pairs.len() as u64);
                for (a, b) in pairs {
                    put_u64(payload, a);
                    put_u64(payload, b);
                }
            }
            put_u64(payload, tail.len() as u64);
            for (k, v) in tail {
                put_u64(payload, k);
                for x in v {
                    payload.extend_from_slice(&x.to_le_bytes());
                }
            }
        });
    }
}

/// The caller keys (rows) of one graph node: equal vectors share a node.
#[derive(Clone, Debug)]
enum Rows {
    One(u64),
    Many(std::collections::BTreeSet<u64>),
}

impl Rows {
    fn insert(&mut self, key: u64) {
        match self {
            Rows::One(k) if *k == key => {}
            Rows::One(k) => *self = Rows::Many([*k, key].into_iter().collect()),
            Rows::Many(s) => {
                s.insert(key);
            }
        }
    }

    /// Removes `key`; whether no row is left.
    fn remove(&mut self, key: u64) -> bool {
        let single = match self {
            Rows::One(k) => return *k == key,
            Rows::Many(s) => {
                s.remove(&key);
                if s.is_empty() {
                    return true;
                }
                if s.len() == 1 {
                    s.first().copied()
                } else {
                    None
                }
            }
        };
        if let Some(k) = single {
            *self = Rows::One(k);
        }
        false
    }

    /// The keys, ascending.
    fn iter(&self) -> impl Iterator<Item = u64> + '_ {
        let (one, many) = match self {
            Rows::One(k) => (Some(*k), None),
            Rows::Many(s) => (None, Some(s.iter().copied())),
        };
        one.into_iter().chain(many.into_iter().flatten())
    }
}

/// The hash [`VectorIndex`] finds equal vectors by: the bits of each
/// component, `-0.0` counted as `0.0` (they compare equal). Stable across
/// builds: it is persisted (format version 4).
fn vector_hash(v: &[f32]) -> u64 {
    const K: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut h: u64 = 0xcbf2_9ce4_8422_2325 ^ (v.len() as u64).wrapping_mul(K);
    for x in v {
        let bits = if *x == 0.0 { 0 } else { x.to_bits() };
        h = (h ^ u64::from(bits)).wrapping_mul(K).rotate_left(29);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^ (h >> 33)
}

/// An in-memory HNSW index from `u64` keys to vectors. `Send + Sync`: searches take
/// `&self` and may run concurrently; mutations take `&mut self`.
///
/// The graph's nodes are distinct vectors, not keys (module docs, "Equal
/// vectors"): `node_of` and `rows` map keys to nodes and back.
pub struct VectorIndex {
    opts: HnswOptions,
    inner: usearch::Index,
    slots: SearchSlots,
    /// Graph node (usearch key) of every caller key whose vector is in the graph.
    node_of: std::collections::HashMap<u64, u64>,
    /// The caller keys of every live node (never empty).
    rows: std::collections::HashMap<u64, Rows>,
    /// Tombstones: nodes in the graph with no key (deleted or replaced
    /// vectors), walked through, never returned.
    dead: std::collections::HashSet<u64>,
    /// Vector hash → a node (live or tombstone) holding that vector. A
    /// colliding distinct vector gets a node of its own and no entry.
    by_hash: std::collections::HashMap<u64, u64>,
    /// The usearch key of the next new node.
    next_node: u64,
    /// Deferred vectors, not in the graph yet (module docs). A key here
    /// has no graph node.
    tail: Tail,
}

/// The deferred vectors of a [`VectorIndex`], oldest first.
#[derive(Clone, Default)]
struct Tail {
    /// Arrival number → (caller key, vector).
    by_arrival: std::collections::BTreeMap<u64, (u64, Vec<f32>)>,
    /// Caller key → its arrival number.
    arrival_of: std::collections::HashMap<u64, u64>,
    /// The next arrival number.
    next: u64,
}

impl Tail {
    fn len(&self) -> usize {
        self.by_arrival.len()
    }

    fn contains(&self, key: u64) -> bool {
        self.arrival_of.contains_key(&key)
    }

    /// `key`'s vector, to replace in place (it keeps its age).
    fn get_mut(&mut self, key: u64) -> Option<&mut Vec<f32>> {
        let i = self.arrival_of.get(&key)?;
        self.by_arrival.get_mut(i).map(|(_, v)| v)
    }

    /// Appends `key` (not in the tail) as the newest.
    fn push(&mut self, key: u64, v: Vec<f32>) {
        self.put_back(self.next, key, v);
        self.next += 1;
    }

    /// Puts an entry [`pop_oldest`](Self::pop_oldest) took back in its place.
    fn put_back(&mut self, arrival: u64, key: u64, v: Vec<f32>) {
        self.arrival_of.insert(key, arrival);
        self.by_arrival.insert(arrival, (key, v));
    }

    fn pop_oldest(&mut self) -> Option<(u64, u64, Vec<f32>)> {
        let (i, (key, v)) = self.by_arrival.pop_first()?;
        self.arrival_of.remove(&key);
        Some((i, key, v))
    }

    /// Removes `key`'s vector; whether it was there.
    fn take(&mut self, key: u64) -> bool {
        match self.arrival_of.remove(&key) {
            Some(i) => self.by_arrival.remove(&i).is_some(),
            None => false,
        }
    }

    /// (caller key, vector), oldest first.
    fn iter(&self) -> impl Iterator<Item = &(u64, Vec<f32>)> {
        self.by_arrival.values()
    }
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("opts", &self.opts)
            .field("len", &self.len())
            .field("tail", &self.tail.len())
            .field("capacity", &self.inner.capacity())
            .finish()
    }
}

/// A tail vector's raw distance and key, ordered by distance then key (a
/// max-heap of them keeps the nearest).
#[derive(PartialEq)]
struct TailHit(f32, u64);

impl Eq for TailHit {}

impl PartialOrd for TailHit {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for TailHit {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0).then(self.1.cmp(&other.1))
    }
}

/// A predicate on keys (usearch's or the caller's).
type KeyFilter<'a> = &'a dyn Fn(u64) -> bool;

/// usearch's raw distance of `metric` (squared for L2; see
/// [`Metric::sql_distance`]) in `f32`, as the graph computes it, for the
/// tail's exact scan: eight lanes, so that the compiler vectorizes it.
fn raw_distance(metric: Metric, a: &[f32], b: &[f32]) -> f32 {
    match metric {
        Metric::L2 => lanes(a, b, |x, y| (x - y) * (x - y)),
        Metric::InnerProduct => 1.0 - lanes(a, b, |x, y| x * y),
        Metric::Cosine => {
            let (na, nb) = (lanes(a, a, |x, y| x * y), lanes(b, b, |x, y| x * y));
            if na == 0.0 && nb == 0.0 {
                0.0
            } else if na == 0.0 || nb == 0.0 {
                1.0
            } else {
                1.0 - lanes(a, b, |x, y| x * y) / (na.sqrt() * nb.sqrt())
            }
        }
    }
}

/// `sum(f(a[i], b[i]))` in eight independent lanes.
#[inline(always)]
fn lanes(a: &[f32], b: &[f32], f: impl Fn(f32, f32) -> f32) -> f32 {
    const LANES: usize = 8;
    let mut acc = [0f32; LANES];
    let (ca, cb) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..LANES {
            acc[i] += f(x[i], y[i]);
        }
    }
    for (x, y) in ra.iter().zip(rb) {
        acc[0] += f(*x, *y);
    }
    acc.iter().sum()
}

fn vec_err(e: impl std::fmt::Display) -> IndexError {
    IndexError::Vector(e.to_string())
}

/// Run a call into usearch so that a panic on its Rust side (for example a
/// capacity overflow) becomes an error for this one call instead of
/// unwinding through, or aborting, the server.
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T>) -> Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic".into());
            Err(IndexError::Vector(format!("usearch {what} failed: {msg}")))
        }
    }
}

impl VectorIndex {
    /// Creates an empty index.
    pub fn new(opts: HnswOptions) -> Result<Self> {
        opts.validate()?;
        let inner = usearch::Index::new(&opts.usearch_options()).map_err(vec_err)?;
        inner
            .reserve_capacity_and_threads(INITIAL_CAPACITY, SEARCH_THREADS)
            .map_err(vec_err)?;
        Ok(Self::with_graph(opts, inner))
    }

    /// An index over `inner` with no keys yet.
    fn with_graph(opts: HnswOptions, inner: usearch::Index) -> Self {
        Self {
            opts,
            inner,
            slots: SearchSlots::new(SEARCH_THREADS),
            node_of: Default::default(),
            rows: Default::default(),
            dead: Default::default(),
            by_hash: Default::default(),
            next_node: 0,
            tail: Tail::default(),
        }
    }

    /// Number of tombstones (graph nodes no key holds any more).
    pub fn tombstones(&self) -> usize {
        self.dead.len()
    }

    /// Number of graph nodes holding at least one key (distinct vectors).
    pub fn live_nodes(&self) -> usize {
        self.rows.len()
    }

    /// Rebuild the graph from the live nodes only (drops every tombstone),
    /// in place. See [`compacted`](Self::compacted).
    pub fn compact(&mut self) -> Result<()> {
        *self = self.compacted()?;
        Ok(())
    }

    /// Whether tombstones outnumber live nodes (and there are more than
    /// a minimum of them): time for [`compacted`](Self::compacted).
    pub fn compaction_due(&self) -> bool {
        self.dead.len() > COMPACT_MIN_TOMBSTONES && self.dead.len() > self.rows.len()
    }

    /// A new index holding only this one's live nodes, under the same node
    /// ids and keys (no tombstones; the tail as it is). Takes `&self`: a
    /// caller builds it while searches go on and swaps it in afterwards, so
    /// a rebuild never holds searches up (issue 17).
    pub fn compacted(&self) -> Result<VectorIndex> {
        let fresh = usearch::Index::new(&self.opts.usearch_options()).map_err(vec_err)?;
        fresh
            .reserve_capacity_and_threads(self.rows.len().max(INITIAL_CAPACITY), SEARCH_THREADS)
            .map_err(vec_err)?;
        fresh.change_expansion_add(self.opts.ef_construction);
        fresh.change_expansion_search(self.opts.ef_search);
        // Oldest node first: the order the graph first saw them.
        let mut nodes: Vec<u64> = self.rows.keys().copied().collect();
        nodes.sort_unstable();
        let mut buf = vec![0f32; self.opts.dims];
        for &node in &nodes {
            let n = guarded("get", || self.inner.get(node, &mut buf).map_err(vec_err))?;
            if n == 0 {
                return Err(IndexError::Vector(format!("compaction lost node {node}")));
            }
            guarded("add", || fresh.add(node, &buf).map_err(vec_err))?;
        }
        tracing::debug!(
            live = fresh.size(),
            tombstones = self.dead.len(),
            "vector index compacted"
        );
        let mut out = Self::with_graph(self.opts.clone(), fresh);
        out.node_of = self.node_of.clone();
        out.rows = self.rows.clone();
        out.by_hash = self
            .by_hash
            .iter()
            .filter(|(_, n)| self.rows.contains_key(n))
            .map(|(h, n)| (*h, *n))
            .collect();
        out.next_node = self.next_node;
        out.tail = self.tail.clone();
        Ok(out)
    }

    /// Inline compaction, only as a memory bound: normally the owner runs
    /// [`compacted`](Self::compacted) off its write path when
    /// [`compaction_due`](Self::compaction_due).
    fn maybe_compact(&mut self) -> Result<()> {
        let bound = COMPACT_INLINE_FACTOR * self.rows.len().max(COMPACT_MIN_TOMBSTONES);
        if self.dead.len() > bound {
            self.compact()?;
        }
        Ok(())
    }

    /// The options the index was built with.
    pub fn options(&self) -> &HnswOptions {
        &self.opts
    }

    /// Number of live keys (in the graph or the tail).
    pub fn len(&self) -> usize {
        self.node_of.len() + self.tail.len()
    }

    /// Number of live keys in the graph.
    #[cfg(test)]
    fn graph_len(&self) -> usize {
        self.node_of.len()
    }

    /// Number of deferred vectors not yet in the graph (module docs).
    pub fn tail_len(&self) -> usize {
        self.tail.len()
    }

    /// True when the index holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `key` is present.
    pub fn contains(&self, key: u64) -> bool {
        key <= MAX_KEY && (self.tail.contains(key) || self.node_of.contains_key(&key))
    }

    /// Approximate heap memory used: usearch's graph plus the key tables.
    pub fn memory_usage(&self) -> usize {
        self.inner.memory_usage()
            + 32 * (self.node_of.len() + self.by_hash.len() + self.dead.len())
            + 48 * self.rows.len()
    }

    fn check_vector(&self, v: &[f32]) -> Result<()> {
        if v.len() != self.opts.dims {
            return Err(IndexError::InvalidVector(format!(
                "dimension mismatch: expected {}, got {}",
                self.opts.dims,
                v.len()
            )));
        }
        if let Some(i) = v.iter().position(|x| !x.is_finite()) {
            return Err(IndexError::InvalidVector(format!(
                "component {i} is not finite ({})",
                v[i]
            )));
        }
        Ok(())
    }

    /// The node (live or tombstone) that holds exactly `v`, if any.
    fn node_equal_to(&self, v: &[f32]) -> Result<Option<u64>> {
        let Some(&node) = self.by_hash.get(&vector_hash(v)) else {
            return Ok(None);
        };
        let mut buf = vec![0f32; self.opts.dims];
        let n = guarded("get", || self.inner.get(node, &mut buf).map_err(vec_err))?;
        Ok((n > 0 && buf == v).then_some(node))
    }

    /// Takes `key` off its graph node; the node becomes a tombstone when it
    /// was its last key. Whether `key` had a node.
    fn detach(&mut self, key: u64) -> bool {
        let Some(node) = self.node_of.remove(&key) else {
            return false;
        };
        debug_assert!(self.rows.contains_key(&node), "key {key} on a dead node");
        let empty = self.rows.get_mut(&node).is_none_or(|r| r.remove(key));
        if empty {
            self.rows.remove(&node);
            self.dead.insert(node);
        }
        true
    }

    /// Puts `key` (on no node) on `node` (live or a tombstone, which
    /// becomes live again: it is still linked in the graph).
    fn attach(&mut self, key: u64, node: u64) {
        self.dead.remove(&node);
        self.rows
            .entry(node)
            .and_modify(|r| r.insert(key))
            .or_insert(Rows::One(key));
        self.node_of.insert(key, node);
    }

    /// Inserts `v` under `key`, replacing any vector already stored under `key`.
    /// Capacity grows automatically (doubling). A vector equal to one in the
    /// graph joins its node; a replaced vector no other key holds becomes a
    /// tombstone (see the module docs).
    pub fn upsert(&mut self, key: u64, v: &[f32]) -> Result<()> {
        self.check_vector(v)?;
        if key > MAX_KEY {
            return Err(IndexError::InvalidKey(key));
        }
        self.tail.take(key);
        self.add_to_graph(key, v)
    }

    /// The graph half of [`upsert`](Self::upsert) (`key` is not in the tail).
    fn add_to_graph(&mut self, key: u64, v: &[f32]) -> Result<()> {
        let equal = self.node_equal_to(v)?;
        if equal.is_some() && self.node_of.get(&key) == equal.as_ref() {
            return Ok(());
        }
        self.detach(key);
        if let Some(node) = equal {
            self.attach(key, node);
            return self.maybe_compact();
        }
        let node = self.next_node;
        if node >= u64::MAX - 1 {
            return Err(IndexError::Vector("node ids exhausted".into()));
        }
        let cap = self.inner.capacity();
        if self.inner.size() + 1 > cap {
            let new_cap = (cap.max(INITIAL_CAPACITY / 2)) * 2;
            tracing::trace!(cap, new_cap, "growing vector index");
            self.inner
                .reserve_capacity_and_threads(new_cap, SEARCH_THREADS)
                .map_err(vec_err)?;
        }
        guarded("add", || self.inner.add(node, v).map_err(vec_err))?;
        self.next_node += 1;
        let h = vector_hash(v);
        // A colliding distinct vector keeps the live entry; it replaces a
        // tombstone's.
        let keep_old = self
            .by_hash
            .get(&h)
            .is_some_and(|n| self.rows.contains_key(n));
        if !keep_old {
            self.by_hash.insert(h, node);
        }
        self.attach(key, node);
        self.maybe_compact()
    }

    /// Like [`upsert`](Self::upsert), but a vector new to the graph goes to
    /// the tail and is added to the graph later by
    /// [`add_deferred`](Self::add_deferred) (module docs); searches find it
    /// at once. A vector equal to one in the graph joins its node at once
    /// (no add). When the tail is full, the oldest deferred vectors are
    /// added first.
    pub fn upsert_deferred(&mut self, key: u64, v: &[f32]) -> Result<()> {
        self.check_vector(v)?;
        if key > MAX_KEY {
            return Err(IndexError::InvalidKey(key));
        }
        if let Some(entry) = self.tail.get_mut(key) {
            *entry = v.to_vec();
            return Ok(());
        }
        if let Some(node) = self.node_equal_to(v)? {
            if self.node_of.get(&key) != Some(&node) {
                self.detach(key);
                self.attach(key, node);
                self.maybe_compact()?;
            }
            return Ok(());
        }
        let over = (self.tail.len() + 1).saturating_sub(TAIL_CAP);
        if over > 0 {
            self.add_deferred(over)?;
        }
        if self.detach(key) {
            // The graph's version is replaced (a tombstone unless another
            // key holds the same vector).
            self.maybe_compact()?;
        }
        self.tail.push(key, v.to_vec());
        Ok(())
    }

    /// Adds up to `max` deferred vectors to the graph, oldest first; returns
    /// how many. A failed add leaves that vector in the tail.
    pub fn add_deferred(&mut self, max: usize) -> Result<usize> {
        let n = max.min(self.tail.len());
        for done in 0..n {
            let Some((i, key, v)) = self.tail.pop_oldest() else {
                return Ok(done);
            };
            if let Err(e) = self.add_to_graph(key, &v) {
                self.tail.put_back(i, key, v);
                return if done == 0 { Err(e) } else { Ok(done) };
            }
        }
        Ok(n)
    }

    /// Removes `key` (its node becomes a tombstone when no other key holds
    /// it); returns whether it was present.
    pub fn remove(&mut self, key: u64) -> Result<bool> {
        if key > MAX_KEY {
            return Ok(false);
        }
        if self.tail.take(key) {
            // It has no graph node (module docs).
            return Ok(true);
        }
        if !self.detach(key) {
            return Ok(false);
        }
        self.maybe_compact()?;
        Ok(true)
    }

    /// The `k` nearest keys to `q` with their SQL distances, ascending
    /// (ties by key).
    pub fn search(&self, q: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
        self.search_inner(q, k, k)
    }

    /// Like [`search`](Self::search) with a beam width of at least `ef` (the effective
    /// beam is `max(ef, k, EF_SEARCH)`: usearch never searches narrower than its
    /// configured `EF_SEARCH`, so a smaller `ef` has no effect).
    pub fn search_with_ef(&self, q: &[f32], k: usize, ef: usize) -> Result<Vec<(u64, f32)>> {
        self.search_inner(q, k, k.max(ef))
    }

    /// Like [`search_with_ef`](Self::search_with_ef), but `None` when no
    /// search slot came free within `SEARCH_SLOT_WAIT` (the caller then
    /// evaluates exactly instead of waiting longer).
    pub fn try_search_with_ef(
        &self,
        q: &[f32],
        k: usize,
        ef: usize,
    ) -> Result<Option<Vec<(u64, f32)>>> {
        self.check_vector(q)?;
        if k == 0 || self.is_empty() {
            return Ok(Some(Vec::new()));
        }
        match self.slots.try_acquire()? {
            Some(slot) => self.search_in_slot(q, k, k.max(ef), slot).map(Some),
            None => Ok(None),
        }
    }

    /// Like [`try_search_with_ef`](Self::try_search_with_ef), returning only
    /// keys `keep` accepts: the graph walk passes through nodes without an
    /// accepted key but fills its beam with nodes that have one, so a
    /// filter costs wider walks, not recall. `keep` is asked about each key
    /// at most once per search and must not panic (a panic is caught and
    /// counts as a rejection, and the search then fails).
    pub fn try_search_filtered(
        &self,
        q: &[f32],
        k: usize,
        ef: usize,
        keep: &dyn Fn(u64) -> bool,
    ) -> Result<Option<Vec<(u64, f32)>>> {
        self.check_vector(q)?;
        if k == 0 || self.is_empty() {
            return Ok(Some(Vec::new()));
        }
        let Some(slot) = self.slots.try_acquire()? else {
            return Ok(None);
        };
        let panicked = std::cell::Cell::new(false);
        let seen = std::cell::RefCell::new(std::collections::HashMap::<u64, bool>::new());
        // The caller's filter, for the graph's keys and the tail's alike,
        // asked once per key.
        let kept = |key: u64| {
            if let Some(&b) = seen.borrow().get(&key) {
                return b;
            }
            let b = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| keep(key)))
                .unwrap_or_else(|_| {
                    panicked.set(true);
                    false
                });
            seen.borrow_mut().insert(key, b);
            b
        };
        let rows = &self.rows;
        let pred = |node: u64| rows.get(&node).is_some_and(|r| r.iter().any(&kept));
        let out = self.search_in_slot_with(q, k, k.max(ef), slot, Some((&pred, &kept)))?;
        if panicked.get() {
            return Err(IndexError::Vector("search filter panicked".into()));
        }
        Ok(Some(out))
    }

    fn search_inner(&self, q: &[f32], k: usize, wanted: usize) -> Result<Vec<(u64, f32)>> {
        self.check_vector(q)?;
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let slot = self.slots.acquire()?;
        self.search_in_slot(q, k, wanted, slot)
    }

    fn search_in_slot(
        &self,
        q: &[f32],
        k: usize,
        wanted: usize,
        slot: SlotGuard<'_>,
    ) -> Result<Vec<(u64, f32)>> {
        self.search_in_slot_with(q, k, wanted, slot, None)
    }

    /// `filter`: a predicate on nodes (it must reject tombstones itself)
    /// that replaces the tombstone filter, and the caller's own on caller
    /// keys, applied to the tail and to the keys of the nodes found.
    /// `wanted` nodes are asked of the graph (the beam); each node found
    /// stands for all its keys, so the answer counts keys, not nodes.
    fn search_in_slot_with(
        &self,
        q: &[f32],
        k: usize,
        wanted: usize,
        _slot: SlotGuard<'_>,
        filter: Option<(KeyFilter<'_>, KeyFilter<'_>)>,
    ) -> Result<Vec<(u64, f32)>> {
        let metric = self.opts.metric;
        // The tail, exactly: its `k` nearest (module docs), kept in a
        // bounded heap of raw distances.
        let mut nearest = std::collections::BinaryHeap::with_capacity(k.min(self.tail.len()) + 1);
        for (key, v) in self.tail.iter() {
            if filter.is_some_and(|(_, keep)| !keep(*key)) {
                continue;
            }
            let d = TailHit(raw_distance(metric, q, v), *key);
            if nearest.len() < k {
                nearest.push(d);
            } else if nearest.peek().is_some_and(|worst| d < *worst) {
                nearest.pop();
                nearest.push(d);
            }
        }
        let mut out: Vec<(u64, f32)> = nearest
            .into_iter()
            .map(|TailHit(d, key)| (key, metric.sql_distance(d)))
            .collect();
        if self.rows.is_empty() {
            out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            return Ok(out);
        }
        // Never ask the library for more results than the graph holds.
        let wanted = wanted.min(self.inner.size());
        let live = |node: u64| self.rows.contains_key(&node);
        let m = if self.inner.size() <= EXACT_SEARCH_MAX_NODES {
            // A small graph is scanned exactly: about as fast as a walk,
            // and a walk can miss a node a thin graph strands (see the
            // constant's docs).
            let all = guarded("exact search", || {
                self.inner
                    .exact_search(q, self.inner.size())
                    .map_err(vec_err)
            })?;
            let mut m = usearch::ffi::Matches {
                keys: Vec::with_capacity(wanted),
                distances: Vec::with_capacity(wanted),
            };
            for (u, d) in all.keys.into_iter().zip(all.distances) {
                if m.keys.len() == wanted {
                    break;
                }
                let keep = match filter {
                    Some((pred, _)) => pred(u),
                    None => live(u),
                };
                if keep {
                    m.keys.push(u);
                    m.distances.push(d);
                }
            }
            m
        } else if let Some((pred, _)) = filter {
            guarded("search", || {
                self.inner.filtered_search(q, wanted, pred).map_err(vec_err)
            })?
        } else if self.dead.is_empty() {
            guarded("search", || self.inner.search(q, wanted).map_err(vec_err))?
        } else {
            guarded("search", || {
                self.inner.filtered_search(q, wanted, live).map_err(vec_err)
            })?
        };
        // Each node's keys, at most `k` of them (the smallest: ties are
        // broken by key), until `k` keys are in hand and the next node is
        // farther than the last one taken.
        let mut taken = 0usize;
        let mut last = f32::NEG_INFINITY;
        for (node, d) in m.keys.into_iter().zip(m.distances) {
            let Some(rows) = self.rows.get(&node) else {
                continue;
            };
            if taken >= k && d > last {
                break;
            }
            let d_sql = metric.sql_distance(d);
            let before = out.len();
            match filter {
                Some((_, keep)) => out.extend(
                    rows.iter()
                        .filter(|key| keep(*key))
                        .take(k)
                        .map(|key| (key, d_sql)),
                ),
                None => out.extend(rows.iter().take(k).map(|key| (key, d_sql))),
            }
            taken += out.len() - before;
            last = d;
        }
        out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out.truncate(k);
        Ok(out)
    }

    /// Serializes the whole index: a versioned, checksummed header carrying the
    /// [`HnswOptions`], followed by usearch's own buffer and the key tables.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        self.snapshot().map(VectorSnapshot::into_bytes)
    }

    /// The parts of [`to_bytes`](Self::to_bytes) that must be read while nothing is
    /// added (usearch's buffer and the key maps); [`VectorSnapshot::into_bytes`]
    /// assembles and checksums them afterwards, so a caller holding a lock around
    /// this index holds it only for this copy.
    pub fn snapshot(&self) -> Result<VectorSnapshot> {
        self.snapshot_into(Vec::new())
    }

    /// Bytes a snapshot's copy of usearch's buffer takes now: a caller that
    /// holds a lock around the index allocates (and touches) a buffer of about
    /// this size before it takes the lock, and hands it to
    /// [`snapshot_into`](Self::snapshot_into).
    pub fn snapshot_len(&self) -> usize {
        self.inner.serialized_length()
    }

    /// [`snapshot`](Self::snapshot) into `buf` (resized to fit; its pages are
    /// not faulted in under the caller's lock if it was touched beforehand).
    pub fn snapshot_into(&self, mut buf: Vec<u8>) -> Result<VectorSnapshot> {
        let opts = serde_json::to_vec(&self.opts)
            .map_err(|e| IndexError::Vector(format!("encoding options: {e}")))?;
        buf.resize(self.inner.serialized_length(), 0);
        let mut raw = buf;
        guarded("save", || {
            self.inner.save_to_buffer(&mut raw).map_err(vec_err)
        })?;
        Ok(VectorSnapshot {
            opts,
            raw,
            next_node: self.next_node,
            dead: self.dead.iter().copied().collect(),
            members: self.node_of.iter().map(|(k, n)| (*k, *n)).collect(),
            hashes: self.by_hash.iter().map(|(h, n)| (*h, *n)).collect(),
            tail: self.tail.iter().cloned().collect(),
        })
    }

    /// Rebuilds an index from [`to_bytes`](Self::to_bytes) output. Garbage, truncated
    /// or mismatching bytes yield [`IndexError::Corrupt`]. Formats 1–3
    /// (one node per key) are rebuilt into today's graph (equal vectors
    /// joined), once, as they load.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let (version, payload) = codec::unseal_versions(MAGIC, 1..=FORMAT_VERSION, bytes)?;
        let mut r = Reader::new(payload);
        let n = r.len_u64()?;
        let opts: HnswOptions = serde_json::from_slice(r.take(n)?)
            .map_err(|e| IndexError::Corrupt(format!("options: {e}")))?;
        let n = r.len_u64()?;
        let raw = r.take(n)?;
        opts.validate()
            .map_err(|e| IndexError::Corrupt(format!("options: {e}")))?;
        if version < 4 {
            return Self::from_legacy(version, opts, raw, r);
        }
        let next_node = r.u64()?;
        let dead = read_u64s(&mut r, "tombstone")?;
        let members = read_pairs(&mut r, "member")?;
        let hashes = read_pairs(&mut r, "hash")?;
        let tail = read_tail(&mut r, &opts)?;
        if !r.is_empty() {
            return Err(IndexError::Corrupt("trailing bytes in payload".into()));
        }
        let inner = load_graph(&opts, raw)?;
        let mut ix = Self::with_graph(opts, inner);
        ix.next_node = next_node;
        let in_graph = |ix: &Self, node: u64| node < next_node && ix.inner.contains(node);
        for node in dead {
            if !in_graph(&ix, node) || !ix.dead.insert(node) {
                return Err(IndexError::Corrupt(format!("tombstone {node}")));
            }
        }
        for (key, node) in members {
            if key > MAX_KEY
                || !in_graph(&ix, node)
                || ix.dead.contains(&node)
                || ix.node_of.contains_key(&key)
            {
                return Err(IndexError::Corrupt(format!("member {key} of node {node}")));
            }
            ix.attach(key, node);
        }
        if ix.rows.len() + ix.dead.len() != ix.inner.size() {
            return Err(IndexError::Corrupt(format!(
                "{} live nodes and {} tombstones in a graph of {}",
                ix.rows.len(),
                ix.dead.len(),
                ix.inner.size()
            )));
        }
        for (h, node) in hashes {
            if !in_graph(&ix, node) {
                return Err(IndexError::Corrupt(format!("hash of node {node}")));
            }
            ix.by_hash.insert(h, node);
        }
        ix.push_tail(tail)?;
        Ok(ix)
    }

    /// Formats 1–3: usearch key = caller key | generation << 40, `dead`
    /// and `moved` tables (version 2), a tail (version 3). Their live keys
    /// are added again (oldest node first), the tail kept.
    fn from_legacy(version: u32, opts: HnswOptions, raw: &[u8], mut r: Reader<'_>) -> Result<Self> {
        let mut dead = std::collections::HashSet::new();
        let mut moved = std::collections::HashMap::new();
        if version >= 2 {
            dead.extend(read_u64s(&mut r, "tombstone")?);
            for (k, u) in read_pairs(&mut r, "moved-key")? {
                if k > MAX_KEY || u & MAX_KEY != k {
                    return Err(IndexError::Corrupt(format!("moved key {k} -> {u}")));
                }
                moved.insert(k, u);
            }
        }
        let tail = if version >= 3 {
            read_tail(&mut r, &opts)?
        } else {
            Vec::new()
        };
        if !r.is_empty() {
            return Err(IndexError::Corrupt("trailing bytes in payload".into()));
        }
        let old = load_graph(&opts, raw)?;
        // Live usearch keys: every node not dead whose key has not moved
        // on (usearch cannot list its keys: a search of the whole graph
        // does).
        let mut live: Vec<u64> = Vec::new();
        if old.size() > 0 {
            let probe = vec![1f32; opts.dims];
            let all = guarded("legacy scan", || {
                old.exact_search(&probe, old.size()).map_err(vec_err)
            })?;
            for u in all.keys {
                let key = u & MAX_KEY;
                if !dead.contains(&u) && moved.get(&key).copied().unwrap_or(key) == u {
                    live.push(u);
                }
            }
        }
        live.sort_unstable();
        let mut ix = Self::new(opts)?;
        let mut buf = vec![0f32; ix.opts.dims];
        for u in live {
            let n = guarded("get", || old.get(u, &mut buf).map_err(vec_err))?;
            if n == 0 {
                return Err(IndexError::Corrupt(format!("legacy node {u}")));
            }
            ix.upsert(u & MAX_KEY, &buf)
                .map_err(|e| IndexError::Corrupt(format!("legacy node {u}: {e}")))?;
        }
        ix.push_tail(tail)?;
        Ok(ix)
    }

    /// Appends a loaded tail (keys must not be in the graph).
    fn push_tail(&mut self, tail: Vec<(u64, Vec<f32>)>) -> Result<()> {
        for (k, v) in tail {
            if self.contains(k) {
                return Err(IndexError::Corrupt(format!(
                    "tail key {k} also in the graph"
                )));
            }
            self.tail.push(k, v);
        }
        Ok(())
    }
}

/// A count then that many `u64`s.
fn read_u64s(r: &mut Reader<'_>, what: &str) -> Result<Vec<u64>> {
    let n = r.len_u64()?;
    if n > r.remaining() / 8 {
        return Err(IndexError::Corrupt(format!("{what} count")));
    }
    (0..n).map(|_| r.u64()).collect()
}

/// A count then that many pairs of `u64`s.
fn read_pairs(r: &mut Reader<'_>, what: &str) -> Result<Vec<(u64, u64)>> {
    let n = r.len_u64()?;
    if n > r.remaining() / 16 {
        return Err(IndexError::Corrupt(format!("{what} count")));
    }
    (0..n).map(|_| Ok((r.u64()?, r.u64()?))).collect()
}

/// The tail of deferred vectors (format version 3 on).
fn read_tail(r: &mut Reader<'_>, opts: &HnswOptions) -> Result<Vec<(u64, Vec<f32>)>> {
    let n = r.len_u64()?;
    let entry = opts
        .dims
        .checked_mul(4)
        .and_then(|b| b.checked_add(8))
        .ok_or_else(|| IndexError::Corrupt("dimensions".into()))?;
    if n > r.remaining() / entry {
        return Err(IndexError::Corrupt("tail count".into()));
    }
    let mut tail = Vec::with_capacity(n);
    for _ in 0..n {
        let k = r.u64()?;
        let v = r
            .take(4 * opts.dims)?
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect::<Vec<f32>>();
        if k > MAX_KEY || v.iter().any(|x| !x.is_finite()) {
            return Err(IndexError::Corrupt(format!("tail entry {k}")));
        }
        tail.push((k, v));
    }
    Ok(tail)
}

/// usearch's graph from its buffer, checked against `opts` first.
fn load_graph(opts: &HnswOptions, raw: &[u8]) -> Result<usearch::Index> {
    let meta = usearch::Index::metadata_from_buffer(raw)
        .map_err(|e| IndexError::Corrupt(format!("usearch header: {e}")))?;
    let expected = opts.usearch_options();
    if meta.dimensions != opts.dims as u64
        || meta.metric != expected.metric
        || meta.quantization != expected.quantization
        || meta.multi
    {
        return Err(IndexError::Corrupt(format!(
            "usearch header {meta:?} does not match options {opts:?}"
        )));
    }
    let inner = usearch::Index::new(&expected).map_err(vec_err)?;
    inner
        .load_from_buffer(raw)
        .map_err(|e| IndexError::Corrupt(format!("usearch body: {e}")))?;
    inner.change_expansion_add(opts.ef_construction);
    inner.change_expansion_search(opts.ef_search);
    let cap = inner.capacity().max(inner.size()).max(INITIAL_CAPACITY);
    inner
        .reserve_capacity_and_threads(cap, SEARCH_THREADS)
        .map_err(vec_err)?;
    Ok(inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_panic_is_an_error_for_that_call() {
        let r: Result<()> = guarded("search", || panic!("capacity overflow"));
        match r {
            Err(IndexError::Vector(m)) => assert!(m.contains("capacity overflow"), "{m}"),
            other => panic!("expected an error, got {other:?}"),
        }
        assert_eq!(guarded("search", || Ok(7)).ok(), Some(7));
    }

    /// Deferred vectors are found at once, replace and delete like direct
    /// ones, survive a snapshot, and answer as brute force does before and
    /// after they are moved into the graph (1-d line: unambiguous answers).
    #[test]
    fn deferred_vectors_are_searched_exactly_until_added() {
        let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::L2)).unwrap();
        for k in 0..500u64 {
            ix.upsert(k, &[k as f32, 0.0]).unwrap();
        }
        // 500..600 new, 10..20 moved far away, 30..40 deleted.
        for k in 500..600u64 {
            ix.upsert_deferred(k, &[k as f32, 0.0]).unwrap();
        }
        for k in 10..20u64 {
            ix.upsert_deferred(k, &[300.5 + k as f32, 0.0]).unwrap();
        }
        for k in 30..40u64 {
            assert!(ix.remove(k).unwrap());
        }
        // A deferred key replaced again, and one deleted before its add.
        ix.upsert_deferred(599, &[-5.0, 0.0]).unwrap();
        ix.upsert_deferred(598, &[598.0, 0.0]).unwrap();
        assert!(ix.remove(598).unwrap());
        assert!(!ix.contains(598) && ix.contains(599) && !ix.contains(35));
        assert_eq!(ix.tail_len(), 109);
        let expect = |ix: &VectorIndex, phase: &str| {
            assert_eq!(ix.len(), 500 - 10 + 100 - 1);
            let near = |x: f32, k: usize| -> Vec<u64> {
                ix.search_with_ef(&[x, 0.0], k, 64)
                    .unwrap()
                    .iter()
                    .map(|h| h.0)
                    .collect()
            };
            assert_eq!(near(550.2, 3), vec![550, 551, 549], "{phase}");
            assert_eq!(near(-4.0, 2), vec![599, 0], "{phase}");
            assert_eq!(near(315.55, 1), vec![15], "{phase}");
            assert_eq!(near(15.0, 1), vec![20], "{phase}");
            let no_deleted = near(35.0, 5).iter().all(|k| !(30..40).contains(k));
            assert!(no_deleted, "{phase}");
            let hits = ix
                .try_search_filtered(&[560.0, 0.0], 2, 64, &|k| k % 2 == 1)
                .unwrap()
                .unwrap();
            let keys: Vec<u64> = hits.iter().map(|h| h.0).collect();
            assert_eq!(keys, vec![559, 561], "{phase}");
            assert!((hits[0].1 - 1.0).abs() < 1e-6, "{phase}: {hits:?}");
        };
        expect(&ix, "phase 1");
        let back = VectorIndex::from_bytes(&ix.to_bytes().unwrap()).unwrap();
        assert_eq!(back.tail_len(), 109);
        expect(&back, "phase 2");
        assert_eq!(ix.add_deferred(50).unwrap(), 50);
        assert_eq!(ix.tail_len(), 59);
        expect(&ix, "phase 3");
        assert_eq!(ix.add_deferred(usize::MAX).unwrap(), 59);
        assert_eq!(ix.tail_len(), 0);
        expect(&ix, "phase 4");
        ix.compact().unwrap();
        expect(&ix, "phase 5");
    }

    /// The tail's scan computes each metric's SQL distance as the exact
    /// definition does (dimensions not a multiple of the lanes, zero
    /// vectors for cosine).
    #[test]
    fn tail_distances_match_the_exact_definitions() {
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 2001) as f32 / 1000.0 - 1.0
        };
        for dims in [1, 7, 8, 13, 128] {
            let a: Vec<f32> = (0..dims).map(|_| next()).collect();
            let b: Vec<f32> = (0..dims).map(|_| next()).collect();
            let zero = vec![0f32; dims];
            for m in [Metric::L2, Metric::Cosine, Metric::InnerProduct] {
                for (p, q) in [(&a, &b), (&a, &zero), (&zero, &zero)] {
                    let fast = m.sql_distance(raw_distance(m, p, q));
                    let exact = m.distance(p, q);
                    assert!(
                        (fast - exact).abs() < 1e-4,
                        "{m:?} {dims}: {fast} vs {exact}"
                    );
                }
            }
        }
    }

    /// What `tests/multi_cn.rs` hit (1–2 % of runs under load): an initial
    /// build of the first `n` rows of a 1-d line, then one unit replaying
    /// every change from the build's ts — inserts 0..200 (tombstoning the
    /// built nodes), key 7 moved far right, 150..200 deleted. Key 7's new
    /// node goes in early (the tail keeps its age) among tombstones; the
    /// walk from `[999, 0]` then stopped at 149. The answer must be 7 for
    /// every `n`, before and after the adds and after a snapshot. (The
    /// replay moves the built rows a quarter step: an unchanged vector
    /// would keep its node, and the built nodes must become tombstones.)
    #[test]
    fn a_node_added_among_tombstones_is_found() {
        for n in 40..90u64 {
            let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::L2)).unwrap();
            for k in 0..n {
                ix.upsert(k, &[k as f32, 0.0]).unwrap();
            }
            for k in 0..200u64 {
                let shift = if k < n { 0.25 } else { 0.0 };
                ix.upsert_deferred(k, &[k as f32 + shift, 0.0]).unwrap();
            }
            ix.upsert_deferred(7, &[1000.0, 0.0]).unwrap();
            for k in 150..200u64 {
                assert!(ix.remove(k).unwrap());
            }
            let q = [999.0, 0.0];
            assert_eq!(ix.search(&q, 1).unwrap(), vec![(7, 1.0)], "n {n}, tail");
            while ix.add_deferred(16).unwrap() > 0 {}
            assert_eq!(ix.tombstones() as u64, n);
            assert_eq!(ix.search(&q, 1).unwrap(), vec![(7, 1.0)], "n {n}, graph");
            let loaded = VectorIndex::from_bytes(&ix.to_bytes().unwrap()).unwrap();
            assert_eq!(
                loaded.search(&q, 1).unwrap(),
                vec![(7, 1.0)],
                "n {n}, loaded"
            );
            let odd = |k: u64| k % 2 == 1;
            let got = loaded.try_search_filtered(&q, 2, 2, &odd).unwrap();
            assert_eq!(got, Some(vec![(7, 1.0), (149, 850.0)]), "n {n}, filtered");
        }
    }

    /// A format-3 index (usearch key = key | generation << 40; keys 1–3
    /// equal, key 5 moved to generation 1, key 9 deferred) loads with its
    /// equal vectors joined in one node and saves as format 4.
    #[test]
    fn a_version_3_index_loads_with_equal_vectors_joined() {
        let opts = HnswOptions::new(2, Metric::L2);
        let old = usearch::Index::new(&opts.usearch_options()).unwrap();
        old.reserve(16).unwrap();
        let moved = 5 | (1 << KEY_BITS);
        for (u, v) in [
            (1u64, [1.0f32, 2.0]),
            (2, [1.0, 2.0]),
            (3, [1.0, 2.0]),
            (5, [9.0, 9.0]),
            (moved, [7.0, 7.0]),
        ] {
            old.add(u, &v).unwrap();
        }
        let mut raw = vec![0u8; old.serialized_length()];
        old.save_to_buffer(&mut raw).unwrap();
        let mut payload = Vec::new();
        codec::put_bytes(&mut payload, &serde_json::to_vec(&opts).unwrap());
        codec::put_bytes(&mut payload, &raw);
        for x in [1u64, 5, 1, 5, moved, 1, 9] {
            payload.extend_from_slice(&x.to_le_bytes());
        }
        for x in [3.0f32, 3.0] {
            payload.extend_from_slice(&x.to_le_bytes());
        }
        let bytes = codec::seal(MAGIC, 3, &payload);
        let check = |ix: &VectorIndex| {
            assert_eq!((ix.len(), ix.live_nodes(), ix.tail_len()), (5, 2, 1));
            assert_eq!(ix.tombstones(), 0);
            let keys = |q: [f32; 2], k| -> Vec<u64> {
                ix.search(&q, k).unwrap().iter().map(|h| h.0).collect()
            };
            assert_eq!(keys([1.0, 2.0], 3), vec![1, 2, 3]);
            assert_eq!(keys([7.0, 7.5], 1), vec![5]);
            assert_eq!(keys([3.0, 3.0], 1), vec![9]);
            assert!(keys([9.0, 9.0], 5).len() == 5);
        };
        let ix = VectorIndex::from_bytes(&bytes).unwrap();
        check(&ix);
        let again = ix.to_bytes().unwrap();
        assert_eq!(u32::from_le_bytes(again[8..12].try_into().unwrap()), 4);
        check(&VectorIndex::from_bytes(&again).unwrap());
    }

    /// The tail never grows past its cap: the oldest are added first.
    #[test]
    fn a_full_tail_adds_its_oldest_first() {
        let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::L2)).unwrap();
        let n = TAIL_CAP as u64 + 100;
        for k in 0..n {
            ix.upsert_deferred(k, &[k as f32, 1.0]).unwrap();
        }
        assert_eq!(ix.tail_len(), TAIL_CAP);
        assert_eq!(ix.len(), n as usize);
        assert_eq!(ix.graph_len(), 100);
        assert!(ix.tail.iter().all(|(k, _)| *k >= 100));
        let hits = ix.search_with_ef(&[3.0, 1.0], 1, 64).unwrap();
        assert_eq!(hits[0].0, 3);
    }

    #[test]
    fn search_asks_for_at_most_the_index_size() {
        let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::L2)).unwrap();
        ix.upsert(1, &[1.0, 2.0]).unwrap();
        ix.upsert(2, &[3.0, 4.0]).unwrap();
        let hits = ix
            .search_with_ef(&[1.0, 2.0], usize::MAX / 2, usize::MAX / 2)
            .unwrap();
        assert_eq!(hits.len(), 2);
    }

    /// A filtered search returns the nearest keys the filter accepts
    /// (checked against brute force on a 1-d line, where the answer is
    /// unambiguous), never a removed key, and a panicking filter is an
    /// error for that search, not a crash.
    #[test]
    fn filtered_search_keeps_only_accepted_live_keys() {
        let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::L2)).unwrap();
        for k in 0..2000u64 {
            ix.upsert(k, &[k as f32, 0.0]).unwrap();
        }
        // Key 1500 is the nearest multiple of 10 to the query; remove it.
        assert!(ix.remove(1500).unwrap());
        let keep = |k: u64| k.is_multiple_of(10);
        let hits = ix
            .try_search_filtered(&[1501.0, 0.0], 4, 40, &keep)
            .unwrap()
            .expect("a free search slot");
        let mut keys: Vec<u64> = hits.iter().map(|(k, _)| *k).collect();
        keys.truncate(4);
        keys.sort_unstable();
        assert_eq!(keys, vec![1480, 1490, 1510, 1520]);
        for (k, d) in &hits {
            assert!(keep(*k) && *k != 1500, "{k}");
            assert!((d - (*k as f32 - 1501.0).abs()).abs() < 1e-3, "{k} {d}");
        }
        let boom = |_: u64| -> bool { panic!("filter bug") };
        assert!(ix.try_search_filtered(&[1.0, 0.0], 4, 40, &boom).is_err());
        // The index still answers afterwards.
        assert_eq!(ix.search(&[7.0, 0.0], 1).unwrap()[0].0, 7);
        // A filter panicking on a deferred vector fails the same way.
        let mut tail_only = VectorIndex::new(HnswOptions::new(2, Metric::L2)).unwrap();
        tail_only.upsert_deferred(1, &[1.0, 0.0]).unwrap();
        assert!(tail_only
            .try_search_filtered(&[1.0, 0.0], 1, 40, &boom)
            .is_err());
    }

    fn assert_send_sync<T: Send + Sync>() {}

    #[test]
    fn is_send_sync() {
        assert_send_sync::<VectorIndex>();
    }

    #[test]
    fn op_types() {
        assert_eq!(Metric::from_op_type("vector_l2_ops").unwrap(), Metric::L2);
        assert_eq!(
            Metric::from_op_type("VECTOR_COSINE_OPS").unwrap(),
            Metric::Cosine
        );
        assert_eq!(
            Metric::from_op_type("vector_ip_ops").unwrap(),
            Metric::InnerProduct
        );
        assert!(matches!(
            Metric::from_op_type("vector_foo_ops"),
            Err(IndexError::InvalidOptions(_))
        ));
        for m in [Metric::L2, Metric::Cosine, Metric::InnerProduct] {
            assert_eq!(Metric::from_op_type(m.op_type()).unwrap(), m);
        }
    }

    #[test]
    fn invalid_vectors_rejected() {
        let mut ix = VectorIndex::new(HnswOptions::new(3, Metric::L2)).unwrap();
        assert!(matches!(
            ix.upsert(1, &[1.0, 2.0]),
            Err(IndexError::InvalidVector(_))
        ));
        assert!(matches!(
            ix.upsert(1, &[1.0, f32::NAN, 2.0]),
            Err(IndexError::InvalidVector(_))
        ));
        assert!(matches!(
            ix.upsert(1, &[1.0, f32::INFINITY, 2.0]),
            Err(IndexError::InvalidVector(_))
        ));
        assert!(matches!(
            ix.search(&[1.0], 1),
            Err(IndexError::InvalidVector(_))
        ));
        assert!(matches!(
            ix.upsert(u64::MAX, &[1.0, 2.0, 3.0]),
            Err(IndexError::InvalidKey(_))
        ));
        assert!(VectorIndex::new(HnswOptions::new(0, Metric::L2)).is_err());
        assert!(ix.is_empty());
        assert!(ix.search(&[1.0, 2.0, 3.0], 5).unwrap().is_empty());
    }

    #[test]
    fn distances_are_sql_distances() {
        let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::L2)).unwrap();
        ix.upsert(7, &[3.0, 4.0]).unwrap();
        let r = ix.search(&[0.0, 0.0], 1).unwrap();
        assert_eq!(r[0].0, 7);
        assert!((r[0].1 - 5.0).abs() < 1e-5, "{r:?}");

        let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::Cosine)).unwrap();
        ix.upsert(1, &[1.0, 0.0]).unwrap();
        ix.upsert(2, &[0.0, 2.0]).unwrap();
        let r = ix.search(&[1.0, 0.0], 2).unwrap();
        assert_eq!(r[0].0, 1);
        assert!(r[0].1.abs() < 1e-5 && (r[1].1 - 1.0).abs() < 1e-5, "{r:?}");

        let mut ix = VectorIndex::new(HnswOptions::new(2, Metric::InnerProduct)).unwrap();
        ix.upsert(1, &[1.0, 2.0]).unwrap();
        let r = ix.search(&[3.0, 1.0], 1).unwrap();
        let want = Metric::InnerProduct.distance(&[1.0, 2.0], &[3.0, 1.0]);
        assert!(
            (r[0].1 - want).abs() < 1e-5 && (want + 4.0).abs() < 1e-6,
            "{r:?}"
        );
    }

    #[test]
    fn grows_capacity_and_f64_storage() {
        let mut o = HnswOptions::new(4, Metric::L2);
        o.f64 = true;
        let mut ix = VectorIndex::new(o).unwrap();
        for k in 0..500u64 {
            let f = k as f32;
            ix.upsert(k, &[f, f + 1.0, f * 0.5, 1.0]).unwrap();
        }
        assert_eq!(ix.len(), 500);
        let r = ix.search(&[250.0, 251.0, 125.0, 1.0], 1).unwrap();
        assert_eq!(r[0].0, 250);
        let back = VectorIndex::from_bytes(&ix.to_bytes().unwrap()).unwrap();
        assert!(back.options().f64);
        assert_eq!(back.search(&[250.0, 251.0, 125.0, 1.0], 1).unwrap(), r);
    }
}
