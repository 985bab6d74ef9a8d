//! The SQL layer: parse → choose an access path → execute, per session.
//!
//! Owns statement semantics (autocommit, explicit transactions, statement
//! atomicity through savepoints, implicit commit before DDL), result shapes
//! and the mapping of every lower-layer error to a MySQL code (via
//! [`crate::error`]). Never touches storage encodings directly: rows and keys
//! go through [`crate::catalog::codec`].
//!
//! Modules: [`parse`] (statement recognition), [`expr`] (expressions),
//! [`access`] (access paths), [`select`] (queries), [`dml`] (INSERT, UPDATE,
//! DELETE and synchronous index maintenance), [`ddl`] (CREATE/DROP), [`show`]
//! (SHOW, DESCRIBE, EXPLAIN output), [`host`] (session functions, fault
//! injection control), [`budget`] (the running statement's interrupt
//! check and memory budget).

pub mod access;
pub mod alter;
pub mod budget;
pub mod check;
pub mod ddl;
pub mod dml;
pub mod exec;
pub mod expr;
pub mod fast_insert;
pub mod functions;
pub mod host;
pub mod params;
pub mod parse;
pub mod plan;
pub mod privileges;
pub mod process;
pub mod search;
pub mod show;
pub mod spill;
pub mod stack;
pub mod table_locks;
pub mod truncate;
pub mod vars;

use std::collections::BTreeMap;
use std::sync::Arc;

use tributary_storage::{Storage, Transaction, TxnOptions};

use crate::catalog::{IdAllocator, TableDef};
use crate::config::Config;
use crate::error::{code, SqlError, SqlResult};
use crate::iscp::Iscp;
use crate::types::{QueryResult, Value, Warning};
use parse::Stmt;

/// Shared engine state of one database (one per `Database`, i.e. per CN).
pub struct Engine {
    pub storage: Arc<dyn Storage>,
    pub config: Config,
    pub ids: IdAllocator,
    pub iscp: Arc<Iscp>,
    /// This node's sessions (`SHOW PROCESSLIST`, `KILL`).
    pub processes: process::ProcessList,
    /// `SET GLOBAL` values: what new sessions start with.
    pub globals: vars::Globals,
    /// The memory all running statements may hold (`sql::budget`).
    pub budget: Arc<budget::Global>,
    /// The node's spill counters (`sql::spill`).
    pub spill: Arc<spill::Stats>,
}

/// Per-connection state.
pub struct SessionState {
    pub db: Option<String>,
    pub txn: Option<Box<dyn Transaction>>,
    pub autocommit: bool,
    /// System variables this session set (lower-case names).
    pub vars: BTreeMap<String, String>,
    /// User variables (`@v`).
    pub user_vars: vars::UserVars,
    pub warnings: Vec<Warning>,
    pub user: String,
    /// The client host (an IP address, `localhost` when embedded).
    pub host: String,
    /// Whether the user holds SUPER (fault injection, `SET GLOBAL`):
    /// recomputed from the grants before every statement.
    pub privileged: bool,
    /// Whether the user holds PROCESS (sees every session in the process
    /// list): recomputed from the grants before every statement.
    pub sees_all: bool,
    pub last_insert_id: u64,
    /// The client asked for CLIENT_FOUND_ROWS: UPDATE reports the rows it
    /// matched, not only those it changed (and an upsert that changes
    /// nothing counts 1).
    pub found_rows: bool,
    /// SQL-level prepared statements (`PREPARE`): name (lower case) →
    /// text, counted and charged server-wide while it exists.
    pub prepared: std::collections::HashMap<String, (String, budget::PreparedCharge)>,
    /// Synchronous vector/full-text indexes written by the open transaction
    /// (or the running autocommit statement): after commit this CN's copy
    /// of each catches up with the write before the statement returns.
    pub sync_jobs: Vec<(crate::iscp::JobKey, crate::iscp::log::JobSpec)>,
    /// This session's entry in [`Engine::processes`]; its id is the
    /// connection id (`CONNECTION_ID()`, `KILL`'s argument).
    pub process: Arc<process::Process>,
    /// What interrupts the running statement (KILL, `max_execution_time`);
    /// handed to every transaction the statement uses. It has a token
    /// exactly while a statement runs (an EXECUTE's inner statement runs
    /// under the outer one's).
    pub interrupt: tributary_storage::Interrupt,
    /// The tables this session holds with `LOCK TABLES`.
    pub table_locks: table_locks::SessionLocks,
}

impl SessionState {
    /// Fresh session state for `user`, entered in the process list as
    /// `process`.
    pub fn new(user: &str, privileged: bool, process: Arc<process::Process>) -> Self {
        SessionState {
            db: None,
            txn: None,
            autocommit: true,
            vars: BTreeMap::new(),
            user_vars: BTreeMap::new(),
            warnings: Vec::new(),
            user: user.into(),
            host: "localhost".into(),
            privileged,
            sees_all: privileged,
            last_insert_id: 0,
            found_rows: false,
            prepared: std::collections::HashMap::new(),
            sync_jobs: Vec::new(),
            process,
            interrupt: tributary_storage::Interrupt::default(),
            table_locks: Default::default(),
        }
    }

    /// Current database or error 1046.
    pub fn require_db(&self) -> SqlResult<&str> {
        self.db
            .as_deref()
            .ok_or_else(|| SqlError::new(code::NO_DB, "No database selected"))
    }

    /// Resolve an optional database qualifier.
    pub fn db_for<'a>(&'a self, q: Option<&'a str>) -> SqlResult<&'a str> {
        match q {
            Some(d) => Ok(d),
            None => self.require_db(),
        }
    }

    /// Session variable as a count (0 when unset: the counts this is used
    /// for are stored in canonical form, and 0 is their default).
    pub fn var_u64(&self, name: &str) -> u64 {
        self.vars
            .get(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    }

    /// Whether `sql_mode` has `mode` (an upper-case name); unset is the
    /// default mode (see `vars`).
    pub fn sql_mode_has(&self, mode: &str) -> bool {
        let modes = self
            .vars
            .get("sql_mode")
            .map_or(vars::DEFAULT_SQL_MODE, String::as_str);
        modes.split(',').any(|m| m == mode)
    }

    /// Whether rows are written strictly (`STRICT_TRANS_TABLES`,
    /// `STRICT_ALL_TABLES`, or `TRADITIONAL`, which includes them): a
    /// conversion warning while a row is written fails the statement.
    pub fn strict_writes(&self) -> bool {
        ["STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "TRADITIONAL"]
            .iter()
            .any(|m| self.sql_mode_has(m))
    }

    /// Session variable as bool (`1`, `on`, `true`).
    pub fn var_bool(&self, name: &str) -> bool {
        self.vars
            .get(name)
            .map(|v| matches!(v.to_ascii_lowercase().as_str(), "1" | "on" | "true"))
            .unwrap_or(false)
    }
}

/// Execution context handed to statement implementations.
pub struct Ctx<'a> {
    pub engine: &'a Engine,
    pub txn: &'a mut dyn Transaction,
    pub session: &'a mut SessionState,
}

impl Engine {
    fn txn_options(&self, st: &SessionState) -> TxnOptions {
        let timeout = st
            .vars
            .get("innodb_lock_wait_timeout")
            .or_else(|| st.vars.get("lock_wait_timeout"))
            .and_then(|v| v.parse::<f64>().ok())
            .map(std::time::Duration::from_secs_f64)
            .unwrap_or(self.config.lock_wait_timeout);
        TxnOptions {
            lock_wait_timeout: timeout,
            read_only: false,
        }
    }

    /// Begin a storage transaction with the session's settings, under the
    /// running statement's interrupt.
    pub fn begin(&self, st: &SessionState) -> SqlResult<Box<dyn Transaction>> {
        let mut txn = self.storage.begin(self.txn_options(st))?;
        txn.set_interrupt(st.interrupt.clone());
        Ok(txn)
    }

    /// Execute one statement for a session. While it runs it is listed in
    /// [`Engine::processes`] and can be interrupted: by `KILL` (error
    /// 1317) or, for a SELECT, by `max_execution_time` (error 3024); either
    /// way the statement is rolled back like any failed statement.
    pub fn execute(&self, st: &mut SessionState, sql: &str) -> SqlResult<QueryResult> {
        if st.interrupt.token().is_some() {
            return self.execute_statement(st, sql);
        }
        if st.process.closed.is_cancelled() {
            return Err(SqlError::new(
                code::CONNECTION_KILLED,
                "Connection was killed",
            ));
        }
        let token = tokio_util::sync::CancellationToken::new();
        st.process.start(&self.processes, sql, token.clone());
        st.interrupt = tributary_storage::Interrupt::new(token, None);
        let started = std::time::Instant::now();
        let running = Arc::new(budget::Statement::new(
            self.statement_memory_limit(st),
            self.budget.clone(),
            st.interrupt.clone(),
        ));
        let scope = budget::enter(running.clone());
        let spilling = spill::enter(self.spill_settings(st));
        let r = self.execute_statement(st, sql);
        drop((spilling, scope));
        // What the statement freed goes back to the system (now, or after
        // the server's reply), not whenever this thread's allocator next
        // tidies up.
        budget::statement_ended(running.peak());
        self.log_if_slow(st, sql, started.elapsed(), r.as_ref().err());
        st.process.finish(st.db.as_deref());
        let interrupt = std::mem::take(&mut st.interrupt);
        r.map_err(|e| interrupt_error(e, &interrupt))
    }

    /// The memory budget of the session's next statement:
    /// `tributary_statement_memory_limit`, or the server's default when
    /// it is 0 (decision 023).
    fn statement_memory_limit(&self, st: &SessionState) -> u64 {
        match st.var_u64("tributary_statement_memory_limit") {
            0 => self.budget.statement_default(),
            n => n,
        }
    }

    /// Where and past how many bytes the session's next statement spills
    /// (decision 027).
    fn spill_settings(&self, st: &SessionState) -> Arc<spill::Settings> {
        let bytes = |name: &str| match st.vars.get(name).and_then(|v| v.parse().ok()) {
            Some(n) => n,
            None => spill::DEFAULT_BUDGET,
        };
        Arc::new(spill::Settings {
            dir: self.tmpdir(),
            sort_buffer: bytes("sort_buffer_size"),
            tmp_table: bytes("tmp_table_size").min(bytes("max_heap_table_size")),
            stats: self.spill.clone(),
        })
    }

    /// `@@tmpdir`: where spill files go.
    pub fn tmpdir(&self) -> std::path::PathBuf {
        self.config
            .tmpdir
            .clone()
            .unwrap_or_else(std::env::temp_dir)
    }

    /// The slow-statement log (`Config::slow_statement`).
    fn log_if_slow(
        &self,
        st: &SessionState,
        sql: &str,
        took: std::time::Duration,
        error: Option<&SqlError>,
    ) {
        if self.config.slow_statement.is_none_or(|t| took < t) {
            return;
        }
        let mut text = process::masked(sql);
        if text.len() > 1024 {
            let mut cut = 1024;
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            text.truncate(cut);
            text.push('…');
        }
        tracing::warn!(
            target: "tributary::slow",
            ms = took.as_millis() as u64,
            user = %st.user,
            db = st.db.as_deref().unwrap_or(""),
            error = error.map(|e| e.code),
            statement = %text,
            "slow statement"
        );
    }

    fn execute_statement(&self, st: &mut SessionState, sql: &str) -> SqlResult<QueryResult> {
        let (stmt, depth) = parse::parse_measured(sql)?;
        parse::with_stack_for(depth, || self.execute_parsed(st, sql, stmt))
    }

    fn execute_parsed(
        &self,
        st: &mut SessionState,
        sql: &str,
        stmt: Stmt,
    ) -> SqlResult<QueryResult> {
        if let Some(ms) = execution_time_limit(st, &stmt, sql) {
            st.interrupt = st
                .interrupt
                .clone()
                .with_deadline(std::time::Instant::now() + std::time::Duration::from_millis(ms));
            budget::set_interrupt(st.interrupt.clone());
        }
        let keep_warnings = matches!(stmt, Stmt::ShowWarnings);
        if !keep_warnings {
            st.warnings.clear();
        }
        // Every statement is checked against the user's grants as they
        // are now (so GRANT/REVOKE reach existing sessions).
        let filter = privileges::check(self, st, &stmt)?;
        let sink = crate::warnings::Collect::open();
        let mut res = self.dispatch(st, stmt)?;
        let raised = sink.finish();
        if !raised.is_empty() {
            res.warnings.extend(raised);
        }
        if let Some(f) = filter {
            f.apply(&mut res);
        }
        if !keep_warnings {
            st.warnings = res.warnings.clone();
        } else {
            res.warnings.clear();
        }
        Ok(res)
    }

    fn dispatch(&self, st: &mut SessionState, stmt: Stmt) -> SqlResult<QueryResult> {
        match stmt {
            Stmt::Prepare { name, source } => self.prepare(st, &name, source),
            Stmt::Execute { name, using } => self.execute_prepared(st, &name, &using),
            Stmt::Deallocate { name } => match st.prepared.remove(&name.to_ascii_lowercase()) {
                Some(_) => Ok(QueryResult::default()),
                None => Err(unknown_prepared(&name, "DEALLOCATE PREPARE")),
            },
            Stmt::LockTables(tables) => table_locks::lock(self, st, &tables),
            Stmt::UnlockTables => table_locks::unlock(self, st),
            Stmt::Begin { read_only } => {
                self.commit_open(st)?;
                // START TRANSACTION releases LOCK TABLES locks (MySQL).
                st.table_locks.release();
                let mut opts = self.txn_options(st);
                opts.read_only = read_only;
                st.txn = Some(self.storage.begin(opts)?);
                Ok(QueryResult::default())
            }
            Stmt::Commit => {
                self.commit_open(st)?;
                Ok(QueryResult::default())
            }
            Stmt::Rollback => {
                if let Some(t) = st.txn.take() {
                    t.rollback();
                }
                st.sync_jobs.clear();
                Ok(QueryResult::default())
            }
            Stmt::Use { db } => {
                let mut txn = self.begin(st)?;
                let found = crate::catalog::get_database(txn.as_mut(), &db)?;
                txn.rollback();
                if found.is_none() {
                    return Err(SqlError::new(
                        code::BAD_DB,
                        format!("Unknown database '{db}'"),
                    ));
                }
                st.db = Some(db);
                Ok(QueryResult::default())
            }
            Stmt::Set(assignments) => {
                for (target, value) in assignments {
                    self.set_one(st, target, value)?;
                }
                Ok(QueryResult::default())
            }
            Stmt::SetNames { charset } => {
                vars::set_names(st, &charset)?;
                Ok(QueryResult::default())
            }
            Stmt::ShowWarnings => Ok(show::warnings(st)),
            Stmt::ShowFiltered(inner, filter) => {
                let res = self.dispatch(st, *inner)?;
                show::filter(self, st, res, &filter)
            }
            Stmt::ShowProcesslist { full } => Ok(show::processlist(self, st, full)),
            Stmt::ShowStatus { like } => Ok(show::status(self, like.as_deref())),
            Stmt::Kill { id, connection } => {
                self.processes
                    .kill(id, &st.user, st.privileged, connection)?;
                Ok(QueryResult::default())
            }
            Stmt::ShowVariables { like, global } => {
                Ok(show::variables(self, st, like.as_deref(), global))
            }
            Stmt::AlterKeys { table } => {
                let t = self.table_after_commit(st, &table)?;
                Ok(QueryResult {
                    warnings: vec![Warning {
                        code: 1031,
                        message: format!(
                            "Table storage engine for '{}' doesn't have this option",
                            t.name
                        ),
                    }],
                    ..Default::default()
                })
            }
            Stmt::Reindex { name, table } => {
                let t = self.table_after_commit(st, &table)?;
                let ix = t.index(&name).ok_or_else(|| {
                    SqlError::new(
                        code::KEY_DOES_NOT_EXIST,
                        format!("Key '{name}' doesn't exist in table '{}'", t.name),
                    )
                })?;
                let spec = ddl::spec_of(&t, ix);
                // Rebuild = drop (fence, cancel, drain) then create (a new
                // ISCP job builds it in the background; queries meanwhile
                // evaluate exactly).
                ddl::execute(
                    self,
                    st,
                    Stmt::DropIndex {
                        name: spec.name.clone(),
                        table: spec.table.clone(),
                        if_exists: false,
                    },
                )?;
                self.commit_open(st)?;
                let r = ddl::execute(self, st, Stmt::CreateIndex(spec));
                self.commit_open(st)?;
                r
            }
            s if privileges::is_account_statement(&s) => {
                // Account statements commit the open transaction first and
                // run in their own, like DDL.
                self.commit_open(st)?;
                privileges::execute(self, st, s)
            }
            Stmt::Truncate { table } if st.table_locks.active() => {
                truncate::under_lock_tables(st, &table)
            }
            s if is_ddl(&s) && st.table_locks.active() => Err(SqlError::new(
                1192,
                "Can't execute the given command because you have active locked tables or an active transaction",
            )),
            s if is_ddl(&s) => {
                // DDL commits the open transaction first (as MySQL does) and
                // runs in its own transaction.
                self.commit_open(st)?;
                let r = ddl::execute(self, st, s);
                // …and commits itself even with autocommit off.
                self.commit_open(st)?;
                r
            }
            s if !touches_tables(&s) => {
                // MySQL opens no transaction for a statement that reads no
                // table (`SELECT @@autocommit` under autocommit=0).
                let (txn, r) = self.in_own_txn(st, |cx| run_in_txn(cx, s))?;
                txn.rollback();
                r
            }
            s => self.in_txn(st, |cx| run_in_txn(cx, s)),
        }
    }

    /// For an ALTER TABLE that is not DDL of its own (DISABLE KEYS, ALTER
    /// REINDEX): commit the open transaction, as MySQL's ALTER does, then
    /// read the table's definition (error 1146 if missing).
    fn table_after_commit(
        &self,
        st: &mut SessionState,
        table: &parse::Name,
    ) -> SqlResult<TableDef> {
        self.commit_open(st)?;
        let db = st.db_for(table.db.as_deref())?.to_string();
        let mut txn = self.begin(st)?;
        let t = crate::catalog::require_table(txn.as_mut(), &db, &table.name, false);
        txn.rollback();
        t
    }

    /// `PREPARE name FROM …`: the text is parsed now (a syntax error is
    /// reported here, as MySQL does) and kept for EXECUTE.
    fn prepare(
        &self,
        st: &mut SessionState,
        name: &str,
        source: parse::PrepareSource,
    ) -> SqlResult<QueryResult> {
        let text = match source {
            parse::PrepareSource::Text(t) => t,
            parse::PrepareSource::Var(v) => match st.user_vars.get(&v) {
                Some(Value::Text(t)) => t.clone(),
                Some(Value::Null) | None => {
                    return Err(SqlError::parse(format!(
                        "You have an error in your SQL syntax: @{v} is NULL"
                    )))
                }
                Some(other) => other.to_string(),
            },
        };
        let stmt = parse::parse(&text)?;
        if matches!(
            stmt,
            Stmt::Prepare { .. } | Stmt::Execute { .. } | Stmt::Deallocate { .. }
        ) {
            return Err(SqlError::new(
                1295,
                "This command is not supported in the prepared statement protocol yet",
            ));
        }
        let key = name.to_ascii_lowercase();
        // A statement of the same name is replaced: its slot is given
        // back first (MySQL deallocates it even if the new one fails).
        st.prepared.remove(&key);
        let mut text = text;
        text.shrink_to_fit();
        // Charged at 1.5× its size: the allocator's slack on large strings
        // (measured up to 1.45× resident per byte of 256 KiB texts).
        let charge = budget::PreparedCharge::new(
            &self.budget,
            text.capacity() + text.capacity() / 2 + key.len() + PREPARED_OVERHEAD,
            MAX_PREPARED,
        )?;
        st.prepared.insert(key, (text, charge));
        Ok(QueryResult::default())
    }

    /// `EXECUTE name USING @a, …`: the user variables' values are bound as
    /// literals into the prepared text, which then runs as a statement of
    /// its own (privileges checked as for any statement).
    fn execute_prepared(
        &self,
        st: &mut SessionState,
        name: &str,
        using: &[String],
    ) -> SqlResult<QueryResult> {
        let Some(text) = st
            .prepared
            .get(&name.to_ascii_lowercase())
            .map(|(t, _)| t.clone())
        else {
            return Err(unknown_prepared(name, "EXECUTE"));
        };
        if params::count_placeholders(&text) != using.len() {
            return Err(SqlError::new(1210, "Incorrect arguments to EXECUTE"));
        }
        let bound: Vec<params::Param> = using
            .iter()
            .map(
                |v| match st.user_vars.get(v).cloned().unwrap_or(Value::Null) {
                    Value::Null => params::Param::Null,
                    Value::Int(i) => params::Param::Int(i),
                    Value::Bool(b) => params::Param::Int(i64::from(b)),
                    Value::Float(f) => params::Param::Double(f),
                    Value::Decimal(d) => params::Param::Decimal(d),
                    d @ Value::DateTime(_) => params::Param::Temporal(d.to_string()),
                    other => params::Param::Bytes(other.to_string().into_bytes()),
                },
            )
            .collect();
        let sql = params::substitute(&text, &bound)
            .map_err(|e| SqlError::new(1210, format!("Incorrect arguments to EXECUTE: {e}")))?;
        self.execute(st, &sql)
    }

    /// One `SET` assignment (system or user variable).
    fn set_one(
        &self,
        st: &mut SessionState,
        target: parse::SetTarget,
        value: parse::SetValue,
    ) -> SqlResult<()> {
        use crate::types::Value;
        use parse::{SetTarget, SetValue};
        let v = match value {
            SetValue::Null => Value::Null,
            SetValue::Literal(s) => Value::Text(s),
            SetValue::System(n) => vars::system_value(&vars::SessionVars::of(self, st), &n)?,
            SetValue::User(n) => st.user_vars.get(&n).cloned().unwrap_or(Value::Null),
        };
        match target {
            SetTarget::User(n) => {
                // A literal keeps its number-ness: @a = 5 is the integer 5,
                // @a = 0.1 the DECIMAL 0.1.
                let v = match v {
                    Value::Text(s) => match s.parse::<i64>() {
                        Ok(i) if !s.starts_with('+') => Value::Int(i),
                        _ => match crate::decimal::Decimal::parse(&s) {
                            Some(d) if !s.starts_with('+') && s.contains('.') => Value::Decimal(d),
                            _ => Value::Text(s),
                        },
                    },
                    other => other,
                };
                st.user_vars.insert(n, v);
                Ok(())
            }
            SetTarget::System { name, global } => {
                let text = match v {
                    Value::Null => "NULL".to_string(),
                    other => other.to_text().unwrap_or_default(),
                };
                vars::set_system(self, st, &name, &text, global)
            }
        }
    }

    /// Commit the session's open transaction, if any.
    pub fn commit_open(&self, st: &mut SessionState) -> SqlResult<()> {
        if let Some(t) = st.txn.take() {
            let ts = t.commit()?;
            self.catch_up_sync(st, ts);
        }
        Ok(())
    }

    /// After a commit at `ts`: bring this CN's in-memory copy of every
    /// synchronous vector/full-text index the transaction wrote up to `ts`
    /// (the entries themselves were committed with the rows), so the
    /// writer's next query is served from memory that already has its
    /// write. A failure here loses nothing: the next search catches up (or
    /// reloads) from the committed entries.
    fn catch_up_sync(&self, st: &mut SessionState, ts: u64) {
        for (key, spec) in std::mem::take(&mut st.sync_jobs) {
            if let Err(e) = self.iscp.sync_catch_up(&key, &spec, ts, false) {
                tracing::warn!(index = %spec.index, error = %e, "synchronous index catch-up failed; the next search retries");
            }
        }
    }

    /// Run `f` in a new transaction of its own (not the session's); the
    /// caller commits or rolls it back.
    fn in_own_txn(
        &self,
        st: &mut SessionState,
        f: impl FnOnce(&mut Ctx<'_>) -> SqlResult<QueryResult>,
    ) -> SqlResult<(Box<dyn Transaction>, SqlResult<QueryResult>)> {
        let mut txn = self.begin(st)?;
        let r = self.with_ctx(st, txn.as_mut(), f);
        Ok((txn, r))
    }

    /// Run `f` with an execution context over `txn` (which the running
    /// statement's interrupt now governs).
    fn with_ctx(
        &self,
        st: &mut SessionState,
        txn: &mut dyn Transaction,
        f: impl FnOnce(&mut Ctx<'_>) -> SqlResult<QueryResult>,
    ) -> SqlResult<QueryResult> {
        txn.set_interrupt(st.interrupt.clone());
        f(&mut Ctx {
            engine: self,
            txn,
            session: st,
        })
    }

    /// Run `f` inside the session's transaction (explicit, or an implicit
    /// one when autocommit is off), or in a fresh autocommit transaction.
    /// A failed statement is rolled back to its savepoint; a deadlock rolls
    /// back the whole transaction, as InnoDB does.
    pub fn in_txn(
        &self,
        st: &mut SessionState,
        f: impl FnOnce(&mut Ctx<'_>) -> SqlResult<QueryResult>,
    ) -> SqlResult<QueryResult> {
        if st.txn.is_none() && !st.autocommit {
            st.txn = Some(self.begin(st)?);
        }
        if let Some(mut txn) = st.txn.take() {
            let sp = txn.savepoint();
            let r = self.with_ctx(st, txn.as_mut(), f);
            match r {
                Ok(v) => {
                    st.txn = Some(txn);
                    Ok(v)
                }
                Err(e) if e.code == code::LOCK_DEADLOCK => {
                    txn.rollback();
                    st.sync_jobs.clear();
                    Err(e)
                }
                Err(e) => {
                    txn.rollback_to(sp);
                    st.txn = Some(txn);
                    Err(e)
                }
            }
        } else {
            let (txn, r) = self.in_own_txn(st, f)?;
            match r {
                Ok(v) => {
                    let ts = txn.commit().map_err(SqlError::from)?;
                    self.catch_up_sync(st, ts);
                    Ok(v)
                }
                Err(e) => {
                    // After the reply when a KILL failed it (a large
                    // transaction takes long to free).
                    budget::roll_back(txn);
                    st.sync_jobs.clear();
                    Err(e)
                }
            }
        }
    }
}

/// The error a statement reports when its interrupt fired: 1317 after a
/// KILL, 3024 after its `max_execution_time` passed (whatever error the
/// interrupted code returned); any other error unchanged.
fn interrupt_error(e: SqlError, interrupt: &tributary_storage::Interrupt) -> SqlError {
    if interrupt.cancelled() {
        SqlError::new(code::QUERY_INTERRUPTED, "Query execution was interrupted")
    } else if interrupt.expired() && e.code == code::QUERY_INTERRUPTED {
        SqlError::new(
            code::QUERY_TIMEOUT,
            "Query execution was interrupted, maximum statement execution time exceeded",
        )
    } else {
        e
    }
}

/// The time limit (ms) of a SELECT: its `/*+ MAX_EXECUTION_TIME(n) */`
/// hint, else the session's `max_execution_time` (0: none). Other
/// statements have none, as in MySQL.
fn execution_time_limit(st: &SessionState, stmt: &Stmt, sql: &str) -> Option<u64> {
    let is_select =
        matches!(stmt, Stmt::Ast(a) if matches!(a.as_ref(), sqlparser::ast::Statement::Query(_)));
    if !is_select {
        return None;
    }
    let ms =
        parse::max_execution_time_hint(sql).unwrap_or_else(|| st.var_u64("max_execution_time"));
    (ms > 0).then_some(ms)
}

/// Most SQL-level prepared statements the node holds, all sessions
/// together (MySQL's `max_prepared_stmt_count` default).
const MAX_PREPARED: usize = 16_382;

/// Bytes a prepared statement holds beyond its name and text (map entry,
/// string headers), for its charge.
const PREPARED_OVERHEAD: usize = 96;

/// Error 1243 for a prepared statement name that is not known.
fn unknown_prepared(name: &str, what: &str) -> SqlError {
    SqlError::new(
        1243,
        format!("Unknown prepared statement handler ({name}) given to {what}"),
    )
}

/// Whether a statement may read or write a table (and so belongs to the
/// session's transaction): everything but a SELECT without FROM.
fn touches_tables(s: &Stmt) -> bool {
    use sqlparser::ast::{SetExpr, Statement as S};
    match s {
        Stmt::Ast(a) => match a.as_ref() {
            S::Query(q) => {
                !(q.with.is_none()
                    && q.locks.is_empty()
                    && matches!(q.body.as_ref(), SetExpr::Select(sel) if sel.from.is_empty()))
            }
            _ => true,
        },
        _ => true,
    }
}

fn is_ddl(s: &Stmt) -> bool {
    match s {
        Stmt::CreateDatabase { .. }
        | Stmt::DropDatabase { .. }
        | Stmt::DropTable { .. }
        | Stmt::Truncate { .. }
        | Stmt::CreateIndex(_)
        | Stmt::CreateTable(..)
        | Stmt::DropIndex { .. } => true,
        Stmt::Ast(a) => matches!(
            a.as_ref(),
            sqlparser::ast::Statement::CreateTable(_)
                | sqlparser::ast::Statement::AlterTable(_)
                | sqlparser::ast::Statement::RenameTable(_)
                | sqlparser::ast::Statement::CreateView(_)
                | sqlparser::ast::Statement::Drop {
                    object_type: sqlparser::ast::ObjectType::View,
                    ..
                }
        ),
        _ => false,
    }
}

/// Run a statement that writes rows: under a strict `sql_mode` (and not
/// `INSERT IGNORE`) a conversion warning raised while it runs fails it
/// (its writes are rolled back to the statement's savepoint), as MySQL's
/// strict mode does.
fn write_rows(
    cx: &mut Ctx<'_>,
    strict: bool,
    f: impl FnOnce(&mut Ctx<'_>) -> SqlResult<QueryResult>,
) -> SqlResult<QueryResult> {
    let guard = crate::warnings::Strict::enter(
        strict && cx.session.strict_writes(),
        cx.session.sql_mode_has("ERROR_FOR_DIVISION_BY_ZERO")
            || cx.session.sql_mode_has("TRADITIONAL"),
    );
    let r = f(cx)?;
    guard.finish()?;
    Ok(r)
}

fn run_in_txn(cx: &mut Ctx<'_>, s: Stmt) -> SqlResult<QueryResult> {
    use sqlparser::ast::Statement as S;
    match s {
        // By reference: a lent AST (the INSERT fast path's) goes back to
        // its cache when `a` is dropped.
        Stmt::Ast(a) => match &*a {
            S::Query(q) => exec::query(cx, q),
            S::Insert(ins) => write_rows(cx, !ins.ignore, |cx| dml::insert(cx, ins)),
            S::Update(up) => write_rows(cx, true, |cx| dml::update(cx, up)),
            S::Delete(del) => write_rows(cx, true, |cx| dml::delete(cx, del)),
            other => Err(SqlError::unsupported(
                other.to_string().chars().take(60).collect::<String>(),
            )),
        },
        Stmt::ShowDatabases => show::databases(cx),
        Stmt::ShowTables { db, full } => show::tables(cx, db, full),
        Stmt::ShowInfo { table, like } => show::info(cx, table, like.as_deref()),
        Stmt::ShowIndex { table } => show::index(cx, &table),
        Stmt::ShowCreateTable { table } => show::create_table(cx, &table),
        Stmt::Describe { table } => show::describe(cx, &table),
        Stmt::ShowIscpStatus => show::iscp_status(cx),
        Stmt::CheckIndex { name, table } => {
            let db = cx.session.db_for(table.db.as_deref())?.to_string();
            let t = crate::catalog::require_table(cx.txn, &db, &table.name, false)?;
            let ix = t.index(&name).cloned().ok_or_else(|| {
                SqlError::new(
                    code::KEY_DOES_NOT_EXIST,
                    format!("Key '{name}' doesn't exist in table '{}'", table.name),
                )
            })?;
            let rep = crate::sql::check::check_index(cx, &t, &ix)?;
            Ok(crate::sql::check::report_result(&t, &ix, &rep))
        }
        Stmt::Explain(inner, analyze) => show::explain(cx, *inner, analyze),
        other => Err(SqlError::internal(format!(
            "unexpected statement {other:?}"
        ))),
    }
}
