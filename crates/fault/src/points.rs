//! The catalogue of fault-point names placed by Tributary code.
//!
//! Owns the exact name strings (so call sites, tests and docs cannot drift apart).
//! It must never contain logic; adding a point here means adding it to
//! `docs/FAULTS.md` too.

/// ISCP: right after a consumer was registered in the runtime table.
pub const ISCP_AFTER_REGISTER_CONSUMER: &str = "fj/iscp/cancel/after-register-consumer";
/// ISCP: right after an iteration was submitted to the worker pool.
pub const ISCP_AFTER_SUBMIT: &str = "fj/iscp/cancel/after-submit";
/// ISCP: in the retriever fan-out, before a batch is sent to a consumer.
pub const ISCP_FANOUT_BEFORE_SEND: &str = "fj/iscp/cancel/fanout-before-send";
/// ISCP: before an HNSW consumer applies a batch to the index.
pub const ISCP_LONG_HNSW_BEFORE_UPDATE: &str = "fj/iscp/cancel/long/hnsw-before-update";
/// ISCP: before an HNSW consumer persists the index into its hidden tables.
pub const ISCP_LONG_HNSW_BEFORE_SAVE: &str = "fj/iscp/cancel/long/hnsw-before-save";
/// ISCP: before the consumer commits the new watermark together with the index state.
pub const ISCP_LONG_BEFORE_WATERMARK: &str = "fj/iscp/cancel/long/before-watermark";
/// ISCP: before a full-text (SQL-executing) consumer applies a batch.
pub const ISCP_LONG_BEFORE_EXEC: &str = "fj/iscp/cancel/long/before-exec";
/// ISCP: before a consumer's send of a batch; call sites pass the index name as target
/// (arm `fj/iscp/cancel/long/before-send:idx01` to stall only index `idx01`).
pub const ISCP_LONG_BEFORE_SEND: &str = "fj/iscp/cancel/long/before-send";
/// ISCP: in a background base writer, after the base's chunks are written and
/// before the base is installed; call sites pass the index name as target.
pub const ISCP_BASE_BEFORE_INSTALL: &str = "fj/iscp/cancel/base-before-install";
/// ISCP: in the cancel queue, before the job is marked Canceled.
pub const ISCP_BEFORE_MARK_CANCELED: &str = "fj/iscp/cancel/before-mark-canceled";
/// ISCP: the cancel queue fails (instead of writing Canceled) and must retry.
pub const ISCP_MARK_CANCELED_ERROR: &str = "fj/iscp/cancel/mark-canceled-error";
/// Storage: before the embedded store writes a commit group to its commit
/// log. Arm it with `return` and a message (e.g. `No space left on device
/// (os error 28)`) to make durable writes fail like a full disk: each commit
/// then fails with nothing written, reads go on, and writes work again once
/// it is removed.
pub const STORAGE_LOG_WRITE: &str = "fj/storage/log-write";
/// Storage: where the embedded store's applier reads the free space of the
/// data directory's file system before it writes to the data file. Arm it
/// with `echo` and `iarg` = the bytes to report (e.g. 0: a full disk) to
/// hold the applier back as a full disk would; a negative `iarg` reads the
/// file system (tests that fill a real small one).
pub const STORAGE_FREE_SPACE: &str = "fj/storage/free-space";
/// DDL: in a CREATE INDEX (or ALTER TABLE) index build, before every
/// 1,024th row, with the index name as target and the statement's KILL
/// token (so a KILL releases a `wait` or `sleep` here at once).
pub const DDL_INDEX_BUILD: &str = "fj/ddl/index-build";
/// DDL: in an ALTER TABLE's row rewrite, before every 1,024th row, with
/// the table name as target and the statement's KILL token.
pub const DDL_ALTER_REWRITE: &str = "fj/ddl/alter-rewrite";
/// DDL: ALTER TABLE / CREATE INDEX / RENAME TABLE with every write done
/// and nothing committed (target: the table; the statement's KILL token):
/// a KILL or a crash here must leave the old state whole.
pub const DDL_BEFORE_COMMIT: &str = "fj/ddl/before-commit";
/// DDL: the same statements right after their commit, before dropped
/// jobs are drained and new synchronous indexes loaded (target: the
/// table; KILL token). Its outcome is ignored: the statement stands.
pub const DDL_AFTER_COMMIT: &str = "fj/ddl/after-commit";
/// DDL: in a TRUNCATE TABLE's transaction, after the old rows and
/// indexes were dropped (their ISCP jobs Canceling) and before the new
/// empty storage is registered (target: the table; KILL token): a KILL or
/// a crash here leaves the old table whole.
pub const DDL_TRUNCATE_SWAP: &str = "fj/ddl/truncate-swap";

/// Every catalogued point, in documentation order.
pub const ALL: &[&str] = &[
    ISCP_AFTER_REGISTER_CONSUMER,
    ISCP_AFTER_SUBMIT,
    ISCP_FANOUT_BEFORE_SEND,
    ISCP_LONG_HNSW_BEFORE_UPDATE,
    ISCP_LONG_HNSW_BEFORE_SAVE,
    ISCP_LONG_BEFORE_WATERMARK,
    ISCP_LONG_BEFORE_EXEC,
    ISCP_LONG_BEFORE_SEND,
    ISCP_BASE_BEFORE_INSTALL,
    ISCP_BEFORE_MARK_CANCELED,
    ISCP_MARK_CANCELED_ERROR,
    STORAGE_LOG_WRITE,
    STORAGE_FREE_SPACE,
    DDL_INDEX_BUILD,
    DDL_ALTER_REWRITE,
    DDL_BEFORE_COMMIT,
    DDL_AFTER_COMMIT,
    DDL_TRUNCATE_SWAP,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_well_formed() {
        let mut seen = std::collections::BTreeSet::new();
        for p in ALL {
            assert!(
                p.starts_with("fj/iscp/cancel/")
                    || p.starts_with("fj/ddl/")
                    || p.starts_with("fj/storage/"),
                "{p}"
            );
            assert!(!p.contains(':'), "{p} must not contain ':'");
            assert!(seen.insert(*p), "{p} listed twice");
        }
        assert_eq!(ALL.len(), 18);
    }
}
