//! HNSW vector index: a thin, safe wrapper over [`usearch::Index`].
//!
//! Owns: validation of vectors (dimension, finiteness), automatic capacity growth,
//! upsert-by-key semantics, conversion of usearch distances into the SQL distances the
//! planner compares (`l2_distance`, `cosine_distance`, inner-product distance), bounding
//! of concurrent searches to the number of reserved usearch thread contexts, and the
//! byte format returned by [`VectorIndex::to_bytes`].
//!
//! Must never: touch files, know about SQL or transactions, or hand unchecked bytes to
//! usearch — [`VectorIndex::from_bytes`] verifies magic, version and checksum first, so
//! garbage is an error rather than undefined behaviour in C++.
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
const SEARCH_THREADS: usize = 8;
/// How long a search waits for a free thread context before failing.
const SEARCH_SLOT_WAIT: Duration = Duration::from_secs(30);
/// Initial capacity reserved by [`VectorIndex::new`].
const INITIAL_CAPACITY: usize = 64;

const MAGIC: &[u8; 8] = b"TRIBVEC\0";
const FORMAT_VERSION: u32 = 1;

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
        let deadline = Instant::now() + SEARCH_SLOT_WAIT;
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            let now = Instant::now();
            if now >= deadline {
                return Err(IndexError::Vector(
                    "timed out waiting for a free search slot".into(),
                ));
            }
            free = match self.cv.wait_timeout(free, deadline - now) {
                Ok((g, _)) => g,
                Err(p) => p.into_inner().0,
            };
        }
        *free -= 1;
        Ok(SlotGuard(self))
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

/// An in-memory HNSW index from `u64` keys to vectors. `Send + Sync`: searches take
/// `&self` and may run concurrently; mutations take `&mut self`.
pub struct VectorIndex {
    opts: HnswOptions,
    inner: usearch::Index,
    slots: SearchSlots,
}

impl std::fmt::Debug for VectorIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VectorIndex")
            .field("opts", &self.opts)
            .field("len", &self.len())
            .field("capacity", &self.inner.capacity())
            .finish()
    }
}

fn vec_err(e: impl std::fmt::Display) -> IndexError {
    IndexError::Vector(e.to_string())
}

impl VectorIndex {
    /// Creates an empty index.
    pub fn new(opts: HnswOptions) -> Result<Self> {
        opts.validate()?;
        let inner = usearch::Index::new(&opts.usearch_options()).map_err(vec_err)?;
        inner
            .reserve_capacity_and_threads(INITIAL_CAPACITY, SEARCH_THREADS)
            .map_err(vec_err)?;
        Ok(Self {
            opts,
            inner,
            slots: SearchSlots::new(SEARCH_THREADS),
        })
    }

    /// The options the index was built with.
    pub fn options(&self) -> &HnswOptions {
        &self.opts
    }

    /// Number of live vectors.
    pub fn len(&self) -> usize {
        self.inner.size()
    }

    /// True when the index holds no vector.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// True when `key` is present.
    pub fn contains(&self, key: u64) -> bool {
        self.inner.contains(key)
    }

    /// Approximate heap memory used by usearch, in bytes.
    pub fn memory_usage(&self) -> usize {
        self.inner.memory_usage()
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

    /// Inserts `v` under `key`, replacing any vector already stored under `key`.
    /// Capacity grows automatically (doubling).
    pub fn upsert(&mut self, key: u64, v: &[f32]) -> Result<()> {
        self.check_vector(v)?;
        if key == u64::MAX {
            // usearch uses the maximal key as its "free slot" marker.
            return Err(IndexError::InvalidKey(key));
        }
        if self.inner.contains(key) {
            self.inner.remove(key).map_err(vec_err)?;
        }
        let cap = self.inner.capacity();
        if self.inner.size() + 1 > cap {
            let new_cap = (cap.max(INITIAL_CAPACITY / 2)) * 2;
            tracing::trace!(cap, new_cap, "growing vector index");
            self.inner
                .reserve_capacity_and_threads(new_cap, SEARCH_THREADS)
                .map_err(vec_err)?;
        }
        self.inner.add(key, v).map_err(vec_err)
    }

    /// Removes `key`; returns whether it was present.
    pub fn remove(&mut self, key: u64) -> Result<bool> {
        if !self.inner.contains(key) {
            return Ok(false);
        }
        let n = self.inner.remove(key).map_err(vec_err)?;
        Ok(n > 0)
    }

    /// The `k` nearest keys to `q` with their SQL distances, ascending.
    pub fn search(&self, q: &[f32], k: usize) -> Result<Vec<(u64, f32)>> {
        self.search_inner(q, k, k)
    }

    /// Like [`search`](Self::search) with a beam width of at least `ef` (the effective
    /// beam is `max(ef, k, EF_SEARCH)`: usearch never searches narrower than its
    /// configured `EF_SEARCH`, so a smaller `ef` has no effect).
    pub fn search_with_ef(&self, q: &[f32], k: usize, ef: usize) -> Result<Vec<(u64, f32)>> {
        self.search_inner(q, k, k.max(ef))
    }

    fn search_inner(&self, q: &[f32], k: usize, wanted: usize) -> Result<Vec<(u64, f32)>> {
        self.check_vector(q)?;
        if k == 0 || self.is_empty() {
            return Ok(Vec::new());
        }
        let _slot = self.slots.acquire()?;
        let m = self.inner.search(q, wanted).map_err(vec_err)?;
        let metric = self.opts.metric;
        let mut out: Vec<(u64, f32)> = m
            .keys
            .into_iter()
            .zip(m.distances)
            .map(|(key, d)| (key, metric.sql_distance(d)))
            .collect();
        out.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
        out.truncate(k);
        Ok(out)
    }

    /// Serializes the whole index: a versioned, checksummed header carrying the
    /// [`HnswOptions`], followed by usearch's own buffer.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let opts = serde_json::to_vec(&self.opts)
            .map_err(|e| IndexError::Vector(format!("encoding options: {e}")))?;
        let mut raw = vec![0u8; self.inner.serialized_length()];
        self.inner.save_to_buffer(&mut raw).map_err(vec_err)?;
        let mut payload = Vec::with_capacity(raw.len() + opts.len() + 16);
        codec::put_bytes(&mut payload, &opts);
        codec::put_bytes(&mut payload, &raw);
        Ok(codec::seal(MAGIC, FORMAT_VERSION, &payload))
    }

    /// Rebuilds an index from [`to_bytes`](Self::to_bytes) output. Garbage, truncated
    /// or mismatching bytes yield [`IndexError::Corrupt`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let payload = codec::unseal(MAGIC, FORMAT_VERSION, bytes)?;
        let mut r = Reader::new(payload);
        let n = r.len_u64()?;
        let opts: HnswOptions = serde_json::from_slice(r.take(n)?)
            .map_err(|e| IndexError::Corrupt(format!("options: {e}")))?;
        let n = r.len_u64()?;
        let raw = r.take(n)?;
        if !r.is_empty() {
            return Err(IndexError::Corrupt("trailing bytes in payload".into()));
        }
        opts.validate()
            .map_err(|e| IndexError::Corrupt(format!("options: {e}")))?;
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
        Ok(Self {
            opts,
            inner,
            slots: SearchSlots::new(SEARCH_THREADS),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
