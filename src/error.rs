//! The error a client sees: a MySQL error code, its SQLSTATE and a message
//! that names the culprit.
//!
//! This module is the one place where errors of the lower layers (storage,
//! catalog, ISCP, fault injection) are mapped to MySQL codes. Lower layers
//! never pick MySQL codes themselves.

use std::fmt;

use tributary_storage::StorageError;

/// MySQL error codes used by Tributary (`ER_*` in MySQL's errmsg list).
pub mod code {
    pub const DUP_ENTRY: u16 = 1062;
    pub const PARSE: u16 = 1064;
    pub const NO_SUCH_TABLE: u16 = 1146;
    pub const BAD_DB: u16 = 1049;
    pub const BAD_FIELD: u16 = 1054;
    pub const DB_CREATE_EXISTS: u16 = 1007;
    pub const DB_DROP_EXISTS: u16 = 1008;
    pub const TABLE_EXISTS: u16 = 1050;
    pub const NO_DB: u16 = 1046;
    pub const DUP_KEYNAME: u16 = 1061;
    pub const CANT_DROP_FIELD_OR_KEY: u16 = 1091;
    pub const KEY_DOES_NOT_EXIST: u16 = 1176;
    pub const DATA_TOO_LONG: u16 = 1406;
    pub const BAD_NULL: u16 = 1048;
    pub const TRUNCATED_WRONG_VALUE: u16 = 1292;
    pub const WRONG_VALUE_COUNT: u16 = 1136;
    pub const LOCK_WAIT_TIMEOUT: u16 = 1205;
    pub const LOCK_DEADLOCK: u16 = 1213;
    pub const NOT_SUPPORTED: u16 = 1235;
    /// ER_LOCK_NOWAIT: a NOWAIT locking read found a row locked.
    pub const LOCK_NOWAIT: u16 = 3572;
    /// ER_CANT_CHANGE_TX_CHARACTERISTICS: `SET TRANSACTION` inside one.
    pub const CANT_CHANGE_TX_CHARACTERISTICS: u16 = 1568;
    /// Unknown EXPLAIN format name (`EXPLAIN FORMAT=xml`).
    pub const UNKNOWN_EXPLAIN_FORMAT: u16 = 1791;
    pub const WRONG_ARGUMENTS: u16 = 1210;
    pub const SPECIFIC_ACCESS_DENIED: u16 = 1227;
    pub const ACCESS_DENIED: u16 = 1045;
    pub const NET_PACKET_TOO_LARGE: u16 = 1153;
    pub const DIVISION_BY_ZERO: u16 = 1365;
    pub const UNKNOWN_ERROR: u16 = 1105;
    /// ER_GET_ERRNO "Got error from storage engine": the storage backend
    /// (PostgreSQL) is unreachable; retry later.
    pub const STORAGE_UNAVAILABLE: u16 = 1030;
    /// ER_DISK_FULL: a durable write found the disk full; nothing of the
    /// statement was written, reads go on, retry once space is back.
    pub const DISK_FULL: u16 = 1021;
    /// ER_TRANS_CACHE_FULL: a transaction's write set passed its memory
    /// limit (decision 032).
    pub const TRANS_CACHE_FULL: u16 = 1197;
    pub const WRONG_COLUMN_NAME: u16 = 1166;
    pub const NON_UNIQ: u16 = 1052;
    pub const INVALID_GROUP_FUNC: u16 = 1111;
    /// ER_WINDOW_INVALID_WINDOW_FUNC_USE: a window function outside the
    /// select list / ORDER BY (WHERE, GROUP BY, HAVING, inside another).
    pub const WINDOW_INVALID_USE: u16 = 3593;
    /// ER_WINDOW_INVALID_WINDOW_FUNC_ALIAS_USE: the alias of a windowed
    /// expression where a window function may not be.
    pub const WINDOW_INVALID_ALIAS_USE: u16 = 3594;
    /// Named windows (`WINDOW w AS (…)`): MySQL's ER_WINDOW_NO_SUCH_WINDOW,
    /// …_CIRCULARITY_IN_WINDOW_GRAPH, …_NO_CHILD_PARTITIONING,
    /// …_NO_INHERIT_FRAME, …_NO_REDEFINE_ORDER_BY, …_DUPLICATE_NAME.
    pub const WINDOW_NO_SUCH_WINDOW: u16 = 3579;
    pub const WINDOW_CIRCULARITY: u16 = 3580;
    pub const WINDOW_NO_CHILD_PARTITIONING: u16 = 3581;
    pub const WINDOW_NO_INHERIT_FRAME: u16 = 3582;
    pub const WINDOW_NO_REDEFINE_ORDER_BY: u16 = 3583;
    pub const WINDOW_DUPLICATE_NAME: u16 = 3591;
    /// Explicit frames: ER_WINDOW_FRAME_START_ILLEGAL, …_END_ILLEGAL,
    /// …_FRAME_ILLEGAL (a negative, NULL or non-integer offset).
    pub const WINDOW_FRAME_START_ILLEGAL: u16 = 3584;
    pub const WINDOW_FRAME_END_ILLEGAL: u16 = 3585;
    pub const WINDOW_FRAME_ILLEGAL: u16 = 3586;
    /// RANGE frames with offsets: ER_WINDOW_RANGE_FRAME_ORDER_TYPE (not
    /// exactly one numeric / temporal ORDER BY key), …_TEMPORAL_TYPE (a
    /// temporal key with a number), …_NUMERIC_TYPE (a numeric key with an
    /// INTERVAL), ER_WINDOW_RANGE_BOUND_NOT_CONSTANT,
    /// ER_WINDOW_ROWS_INTERVAL_USE (an INTERVAL in a ROWS frame).
    pub const WINDOW_RANGE_FRAME_ORDER_TYPE: u16 = 3587;
    pub const WINDOW_RANGE_FRAME_TEMPORAL_TYPE: u16 = 3588;
    pub const WINDOW_RANGE_FRAME_NUMERIC_TYPE: u16 = 3589;
    pub const WINDOW_RANGE_BOUND_NOT_CONSTANT: u16 = 3590;
    pub const WINDOW_ROWS_INTERVAL_USE: u16 = 3596;
    /// ER_WINDOW_ILLEGAL_ORDER_BY (`OVER (ORDER BY 1)`: a position) and
    /// ER_WINDOW_NESTED_WINDOW_FUNC_USE_IN_WINDOW_SPEC.
    pub const WINDOW_ILLEGAL_ORDER_BY: u16 = 3592;
    pub const WINDOW_NESTED_IN_SPEC: u16 = 3595;
    pub const WRONG_FIELD_WITH_GROUP: u16 = 1055;
    pub const INCORRECT_VALUE: u16 = 1525;
    pub const MULTIPLE_PRI_KEY: u16 = 1068;
    pub const KEY_COLUMN_DOES_NOT_EXIST: u16 = 1072;
    pub const UNKNOWN_FUNCTION: u16 = 1305;
    /// ER_WRONG_PARAMCOUNT_TO_NATIVE_FCT: a call with the wrong number of
    /// arguments.
    pub const WRONG_PARAMCOUNT: u16 = 1582;
    pub const TOO_MANY_CONNECTIONS: u16 = 1040;
    pub const QUERY_INTERRUPTED: u16 = 1317;
    /// `max_execution_time` exceeded.
    pub const QUERY_TIMEOUT: u16 = 3024;
    /// The session was ended by `KILL CONNECTION` (MariaDB's code).
    pub const CONNECTION_KILLED: u16 = 1927;
    pub const FT_MATCHING_KEY_NOT_FOUND: u16 = 1191;
    /// Subquery returns more than 1 row.
    pub const SUBQUERY_NO_1_ROW: u16 = 1242;
    /// Operand should contain N column(s).
    pub const OPERAND_COLUMNS: u16 = 1241;
    /// The used SELECT statements have a different number of columns.
    pub const WRONG_NUMBER_OF_COLUMNS_IN_SELECT: u16 = 1222;
    /// Every derived table must have its own alias.
    pub const DERIVED_MUST_HAVE_ALIAS: u16 = 1248;
    /// No tables used (`SELECT *` without FROM).
    pub const NO_TABLES_USED: u16 = 1096;
    /// Unknown table (in a qualified wildcard or DROP).
    pub const BAD_TABLE: u16 = 1051;
    /// Not unique table/alias.
    pub const NONUNIQ_TABLE: u16 = 1066;
    /// Foreign keys: a parent row with children cannot be deleted or
    /// changed (ER_ROW_IS_REFERENCED_2).
    pub const ROW_IS_REFERENCED: u16 = 1451;
    /// A child row without its parent row (ER_NO_REFERENCED_ROW_2).
    pub const NO_REFERENCED_ROW: u16 = 1452;
    /// Cannot add foreign key constraint (ER_FK_CANNOT_ADD / SET DEFAULT).
    pub const FK_CANNOT_ADD: u16 = 1215;
    /// Key reference and table reference don't match.
    pub const WRONG_FK_DEF: u16 = 1239;
    /// Cannot drop index: needed in a foreign key constraint.
    pub const DROP_INDEX_FK: u16 = 1553;
    /// Cannot truncate a table referenced in a foreign key constraint.
    pub const TRUNCATE_ILLEGAL_FK: u16 = 1701;
    /// Missing index for a constraint in the referenced table.
    pub const FK_NO_INDEX_PARENT: u16 = 1822;
    /// Failed to open the referenced table.
    pub const FK_CANNOT_OPEN_PARENT: u16 = 1824;
    /// Duplicate foreign key constraint name.
    pub const FK_DUP_NAME: u16 = 1826;
    /// Cannot drop column: needed in a foreign key constraint.
    pub const FK_COLUMN_CANNOT_DROP: u16 = 1828;
    /// Cannot drop column: needed in a foreign key constraint of a child.
    pub const FK_COLUMN_CANNOT_DROP_CHILD: u16 = 1829;
    /// Column cannot be NOT NULL: needed in a foreign key SET NULL.
    pub const FK_COLUMN_NOT_NULL: u16 = 1830;
    /// Foreign key cascade delete/update exceeds max depth.
    pub const FK_DEPTH_EXCEEDED: u16 = 3008;
    /// Cannot drop table referenced by a foreign key constraint.
    pub const FK_DROP_TABLE: u16 = 3730;
    /// Missing column in the referenced table.
    pub const FK_NO_COLUMN_PARENT: u16 = 3734;
    /// Referencing and referenced columns are incompatible.
    pub const FK_INCOMPATIBLE_COLUMNS: u16 = 3780;
    // LOAD DATA (src/sql/load*.rs).
    /// `File '…' not found (OS errno 2 …)`.
    pub const FILE_NOT_FOUND: u16 = 29;
    pub const WRONG_FIELD_TERMINATORS: u16 = 1083;
    /// The used command is not allowed with this MySQL version (a LOCAL
    /// load from a client without CLIENT_LOCAL_FILES).
    pub const NOT_ALLOWED_COMMAND: u16 = 1148;
    pub const WARN_TOO_FEW_RECORDS: u16 = 1261;
    pub const WARN_TOO_MANY_RECORDS: u16 = 1262;
    /// `--secure-file-priv` forbids the statement.
    pub const OPTION_PREVENTS_STATEMENT: u16 = 1290;
    /// `local_infile` is OFF.
    pub const LOCAL_INFILE_DISABLED: u16 = 3948;
}

/// A SQL-boundary error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SqlError {
    pub code: u16,
    pub sqlstate: &'static str,
    pub message: String,
}

impl SqlError {
    /// Build an error with the SQLSTATE that MySQL uses for `code`.
    pub fn new(code: u16, message: impl Into<String>) -> Self {
        SqlError {
            code,
            sqlstate: sqlstate_for(code),
            message: message.into(),
        }
    }

    /// 1064 syntax error.
    pub fn parse(message: impl Into<String>) -> Self {
        Self::new(code::PARSE, message)
    }

    /// 1235 not supported.
    pub fn unsupported(what: impl fmt::Display) -> Self {
        Self::new(
            code::NOT_SUPPORTED,
            format!("This version of Tributary doesn't yet support '{what}'"),
        )
    }

    /// 1105 internal error.
    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(code::UNKNOWN_ERROR, message)
    }

    /// 1210 wrong arguments.
    pub fn wrong_args(message: impl Into<String>) -> Self {
        Self::new(code::WRONG_ARGUMENTS, message)
    }

    /// `ERROR <code> (<sqlstate>): <message>` as the mysql client prints it.
    pub fn client_line(&self) -> String {
        format!("ERROR {} ({}): {}", self.code, self.sqlstate, self.message)
    }
}

impl fmt::Display for SqlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.client_line())
    }
}

impl std::error::Error for SqlError {}

impl SqlError {
    /// Name the clause an unknown or ambiguous column was met in, as
    /// MySQL does ("Unknown column 'x' in 'where clause'").
    pub fn in_clause(mut self, clause: &str) -> SqlError {
        if self.code == code::BAD_FIELD {
            self.message = self.message.replace("'field list'", &format!("'{clause}'"));
        } else if self.code == code::NON_UNIQ {
            self.message = self
                .message
                .replace("in field list", &format!("in {clause}"));
        }
        self
    }
}

/// SQLSTATE for a MySQL error code.
pub fn sqlstate_for(code: u16) -> &'static str {
    use code::*;
    match code {
        DUP_ENTRY => "23000",
        WARN_TOO_FEW_RECORDS | WARN_TOO_MANY_RECORDS => "01000",
        LOCAL_INFILE_DISABLED => "42000",
        BAD_NULL => "23000",
        PARSE => "42000",
        NO_SUCH_TABLE => "42S02",
        TABLE_EXISTS => "42S01",
        BAD_DB => "42000",
        NO_DB => "3D000",
        BAD_FIELD => "42S22",
        NON_UNIQ => "23000",
        DB_CREATE_EXISTS | DB_DROP_EXISTS => "HY000",
        DUP_KEYNAME => "42000",
        CANT_DROP_FIELD_OR_KEY => "42000",
        KEY_DOES_NOT_EXIST => "42000",
        DATA_TOO_LONG => "22001",
        TRUNCATED_WRONG_VALUE => "22007",
        WRONG_VALUE_COUNT => "21S01",
        LOCK_WAIT_TIMEOUT => "HY000",
        LOCK_DEADLOCK => "40001",
        NOT_SUPPORTED => "42000",
        SPECIFIC_ACCESS_DENIED => "42000",
        ACCESS_DENIED => "28000",
        NET_PACKET_TOO_LARGE => "08S01",
        DIVISION_BY_ZERO => "22012",
        WRONG_COLUMN_NAME => "42000",
        INVALID_GROUP_FUNC => "HY000",
        WRONG_FIELD_WITH_GROUP => "42000",
        MULTIPLE_PRI_KEY => "42000",
        KEY_COLUMN_DOES_NOT_EXIST => "42000",
        UNKNOWN_FUNCTION | WRONG_PARAMCOUNT => "42000",
        TOO_MANY_CONNECTIONS => "08004",
        QUERY_INTERRUPTED | CONNECTION_KILLED => "70100",
        QUERY_TIMEOUT => "HY000",
        INCORRECT_VALUE => "HY000",
        FT_MATCHING_KEY_NOT_FOUND => "HY000",
        SUBQUERY_NO_1_ROW => "21000",
        BAD_TABLE => "42S02",
        1060 => "42S21",
        OPERAND_COLUMNS => "21000",
        WRONG_NUMBER_OF_COLUMNS_IN_SELECT => "21000",
        DERIVED_MUST_HAVE_ALIAS => "42000",
        NONUNIQ_TABLE => "42000",
        1264 | 1690 => "22003",
        1792 => "25006",
        CANT_CHANGE_TX_CHARACTERISTICS => "25001",
        1366 => "HY000",
        1300 => "HY000",
        1426 | 1427 => "42000",
        // ER_TOO_MANY_ROWS (SELECT … INTO of several rows).
        1172 => "42000",
        // ER_COLLATION_CHARSET_MISMATCH (ER_UNKNOWN_COLLATION and the
        // illegal-mix 1267 are HY000).
        1253 => "42000",
        1065 => "42000",
        1047 => "08S01",
        1243 => "HY000",
        1390 => "HY000",
        1583 => "42000",
        ROW_IS_REFERENCED | NO_REFERENCED_ROW | FK_DUP_NAME => "23000",
        WRONG_FK_DEF | TRUNCATE_ILLEGAL_FK => "42000",
        _ => "HY000",
    }
}

impl From<StorageError> for SqlError {
    fn from(e: StorageError) -> Self {
        let code = match &e {
            StorageError::Deadlock => code::LOCK_DEADLOCK,
            StorageError::LockWaitTimeout => code::LOCK_WAIT_TIMEOUT,
            StorageError::ReadOnly => 1792,
            StorageError::LockNotAvailable => code::LOCK_NOWAIT,
            StorageError::Unsupported(_) => code::NOT_SUPPORTED,
            StorageError::Interrupted => code::QUERY_INTERRUPTED,
            StorageError::Unavailable(_) => code::STORAGE_UNAVAILABLE,
            StorageError::TxnTooLarge { .. } => code::TRANS_CACHE_FULL,
            // ENOSPC from a durable write: MySQL's ER_DISK_FULL.
            StorageError::Io(m) if m.contains("No space left on device") => code::DISK_FULL,
            _ => code::UNKNOWN_ERROR,
        };
        SqlError::new(code, e.to_string())
    }
}

impl From<tributary_fault::FaultError> for SqlError {
    fn from(e: tributary_fault::FaultError) -> Self {
        SqlError::new(code::UNKNOWN_ERROR, e.to_string())
    }
}

/// Result alias at the SQL boundary.
pub type SqlResult<T> = std::result::Result<T, SqlError>;
