//! The embedded storage backend: MVCC in memory, durability in redb.
//!
//! This module owns the single-process implementation of the [`crate::api`]
//! contract. It is split by concept:
//!
//! * `mvcc` — the in-memory version store (every live row with its recent
//!   versions); snapshot reads pick the newest version `<= ts`.
//! * `locks` — shared and exclusive row locks, the wait-for graph
//!   (deadlock detection) and lock-wait timeouts.
//! * `durable` — the redb file: rows, change log, counters, watermarks,
//!   leases and sequences. Every commit is one fsynced redb transaction.
//! * `changelog` — encoding of [`crate::api::Change`], net effect per
//!   transaction, and range reads of the change log.
//! * `txn` — [`EmbeddedTxn`], write sets and savepoints.
//! * `commit` — group commit: the commit queue, timestamps, one durable
//!   write per group, install and publish; [`Durability`].
//! * `lease` — wall-clock leases and durable sequences.
//! * `gc` — the GC horizon per table and reclamation.
//! * `clock` — wall-clock times of recent commits (lag in milliseconds).
//! * `engine` — [`EmbeddedStorage`], which ties them together.
//!
//! Commits are grouped (`commit`): the leader of a group, holding the commit
//! mutex, assigns `ts = last + 1, last + 2, …` to the queued transactions,
//! writes them all in one redb transaction with one fsync, installs the
//! versions in memory and publishes the last `ts` as `latest_ts`. Commit
//! timestamps therefore strictly increase and a change becomes readable from
//! the change log exactly when its transaction becomes visible.
//!
//! Only the latest version of each row is persisted; no snapshot survives a
//! restart. After reopening, `snapshot_scan` of a table is valid for any
//! `ts >=` that table's last commit timestamp (older requests get
//! [`crate::api::StorageError::ChangesGone`]).
//!
//! This module must never interpret keys or values, and never let a redb
//! failure go unnoticed: the first one poisons the storage (sticky
//! [`crate::api::StorageError::Io`], no further writes).

mod apply;
mod changelog;
mod clock;
mod commit;
mod durable;
mod engine;
mod gc;
mod lease;
mod locks;
mod log;
mod mvcc;
mod txn;

pub use commit::Durability;
pub use engine::{default_cache_bytes, EmbeddedOptions, EmbeddedStorage};
pub use txn::EmbeddedTxn;
