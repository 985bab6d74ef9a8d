//! Admin HTTP endpoint (axum): health, Prometheus metrics and fault-point
//! control.
//!
//! Routes: `GET /` → the status page ([`super::status`]); `GET /health`
//! → `ok`; `GET /metrics` → the Prometheus text
//! exposition ([`super::metrics`]); `GET /faults` → the registry's JSON list;
//! `POST /faults` with `{name,freq,action,iarg,sarg,constant}` → arm a point
//! (400 bad input, 409 injection disabled or constant point exists);
//! `DELETE /faults/{name}` → remove (404 if nothing was armed).
//!
//! Every mutating request (POST, DELETE) needs `Authorization: Bearer
//! <token>` (401 otherwise), compared in constant time; the token is given
//! by `--admin-token` or generated at start into `<data dir>/admin.token`
//! (mode 0600). `GET /health` and `GET /faults` stay open; `GET /` shows
//! error messages (which carry row values) only with the token.
//!
//! This module owns only HTTP plumbing; it never executes SQL and binds a
//! non-loopback address only when explicitly allowed.

use std::net::SocketAddr;

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::{Json, Router};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tributary_fault::FaultError;

use super::metrics::Metrics;
use super::status::Status;
use super::ServerError;

/// Body of `POST /faults`.
#[derive(Debug, serde::Deserialize)]
pub struct AddFault {
    pub name: String,
    #[serde(default)]
    pub freq: String,
    pub action: String,
    #[serde(default)]
    pub iarg: i64,
    #[serde(default)]
    pub sarg: String,
    #[serde(default)]
    pub constant: bool,
}

/// A bound admin listener.
pub struct AdminServer {
    listener: TcpListener,
    state: AdminState,
}

/// What the admin routes share: the bearer token, and the metrics (absent
/// when this process could not install its recorder).
#[derive(Clone)]
pub struct AdminState {
    token: AdminToken,
    metrics: Option<Arc<Metrics>>,
    status: Option<Arc<Status>>,
}

impl axum::extract::FromRef<AdminState> for AdminToken {
    fn from_ref(s: &AdminState) -> AdminToken {
        s.token.clone()
    }
}

/// The bearer token of mutating admin requests (kept as its SHA-1 so the
/// comparison takes the same time whatever the candidate).
#[derive(Clone)]
pub struct AdminToken(Arc<[u8; 20]>);

fn digest(b: &[u8]) -> [u8; 20] {
    use sha1::{Digest, Sha1};
    Sha1::digest(b).into()
}

impl AdminToken {
    pub fn new(token: &str) -> Self {
        AdminToken(Arc::new(digest(token.as_bytes())))
    }

    /// A fresh random token: 32 random bytes, hex.
    pub fn generate() -> std::io::Result<String> {
        let mut raw = [0u8; 32];
        getrandom::fill(&mut raw).map_err(|e| std::io::Error::other(e.to_string()))?;
        Ok(raw.iter().map(|b| format!("{b:02x}")).collect())
    }

    /// Write `token` to `path` with mode 0600 (replacing an older file).
    pub fn write_file(path: &std::path::Path, token: &str) -> std::io::Result<()> {
        use std::io::Write;
        let _ = std::fs::remove_file(path);
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create_new(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let mut f = o.open(path)?;
        f.write_all(token.as_bytes())?;
        f.write_all(b"\n")?;
        f.sync_all()
    }

    /// Whether `headers` carry `Authorization: Bearer <token>`.
    fn admits(&self, headers: &HeaderMap) -> bool {
        let Some(v) = headers
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
        else {
            return false;
        };
        let Some(candidate) = v.strip_prefix("Bearer ") else {
            return false;
        };
        let d = digest(candidate.trim().as_bytes());
        d.iter()
            .zip(self.0.iter())
            .fold(0u8, |a, (x, y)| a | (x ^ y))
            == 0
    }
}

fn unauthorized() -> Response {
    (
        StatusCode::UNAUTHORIZED,
        [(header::WWW_AUTHENTICATE, "Bearer")],
        "missing or wrong bearer token (see <data dir>/admin.token)",
    )
        .into_response()
}

impl AdminServer {
    /// Bind `addr`; refuses a non-loopback address unless `allow_remote`.
    /// Mutating requests need `token`.
    pub async fn bind(
        addr: SocketAddr,
        allow_remote: bool,
        token: AdminToken,
        metrics: Option<Arc<Metrics>>,
        status: Option<Arc<Status>>,
    ) -> Result<AdminServer, ServerError> {
        if !addr.ip().is_loopback() && !allow_remote {
            return Err(ServerError::RemoteAdmin(addr));
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        Ok(AdminServer {
            listener,
            state: AdminState {
                token,
                metrics,
                status,
            },
        })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve until `shutdown` is cancelled (in-flight requests complete).
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), ServerError> {
        axum::serve(self.listener, router(self.state))
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
            .map_err(ServerError::Http)
    }
}

/// The admin routes.
pub fn router(state: AdminState) -> Router {
    Router::new()
        .route("/", get(status_page))
        .route("/health", get(|| async { "ok" }))
        .route("/metrics", get(metrics))
        .route("/faults", get(list_faults).post(add_fault))
        .route("/faults/{name}", delete(remove_fault))
        .with_state(state)
}

/// `GET /`: the status page, rendered off the async workers; error
/// messages only with the admin token.
async fn status_page(State(state): State<AdminState>, headers: HeaderMap) -> Response {
    let full = state.token.admits(&headers);
    let Some(s) = state.status else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "no status page in this process",
        )
            .into_response();
    };
    match tokio::task::spawn_blocking(move || s.render(full)).await {
        Ok(html) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            html,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

/// `GET /metrics`: rendered off the async workers (it reads job rows).
async fn metrics(State(state): State<AdminState>) -> Response {
    let Some(m) = state.metrics else {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            "metrics are not recorded in this process",
        )
            .into_response();
    };
    match tokio::task::spawn_blocking(move || m.render()).await {
        Ok(text) => (
            StatusCode::OK,
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            text,
        )
            .into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

fn json_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn error_response(e: &FaultError) -> Response {
    let status = match e {
        FaultError::Disabled | FaultError::Constant(_) => StatusCode::CONFLICT,
        FaultError::NotFound(_) => StatusCode::NOT_FOUND,
        _ => StatusCode::BAD_REQUEST,
    };
    (status, e.to_string()).into_response()
}

async fn list_faults() -> Response {
    json_response(StatusCode::OK, tributary_fault::global().list_json())
}

async fn add_fault(
    State(token): State<AdminToken>,
    headers: HeaderMap,
    body: Result<Json<AddFault>, axum::extract::rejection::JsonRejection>,
) -> Response {
    if !token.admits(&headers) {
        return unauthorized();
    }
    let Json(f) = match body {
        Ok(b) => b,
        Err(e) => return (StatusCode::BAD_REQUEST, e.body_text()).into_response(),
    };
    match tributary_fault::global().add(&f.name, &f.freq, &f.action, f.iarg, &f.sarg, f.constant) {
        Ok(()) => json_response(StatusCode::OK, tributary_fault::global().list_json()),
        Err(e) => error_response(&e),
    }
}

async fn remove_fault(
    State(token): State<AdminToken>,
    headers: HeaderMap,
    Path(name): Path<String>,
) -> Response {
    if !token.admits(&headers) {
        return unauthorized();
    }
    match tributary_fault::global().remove(&name) {
        Ok(true) => (StatusCode::OK, "removed").into_response(),
        Ok(false) => (
            StatusCode::NOT_FOUND,
            format!("fault point {name} not found"),
        )
            .into_response(),
        Err(e) => error_response(&e),
    }
}
