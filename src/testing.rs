//! Internals that the integration tests, benches and the protocol fuzzer
//! observe or drive directly. Not API: hidden from the docs, and may
//! change at any commit. Owns nothing; only re-exports. Product code never
//! goes through it.

pub use crate::catalog::codec::{btree_entry_key, encode_key};
pub use crate::catalog::require_table;
pub use crate::catalog::users::get_user;
pub use crate::collation::Collation;
pub use crate::iscp::job_name;
pub use crate::iscp::log::{newest_change_ts, JobRow, JobState, Stage};
pub use crate::server::auth::{native_password_hash, random_salt, scramble_native, UserTable};
pub use crate::server::limits::Limits;
pub use crate::server::protocol::command::{decode_params, Command};
pub use crate::server::protocol::handshake::{parse_change_user, parse_response};
pub use crate::server::protocol::packet::{Cursor, PacketReader};
pub use crate::sql::exec::parallel::scans_run;
pub use crate::sql::exec::series::makings as table_function_makings;
pub use crate::sql::expr::truth;
pub use crate::sql::load_spec::{with_local_files, LocalFiles};
pub use crate::sql::params::count_placeholders;
pub use crate::sql::parse::{MAX_NESTING, MAX_OPERATOR_CHAIN};
pub use crate::sql::schema::{
    DEFAULT_HNSW_EF_CONSTRUCTION, DEFAULT_HNSW_EF_SEARCH, DEFAULT_HNSW_M,
};
pub use crate::sql::Engine;
pub use crate::warnings::MAX_WARNINGS;
