//! One MySQL client connection: the opensrv-mysql shim that maps protocol
//! commands onto a [`Session`].
//!
//! This module owns result encoding (text and binary protocol), prepared
//! statement bookkeeping and error-packet mapping. It never runs a
//! [`Session`] method on the async runtime: every engine call goes through
//! `spawn_blocking`, one hop per command (never per row).

use std::collections::HashMap;
use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use opensrv_mysql::{
    AsyncMysqlShim, Column as WireColumn, ColumnFlags, ColumnType, ErrorKind, InitWriter,
    OkResponse, ParamParser, QueryResultWriter, StatementMetaWriter, StatusFlags, ToMysqlValue,
    ValueInner,
};
use parking_lot::Mutex;
use tokio::io::AsyncWrite;
use tokio::sync::Notify;

use super::auth::SALT_LEN;
use super::params::{self, Param};
use super::wire::AuthFailureSlot;
use super::Shared;
use crate::db::{split_statements, Session};
use crate::error::{code, SqlError, SqlResult};
use crate::types::{format_datetime, parse_datetime, ColumnKind, QueryResult, Value};

/// Most prepared statements one connection may hold
/// (MySQL's `max_prepared_stmt_count` is global; this is per connection).
const MAX_PREPARED_PER_CONN: usize = 16_382;

/// Whether a connection is inside a command; lets graceful shutdown wait
/// for the in-flight statement and then close an idle connection.
#[derive(Default)]
pub struct Activity {
    busy: AtomicBool,
    idle: Notify,
}

impl Activity {
    pub fn is_busy(&self) -> bool {
        self.busy.load(Ordering::Acquire)
    }

    /// Resolves after the current command (if any) ends.
    pub async fn wait_idle(&self) {
        while self.is_busy() {
            let notified = self.idle.notified();
            if !self.is_busy() {
                break;
            }
            notified.await;
        }
    }

    fn begin(self: &Arc<Self>) -> BusyGuard {
        self.busy.store(true, Ordering::Release);
        BusyGuard(self.clone())
    }
}

struct BusyGuard(Arc<Activity>);

impl Drop for BusyGuard {
    fn drop(&mut self) {
        self.0.busy.store(false, Ordering::Release);
        self.0.idle.notify_waiters();
    }
}

struct Prepared {
    sql: String,
    params: usize,
}

/// The per-connection shim.
pub struct Connection {
    shared: Arc<Shared>,
    session: Arc<Mutex<Session>>,
    conn_id: u32,
    salt: [u8; SALT_LEN],
    peer_host: String,
    auth_failure: AuthFailureSlot,
    activity: Arc<Activity>,
    stmts: HashMap<u32, Prepared>,
    next_stmt: u32,
    /// Column definitions of the response being written; kept here because
    /// opensrv borrows them for the writer's lifetime.
    scratch: Vec<Vec<WireColumn>>,
}

impl Connection {
    pub fn new(
        shared: Arc<Shared>,
        session: Session,
        conn_id: u32,
        peer_host: String,
        auth_failure: AuthFailureSlot,
        activity: Arc<Activity>,
    ) -> Self {
        Connection {
            shared,
            session: Arc::new(Mutex::new(session)),
            conn_id,
            salt: super::auth::random_salt(),
            peer_host,
            auth_failure,
            activity,
            stmts: HashMap::new(),
            next_stmt: 1,
            scratch: Vec::new(),
        }
    }

    /// Run `f` on the session in the blocking pool.
    async fn with_session<T, F>(&self, f: F) -> SqlResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Session) -> SqlResult<T> + Send + 'static,
    {
        let s = self.session.clone();
        match tokio::task::spawn_blocking(move || f(&mut s.lock())).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(conn = self.conn_id, error = %e, "statement task failed");
                Err(SqlError::internal(format!(
                    "statement execution failed: {e}"
                )))
            }
        }
    }

    /// Execute `statements` in order, stopping after the first error.
    async fn run_statements(&self, statements: Vec<String>) -> Vec<SqlResult<QueryResult>> {
        let r = self
            .with_session(move |s| {
                let mut out = Vec::with_capacity(statements.len());
                for st in &statements {
                    let r = s.execute(st);
                    let failed = r.is_err();
                    out.push(r);
                    if failed {
                        break;
                    }
                }
                Ok(out)
            })
            .await;
        r.unwrap_or_else(|e| vec![Err(e)])
    }
}

/// The opensrv error kind for a Tributary error code. opensrv's
/// `From<u16>` panics on codes it does not know, so only codes known to be
/// in its table are converted; anything else becomes 1105 with the original
/// code kept in the message.
fn error_kind(e: &SqlError) -> (ErrorKind, String) {
    use code::*;
    const KNOWN: &[u16] = &[
        DUP_ENTRY,
        PARSE,
        NO_SUCH_TABLE,
        BAD_DB,
        BAD_FIELD,
        DB_CREATE_EXISTS,
        DB_DROP_EXISTS,
        TABLE_EXISTS,
        NO_DB,
        DUP_KEYNAME,
        CANT_DROP_FIELD_OR_KEY,
        DATA_TOO_LONG,
        BAD_NULL,
        TRUNCATED_WRONG_VALUE,
        WRONG_VALUE_COUNT,
        LOCK_WAIT_TIMEOUT,
        LOCK_DEADLOCK,
        NOT_SUPPORTED,
        WRONG_ARGUMENTS,
        SPECIFIC_ACCESS_DENIED,
        ACCESS_DENIED,
        NET_PACKET_TOO_LARGE,
        DIVISION_BY_ZERO,
        UNKNOWN_ERROR,
        WRONG_COLUMN_NAME,
        NON_UNIQ,
        INVALID_GROUP_FUNC,
        WRONG_FIELD_WITH_GROUP,
        INCORRECT_VALUE,
        MULTIPLE_PRI_KEY,
        KEY_COLUMN_DOES_NOT_EXIST,
        UNKNOWN_FUNCTION,
        TOO_MANY_CONNECTIONS,
        QUERY_INTERRUPTED,
        FT_MATCHING_KEY_NOT_FOUND,
        WRONG_TYPE_FOR_VAR,
        UNKNOWN_SYSTEM_VARIABLE,
        1065, // ER_EMPTY_QUERY
        1047, // ER_UNKNOWN_COM_ERROR
        1243, // ER_UNKNOWN_STMT_HANDLER
        1461, // ER_MAX_PREPARED_STMT_COUNT_REACHED
    ];
    if KNOWN.contains(&e.code) {
        (ErrorKind::from(e.code), e.message.clone())
    } else {
        (
            ErrorKind::ER_UNKNOWN_ERROR,
            format!("[{}] {}", e.code, e.message),
        )
    }
}

fn wire_type(kind: ColumnKind) -> ColumnType {
    match kind {
        ColumnKind::Int => ColumnType::MYSQL_TYPE_LONGLONG,
        ColumnKind::Float => ColumnType::MYSQL_TYPE_DOUBLE,
        ColumnKind::Text => ColumnType::MYSQL_TYPE_VAR_STRING,
        ColumnKind::DateTime => ColumnType::MYSQL_TYPE_DATETIME,
    }
}

fn wire_columns(r: &QueryResult) -> Vec<WireColumn> {
    r.columns
        .iter()
        .map(|c| WireColumn {
            table: String::new(),
            column: c.name.clone(),
            coltype: wire_type(c.kind),
            colflags: ColumnFlags::empty(),
        })
        .collect()
}

fn ok_response(r: &QueryResult, more: bool) -> OkResponse {
    let mut status = StatusFlags::empty();
    if more {
        status |= StatusFlags::SERVER_MORE_RESULTS_EXISTS;
    }
    OkResponse {
        affected_rows: r.affected_rows,
        last_insert_id: r.last_insert_id,
        status_flags: status,
        // opensrv 0.7 always encodes 0 warnings in OK packets.
        warnings: r.warnings.len().min(usize::from(u16::MAX)) as u16,
        ..Default::default()
    }
}

fn write_lenenc_int<W: Write>(w: &mut W, n: u64) -> io::Result<()> {
    if n < 251 {
        w.write_all(&[n as u8])
    } else if n < 1 << 16 {
        w.write_all(&[0xfc])?;
        w.write_all(&(n as u16).to_le_bytes())
    } else if n < 1 << 24 {
        w.write_all(&[0xfd])?;
        w.write_all(&(n as u32).to_le_bytes()[..3])
    } else {
        w.write_all(&[0xfe])?;
        w.write_all(&n.to_le_bytes())
    }
}

fn write_lenenc_str<W: Write>(w: &mut W, s: &[u8]) -> io::Result<()> {
    write_lenenc_int(w, s.len() as u64)?;
    w.write_all(s)
}

/// A value on the wire, encoded as the column's declared kind.
struct WireValue<'a> {
    value: &'a Value,
    kind: ColumnKind,
}

impl WireValue<'_> {
    fn as_i64(&self) -> i64 {
        match self.value {
            Value::Int(i) => *i,
            Value::Bool(b) => i64::from(*b),
            Value::Float(f) => *f as i64,
            Value::DateTime(us) => *us,
            Value::Text(s) => s.trim().parse().unwrap_or(0),
            Value::Null | Value::Vector(_) => 0,
        }
    }

    fn as_f64(&self) -> f64 {
        match self.value {
            Value::Int(i) => *i as f64,
            Value::Bool(b) => f64::from(u8::from(*b)),
            Value::Float(f) => *f,
            Value::DateTime(us) => *us as f64,
            Value::Text(s) => s.trim().parse().unwrap_or(0.0),
            Value::Null | Value::Vector(_) => 0.0,
        }
    }
}

impl ToMysqlValue for WireValue<'_> {
    fn to_mysql_text<W: Write>(&self, w: &mut W) -> io::Result<()> {
        match self.value {
            Value::Null => w.write_all(&[0xfb]),
            Value::Text(s) => write_lenenc_str(w, s.as_bytes()),
            Value::Int(i) => write_lenenc_str(w, i.to_string().as_bytes()),
            other => write_lenenc_str(w, other.to_string().as_bytes()),
        }
    }

    fn to_mysql_bin<W: Write>(&self, w: &mut W, _c: &WireColumn) -> io::Result<()> {
        match self.kind {
            ColumnKind::Int => w.write_all(&self.as_i64().to_le_bytes()),
            ColumnKind::Float => w.write_all(&self.as_f64().to_le_bytes()),
            ColumnKind::Text => match self.value {
                Value::Text(s) => write_lenenc_str(w, s.as_bytes()),
                other => write_lenenc_str(w, other.to_string().as_bytes()),
            },
            ColumnKind::DateTime => {
                let us = match self.value {
                    Value::DateTime(us) => Some(*us),
                    Value::Text(s) => parse_datetime(s),
                    _ => None,
                };
                write_binary_datetime(w, us)
            }
        }
    }

    fn is_null(&self) -> bool {
        self.value.is_null()
    }
}

/// Binary DATETIME: length byte, then y(2) m d h i s [micros(4)].
fn write_binary_datetime<W: Write>(w: &mut W, us: Option<i64>) -> io::Result<()> {
    let Some(us) = us else {
        return w.write_all(&[0]);
    };
    // Reuse the canonical text form to get the civil fields.
    let text = format_datetime(us);
    let num = |r: std::ops::Range<usize>| -> u32 {
        text.get(r).and_then(|s| s.parse().ok()).unwrap_or(0)
    };
    let (y, mo, d, h, mi, s) = (
        num(0..4),
        num(5..7),
        num(8..10),
        num(11..13),
        num(14..16),
        num(17..19),
    );
    let micros = us.rem_euclid(1_000_000) as u32;
    if y > u32::from(u16::MAX) || text.len() < 19 {
        return w.write_all(&[0]);
    }
    w.write_all(&[if micros != 0 { 11 } else { 7 }])?;
    w.write_all(&(y as u16).to_le_bytes())?;
    w.write_all(&[mo as u8, d as u8, h as u8, mi as u8, s as u8])?;
    if micros != 0 {
        w.write_all(&micros.to_le_bytes())?;
    }
    Ok(())
}

/// Write `results` (one per executed statement) as MySQL results: every
/// statement's result in order (multi-results, flagged with
/// `SERVER_MORE_RESULTS_EXISTS`), ending with an error packet if the last
/// one failed.
async fn write_results<'a, W: AsyncWrite + Send + Unpin>(
    results: &'a [SqlResult<QueryResult>],
    columns: &'a [Vec<WireColumn>],
    mut w: QueryResultWriter<'a, W>,
) -> io::Result<()> {
    let n = results.len();
    for (i, (r, cols)) in results.iter().zip(columns).enumerate() {
        let more = i + 1 < n;
        match r {
            Err(e) => {
                let (kind, msg) = error_kind(e);
                return w.error(kind, msg.as_bytes()).await;
            }
            Ok(qr) if qr.has_result_set() => {
                let mut rw = w.start(cols).await?;
                for row in &qr.rows {
                    for (j, c) in qr.columns.iter().enumerate() {
                        rw.write_col(WireValue {
                            value: row.get(j).unwrap_or(&Value::Null),
                            kind: c.kind,
                        })?;
                    }
                    rw.end_row().await?;
                }
                w = rw.finish_one().await?;
            }
            Ok(qr) => {
                w = w.complete_one(ok_response(qr, more)).await?;
            }
        }
    }
    if n == 0 {
        return w
            .error(ErrorKind::ER_EMPTY_QUERY, "Query was empty".as_bytes())
            .await;
    }
    w.no_more_results().await
}

fn param_from_wire(v: ValueInner<'_>) -> Result<Param, String> {
    Ok(match v {
        ValueInner::NULL => Param::Null,
        ValueInner::Bytes(b) => Param::Bytes(b.to_vec()),
        ValueInner::Int(i) => Param::Int(i),
        ValueInner::UInt(u) => Param::UInt(u),
        ValueInner::Double(f) => Param::Double(f),
        ValueInner::Date(b) => Param::Temporal(
            params::format_binary_datetime(b, true).ok_or("malformed DATE parameter")?,
        ),
        ValueInner::Datetime(b) => Param::Temporal(
            params::format_binary_datetime(b, false).ok_or("malformed DATETIME parameter")?,
        ),
        ValueInner::Time(b) => {
            Param::Temporal(params::format_binary_time(b).ok_or("malformed TIME parameter")?)
        }
    })
}

#[async_trait]
impl<W: AsyncWrite + Send + Unpin> AsyncMysqlShim<W> for Connection {
    type Error = io::Error;

    fn version(&self) -> String {
        format!("8.0.36-tributary-{}", env!("CARGO_PKG_VERSION"))
    }

    fn connect_id(&self) -> u32 {
        self.conn_id
    }

    fn salt(&self) -> [u8; SALT_LEN] {
        self.salt
    }

    async fn authenticate(
        &self,
        auth_plugin: &str,
        username: &[u8],
        salt: &[u8],
        auth_data: &[u8],
    ) -> bool {
        let user = String::from_utf8_lossy(username).into_owned();
        let verdict = if auth_plugin == "mysql_native_password" {
            self.shared.users.verify(&user, salt, auth_data)
        } else {
            None
        };
        match verdict {
            Some(privileged) => {
                let u = user.clone();
                let r = self
                    .with_session(move |s| {
                        s.set_user(&u, privileged);
                        Ok(())
                    })
                    .await;
                tracing::debug!(conn = self.conn_id, user = %user, "authenticated");
                r.is_ok()
            }
            None => {
                tracing::info!(conn = self.conn_id, user = %user, "access denied");
                *self.auth_failure.lock() = Some(format!(
                    "Access denied for user '{user}'@'{}' (using password: {})",
                    self.peer_host,
                    if auth_data.is_empty() { "NO" } else { "YES" }
                ));
                false
            }
        }
    }

    async fn on_prepare<'a>(
        &'a mut self,
        query: &'a str,
        info: StatementMetaWriter<'a, W>,
    ) -> io::Result<()> {
        let _busy = self.activity.begin();
        if split_statements(query).len() > 1 {
            return info
                .error(
                    ErrorKind::ER_PARSE_ERROR,
                    "You have an error in your SQL syntax: a prepared statement must be one statement"
                        .as_bytes(),
                )
                .await;
        }
        if self.stmts.len() >= MAX_PREPARED_PER_CONN {
            return info
                .error(
                    ErrorKind::ER_MAX_PREPARED_STMT_COUNT_REACHED,
                    format!(
                        "Can't create more than max_prepared_stmt_count statements (current value: {MAX_PREPARED_PER_CONN})"
                    )
                    .as_bytes(),
                )
                .await;
        }
        let id = self.next_stmt;
        self.next_stmt = self.next_stmt.wrapping_add(1).max(1);
        let n = params::count_placeholders(query);
        self.stmts.insert(
            id,
            Prepared {
                sql: query.to_string(),
                params: n,
            },
        );
        self.scratch = vec![(0..n)
            .map(|_| WireColumn {
                table: String::new(),
                column: "?".into(),
                coltype: ColumnType::MYSQL_TYPE_VAR_STRING,
                colflags: ColumnFlags::empty(),
            })
            .collect()];
        let this: &'a Connection = self;
        // Result columns are unknown until execution; the execute response
        // carries its own column definitions.
        info.reply(id, &this.scratch[0], std::iter::empty()).await
    }

    async fn on_execute<'a>(
        &'a mut self,
        id: u32,
        params: ParamParser<'a>,
        results: QueryResultWriter<'a, W>,
    ) -> io::Result<()> {
        let _busy = self.activity.begin();
        let Some(stmt) = self.stmts.get(&id) else {
            return results
                .error(
                    ErrorKind::ER_UNKNOWN_STMT_HANDLER,
                    format!(
                        "Unknown prepared statement handler ({id}) given to mysqld_stmt_execute"
                    )
                    .as_bytes(),
                )
                .await;
        };
        // opensrv's parameter decoder panics on malformed packets; contain
        // that to this command.
        let decoded = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            params
                .into_iter()
                .map(|p| param_from_wire(p.value.into_inner()))
                .collect::<Result<Vec<Param>, String>>()
        }));
        let bound = match decoded {
            Ok(Ok(v)) => v,
            Ok(Err(msg)) => {
                return results
                    .error(ErrorKind::ER_WRONG_ARGUMENTS, msg.as_bytes())
                    .await
            }
            Err(_) => {
                return results
                    .error(
                        ErrorKind::ER_WRONG_ARGUMENTS,
                        "Incorrect arguments to mysqld_stmt_execute".as_bytes(),
                    )
                    .await
            }
        };
        if bound.len() != stmt.params {
            return results
                .error(
                    ErrorKind::ER_WRONG_ARGUMENTS,
                    "Incorrect arguments to mysqld_stmt_execute".as_bytes(),
                )
                .await;
        }
        let sql = match params::substitute(&stmt.sql, &bound) {
            Ok(s) => s,
            Err(e) => {
                return results
                    .error(ErrorKind::ER_WRONG_ARGUMENTS, e.to_string().as_bytes())
                    .await
            }
        };
        let out = self.run_statements(vec![sql]).await;
        self.scratch = out
            .iter()
            .map(|r| r.as_ref().map(wire_columns).unwrap_or_default())
            .collect();
        let this: &'a Connection = self;
        write_results(&out, &this.scratch, results).await
    }

    async fn on_close<'a>(&'a mut self, stmt: u32)
    where
        W: 'async_trait,
    {
        self.stmts.remove(&stmt);
    }

    async fn on_query<'a>(
        &'a mut self,
        query: &'a str,
        results: QueryResultWriter<'a, W>,
    ) -> io::Result<()> {
        let _busy = self.activity.begin();
        let statements = split_statements(query);
        let out = if statements.is_empty() {
            Vec::new()
        } else {
            self.run_statements(statements).await
        };
        self.scratch = out
            .iter()
            .map(|r| r.as_ref().map(wire_columns).unwrap_or_default())
            .collect();
        let this: &'a Connection = self;
        write_results(&out, &this.scratch, results).await
    }

    async fn on_init<'a>(&'a mut self, db: &'a str, w: InitWriter<'a, W>) -> io::Result<()> {
        let _busy = self.activity.begin();
        let name = db.to_string();
        match self.with_session(move |s| s.use_database(&name)).await {
            Ok(()) => w.ok().await,
            Err(e) => {
                let (kind, msg) = error_kind(&e);
                w.error(kind, msg.as_bytes()).await
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn enc_text(v: &Value) -> Vec<u8> {
        let mut out = Vec::new();
        WireValue {
            value: v,
            kind: ColumnKind::Text,
        }
        .to_mysql_text(&mut out)
        .unwrap();
        out
    }

    #[test]
    fn text_encoding() {
        assert_eq!(enc_text(&Value::Null), vec![0xfb]);
        assert_eq!(enc_text(&Value::Int(42)), b"\x0242".to_vec());
        assert_eq!(enc_text(&Value::Text("ab".into())), b"\x02ab".to_vec());
        let long = "x".repeat(300);
        let e = enc_text(&Value::Text(long));
        assert_eq!(&e[..3], &[0xfc, 0x2c, 0x01]);
    }

    #[test]
    fn binary_datetime_encoding() {
        let col = WireColumn {
            table: String::new(),
            column: "d".into(),
            coltype: ColumnType::MYSQL_TYPE_DATETIME,
            colflags: ColumnFlags::empty(),
        };
        let us = parse_datetime("2026-12-02 16:25:41.5").unwrap();
        let mut out = Vec::new();
        WireValue {
            value: &Value::DateTime(us),
            kind: ColumnKind::DateTime,
        }
        .to_mysql_bin(&mut out, &col)
        .unwrap();
        assert_eq!(out[0], 11);
        assert_eq!(
            params::format_binary_datetime(&out[1..], false).as_deref(),
            Some("2026-12-02 16:25:41.500000")
        );
    }

    #[test]
    fn unknown_codes_do_not_panic() {
        let (k, msg) = error_kind(&SqlError::new(4000, "boom"));
        assert_eq!(k as u16, 1105);
        assert_eq!(msg, "[4000] boom");
        let (k, _) = error_kind(&SqlError::new(code::NO_SUCH_TABLE, "x"));
        assert_eq!(k as u16, 1146);
    }
}
