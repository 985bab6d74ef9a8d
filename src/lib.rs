//! Tributary: an embedded-first SQL database whose HNSW, full-text and
//! secondary indexes can be maintained asynchronously by ISCP.
//!
//! Layers, bottom-up (each only calls the ones below it):
//! `tributary_fault` → `tributary_storage` → [`catalog`] → `tributary_index`
//! → [`iscp`] → [`sql`] → [`server`] / CLI. See `docs/ARCHITECTURE.md`.

pub mod catalog;
pub mod cli;
pub mod collation;
pub mod config;
pub mod db;
pub mod decimal;
pub mod error;
pub mod iscp;
pub mod json;
pub mod server;
pub mod sql;
pub mod types;
pub mod warnings;

/// The version string the server reports (handshake, `VERSION()`,
/// `@@version`): MySQL 8.0.36 compatible, then Tributary's own version.
pub const SERVER_VERSION: &str = concat!("8.0.36-tributary-", env!("CARGO_PKG_VERSION"));

pub use config::Config;
pub use db::{Database, Session};
pub use error::{SqlError, SqlResult};
pub use types::{Column, ColumnKind, DataType, QueryResult, Value, Warning};
