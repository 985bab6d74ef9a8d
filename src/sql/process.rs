//! The process list: every open session of this compute node, what it is
//! running, and the handle that stops it (`KILL`, `SHOW PROCESSLIST`,
//! `information_schema.PROCESSLIST`).
//!
//! Owns: connection ids (one sequence for server connections and embedded
//! sessions), each session's entry (user, host, database, the running
//! statement's text, start time and cancellation token) and the rules of
//! `KILL` (who may kill whom, error 1094 / 1095).
//!
//! Never: stops anything itself. `KILL QUERY` cancels the statement's
//! token, which the statement observes where it waits or loops (lock
//! waits, scans, `SLEEP`, `iscp_wait_fresh`, and every loop over rows
//! through [`crate::sql::budget::tick`]) and fails with 1317,
//! rolling itself back; `KILL CONNECTION` also cancels
//! [`Process::closed`], on which the server closes the connection.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;

use crate::error::{SqlError, SqlResult};
use crate::types::Value;

/// Longest statement text `SHOW PROCESSLIST` shows without FULL.
pub const INFO_SHORT: usize = 100;

/// The sessions of one compute node.
pub struct ProcessList {
    last_id: AtomicU32,
    entries: Mutex<HashMap<u32, Arc<Process>>>,
    /// When the node started (`Uptime`).
    started: Instant,
    /// Statements started (`Questions`).
    statements: AtomicU64,
}

impl Default for ProcessList {
    fn default() -> Self {
        ProcessList {
            last_id: AtomicU32::new(0),
            entries: Mutex::new(HashMap::new()),
            started: Instant::now(),
            statements: AtomicU64::new(0),
        }
    }
}

/// One session's entry.
pub struct Process {
    pub id: u32,
    state: Mutex<ProcessState>,
    /// Cancelled by `KILL CONNECTION`: the connection is to be closed.
    pub closed: CancellationToken,
}

struct ProcessState {
    user: String,
    host: String,
    db: Option<String>,
    /// Since when the session has been in its current command.
    since: Instant,
    running: Option<Running>,
}

struct Running {
    info: String,
    token: CancellationToken,
    /// The statement's own State (LOAD DATA's rows so far); `None`:
    /// `executing`.
    progress: Option<String>,
}

/// A row of `SHOW PROCESSLIST`.
#[derive(Debug, Clone)]
pub struct ProcessInfo {
    pub id: u32,
    pub user: String,
    pub host: String,
    pub db: Option<String>,
    /// `Query` while a statement runs, else `Sleep`; `Killed` once
    /// `KILL CONNECTION` reached it.
    pub command: &'static str,
    pub seconds: u64,
    pub state: String,
    pub info: Option<String>,
}

impl ProcessList {
    /// A new connection id (never 0, never reused while the node runs).
    pub fn allocate_id(&self) -> u32 {
        loop {
            let id = self.last_id.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
            if id != 0 && !self.entries.lock().contains_key(&id) {
                return id;
            }
        }
    }

    /// Enter a session under `id` (replacing an entry of that id: a
    /// connection's COM_CHANGE_USER / COM_RESET_CONNECTION session).
    pub fn register(&self, id: u32, user: &str, host: &str) -> Arc<Process> {
        let p = Arc::new(Process {
            id,
            state: Mutex::new(ProcessState {
                user: user.into(),
                host: host.into(),
                db: None,
                since: Instant::now(),
                running: None,
            }),
            closed: CancellationToken::new(),
        });
        self.entries.lock().insert(id, p.clone());
        p
    }

    /// Remove `p` (and only `p`: a newer session of the same id stays).
    pub fn unregister(&self, p: &Arc<Process>) {
        let mut e = self.entries.lock();
        if e.get(&p.id).is_some_and(|q| Arc::ptr_eq(q, p)) {
            e.remove(&p.id);
        }
    }

    /// Every session, in id order.
    pub fn list(&self) -> Vec<ProcessInfo> {
        let mut v: Vec<ProcessInfo> = self.entries.lock().values().map(|p| p.info()).collect();
        v.sort_by_key(|p| p.id);
        v
    }

    /// What a session of `user` may see: every session when
    /// `privileged`, else the user's own (MySQL's PROCESS privilege).
    pub fn visible(&self, user: &str, privileged: bool) -> Vec<ProcessInfo> {
        let mut v = self.list();
        v.retain(|p| privileged || p.user == user);
        v
    }

    /// Rows of `information_schema.PROCESSLIST` (and SHOW PROCESSLIST) as
    /// a session of `user` may see them ([`Self::visible`]): ID, USER,
    /// HOST, DB, COMMAND, TIME, STATE, INFO.
    pub fn rows(&self, user: &str, sees_all: bool) -> Vec<Vec<Value>> {
        let opt = |v: Option<String>| v.map_or(Value::Null, Value::Text);
        self.visible(user, sees_all)
            .into_iter()
            .map(|p| {
                vec![
                    Value::Int(i64::from(p.id)),
                    Value::Text(p.user),
                    Value::Text(p.host),
                    opt(p.db),
                    Value::Text(p.command.into()),
                    Value::Int(p.seconds as i64),
                    Value::Text(p.state),
                    opt(p.info),
                ]
            })
            .collect()
    }

    /// `SHOW STATUS` counters, by name.
    pub fn status(&self) -> Vec<(&'static str, u64)> {
        let entries = self.entries.lock();
        let running = entries
            .values()
            .filter(|p| p.state.lock().running.is_some())
            .count();
        vec![
            (
                "Connections",
                u64::from(self.last_id.load(Ordering::Relaxed)),
            ),
            ("Queries", self.statements.load(Ordering::Relaxed)),
            ("Questions", self.statements.load(Ordering::Relaxed)),
            ("Threads_connected", entries.len() as u64),
            ("Threads_running", running as u64),
            ("Uptime", self.started.elapsed().as_secs()),
        ]
    }

    /// `KILL [QUERY | CONNECTION] id` by `user` (`privileged`: may kill
    /// any session, else only the user's own). 1094 for an unknown id,
    /// 1095 for another user's session.
    pub fn kill(&self, id: u64, user: &str, privileged: bool, connection: bool) -> SqlResult<()> {
        let unknown = || SqlError::new(1094, format!("Unknown thread id: {id}"));
        let id = u32::try_from(id).map_err(|_| unknown())?;
        let p = self.entries.lock().get(&id).cloned().ok_or_else(unknown)?;
        let st = p.state.lock();
        if !privileged && st.user != user {
            return Err(SqlError::new(
                1095,
                format!("You are not owner of thread {id}"),
            ));
        }
        if connection {
            p.closed.cancel();
        }
        if let Some(r) = &st.running {
            r.token.cancel();
        }
        tracing::info!(id, by = user, connection, "KILL");
        Ok(())
    }
}

impl Process {
    /// The session's user or host changed (authentication, COM_CHANGE_USER).
    pub fn set_identity(&self, user: &str, host: &str) {
        let mut st = self.state.lock();
        st.user = user.into();
        st.host = host.into();
    }

    /// A statement of this session starts (counted in `list`'s
    /// `Questions`): it can be killed through `token` from now on.
    pub fn start(&self, list: &ProcessList, sql: &str, token: CancellationToken) {
        list.statements.fetch_add(1, Ordering::Relaxed);
        let mut st = self.state.lock();
        st.since = Instant::now();
        st.running = Some(Running {
            info: masked(sql),
            token,
            progress: None,
        });
    }

    /// The server is sending the result of `sql` (already counted by
    /// [`Process::start`]): listed as running, and `KILL QUERY` cancels
    /// `token`, on which the sending stops. [`Process::finish`] ends it.
    pub fn sending(&self, sql: &str, token: CancellationToken) {
        let mut st = self.state.lock();
        st.running = Some(Running {
            info: masked(sql),
            token,
            progress: None,
        });
    }

    /// The running statement's State in the process list from now on
    /// (a long statement's progress).
    pub fn set_progress(&self, progress: String) {
        if let Some(r) = self.state.lock().running.as_mut() {
            r.progress = Some(progress);
        }
    }

    /// The statement ended; the session is now in `db`.
    pub fn finish(&self, db: Option<&str>) {
        let mut st = self.state.lock();
        st.since = Instant::now();
        st.running = None;
        if st.db.as_deref() != db {
            st.db = db.map(str::to_string);
        }
    }

    fn info(&self) -> ProcessInfo {
        let st = self.state.lock();
        let killed = self.closed.is_cancelled();
        ProcessInfo {
            id: self.id,
            user: st.user.clone(),
            host: st.host.clone(),
            db: st.db.clone(),
            command: match (&st.running, killed) {
                (_, true) => "Killed",
                (Some(_), false) => "Query",
                (None, false) => "Sleep",
            },
            seconds: st.since.elapsed().as_secs(),
            state: match &st.running {
                Some(Running {
                    progress: Some(p), ..
                }) => p.clone(),
                Some(_) => "executing".into(),
                None => String::new(),
            },
            info: st.running.as_ref().map(|r| r.info.clone()),
        }
    }
}

/// A statement's text as the process list shows it: a password
/// (`IDENTIFIED BY '…'`, in CREATE / ALTER USER) is never shown, as in
/// MySQL — everything from the first IDENTIFIED on is `<secret>`.
pub(crate) fn masked(sql: &str) -> String {
    const WORD: &[u8] = b"identified";
    // ASCII case-insensitive, without a lowercase copy of the text (a
    // 100-row INSERT is ~14 KB). The word is ASCII, so `at` is a char
    // boundary.
    let b = sql.as_bytes();
    let at = memchr::memchr2_iter(b'i', b'I', b).find(|&i| {
        b.get(i..i + WORD.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(WORD))
    });
    match at {
        Some(at) => format!("{}IDENTIFIED <secret>", &sql[..at]),
        None => sql.to_string(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn passwords_never_reach_the_process_list() {
        assert_eq!(
            super::masked("CREATE USER bob IDENTIFIED BY 'hunter2'"),
            "CREATE USER bob IDENTIFIED <secret>"
        );
        assert_eq!(
            super::masked("ALTER USER x identified by 'p', y"),
            "ALTER USER x IDENTIFIED <secret>"
        );
        assert_eq!(super::masked("SELECT 1"), "SELECT 1");
        assert_eq!(
            super::masked("SET PASSWORD='é' IDENTIFIED"),
            "SET PASSWORD='é' IDENTIFIED <secret>"
        );
        assert_eq!(super::masked("SELECT 'identifie'"), "SELECT 'identifie'");
    }

    use super::*;

    #[test]
    fn ids_are_fresh_and_entries_leave() {
        let l = ProcessList::default();
        let a = l.allocate_id();
        let b = l.allocate_id();
        assert!(a != 0 && b != a);
        let pa = l.register(a, "u", "h");
        let _pb = l.register(b, "v", "h");
        assert_eq!(l.list().iter().map(|p| p.id).collect::<Vec<_>>(), [a, b]);
        // A replaced entry's old owner does not remove the new one.
        let pa2 = l.register(a, "u", "h");
        l.unregister(&pa);
        assert_eq!(l.list().len(), 2);
        l.unregister(&pa2);
        assert_eq!(l.list().len(), 1);
    }

    #[test]
    fn kill_cancels_the_running_statement_only_for_its_owner_or_privileged() {
        let l = ProcessList::default();
        let p = l.register(7, "alice", "h");
        let token = CancellationToken::new();
        p.start(&l, "SELECT SLEEP(9)", token.clone());
        assert_eq!(l.status()[4], ("Threads_running", 1));
        assert_eq!(l.list()[0].command, "Query");
        assert_eq!(l.kill(7, "bob", false, false).unwrap_err().code, 1095);
        assert!(!token.is_cancelled());
        assert_eq!(l.kill(8, "alice", false, false).unwrap_err().code, 1094);
        assert_eq!(
            l.kill(u64::MAX, "root", true, false).unwrap_err().code,
            1094
        );
        l.kill(7, "alice", false, false).unwrap();
        assert!(token.is_cancelled() && !p.closed.is_cancelled());
        p.finish(Some("db1"));
        let row = &l.list()[0];
        assert_eq!((row.command, row.db.as_deref()), ("Sleep", Some("db1")));
        // KILL CONNECTION of an idle session marks it for closing.
        l.kill(7, "root", true, true).unwrap();
        assert!(p.closed.is_cancelled());
        assert_eq!(l.list()[0].command, "Killed");
    }
}
