//! MySQL wire-protocol server and admin HTTP.
//!
//! This module owns the listening socket, the connection limit, per
//! connection tasks and graceful shutdown. Every spawned task is owned by a
//! [`TaskTracker`] and joined; shutdown is driven by one
//! [`CancellationToken`]. It never executes SQL itself (see [`mysql`]) and
//! never blocks the async runtime on the engine.
//!
//! Protocol behaviour (documented deviations from MySQL):
//! * A COM_QUERY with several statements is split with
//!   [`crate::db::split_statements`] and executed in order, stopping at the
//!   first error; every statement's result is sent (multi-results), the
//!   failing one as an error packet. This happens whether or not the client
//!   asked for `CLIENT_MULTI_STATEMENTS`.
//! * `max_allowed_packet`: a client packet larger than the limit gets error
//!   1153 and the connection is closed (as MySQL does). The rest of the
//!   oversized packet is drained (bounded in bytes and time) first so the
//!   client can read the error instead of a reset.
//! * OK packets carry affected rows and last insert id; opensrv-mysql 0.7
//!   always encodes a warning count of 0.
//! * Prepared statements report their result columns at execute time only.

pub mod auth;
pub mod http;
pub mod mysql;
pub mod params;
pub mod wire;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use opensrv_mysql::{AsyncMysqlIntermediary, IntermediaryOptions};
use parking_lot::Mutex;
use thiserror::Error;
use tokio::io::{AsyncReadExt, AsyncWriteExt, BufWriter};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::db::Database;
use crate::error::code;
use auth::{UserSpec, UserTable};
use wire::{HandshakeWriter, LimitReader};

/// Server settings.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub listen: SocketAddr,
    pub users: Vec<UserSpec>,
    /// Concurrent connections; more get error 1040. Default 151 (MySQL's).
    pub max_connections: usize,
    /// Largest client packet in bytes. Default 64 MiB (MySQL 8's).
    pub max_allowed_packet: usize,
    /// How long shutdown waits for in-flight statements. Default 5 s.
    pub shutdown_grace: Duration,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], 6001)),
            users: Vec::new(),
            max_connections: 151,
            max_allowed_packet: 64 << 20,
            shutdown_grace: Duration::from_secs(5),
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
    #[error("admin endpoint {0} is not a loopback address; pass --admin-allow-remote to allow it")]
    RemoteAdmin(SocketAddr),
    #[error("admin HTTP server failed: {0}")]
    Http(std::io::Error),
}

/// State shared by all connections.
pub struct Shared {
    pub(crate) db: Database,
    pub(crate) users: UserTable,
    max_allowed_packet: usize,
    shutdown_grace: Duration,
}

/// Bytes drained after an oversized packet before closing, and for how long.
const OVERSIZE_DRAIN_BYTES: usize = 64 << 20;
const OVERSIZE_DRAIN_TIME: Duration = Duration::from_secs(2);
/// Output buffer per connection (rows are batched into it).
const WRITE_BUFFER: usize = 64 << 10;
/// Bound on writing a refusal/error to a client that does not read.
const ERROR_WRITE_TIMEOUT: Duration = Duration::from_secs(2);

/// A bound MySQL listener, ready to [`run`](MysqlServer::run).
pub struct MysqlServer {
    listener: TcpListener,
    shared: Arc<Shared>,
    max_connections: usize,
}

impl MysqlServer {
    /// Bind the listening socket.
    pub async fn bind(db: Database, opts: ServerOptions) -> Result<MysqlServer, ServerError> {
        let listener =
            TcpListener::bind(opts.listen)
                .await
                .map_err(|source| ServerError::Bind {
                    addr: opts.listen.to_string(),
                    source,
                })?;
        Ok(MysqlServer {
            listener,
            shared: Arc::new(Shared {
                db,
                users: UserTable::new(&opts.users),
                max_allowed_packet: opts.max_allowed_packet,
                shutdown_grace: opts.shutdown_grace,
            }),
            max_connections: opts.max_connections,
        })
    }

    /// The address actually bound (resolves port 0).
    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Accept connections until `shutdown` is cancelled, then wait for the
    /// connections to finish their in-flight statement (bounded by the
    /// shutdown grace period) and return.
    pub async fn run(self, shutdown: CancellationToken) {
        let tracker = TaskTracker::new();
        let permits = Arc::new(Semaphore::new(self.max_connections));
        let next_id = AtomicU32::new(1);
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
                        _ = tokio::time::sleep(Duration::from_millis(100)) => continue,
                    }
                }
            };
            let id = next_id.fetch_add(1, Ordering::Relaxed);
            match permits.clone().try_acquire_owned() {
                Ok(permit) => {
                    let shared = self.shared.clone();
                    let token = shutdown.clone();
                    tracker.spawn(async move {
                        handle_connection(stream, peer, id, shared, token, permit).await;
                    });
                }
                Err(_) => {
                    tracing::warn!(%peer, "too many connections");
                    tracker.spawn(refuse(stream));
                }
            }
        }
        drop(self.listener);
        tracker.close();
        let bound = self.shared.shutdown_grace + ERROR_WRITE_TIMEOUT + Duration::from_secs(1);
        if tokio::time::timeout(bound, tracker.wait()).await.is_err() {
            tracing::warn!(
                remaining = tracker.len(),
                "connections did not finish within the shutdown bound"
            );
        }
    }
}

/// Send error 1040 as the first packet and close.
async fn refuse(mut stream: TcpStream) {
    let pkt = wire::error_packet(
        0,
        code::TOO_MANY_CONNECTIONS,
        "08004",
        "Too many connections",
    );
    let _ = tokio::time::timeout(ERROR_WRITE_TIMEOUT, async {
        stream.write_all(&pkt).await?;
        stream.shutdown().await
    })
    .await;
}

async fn handle_connection(
    stream: TcpStream,
    peer: SocketAddr,
    id: u32,
    shared: Arc<Shared>,
    shutdown: CancellationToken,
    _permit: OwnedSemaphorePermit,
) {
    let _ = stream.set_nodelay(true);
    let db = shared.db.clone();
    let session = match tokio::task::spawn_blocking(move || db.session()).await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(conn = id, error = %e, "cannot create session");
            return;
        }
    };
    let (rd, wr) = stream.into_split();
    let auth_failure: wire::AuthFailureSlot = Arc::new(Mutex::new(None));
    let activity = Arc::new(mysql::Activity::default());
    let mut reader = LimitReader::new(rd, shared.max_allowed_packet);
    let mut writer =
        BufWriter::with_capacity(WRITE_BUFFER, HandshakeWriter::new(wr, auth_failure.clone()));
    let conn = mysql::Connection::new(
        shared.clone(),
        session,
        id,
        peer.ip().to_string(),
        auth_failure,
        activity.clone(),
    );
    let opts = IntermediaryOptions {
        process_use_statement_on_query: true,
        reject_connection_on_dbname_absence: false,
    };
    tracing::debug!(conn = id, %peer, "connected");
    let result = {
        let run = AsyncMysqlIntermediary::run_with_options(conn, &mut reader, &mut writer, &opts);
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
        Some(Err(e)) => {
            if let Some(o) = reader.oversize() {
                tracing::info!(conn = id, size = o.size, "packet too large");
                let pkt = wire::error_packet(
                    o.seq.wrapping_add(1),
                    code::NET_PACKET_TOO_LARGE,
                    "08S01",
                    "Got a packet bigger than 'max_allowed_packet' bytes",
                );
                let _ = tokio::time::timeout(ERROR_WRITE_TIMEOUT, async {
                    writer.write_all(&pkt).await?;
                    writer.flush().await
                })
                .await;
                drain(reader.inner_mut(), o.unread).await;
            } else {
                tracing::debug!(conn = id, error = %e, "connection ended");
            }
        }
        None => {
            // Closed for shutdown between commands: flush what was written.
            let _ = tokio::time::timeout(ERROR_WRITE_TIMEOUT, writer.flush()).await;
        }
    }
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
