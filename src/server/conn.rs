//! One MySQL client connection on Tributary's own protocol layer
//! ([`super::protocol`]): the connection phase (authentication), then the
//! command loop that maps each command onto the connection's [`Session`].
//!
//! This module owns per-connection state: the session, the negotiated
//! capabilities, prepared statements (with their long data) and the
//! status flags every OK/EOF carries. It never runs a [`Session`] method
//! on a shared async runtime's own terms: every engine call runs in place
//! on the connection's own thread (see [`super`]), under `block_in_place`
//! on a multi-threaded runtime (the worker's other tasks move to the rest)
//! or in the blocking pool elsewhere, once per command (never per row). It never closes the connection for
//! an error in a command, only for a failed (re-)authentication, a
//! connection phase that is malformed or exceeds `connect_timeout`,
//! COM_QUIT, a closed socket, or a packet that is oversized or stalls
//! (those are answered by the caller, see [`ConnError`]). Prepared
//! statements and their long data are charged to the server's budgets
//! ([`super::limits`]) and give them back when dropped.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use thiserror::Error;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::Notify;

use super::auth::{random_salt, SALT_LEN};
use super::limits::{Charge, Over, StmtSlot};
use super::protocol::codes::{self, WireError};
use super::protocol::command::{decode_params, Command, ParamDecodeError};
use super::protocol::handshake::{self, HandshakeError, NATIVE_PASSWORD};
use super::protocol::packet::{put_lenenc_int, PacketError, PacketReader, PacketWriter};
use super::protocol::resultset::{self, ColumnDef};
use super::protocol::{caps, status, UTF8MB4_GENERAL_CI};
use super::{Shared, PREAUTH_MAX_PACKET};
use crate::db::{split_statements, Session};
use crate::error::{SqlError, SqlResult};
use crate::sql::params;
use crate::types::{ColumnKind, QueryResult};

/// Longest user name accepted in bytes (MySQL's is 32 characters).
const MAX_USER_BYTES: usize = 128;
/// Most placeholders in one prepared statement (MySQL's limit).
const MAX_PLACEHOLDERS: usize = 65_535;

thread_local! {
    /// Set on a thread that serves one connection alone (see
    /// `super::on_own_thread`): blocking there stalls nobody else.
    static ON_CONNECTION_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Mark the current thread as serving one connection alone: its engine
/// calls run in place instead of being handed off the async runtime.
pub(super) fn mark_connection_thread() {
    ON_CONNECTION_THREAD.with(|c| c.set(true));
    // A killed or over-budget statement's rows are freed after its error
    // is sent (`Conn::query`), so that KILL answers at once.
    crate::sql::budget::defer_teardown(true);
}

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

/// Why a connection ended abnormally.
#[derive(Debug, Error)]
pub enum ConnError {
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
    /// A client packet over `max_allowed_packet` (the caller answers 1153).
    #[error("packet of {size} bytes exceeds max_allowed_packet")]
    TooLarge { seq: u8, size: usize, unread: usize },
    /// A packet's body stalled past `net_read_timeout` (the caller answers
    /// 1159).
    #[error("timed out reading a packet")]
    ReadTimeout { seq: u8 },
    /// Authentication did not complete within `connect_timeout` (the
    /// caller answers 1159).
    #[error("connection phase exceeded connect_timeout")]
    ConnectTimeout,
}

/// Result of reading one packet: a packet, or the peer closed.
enum Read {
    Packet(u8, Vec<u8>),
    Closed,
}

async fn read_packet<R: AsyncRead + Unpin>(r: &mut PacketReader<R>) -> Result<Read, ConnError> {
    match r.read().await {
        Ok((seq, p)) => Ok(Read::Packet(seq, p)),
        Err(PacketError::Closed) => Ok(Read::Closed),
        Err(PacketError::Io(e)) => Err(ConnError::Io(e)),
        Err(PacketError::TooLarge { seq, size, unread }) => {
            Err(ConnError::TooLarge { seq, size, unread })
        }
        Err(PacketError::Timeout { seq }) => Err(ConnError::ReadTimeout { seq }),
    }
}

/// A prepared statement.
struct Prepared {
    sql: String,
    params: usize,
    /// Parameter types bound by the last execute that sent them.
    types: Vec<(u8, u8)>,
    long_data: HashMap<u16, Vec<u8>>,
    /// The bytes of `long_data`, charged to the budgets.
    long_charge: Charge,
    /// An error from COM_STMT_SEND_LONG_DATA, reported by the next execute.
    long_error: Option<WireError>,
    /// The statement text's bytes, charged while the statement exists.
    _text_charge: Charge,
    /// This statement's place in the server-wide count.
    _slot: StmtSlot,
}

impl Prepared {
    /// Drop the buffered long data and give its bytes back.
    fn clear_long_data(&mut self) {
        self.long_data = HashMap::new();
        self.long_charge.clear();
    }
}

/// The highest command number of the MySQL protocol
/// (`COM_RESET_CONNECTION`, 0x1f); anything above is not a command.
const LAST_COMMAND: u8 = 0x1f;

/// What the loop does after a command.
enum Flow {
    Continue,
    Close,
}

/// Per-connection state after authentication.
struct Conn {
    /// Counts this connection against `max_user_connections`.
    _user_slot: super::UserSlot,
    shared: Arc<Shared>,
    id: u32,
    peer_host: String,
    salt: [u8; SALT_LEN],
    caps: u32,
    user: String,
    privileged: bool,
    session: Arc<Mutex<Session>>,
    stmts: HashMap<u32, Prepared>,
    /// Bytes this connection's statements hold (their charges' sum).
    stmt_bytes: Arc<AtomicUsize>,
    next_stmt: u32,
    /// COM_STMT_SEND_LONG_DATA for an unknown statement: reported by the
    /// next COM_STMT_EXECUTE (SEND_LONG_DATA itself has no response).
    pending_error: Option<WireError>,
    /// Cleared by COM_SET_OPTION(MYSQL_OPTION_MULTI_STATEMENTS_OFF).
    multi_statements: bool,
}

fn invalid_utf8(what: &[u8]) -> WireError {
    let shown: String = what.iter().take(16).map(|b| format!("{b:02X}")).collect();
    WireError::new(
        codes::INVALID_CHARACTER_STRING,
        format!("Invalid utf8mb4 character string: '{shown}'"),
    )
}

fn access_denied(user: &str, host: &str, auth: &[u8]) -> WireError {
    WireError::new(
        codes::ACCESS_DENIED,
        format!(
            "Access denied for user '{user}'@'{host}' (using password: {})",
            if auth.is_empty() { "NO" } else { "YES" }
        ),
    )
}

async fn send_error<W: AsyncWrite + Unpin>(
    w: &mut PacketWriter<W>,
    e: &WireError,
) -> std::io::Result<()> {
    w.write(&e.payload()).await
}

/// What a client presented: user name, auth response, auth plugin.
struct Credentials<'a> {
    user: &'a [u8],
    auth: Vec<u8>,
    plugin: Option<&'a str>,
}

/// Authenticate the client's credentials against `salt`, asking the client to
/// switch to `mysql_native_password` first if it used another plugin.
/// Returns the user's privilege, or the error to send (then close).
async fn authenticate<R, W>(
    shared: &Shared,
    peer_host: &str,
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    req: Credentials<'_>,
    salt: &[u8; SALT_LEN],
) -> Result<Result<(String, bool), WireError>, ConnError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let Credentials {
        user,
        mut auth,
        plugin,
    } = req;
    if handshake::needs_switch(plugin) {
        writer
            .write(&handshake::auth_switch_request(NATIVE_PASSWORD, salt))
            .await?;
        writer.flush().await?;
        match read_packet(reader).await? {
            Read::Packet(seq, p) => {
                writer.set_seq(seq.wrapping_add(1));
                auth = p;
            }
            Read::Closed => {
                return Ok(Err(WireError::new(codes::HANDSHAKE_ERROR, "Bad handshake")))
            }
        }
    }
    // A name that is not UTF-8, has control characters or is implausibly
    // long is refused without looking it up (shown escaped).
    let user = match std::str::from_utf8(user) {
        Ok(u) if u.len() <= MAX_USER_BYTES && !u.chars().any(char::is_control) => u,
        _ => {
            let shown: String = String::from_utf8_lossy(user)
                .chars()
                .take(64)
                .flat_map(char::escape_debug)
                .collect();
            return Ok(Err(access_denied(&shown, peer_host, &auth)));
        }
    };
    match shared.users.check(user, peer_host, salt, &auth) {
        Ok(Some(privileged)) => Ok(Ok((user.to_string(), privileged))),
        Ok(None) => Ok(Err(access_denied(user, peer_host, &auth))),
        Err(e) => Ok(Err(WireError::from(&e))),
    }
}

/// Rows between two looks at KILL while a result is sent (and the size
/// from which a result is listed as running while it is sent).
const SEND_CHECK_ROWS: usize = 1024;

/// A result being sent: listed in the process list as running, its token
/// cancelled by KILL; the entry is finished when dropped.
struct Sending<'a> {
    session: &'a Mutex<Session>,
    token: tokio_util::sync::CancellationToken,
}

impl<'a> Sending<'a> {
    fn new(session: &'a Mutex<Session>, sql: &str) -> Self {
        let token = session.lock().sending(sql);
        Sending { session, token }
    }

    fn killed(&self) -> bool {
        self.token.is_cancelled()
    }
}

impl Drop for Sending<'_> {
    fn drop(&mut self) {
        self.session.lock().sent();
    }
}

/// Rows of a result after whose sending the connection's thread returns
/// freed memory to the system.
const RELEASE_ROWS: usize = 100_000;

/// Run blocking engine work `f` where it stalls no other connection: in
/// place on a connection's own thread (see [`super`]); under
/// `block_in_place` on a multi-threaded runtime (its worker hands its
/// other tasks to the rest: a hop to the blocking pool and back cost
/// ~100 µs per command on 2 cores); else in the blocking pool. A panic in
/// `f` comes back as an error.
async fn off_runtime<T, F>(f: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let panicked = |_| "it panicked".to_string();
    if ON_CONNECTION_THREAD.with(std::cell::Cell::get) {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(panicked);
    }
    if tokio::runtime::Handle::current().runtime_flavor()
        == tokio::runtime::RuntimeFlavor::MultiThread
    {
        let run = std::panic::AssertUnwindSafe(f);
        return tokio::task::block_in_place(|| std::panic::catch_unwind(run)).map_err(panicked);
    }
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| e.to_string())
}

/// Execute `statements` in order on `s`, stopping after the first error;
/// each result comes with the session's status flags right after it.
fn execute_all(s: &mut Session, statements: &[String]) -> Vec<(SqlResult<QueryResult>, u16)> {
    let mut out = Vec::with_capacity(statements.len());
    for st in statements {
        let t = std::time::Instant::now();
        let r = s.execute(st);
        let failed = r.is_err();
        if let Err(e) = &r {
            super::status::record_error(e.code, &e.message);
        }
        super::metrics::statement_done(super::metrics::statement_kind(st), !failed, t.elapsed());
        out.push((r, status::flags(s.in_transaction(), s.autocommit(), false)));
        if failed {
            break;
        }
    }
    out
}

/// A statement's request for a client file: its name, and where the
/// file's packets go.
type FileRequest = (String, tokio::sync::mpsc::Sender<Vec<u8>>);

/// Packets of a client file in flight between this task and the
/// statement (bounds the memory a LOCAL load holds).
const FILE_PACKETS_IN_FLIGHT: usize = 8;

/// The client's files, for a statement on a blocking thread.
struct ClientFiles {
    requests: tokio::sync::mpsc::Sender<FileRequest>,
}

impl crate::sql::load_spec::LocalFiles for ClientFiles {
    fn open(&self, name: &str) -> SqlResult<Box<dyn std::io::Read>> {
        let (tx, rx) = tokio::sync::mpsc::channel(FILE_PACKETS_IN_FLIGHT);
        self.requests
            .blocking_send((name.to_string(), tx))
            .map_err(|_| SqlError::internal("the connection is gone"))?;
        Ok(Box::new(ClientFile {
            rx,
            cur: Vec::new(),
            pos: 0,
        }))
    }
}

/// A client file as the statement reads it: packets until the empty one
/// (the channel closes).
struct ClientFile {
    rx: tokio::sync::mpsc::Receiver<Vec<u8>>,
    cur: Vec<u8>,
    pos: usize,
}

impl std::io::Read for ClientFile {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        while self.pos == self.cur.len() {
            match self.rx.blocking_recv() {
                Some(p) => {
                    self.cur = p;
                    self.pos = 0;
                }
                None => return Ok(0),
            }
        }
        let n = buf.len().min(self.cur.len() - self.pos);
        buf[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// A fresh session of connection `conn_id` for `user`, in database `db`
/// if given.
async fn new_session(
    shared: &Shared,
    conn_id: u32,
    user: String,
    privileged: bool,
    host: String,
    db: Option<String>,
    client_caps: u32,
) -> SqlResult<Session> {
    let database = shared.db.clone();
    match off_runtime(move || {
        let mut s = database.connection_session(conn_id);
        s.set_user(&user, privileged);
        s.set_host(&host);
        s.set_found_rows(client_caps & caps::FOUND_ROWS != 0);
        if let Some(db) = db {
            s.use_database(&db)?;
        }
        Ok(s)
    })
    .await
    {
        Ok(r) => r,
        Err(e) => Err(SqlError::internal(format!("cannot create session: {e}"))),
    }
}

/// Run one connection: handshake (within `connect_timeout`, with packets
/// limited to [`PREAUTH_MAX_PACKET`]), then commands until the client
/// quits or the socket closes.
pub(crate) async fn run<R, W>(
    shared: Arc<Shared>,
    id: u32,
    peer: SocketAddr,
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
    activity: Arc<Activity>,
) -> Result<(), ConnError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    reader.set_max(shared.max_allowed_packet.min(PREAUTH_MAX_PACKET));
    reader.set_body_timeout(Some(shared.net_read_timeout));
    let phase = connect(shared.clone(), id, peer, reader, writer);
    let conn = match tokio::time::timeout(shared.connect_timeout, phase).await {
        Ok(r) => r?,
        Err(_) => return Err(ConnError::ConnectTimeout),
    };
    let Some(mut conn) = conn else {
        return Ok(());
    };
    reader.set_max(shared.max_allowed_packet);
    loop {
        let killed = conn.killed();
        let idle = conn.idle_timeout();
        let read = tokio::select! {
            r = read_packet(reader) => r?,
            // KILL CONNECTION of an idle connection: close it now.
            _ = killed.cancelled() => return Ok(()),
            // Idle past wait_timeout / interactive_timeout: tell the client
            // why (as MySQL 8.0.24+ does), then close.
            _ = tokio::time::sleep(idle) => {
                writer.set_seq(0);
                let e = WireError::new(
                    codes::CLIENT_INTERACTION_TIMEOUT,
                    "The client was disconnected by the server because of inactivity. \
                     See wait_timeout and interactive_timeout for configuring this behavior.",
                );
                send_error(writer, &e).await?;
                writer.flush().await?;
                tracing::info!(conn = id, secs = idle.as_secs(), "idle session closed");
                return Ok(());
            }
        };
        let (seq, payload) = match read {
            Read::Packet(seq, p) => (seq, p),
            Read::Closed => return Ok(()),
        };
        let _busy = activity.begin();
        writer.set_seq(seq.wrapping_add(1));
        let flow = conn.dispatch(&payload, reader, writer).await?;
        writer.flush().await?;
        if matches!(flow, Flow::Close) || conn.killed().is_cancelled() {
            return Ok(());
        }
    }
}

/// The connection phase: greeting, handshake response, authentication and
/// the session. `None` when the client left or was refused (the error is
/// written).
async fn connect<R, W>(
    shared: Arc<Shared>,
    id: u32,
    peer: SocketAddr,
    reader: &mut PacketReader<R>,
    writer: &mut PacketWriter<W>,
) -> Result<Option<Conn>, ConnError>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let peer_host = peer.ip().to_string();
    let salt = random_salt();
    writer.set_seq(0);
    writer
        .write(&handshake::greeting(
            id,
            crate::SERVER_VERSION,
            &salt,
            status::AUTOCOMMIT,
            UTF8MB4_GENERAL_CI,
        ))
        .await?;
    writer.flush().await?;
    let (seq, payload) = match read_packet(reader).await? {
        Read::Packet(seq, p) => (seq, p),
        Read::Closed => return Ok(None),
    };
    writer.set_seq(seq.wrapping_add(1));
    let resp = match handshake::parse_response(&payload) {
        Ok(r) => r,
        Err(e) => {
            tracing::info!(conn = id, error = %e, "bad handshake");
            let msg = match e {
                HandshakeError::SslRequested => "SSL connection is not supported",
                _ => "Bad handshake",
            };
            send_error(writer, &WireError::new(codes::HANDSHAKE_ERROR, msg)).await?;
            return Ok(None);
        }
    };
    let verdict = authenticate(
        &shared,
        &peer_host,
        reader,
        writer,
        Credentials {
            user: &resp.user,
            auth: resp.auth.clone(),
            plugin: resp.plugin.as_deref(),
        },
        &salt,
    )
    .await?;
    let (user, privileged) = match verdict {
        Ok(x) => x,
        Err(e) => {
            tracing::info!(conn = id, "access denied");
            send_error(writer, &e).await?;
            return Ok(None);
        }
    };
    let Some(user_slot) = super::UserSlot::take(&shared, &user) else {
        tracing::info!(conn = id, user = %user, "max_user_connections reached");
        metrics::counter!("tributary_connections_refused_total", "reason" => "max_user_connections")
            .increment(1);
        let e = WireError::new(
            codes::TOO_MANY_USER_CONNECTIONS,
            format!("User {user} already has more than 'max_user_connections' active connections"),
        );
        send_error(writer, &e).await?;
        return Ok(None);
    };
    let db = match resp.database.map(String::from_utf8) {
        None => None,
        Some(Ok(db)) => Some(db),
        Some(Err(e)) => {
            let name = String::from_utf8_lossy(e.as_bytes()).into_owned();
            send_error(
                writer,
                &WireError::new(codes::BAD_DB, format!("Unknown database '{name}'")),
            )
            .await?;
            return Ok(None);
        }
    };
    let session = match new_session(
        &shared,
        id,
        user.clone(),
        privileged,
        peer_host.clone(),
        db,
        resp.caps,
    )
    .await
    {
        Ok(s) => s,
        Err(e) => {
            send_error(writer, &WireError::from(&e)).await?;
            return Ok(None);
        }
    };
    tracing::debug!(conn = id, user = %user, "authenticated");
    let conn = Conn {
        _user_slot: user_slot,
        shared,
        id,
        peer_host,
        salt,
        caps: resp.caps,
        user,
        privileged,
        session: Arc::new(Mutex::new(session)),
        stmts: HashMap::new(),
        stmt_bytes: Arc::new(AtomicUsize::new(0)),
        next_stmt: 1,
        pending_error: None,
        multi_statements: true,
    };
    conn.ok(writer, 0, 0, 0).await?;
    writer.flush().await?;
    Ok(Some(conn))
}

impl Conn {
    fn deprecate_eof(&self) -> bool {
        self.caps & caps::DEPRECATE_EOF != 0
    }

    /// Status flags of the session now.
    fn status(&self) -> u16 {
        let s = self.session.lock();
        status::flags(s.in_transaction(), s.autocommit(), false)
    }

    async fn ok<W: AsyncWrite + Unpin>(
        &self,
        w: &mut PacketWriter<W>,
        affected: u64,
        last_insert_id: u64,
        warnings: u16,
    ) -> std::io::Result<()> {
        w.write(&resultset::ok_packet(
            0,
            affected,
            last_insert_id,
            self.status(),
            warnings,
        ))
        .await
    }

    /// How long this session may sit idle between commands: its
    /// `interactive_timeout` when the client said it is interactive
    /// (`CLIENT_INTERACTIVE`: the `mysql`/`mariadb` CLI), else its
    /// `wait_timeout` (seconds, MySQL's default 28800, at least 1).
    fn idle_timeout(&self) -> Duration {
        let name = if self.caps & caps::INTERACTIVE != 0 {
            "interactive_timeout"
        } else {
            "wait_timeout"
        };
        let secs = self.session.lock().var_u64(name);
        Duration::from_secs(if secs == 0 { 28_800 } else { secs })
    }

    /// The session's [`Session::killed`]: `KILL CONNECTION` closes the
    /// connection, at once when idle, after the reply when busy. (Read
    /// between commands only, when no statement holds the session.)
    fn killed(&self) -> tokio_util::sync::CancellationToken {
        self.session.lock().killed()
    }

    /// Run `f` on the session, blocking this task's worker (see the module
    /// doc); a panic in `f` becomes an internal error of the statement.
    async fn with_session<T, F>(&self, f: F) -> SqlResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Session) -> SqlResult<T> + Send + 'static,
    {
        let s = self.session.clone();
        match off_runtime(move || f(&mut s.lock())).await {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(conn = self.id, error = %e, "statement failed to run");
                Err(SqlError::internal(format!(
                    "statement execution failed: {e}"
                )))
            }
        }
    }

    /// Execute `statements` in order, stopping after the first error; each
    /// result comes with the session's status flags right after it.
    async fn run_statements(&self, statements: Vec<String>) -> Vec<(SqlResult<QueryResult>, u16)> {
        let r = self
            .with_session(move |s| Ok(execute_all(s, &statements)))
            .await;
        r.unwrap_or_else(|e| vec![(Err(e), self.status())])
    }

    /// [`Conn::run_statements`] for statements that may ask the client
    /// for a file (`LOAD DATA LOCAL`): they run on a blocking thread
    /// while this task answers their requests — the 0xFB packet naming
    /// the file, then the client's packets streamed to the statement
    /// through a bounded channel up to the empty packet that ends the
    /// file (read to its end even when the statement stopped reading).
    async fn run_serving_files<R, W>(
        &self,
        statements: Vec<String>,
        reader: &mut PacketReader<R>,
        w: &mut PacketWriter<W>,
    ) -> Result<Vec<(SqlResult<QueryResult>, u16)>, ConnError>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let (req_tx, mut requests) = tokio::sync::mpsc::channel::<FileRequest>(1);
        let session = self.session.clone();
        let mut job = tokio::task::spawn_blocking(move || {
            let files = std::rc::Rc::new(ClientFiles { requests: req_tx });
            crate::sql::load_spec::with_local_files(files, || {
                execute_all(&mut session.lock(), &statements)
            })
        });
        loop {
            tokio::select! {
                r = &mut job => {
                    return Ok(r.unwrap_or_else(|e| {
                        tracing::error!(conn = self.id, error = %e, "statement failed to run");
                        vec![(
                            Err(SqlError::internal(format!("statement execution failed: {e}"))),
                            self.status(),
                        )]
                    }));
                }
                Some((name, chunks)) = requests.recv() => {
                    let mut p = vec![0xFB];
                    p.extend_from_slice(name.as_bytes());
                    w.write(&p).await?;
                    w.flush().await?;
                    let mut chunks = Some(chunks);
                    loop {
                        let (seq, data) = match read_packet(reader).await? {
                            Read::Packet(seq, data) => (seq, data),
                            Read::Closed => {
                                return Err(ConnError::Io(std::io::ErrorKind::UnexpectedEof.into()))
                            }
                        };
                        w.set_seq(seq.wrapping_add(1));
                        if data.is_empty() {
                            break;
                        }
                        if let Some(tx) = &chunks {
                            if tx.send(data).await.is_err() {
                                // The statement stopped reading: drain.
                                chunks = None;
                            }
                        }
                    }
                }
            }
        }
    }

    /// Write every statement's result in order (multi-results flagged with
    /// SERVER_MORE_RESULTS_EXISTS), ending with an error packet if the last
    /// one failed. `binary` selects the binary row format; `sql` is what
    /// the process list shows while a large result is sent.
    async fn write_results<W: AsyncWrite + Unpin>(
        &self,
        w: &mut PacketWriter<W>,
        results: &[(SqlResult<QueryResult>, u16)],
        binary: bool,
        sql: &str,
    ) -> std::io::Result<()> {
        let n = results.len();
        for (i, (r, st)) in results.iter().enumerate() {
            let more = i + 1 < n;
            let status = if more {
                st | status::MORE_RESULTS_EXISTS
            } else {
                *st
            };
            match r {
                Err(e) => return send_error(w, &WireError::from(e)).await,
                Ok(qr) => {
                    let warnings = qr.warnings.len().min(usize::from(u16::MAX)) as u16;
                    if qr.has_result_set() {
                        self.write_result_set(w, qr, status, warnings, binary, sql)
                            .await?;
                    } else if let Some(info) = &qr.info {
                        w.write(&resultset::ok_packet_with_info(
                            qr.affected_rows,
                            qr.last_insert_id,
                            status,
                            warnings,
                            info,
                        ))
                        .await?;
                    } else {
                        w.write(&resultset::ok_packet(
                            0,
                            qr.affected_rows,
                            qr.last_insert_id,
                            status,
                            warnings,
                        ))
                        .await?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Write one result set. A large one is listed in the process list
    /// while it is sent, and KILL QUERY / KILL CONNECTION stop it between
    /// rows with error 1317 (as MySQL ends a killed result set with an
    /// error packet).
    async fn write_result_set<W: AsyncWrite + Unpin>(
        &self,
        w: &mut PacketWriter<W>,
        qr: &QueryResult,
        status: u16,
        warnings: u16,
        binary: bool,
        sql: &str,
    ) -> std::io::Result<()> {
        let mut p = Vec::with_capacity(9);
        put_lenenc_int(&mut p, qr.columns.len() as u64);
        w.write(&p).await?;
        let kinds: Vec<ColumnKind> = qr.columns.iter().map(|c| c.kind).collect();
        let kinds = resultset::wire_kinds(&kinds, &qr.rows);
        for (i, c) in qr.columns.iter().enumerate() {
            let fractional =
                c.kind == ColumnKind::DateTime(None) && resultset::has_fraction(&qr.rows, i);
            let kind = kinds.get(i).copied().unwrap_or(c.kind);
            w.write(&ColumnDef::new(&c.name, kind, fractional).payload(false))
                .await?;
        }
        if !self.deprecate_eof() {
            w.write(&resultset::eof_packet(0, status)).await?;
        }
        // DOUBLE columns MySQL types with fixed decimals print them in
        // the text protocol (the binary one sends the double itself).
        let fixed: Vec<(usize, u8)> = qr
            .float_decimals
            .iter()
            .enumerate()
            .filter_map(|(i, d)| d.map(|d| (i, d)))
            .filter(|(i, _)| kinds.get(*i) == Some(&ColumnKind::Float))
            .collect();
        let sending = (qr.rows.len() >= SEND_CHECK_ROWS).then(|| Sending::new(&self.session, sql));
        for (i, row) in qr.rows.iter().enumerate() {
            if i % SEND_CHECK_ROWS == 0 && sending.as_ref().is_some_and(Sending::killed) {
                let e = WireError::new(
                    crate::error::code::QUERY_INTERRUPTED,
                    "Query execution was interrupted",
                );
                return send_error(w, &e).await;
            }
            let p = if binary {
                resultset::binary_row(row, &kinds)
            } else if fixed.is_empty() {
                resultset::text_row(row, &kinds)
            } else {
                let mut row = row.clone();
                for &(c, d) in &fixed {
                    if let Some(t) = row
                        .get(c)
                        .and_then(|v| crate::types::format_fixed_float(v, d))
                    {
                        row[c] = crate::types::Value::Text(t);
                    }
                }
                resultset::text_row(&row, &kinds)
            };
            w.write(&p).await?;
        }
        w.write(&resultset::end_packet(
            self.deprecate_eof(),
            status,
            warnings,
        ))
        .await
    }

    async fn dispatch<R, W>(
        &mut self,
        payload: &[u8],
        reader: &mut PacketReader<R>,
        w: &mut PacketWriter<W>,
    ) -> Result<Flow, ConnError>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        match Command::parse(payload) {
            Command::Quit => return Ok(Flow::Close),
            Command::Ping => self.ok(w, 0, 0, 0).await?,
            Command::InitDb(name) => self.init_db(w, name).await?,
            Command::Query(q) => self.query(reader, w, q).await?,
            Command::FieldList { table } => self.field_list(w, table).await?,
            Command::Statistics => self.statistics(w).await?,
            Command::ChangeUser(body) => return self.change_user(reader, w, body).await,
            Command::ResetConnection => {
                let db = self.session.lock().current_database().map(str::to_string);
                match self.replace_session(db).await {
                    Ok(()) => self.ok(w, 0, 0, 0).await?,
                    Err(e) => send_error(w, &WireError::from(&e)).await?,
                }
            }
            Command::SetOption(opt) => match opt {
                0 | 1 => {
                    self.multi_statements = opt == 0;
                    w.write(&resultset::end_packet(
                        self.deprecate_eof(),
                        self.status(),
                        0,
                    ))
                    .await?;
                }
                _ => send_error(w, &WireError::new(codes::UNKNOWN_COM, "Unknown command")).await?,
            },
            Command::StmtPrepare(sql) => self.prepare(w, sql).await?,
            Command::StmtExecute { id, params } => self.execute(w, id, params).await?,
            Command::StmtSendLongData { id, param, data } => self.send_long_data(id, param, data),
            Command::StmtClose(id) => {
                self.stmts.remove(&id);
            }
            Command::StmtReset(id) => match self.stmts.get_mut(&id) {
                Some(s) => {
                    s.clear_long_data();
                    s.long_error = None;
                    self.ok(w, 0, 0, 0).await?;
                }
                None => send_error(w, &unknown_stmt(id, "mysqld_stmt_reset")).await?,
            },
            Command::ProcessKill(id) => {
                let out = self
                    .run_statements(vec![format!("KILL CONNECTION {id}")])
                    .await;
                self.write_results(w, &out, false, "").await?;
            }
            Command::Unknown(byte) => {
                send_error(w, &WireError::new(codes::UNKNOWN_COM, "Unknown command")).await?;
                // A byte that is no MySQL command at all is garbage, not an
                // old client: answered, then closed (a legacy command number
                // keeps the connection, as MySQL does).
                if byte > LAST_COMMAND {
                    tracing::info!(conn = self.id, byte, "garbage command; closing");
                    return Ok(Flow::Close);
                }
            }
            Command::Malformed(byte) => {
                tracing::debug!(conn = self.id, command = byte, "malformed command");
                send_error(
                    w,
                    &WireError::new(codes::MALFORMED_PACKET, "Malformed communication packet"),
                )
                .await?;
            }
        }
        Ok(Flow::Continue)
    }

    async fn init_db<W: AsyncWrite + Unpin>(
        &mut self,
        w: &mut PacketWriter<W>,
        name: &[u8],
    ) -> std::io::Result<()> {
        let Ok(name) = std::str::from_utf8(name) else {
            return send_error(w, &invalid_utf8(name)).await;
        };
        let name = name.to_string();
        match self.with_session(move |s| s.use_database(&name)).await {
            Ok(()) => self.ok(w, 0, 0, 0).await,
            Err(e) => send_error(w, &WireError::from(&e)).await,
        }
    }

    async fn query<R, W>(
        &mut self,
        reader: &mut PacketReader<R>,
        w: &mut PacketWriter<W>,
        q: &[u8],
    ) -> Result<(), ConnError>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        self.shared.questions.fetch_add(1, Ordering::Relaxed);
        // Binary string literals (`_binary'…'` with raw bytes) become
        // X'…' literals; other bytes that are not UTF-8 are refused.
        let Some(q) = crate::sql::params::sql_text(q) else {
            return Ok(send_error(w, &invalid_utf8(q)).await?);
        };
        let q: &str = &q;
        let statements = split_statements(q);
        if statements.is_empty() {
            if q.trim().is_empty() {
                return Ok(
                    send_error(w, &WireError::new(codes::EMPTY_QUERY, "Query was empty")).await?,
                );
            }
            // Only comments (a MariaDB `/*M!…*/` line of a dump, or a
            // version-gated statement for a newer server): nothing to run.
            return Ok(self.ok(w, 0, 0, 0).await?);
        }
        if statements.len() > 1 && !self.multi_statements {
            return Ok(send_error(
                w,
                &WireError::new(
                    codes::PARSE,
                    "You have an error in your SQL syntax: multi-statements are turned off",
                ),
            )
            .await?);
        }
        let out = if self.caps & caps::LOCAL_FILES != 0
            && statements.iter().any(|s| crate::sql::load_spec::is_load(s))
        {
            self.run_serving_files(statements, reader, w).await?
        } else {
            self.run_statements(statements).await
        };
        let r = self.write_results(w, &out, false, q).await;
        // A large result's rows were made and freed on this thread: give
        // the memory back to the system (decision 023) — once the reply
        // is out, so that it waits for neither.
        let big = out
            .iter()
            .any(|(r, _)| r.as_ref().is_ok_and(|q| q.rows.len() >= RELEASE_ROWS));
        let r = match r {
            Ok(()) => w.flush().await,
            e => e,
        };
        drop(out);
        self.after_reply(big);
        Ok(r?)
    }

    /// After a reply: free what a failed statement left for later
    /// ([`crate::sql::budget::teardown`]) and, after that or a large
    /// result (`big`), return the thread's freed memory to the system.
    fn after_reply(&self, big: bool) {
        let buried = crate::sql::budget::teardown();
        if crate::sql::budget::take_release_due() || buried || big {
            crate::sql::budget::release_memory();
        }
    }

    async fn field_list<W: AsyncWrite + Unpin>(
        &mut self,
        w: &mut PacketWriter<W>,
        table: &[u8],
    ) -> std::io::Result<()> {
        let Ok(table) = std::str::from_utf8(table) else {
            return send_error(w, &invalid_utf8(table)).await;
        };
        let name = table.to_string();
        let cols = match self.with_session(move |s| s.table_columns(&name)).await {
            Ok(c) => c,
            Err(e) => return send_error(w, &WireError::from(&e)).await,
        };
        let schema = self
            .session
            .lock()
            .current_database()
            .unwrap_or_default()
            .to_string();
        for (name, ty) in &cols {
            let mut def = ColumnDef::new(name, kind_of_sql_type(ty), false);
            def.schema = schema.clone();
            def.table = table.to_string();
            w.write(&def.payload(true)).await?;
        }
        w.write(&resultset::end_packet(
            self.deprecate_eof(),
            self.status(),
            0,
        ))
        .await
    }

    async fn statistics<W: AsyncWrite + Unpin>(
        &mut self,
        w: &mut PacketWriter<W>,
    ) -> std::io::Result<()> {
        let uptime = self.shared.started.elapsed().as_secs().max(1);
        let questions = self.shared.questions.load(Ordering::Relaxed);
        let threads = self.shared.connections.load(Ordering::Relaxed);
        let text = format!(
            "Uptime: {uptime}  Threads: {threads}  Questions: {questions}  Slow queries: 0  \
             Opens: 0  Flush tables: 0  Open tables: 0  Queries per second avg: {:.3}",
            questions as f64 / uptime as f64
        );
        w.write(text.as_bytes()).await
    }

    /// Replace the session with a fresh one for the same user (the old one
    /// rolls back its open transaction when dropped); drop prepared
    /// statements.
    async fn replace_session(&mut self, db: Option<String>) -> Result<(), SqlError> {
        let fresh = new_session(
            &self.shared,
            self.id,
            self.user.clone(),
            self.privileged,
            self.peer_host.clone(),
            db,
            self.caps,
        )
        .await?;
        let old = std::mem::replace(&mut *self.session.lock(), fresh);
        // Dropping a session may roll back storage work: do it off the
        // async runtime.
        let _ = off_runtime(move || drop(old)).await;
        self.stmts.clear();
        self.pending_error = None;
        self.multi_statements = true;
        Ok(())
    }

    async fn change_user<R, W>(
        &mut self,
        reader: &mut PacketReader<R>,
        w: &mut PacketWriter<W>,
        body: &[u8],
    ) -> Result<Flow, ConnError>
    where
        R: AsyncRead + Unpin,
        W: AsyncWrite + Unpin,
    {
        let req = match handshake::parse_change_user(body, self.caps) {
            Ok(r) => r,
            Err(_) => {
                send_error(w, &WireError::new(codes::HANDSHAKE_ERROR, "Bad handshake")).await?;
                return Ok(Flow::Close);
            }
        };
        let salt = self.salt;
        let verdict = authenticate(
            &self.shared,
            &self.peer_host,
            reader,
            w,
            Credentials {
                user: &req.user,
                auth: req.auth.clone(),
                plugin: req.plugin.as_deref(),
            },
            &salt,
        )
        .await?;
        let (user, privileged) = match verdict {
            Ok(x) => x,
            Err(e) => {
                tracing::info!(conn = self.id, "access denied on change user");
                send_error(w, &e).await?;
                return Ok(Flow::Close);
            }
        };
        let db = match req.database.map(String::from_utf8) {
            None => None,
            Some(Ok(db)) => Some(db),
            Some(Err(e)) => {
                send_error(w, &invalid_utf8(e.as_bytes())).await?;
                return Ok(Flow::Close);
            }
        };
        self.user = user;
        self.privileged = privileged;
        if let Err(e) = self.replace_session(db).await {
            send_error(w, &WireError::from(&e)).await?;
            return Ok(Flow::Close);
        }
        self.ok(w, 0, 0, 0).await?;
        Ok(Flow::Continue)
    }

    async fn prepare<W: AsyncWrite + Unpin>(
        &mut self,
        w: &mut PacketWriter<W>,
        sql: &[u8],
    ) -> std::io::Result<()> {
        let Some(sql) = crate::sql::params::sql_text(sql) else {
            return send_error(w, &invalid_utf8(sql)).await;
        };
        let sql: &str = &sql;
        if split_statements(sql).len() > 1 {
            return send_error(
                w,
                &WireError::new(
                    codes::PARSE,
                    "You have an error in your SQL syntax: a prepared statement must be one statement",
                ),
            )
            .await;
        }
        let n = params::count_placeholders(sql);
        if n > MAX_PLACEHOLDERS {
            return send_error(
                w,
                &WireError::new(
                    codes::PS_MANY_PARAM,
                    "Prepared statement contains too many placeholders",
                ),
            )
            .await;
        }
        let limits = &self.shared.limits;
        let too_many = |what: &str, max: usize| {
            WireError::new(
                codes::MAX_PREPARED_STMT_COUNT_REACHED,
                format!("Can't create more than {what} statements (current value: {max})"),
            )
        };
        if self.stmts.len() >= limits.max_prepared_per_conn {
            let e = too_many(
                "max_prepared_stmt_per_connection",
                limits.max_prepared_per_conn,
            );
            return send_error(w, &e).await;
        }
        let Some(slot) = limits.stmt_slot() else {
            let e = too_many("max_prepared_stmt_count", limits.max_prepared);
            return send_error(w, &e).await;
        };
        let mut text_charge = Charge::new(limits.clone(), self.stmt_bytes.clone());
        if let Err(over) = text_charge.grow(sql.len()) {
            let e = self.over_budget(codes::OUT_OF_RESOURCES, over, "statement text");
            return send_error(w, &e).await;
        }
        let mut id = self.next_stmt;
        while self.stmts.contains_key(&id) || id == 0 {
            id = id.wrapping_add(1);
        }
        self.next_stmt = id.wrapping_add(1);
        self.stmts.insert(
            id,
            Prepared {
                sql: sql.to_string(),
                params: n,
                types: Vec::new(),
                long_data: HashMap::new(),
                long_charge: Charge::new(limits.clone(), self.stmt_bytes.clone()),
                long_error: None,
                _text_charge: text_charge,
                _slot: slot,
            },
        );
        // A query's result columns, planned with NULL parameters (drivers
        // such as sqlx name the row's columns from these); none for other
        // statements. The execute response carries its own definitions.
        let text = sql.to_string();
        let columns = self
            .with_session(move |s| Ok(s.describe(&text)))
            .await
            .ok()
            .flatten()
            .filter(|c| c.len() <= usize::from(u16::MAX))
            .unwrap_or_default();
        let mut p = Vec::with_capacity(12);
        p.push(0);
        p.extend_from_slice(&id.to_le_bytes());
        p.extend_from_slice(&(columns.len() as u16).to_le_bytes());
        p.extend_from_slice(&(n as u16).to_le_bytes());
        p.push(0);
        p.extend_from_slice(&0u16.to_le_bytes());
        w.write(&p).await?;
        if n > 0 {
            let def = ColumnDef::new("?", ColumnKind::Text, false).payload(false);
            for _ in 0..n {
                w.write(&def).await?;
            }
            if !self.deprecate_eof() {
                w.write(&resultset::eof_packet(0, self.status())).await?;
            }
        }
        if !columns.is_empty() {
            for c in &columns {
                w.write(&ColumnDef::new(&c.name, c.kind, false).payload(false))
                    .await?;
            }
            if !self.deprecate_eof() {
                w.write(&resultset::eof_packet(0, self.status())).await?;
            }
        }
        Ok(())
    }

    /// The error for a refused charge of `what`.
    fn over_budget(&self, code: u16, over: Over, what: &str) -> WireError {
        let l = &self.shared.limits;
        let (scope, option, max) = match over {
            Over::Connection => (
                "this connection",
                "max_stmt_bytes_per_connection",
                l.max_bytes_per_conn,
            ),
            Over::Server => ("the server", "max_stmt_bytes_total", l.max_bytes_total),
        };
        WireError::new(
            code,
            format!(
                "The {what} does not fit in the {max} bytes that prepared statements of {scope} may hold ({option}); close statements to free it"
            ),
        )
    }

    fn send_long_data(&mut self, id: u32, param: u16, data: &[u8]) {
        let max = self.shared.max_allowed_packet;
        let Some(stmt) = self.stmts.get_mut(&id) else {
            self.pending_error = Some(unknown_stmt(id, "mysqld_stmt_send_long_data"));
            return;
        };
        if stmt.long_error.is_some() {
            return;
        }
        if usize::from(param) >= stmt.params {
            stmt.long_error = Some(WireError::new(
                codes::WRONG_ARGUMENTS,
                "Incorrect arguments to mysqld_stmt_send_long_data",
            ));
            return;
        }
        if stmt.long_charge.bytes() + data.len() > max {
            stmt.clear_long_data();
            stmt.long_error = Some(WireError::new(
                codes::NET_PACKET_TOO_LARGE,
                "Parameter of prepared statement which is set through mysql_send_long_data() is longer than 'max_allowed_packet' bytes",
            ));
            return;
        }
        if let Err(over) = stmt.long_charge.grow(data.len()) {
            stmt.clear_long_data();
            let e = self.over_budget(codes::NET_PACKET_TOO_LARGE, over, "long data");
            if let Some(stmt) = self.stmts.get_mut(&id) {
                stmt.long_error = Some(e);
            }
            return;
        }
        stmt.long_data
            .entry(param)
            .or_default()
            .extend_from_slice(data);
    }

    async fn execute<W: AsyncWrite + Unpin>(
        &mut self,
        w: &mut PacketWriter<W>,
        id: u32,
        block: &[u8],
    ) -> std::io::Result<()> {
        self.shared.questions.fetch_add(1, Ordering::Relaxed);
        if let Some(e) = self.pending_error.take() {
            return send_error(w, &e).await;
        }
        let Some(stmt) = self.stmts.get_mut(&id) else {
            return send_error(w, &unknown_stmt(id, "mysqld_stmt_execute")).await;
        };
        let long_data = std::mem::take(&mut stmt.long_data);
        // Held (charged) until the statement has run, then given back.
        let long_charge = stmt.long_charge.take();
        if let Some(e) = stmt.long_error.take() {
            return send_error(w, &e).await;
        }
        let bound = match decode_params(block, stmt.params, &mut stmt.types, &long_data) {
            Ok(b) => b,
            Err(e) => {
                let msg = match e {
                    ParamDecodeError::BadTemporal(i) => {
                        format!("Incorrect temporal value for parameter {}", i + 1)
                    }
                    _ => "Incorrect arguments to mysqld_stmt_execute".to_string(),
                };
                return send_error(w, &WireError::new(codes::WRONG_ARGUMENTS, msg)).await;
            }
        };
        let sql = match params::substitute(&stmt.sql, &bound) {
            Ok(s) => s,
            Err(e) => return send_error(w, &WireError::new(e.code(), e.to_string())).await,
        };
        let out = self.run_statements(vec![sql.clone()]).await;
        // The statement has run: its long data is given back before the
        // reply goes out.
        drop((long_data, long_charge));
        let r = self.write_results(w, &out, true, &sql).await;
        let r = match r {
            Ok(()) => w.flush().await,
            e => e,
        };
        let big = out
            .iter()
            .any(|(r, _)| r.as_ref().is_ok_and(|q| q.rows.len() >= RELEASE_ROWS));
        drop(out);
        self.after_reply(big);
        r
    }
}

fn unknown_stmt(id: u32, command: &str) -> WireError {
    WireError::new(
        codes::UNKNOWN_STMT_HANDLER,
        format!("Unknown prepared statement handler ({id}) given to {command}"),
    )
}

/// The column kind of a SQL type as DESCRIBE prints it (COM_FIELD_LIST).
fn kind_of_sql_type(ty: &str) -> ColumnKind {
    let t = ty.trim().to_ascii_uppercase();
    let starts = |p: &str| t.starts_with(p);
    if starts("DATETIME") || starts("TIMESTAMP") {
        let fsp = t
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .and_then(|(a, _)| a.trim().parse::<u8>().ok());
        ColumnKind::DateTime(Some(fsp.unwrap_or(0)))
    } else if starts("DATE") {
        ColumnKind::Date
    } else if starts("DECIMAL") || starts("NUMERIC") {
        let inner = t
            .split_once('(')
            .and_then(|(_, r)| r.split_once(')'))
            .map(|(a, _)| a)
            .unwrap_or("10,0");
        let mut it = inner.split(',').map(|x| x.trim().parse::<u8>().ok());
        let precision = it.next().flatten().unwrap_or(10);
        let scale = it.next().flatten().unwrap_or(0);
        ColumnKind::Decimal { precision, scale }
    } else if starts("FLOAT") || starts("DOUBLE") || starts("REAL") {
        ColumnKind::Float
    } else if starts("VEC") {
        ColumnKind::Vector
    } else if starts("BINARY")
        || starts("VARBINARY")
        || ["TINYBLOB", "BLOB", "MEDIUMBLOB", "LONGBLOB"].contains(&t.as_str())
    {
        ColumnKind::Bytes
    } else if ["BOOL", "TINYINT", "SMALLINT", "MEDIUMINT", "INT", "BIGINT"]
        .iter()
        .any(|p| starts(p))
    {
        ColumnKind::Int
    } else {
        ColumnKind::Text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_types_map_to_kinds() {
        assert_eq!(kind_of_sql_type("BIGINT"), ColumnKind::Int);
        assert_eq!(kind_of_sql_type("INT UNSIGNED"), ColumnKind::Int);
        assert_eq!(kind_of_sql_type("DATETIME"), ColumnKind::DateTime(Some(0)));
        assert_eq!(
            kind_of_sql_type("DATETIME(3)"),
            ColumnKind::DateTime(Some(3))
        );
        assert_eq!(kind_of_sql_type("DATE"), ColumnKind::Date);
        assert_eq!(
            kind_of_sql_type("DECIMAL(6,2)"),
            ColumnKind::Decimal {
                precision: 6,
                scale: 2
            }
        );
        assert_eq!(kind_of_sql_type("VECF32(3)"), ColumnKind::Vector);
        assert_eq!(kind_of_sql_type("VARCHAR(20)"), ColumnKind::Text);
        assert_eq!(kind_of_sql_type("DOUBLE"), ColumnKind::Float);
    }

    #[test]
    fn error_messages() {
        let e = access_denied("x", "127.0.0.1", b"abc");
        assert_eq!(e.code, 1045);
        assert_eq!(
            e.message,
            "Access denied for user 'x'@'127.0.0.1' (using password: YES)"
        );
        assert_eq!(invalid_utf8(&[0xff, 0x41]).code, 1300);
        assert_eq!(unknown_stmt(9, "mysqld_stmt_execute").code, 1243);
    }
}
