//! The embedded storage backend: rows in redb, recent versions in memory,
//! commits durable in a commit log.
//!
//! This module owns the single-process implementation of the [`crate::api`]
//! contract. It is split by concept:
//!
//! * `mvcc` — the version overlay: versions not yet in redb or still needed
//!   by snapshots and consumers; snapshot reads pick the newest `<= ts`
//!   there, else read redb.
//! * `locks` — shared and exclusive row locks, the wait-for graph
//!   (deadlock detection) and lock-wait timeouts.
//! * `durable` — the redb file: rows, change log, counters, watermarks,
//!   leases and sequences.
//! * `changelog` — encoding of [`crate::api::Change`], net effect per
//!   transaction, and range reads of the change log.
//! * `txn` — [`EmbeddedTxn`], write sets and savepoints.
//! * `commit` — group commit: the commit queue, timestamps, install and
//!   one commit-log record per group; [`Durability`].
//! * `log` — the commit log: one record per group, read back at open.
//! * `flush` — syncs of the commit log (one covers every group written
//!   before it began), then completion: publish, hand to the applier.
//! * `apply` — the applier: committed groups into redb, in commit order.
//! * `space` — free space of the data directory: no redb write is started
//!   without room for it (a full disk stops the applier, not reads).
//! * `lease` — wall-clock leases and durable sequences.
//! * `gc` — the GC horizon per table and reclamation.
//! * `clock` — wall-clock times of recent commits (lag in milliseconds).
//! * `engine` — [`EmbeddedStorage`], which ties them together.
//!
//! Commits are grouped (`commit`): the leader of a group, holding the commit
//! mutex, assigns `ts = last + 1, last + 2, …` to the queued transactions,
//! installs their versions in memory and writes them all as one record of
//! the commit log (`log`); `flush` syncs the log, one `fdatasync` covering
//! every group written before it, and then publishes the groups' last `ts`
//! as `latest_ts` in commit order and hands them to the applier (`apply`),
//! which writes them to redb in larger transactions. Commit timestamps
//! therefore strictly increase and a change becomes readable from the
//! change log exactly when its transaction becomes visible.
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
mod flush;
mod gc;
mod lease;
mod locks;
mod log;
mod mvcc;
mod space;
mod txn;

pub use commit::Durability;
pub use engine::{default_cache_bytes, EmbeddedOptions, EmbeddedStorage};
pub use txn::EmbeddedTxn;
