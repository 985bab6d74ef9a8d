//! Tributary storage: MVCC transactions over a durable embedded engine.
//!
//! This crate owns snapshots, commit timestamps, shared and exclusive row
//! locks (with deadlock detection and lock-wait timeout), the per-table change
//! log that ISCP reads, consumer low watermarks, leases and GC. It never
//! interprets keys or values: rows, index entries and catalog records are
//! opaque bytes here, encoded by the layers above. See [`api`] for the
//! contract every backend keeps.

pub mod api;

pub use api::*;
pub mod embedded;
pub mod write_budget;

pub use embedded::{Durability, EmbeddedOptions, EmbeddedStorage, EmbeddedTxn};
