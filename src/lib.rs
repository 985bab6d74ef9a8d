//! Tributary: an embedded-first SQL database whose HNSW, full-text and
//! secondary indexes can be maintained asynchronously by ISCP.
//!
//! Layers, bottom-up (each only calls the ones below it):
//! `tributary_fault` → `tributary_storage` → `catalog` → `tributary_index`
//! → `iscp` → `sql` → `server` / CLI. See `docs/ARCHITECTURE.md`.
//!
//! The public API is small: open a [`Database`] with a [`Config`], run
//! statements in a [`Session`] and read [`QueryResult`]s of [`Value`]s,
//! errors as [`SqlError`] (with its MySQL code); serve it over the MySQL
//! protocol with [`MysqlServer`]; the binary's entry is
//! [`main_with_args`]. Every module is crate-private, so the compiler
//! reports what nothing uses. [`testing`] (hidden) lends the integration
//! tests, benches and fuzzers the internals they observe.

pub(crate) mod catalog;
pub(crate) mod cli;
pub(crate) mod collation;
pub(crate) mod config;
pub(crate) mod db;
pub(crate) mod decimal;
pub(crate) mod error;
pub(crate) mod iscp;
pub(crate) mod json;
pub(crate) mod server;
pub(crate) mod sql;
pub(crate) mod timezone;
pub(crate) mod types;
pub(crate) mod warnings;

#[doc(hidden)]
pub mod testing;

/// The version string the server reports (handshake, `VERSION()`,
/// `@@version`): MySQL 8.0.36 compatible, then Tributary's own version.
pub const SERVER_VERSION: &str = concat!("8.0.36-tributary-", env!("CARGO_PKG_VERSION"));

pub use cli::main_with_args;
pub use config::Config;
pub use db::{split_statements, Database, Session};
pub use error::{SqlError, SqlResult};
pub use server::{MysqlServer, ServerOptions};
pub use sql::budget::set_release_hook;
pub use types::{format_value, Column, ColumnKind, DataType, QueryResult, Value, Warning};
