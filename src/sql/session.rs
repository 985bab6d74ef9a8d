//! The state every statement runs with: the [`Engine`] one database
//! shares, a connection's [`SessionState`], and the [`Ctx`] a statement
//! implementation is handed (engine, transaction, session).
//!
//! Owns: those types, the session's fresh state, reading its variables as
//! counts and flags, and beginning a storage transaction with the
//! session's settings. The state of other modules the session holds
//! (process entry, memory budget, table locks) is their types, held here;
//! the node's `SET GLOBAL` values and the user variables are kept here for
//! [`crate::sql::vars`], which says what they mean.
//!
//! Never: runs a statement (that is [`crate::sql`]'s dispatch) or names a
//! module above the leaves (checked by `tests/layering.rs`): everything in
//! `src/sql` reads these types, so they must not read back.

use std::collections::BTreeMap;
use std::sync::Arc;

use tributary_storage::{Storage, Transaction, TxnOptions};

use crate::catalog::IdAllocator;
use crate::config::Config;
use crate::error::{code, SqlError, SqlResult};
use crate::iscp::Iscp;
use crate::types::{Value, Warning};

/// Shared engine state of one database (one per `Database`, i.e. per CN).
pub struct Engine {
    pub storage: Arc<dyn Storage>,
    pub config: Config,
    pub ids: IdAllocator,
    pub iscp: Arc<Iscp>,
    /// This node's sessions (`SHOW PROCESSLIST`, `KILL`).
    pub processes: crate::sql::process::ProcessList,
    /// `SET GLOBAL` values: what new sessions start with.
    pub globals: Globals,
    /// The memory all running statements may hold (`sql::budget`).
    pub budget: Arc<crate::sql::budget::Global>,
    /// The node's spill counters (`sql::spill`).
    pub spill: Arc<crate::sql::spill::Stats>,
}

/// Per-connection state.
pub struct SessionState {
    pub db: Option<String>,
    pub txn: Option<Box<dyn Transaction>>,
    pub autocommit: bool,
    /// System variables this session set (lower-case names).
    pub vars: BTreeMap<String, String>,
    /// User variables (`@v`).
    pub user_vars: UserVars,
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
    pub prepared: std::collections::HashMap<String, (String, crate::sql::budget::PreparedCharge)>,
    /// Synchronous vector/full-text indexes written by the open transaction
    /// (or the running autocommit statement): after commit this CN's copy
    /// of each catches up with the write before the statement returns.
    pub sync_jobs: Vec<(crate::iscp::JobKey, crate::iscp::log::JobSpec)>,
    /// This session's entry in [`Engine::processes`]; its id is the
    /// connection id (`CONNECTION_ID()`, `KILL`'s argument).
    pub process: Arc<crate::sql::process::Process>,
    /// What interrupts the running statement (KILL, `max_execution_time`);
    /// handed to every transaction the statement uses. It has a token
    /// exactly while a statement runs (an EXECUTE's inner statement runs
    /// under the outer one's).
    pub interrupt: tributary_storage::Interrupt,
    /// The tables this session holds with `LOCK TABLES`.
    /// Set while [`Engine::describe`] plans a query for its columns: the
    /// query is planned, not run.
    pub describe_only: bool,
    /// User-level locks (`GET_LOCK`) this session holds.
    pub user_locks: crate::sql::user_locks::UserLocks,
    pub table_locks: crate::sql::table_locks::SessionLocks,
    /// The named savepoints of the open transaction.
    pub savepoints: crate::sql::txn_control::Savepoints,
    /// When the open transaction's snapshot moves (its isolation level).
    pub snapshot: crate::sql::txn_control::Snapshot,
    /// `SET TRANSACTION …` for the next transaction only.
    pub next_txn: crate::sql::txn_control::NextTxn,
    /// The open (or last) transaction's isolation level and access mode:
    /// what `COMMIT AND CHAIN` / `ROLLBACK AND CHAIN` begin the next with.
    pub txn_traits: crate::sql::txn_control::NextTxn,
}

impl SessionState {
    /// Fresh session state for `user`, entered in the process list as
    /// `process`.
    pub fn new(user: &str, privileged: bool, process: Arc<crate::sql::process::Process>) -> Self {
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
            describe_only: false,
            user_locks: Default::default(),
            table_locks: Default::default(),
            savepoints: Default::default(),
            snapshot: Default::default(),
            next_txn: Default::default(),
            txn_traits: Default::default(),
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
    pub(super) fn txn_options(&self, st: &SessionState) -> TxnOptions {
        let timeout = st
            .vars
            .get("innodb_lock_wait_timeout")
            .or_else(|| st.vars.get("lock_wait_timeout"))
            .and_then(|v| v.parse::<f64>().ok())
            .map(std::time::Duration::from_secs_f64)
            .unwrap_or(self.config.lock_wait_timeout);
        let own = match st.var_u64("tributary_transaction_memory_limit") {
            0 => crate::sql::budget::default_transaction(self.budget.limit()),
            n => n,
        };
        let global: std::sync::Arc<dyn tributary_storage::write_budget::MemoryBudget> =
            self.budget.clone();
        TxnOptions {
            lock_wait_timeout: timeout,
            read_only: false,
            write_limit: tributary_storage::write_budget::WriteLimit {
                bytes: own,
                setting: "tributary_transaction_memory_limit".into(),
                global: Some(global),
            },
        }
    }

    /// Begin a storage transaction with the session's settings, under the
    /// running statement's interrupt.
    pub fn begin(&self, st: &SessionState) -> SqlResult<Box<dyn Transaction>> {
        let mut txn = self.storage.begin(self.txn_options(st))?;
        txn.set_interrupt(st.interrupt.clone());
        Ok(txn)
    }
}

/// The node's global values of session variables (`SET GLOBAL`): the
/// values new sessions start with. Kept in memory like MySQL's (not
/// persisted: a restart returns to the defaults and the command line).
#[derive(Default)]
pub struct Globals(pub(super) parking_lot::Mutex<BTreeMap<String, String>>);

impl Globals {
    /// The current global values (canonical, by variable name).
    pub fn snapshot(&self) -> BTreeMap<String, String> {
        self.0.lock().clone()
    }

    /// Start a new session from the global values.
    pub fn apply(&self, st: &mut SessionState) {
        for (k, v) in self.0.lock().iter() {
            if k == "autocommit" {
                st.autocommit = v == "ON";
            } else {
                st.vars.insert(k.clone(), v.clone());
            }
        }
    }
}

/// User variables (`@v`) of a session.
pub type UserVars = BTreeMap<String, Value>;
