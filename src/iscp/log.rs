//! The durable job log, `mo_catalog.mo_iscp_log`: one row per job
//! generation `(account_id, table_id, job_name, job_id)`.
//!
//! Owns the row format and the **only** functions that write job rows:
//! [`register_job`] (CREATE), [`mark_canceling`] (DROP's logical drop),
//! [`guarded_update`] (consumer commits, guarded) and [`mark_canceled`]
//! (the cancel queue's final state). The guard in [`guarded_update`] makes
//! two promises: no progress write ever overwrites Error, Canceling or
//! Canceled, and every progress write is a compare-and-set on the job's
//! iteration number, so a stale runner or a late flush can never move a job
//! backwards.

use std::ops::Bound;

use serde::{Deserialize, Serialize};
use tributary_storage::{Transaction, Ts};

use crate::catalog::codec::{decode_row, encode_key, encode_row};
use crate::catalog::{IndexDef, IndexKind, TableDef, ISCP_LOG};
use crate::error::{SqlError, SqlResult};
use crate::types::Value;

/// Job states, numbered as in MatrixOne.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[repr(i64)]
pub enum JobState {
    Invalid = 0,
    Pending = 1,
    Running = 2,
    Completed = 3,
    Error = 4,
    Canceled = 5,
    Canceling = 6,
}

impl JobState {
    /// From the stored integer.
    pub fn from_i64(v: i64) -> JobState {
        match v {
            1 => JobState::Pending,
            2 => JobState::Running,
            3 => JobState::Completed,
            4 => JobState::Error,
            5 => JobState::Canceled,
            6 => JobState::Canceling,
            _ => JobState::Invalid,
        }
    }
    /// Display name.
    pub fn name(self) -> &'static str {
        match self {
            JobState::Invalid => "Invalid",
            JobState::Pending => "Pending",
            JobState::Running => "Running",
            JobState::Completed => "Completed",
            JobState::Error => "Error",
            JobState::Canceled => "Canceled",
            JobState::Canceling => "Canceling",
        }
    }
    /// States a progress write must never overwrite.
    pub fn is_protected(self) -> bool {
        matches!(
            self,
            JobState::Error | JobState::Canceled | JobState::Canceling
        )
    }
    /// No more work will happen (for lag reporting).
    pub fn is_terminal(self) -> bool {
        matches!(self, JobState::Canceled | JobState::Canceling)
    }

    /// Whether a job row may go from `self` to `next` (staying is always
    /// allowed): the one table of legal moves, asserted where job rows are
    /// written.
    ///
    /// | from \ to | Pending | Running | Completed | Error | Canceling | Canceled |
    /// |---|---|---|---|---|---|---|
    /// | Pending, Running, Completed | | yes | yes | yes | yes | yes |
    /// | Error | | | | | yes | yes |
    /// | Canceling | | | | | | yes |
    /// | Canceled, Invalid | | | | | | |
    pub fn can_move_to(self, next: JobState) -> bool {
        use JobState::*;
        self == next
            || match self {
                Pending | Running | Completed => {
                    matches!(next, Running | Completed | Error | Canceling | Canceled)
                }
                Error => matches!(next, Canceling | Canceled),
                Canceling => next == Canceled,
                Canceled | Invalid => false,
            }
    }
}

/// Asserts a job row's state move (see [`JobState::can_move_to`]).
fn assert_move(key: &JobKey, from: JobState, to: JobState) {
    debug_assert!(
        from.can_move_to(to),
        "job {key:?}: illegal state move {} -> {}",
        from.name(),
        to.name()
    );
}

/// Why a work unit failed: what the job row records (its code) and whether
/// the job stops (a permanent error moves it to Error) or retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitError {
    /// A fault point's injected error (tests).
    Injected,
    /// A row-lock wait timed out or deadlocked.
    LockConflict,
    /// Any other temporary failure: I/O, a full disk, a task that died.
    Temporary,
    /// The index refused the data (a bad vector, a dimension mismatch).
    IndexRefused,
    /// The index's stored data is corrupt.
    Corrupt,
}

impl UnitError {
    /// The code stored in the job row (1..=3 temporary, 10001 and 10002
    /// permanent, as MatrixOne numbers them).
    pub fn code(self) -> u32 {
        match self {
            UnitError::Injected => 1,
            UnitError::LockConflict => 2,
            UnitError::Temporary => 3,
            UnitError::IndexRefused => 10_001,
            UnitError::Corrupt => 10_002,
        }
    }

    /// A permanent error stops the job (state Error) until it is dropped.
    pub fn is_permanent(self) -> bool {
        matches!(self, UnitError::IndexRefused | UnitError::Corrupt)
    }
}

/// Stage of a job, stored by name in `job_status` (`init`,
/// `incremental`). Monotone: a flush never moves it back (`Init <
/// Incremental`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Stage {
    /// The initial build.
    #[default]
    Init,
    /// After the initial build.
    Incremental,
}

impl Stage {
    /// The stored name.
    pub fn name(self) -> &'static str {
        match self {
            Stage::Init => "init",
            Stage::Incremental => "incremental",
        }
    }
}

impl std::fmt::Display for Stage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// `job_status` JSON.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
pub struct JobStatus {
    /// Completed work units; the compare-and-set token of every write.
    pub iterations: u64,
    pub rows_applied: u64,
    pub stage: Stage,
    /// Snapshot ts of the initial build.
    pub build_ts: Ts,
    /// Hex of the last primary key applied by the initial build.
    pub build_after: Option<String>,
    pub build_done: u64,
    pub build_total: u64,
    pub error_code: u32,
    pub error_msg: String,
    /// Consecutive temporary failures (drives backoff).
    pub retries: u32,
    /// Unix ms of the last run.
    pub last_run_ms: u64,
}

/// Identity of one job generation.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobKey {
    pub table_id: u64,
    pub job_name: String,
    pub job_id: u64,
}

impl JobKey {
    /// The job of index `ix` of table `t` (`None`: the index has no job).
    pub fn of(t: &TableDef, ix: &IndexDef) -> Option<JobKey> {
        Some(JobKey {
            table_id: t.id,
            job_name: job_name(&ix.name),
            job_id: ix.job_id?,
        })
    }
}

/// `job_spec` JSON: what the consumer needs to run without the catalog.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct JobSpec {
    pub db: String,
    pub table: String,
    pub index: String,
    pub kind: IndexKind,
    pub columns: Vec<usize>,
    pub storage_id: u64,
    pub is_async: bool,
    /// Vector dimension (HNSW jobs).
    #[serde(default)]
    pub dims: usize,
    /// The collation of each key part of a B-tree index (its column's);
    /// empty (specs written before collations, and every key of binary
    /// collations) is binary throughout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub collations: Vec<crate::collation::Collation>,
}

impl JobSpec {
    /// A synchronous (non-ASYNC) vector or full-text index: its writers
    /// maintain entries in the hidden table in their own transaction, and
    /// its job only checkpoints (see `crate::iscp::live`).
    pub fn is_sync_live(&self) -> bool {
        !self.is_async && !matches!(self.kind, IndexKind::BTree { .. })
    }

    /// The collation of each key part (binary where none is recorded).
    pub fn key_collations(&self) -> Vec<crate::collation::Collation> {
        (0..self.columns.len())
            .map(|i| self.collations.get(i).copied().unwrap_or_default())
            .collect()
    }

    /// The spec of index `ix` of table `t`.
    pub fn of(t: &TableDef, ix: &IndexDef) -> JobSpec {
        JobSpec {
            db: t.db.clone(),
            table: t.name.clone(),
            index: ix.name.clone(),
            kind: ix.kind.clone(),
            columns: ix.columns.clone(),
            storage_id: ix.storage_id,
            is_async: ix.is_async,
            dims: ix
                .columns
                .first()
                .and_then(|c| t.columns.get(*c))
                .and_then(|c| c.ty.vector_dim())
                .unwrap_or(0) as usize,
            collations: {
                let c = t.key_collations(&ix.columns);
                if c.iter().all(|c| c.is_default()) {
                    Vec::new()
                } else {
                    c
                }
            },
        }
    }
}

/// One row of the log.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    pub key: JobKey,
    pub spec: JobSpec,
    pub state: JobState,
    pub watermark: Ts,
    pub status: JobStatus,
    pub create_at: i64,
    pub drop_at: Option<i64>,
}

/// `index_<name>`
pub fn job_name(index: &str) -> String {
    format!("index_{index}")
}

fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0)
}

fn row_key(k: &JobKey) -> Vec<u8> {
    encode_key(&[
        Value::Int(0),
        Value::Int(k.table_id as i64),
        Value::Text(k.job_name.clone()),
        Value::Int(k.job_id as i64),
    ])
}

fn to_row(j: &JobRow) -> SqlResult<Vec<Value>> {
    let spec = serde_json::to_string(&j.spec).map_err(|e| SqlError::internal(e.to_string()))?;
    let status = serde_json::to_string(&j.status).map_err(|e| SqlError::internal(e.to_string()))?;
    Ok(vec![
        Value::Int(0),
        Value::Int(j.key.table_id as i64),
        Value::Text(j.key.job_name.clone()),
        Value::Int(j.key.job_id as i64),
        Value::Text(spec),
        Value::Int(j.state as i64),
        Value::Int(j.watermark as i64),
        Value::Text(status),
        Value::DateTime(j.create_at),
        j.drop_at.map(Value::DateTime).unwrap_or(Value::Null),
    ])
}

fn from_row(r: &[Value]) -> SqlResult<JobRow> {
    let bad = || SqlError::internal("corrupt mo_iscp_log row");
    let int = |i: usize| match r.get(i) {
        Some(Value::Int(v)) => Ok(*v),
        _ => Err(bad()),
    };
    let txt = |i: usize| match r.get(i) {
        Some(Value::Text(v)) => Ok(v.clone()),
        _ => Err(bad()),
    };
    Ok(JobRow {
        key: JobKey {
            table_id: int(1)? as u64,
            job_name: txt(2)?,
            job_id: int(3)? as u64,
        },
        spec: serde_json::from_str(&txt(4)?)
            .map_err(|e| SqlError::internal(format!("job_spec: {e}")))?,
        state: JobState::from_i64(int(5)?),
        watermark: int(6)? as u64,
        status: serde_json::from_str(&txt(7)?)
            .map_err(|e| SqlError::internal(format!("job_status: {e}")))?,
        create_at: match r.get(8) {
            Some(Value::DateTime(v)) => *v,
            _ => 0,
        },
        drop_at: match r.get(9) {
            Some(Value::DateTime(v)) => Some(*v),
            _ => None,
        },
    })
}

fn put(txn: &mut dyn Transaction, j: &JobRow) -> SqlResult<()> {
    txn.put(ISCP_LOG, &row_key(&j.key), encode_row(&to_row(j)?))?;
    Ok(())
}

/// Register a new job generation for `ix` on `t` (CREATE INDEX).
pub fn register_job(txn: &mut dyn Transaction, t: &TableDef, ix: &IndexDef) -> SqlResult<JobKey> {
    let key = JobKey::of(t, ix).ok_or_else(|| SqlError::internal("index without job id"))?;
    let spec = JobSpec::of(t, ix);
    // A synchronous index is complete when its CREATE commits (the DDL
    // writes its entries): it has no initial-build stage.
    let stage = if spec.is_sync_live() {
        Stage::Incremental
    } else {
        Stage::Init
    };
    let row = JobRow {
        key: key.clone(),
        spec,
        state: JobState::Completed,
        watermark: 0,
        status: JobStatus {
            stage,
            ..Default::default()
        },
        create_at: now_us(),
        drop_at: None,
    };
    put(txn, &row)?;
    Ok(key)
}

/// Read one job row; `lock` takes its row lock (current read).
pub fn read_job(txn: &mut dyn Transaction, key: &JobKey, lock: bool) -> SqlResult<Option<JobRow>> {
    match txn.get(ISCP_LOG, &row_key(key), lock)? {
        None => Ok(None),
        Some(b) => {
            let r = decode_row(&b).map_err(|e| SqlError::internal(e.to_string()))?;
            Ok(Some(from_row(&r)?))
        }
    }
}

/// Every job row, in key order.
pub fn read_all(txn: &mut dyn Transaction) -> SqlResult<Vec<JobRow>> {
    let rows = txn.scan(ISCP_LOG, Bound::Unbounded, Bound::Unbounded, usize::MAX)?;
    rows.iter()
        .map(|(_, v)| {
            let r = decode_row(v).map_err(|e| SqlError::internal(e.to_string()))?;
            from_row(&r)
        })
        .collect()
}

/// The logical drop: state Canceling with drop_at, in the DDL transaction.
/// Takes only the job row's lock.
pub fn mark_canceling(txn: &mut dyn Transaction, key: &JobKey) -> SqlResult<()> {
    let Some(mut j) = read_job(txn, key, true)? else {
        return Ok(());
    };
    if j.state == JobState::Canceled {
        return Ok(());
    }
    assert_move(key, j.state, JobState::Canceling);
    j.state = JobState::Canceling;
    j.drop_at = Some(now_us());
    put(txn, &j)
}

/// Why a guarded write was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GuardRefusal {
    /// The job row is gone or belongs to another generation.
    Missing,
    /// The job is Error/Canceling/Canceled.
    Protected(JobState),
    /// Another writer advanced the iteration number first.
    CasLost { expected: u64, found: u64 },
}

/// Apply `f` to the job row if it still belongs to this generation, is not
/// protected, and its iteration number is `expected_iteration`; the new row
/// carries iteration + 1. The single guarded path for progress writes.
pub fn guarded_update(
    txn: &mut dyn Transaction,
    key: &JobKey,
    expected_iteration: u64,
    f: impl FnOnce(&mut JobRow),
) -> SqlResult<Result<JobRow, GuardRefusal>> {
    let Some(mut j) = read_job(txn, key, true)? else {
        return Ok(Err(GuardRefusal::Missing));
    };
    if j.state.is_protected() || j.drop_at.is_some() {
        return Ok(Err(GuardRefusal::Protected(j.state)));
    }
    if j.status.iterations != expected_iteration {
        return Ok(Err(GuardRefusal::CasLost {
            expected: expected_iteration,
            found: j.status.iterations,
        }));
    }
    let (before_state, before_stage, before_wm) = (j.state, j.status.stage, j.watermark);
    f(&mut j);
    j.status.iterations = expected_iteration + 1;
    assert_move(key, before_state, j.state);
    // Stage (init → incremental) and watermark are monotone: a write that
    // moves either back is a bug of its caller. Release builds keep the old
    // value (a watermark moved back would apply changes twice to an index),
    // and say so.
    debug_assert!(
        j.status.stage >= before_stage && j.watermark >= before_wm,
        "job {:?}: stage {} -> {}, watermark {} -> {}",
        key,
        before_stage,
        j.status.stage,
        before_wm,
        j.watermark
    );
    if j.status.stage < before_stage || j.watermark < before_wm {
        tracing::error!(job = ?key, stage = %j.status.stage, watermark = j.watermark,
            "a job progress write moved its stage or watermark back; kept the old ones");
        j.status.stage = j.status.stage.max(before_stage);
        j.watermark = j.watermark.max(before_wm);
    }
    put(txn, &j)?;
    Ok(Ok(j))
}

/// Record a unit's failure on a job (guarded like progress): a permanent
/// error moves it to Error, a temporary one keeps it schedulable with a
/// retry count.
pub fn write_error(
    txn: &mut dyn Transaction,
    key: &JobKey,
    expected_iteration: u64,
    error: UnitError,
    msg: &str,
) -> SqlResult<Result<JobRow, GuardRefusal>> {
    guarded_update(txn, key, expected_iteration, |j| {
        j.status.error_code = error.code();
        j.status.error_msg = msg.to_string();
        j.status.last_run_ms = crate::iscp::now_ms();
        if error.is_permanent() {
            j.state = JobState::Error;
        } else {
            j.status.retries = j.status.retries.saturating_add(1);
            j.state = JobState::Completed;
        }
    })
}

/// The cancel queue's final write: Canceling (or any dropped state) →
/// Canceled. Idempotent.
pub fn mark_canceled(txn: &mut dyn Transaction, key: &JobKey) -> SqlResult<bool> {
    let Some(mut j) = read_job(txn, key, true)? else {
        return Ok(false);
    };
    if j.state == JobState::Canceled {
        return Ok(true);
    }
    assert_move(key, j.state, JobState::Canceled);
    j.state = JobState::Canceled;
    if j.drop_at.is_none() {
        j.drop_at = Some(now_us());
    }
    put(txn, &j)?;
    Ok(true)
}

/// The runner's view of the job log: every row that is not yet Canceled,
/// kept current by tailing the log table's own change log (as MatrixOne's
/// executor tails `mo_iscp_log`), so a tick costs O(changed rows), not
/// O(jobs ever created). A full read happens only at start or when the
/// change log was garbage-collected under it.
#[derive(Default)]
pub struct LogTail {
    jobs: std::collections::BTreeMap<JobKey, JobRow>,
    ts: Ts,
    loaded: bool,
    consumer: String,
}

/// Max change-log entries read per batch while tailing.
pub const LOG_TAIL_BATCH: usize = 4096;

impl LogTail {
    /// A tail that registers its position as change-log consumer `name`
    /// (so GC keeps what it has not read yet).
    pub fn new(name: &str) -> Self {
        LogTail {
            consumer: name.to_string(),
            ..Default::default()
        }
    }

    fn apply(&mut self, row: JobRow) {
        if row.state == JobState::Canceled {
            self.jobs.remove(&row.key);
        } else {
            self.jobs.insert(row.key.clone(), row);
        }
    }

    fn full(&mut self, storage: &dyn tributary_storage::Storage) -> SqlResult<()> {
        let mut txn = storage.begin(tributary_storage::TxnOptions::default())?;
        let ts = txn.start_ts();
        let rows = read_all(txn.as_mut());
        txn.rollback();
        self.jobs.clear();
        for r in rows? {
            self.apply(r);
        }
        self.ts = ts;
        self.loaded = true;
        Ok(())
    }

    /// Bring the view up to date.
    pub fn refresh(&mut self, storage: &dyn tributary_storage::Storage) -> SqlResult<()> {
        if !self.loaded {
            self.full(storage)?;
        } else {
            let latest = storage.latest_ts();
            let mut resume = None;
            while latest > self.ts {
                let b = match storage.changes(ISCP_LOG, self.ts, latest, resume, LOG_TAIL_BATCH) {
                    Ok(b) => b,
                    Err(tributary_storage::StorageError::ChangesGone { .. }) => {
                        self.full(storage)?;
                        break;
                    }
                    Err(e) => return Err(e.into()),
                };
                for c in &b.changes {
                    match &c.new {
                        Some(v) => {
                            let r = decode_row(v).map_err(|e| SqlError::internal(e.to_string()))?;
                            let new = from_row(&r)?;
                            let old = match &c.old {
                                Some(o) => decode_row(o).ok().and_then(|r| from_row(&r).ok()),
                                None => None,
                            };
                            log_transition(old.as_ref(), &new);
                            self.apply(new);
                        }
                        None => {
                            if let Some(o) = &c.old {
                                let r =
                                    decode_row(o).map_err(|e| SqlError::internal(e.to_string()))?;
                                self.jobs.remove(&from_row(&r)?.key);
                            }
                        }
                    }
                }
                match b.resume {
                    Some(r) => resume = Some(r),
                    None => {
                        self.ts = latest;
                        break;
                    }
                }
            }
        }
        storage.set_consumer_watermark(&self.consumer, ISCP_LOG, self.ts);
        Ok(())
    }

    /// Rows not yet Canceled, in key order.
    pub fn jobs(&self) -> Vec<JobRow> {
        self.jobs.values().cloned().collect()
    }

    /// Forget everything and release the change-log registration (the node
    /// lost the runner lease).
    pub fn reset(&mut self, storage: &dyn tributary_storage::Storage) {
        if self.loaded {
            storage.remove_consumer(&self.consumer);
        }
        self.jobs.clear();
        self.loaded = false;
        self.ts = 0;
    }
}

/// Log a committed change of a job row once (the runner tails every change
/// of the log exactly once): creation, a state change, the end of the
/// initial build, a failed unit that will be retried.
fn log_transition(old: Option<&JobRow>, new: &JobRow) {
    let (job_id, table, index) = (new.key.job_id, new.key.table_id, new.spec.index.as_str());
    let db = new.spec.db.as_str();
    let Some(old) = old else {
        tracing::info!(job_id, table, db, index, state = new.state.name(), stage = %new.status.stage, "ISCP job created");
        return;
    };
    if old.state != new.state {
        let reason = match new.state {
            JobState::Canceling => {
                "dropped (DROP INDEX / TABLE / DATABASE or an ALTER)".to_string()
            }
            JobState::Canceled => {
                "drop finalized: consumer drained, hidden table purged".to_string()
            }
            JobState::Error => format!(
                "permanent error {}: {}",
                new.status.error_code, new.status.error_msg
            ),
            JobState::Completed if old.state == JobState::Error => "error cleared".to_string(),
            _ => "unit committed".to_string(),
        };
        tracing::info!(
            job_id, table, db, index,
            from = old.state.name(), to = new.state.name(), %reason,
            "ISCP job state changed"
        );
    }
    if old.status.stage != new.status.stage {
        tracing::info!(job_id, table, db, index, from = %old.status.stage, to = %new.status.stage, "ISCP job stage changed (initial build finished)");
    }
    if new.status.retries > old.status.retries {
        tracing::warn!(
            job_id, table, db, index, retries = new.status.retries, code = new.status.error_code,
            error = %new.status.error_msg, "ISCP unit failed; it will be retried"
        );
    }
}

/// Delete Canceled rows whose drop_at is older than `retention` (the log's
/// GC, as MatrixOne's `GCTTL`). Returns the number removed.
pub fn gc_canceled(txn: &mut dyn Transaction, retention: std::time::Duration) -> SqlResult<u64> {
    let cutoff = now_us() - retention.as_micros().min(i64::MAX as u128) as i64;
    let mut n = 0;
    for j in read_all(txn)? {
        if j.state == JobState::Canceled && j.drop_at.is_some_and(|d| d < cutoff) {
            txn.delete(ISCP_LOG, &row_key(&j.key))?;
            n += 1;
        }
    }
    Ok(n)
}

/// Commit ts of the newest change of `table` in `(after, upto]` (or `after`
/// when there is none): the lag numerator.
pub fn newest_change_ts(
    storage: &dyn tributary_storage::Storage,
    table: u64,
    after: Ts,
    upto: Ts,
) -> SqlResult<Ts> {
    if upto <= after {
        return Ok(after);
    }
    // Walk forward in bounded batches; the log is small when lag is small.
    let mut newest = after;
    let mut resume = None;
    loop {
        let b = match storage.changes(table, after, upto, resume, 4096) {
            Ok(b) => b,
            Err(_) => return Ok(upto),
        };
        if let Some(c) = b.changes.last() {
            newest = c.commit_ts;
        }
        match b.resume {
            Some(r) => resume = Some(r),
            None => break,
        }
    }
    Ok(newest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnDef, TableDef};
    use crate::types::DataType;
    use tributary_storage::{EmbeddedStorage, Storage, TxnOptions};

    fn setup() -> (tempfile::TempDir, std::sync::Arc<EmbeddedStorage>, JobKey) {
        let dir = tempfile::tempdir().unwrap();
        let st = EmbeddedStorage::open(dir.path()).unwrap();
        let t = TableDef {
            id: 1000,
            db: "d".into(),
            name: "t".into(),
            columns: vec![ColumnDef {
                name: "v".into(),
                ty: DataType::VecF32(2),
                nullable: true,
                default: None,
                auto_increment: false,
                collation: Default::default(),
            }],
            pk: vec![],
            indexes: vec![],
            comment: String::new(),
            view: None,
            collation: Default::default(),
            foreign_keys: Vec::new(),
            referenced_by: Vec::new(),
            checks: Vec::new(),
        };
        let ix = IndexDef {
            name: "i".into(),
            storage_id: 1001,
            kind: IndexKind::BTree { unique: false },
            columns: vec![0],
            is_async: true,
            job_id: Some(7),
        };
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        let key = register_job(txn.as_mut(), &t, &ix).unwrap();
        txn.commit().unwrap();
        (dir, st, key)
    }

    fn update(
        st: &EmbeddedStorage,
        key: &JobKey,
        expected: u64,
        f: impl FnOnce(&mut JobRow),
    ) -> Result<JobRow, GuardRefusal> {
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        let r = guarded_update(txn.as_mut(), key, expected, f).unwrap();
        txn.commit().unwrap();
        r
    }

    #[test]
    fn progress_writes_are_compare_and_set_on_iterations() {
        let (_d, st, key) = setup();
        let j = update(&st, &key, 0, |j| j.watermark = 10).unwrap();
        assert_eq!((j.status.iterations, j.watermark), (1, 10));
        // A stale writer that still expects iteration 0 loses.
        let r = update(&st, &key, 0, |j| j.watermark = 99);
        assert_eq!(
            r.unwrap_err(),
            GuardRefusal::CasLost {
                expected: 0,
                found: 1
            }
        );
        let j = update(&st, &key, 1, |j| {
            j.watermark = 20;
            j.status.stage = Stage::Incremental;
        })
        .unwrap();
        assert_eq!((j.watermark, j.status.stage), (20, Stage::Incremental));
    }

    /// A write moving the watermark or the stage back is a caller's bug:
    /// asserted in debug builds; release builds keep the old values.
    #[test]
    fn watermark_and_stage_never_move_back() {
        let (_d, st, key) = setup();
        let j = update(&st, &key, 0, |j| {
            j.watermark = 20;
            j.status.stage = Stage::Incremental;
        })
        .unwrap();
        let back = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            update(&st, &key, j.status.iterations, |j| {
                j.watermark = 5;
                j.status.stage = Stage::Init;
            })
        }));
        if cfg!(debug_assertions) {
            assert!(back.is_err(), "the regression was not asserted");
        } else {
            let j2 = back.unwrap().unwrap();
            assert_eq!((j2.watermark, j2.status.stage), (20, Stage::Incremental));
        }
    }

    #[test]
    fn stage_is_stored_by_name() {
        let st = JobStatus {
            stage: Stage::Incremental,
            ..Default::default()
        };
        let json = serde_json::to_string(&st).unwrap();
        assert!(json.contains(r#""stage":"incremental""#), "{json}");
        let back: JobStatus = serde_json::from_str(&json.replace("incremental", "init")).unwrap();
        assert_eq!(back.stage, Stage::Init);
        assert!(Stage::Init < Stage::Incremental);
    }

    #[test]
    fn no_write_overwrites_error_canceling_or_canceled() {
        let (_d, st, key) = setup();
        // Permanent error → Error; later progress is refused.
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        write_error(txn.as_mut(), &key, 0, UnitError::IndexRefused, "bad vector")
            .unwrap()
            .unwrap();
        txn.commit().unwrap();
        let r = update(&st, &key, 1, |j| j.watermark = 50);
        assert_eq!(r.unwrap_err(), GuardRefusal::Protected(JobState::Error));
        // DROP: Canceling with drop_at, still refused; then Canceled.
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        mark_canceling(txn.as_mut(), &key).unwrap();
        txn.commit().unwrap();
        let r = update(&st, &key, 1, |j| j.watermark = 50);
        assert_eq!(r.unwrap_err(), GuardRefusal::Protected(JobState::Canceling));
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        assert!(mark_canceled(txn.as_mut(), &key).unwrap());
        txn.commit().unwrap();
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        let j = read_job(txn.as_mut(), &key, false).unwrap().unwrap();
        assert_eq!(j.state, JobState::Canceled);
        assert!(j.drop_at.is_some());
        assert_eq!(j.status.error_code, 10_001);
        // Another generation of the same name is a different row.
        let other = JobKey {
            job_id: 8,
            ..key.clone()
        };
        assert!(read_job(txn.as_mut(), &other, false).unwrap().is_none());
    }

    #[test]
    fn state_moves_follow_the_table() {
        use JobState::*;
        let all = [
            Invalid, Pending, Running, Completed, Error, Canceled, Canceling,
        ];
        for a in all {
            assert!(a.can_move_to(a), "{a:?} stays");
            // Nothing leaves Canceled; Canceling only ends Canceled.
            assert!(!Canceled.can_move_to(a) || a == Canceled);
            assert_eq!(Canceling.can_move_to(a), matches!(a, Canceling | Canceled));
            // Everything may be dropped but a dropped job.
            assert_eq!(a.can_move_to(Canceling), !matches!(a, Canceled | Invalid));
        }
        assert!(
            !Error.can_move_to(Completed),
            "an Error job does not resume"
        );
        assert!(Completed.can_move_to(Error));
    }

    #[test]
    fn unit_errors_are_permanent_by_kind() {
        let all = [
            UnitError::Injected,
            UnitError::LockConflict,
            UnitError::Temporary,
            UnitError::IndexRefused,
            UnitError::Corrupt,
        ];
        let codes: std::collections::HashSet<u32> = all.iter().map(|e| e.code()).collect();
        assert_eq!(codes.len(), all.len());
        for e in all {
            assert_eq!(e.is_permanent(), e.code() >= 10_000, "{e:?}");
        }
    }

    #[test]
    fn temporary_errors_keep_the_job_schedulable() {
        let (_d, st, key) = setup();
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        let j = write_error(txn.as_mut(), &key, 0, UnitError::Injected, "changesNext")
            .unwrap()
            .unwrap();
        txn.commit().unwrap();
        assert_eq!(j.state, JobState::Completed);
        assert_eq!((j.status.error_code, j.status.retries), (1, 1));
    }

    #[test]
    fn log_tail_follows_the_change_log_and_forgets_canceled_rows() {
        let (_d, st, key) = setup();
        let mut tail = LogTail::new("test-tail");
        tail.refresh(st.as_ref()).unwrap();
        assert_eq!(tail.jobs().len(), 1);
        update(&st, &key, 0, |j| j.watermark = 42).unwrap();
        tail.refresh(st.as_ref()).unwrap();
        assert_eq!(
            tail.jobs()[0].watermark,
            42,
            "progress seen through the change log"
        );
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        mark_canceling(txn.as_mut(), &key).unwrap();
        txn.commit().unwrap();
        tail.refresh(st.as_ref()).unwrap();
        assert_eq!(tail.jobs()[0].state, JobState::Canceling);
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        mark_canceled(txn.as_mut(), &key).unwrap();
        txn.commit().unwrap();
        tail.refresh(st.as_ref()).unwrap();
        assert!(
            tail.jobs().is_empty(),
            "Canceled rows leave the runner's view"
        );
        // Retention GC removes the row itself once old enough.
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        assert_eq!(
            gc_canceled(txn.as_mut(), std::time::Duration::from_secs(3600)).unwrap(),
            0
        );
        assert_eq!(
            gc_canceled(txn.as_mut(), std::time::Duration::ZERO).unwrap(),
            1
        );
        txn.commit().unwrap();
        let mut txn = st.begin(TxnOptions::default()).unwrap();
        assert!(read_all(txn.as_mut()).unwrap().is_empty());
    }
}
