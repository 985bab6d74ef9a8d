//! Session-level functions evaluated inside expressions: fault-injection
//! control (MatrixOne-compatible, SUPER only), `database()`,
//! `user()`, `last_insert_id()`, `sleep()` (ended early by the statement's
//! interrupt: KILL or `max_execution_time`).
//!
//! Never reads table data.

use crate::error::{SqlError, SqlResult};
use crate::sql::expr::FunctionHost;
use crate::sql::{Engine, SessionState};
use crate::types::Value;

/// The [`FunctionHost`] of a session.
pub struct SessionHost<'a> {
    db: Option<String>,
    user: String,
    privileged: bool,
    last_insert_id: u64,
    connection_id: u32,
    vars: crate::sql::vars::SessionVars,
    user_vars: crate::sql::vars::UserVars,
    interrupt: tributary_storage::Interrupt,
    user_locks: crate::sql::user_locks::UserLocks,
    engine: &'a Engine,
}

impl<'a> SessionHost<'a> {
    /// Capture what the functions need from the session.
    pub fn new(st: &SessionState, engine: &'a Engine) -> Self {
        SessionHost {
            db: st.db.clone(),
            user: st.user.clone(),
            privileged: st.privileged,
            last_insert_id: st.last_insert_id,
            connection_id: st.process.id,
            vars: crate::sql::vars::SessionVars::of(engine, st),
            user_vars: st.user_vars.clone(),
            interrupt: st.interrupt.clone(),
            user_locks: st.user_locks.clone(),
            engine,
        }
    }

    /// The privilege the function registry declares for `f` (SUPER for
    /// fault-injection control; `privileged` is refreshed from the grants
    /// before every statement): error 1227 without it.
    fn require_privilege(&self, f: &str) -> SqlResult<()> {
        match crate::sql::functions::privilege(f) {
            crate::sql::functions::Privilege::Super if !self.privileged => {
                Err(crate::sql::privileges::super_denied())
            }
            _ => Ok(()),
        }
    }
}

fn text_arg(args: &[Value], i: usize, f: &str) -> SqlResult<String> {
    match args.get(i) {
        Some(Value::Text(s)) => Ok(s.clone()),
        Some(Value::Null) | None => Err(SqlError::wrong_args(format!(
            "{f}: argument {} is missing or NULL",
            i + 1
        ))),
        Some(other) => Ok(other.to_string()),
    }
}

fn int_arg(args: &[Value], i: usize, f: &str) -> SqlResult<i64> {
    match args.get(i) {
        Some(Value::Int(v)) => Ok(*v),
        Some(Value::Float(v)) => Ok(*v as i64),
        Some(Value::Decimal(d)) => Ok(d.to_i64_round().unwrap_or(0)),
        Some(Value::Text(s)) => s.trim().parse().map_err(|_| {
            SqlError::wrong_args(format!("{f}: argument {} must be an integer", i + 1))
        }),
        Some(Value::Bool(b)) => Ok(*b as i64),
        _ => Err(SqlError::wrong_args(format!(
            "{f}: argument {} must be an integer",
            i + 1
        ))),
    }
}

/// A [`SessionHost`] captured on the first function call only: a VALUES
/// list of literals calls none, and capturing copies the session's
/// variables. Must be used while the session does not change (as a
/// `SessionHost` captured at its creation would see it).
pub struct LazyHost<'a> {
    session: &'a SessionState,
    engine: &'a Engine,
    host: std::cell::OnceCell<SessionHost<'a>>,
}

impl<'a> LazyHost<'a> {
    pub fn new(session: &'a SessionState, engine: &'a Engine) -> Self {
        LazyHost {
            session,
            engine,
            host: std::cell::OnceCell::new(),
        }
    }
}

impl FunctionHost for LazyHost<'_> {
    fn call(&self, name: &str, args: &[Value]) -> Option<SqlResult<Value>> {
        self.host
            .get_or_init(|| SessionHost::new(self.session, self.engine))
            .call(name, args)
    }
}

impl FunctionHost for SessionHost<'_> {
    fn call(&self, name: &str, args: &[Value]) -> Option<SqlResult<Value>> {
        // Every call is checked against the privilege the registry
        // declares, before its arguments are looked at.
        if let Err(e) = self.require_privilege(name) {
            return Some(Err(e));
        }
        let reg = tributary_fault::global();
        let r = match name {
            "database" | "schema" => Ok(self.db.clone().map(Value::Text).unwrap_or(Value::Null)),
            "user" | "current_user" => Ok(Value::Text(format!("{}@localhost", self.user))),
            "last_insert_id" => Ok(Value::Int(self.last_insert_id as i64)),
            "connection_id" => Ok(Value::Int(i64::from(self.connection_id))),
            "version" => Ok(Value::Text(crate::sql::vars::server_version())),
            "sleep" => self.sleep(args),
            "get_lock" | "release_lock" | "is_free_lock" | "release_all_locks" => {
                self.user_lock(name, args)
            }
            // `@@name` and `@name` (compiled to these two internal calls).
            "@@" => {
                text_arg(args, 0, name).and_then(|n| crate::sql::vars::system_value(&self.vars, &n))
            }
            "@@global" => text_arg(args, 0, name)
                .and_then(|n| crate::sql::vars::system_value(&self.vars.global(), &n)),
            "@" => text_arg(args, 0, name)
                .map(|n| self.user_vars.get(&n).cloned().unwrap_or(Value::Null)),
            "enable_fault_injection" => self
                .require_privilege(name)
                .map(|_| Value::Bool(reg.enable() || reg.is_enabled())),
            "disable_fault_injection" => self
                .require_privilege(name)
                .map(|_| Value::Bool(reg.disable() || !reg.is_enabled())),
            "add_fault_point" => self.require_privilege(name).and_then(|_| {
                let n = text_arg(args, 0, name)?;
                let freq = text_arg(args, 1, name)?;
                let action = text_arg(args, 2, name)?;
                let iarg = int_arg(args, 3, name)?;
                let sarg = match args.get(4) {
                    Some(Value::Null) | None => String::new(),
                    Some(Value::Text(s)) => s.clone(),
                    Some(o) => o.to_string(),
                };
                let constant = match args.get(5) {
                    None | Some(Value::Null) => false,
                    Some(v) => crate::sql::expr::truth(v) == Some(true),
                };
                reg.add(&n, &freq, &action, iarg, &sarg, constant)
                    .map(|_| Value::Bool(true))
                    .map_err(fault_err)
            }),
            "remove_fault_point" => self.require_privilege(name).and_then(|_| {
                let n = text_arg(args, 0, name)?;
                reg.remove(&n).map(Value::Bool).map_err(fault_err)
            }),
            "trigger_fault_point" => self.require_privilege(name).and_then(|_| {
                let n = text_arg(args, 0, name)?;
                reg.trigger(&n).map(Value::Int).map_err(fault_err)
            }),
            "list_fault_points" => self
                .require_privilege(name)
                .map(|_| Value::Text(reg.list_json())),
            "fault_inject" => self.require_privilege(name).and_then(|_| {
                let scope = text_arg(args, 0, name)?;
                let method = text_arg(args, 1, name)?;
                let params = match args.get(2) {
                    Some(Value::Null) | None => String::new(),
                    Some(Value::Text(s)) => s.clone(),
                    Some(o) => o.to_string(),
                };
                reg.handle_fault_inject(&scope, &method, &params)
                    .map(Value::Text)
                    .map_err(fault_err)
            }),
            _ => return None,
        };
        Some(r)
    }
}

impl SessionHost<'_> {
    /// `SLEEP(seconds)`: 0 after sleeping; a KILL or the statement's
    /// deadline ends it early with the statement's interrupt error (MySQL
    /// instead returns 1 when SLEEP is all the query does).
    fn sleep(&self, args: &[Value]) -> SqlResult<Value> {
        if args.len() != 1 {
            return Err(SqlError::new(
                1582,
                "Incorrect parameter count in the call to native function 'sleep'",
            ));
        }
        let secs = match &args[0] {
            Value::Null => return Ok(Value::Int(0)),
            v => crate::sql::expr::as_f64(v).unwrap_or(0.0),
        };
        if !secs.is_finite() || secs < 0.0 {
            return Err(SqlError::wrong_args(format!(
                "Incorrect arguments to sleep: {secs}"
            )));
        }
        let end = std::time::Instant::now()
            + std::time::Duration::from_secs_f64(secs.min(MAX_SLEEP_SECS));
        loop {
            self.interrupt.check()?;
            let now = std::time::Instant::now();
            if now >= end {
                return Ok(Value::Int(0));
            }
            // Woken within SLEEP_SLICE of a KILL.
            std::thread::park_timeout((end - now).min(SLEEP_SLICE));
        }
    }
}

impl SessionHost<'_> {
    /// GET_LOCK / RELEASE_LOCK / IS_FREE_LOCK / RELEASE_ALL_LOCKS (see
    /// [`crate::sql::user_locks`]); a NULL name is NULL, as MySQL's.
    fn user_lock(&self, name: &str, args: &[Value]) -> SqlResult<Value> {
        let storage = self.engine.storage.as_ref();
        let locks = &self.user_locks;
        if name == "release_all_locks" {
            return Ok(Value::Int(locks.release_all() as i64));
        }
        let lock = match args.first() {
            None | Some(Value::Null) => return Ok(Value::Null),
            Some(Value::Text(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        let flag = |b: bool| Value::Int(i64::from(b));
        Ok(match name {
            "get_lock" => {
                let timeout = match args.get(1) {
                    None | Some(Value::Null) => 0.0,
                    Some(v) => crate::sql::expr::as_f64(v).unwrap_or(0.0),
                };
                flag(locks.get(storage, &lock, timeout, &self.interrupt)?)
            }
            "release_lock" => locks
                .release(storage, &lock, &self.interrupt)?
                .map_or(Value::Null, flag),
            _ => flag(locks.is_free(storage, &lock, &self.interrupt)?),
        })
    }
}

/// How often a sleeping statement looks at its interrupt.
const SLEEP_SLICE: std::time::Duration = std::time::Duration::from_millis(10);
/// Longest SLEEP (a year): keeps the deadline representable.
const MAX_SLEEP_SECS: f64 = 365.0 * 86_400.0;

fn fault_err(e: tributary_fault::FaultError) -> SqlError {
    SqlError::wrong_args(e.to_string())
}
