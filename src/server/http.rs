//! Admin HTTP endpoint (axum): health and fault-point control.
//!
//! Routes: `GET /health` → `ok`; `GET /faults` → the registry's JSON list;
//! `POST /faults` with `{name,freq,action,iarg,sarg,constant}` → arm a point
//! (400 bad input, 409 injection disabled or constant point exists);
//! `DELETE /faults/{name}` → remove (404 if nothing was armed).
//!
//! This module owns only HTTP plumbing; it never executes SQL and binds a
//! non-loopback address only when explicitly allowed.

use std::net::SocketAddr;

use axum::extract::Path;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{delete, get};
use axum::{Json, Router};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tributary_fault::FaultError;

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
}

impl AdminServer {
    /// Bind `addr`; refuses a non-loopback address unless `allow_remote`.
    pub async fn bind(addr: SocketAddr, allow_remote: bool) -> Result<AdminServer, ServerError> {
        if !addr.ip().is_loopback() && !allow_remote {
            return Err(ServerError::RemoteAdmin(addr));
        }
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServerError::Bind {
                addr: addr.to_string(),
                source,
            })?;
        Ok(AdminServer { listener })
    }

    pub fn local_addr(&self) -> std::io::Result<SocketAddr> {
        self.listener.local_addr()
    }

    /// Serve until `shutdown` is cancelled (in-flight requests complete).
    pub async fn run(self, shutdown: CancellationToken) -> Result<(), ServerError> {
        axum::serve(self.listener, router())
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
            .map_err(ServerError::Http)
    }
}

/// The admin routes.
pub fn router() -> Router {
    Router::new()
        .route("/health", get(|| async { "ok" }))
        .route("/faults", get(list_faults).post(add_fault))
        .route("/faults/{name}", delete(remove_fault))
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
    body: Result<Json<AddFault>, axum::extract::rejection::JsonRejection>,
) -> Response {
    let Json(f) = match body {
        Ok(b) => b,
        Err(e) => return (StatusCode::BAD_REQUEST, e.body_text()).into_response(),
    };
    match tributary_fault::global().add(&f.name, &f.freq, &f.action, f.iarg, &f.sarg, f.constant) {
        Ok(()) => json_response(StatusCode::OK, tributary_fault::global().list_json()),
        Err(e) => error_response(&e),
    }
}

async fn remove_fault(Path(name): Path<String>) -> Response {
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
