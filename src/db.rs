//! The library API: [`Database`] (one open data directory) and [`Session`]
//! (one client's connection state: current database, transaction, settings).

use std::path::Path;
use std::sync::Arc;

use tributary_storage::{EmbeddedStorage, Storage};

use crate::catalog::IdAllocator;
use crate::config::Config;
use crate::error::{SqlError, SqlResult};
use crate::iscp::Iscp;
use crate::sql::{Engine, SessionState};
use crate::types::QueryResult;

/// An open database (one compute node over one storage). Cheap to clone.
///
/// Several `Database`s may share one storage ([`Database::open_shared`]):
/// that is how the multi-CN harness runs several compute nodes in one
/// process; exactly one of them holds the ISCP runner lease at a time.
#[derive(Clone)]
pub struct Database {
    inner: Arc<DbInner>,
}

struct DbInner {
    engine: Arc<Engine>,
}

impl Drop for DbInner {
    fn drop(&mut self) {
        self.engine.iscp.shutdown();
    }
}

/// Whether `s` names a PostgreSQL database.
pub fn is_postgres_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

impl Database {
    /// Open (or create) the database in directory `path` with default settings.
    pub fn open(path: impl AsRef<Path>) -> SqlResult<Database> {
        Self::open_with(path, Config::default())
    }

    /// Open with explicit settings.
    pub fn open_with(path: impl AsRef<Path>, mut config: Config) -> SqlResult<Database> {
        let path = path.as_ref();
        std::fs::create_dir_all(path).map_err(|e| {
            SqlError::internal(format!(
                "cannot create data directory {}: {e}",
                path.display()
            ))
        })?;
        let storage: Arc<dyn Storage> = EmbeddedStorage::open_with(path, config.storage)?;
        // Spill files go under the data directory; a crash's are swept —
        // once the storage is open, so never those of a process that
        // still holds the directory.
        if config.tmpdir.is_none() {
            let tmp = path.join("tmp");
            crate::sql::spill::remove_leftovers(&tmp)
                .map_err(|e| SqlError::internal(format!("cannot clean {}: {e}", tmp.display())))?;
            config.tmpdir = Some(tmp);
        }
        Self::open_shared(storage, config)
    }

    /// Open a compute node over a PostgreSQL database (`postgres://…`),
    /// shared with any number of other nodes; `config.node_name` names
    /// this one (unique among them).
    pub fn open_postgres(url: &str, config: Config) -> SqlResult<Database> {
        let mut opts = tributary_pgstore::PgOptions::new(url, config.node_name.clone());
        opts.pool_size = config.pg_pool_size;
        let storage: Arc<dyn Storage> = tributary_pgstore::PgStorage::open(opts)?;
        Self::open_shared(storage, config)
    }

    /// Open the storage `location` names: a `postgres://` or
    /// `postgresql://` URL, else the embedded engine in directory `data`.
    pub fn open_location(
        location: Option<&str>,
        data: impl AsRef<Path>,
        config: Config,
    ) -> SqlResult<Database> {
        match location {
            Some(url) if is_postgres_url(url) => Self::open_postgres(url, config),
            Some(other) => Err(SqlError::internal(format!(
                "unknown --storage {other:?}: expected postgres://user@host:port/db"
            ))),
            None => Self::open_with(data, config),
        }
    }

    /// A compute node over an existing storage (multi-CN in one process).
    pub fn open_shared(storage: Arc<dyn Storage>, config: Config) -> SqlResult<Database> {
        // Read by most statements (a table's definition, its database,
        // the user's grants, auto-increment counters).
        for table in [
            crate::catalog::SYS_DATABASES,
            crate::catalog::SYS_TABLES,
            crate::catalog::SYS_AUTOINC,
            crate::catalog::users::SYS_USERS,
        ] {
            storage.cache_latest(table);
        }
        let iscp = Iscp::new(storage.clone(), config.clone());
        let budget = Arc::new(crate::sql::budget::Global::new(
            config.statement_memory_total,
            config.statement_memory,
        ));
        let engine = Arc::new(Engine {
            budget,
            spill: Default::default(),
            storage,
            config,
            ids: IdAllocator::default(),
            iscp: iscp.clone(),
            processes: Default::default(),
            globals: Default::default(),
        });
        iscp.start()?;
        Ok(Database {
            inner: Arc::new(DbInner { engine }),
        })
    }

    /// A new session (autocommit on, no current database), as user `root`,
    /// with a fresh connection id.
    pub fn session(&self) -> Session {
        let id = self.inner.engine.processes.allocate_id();
        self.connection_session(id)
    }

    /// A new session for server connection `id` (an id from
    /// `ProcessList::allocate_id`),
    /// as user `root` until [`Session::set_user`].
    pub fn connection_session(&self, id: u32) -> Session {
        let engine = self.inner.engine.clone();
        let process = engine.processes.register(id, "root", "localhost");
        let mut state = SessionState::new("root", true, process);
        engine.globals.apply(&mut state);
        Session { engine, state }
    }

    /// The engine (for tools and tests: storage, ISCP handle, config).
    pub fn engine(&self) -> &Arc<Engine> {
        &self.inner.engine
    }

    /// Stop background work (ISCP runner) and wait for it.
    pub fn shutdown(&self) {
        self.inner.engine.iscp.shutdown();
    }
}

/// One connection's state. `Send`: a server may move it between threads.
pub struct Session {
    engine: Arc<Engine>,
    state: SessionState,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(t) = self.state.txn.take() {
            t.rollback();
        }
        self.state.table_locks.release();
        self.state.user_locks.release_all();
        self.engine.processes.unregister(&self.state.process);
    }
}

impl Session {
    /// The result columns a prepared statement's text will have (see
    /// [`crate::sql::Engine::describe`]).
    pub fn describe(&mut self, sql: &str) -> Option<Vec<crate::types::Column>> {
        self.engine.describe(&mut self.state, sql)
    }

    /// Execute exactly one SQL statement.
    pub fn execute(&mut self, sql: &str) -> SqlResult<QueryResult> {
        self.engine.execute(&mut self.state, sql)
    }

    /// Execute a script of `;`-separated statements; stops at the first
    /// error. Returns the result of every statement that ran.
    pub fn execute_script(
        &mut self,
        sql: &str,
    ) -> Result<Vec<QueryResult>, (Vec<QueryResult>, SqlError)> {
        let mut out = Vec::new();
        for s in split_statements(sql) {
            match self.execute(&s) {
                Ok(r) => out.push(r),
                Err(e) => return Err((out, e)),
            }
        }
        Ok(out)
    }

    /// Set the authenticated user; `privileged` users may use fault
    /// injection and admin statements.
    pub fn set_user(&mut self, user: &str, privileged: bool) {
        self.state.user = user.to_string();
        self.state.privileged = privileged;
        self.state.sees_all = privileged;
        self.state.process.set_identity(user, &self.state.host);
    }

    /// Set the client host of the session (an IP address; `localhost` by
    /// default): what privilege errors name and `localhost` accounts match.
    pub fn set_host(&mut self, host: &str) {
        self.state.host = host.to_string();
        self.state.process.set_identity(&self.state.user, host);
    }

    /// Report matched rather than changed rows for UPDATE (the client's
    /// CLIENT_FOUND_ROWS capability).
    pub fn set_found_rows(&mut self, on: bool) {
        self.state.found_rows = on;
    }

    /// The connection id (`CONNECTION_ID()`, `KILL`'s argument).
    pub fn connection_id(&self) -> u32 {
        self.state.process.id
    }

    /// The server starts sending the result of `sql`: until
    /// [`Session::sent`] the session is listed as running it, and `KILL
    /// QUERY` (or KILL CONNECTION) cancels the returned token — the
    /// server then stops sending with error 1317.
    pub fn sending(&self, sql: &str) -> tokio_util::sync::CancellationToken {
        let token = self.state.process.closed.child_token();
        self.state.process.sending(sql, token.clone());
        token
    }

    /// The result was sent (or sending stopped).
    pub fn sent(&self) {
        self.state.process.finish(self.state.db.as_deref());
    }

    /// Cancelled once `KILL CONNECTION` ended this session: the server
    /// closes the connection.
    pub fn killed(&self) -> tokio_util::sync::CancellationToken {
        self.state.process.closed.clone()
    }

    /// The authenticated user.
    pub fn user(&self) -> &str {
        &self.state.user
    }

    /// Current database (USE), if any.
    pub fn current_database(&self) -> Option<&str> {
        self.state.db.as_deref()
    }

    /// Switch the current database (COM_INIT_DB / USE).
    pub fn use_database(&mut self, db: &str) -> SqlResult<()> {
        self.execute(&format!("USE `{}`", db.replace('`', "``")))
            .map(|_| ())
    }

    /// Whether a transaction is open.
    pub fn in_transaction(&self) -> bool {
        self.state.txn.is_some()
    }

    /// A session variable as a count (0 when unset or not a number).
    pub fn var_u64(&self, name: &str) -> u64 {
        self.state.var_u64(name)
    }

    /// Whether autocommit is on (`SET autocommit = 0` turns it off).
    pub fn autocommit(&self) -> bool {
        self.state.autocommit
    }

    /// The columns of `table` (in the current database) as
    /// `(name, SQL type as DESCRIBE prints it)`: what COM_FIELD_LIST sends.
    /// 1146 for a missing table, 1046 without a current database.
    pub fn table_columns(&mut self, table: &str) -> SqlResult<Vec<(String, String)>> {
        let r = self.execute(&format!("DESCRIBE `{}`", table.replace('`', "``")))?;
        let text = |v: Option<&crate::types::Value>| {
            v.and_then(crate::types::Value::to_text).unwrap_or_default()
        };
        Ok(r.rows
            .iter()
            .map(|row| (text(row.first()), text(row.get(1))))
            .collect())
    }
}

/// Split a script into statements on `;`, honouring quotes and comments.
/// Empty statements are dropped.
pub fn split_statements(sql: &str) -> Vec<String> {
    if is_one_plain_statement(sql) {
        let s = sql.trim();
        return if s.is_empty() {
            Vec::new()
        } else {
            vec![s.to_string()]
        };
    }
    split_scanned(sql)
}

/// Text without `;`, `#`, `--` or `/*` is one statement as it stands: the
/// scan would copy it char by char (a 100-row INSERT is ~14 KB) only to
/// return it trimmed.
fn is_one_plain_statement(sql: &str) -> bool {
    !sql.bytes().any(|b| b == b';' || b == b'#') && !sql.contains("--") && !sql.contains("/*")
}

/// [`split_statements`] by a scan of every char.
fn split_scanned(sql: &str) -> Vec<String> {
    // Executable comments (`/*!40101 SET NAMES utf8mb4 */`) are statement
    // text, not comments: expand them before comments are dropped.
    let sql = &*crate::sql::parse::expand_versioned_comments(sql);
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = sql.chars().peekable();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            cur.push(c);
            if c == '\\' && q != '`' {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            } else if c == q {
                if chars.peek() == Some(&q) {
                    cur.push(q);
                    chars.next();
                } else {
                    quote = None;
                }
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => {
                quote = Some(c);
                cur.push(c);
            }
            '-' if chars.peek() == Some(&'-') => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        cur.push('\n');
                        break;
                    }
                }
            }
            '#' => {
                for n in chars.by_ref() {
                    if n == '\n' {
                        cur.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                // An optimizer hint (`/*+ MAX_EXECUTION_TIME(n) */`) is
                // statement text; any other comment is dropped.
                let hint = chars.peek() == Some(&'+');
                if hint {
                    cur.push_str("/*");
                }
                let mut prev = ' ';
                for n in chars.by_ref() {
                    if hint {
                        cur.push(n);
                    }
                    if prev == '*' && n == '/' {
                        break;
                    }
                    prev = n;
                }
                cur.push(' ');
            }
            ';' => {
                let s = cur.trim();
                if !s.is_empty() {
                    out.push(s.to_string());
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    let s = cur.trim();
    if !s.is_empty() {
        out.push(s.to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{is_one_plain_statement, split_scanned, split_statements};

    /// The shortcut for text without separators or comments returns what
    /// the scan returns (generated texts from the characters that matter).
    #[test]
    fn the_shortcut_agrees_with_the_scan() {
        let alphabet: &[&str] = &[
            "a", " ", "\n", "'", "\"", "`", "\\", "-", "--", "#", ";", "/", "*", "/*", "*/", "/*+",
            "/*!", "1", "\u{e9}",
        ];
        let mut seed = 0x2545_f491_4f6c_dd1d_u64;
        let mut shortcut = 0;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for _ in 0..20_000 {
            let mut text = String::new();
            for _ in 0..next(12) {
                text.push_str(alphabet[next(alphabet.len())]);
            }
            shortcut += usize::from(is_one_plain_statement(&text));
            assert_eq!(split_statements(&text), split_scanned(&text), "{text:?}");
        }
        assert!(shortcut > 1_000, "the shortcut was taken {shortcut} times");
    }

    #[test]
    fn split_keeps_optimizer_hints() {
        assert_eq!(
            split_statements("SELECT /*+ MAX_EXECUTION_TIME(5) */ 1; SELECT /* x */ 2"),
            vec!["SELECT /*+ MAX_EXECUTION_TIME(5) */  1", "SELECT   2"]
        );
    }

    #[test]
    fn split_honours_quotes_and_comments() {
        let v = split_statements("select 'a;b'; -- c;\nselect \"x;\" /* ; */ ; ; select 1");
        assert_eq!(v, vec!["select 'a;b'", "select \"x;\"", "select 1"]);
    }
}
