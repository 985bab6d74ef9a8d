//! Tributary's index layer: an HNSW vector index (backed by `usearch`) and a BM25
//! full-text index (backed by `tantivy`), each a small, safe, **in-memory** object that
//! serializes to one self-describing byte blob and can be rebuilt from it.
//!
//! What this crate owns:
//! - [`VectorIndex`]: upsert / remove / k-NN search with SQL-facing distances
//!   (`l2_distance`, `cosine_distance`, inner-product distance), see [`vector`].
//! - [`FullTextIndex`]: upsert / remove / commit / `MATCH … AGAINST` search in natural
//!   and (a subset of MySQL) boolean mode, plus an exact text matcher with the same
//!   analyzer for rows that are not indexed yet, see [`fulltext`].
//! - The byte formats of both (versioned header + checksum), so the ISCP layer can store
//!   them in hidden tables inside its own transactions.
//!
//! What it must never do: touch files (everything lives in RAM; tantivy runs on a
//! `RamDirectory`), know about SQL, catalogs or transactions, or panic on bytes it is
//! handed back — corrupt blobs are reported as [`IndexError::Corrupt`].

mod codec;
pub mod fulltext;
pub mod vector;

pub use fulltext::{
    check_boolean, matches_text_with, score_documents, tokenize_with, ExtraHits, FullTextIndex,
    FullTextSnapshot, MatchMode, Parser,
};
pub use vector::{HnswOptions, Metric, VectorIndex, VectorSnapshot, TAIL_CAP};

/// Errors of the index layer.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// A vector had the wrong dimension or contained NaN / infinity.
    #[error("invalid vector: {0}")]
    InvalidVector(String),
    /// Index options were unusable (unknown op type or parser, zero dimensions, …).
    #[error("invalid index options: {0}")]
    InvalidOptions(String),
    /// A key that the underlying library reserves (e.g. `u64::MAX` for usearch).
    #[error("invalid key: {0}")]
    InvalidKey(u64),
    /// A document had the wrong number of fields for its index.
    #[error("invalid document: {0}")]
    InvalidDocument(String),
    /// A malformed or unsupported full-text query.
    #[error("invalid full-text query: {0}")]
    Query(String),
    /// Serialized bytes could not be decoded (bad magic, version, checksum, layout …).
    #[error("corrupt index bytes: {0}")]
    Corrupt(String),
    /// An error reported by usearch (its C++ exception message).
    #[error("vector index error: {0}")]
    Vector(String),
    /// An error reported by tantivy.
    #[error("full-text index error: {0}")]
    FullText(#[from] tantivy::TantivyError),
}

/// Result alias of this crate.
pub type Result<T, E = IndexError> = std::result::Result<T, E>;
