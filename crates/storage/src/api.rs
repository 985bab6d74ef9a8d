//! The storage contract: what every backend (the embedded redb engine today, a
//! PostgreSQL backend shared by several compute nodes later) must provide.
//!
//! Nothing above this trait may assume one process. Everything a caller needs
//! — snapshots, commit timestamps, row locks, the change log, leases and
//! consumer low watermarks — goes through [`Storage`] and [`Transaction`].
//!
//! # Contract
//! * **Timestamps.** Every commit gets a commit timestamp strictly greater than
//!   every earlier one. [`Storage::latest_ts`] is the newest commit whose writes
//!   *and* change-log entries are fully visible; a transaction begun after a
//!   commit returned sees that commit.
//! * **Reads.** Plain reads in a transaction see the snapshot at its
//!   `start_ts` plus the transaction's own writes. *Locking* reads (`get` with
//!   `lock = true`, [`Transaction::get_for_share`], and every write) take the
//!   row lock first and then read the **latest committed** version ("current
//!   read", as InnoDB does), so concurrent read-modify-write statements never
//!   lose updates.
//! * **Locks.** Pessimistic, per `(table, key)`, held until commit or
//!   rollback, in three modes. *Exclusive* (X) locks are taken by every
//!   write, by `get` with `lock = true` and by [`Transaction::lock`];
//!   *shared* (S) locks by [`Transaction::get_for_share`];
//!   *intention-exclusive* (IX) locks by [`Transaction::get_for_intent`].
//!   S is compatible with S and IX with IX; every other pair conflicts. A
//!   transaction holding X has every mode; one holding S or IX that asks
//!   for a mode it lacks upgrades (S with IX is X) once no other holder
//!   conflicts, and waits otherwise. A waiter waits for every conflicting
//!   holder; a wait that would close a cycle in the wait-for graph (two S
//!   holders both upgrading included) fails at once with
//!   [`StorageError::Deadlock`] (MySQL 1213) for the requester; a wait longer
//!   than [`TxnOptions::lock_wait_timeout`] fails with
//!   [`StorageError::LockWaitTimeout`] (MySQL 1205). Neither ends the
//!   transaction: the caller rolls back the statement (see savepoints).
//!   Read-only transactions take no locks. The SQL layer uses a table's
//!   catalog record as its metadata lock: DML takes IX, `LOCK TABLES` S,
//!   DDL X.
//! * **Atomicity.** [`Transaction::savepoint`] / [`Transaction::rollback_to`]
//!   undo the writes made after the savepoint (the SQL layer takes one per
//!   statement, so a failed statement writes nothing). Locks stay held.
//! * **Durability.** When [`Transaction::commit`] returns `Ok(ts)`, the writes
//!   and their change-log entries are on stable storage (fsync): a process
//!   killed right after loses nothing, and a transaction that did not return
//!   from commit is either wholly present or wholly absent after restart.
//!   Concurrent commits may share one durable write (group commit); a failed
//!   write fails every commit that shared it. A backend may offer an opt-in
//!   relaxed mode (the embedded one's `Durability::Periodic`) in which a
//!   crash loses the commits of a bounded last window — always a whole
//!   prefix of the commit order.
//! * **Change log.** Each committed write of a table produces one [`Change`]
//!   (the net effect per key per transaction), readable with
//!   [`Storage::changes`] in `(commit_ts, seq)` order, exactly when the
//!   transaction is visible.
//! * **GC.** Old row versions are dropped once no open transaction's snapshot
//!   needs them; change-log entries are dropped once they are older than every
//!   registered consumer's low watermark (and than every open snapshot).
//!   A table with no consumer keeps no change log older than the oldest open
//!   snapshot.
//! * **Threads.** `Storage` is `Send + Sync` and shared by `Arc`; a
//!   `Transaction` is used by one thread at a time (`Send`, not `Sync`).

use std::ops::Bound;

/// Commit / snapshot timestamp. 0 means "before everything".
pub type Ts = u64;
/// A storage-level table (user tables, index tables and system tables alike).
pub type TableId = u64;
/// Transaction identifier, unique for the life of the storage.
pub type TxnId = u64;

/// Result alias for storage calls.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// Storage errors. The SQL layer maps them to MySQL codes.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum StorageError {
    /// Lock wait would form a cycle (MySQL 1213).
    #[error("Deadlock found when trying to get lock; try restarting transaction")]
    Deadlock,
    /// Lock wait exceeded the configured timeout (MySQL 1205).
    #[error("Lock wait timeout exceeded; try restarting transaction")]
    LockWaitTimeout,
    /// The transaction was already committed/rolled back, or poisoned.
    #[error("transaction is no longer active: {0}")]
    TxnClosed(String),
    /// A write in a read-only transaction (MySQL 1792).
    #[error("Cannot execute statement in a READ ONLY transaction.")]
    ReadOnly,
    /// A lease is held by someone else.
    #[error("lease {name} is held by {holder}")]
    LeaseHeld { name: String, holder: String },
    /// Durable I/O failed; the storage is poisoned and refuses further writes.
    #[error("storage I/O error: {0}")]
    Io(String),
    /// The statement's [`Interrupt`] fired (KILL, or its deadline passed)
    /// while it waited for a lock or scanned; the caller decides which
    /// (MySQL 1317 or 3024) and rolls the statement back.
    #[error("Query execution was interrupted")]
    Interrupted,
    /// A remote backend (PostgreSQL) could not be reached, or the
    /// connection failed mid-call. Not a poisoning: the next call retries.
    /// When it failed while committing, the message says the outcome is
    /// unknown (the transaction may or may not have committed).
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// A row lock a `NOWAIT` locking read asked for is held by another
    /// transaction (MySQL 3572).
    #[error(
        "Statement aborted because lock(s) could not be acquired immediately and NOWAIT is set."
    )]
    LockNotAvailable,
    /// The backend does not offer what was asked (MySQL 1235).
    #[error("{0}")]
    Unsupported(String),
    /// Stored bytes could not be decoded.
    #[error("storage corruption: {0}")]
    Corrupt(String),
    /// The transaction's write set would pass its memory limit or the
    /// shared budget named by `setting` (MySQL 1197, ER_TRANS_CACHE_FULL).
    /// Nothing of the refused write was recorded: the caller rolls the
    /// statement back.
    #[error(
        "Multi-statement transaction required more than '{setting}' bytes of storage; \
         increase this mysqld variable and try again"
    )]
    TxnTooLarge { setting: String },
    /// A change-log range was requested that GC already removed.
    #[error("change log for table {table} before ts {gc_ts} was garbage-collected")]
    ChangesGone { table: TableId, gc_ts: Ts },
}

/// What a locking read ([`Transaction::get`] with `lock`) does about a row
/// another transaction has locked: `SELECT … FOR UPDATE [NOWAIT | SKIP
/// LOCKED]`. Metadata locks (`get_for_share`, `get_for_intent`) and
/// writes always wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LockWait {
    /// Wait up to the lock-wait timeout (deadlocks detected).
    #[default]
    Wait,
    /// Fail at once with [`StorageError::LockNotAvailable`].
    NoWait,
    /// Read the row as absent.
    SkipLocked,
}

/// Options for [`Storage::begin`].
#[derive(Debug, Clone)]
pub struct TxnOptions {
    /// How long a lock request may wait before [`StorageError::LockWaitTimeout`].
    pub lock_wait_timeout: std::time::Duration,
    /// A read-only transaction takes no locks and cannot write.
    pub read_only: bool,
    /// How much memory the transaction's buffered writes and locks may
    /// hold ([`crate::write_budget`]).
    pub write_limit: crate::write_budget::WriteLimit,
}

impl Default for TxnOptions {
    fn default() -> Self {
        Self {
            lock_wait_timeout: std::time::Duration::from_secs(50),
            read_only: false,
            write_limit: Default::default(),
        }
    }
}

/// What may stop the statement a transaction is running: a cancellation
/// token (cancelled by `KILL`) and a deadline (`max_execution_time`).
/// Lock waits and scans check it and fail with
/// [`StorageError::Interrupted`]; the default never fires.
#[derive(Debug, Clone, Default)]
pub struct Interrupt {
    token: Option<tokio_util::sync::CancellationToken>,
    deadline: Option<std::time::Instant>,
}

impl Interrupt {
    /// An interrupt that fires when `token` is cancelled or at `deadline`.
    pub fn new(
        token: tokio_util::sync::CancellationToken,
        deadline: Option<std::time::Instant>,
    ) -> Self {
        Interrupt {
            token: Some(token),
            deadline,
        }
    }

    /// The same interrupt, also firing at `deadline`.
    pub fn with_deadline(self, deadline: std::time::Instant) -> Self {
        Interrupt {
            deadline: Some(self.deadline.map_or(deadline, |d| d.min(deadline))),
            ..self
        }
    }

    /// The cancellation token (`None` for the interrupt that never fires).
    pub fn token(&self) -> Option<&tokio_util::sync::CancellationToken> {
        self.token.as_ref()
    }

    /// Whether the token was cancelled.
    pub fn cancelled(&self) -> bool {
        self.token.as_ref().is_some_and(|t| t.is_cancelled())
    }

    /// Whether the deadline has passed.
    pub fn expired(&self) -> bool {
        self.deadline
            .is_some_and(|d| std::time::Instant::now() >= d)
    }

    /// The deadline, if any.
    pub fn deadline(&self) -> Option<std::time::Instant> {
        self.deadline
    }

    /// `Err(Interrupted)` once cancelled or expired.
    pub fn check(&self) -> Result<()> {
        if self.cancelled() || self.expired() {
            Err(StorageError::Interrupted)
        } else {
            Ok(())
        }
    }
}

/// What a committed write did to one key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeKind {
    /// The key did not exist before the transaction and exists after it.
    Insert,
    /// The key existed before and after (value replaced).
    Update,
    /// The key existed before and not after.
    Delete,
}

/// One committed change, the net effect of one transaction on one key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// Commit timestamp of the transaction that made the change.
    pub commit_ts: Ts,
    /// Position inside the transaction's changes to this table (0-based).
    pub seq: u32,
    pub kind: ChangeKind,
    pub key: Vec<u8>,
    /// Value before the transaction (`None` for Insert).
    pub old: Option<Vec<u8>>,
    /// Value after the transaction (`None` for Delete).
    pub new: Option<Vec<u8>>,
}

/// A batch of changes from [`Storage::changes`].
#[derive(Debug, Clone, Default)]
pub struct ChangeBatch {
    pub changes: Vec<Change>,
    /// `Some((ts, seq))` when the batch was cut by `limit`: pass it as
    /// `resume` to continue. A transaction's changes may span batches.
    pub resume: Option<(Ts, u32)>,
}

/// Counters reported by [`Storage::gc`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcStats {
    pub versions_removed: u64,
    pub changes_removed: u64,
    /// Rows and change-log entries of purged tables deleted from the file.
    pub purged_entries: u64,
}

/// A shared storage: embedded engine or (later) a remote backend.
pub trait Storage: Send + Sync + 'static {
    /// Begin a transaction whose snapshot is `latest_ts()` at this instant.
    fn begin(&self, opts: TxnOptions) -> Result<Box<dyn Transaction>>;

    /// Newest fully visible commit timestamp.
    fn latest_ts(&self) -> Ts;

    /// Wall-clock time (Unix ms) of the commit at `ts`, when this process
    /// still remembers it (reporting only: lag in milliseconds). `None`:
    /// unknown, e.g. older than what is kept, or before a restart.
    fn commit_time_ms(&self, ts: Ts) -> Option<u64> {
        let _ = ts;
        None
    }

    /// Committed changes of `table` with `from < commit_ts <= to`, in
    /// `(commit_ts, seq)` order, at most `limit` entries. `resume` continues
    /// a batch cut by `limit` (exclusive of the given position).
    /// `to` is clamped to [`Storage::latest_ts`]; `limit = 0` returns an
    /// empty batch. Fails with [`StorageError::ChangesGone`] when `from` is
    /// below the table's change-log GC horizon.
    fn changes(
        &self,
        table: TableId,
        from: Ts,
        to: Ts,
        resume: Option<(Ts, u32)>,
        limit: usize,
    ) -> Result<ChangeBatch>;

    /// Rows of `table` visible at snapshot `ts` with key strictly greater than
    /// `after` (or from the start), in key order, at most `limit` rows.
    /// `ts` must not be older than the GC horizon (hold a transaction or a
    /// consumer registration to keep it); an older `ts` fails with
    /// [`StorageError::ChangesGone`] carrying the horizon.
    fn snapshot_scan(
        &self,
        table: TableId,
        ts: Ts,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>>;

    /// Register (or move) a change consumer's low watermark for `table`:
    /// the change log above `low_watermark` and the row versions visible at
    /// `low_watermark` are kept until it moves or is unregistered.
    fn set_consumer_watermark(&self, consumer: &str, table: TableId, low_watermark: Ts);

    /// Remove a consumer registration.
    fn remove_consumer(&self, consumer: &str);

    /// With `on_demand`, store `table`'s change log only while a consumer
    /// watermark is registered on it (a user table nobody reads the changes
    /// of then pays no change-log writes); without, always (the default for
    /// every table). Durable. Commits made while no entries were stored
    /// leave none: [`Storage::changes`] from below the last of them fails
    /// with [`StorageError::ChangesGone`], as after a GC, and that horizon
    /// is kept when a consumer registers or the log is switched back to
    /// always. A consumer must therefore register (or switch the log on)
    /// **before** it takes the snapshot it reads changes after. A backend
    /// may ignore `on_demand` and store the change log always.
    fn set_change_log_on_demand(&self, table: TableId, on_demand: bool) -> Result<()> {
        let _ = (table, on_demand);
        Ok(())
    }

    /// Drop everything stored for `table` (rows and change log), once no
    /// transaction still writes it. Used when a table or hidden index table
    /// is dropped for good. On return the table reads as empty (rows and
    /// changes) and stays so across a restart; the space it takes is
    /// reclaimed later by [`Storage::gc`] passes, in bounded batches, so
    /// the call takes the same short time for any table size.
    fn purge_table(&self, table: TableId) -> Result<()>;

    /// A hint: `table` is small and read by most statements (a catalog);
    /// keep its latest values in memory once read. Backends may ignore it.
    fn cache_latest(&self, _table: TableId) {}

    /// Try to take or renew the named lease for `holder` for `ttl`. Returns
    /// `Ok(true)` when `holder` holds it after the call, `Ok(false)` when
    /// another holder's unexpired lease stands.
    fn try_lease(&self, name: &str, holder: &str, ttl: std::time::Duration) -> Result<bool>;

    /// Give up a lease if `holder` has it.
    fn release_lease(&self, name: &str, holder: &str);

    /// Reclaim row versions and change-log entries nobody needs.
    fn gc(&self) -> Result<GcStats>;

    /// Allocate a fresh, never reused id from the named durable sequence
    /// (table ids, job ids). Durable on return.
    fn next_id(&self, sequence: &str) -> Result<u64>;

    /// Counters for `SHOW STATUS` (name, value), e.g. durable writes since
    /// open. A backend without any returns none.
    fn status(&self) -> Vec<(&'static str, u64)> {
        Vec::new()
    }
}

/// What one thread of [`Transaction::scan_visit_parts`] calls per row:
/// `(key, value)`, returns whether to go on.
pub type PartVisitor<'a> = dyn FnMut(&[u8], &[u8]) -> bool + Send + 'a;

/// A range of keys (`start`, `end`), as [`Transaction::scan_visit`] takes
/// it, owned.
pub type KeyRange = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// One part of [`Transaction::scan_visit_ranges_parts`]: its key ranges
/// (in key order, disjoint) and what visits their rows.
pub type RangesPart<'r, 'a> = (&'r [KeyRange], &'r mut PartVisitor<'a>);

/// A borrowed view of an owned bound.
fn bound_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

/// One transaction. Dropping it without commit rolls it back.
pub trait Transaction: Send {
    fn id(&self) -> TxnId;
    /// Snapshot timestamp.
    fn start_ts(&self) -> Ts;

    /// Read one key. `lock = true` takes the row lock and reads the latest
    /// committed version (plus own writes).
    fn get(&mut self, table: TableId, key: &[u8], lock: bool) -> Result<Option<Vec<u8>>>;

    /// Range read in key order over the snapshot merged with own writes,
    /// copied out of [`Transaction::scan_visit`] (every backend's one scan).
    /// `limit = usize::MAX` for all; 0 still checks that the transaction is
    /// usable (it visits at most one row).
    fn scan(
        &mut self,
        table: TableId,
        start: Bound<Vec<u8>>,
        end: Bound<Vec<u8>>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        let mut out: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        self.scan_visit(
            table,
            start.as_ref().map(Vec::as_slice),
            end.as_ref().map(Vec::as_slice),
            &mut |k, v| {
                if out.len() < limit {
                    out.push((k.to_vec(), v.to_vec()));
                }
                out.len() < limit
            },
        )?;
        Ok(out)
    }

    /// About how many rows `table` holds (committed, any snapshot): a
    /// planner's estimate, never an answer. Cheap: no scan.
    fn approx_rows(&self, table: TableId) -> u64;

    /// [`Transaction::scan`] without copies: `f` sees each row's key and
    /// value in key order, borrowed from the store, and returns whether to
    /// go on. Do not call back into storage from `f` (the engine may hold
    /// a latch on the table while visiting); keep each call short.
    fn scan_visit(
        &mut self,
        table: TableId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()>;

    /// A whole-table [`Transaction::scan_visit`] in `parts.len()`
    /// consecutive key ranges, each visited by its own thread at this
    /// transaction's snapshot: `parts[i]` sees the rows of the `i`-th range
    /// in key order, and every row goes to exactly one part (ranges are in
    /// key order, so part `i`'s rows all sort before part `i + 1`'s). A
    /// backend may use fewer ranges (then the last parts see nothing); the
    /// default visits the whole table with `parts[0]`, as does any scan of a
    /// table this transaction has written. A part that returns false stops
    /// its own range only.
    fn scan_visit_parts(&mut self, table: TableId, parts: &mut [&mut PartVisitor]) -> Result<()> {
        match parts.first_mut() {
            Some(first) => self.scan_visit(table, Bound::Unbounded, Bound::Unbounded, *first),
            None => Ok(()),
        }
    }

    /// [`Transaction::scan_visit`] of each part's key ranges in turn, each
    /// part visited by its own thread at this transaction's snapshot:
    /// `parts[i].1` sees the rows of `parts[i].0`'s ranges in their order
    /// (ranges in key order and disjoint: every row goes to one part, in
    /// key order within it). A part that returns false stops its own
    /// ranges only. The default visits the parts one after the other on
    /// this thread, as does any scan of a table this transaction has
    /// written.
    fn scan_visit_ranges_parts(
        &mut self,
        table: TableId,
        parts: &mut [RangesPart<'_, '_>],
    ) -> Result<()> {
        for (ranges, f) in parts.iter_mut() {
            for (s, e) in ranges.iter() {
                let mut go = true;
                self.scan_visit(table, bound_ref(s), bound_ref(e), &mut |k, v| {
                    go = f(k, v);
                    go
                })?;
                if !go {
                    break;
                }
            }
        }
        Ok(())
    }

    /// Locking read in share mode (`SELECT … FOR SHARE`): take a shared lock on
    /// `(table, key)` and read the latest committed version (plus own writes).
    /// Shared locks are compatible with each other and conflict with exclusive
    /// locks; held until commit or rollback. Fails like a write in a
    /// read-only transaction (read-only transactions take no locks).
    fn get_for_share(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Take an intention-exclusive lock on `(table, key)` and read the
    /// latest committed version (plus own writes): compatible with other
    /// IX locks, conflicting with S and X. What a writer of a table holds
    /// on its catalog record. Fails like a write in a read-only
    /// transaction.
    fn get_for_intent(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Take the exclusive row lock on `(table, key)` without reading.
    fn lock(&mut self, table: TableId, key: &[u8]) -> Result<()>;

    /// Write a value (locks the row first). Returns the previous value
    /// (latest committed or own write).
    fn put(&mut self, table: TableId, key: &[u8], value: Vec<u8>) -> Result<Option<Vec<u8>>>;

    /// [`put`](Self::put) without reading the previous value, for a caller
    /// that has just read the key itself (an INSERT's duplicate check) or
    /// knows it is new: one lookup per row instead of two.
    fn put_unread(&mut self, table: TableId, key: &[u8], value: Vec<u8>) -> Result<()> {
        self.put(table, key, value).map(|_| ())
    }

    /// Delete a key (locks the row first). Returns the previous value.
    fn delete(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>>;

    /// Set what interrupts the statement now running in this transaction
    /// (replacing the previous statement's): lock waits and scans fail
    /// with [`StorageError::Interrupted`] once it fires.
    fn set_interrupt(&mut self, interrupt: Interrupt);

    /// [`Interrupt::check`] of the statement now running: for long loops
    /// above storage (joins, sorts) that read no more rows for a while.
    fn check_interrupt(&self) -> Result<()>;

    /// How the running statement's locking reads treat a row locked by
    /// another transaction (reset to [`LockWait::Wait`] by the caller when
    /// the statement ends). [`StorageError::Unsupported`] from a backend
    /// that cannot.
    fn set_lock_wait(&mut self, wait: LockWait) -> Result<()>;

    /// READ COMMITTED: move this transaction's snapshot to the newest
    /// commit, so the next reads see every transaction committed since;
    /// own writes, row locks and savepoints are kept. Called between
    /// statements, never while one reads.
    fn refresh_snapshot(&mut self) -> Result<()>;

    /// Mark the current write position.
    fn savepoint(&mut self) -> Savepoint;
    /// Undo writes made after `sp` (locks stay held).
    fn rollback_to(&mut self, sp: Savepoint);

    /// Whether this transaction has written anything.
    fn has_writes(&self) -> bool;

    /// Commit durably; returns the commit timestamp (a read-only or empty
    /// transaction returns its start_ts and writes nothing).
    fn commit(self: Box<Self>) -> Result<Ts>;
    /// Roll back and release locks.
    fn rollback(self: Box<Self>);
}

/// Opaque write-position marker from [`Transaction::savepoint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Savepoint(pub usize);

/// Count a durable commit of a writing transaction and its latency
/// (`tributary_commits_total`, `tributary_commit_duration_seconds`); every
/// backend calls it. A no-op until a metrics recorder is installed.
pub fn record_commit(took: std::time::Duration) {
    metrics::counter!("tributary_commits_total").increment(1);
    metrics::histogram!("tributary_commit_duration_seconds").record(took.as_secs_f64());
}

/// Convenience: both bounds unbounded.
pub fn full_range() -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    (Bound::Unbounded, Bound::Unbounded)
}
