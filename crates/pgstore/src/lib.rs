//! Tributary's PostgreSQL storage backend: several compute-node processes
//! share one PostgreSQL database through the same [`Storage`] contract as
//! the embedded engine (decision 017).
//!
//! PostgreSQL keeps the bytes, the row locks (with its deadlock detector
//! and `lock_timeout`), durability and the lease clock; Tributary keeps its
//! own MVCC on top (a commit clock row gives timestamps whose order is the
//! commit order and the visibility order), so any node can read any
//! snapshot at a timestamp, and the change log is written in the
//! committing transaction.
//!
//! Layers: `storage` (the `Storage` calls, the node's heartbeat) and
//! `txn` (a transaction) send the statements of `sql` (texts) through
//! `bridge` (the backend's own tokio runtime); `gc` collects; `error`
//! maps SQLSTATEs. Nothing here knows about SQL tables, indexes or ISCP.
//!
//! [`Storage`]: tributary_storage::Storage

mod bridge;
mod error;
mod gc;
mod sql;
mod storage;
mod txn;

pub mod testing;

pub use storage::{PgOptions, PgStorage};
