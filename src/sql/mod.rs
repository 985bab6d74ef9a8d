//! The SQL layer: parse → choose an access path → execute, per session.
//!
//! Owns statement semantics (autocommit, explicit transactions, statement
//! atomicity through savepoints, implicit commit before DDL), result shapes
//! and the mapping of every lower-layer error to a MySQL code (via
//! [`crate::error`]). Never touches storage encodings directly: rows and keys
//! go through [`crate::catalog::codec`].
//!
//! Modules: [`session`] (the engine, session and context types),
//! [`parse`] (statement recognition), [`expr`] (expressions),
//! [`access`] (access paths), [`plan`] and [`exec`] (queries), [`dml`] (INSERT, UPDATE,
//! DELETE and synchronous index maintenance), [`ddl`] (CREATE/DROP), [`show`]
//! (SHOW, DESCRIBE, EXPLAIN output), [`host`] (session functions, fault
//! injection control), [`budget`] (the running statement's interrupt
//! check and memory budget). They form levels, each naming only its own
//! and lower ones, with no import cycle (docs/ARCHITECTURE.md, checked by
//! `tests/layering.rs`): this file is the top, the dispatch.

pub mod access;
pub mod agg_stats;
pub mod alter;
pub mod budget;
pub mod check;
pub mod check_constraint;
pub mod ddl;
pub mod dml;
pub mod exec;
pub mod expr;
pub mod fast_insert;
pub mod fk;
pub mod fk_enforce;
pub mod functions;
pub mod host;
pub mod load;
pub mod load_format;
pub mod load_spec;
pub mod maintenance;
pub mod params;
pub mod parse;
pub mod plan;
pub mod privileges;
pub mod process;
pub mod schema;
pub mod search;
pub mod session;
pub mod show;
pub mod spill;
pub mod stack;
pub mod table_locks;
pub mod thread_slot;
pub mod truncate;
pub mod txn_control;
pub mod user_locks;
pub mod vars;
pub mod write;

use std::sync::Arc;

use tributary_storage::Transaction;

use crate::catalog::TableDef;
use crate::error::{code, SqlError, SqlResult};
use crate::types::{Column, QueryResult, Value, Warning};
use parse::Stmt;
pub use session::{Ctx, Engine, SessionState};

impl Engine {
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
        let _pipes = crate::sql::expr::PipesAsConcat::enter(st.sql_mode_has("PIPES_AS_CONCAT"));
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
            Stmt::LockTables(tables) => self.lock_tables(st, &tables),
            Stmt::UnlockTables => {
                // Commits the open transaction, then releases.
                self.commit_open(st)?;
                st.table_locks.release();
                Ok(QueryResult::default())
            }
            Stmt::Begin {
                read_only,
                consistent,
            } => {
                self.commit_open(st)?;
                // START TRANSACTION releases LOCK TABLES locks (MySQL).
                st.table_locks.release();
                self.open_txn(st, read_only, consistent)?;
                Ok(QueryResult::default())
            }
            Stmt::SetTransaction {
                scope,
                isolation,
                read_only,
            } => {
                self.set_transaction(st, scope, isolation, read_only)?;
                Ok(QueryResult::default())
            }
            Stmt::Do(select) => {
                let r = self.dispatch(st, *select)?;
                Ok(QueryResult {
                    warnings: r.warnings,
                    ..Default::default()
                })
            }
            Stmt::Commit { chain } => {
                self.commit_open(st)?;
                if chain {
                    self.chain(st)?;
                }
                Ok(QueryResult::default())
            }
            Stmt::Rollback { chain } => {
                if let Some(t) = st.txn.take() {
                    t.rollback();
                }
                st.sync_jobs.clear();
                if chain {
                    self.chain(st)?;
                }
                Ok(QueryResult::default())
            }
            Stmt::Savepoint(op, name) => {
                if st.txn.is_none() && !st.autocommit {
                    self.open_txn(st, None, false)?;
                }
                let txn = st.txn.as_mut().map(|t| t.as_mut() as &mut dyn Transaction);
                txn_control::run(&mut st.savepoints, txn, op, &name)?;
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
                // Every value is evaluated before any is assigned, as MySQL
                // (`SET @a = 1, @b = @a` reads the @a from before); an
                // expression is a SELECT of it, privileges checked as for
                // that SELECT.
                let mut values = Vec::with_capacity(assignments.len());
                for (target, value) in assignments {
                    let v = match value {
                        parse::SetValue::Expr(text) => {
                            let r = self.execute(st, &format!("SELECT {text}"))?;
                            match r.rows.into_iter().next().and_then(|r| r.into_iter().next()) {
                                Some(v) => parse::SetValue::Value(v),
                                None => {
                                    return Err(SqlError::internal("SET value gave no row"))
                                }
                            }
                        }
                        parse::SetValue::User(n) => parse::SetValue::Value(
                            st.user_vars.get(&n).cloned().unwrap_or(crate::types::Value::Null),
                        ),
                        parse::SetValue::System(n) => parse::SetValue::Value(vars::system_value(
                            &vars::SessionVars::of(self, st),
                            &n,
                        )?),
                        v => v,
                    };
                    values.push((target, v));
                }
                for (target, value) in values {
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
                let spec = schema::spec_of(&t, ix);
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
                let r = run_ddl(self, st, s);
                // …and commits itself even with autocommit off.
                self.commit_open(st)?;
                r
            }
            Stmt::LoadData(spec)
                if st.txn.is_none()
                    && st.autocommit
                    && !st.table_locks.active()
                    && st.var_u64("tributary_load_commit_rows") > 0 =>
            {
                let batch = st.var_u64("tributary_load_commit_rows");
                self.load_in_batches(st, &spec, batch)
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

    /// LOAD DATA under autocommit with `tributary_load_commit_rows` = n:
    /// every n lines are committed in a transaction of their own (the
    /// write set a transaction holds stays bounded). A failing batch is
    /// rolled back; the batches before it stay (decision 030).
    fn load_in_batches(
        &self,
        st: &mut SessionState,
        spec: &load_spec::LoadSpec,
        batch: u64,
    ) -> SqlResult<QueryResult> {
        let strict = spec.on_dup != load_spec::OnDup::Ignore;
        let mut loader: Option<load::Loader> = None;
        loop {
            let mut finished = false;
            let (txn, r) = self.in_own_txn(st, |cx| {
                write_rows(cx, strict, |cx| {
                    let l = match loader.as_mut() {
                        Some(l) => l,
                        None => loader.insert(load::Loader::open(cx, spec)?),
                    };
                    finished = l.rows(cx, Some(batch))?;
                    Ok(QueryResult::default())
                })
            })?;
            match r {
                Ok(_) => {
                    let ts = txn.commit().map_err(SqlError::from)?;
                    self.catch_up_sync(st, ts);
                }
                Err(e) => {
                    budget::roll_back(txn);
                    st.sync_jobs.clear();
                    return Err(e);
                }
            }
            if finished {
                break;
            }
        }
        let Some(l) = loader else {
            return Err(SqlError::internal("LOAD DATA batch without its loader"));
        };
        let (txn, r) = self.in_own_txn(st, |cx| Ok(l.finish(cx)))?;
        txn.rollback();
        r
    }

    /// `LOCK TABLES …`: commits the open transaction and releases locks
    /// held before (as MySQL), then takes every lock in one transaction —
    /// all or none ([`table_locks::SessionLocks::take`]).
    fn lock_tables(
        &self,
        st: &mut SessionState,
        tables: &[(parse::Name, table_locks::Mode)],
    ) -> SqlResult<QueryResult> {
        self.commit_open(st)?;
        st.table_locks.release();
        let mut wanted = Vec::with_capacity(tables.len());
        for (name, mode) in tables {
            let db = st.db_for(name.db.as_deref())?.to_string();
            wanted.push(table_locks::Locked {
                db,
                table: name.name.clone(),
                mode: *mode,
            });
        }
        let holder = self.begin(st)?;
        st.table_locks = table_locks::SessionLocks::take(wanted, holder)?;
        Ok(QueryResult::default())
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
    /// The result columns `sql` (a prepared statement's text, `?` for each
    /// parameter) will have: the query planned with NULL parameters and run
    /// no further, for COM_STMT_PREPARE's column definitions. `None` for a
    /// statement that is not a plain query, one that fails to plan (its
    /// error comes when it is executed), or inside a transaction (planning
    /// there would take the transaction's snapshot before its first read).
    /// Leaves the session's warnings as they were.
    pub fn describe(&self, st: &mut SessionState, sql: &str) -> Option<Vec<Column>> {
        if st.txn.is_some() || st.describe_only {
            return None;
        }
        let nulls = vec![params::Param::Null; params::count_placeholders(sql)];
        let text = params::substitute(sql, &nulls).ok()?;
        let plain_query = match parse::parse(&text) {
            Ok(Stmt::Ast(a)) => match &*a {
                sqlparser::ast::Statement::Query(q) => matches!(select_into_vars(q), Ok(None)),
                _ => false,
            },
            _ => false,
        };
        if !plain_query {
            return None;
        }
        let warnings = std::mem::take(&mut st.warnings);
        st.describe_only = true;
        let r = self.execute(st, &text);
        st.describe_only = false;
        st.warnings = warnings;
        r.ok().map(|r| r.columns)
    }

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
        let literal = matches!(value, SetValue::Literal(_));
        let v = match value {
            SetValue::Null => Value::Null,
            SetValue::Literal(s) => Value::Text(s),
            SetValue::Value(v) => v,
            SetValue::System(_) | SetValue::User(_) | SetValue::Expr(_) => {
                return Err(SqlError::internal("SET value not evaluated"));
            }
        };
        match target {
            SetTarget::User(n) => {
                // A literal keeps its number-ness: @a = 5 is the integer 5,
                // @a = 0.1 the DECIMAL 0.1.
                let v = match v {
                    Value::Text(s) if literal => match s.parse::<i64>() {
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

    /// Begin the session's transaction with the characteristics of the
    /// last `SET TRANSACTION` (used up here), else the session's:
    /// `read_only` as START TRANSACTION said it, `consistent` when its
    /// snapshot is to be taken now rather than by its first read.
    fn open_txn(
        &self,
        st: &mut SessionState,
        read_only: Option<bool>,
        consistent: bool,
    ) -> SqlResult<()> {
        let next = std::mem::take(&mut st.next_txn);
        let level = next.isolation.unwrap_or_else(|| {
            st.vars
                .get("transaction_isolation")
                .and_then(|v| txn_control::Isolation::from_var(v))
                .unwrap_or_default()
        });
        let mut opts = self.txn_options(st);
        opts.read_only = read_only.or(next.read_only).unwrap_or(false);
        st.txn_traits = txn_control::NextTxn {
            isolation: Some(level),
            read_only: Some(opts.read_only),
        };
        let mut txn = self.storage.begin(opts)?;
        txn.set_interrupt(st.interrupt.clone());
        st.txn = Some(txn);
        st.snapshot = txn_control::Snapshot::begun(level, consistent);
        Ok(())
    }

    /// `AND CHAIN`: a new transaction with the isolation level and access
    /// mode of the one just ended (as MySQL).
    fn chain(&self, st: &mut SessionState) -> SqlResult<()> {
        st.next_txn = st.txn_traits.clone();
        self.open_txn(st, None, false)
    }

    /// `SET [GLOBAL | SESSION] TRANSACTION …`.
    fn set_transaction(
        &self,
        st: &mut SessionState,
        scope: txn_control::TxnScope,
        isolation: Option<String>,
        read_only: Option<bool>,
    ) -> SqlResult<()> {
        use txn_control::TxnScope;
        // Checked the way `SET transaction_isolation = …` checks it (1235
        // for a level not run here).
        let level = match &isolation {
            Some(l) => {
                let v = vars::normalize_value("transaction_isolation", l)?;
                Some(
                    txn_control::Isolation::from_var(&v)
                        .ok_or_else(|| SqlError::internal("an isolation level not run here"))?,
                )
            }
            None => None,
        };
        match scope {
            TxnScope::Next => {
                if st.txn.is_some() {
                    return Err(SqlError::new(
                        code::CANT_CHANGE_TX_CHARACTERISTICS,
                        "Transaction characteristics can't be changed while a transaction is in progress",
                    ));
                }
                if level.is_some() {
                    st.next_txn.isolation = level;
                }
                if read_only.is_some() {
                    st.next_txn.read_only = read_only;
                }
            }
            TxnScope::Session | TxnScope::Global => {
                if read_only == Some(true) {
                    return Err(SqlError::unsupported(
                        "SET SESSION / GLOBAL TRANSACTION READ ONLY (START TRANSACTION READ ONLY and SET TRANSACTION READ ONLY are)",
                    ));
                }
                if let Some(l) = isolation {
                    vars::set_system(
                        self,
                        st,
                        "transaction_isolation",
                        &l,
                        scope == TxnScope::Global,
                    )?;
                }
            }
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
            // Begun for this statement: its snapshot is this statement's.
            self.open_txn(st, None, true)?;
        } else if let Some(txn) = st.txn.as_mut() {
            st.snapshot.before_statement(txn.as_mut())?;
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

/// A DDL statement to the module that runs it (the session has no open
/// transaction): ALTER / RENAME TABLE to [`alter`], TRUNCATE to
/// [`truncate`], the rest to [`ddl`].
fn run_ddl(engine: &Engine, st: &mut SessionState, s: Stmt) -> SqlResult<QueryResult> {
    use sqlparser::ast::Statement as S;
    match s {
        Stmt::Truncate { table } => truncate::truncate(engine, st, &table),
        Stmt::Ast(a) => match a.into_statement() {
            S::AlterTable(at) => alter::alter_table(engine, st, &at),
            S::RenameTable(renames) => alter::rename_tables(engine, st, &renames),
            other => ddl::execute(engine, st, Stmt::Ast(parse::Ast::Owned(Box::new(other)))),
        },
        s => ddl::execute(engine, st, s),
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

/// The user variables of `SELECT … INTO @a, @b …`, if the query has that
/// clause; any other INTO (a table, OUTFILE, DUMPFILE) is refused.
fn select_into_vars(q: &sqlparser::ast::Query) -> SqlResult<Option<Vec<String>>> {
    use sqlparser::ast::{Expr, SetExpr};
    let SetExpr::Select(sel) = q.body.as_ref() else {
        return Ok(None);
    };
    let Some(into) = &sel.into else {
        return Ok(None);
    };
    let var = |e: &Expr| match e {
        Expr::Identifier(id) if id.quote_style.is_none() => id
            .value
            .strip_prefix('@')
            .filter(|n| !n.is_empty() && !n.starts_with('@'))
            .map(str::to_ascii_lowercase),
        _ => None,
    };
    let vars: Option<Vec<String>> = into.targets.iter().map(var).collect();
    match vars {
        Some(v) if !into.temporary && !into.unlogged && !into.table => Ok(Some(v)),
        _ => Err(SqlError::unsupported(
            "SELECT … INTO other than user variables (INTO @v, …)",
        )),
    }
}

/// `SELECT … INTO @a, @b …` as MySQL: the query without its INTO, whose one
/// row (1172 for more, warning 1329 and nothing assigned for none) goes
/// to the variables, one per column (1222 otherwise).
fn select_into(
    cx: &mut Ctx<'_>,
    q: &sqlparser::ast::Query,
    vars: Vec<String>,
) -> SqlResult<QueryResult> {
    use sqlparser::ast::SetExpr;
    let mut plain = q.clone();
    if let SetExpr::Select(sel) = plain.body.as_mut() {
        sel.into = None;
    }
    let r = exec::query(cx, &plain)?;
    if r.columns.len() != vars.len() {
        return Err(SqlError::new(
            1222,
            "The used SELECT statements have a different number of columns",
        ));
    }
    let mut rows = r.rows.into_iter();
    let Some(row) = rows.next() else {
        crate::warnings::note(1329, "No data - zero rows fetched, selected, or processed")?;
        return Ok(QueryResult::default());
    };
    if rows.next().is_some() {
        return Err(SqlError::new(1172, "Result consisted of more than one row"));
    }
    for (name, v) in vars.into_iter().zip(row) {
        cx.session.user_vars.insert(name, v);
    }
    Ok(QueryResult {
        affected_rows: 1,
        ..Default::default()
    })
}

fn run_in_txn(cx: &mut Ctx<'_>, s: Stmt) -> SqlResult<QueryResult> {
    use sqlparser::ast::Statement as S;
    match s {
        // By reference: a lent AST (the INSERT fast path's) goes back to
        // its cache when `a` is dropped.
        Stmt::Ast(a) => match &*a {
            S::Query(q) => {
                // NOWAIT / SKIP LOCKED: for this statement's locking reads.
                let wait = txn_control::lock_wait_of(q);
                let nonblocking = wait != tributary_storage::LockWait::Wait;
                if nonblocking {
                    cx.txn.set_lock_wait(wait)?;
                }
                let r = match select_into_vars(q) {
                    Ok(Some(vars)) => select_into(cx, q, vars),
                    Ok(None) => exec::query(cx, q),
                    Err(e) => Err(e),
                };
                if nonblocking {
                    cx.txn.set_lock_wait(tributary_storage::LockWait::Wait)?;
                }
                r
            }
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
        Stmt::ShowCreateView { table } => show::create_view(cx, &table),
        Stmt::ShowCreateDatabase {
            name,
            if_not_exists,
        } => show::create_database(cx, &name, if_not_exists),
        Stmt::Describe { table, full } => show::columns(cx, &table, full),
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
        Stmt::Maintenance { op, tables } => crate::sql::maintenance::run(cx, op, &tables),
        // IGNORE (and LOCAL without REPLACE, which implies it) keeps a bad
        // row a warning.
        Stmt::LoadData(spec) => write_rows(cx, spec.on_dup != load_spec::OnDup::Ignore, |cx| {
            load::execute(cx, &spec)
        }),
        Stmt::Explain(inner, analyze) => show::explain(cx, *inner, analyze),
        other => Err(SqlError::internal(format!(
            "unexpected statement {other:?}"
        ))),
    }
}
