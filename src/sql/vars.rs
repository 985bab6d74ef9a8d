//! System variables (`@@x`, `SET x = …`, `SHOW VARIABLES`) and user
//! variables (`@v`) of a session.
//!
//! Owns the catalogue of system variables a MySQL 8 client reads at connect
//! (with the values Tributary really has), which of them a session may set,
//! and which values it accepts: a value whose meaning the engine does not
//! implement (a non-UTF-8 character set, `ANSI_QUOTES`, a time zone other
//! than UTC, an isolation level other than snapshot) is refused with an
//! error rather than stored and ignored. Never touches storage.

use std::collections::BTreeMap;

use crate::error::{SqlError, SqlResult};
pub use crate::sql::session::UserVars;
use crate::sql::{Engine, SessionState};
use crate::types::Value;

/// Unknown system variable.
pub const UNKNOWN_SYSTEM_VARIABLE: u16 = 1193;
/// Read-only variable.
pub const READ_ONLY_VARIABLE: u16 = 1238;
/// A global-only variable set without GLOBAL.
pub const GLOBAL_VARIABLE: u16 = 1229;
/// Wrong value for a variable.
pub const WRONG_VALUE_FOR_VAR: u16 = 1231;

/// How a session may change a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Access {
    /// `SET x = …` changes this session's value.
    Session,
    /// Readable only.
    ReadOnly,
    /// Only `SET GLOBAL` changes it (a session reads the global value;
    /// `SET SESSION` is 1229).
    Global,
}

/// Values accepted by a settable variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Accepts {
    Any,
    Bool,
    /// A non-negative integer.
    Count,
    /// Seconds, fractions allowed (a Tributary extension for lock waits).
    Seconds,
    Charset,
    Collation,
    SqlMode,
    TimeZone,
    Isolation,
    /// An integer in `lo..=hi`.
    Range(i64, i64),
    /// A number in `0..=100`.
    Percent,
    /// One of these words (case-insensitive; stored as written here).
    OneOf(&'static [&'static str]),
}

struct Def {
    name: &'static str,
    access: Access,
    accepts: Accepts,
    default: &'static str,
}

const fn def(name: &'static str, access: Access, accepts: Accepts, default: &'static str) -> Def {
    Def {
        name,
        access,
        accepts,
        default,
    }
}

/// MySQL 8's default `sql_mode`. Every mode in it is honoured: strict
/// writes and division by zero (`crate::warnings`), zero dates refused,
/// full GROUP BY (always required here).
pub const DEFAULT_SQL_MODE: &str = "ONLY_FULL_GROUP_BY,STRICT_TRANS_TABLES,NO_ZERO_IN_DATE,\
NO_ZERO_DATE,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION";

/// What `sql_mode` means for a session.
impl SessionState {
    /// Whether `sql_mode` has `mode` (an upper-case name); unset is the
    /// default mode (see `vars`).
    pub fn sql_mode_has(&self, mode: &str) -> bool {
        let modes = self
            .vars
            .get("sql_mode")
            .map_or(DEFAULT_SQL_MODE, String::as_str);
        modes.split(',').any(|m| m == mode)
    }

    /// Whether rows are written strictly (`STRICT_TRANS_TABLES`,
    /// `STRICT_ALL_TABLES`, or `TRADITIONAL`, which includes them): a
    /// conversion warning while a row is written fails the statement.
    pub fn strict_writes(&self) -> bool {
        ["STRICT_TRANS_TABLES", "STRICT_ALL_TABLES", "TRADITIONAL"]
            .iter()
            .any(|m| self.sql_mode_has(m))
    }
}

use Accepts as A;
use Access::{Global as G, ReadOnly as RO, Session as S};

/// The system variables, sorted by name. `version`, `autocommit`,
/// `innodb_lock_wait_timeout`, `max_allowed_packet` and `hostname` are
/// computed in [`read_captured`].
const VARS: &[Def] = &[
    def("auto_increment_increment", RO, A::Any, "1"),
    def("auto_increment_offset", RO, A::Any, "1"),
    def("autocommit", S, A::Bool, "ON"),
    def("character_set_client", S, A::Charset, "utf8mb4"),
    def("character_set_connection", S, A::Charset, "utf8mb4"),
    def("character_set_database", RO, A::Any, "utf8mb4"),
    def("character_set_results", S, A::Charset, "utf8mb4"),
    def("character_set_server", RO, A::Any, "utf8mb4"),
    def("character_set_system", RO, A::Any, "utf8mb3"),
    def("collation_connection", S, A::Collation, "utf8mb4_bin"),
    def("collation_database", RO, A::Any, "utf8mb4_bin"),
    def("collation_server", RO, A::Any, "utf8mb4_bin"),
    def(
        "cte_max_recursion_depth",
        S,
        A::Range(0, 4_294_967_295),
        "1000",
    ),
    def("default_storage_engine", RO, A::Any, "Tributary"),
    def("div_precision_increment", RO, A::Any, "4"),
    def("enable_vector_auto_mode_by_default", S, A::Bool, "OFF"),
    def("enable_vector_prefilter_by_default", S, A::Bool, "OFF"),
    def("experimental_fulltext_index", S, A::Bool, "ON"),
    def("experimental_hnsw_index", S, A::Bool, "ON"),
    def("experimental_ivf_index", S, A::Bool, "ON"),
    def("experimental_ivfpq_index", S, A::Bool, "ON"),
    def("fast_search", S, A::Bool, "OFF"),
    def("foreign_key_checks", S, A::Bool, "ON"),
    def("ft_relevancy_algorithm", S, A::OneOf(&["BM25"]), "BM25"),
    def("fulltext_bloom_filter_pushdown", S, A::Bool, "OFF"),
    def("group_concat_max_len", RO, A::Any, "1024"),
    def("have_ssl", RO, A::Any, "DISABLED"),
    def("hnsw_ef_search", S, A::Count, "0"),
    def("hnsw_threads_build", S, A::Range(0, 1024), "0"),
    def("hnsw_threads_search", S, A::Range(0, 1024), "0"),
    def("hostname", RO, A::Any, ""),
    def("init_connect", RO, A::Any, ""),
    def("innodb_lock_wait_timeout", S, A::Seconds, ""),
    def("interactive_timeout", S, A::Count, "28800"),
    def("iscp_wait_fresh", S, A::Bool, "OFF"),
    def("ivf_preload_entries", S, A::Bool, "OFF"),
    def("ivf_threads_build", S, A::Range(0, 1024), "0"),
    def("ivf_threads_search", S, A::Range(0, 1024), "0"),
    def(
        "ivfpq_max_index_capacity",
        S,
        A::Range(0, 5_000_000_000),
        "0",
    ),
    def("ivfpq_threads_build", S, A::Range(0, 1024), "0"),
    def("kmeans_max_iteration", S, A::Range(10, 500), "20"),
    def("kmeans_train_percent", S, A::Percent, "10"),
    def("license", RO, A::Any, "Apache-2.0"),
    // LOAD DATA LOCAL (MySQL 8's default: OFF; 3948 while it is).
    def("local_infile", G, A::Bool, "OFF"),
    def("lock_wait_timeout", S, A::Seconds, "31536000"),
    def("lower_case_table_names", RO, A::Any, "0"),
    def("max_allowed_packet", RO, A::Any, "67108864"),
    def("max_execution_time", S, A::Count, "0"),
    // Bytes a hash table (GROUP BY, DISTINCT, hash join) keeps in memory
    // before it spills: the smaller of this and `tmp_table_size`, as
    // MySQL's (decision 027). MySQL's default.
    def(
        "max_heap_table_size",
        S,
        A::Range(16_384, i64::MAX),
        "16777216",
    ),
    def("net_buffer_length", RO, A::Any, "16384"),
    def("net_read_timeout", S, A::Count, "30"),
    def("net_write_timeout", S, A::Count, "60"),
    def("performance_schema", RO, A::Any, "OFF"),
    def("port", RO, A::Any, "6001"),
    def("probe_limit", S, A::Range(1, 80_000), "5"),
    def("protocol_version", RO, A::Any, "10"),
    def("query_cache_size", RO, A::Any, "0"),
    def("query_cache_type", RO, A::Any, "OFF"),
    // Bytes one sort keeps in memory before it writes sorted runs to
    // disk (decision 027: 16 MiB, not MySQL's 256 KiB).
    // The directory server-side LOAD DATA reads from (`Config`); NULL:
    // none.
    def("secure_file_priv", RO, A::Any, ""),
    def(
        "sort_buffer_size",
        S,
        A::Range(32_768, i64::MAX),
        "16777216",
    ),
    def("sql_auto_is_null", RO, A::Any, "0"),
    def("sql_mode", S, A::SqlMode, DEFAULT_SQL_MODE),
    def("sql_notes", S, A::Bool, "ON"),
    def("sql_quote_show_create", S, A::Bool, "ON"),
    def("sql_safe_updates", RO, A::Any, "0"),
    def("sql_select_limit", RO, A::Any, "18446744073709551615"),
    def("system_time_zone", RO, A::Any, "UTC"),
    def("time_zone", S, A::TimeZone, "SYSTEM"),
    // See `max_heap_table_size`.
    def("tmp_table_size", S, A::Range(1024, i64::MAX), "16777216"),
    // Where spill files go (`Engine::tmpdir`).
    def("tmpdir", RO, A::Any, ""),
    def("transaction_isolation", S, A::Isolation, "REPEATABLE-READ"),
    def("transaction_read_only", RO, A::Any, "OFF"),
    // LOAD DATA under autocommit commits every n rows (0: the whole load is
    // one transaction, as InnoDB's; decision 030).
    def("tributary_load_commit_rows", S, A::Count, "0"),
    // Bytes of rows one statement may hold; 0: the server's default
    // (`--statement-memory`). Decision 023.
    def(
        "tributary_statement_memory_limit",
        S,
        A::Range(0, i64::MAX),
        "0",
    ),
    // Bytes one transaction's buffered writes and row locks may hold; 0:
    // the server's default (a quarter of `--statement-memory-total`). Past it a
    // statement fails with 1197 and is rolled back. Decision 032.
    def(
        "tributary_transaction_memory_limit",
        S,
        A::Range(0, i64::MAX),
        "0",
    ),
    def("tx_isolation", S, A::Isolation, "REPEATABLE-READ"),
    def("tx_read_only", RO, A::Any, "OFF"),
    def("unique_checks", S, A::Bool, "ON"),
    def("version", RO, A::Any, ""),
    def("version_comment", RO, A::Any, "Tributary"),
    def("wait_timeout", S, A::Count, "28800"),
];

fn find(name: &str) -> Option<&'static Def> {
    VARS.binary_search_by(|d| d.name.cmp(name))
        .ok()
        .map(|i| &VARS[i])
}

fn unknown(name: &str) -> SqlError {
    SqlError::new(
        UNKNOWN_SYSTEM_VARIABLE,
        format!("Unknown system variable '{name}'"),
    )
}

fn wrong_value(name: &str, value: &str) -> SqlError {
    SqlError::new(
        WRONG_VALUE_FOR_VAR,
        format!("Variable '{name}' can't be set to the value of '{value}'"),
    )
}

/// The server version string reported everywhere (handshake, `VERSION()`,
/// `@@version`).
pub fn server_version() -> String {
    crate::SERVER_VERSION.to_string()
}

/// What reading a system variable needs from a session.
#[derive(Debug, Clone, Default)]
pub struct SessionVars {
    pub vars: BTreeMap<String, String>,
    pub autocommit: bool,
    pub lock_wait_timeout_secs: u64,
    /// The node's `SET GLOBAL` values.
    pub globals: BTreeMap<String, String>,
    /// `@@tmpdir`.
    pub tmpdir: String,
    /// `@@secure_file_priv` (`None`: NULL).
    pub secure_file_priv: Option<String>,
}

impl SessionVars {
    /// Capture a session's variables.
    pub fn of(engine: &Engine, st: &SessionState) -> Self {
        SessionVars {
            vars: st.vars.clone(),
            autocommit: st.autocommit,
            lock_wait_timeout_secs: engine.config.lock_wait_timeout.as_secs(),
            globals: engine.globals.snapshot(),
            tmpdir: engine.tmpdir().display().to_string(),
            secure_file_priv: engine
                .config
                .secure_file_priv
                .as_ref()
                .map(|p| p.display().to_string()),
        }
    }
}

impl SessionVars {
    /// The server-wide values: what a new session starts with (the
    /// defaults, overridden by `SET GLOBAL`).
    pub fn global(&self) -> SessionVars {
        let mut vars = self.globals.clone();
        let autocommit = vars.remove("autocommit").is_none_or(|v| v == "ON");
        SessionVars {
            vars,
            autocommit,
            lock_wait_timeout_secs: self.lock_wait_timeout_secs,
            globals: self.globals.clone(),
            tmpdir: self.tmpdir.clone(),
            secure_file_priv: self.secure_file_priv.clone(),
        }
    }
}

/// The value of system variable `name` (lower case) for captured session
/// variables.
pub fn read_captured(sv: &SessionVars, name: &str) -> SqlResult<String> {
    let d = find(name).ok_or_else(|| unknown(name))?;
    if d.access == G {
        return Ok(sv
            .globals
            .get(d.name)
            .cloned()
            .unwrap_or_else(|| d.default.into()));
    }
    if let Some(v) = sv.vars.get(d.name) {
        return Ok(v.clone());
    }
    Ok(match d.name {
        "autocommit" => if sv.autocommit { "ON" } else { "OFF" }.into(),
        "version" => server_version(),
        "innodb_lock_wait_timeout" => sv.lock_wait_timeout_secs.to_string(),
        "tmpdir" => sv.tmpdir.clone(),
        "secure_file_priv" => sv.secure_file_priv.clone().unwrap_or_default(),
        "hostname" => std::env::var("HOSTNAME").unwrap_or_else(|_| "localhost".into()),
        _ => d.default.into(),
    })
}

/// `@@x` as an expression value: numbers as integers, ON/OFF as 1/0 for
/// boolean variables (as MySQL returns them), text otherwise.
pub fn system_value(sv: &SessionVars, name: &str) -> SqlResult<Value> {
    if name == "secure_file_priv" && sv.secure_file_priv.is_none() {
        return Ok(Value::Null);
    }
    let raw = read_captured(sv, name)?;
    let d = find(name).ok_or_else(|| unknown(name))?;
    if d.accepts == A::Bool {
        return Ok(Value::Int(i64::from(
            raw.eq_ignore_ascii_case("ON") || raw == "1",
        )));
    }
    if !raw.is_empty() && raw.bytes().all(|b| b.is_ascii_digit()) {
        if let Ok(i) = raw.parse::<i64>() {
            return Ok(Value::Int(i));
        }
    }
    Ok(Value::Text(raw))
}

/// Whether `@@name` is an integer in expressions (MySQL returns BIGINT for
/// boolean and numeric variables).
pub fn is_integer(name: &str) -> bool {
    find(name).is_some_and(|d| {
        matches!(d.accepts, A::Bool | A::Count)
            || (!d.default.is_empty()
                && d.default.bytes().all(|b| b.is_ascii_digit())
                && d.default.parse::<i64>().is_ok())
    })
}

/// Every system variable with its session value, sorted by name (`SHOW
/// VARIABLES`).
pub fn all(engine: &Engine, st: &SessionState, global: bool) -> Vec<(String, String)> {
    let sv = SessionVars::of(engine, st);
    let sv = if global { sv.global() } else { sv };
    VARS.iter()
        .map(|d| {
            (
                d.name.to_string(),
                read_captured(&sv, d.name).unwrap_or_default(),
            )
        })
        .collect()
}

/// Canonical form of `value` for variable `d`, or an error if the engine
/// would not honour it.
/// `value` checked and put in canonical form as `SET name = value` would
/// store it (1193 for an unknown name, 1235 for a value not honoured).
pub fn normalize_value(name: &str, value: &str) -> SqlResult<String> {
    normalize(find(name).ok_or_else(|| unknown(name))?, value)
}

fn normalize(d: &Def, value: &str) -> SqlResult<String> {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    let not_honoured = |what: &str| {
        Err(SqlError::unsupported(format!(
            "{} = '{v}' ({what})",
            d.name
        )))
    };
    Ok(match d.accepts {
        A::Any => v.to_string(),
        A::Bool => match lower.as_str() {
            "1" | "on" | "true" => "ON".into(),
            "0" | "off" | "false" => "OFF".into(),
            _ => return Err(wrong_value(d.name, v)),
        },
        A::Count => match v.parse::<u64>() {
            Ok(n) => n.to_string(),
            Err(_) => return Err(wrong_value(d.name, v)),
        },
        A::Range(lo, hi) => match v.parse::<i64>() {
            Ok(n) if (lo..=hi).contains(&n) => n.to_string(),
            _ => return Err(wrong_value(d.name, v)),
        },
        A::Percent => match v.parse::<f64>() {
            Ok(n) if (0.0..=100.0).contains(&n) => v.to_string(),
            _ => return Err(wrong_value(d.name, v)),
        },
        A::OneOf(words) => match words.iter().find(|w| w.eq_ignore_ascii_case(v)) {
            Some(w) => w.to_string(),
            None if d.name == "ft_relevancy_algorithm" => {
                return not_honoured("full-text relevance is BM25 (tantivy's) only")
            }
            None => return Err(wrong_value(d.name, v)),
        },
        A::Seconds => match v.parse::<f64>() {
            Ok(n) if n.is_finite() && n >= 0.0 => v.to_string(),
            _ => return Err(wrong_value(d.name, v)),
        },
        A::Charset => match lower.as_str() {
            "utf8mb4" | "utf8" | "utf8mb3" | "binary" | "ascii" => lower,
            "" | "null" if d.name == "character_set_results" => "NULL".into(),
            _ => return not_honoured("Tributary sends and reads UTF-8 only"),
        },
        A::Collation => {
            if require_collation(&lower).is_ok() {
                lower
            } else {
                return not_honoured("Tributary compares UTF-8 text by code point (utf8mb4_bin)");
            }
        }
        A::SqlMode => {
            // Modes whose behaviour Tributary has (or that only tighten
            // checks it already makes); any other mode changes meaning.
            const OK: &[&str] = &[
                "STRICT_TRANS_TABLES",
                "STRICT_ALL_TABLES",
                "NO_ENGINE_SUBSTITUTION",
                "ONLY_FULL_GROUP_BY",
                "ERROR_FOR_DIVISION_BY_ZERO",
                "NO_ZERO_DATE",
                "NO_ZERO_IN_DATE",
                "NO_AUTO_CREATE_USER",
                "NO_DIR_IN_CREATE",
                "NO_AUTO_VALUE_ON_ZERO",
                "TRADITIONAL",
                // `||` as CONCAT (sqlx sets it at connect).
                "PIPES_AS_CONCAT",
            ];
            let mut modes: Vec<String> = Vec::new();
            for m in v.split(',').map(|m| m.trim().to_ascii_uppercase()) {
                // Each mode once, in the order first named (as MySQL).
                if !m.is_empty() && !modes.contains(&m) {
                    modes.push(m);
                }
            }
            if let Some(bad) = modes.iter().find(|m| !OK.contains(&m.as_str())) {
                return not_honoured(&format!("mode {bad} is not implemented"));
            }
            modes.join(",")
        }
        A::TimeZone => match lower.as_str() {
            "system" | "utc" | "+00:00" | "+0:00" | "-00:00" => v.to_string(),
            _ => return not_honoured("time zones other than UTC are not implemented"),
        },
        A::Isolation => match lower.replace(' ', "-").as_str() {
            "repeatable-read" => "REPEATABLE-READ".into(),
            "read-committed" => "READ-COMMITTED".into(),
            _ => {
                return not_honoured(
                    "READ UNCOMMITTED and SERIALIZABLE are not implemented (REPEATABLE READ and READ COMMITTED are)",
                )
            }
        },
    })
}

/// A character set named for stored text (a column, a table's or a
/// database's default): Tributary stores UTF-8 only, so any other set is
/// refused (1235) rather than accepted with a repertoire it would not keep.
pub fn require_stored_charset(name: &str) -> SqlResult<()> {
    match name
        .trim_matches(['\'', '"', '`'])
        .to_ascii_lowercase()
        .as_str()
    {
        "utf8mb4" | "utf8" | "utf8mb3" => Ok(()),
        other => Err(SqlError::unsupported(format!(
            "CHARACTER SET {other}: text is stored as UTF-8 (utf8mb4)"
        ))),
    }
}

/// A collation named as a database's or the connection's default: those
/// stay `utf8mb4_bin` (a column or an expression may name another,
/// `crate::collation`), so any other is refused (1235); an unknown name
/// is 1273.
pub fn require_collation(name: &str) -> SqlResult<()> {
    let c = crate::collation::Collation::lookup(name)?;
    if c.is_binary() {
        return Ok(());
    }
    Err(SqlError::unsupported(format!(
        "{c} as a database or connection default (it stays utf8mb4_bin; \
         columns and expressions may use {c})"
    )))
}

/// `SET [SESSION] name = value` for a system variable.
pub fn set_system(
    engine: &Engine,
    st: &mut SessionState,
    name: &str,
    value: &str,
    global: bool,
) -> SqlResult<()> {
    let d = find(name).ok_or_else(|| unknown(name))?;
    if d.access == RO {
        return Err(SqlError::new(
            READ_ONLY_VARIABLE,
            format!("Variable '{name}' is a read only variable"),
        ));
    }
    if d.access == G && !global {
        return Err(SqlError::new(
            GLOBAL_VARIABLE,
            format!("Variable '{name}' is a GLOBAL variable and should be set with SET GLOBAL"),
        ));
    }
    if global {
        // The value new sessions start with (this one keeps its own).
        let mut g = engine.globals.0.lock();
        if value.eq_ignore_ascii_case("default") {
            for n in stored_as(d) {
                g.remove(*n);
            }
            return Ok(());
        }
        let v = normalize(d, value)?;
        for n in stored_as(d) {
            g.insert(n.to_string(), v.clone());
        }
        return Ok(());
    }
    let v = if value.eq_ignore_ascii_case("default") {
        if d.name == "autocommit" {
            "ON".into()
        } else {
            for n in stored_as(d) {
                st.vars.remove(*n);
            }
            return Ok(());
        }
    } else {
        normalize(d, value)?
    };
    if d.name == "autocommit" {
        let on = v == "ON";
        if on && !st.autocommit {
            engine.commit_open(st)?;
        }
        st.autocommit = on;
        return Ok(());
    }
    for n in stored_as(d) {
        st.vars.insert(n.to_string(), v.clone());
    }
    Ok(())
}

/// The names a value of `d` is stored under: both spellings of the
/// isolation level (`transaction_isolation`, `tx_isolation`) are one
/// setting; any other variable has its own name.
fn stored_as(d: &Def) -> &[&'static str] {
    const ISOLATION: [&str; 2] = ["transaction_isolation", "tx_isolation"];
    if ISOLATION.contains(&d.name) {
        &ISOLATION
    } else {
        std::slice::from_ref(&d.name)
    }
}

/// `SET NAMES cs [COLLATE c]`: the three connection character sets.
pub fn set_names(st: &mut SessionState, charset: &str) -> SqlResult<()> {
    let d = find("character_set_client").ok_or_else(|| unknown("character_set_client"))?;
    let v = if charset.eq_ignore_ascii_case("default") {
        "utf8mb4".to_string()
    } else {
        normalize(d, charset)?
    };
    for n in [
        "character_set_client",
        "character_set_connection",
        "character_set_results",
    ] {
        st.vars.insert(n.into(), v.clone());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::code;

    #[test]
    fn table_is_sorted_and_unique() {
        for w in VARS.windows(2) {
            assert!(w[0].name < w[1].name, "{} before {}", w[0].name, w[1].name);
        }
    }

    #[test]
    fn values_the_engine_does_not_honour_are_refused() {
        let d = find("sql_mode").unwrap();
        assert_eq!(normalize(d, "").unwrap(), "");
        assert!(normalize(d, "STRICT_TRANS_TABLES, no_engine_substitution").is_ok());
        assert_eq!(
            normalize(d, "ANSI_QUOTES").unwrap_err().code,
            code::NOT_SUPPORTED
        );
        let tz = find("time_zone").unwrap();
        assert!(normalize(tz, "+00:00").is_ok());
        assert!(normalize(tz, "+08:00").is_err());
        let iso = find("transaction_isolation").unwrap();
        assert_eq!(
            normalize(iso, "repeatable read").unwrap(),
            "REPEATABLE-READ"
        );
        assert!(normalize(iso, "READ-UNCOMMITTED").is_err());
        let b = find("autocommit").unwrap();
        assert_eq!(normalize(b, "0").unwrap(), "OFF");
        assert_eq!(normalize(b, "maybe").unwrap_err().code, WRONG_VALUE_FOR_VAR);
        assert!(find("no_such_var").is_none());
    }
}
