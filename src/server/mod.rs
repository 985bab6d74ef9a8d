//! MySQL wire-protocol server and admin HTTP.
//!
//! This module owns the listening socket, the connection limit, per
//! connection threads and graceful shutdown. Each connection runs on a
//! thread of its own with a single-threaded async runtime for its socket
//! and timers, so its statements run in place (MySQL's thread per
//! connection; measured: point SELECT +18 %, 100-row range +22 % over
//! handing each command off a shared worker). Every spawned task and
//! thread is owned by a [`TaskTracker`] and joined; shutdown is driven by
//! one [`CancellationToken`]. It never executes SQL itself (see [`conn`])
//! and never blocks the shared async runtime on the engine. The protocol is our own
//! ([`protocol`]), following MySQL 8's documented client/server protocol.
//!
//! Protocol behaviour (documented deviations from MySQL):
//! * A COM_QUERY with several statements is split with
//!   [`crate::db::split_statements`] and executed in order, stopping at the
//!   first error; every statement's result is sent (multi-results, flagged
//!   with `SERVER_MORE_RESULTS_EXISTS`), the failing one as an error
//!   packet. This happens whether or not the client asked for
//!   `CLIENT_MULTI_STATEMENTS`; only `COM_SET_OPTION(MULTI_STATEMENTS_OFF)`
//!   turns it off (then several statements are error 1064).
//! * `max_allowed_packet`: a client packet larger than the limit gets error
//!   1153 and the connection is closed (as MySQL does). The rest of the
//!   oversized packet is drained (bounded in bytes and time) first so the
//!   client can read the error instead of a reset.
//! * Every OK and EOF packet carries the real server status
//!   (`SERVER_STATUS_IN_TRANS`, `SERVER_STATUS_AUTOCOMMIT`,
//!   `SERVER_MORE_RESULTS_EXISTS`) and warning count; `CLIENT_DEPRECATE_EOF`
//!   is honoured when the client asks for it.
//! * Authentication is `mysql_native_password` only: a client asking for
//!   another plugin (e.g. `caching_sha2_password`) gets an
//!   AuthSwitchRequest. No TLS, compression or `LOAD DATA LOCAL`.
//! * Prepared statements report their parameter count at prepare time and
//!   their result columns at execute time only; no server-side cursors
//!   (COM_STMT_FETCH is error 1047). Bound values are substituted into the
//!   statement text as literals ([`crate::sql::params`]).
//! * COM_PROCESS_KILL is `KILL CONNECTION id`. The other legacy commands
//!   (COM_CREATE_DB, COM_REFRESH, replication, …) are error 1047 "Unknown
//!   command"; the connection stays open. A first byte above 0x1f is no
//!   command at all (garbage): 1047, then the connection is closed.
//! * COM_STATISTICS reports uptime, connections and questions; slow
//!   queries, opens and open tables are always 0.
//!
//! Bounded resources (all [`ServerOptions`] fields; see [`limits`]):
//! * `max_prepared_stmt_count` (default 16,382, MySQL's) caps prepared
//!   statements server-wide and `max_prepared_stmt_per_connection`
//!   (default 4,096) per connection; COM_STMT_PREPARE past either is error
//!   1461. A statement has at most 65,535 placeholders (error 1390).
//! * Bytes held by prepared statements, their text plus data buffered by
//!   COM_STMT_SEND_LONG_DATA, are budgeted per connection
//!   (`max_stmt_bytes_per_connection`, default 64 MiB) and server-wide
//!   (`max_stmt_bytes_total`, default 256 MiB); one statement's long data
//!   is also bounded by `max_allowed_packet`. Long data past a bound is
//!   dropped and the next COM_STMT_EXECUTE of that statement is error 1153
//!   (connection kept); a PREPARE whose text does not fit is error 1041.
//!   Everything is given back when a statement is closed, reset or
//!   executed, and when the connection ends.
//! * `connect_timeout` (default 10 s, MySQL's): a client that has not
//!   completed authentication by then gets error 1159 and is closed, which
//!   frees its `max_connections` slot. Connection-phase packets are
//!   limited to [`PREAUTH_MAX_PACKET`] bytes (larger: error 1153, close).
//! * `net_read_timeout` (default 30 s, MySQL's): once a packet header has
//!   arrived, its body must arrive within this time, or the client gets
//!   error 1159 and is closed (an idle client between commands is not
//!   timed out).
//!
//! Protocol errors are always answered: a packet that cannot be framed
//! (oversized, stalled) or a connection-phase packet that cannot be parsed
//! (error 1043; a malformed user name is 1045) gets an error packet and the
//! connection is closed. A well-framed command with bad arguments gets an
//! error (1835 malformed, 1047 unknown, 1243 unknown statement, 1300
//! invalid UTF-8) and the connection stays usable, since the framing is
//! still in step — except a first byte that is no command at all, which
//! is answered and closed.

pub mod auth;
pub mod conn;
pub mod http;
pub mod limits;
pub mod metrics;
pub mod status;

pub mod protocol;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::db::Database;
use auth::{UserSpec, UserTable};
use conn::{Activity, ConnError};
use limits::Limits;
use protocol::codes::{self, WireError};
use protocol::packet::{PacketReader, PacketWriter};

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// `host:port`; a host name (`localhost:6001`) is resolved at bind
    /// time and the first address that binds is used.
    pub listen: String,
    pub users: Vec<UserSpec>,
    /// Concurrent connections; more get error 1040. Default 151 (MySQL's).
    pub max_connections: usize,
    /// Largest client packet in bytes. Default 64 MiB (MySQL 8's).
    pub max_allowed_packet: usize,
    /// How long shutdown waits for in-flight statements. Default 5 s.
    pub shutdown_grace: Duration,
    /// Prepared statements server-wide; more get error 1461. Default
    /// 16,382 (MySQL's `max_prepared_stmt_count`).
    pub max_prepared_stmt_count: usize,
    /// Prepared statements of one connection; more get error 1461.
    /// Default 4,096, so that one connection cannot take the whole pool.
    pub max_prepared_stmt_per_connection: usize,
    /// Bytes one connection's prepared statements may hold (text plus
    /// long data). Default 64 MiB.
    pub max_stmt_bytes_per_connection: usize,
    /// Bytes all prepared statements may hold together. Default 256 MiB.
    pub max_stmt_bytes_total: usize,
    /// Time a client has to authenticate; then it is closed and its
    /// connection slot freed. Default 10 s (MySQL's `connect_timeout`).
    pub connect_timeout: Duration,
    /// Time the body of a packet may take once its header arrived.
    /// Default 30 s (MySQL's `net_read_timeout`).
    pub net_read_timeout: Duration,
    /// Concurrent connections of one account; more get error 1203 after
    /// authenticating. 0 (the default, MySQL's `max_user_connections`):
    /// only `max_connections` applies.
    pub max_user_connections: usize,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: "127.0.0.1:6001".to_string(),
            users: Vec::new(),
            max_connections: 151,
            max_allowed_packet: 64 << 20,
            shutdown_grace: Duration::from_secs(5),
            max_prepared_stmt_count: 16_382,
            max_prepared_stmt_per_connection: 4_096,
            max_stmt_bytes_per_connection: 64 << 20,
            max_stmt_bytes_total: 256 << 20,
            connect_timeout: Duration::from_secs(10),
            net_read_timeout: Duration::from_secs(30),
            max_user_connections: 0,
        }
    }
}

/// Server start-up failures.
#[derive(Debug, Error)]
pub enum ServerError {
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        addr: String,
        source: std::io::Error,
    },
    #[error("cannot resolve listen address {addr}: {reason}")]
    Resolve { addr: String, reason: String },
    #[error("admin endpoint {0} is not a loopback address; pass --admin-allow-remote to allow it")]
    RemoteAdmin(SocketAddr),
    #[error("cannot apply --user accounts: {0}")]
    Users(String),
    #[error("admin HTTP server failed: {0}")]
    Http(std::io::Error),
}

/// State shared by all connections.
pub struct Shared {
    pub(crate) db: Database,
    pub(crate) users: UserTable,
    max_allowed_packet: usize,
    shutdown_grace: Duration,
    pub(crate) limits: Arc<Limits>,
    connect_timeout: Duration,
    net_read_timeout: Duration,
    /// For COM_STATISTICS.
    started: Instant,
    questions: AtomicU64,
    connections: AtomicUsize,
    /// Connection threads started and not yet finished.
    threads: Arc<AtomicUsize>,
    /// `max_user_connections` (0: no per-account limit) and each
    /// account's authenticated connections.
    max_user_connections: usize,
    user_connections: parking_lot::Mutex<std::collections::HashMap<String, usize>>,
}

/// The `tributary_connections` gauge's share of one accepted connection
/// (dropped when the connection ends).
struct OpenConnection;

impl OpenConnection {
    fn new() -> OpenConnection {
        ::metrics::gauge!("tributary_connections_open").increment(1.0);
        OpenConnection
    }
}

impl Drop for OpenConnection {
    fn drop(&mut self) {
        ::metrics::gauge!("tributary_connections_open").decrement(1.0);
    }
}

/// One authenticated connection of an account, counted against
/// `max_user_connections` until dropped.
pub(crate) struct UserSlot {
    shared: Arc<Shared>,
    user: String,
}

impl UserSlot {
    /// Count a connection of `user`; `None` when the account already has
    /// `max_user_connections`.
    pub(crate) fn take(shared: &Arc<Shared>, user: &str) -> Option<UserSlot> {
        let mut counts = shared.user_connections.lock();
        let n = counts.entry(user.to_string()).or_default();
        if shared.max_user_connections > 0 && *n >= shared.max_user_connections {
            return None;
        }
        *n += 1;
        Some(UserSlot {
            shared: shared.clone(),
            user: user.to_string(),
        })
    }
}

impl Drop for UserSlot {
    fn drop(&mut self) {
        let mut counts = self.shared.user_connections.lock();
        if let Some(n) = counts.get_mut(&self.user) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.user);
            }
        }
    }
}

/// Largest packet accepted before authentication (a handshake response
/// with connection attributes is a few hundred bytes).
pub const PREAUTH_MAX_PACKET: usize = 64 << 10;

/// Bytes drained after an oversized packet before closing, and for how long.
const OVERSIZE_DRAIN_BYTES: usize = 64 << 20;
const OVERSIZE_DRAIN_TIME: Duration = Duration::from_secs(2);
/// Bound on writing a refusal/error to a client that does not read.
const ERROR_WRITE_TIMEOUT: Duration = Duration::from_secs(2);
/// Back-off after a failed accept (e.g. EMFILE): long enough not to spin on
/// an exhausted descriptor table, short enough to take connections again
/// as soon as one closes.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);
/// Slack on top of the grace period and the error write before shutdown
/// stops waiting for connection tasks (they hold no locks by then).
const SHUTDOWN_SLACK: Duration = Duration::from_secs(1);

/// A bound MySQL listener, ready to [`run`](MysqlServer::run).
pub struct MysqlServer {
    listener: TcpListener,
    shared: Arc<Shared>,
    max_connections: usize,
}

impl MysqlServer {
    /// Bind the listening socket (resolving a host name first).
    pub async fn bind(db: Database, opts: ServerOptions) -> Result<MysqlServer, ServerError> {
        let listener = bind_listener(&opts.listen).await?;
        let users = UserTable::open(db.clone(), &opts.users)
            .map_err(|e| ServerError::Users(e.to_string()))?;
        Ok(MysqlServer {
            listener,
            shared: Arc::new(Shared {
                db,
                users,
                max_allowed_packet: opts.max_allowed_packet,
                shutdown_grace: opts.shutdown_grace,
                limits: Arc::new(Limits::new(
                    opts.max_prepared_stmt_count,
                    opts.max_prepared_stmt_per_connection,
                    opts.max_stmt_bytes_per_connection,
                    opts.max_stmt_bytes_total,
                )),
                connect_timeout: opts.connect_timeout,
                net_read_timeout: opts.net_read_timeout,
                started: Instant::now(),
                questions: AtomicU64::new(0),
                connections: AtomicUsize::new(0),
                threads: Arc::default(),
                max_user_connections: opts.max_user_connections,
                user_connections: Default::default(),
            }),
            max_connections: opts.max_connections,
        })
    }

    /// The address actually bound (resolves port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// The prepared-statement budgets and what is in use (for tests and
    /// monitoring; stays valid after [`run`](MysqlServer::run) starts).
    pub fn limits(&self) -> Arc<Limits> {
        self.shared.limits.clone()
    }

    /// Connection threads running now (stays valid after
    /// [`run`](MysqlServer::run) starts; zero once it has returned).
    pub fn connection_threads(&self) -> Arc<AtomicUsize> {
        self.shared.threads.clone()
    }

    /// Accept connections until `shutdown` is cancelled, then wait for the
    /// connections to finish their in-flight statement (bounded by the
    /// shutdown grace period) and return.
    pub async fn run(self, shutdown: CancellationToken) {
        let tracker = TaskTracker::new();
        let permits = Arc::new(Semaphore::new(self.max_connections));
        loop {
            let accepted = tokio::select! {
                _ = shutdown.cancelled() => break,
                r = self.listener.accept() => r,
            };
            let (stream, peer) = match accepted {
                Ok(x) => x,
                Err(e) => {
                    // E.g. EMFILE: back off briefly instead of spinning.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::select! {
                        _ = shutdown.cancelled() => break,
                        _ = tokio::time::sleep(ACCEPT_BACKOFF) => continue,
                    }
                }
            };
            let id = self.shared.db.engine().processes.allocate_id();
            match permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    let shared = self.shared.clone();
                    let token = shutdown.clone();
                    let threads = self.shared.threads.clone();
                    ::metrics::counter!("tributary_connections_total").increment(1);
                    let open = OpenConnection::new();
                    tracker.spawn(on_own_thread(
                        id,
                        stream,
                        threads,
                        move |stream| async move {
                            let _open = open;
                            handle_connection(stream, peer, id, shared, token, permit).await
                        },
                    ));
                }
                Err(_) => {
                    tracing::warn!(%peer, "too many connections");
                    ::metrics::counter!("tributary_connections_refused_total", "reason" => "max_connections")
                        .increment(1);
                    tracker.spawn(refuse(stream));
                }
            }
        }
        drop(self.listener);
        tracker.close();
        let bound = self.shared.shutdown_grace + ERROR_WRITE_TIMEOUT + SHUTDOWN_SLACK;
        if tokio::time::timeout(bound, tracker.wait()).await.is_err() {
            tracing::warn!(
                remaining = tracker.len(),
                "connections did not finish within the shutdown bound"
            );
        }
    }
}

/// Resolve `addr` (`host:port`, host names allowed) and bind the first
/// address that works.
async fn bind_listener(addr: &str) -> Result<TcpListener, ServerError> {
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host(addr)
        .await
        .map_err(|e| ServerError::Resolve {
            addr: addr.to_string(),
            reason: e.to_string(),
        })?
        .collect();
    let mut last = None;
    for a in &addrs {
        match TcpListener::bind(a).await {
            Ok(l) => return Ok(l),
            Err(e) => last = Some(e),
        }
    }
    Err(match last {
        Some(source) => ServerError::Bind {
            addr: addr.to_string(),
            source,
        },
        None => ServerError::Resolve {
            addr: addr.to_string(),
            reason: "no addresses".to_string(),
        },
    })
}

/// Send error 1040 as the first packet and close.
async fn refuse(mut stream: TcpStream) {
    let pkt = codes::error_frame(
        0,
        &WireError::new(codes::TOO_MANY_CONNECTIONS, "Too many connections"),
    );
    let _ = tokio::time::timeout(ERROR_WRITE_TIMEOUT, async {
        stream.write_all(&pkt).await?;
        stream.shutdown().await
    })
    .await;
}

/// Stack of a connection thread. Statements are bounded to run within
/// 2 MiB (`tests/hardening.rs`); they run here beneath the connection's own
/// async frames, so the thread gets twice that (touched pages only cost
/// memory).
const CONNECTION_STACK: usize = 4 << 20;

/// Run a connection on a thread of its own, with a single-threaded async
/// runtime for its socket and timers: its statements then run in place on
/// that thread (like MySQL's thread per connection), with no hand-over of
/// an async worker per command. The returned future (owned by the
/// server's tracker) ends when the thread has finished and been joined.
async fn on_own_thread<F, Fut>(id: u32, stream: TcpStream, threads: Arc<AtomicUsize>, conn: F)
where
    F: FnOnce(TcpStream) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()>,
{
    let std_stream = match stream.into_std() {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(conn = id, error = %e, "cannot detach the connection's socket");
            return;
        }
    };
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let spawned = std::thread::Builder::new()
        .name(format!("conn-{id}"))
        .stack_size(CONNECTION_STACK)
        .spawn(move || {
            threads.fetch_add(1, Ordering::SeqCst);
            struct Finished(Arc<AtomicUsize>);
            impl Drop for Finished {
                fn drop(&mut self) {
                    self.0.fetch_sub(1, Ordering::SeqCst);
                }
            }
            let _finished = Finished(threads);
            let rt = match tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            {
                Ok(rt) => rt,
                Err(e) => {
                    tracing::warn!(conn = id, error = %e, "cannot start the connection's runtime");
                    return;
                }
            };
            conn::mark_connection_thread();
            rt.block_on(async move {
                match TcpStream::from_std(std_stream) {
                    Ok(s) => conn(s).await,
                    Err(e) => tracing::warn!(conn = id, error = %e, "cannot register the socket"),
                }
            });
            drop(rt);
            drop(_finished);
            let _ = done_tx.send(());
        });
    match spawned {
        Ok(handle) => {
            // Sent as the thread's last act (or dropped if it ends early).
            let _ = done_rx.await;
            let _ = tokio::task::spawn_blocking(move || handle.join()).await;
        }
        Err(e) => tracing::warn!(conn = id, error = %e, "cannot start a connection thread"),
    }
}

/// Counts a connection in [`Shared::connections`] while alive.
struct Counted(Arc<Shared>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.connections.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Bytes a connection reads from its socket at once.
const READ_BUFFER: usize = 16 * 1024;

async fn handle_connection(
    stream: TcpStream,
    peer: SocketAddr,
    id: u32,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    _permit: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    shared.connections.fetch_add(1, Ordering::Relaxed);
    let _counted = Counted(shared.clone());
    let (rd, wr) = stream.into_split();
    let activity = Arc::new(Activity::default());
    // Buffered: a packet's header and body (usually the whole command)
    // arrive in one read system call instead of two.
    let rd = tokio::io::BufReader::with_capacity(READ_BUFFER, rd);
    let mut reader = PacketReader::new(rd, shared.max_allowed_packet);
    let mut writer = PacketWriter::new(wr);
    tracing::debug!(conn = id, %peer, "connected");
    let result = {
        let run = conn::run(
            shared.clone(),
            id,
            peer,
            &mut reader,
            &mut writer,
            activity.clone(),
        );
        tokio::pin!(run);
        tokio::select! {
            r = &mut run => Some(r),
            _ = shutdown.cancelled() => {
                // Let the in-flight command finish (bounded), then close.
                let deadline = tokio::time::sleep(shared.shutdown_grace);
                tokio::pin!(deadline);
                tokio::select! {
                    r = &mut run => Some(r),
                    _ = activity.wait_idle() => None,
                    _ = &mut deadline => {
                        tracing::warn!(conn = id, "statement still running at shutdown");
                        None
                    }
                }
            }
        }
    };
    match result {
        Some(Ok(())) => tracing::debug!(conn = id, "disconnected"),
        Some(Err(ConnError::TooLarge { seq, size, unread })) => {
            tracing::info!(conn = id, size, "packet too large");
            writer.set_seq(seq.wrapping_add(1));
            let e = WireError::new(
                codes::NET_PACKET_TOO_LARGE,
                "Got a packet bigger than 'max_allowed_packet' bytes",
            );
            let _ = tokio::time::timeout(ERROR_WRITE_TIMEOUT, async {
                writer.write(&e.payload()).await?;
                writer.flush().await
            })
            .await;
            drain(reader.inner_mut(), unread).await;
        }
        Some(Err(e @ (ConnError::ReadTimeout { .. } | ConnError::ConnectTimeout))) => {
            tracing::info!(conn = id, error = %e, "closing a stalled connection");
            if let ConnError::ReadTimeout { seq } = e {
                writer.set_seq(seq.wrapping_add(1));
            }
            let e = WireError::new(
                codes::NET_READ_INTERRUPTED,
                "Got timeout reading communication packets",
            );
            let _ = tokio::time::timeout(ERROR_WRITE_TIMEOUT, async {
                writer.write(&e.payload()).await?;
                writer.flush().await
            })
            .await;
        }
        Some(Err(e)) => tracing::debug!(conn = id, error = %e, "connection ended"),
        None => {}
    }
    // Flush what was written (a final error, or the last response when
    // closing for shutdown between commands) and close.
    let _ = tokio::time::timeout(ERROR_WRITE_TIMEOUT, writer.shutdown()).await;
}
/// Read and discard up to `unread` (bounded) bytes so that closing does not
/// reset the connection before the client read our error.
async fn drain<R: tokio::io::AsyncRead + Unpin>(r: &mut R, unread: usize) {
    let mut left = unread.min(OVERSIZE_DRAIN_BYTES);
    let mut buf = vec![0u8; 64 << 10];
    let _ = tokio::time::timeout(OVERSIZE_DRAIN_TIME, async {
        while left > 0 {
            match r.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    })
    .await;
}
