//! The catalog: databases, tables, columns, indexes and the system tables of
//! `mo_catalog`, stored as records in storage system tables so that DDL is
//! transactional like any other write.
//!
//! Owns: the layout of catalog records, the fixed ids of system tables, id
//! allocation for tables and index storage, and the rows of the virtual
//! system tables (`mo_database`, `mo_tables`, `mo_columns`, `mo_indexes`)
//! and of `information_schema` (its own module).
//! `mo_catalog.mo_iscp_log` is a real table whose rows the ISCP layer writes.
//!
//! Also owns the one writer of B-tree index entries (`entries`), which
//! DML, index builds and the ISCP consumer share.
//!
//! Never: executes SQL, or reads/writes user rows (that is `sql`), or decides
//! index maintenance (that is `sql`/`iscp`).

pub mod codec;
pub mod entries;
pub mod information_schema;
pub mod schema;
pub mod users;

use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;
use tributary_storage::{Storage, TableId, Transaction};

use crate::error::{code, SqlError, SqlResult};
use crate::types::{DataType, Value};
pub use schema::{ColumnDef, DatabaseDef, IndexDef, IndexKind, TableDef};

/// Storage table of database records (key: name).
pub const SYS_DATABASES: TableId = 1;
/// Storage table of table records (key: `db \0 name`).
pub const SYS_TABLES: TableId = 2;
/// Storage table of `mo_catalog.mo_iscp_log`.
pub const ISCP_LOG: TableId = 3;
/// Storage table of AUTO_INCREMENT counters (key: table id).
pub const SYS_AUTOINC: TableId = 4;
/// First id handed to user tables and index storage.
pub const FIRST_USER_ID: u64 = 1000;
/// The system database.
pub const SYSTEM_DB: &str = "mo_catalog";

/// Whether `name` is a system database (`mo_catalog`, or
/// `information_schema` in any case): never written by DDL or DML.
pub fn is_system_db(name: &str) -> bool {
    name == SYSTEM_DB || information_schema::is(name)
}

/// The virtual (computed) tables of `mo_catalog`.
pub const VIRTUAL_TABLES: [&str; 4] = ["mo_database", "mo_tables", "mo_columns", "mo_indexes"];

fn corrupt(what: &str, e: impl std::fmt::Display) -> SqlError {
    SqlError::internal(format!("corrupt catalog record ({what}): {e}"))
}

fn table_key(db: &str, name: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(db.len() + name.len() + 1);
    k.extend_from_slice(db.as_bytes());
    k.push(0);
    k.extend_from_slice(name.as_bytes());
    k
}

/// Allocates ids from the storage's durable sequences: hidden row ids in
/// blocks, so that a hidden row id does not cost a durable write per row;
/// object and job ids one at a time through a worker thread it owns, so
/// that a DDL waiting for its id can be interrupted.
///
/// A durable sequence write waits for the data file, which may be taking
/// a large transaction in front of it (a 1,000,000-row INSERT: over a
/// second) and cannot be interrupted. The worker makes that write; the
/// statement waits for the answer and for its interrupt at once — a KILL
/// (or `max_execution_time`) ends the wait at once, and the id the worker
/// allocates after it is never used (a gap: ids stay unique, across
/// crashes too, since each is durable before it is handed out).
pub struct IdAllocator {
    block: Mutex<(u64, u64)>,
    hits: AtomicU64,
    /// The durable-id worker (started by the first request) and its queue.
    worker: Mutex<Option<IdWorker>>,
}

/// A durable write for the worker to make (it answers its asker itself).
type IdJob = Box<dyn FnOnce(&dyn Storage) + Send>;

/// The thread that makes durable sequence writes for [`IdAllocator`].
struct IdWorker {
    jobs: std::sync::mpsc::Sender<IdJob>,
    thread: std::thread::JoinHandle<()>,
}

/// Row ids are handed out in blocks of this many per durable allocation.
pub const ROWID_BLOCK: u64 = 4096;

/// How often a statement waiting for a durable id looks at its interrupt.
const ID_WAIT_POLL: std::time::Duration = std::time::Duration::from_millis(2);

impl Default for IdAllocator {
    fn default() -> Self {
        IdAllocator {
            block: Mutex::new((0, 0)),
            hits: AtomicU64::new(0),
            worker: Mutex::new(None),
        }
    }
}

impl IdAllocator {
    /// Next hidden row id (unique for the life of the storage).
    pub fn next_rowid(&self, storage: &dyn Storage) -> SqlResult<u64> {
        self.hits.fetch_add(1, Ordering::Relaxed);
        let mut g = self.block.lock();
        if g.0 >= g.1 {
            let b = storage.next_id("rowid_block")?;
            g.0 = b * ROWID_BLOCK;
            g.1 = g.0 + ROWID_BLOCK;
        }
        let id = g.0;
        g.0 += 1;
        Ok(id)
    }

    /// A fresh table / index-storage id, for a statement under
    /// `interrupt`: 1317 (or 3024 past a deadline, as the statement's
    /// runner reports it) as soon as it fires, however long the data file
    /// keeps the durable write waiting.
    pub fn object_id(
        &self,
        storage: &Arc<dyn Storage>,
        interrupt: &tributary_storage::Interrupt,
    ) -> SqlResult<u64> {
        Ok(FIRST_USER_ID + self.durable_id(storage, "object", interrupt)?)
    }

    /// The next id of durable sequence `sequence`, made by the worker
    /// while this thread waits for it or for `interrupt`.
    pub fn durable_id(
        &self,
        storage: &Arc<dyn Storage>,
        sequence: &'static str,
        interrupt: &tributary_storage::Interrupt,
    ) -> SqlResult<u64> {
        self.durably(storage, interrupt, move |s| {
            s.next_id(sequence).map_err(SqlError::from)
        })
    }

    /// Run `f` — a durable write that is harmless if nobody waits for its
    /// outcome any more (an id allocation, the change-log mode of a table
    /// id not yet used) — on the worker, while this thread waits for its
    /// outcome or for `interrupt`, whichever comes first.
    pub fn durably<T: Send + 'static>(
        &self,
        storage: &Arc<dyn Storage>,
        interrupt: &tributary_storage::Interrupt,
        f: impl FnOnce(&dyn Storage) -> SqlResult<T> + Send + 'static,
    ) -> SqlResult<T> {
        use std::sync::mpsc::RecvTimeoutError;
        interrupt.check()?;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job: IdJob = Box::new(move |s: &dyn Storage| {
            // The asker may have gone (interrupted): an id is then a gap.
            let _ = tx.send(f(s));
        });
        {
            let mut w = self.worker.lock();
            let worker = match w.as_mut() {
                Some(worker) => worker,
                None => w.insert(IdWorker::start(storage.clone())?),
            };
            if worker.jobs.send(job).is_err() {
                return Err(SqlError::internal("the durable-id worker has stopped"));
            }
        }
        loop {
            match rx.recv_timeout(ID_WAIT_POLL) {
                Ok(r) => return r,
                Err(RecvTimeoutError::Timeout) => interrupt.check()?,
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(SqlError::internal("the durable-id worker has stopped"))
                }
            }
        }
    }
}

impl IdWorker {
    fn start(storage: Arc<dyn Storage>) -> SqlResult<Self> {
        let (jobs, queue) = std::sync::mpsc::channel::<IdJob>();
        let thread = std::thread::Builder::new()
            .name("durable-ids".into())
            .spawn(move || {
                for job in queue {
                    job(storage.as_ref());
                }
            })
            .map_err(|e| SqlError::internal(format!("starting the durable-id worker: {e}")))?;
        Ok(IdWorker { jobs, thread })
    }
}

impl Drop for IdAllocator {
    fn drop(&mut self) {
        if let Some(w) = self.worker.get_mut().take() {
            // Closing the queue ends the worker after its last request.
            drop(w.jobs);
            if w.thread.join().is_err() {
                tracing::error!("the durable-id worker panicked");
            }
        }
    }
}

/// A fresh table / index-storage id (uninterruptible; a statement uses
/// [`IdAllocator::object_id`]).
pub fn alloc_object_id(storage: &dyn Storage) -> SqlResult<u64> {
    Ok(FIRST_USER_ID + storage.next_id("object")?)
}

/// The database record, if it exists (`mo_catalog` always exists).
pub fn get_database(txn: &mut dyn Transaction, name: &str) -> SqlResult<Option<DatabaseDef>> {
    if information_schema::is(name) {
        return Ok(Some(DatabaseDef {
            id: 1,
            name: information_schema::DB.into(),
        }));
    }
    if name == SYSTEM_DB {
        return Ok(Some(DatabaseDef {
            id: 0,
            name: SYSTEM_DB.into(),
        }));
    }
    match txn.get(SYS_DATABASES, name.as_bytes(), false)? {
        None => Ok(None),
        Some(b) => serde_json::from_slice(&b)
            .map(Some)
            .map_err(|e| corrupt(name, e)),
    }
}

/// The database or error 1049.
pub fn require_database(txn: &mut dyn Transaction, name: &str) -> SqlResult<DatabaseDef> {
    get_database(txn, name)?
        .ok_or_else(|| SqlError::new(code::BAD_DB, format!("Unknown database '{name}'")))
}

/// All databases: `information_schema`, `mo_catalog`, then by name.
pub fn list_databases(txn: &mut dyn Transaction) -> SqlResult<Vec<DatabaseDef>> {
    let mut out = vec![
        DatabaseDef {
            id: 1,
            name: information_schema::DB.into(),
        },
        DatabaseDef {
            id: 0,
            name: SYSTEM_DB.into(),
        },
    ];
    for (k, v) in txn.scan(
        SYS_DATABASES,
        Bound::Unbounded,
        Bound::Unbounded,
        usize::MAX,
    )? {
        let d: DatabaseDef =
            serde_json::from_slice(&v).map_err(|e| corrupt(&String::from_utf8_lossy(&k), e))?;
        out.push(d);
    }
    Ok(out)
}

/// Write a database record.
pub fn put_database(txn: &mut dyn Transaction, d: &DatabaseDef) -> SqlResult<()> {
    let b = serde_json::to_vec(d).map_err(|e| SqlError::internal(e.to_string()))?;
    txn.put(SYS_DATABASES, d.name.as_bytes(), b)?;
    Ok(())
}

/// Remove a database record.
pub fn delete_database(txn: &mut dyn Transaction, name: &str) -> SqlResult<()> {
    txn.delete(SYS_DATABASES, name.as_bytes())?;
    Ok(())
}

/// The table definition, if it exists. `lock` takes the record's row lock
/// (DDL does, so concurrent DDL on one table serialises).
pub fn get_table(
    txn: &mut dyn Transaction,
    db: &str,
    name: &str,
    lock: bool,
) -> SqlResult<Option<TableDef>> {
    if db == SYSTEM_DB {
        return Ok(system_table_def(name));
    }
    if information_schema::is(db) {
        return Ok(information_schema::table_def(name));
    }
    match txn.get(SYS_TABLES, &table_key(db, name), lock)? {
        None => Ok(None),
        Some(b) => decode_table(name, &b).map(Some),
    }
}

/// How many decoded table records a thread keeps: a statement on a child
/// table reads its parent's record too (foreign keys), and one entry
/// would decode both again on every statement.
const DECODED_KEPT: usize = 4;

thread_local! {
    /// The last table records this thread decoded, with their bytes, most
    /// recent first: a connection's statements read the same few records
    /// again and again, and decoding the JSON cost more than reading it.
    static LAST_TABLES: std::cell::RefCell<Vec<(Vec<u8>, Arc<TableDef>)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Decode a table record (`name` for the error). The bytes were read at
/// the caller's snapshot; the cache is keyed by the bytes themselves, so
/// it returns exactly what decoding them would.
fn decode_table(name: &str, b: &[u8]) -> SqlResult<TableDef> {
    decode_table_shared(name, b).map(|t| (*t).clone())
}

/// [`decode_table`], shared with the cache instead of copied (a
/// definition's names and columns were ~20 string copies per statement).
fn decode_table_shared(name: &str, b: &[u8]) -> SqlResult<Arc<TableDef>> {
    let hit = LAST_TABLES.with_borrow_mut(|c| {
        let i = c.iter().position(|(bytes, _)| bytes.as_slice() == b)?;
        let e = c.remove(i);
        let t = e.1.clone();
        c.insert(0, e);
        Some(t)
    });
    if let Some(t) = hit {
        return Ok(t);
    }
    let t: Arc<TableDef> = Arc::new(serde_json::from_slice(b).map_err(|e| corrupt(name, e))?);
    LAST_TABLES.with_borrow_mut(|c| {
        c.insert(0, (b.to_vec(), t.clone()));
        c.truncate(DECODED_KEPT);
    });
    Ok(t)
}

/// The table or error 1146.
pub fn require_table(
    txn: &mut dyn Transaction,
    db: &str,
    name: &str,
    lock: bool,
) -> SqlResult<TableDef> {
    get_table(txn, db, name, lock)?.ok_or_else(|| no_such_table(db, name))
}

/// The table, read for a statement that writes it: takes an
/// **intention-exclusive** lock on its catalog record (a metadata lock, as
/// MySQL's MDL) and reads the latest committed definition. Writers of one
/// table therefore run concurrently, while DDL on it — which locks the
/// record exclusively — and `LOCK TABLES` — which locks it shared — wait
/// for every open transaction that wrote the table, and later writers
/// wait for them. So a writer can never miss an index that a concurrent
/// CREATE INDEX builds, nor write one that a DROP has removed, nor write
/// a table another session holds with LOCK TABLES. `lock = false` skips
/// the lock: for a session whose own LOCK TABLES … WRITE (held by another
/// of its transactions) already excludes everyone else. Error 1146 when
/// missing.
pub fn require_table_for_write(
    txn: &mut dyn Transaction,
    db: &str,
    name: &str,
    lock: bool,
) -> SqlResult<Arc<TableDef>> {
    if db == SYSTEM_DB {
        return system_table_def(name)
            .map(Arc::new)
            .ok_or_else(|| no_such_table(db, name));
    }
    if information_schema::is(db) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!("Access denied: {db}.{name} is a system view and is read-only"),
        ));
    }
    let key = table_key(db, name);
    let bytes = if lock {
        txn.get_for_intent(SYS_TABLES, &key)?
    } else {
        txn.get(SYS_TABLES, &key, false)?
    };
    let t = match bytes {
        None => return Err(no_such_table(db, name)),
        Some(b) => decode_table_shared(name, &b)?,
    };
    if t.view.is_some() {
        return Err(SqlError::unsupported(format!(
            "writing through a view ({db}.{name})"
        )));
    }
    Ok(t)
}

/// The table, locked for `LOCK TABLES`: a **shared** lock on its catalog
/// record, which excludes every writer of the table (they take
/// intention-exclusive locks) and DDL; and a lock on the table's LOCK
/// TABLES row beside it — shared for READ, exclusive for `write` — so a
/// WRITE lock excludes every other LOCK TABLES of the table and READ
/// locks share. Error 1146 when missing.
pub fn lock_table(
    txn: &mut dyn Transaction,
    db: &str,
    name: &str,
    write: bool,
) -> SqlResult<TableDef> {
    if is_system_db(db) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!("Access denied: cannot lock {db}.{name}"),
        ));
    }
    let key = table_key(db, name);
    let t = match txn.get_for_share(SYS_TABLES, &key)? {
        None => return Err(no_such_table(db, name)),
        Some(b) => serde_json::from_slice(&b).map_err(|e| corrupt(name, e))?,
    };
    // The row is never written: only locked. (`table_key` ends every
    // record key with the name, so `key ++ [0]` names no table.)
    let mut lock_row = key;
    lock_row.push(0);
    if write {
        txn.lock(SYS_TABLES, &lock_row)?;
    } else {
        txn.get_for_share(SYS_TABLES, &lock_row)?;
    }
    Ok(t)
}

/// Error 1146 for `db.name`.
pub fn no_such_table(db: &str, name: &str) -> SqlError {
    SqlError::new(
        code::NO_SUCH_TABLE,
        format!("Table '{db}.{name}' doesn't exist"),
    )
}

/// Tables of a database, by name.
pub fn list_tables(txn: &mut dyn Transaction, db: &str) -> SqlResult<Vec<TableDef>> {
    if db == SYSTEM_DB {
        let mut v: Vec<TableDef> = VIRTUAL_TABLES
            .iter()
            .chain(std::iter::once(&"mo_iscp_log"))
            .filter_map(|n| system_table_def(n))
            .collect();
        v.sort_by(|a, b| a.name.cmp(&b.name));
        return Ok(v);
    }
    if information_schema::is(db) {
        return Ok(information_schema::TABLES
            .iter()
            .filter_map(|n| information_schema::table_def(n))
            .collect());
    }
    let mut start = db.as_bytes().to_vec();
    start.push(0);
    let mut end = db.as_bytes().to_vec();
    end.push(1);
    let mut out = Vec::new();
    for (k, v) in txn.scan(
        SYS_TABLES,
        Bound::Included(start),
        Bound::Excluded(end),
        usize::MAX,
    )? {
        let t: TableDef =
            serde_json::from_slice(&v).map_err(|e| corrupt(&String::from_utf8_lossy(&k), e))?;
        out.push(t);
    }
    Ok(out)
}

/// Every user table of every database.
pub fn list_all_tables(txn: &mut dyn Transaction) -> SqlResult<Vec<TableDef>> {
    let mut out = Vec::new();
    for (k, v) in txn.scan(SYS_TABLES, Bound::Unbounded, Bound::Unbounded, usize::MAX)? {
        let t: TableDef =
            serde_json::from_slice(&v).map_err(|e| corrupt(&String::from_utf8_lossy(&k), e))?;
        out.push(t);
    }
    Ok(out)
}

/// Create or replace a table record.
pub fn put_table(txn: &mut dyn Transaction, t: &TableDef) -> SqlResult<()> {
    let b = serde_json::to_vec(t).map_err(|e| SqlError::internal(e.to_string()))?;
    txn.put(SYS_TABLES, &table_key(&t.db, &t.name), b)?;
    Ok(())
}

/// Remove a table record.
pub fn delete_table(txn: &mut dyn Transaction, db: &str, name: &str) -> SqlResult<()> {
    txn.delete(SYS_TABLES, &table_key(db, name))?;
    Ok(())
}

/// Find a table by its id (scan; used by ISCP and recovery, not hot paths).
pub fn table_by_id(txn: &mut dyn Transaction, id: u64) -> SqlResult<Option<TableDef>> {
    if id == ISCP_LOG {
        return Ok(system_table_def("mo_iscp_log"));
    }
    Ok(list_all_tables(txn)?.into_iter().find(|t| t.id == id))
}

fn col(name: &str, ty: DataType, nullable: bool) -> ColumnDef {
    ColumnDef {
        name: name.into(),
        ty,
        nullable,
        default: None,
        auto_increment: false,
        collation: Default::default(),
    }
}

/// Definition of a `mo_catalog` table.
pub fn system_table_def(name: &str) -> Option<TableDef> {
    use DataType::*;
    let (id, columns, pk): (u64, Vec<ColumnDef>, Vec<usize>) = match name {
        "mo_database" => (
            10,
            vec![
                col("dat_id", BigInt, false),
                col("datname", Varchar(256), false),
            ],
            vec![],
        ),
        "mo_tables" => (
            11,
            vec![
                col("rel_id", BigInt, false),
                col("reldatabase", Varchar(256), false),
                col("relname", Varchar(256), false),
                col("relkind", Varchar(16), false),
            ],
            vec![],
        ),
        "mo_columns" => (
            12,
            vec![
                col("att_relname_id", BigInt, false),
                col("att_database", Varchar(256), false),
                col("att_relname", Varchar(256), false),
                col("attname", Varchar(256), false),
                col("atttyp", Varchar(64), false),
                col("attnum", Int, false),
                col("att_nullable", Bool, false),
                col("att_default", Text, true),
                col("att_constraint_type", Varchar(8), false),
            ],
            vec![],
        ),
        "mo_indexes" => (
            13,
            vec![
                col("table_id", BigInt, false),
                col("database_name", Varchar(256), false),
                col("table_name", Varchar(256), false),
                col("name", Varchar(256), false),
                col("type", Varchar(16), false),
                col("algo", Varchar(16), false),
                col("column_name", Varchar(1024), false),
                col("is_async", Bool, false),
                col("algo_params", Text, false),
                col("job_id", BigInt, true),
                col("index_table_id", BigInt, false),
            ],
            vec![],
        ),
        "mo_iscp_log" => (
            ISCP_LOG,
            vec![
                col("account_id", Int, false),
                col("table_id", BigInt, false),
                col("job_name", Varchar(256), false),
                col("job_id", BigInt, false),
                col("job_spec", Text, false),
                col("job_state", Int, false),
                col("watermark", BigInt, false),
                col("job_status", Text, false),
                col("create_at", DateTime, false),
                col("drop_at", DateTime, true),
            ],
            vec![0, 1, 2, 3],
        ),
        _ => return None,
    };
    Some(TableDef {
        id,
        db: SYSTEM_DB.into(),
        name: name.into(),
        columns,
        pk,
        indexes: vec![],
        comment: String::new(),
        view: None,
        collation: Default::default(),
        foreign_keys: Vec::new(),
        referenced_by: Vec::new(),
        checks: Vec::new(),
    })
}

/// Rows of a virtual table of `db` (`mo_catalog`'s computed tables and
/// every `information_schema` table), or `None` if it is not one.
pub fn virtual_rows(
    txn: &mut dyn Transaction,
    db: &str,
    name: &str,
) -> SqlResult<Option<Vec<Vec<Value>>>> {
    if information_schema::is(db) {
        return information_schema::rows(txn, name);
    }
    if db != SYSTEM_DB {
        return Ok(None);
    }
    let rows = match name {
        "mo_database" => list_databases(txn)?
            .into_iter()
            .map(|d| vec![Value::Int(d.id as i64), Value::Text(d.name)])
            .collect(),
        "mo_tables" => {
            let mut rows = Vec::new();
            for d in list_databases(txn)? {
                for t in list_tables(txn, &d.name)? {
                    rows.push(vec![
                        Value::Int(t.id as i64),
                        Value::Text(t.db.clone()),
                        Value::Text(t.name.clone()),
                        Value::Text(if d.name == SYSTEM_DB { "v" } else { "r" }.into()),
                    ]);
                }
            }
            rows
        }
        "mo_columns" => {
            let mut rows = Vec::new();
            for d in list_databases(txn)? {
                for t in list_tables(txn, &d.name)? {
                    for (i, c) in t.columns.iter().enumerate() {
                        rows.push(vec![
                            Value::Int(t.id as i64),
                            Value::Text(t.db.clone()),
                            Value::Text(t.name.clone()),
                            Value::Text(c.name.clone()),
                            Value::Text(c.ty.sql_name()),
                            Value::Int(i as i64 + 1),
                            Value::Bool(c.nullable),
                            c.default
                                .as_ref()
                                .map(|v| Value::Text(v.to_string()))
                                .unwrap_or(Value::Null),
                            Value::Text(if t.pk.contains(&i) { "p" } else { "n" }.into()),
                        ]);
                    }
                }
            }
            rows
        }
        "mo_indexes" => {
            let mut rows = Vec::new();
            for t in list_all_tables(txn)? {
                for ix in &t.indexes {
                    let cols: Vec<String> = ix
                        .columns
                        .iter()
                        .filter_map(|&c| t.columns.get(c).map(|c| c.name.clone()))
                        .collect();
                    let (ty, params) = match &ix.kind {
                        IndexKind::BTree { unique: true } => ("UNIQUE", "{}".to_string()),
                        IndexKind::BTree { unique: false } => ("MULTIPLE", "{}".to_string()),
                        IndexKind::Hnsw {
                            op_type,
                            m,
                            ef_construction,
                            ef_search,
                        } => (
                            "MULTIPLE",
                            serde_json::json!({"op_type": op_type, "m": m,
                                "ef_construction": ef_construction, "ef_search": ef_search,
                                "async": ix.is_async})
                            .to_string(),
                        ),
                        IndexKind::FullText { parser } => (
                            "MULTIPLE",
                            serde_json::json!({"parser": parser, "async": ix.is_async}).to_string(),
                        ),
                    };
                    rows.push(vec![
                        Value::Int(t.id as i64),
                        Value::Text(t.db.clone()),
                        Value::Text(t.name.clone()),
                        Value::Text(ix.name.clone()),
                        Value::Text(ty.into()),
                        Value::Text(ix.kind.algo().into()),
                        Value::Text(cols.join(",")),
                        Value::Bool(ix.is_async),
                        Value::Text(params),
                        ix.job_id
                            .map(|j| Value::Int(j as i64))
                            .unwrap_or(Value::Null),
                        Value::Int(ix.storage_id as i64),
                    ]);
                }
            }
            rows
        }
        _ => return Ok(None),
    };
    Ok(Some(rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The decode cache answers by the bytes: a changed record (another
    /// version of the same table) decodes anew, a repeated one the same.
    #[test]
    fn the_decode_cache_follows_the_bytes() {
        let mut t = system_table_def("mo_iscp_log").unwrap();
        let a = serde_json::to_vec(&t).unwrap();
        t.comment = "changed".into();
        let b = serde_json::to_vec(&t).unwrap();
        for _ in 0..2 {
            assert_eq!(decode_table("x", &a).unwrap().comment, "");
            assert_eq!(decode_table("x", &b).unwrap(), t);
            assert_eq!(decode_table("x", &b).unwrap(), t);
        }
        assert!(decode_table("x", b"{").is_err());
    }

    /// A child's and its parent's records read in turn are both kept (the
    /// same decoded copy comes back), and the cache stays bounded.
    #[test]
    fn the_decode_cache_keeps_a_few_records() {
        let records: Vec<Vec<u8>> = (0..=DECODED_KEPT)
            .map(|i| {
                let mut t = system_table_def("mo_iscp_log").unwrap();
                t.comment = format!("t{i}");
                serde_json::to_vec(&t).unwrap()
            })
            .collect();
        let child = decode_table_shared("c", &records[0]).unwrap();
        let parent = decode_table_shared("p", &records[1]).unwrap();
        for _ in 0..3 {
            assert!(Arc::ptr_eq(
                &child,
                &decode_table_shared("c", &records[0]).unwrap()
            ));
            assert!(Arc::ptr_eq(
                &parent,
                &decode_table_shared("p", &records[1]).unwrap()
            ));
        }
        for r in &records {
            decode_table_shared("x", r).unwrap();
        }
        assert_eq!(LAST_TABLES.with_borrow(Vec::len), DECODED_KEPT);
        // The oldest fell out: decoded again, a new copy.
        assert!(!Arc::ptr_eq(
            &child,
            &decode_table_shared("c", &records[0]).unwrap()
        ));
    }

    #[test]
    fn system_tables_are_defined() {
        for n in VIRTUAL_TABLES {
            assert!(system_table_def(n).is_some(), "{n}");
        }
        let log = system_table_def("mo_iscp_log").unwrap();
        assert_eq!(log.id, ISCP_LOG);
        assert_eq!(log.pk, vec![0, 1, 2, 3]);
        assert!(system_table_def("nope").is_none());
    }
}
