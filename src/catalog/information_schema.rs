//! `information_schema`: MySQL's read-only views of the catalog, computed
//! from the catalog records at the reading transaction's snapshot (so a
//! query sees the tables its own transaction created), queryable like any
//! table — filters, joins, aggregates.
//!
//! Owns: the column lists of SCHEMATA, TABLES, COLUMNS, STATISTICS,
//! KEY_COLUMN_USAGE, TABLE_CONSTRAINTS, CHECK_CONSTRAINTS, VIEWS, ENGINES,
//! CHARACTER_SETS, COLLATIONS (MySQL 8's, in MySQL's order) and their rows; TRIGGERS,
//! ROUTINES and EVENTS, always empty (there are no such objects).
//!
//! Never: is written (DDL and DML on it fail like MySQL's, 1044), or lists
//! a table that does not exist in the snapshot. PROCESSLIST's columns
//! are here but its rows are the node's sessions, which only the session
//! layer knows: [`rows`] gives `None` for it and the caller supplies them.

use tributary_storage::Transaction;

use super::{col, list_databases, list_tables, IndexKind, TableDef};
use crate::error::SqlResult;
use crate::types::{DataType, Value};

/// The database name (matched without regard to case, like MySQL).
pub const DB: &str = "information_schema";

/// Its tables, upper case as MySQL names them.
pub const TABLES: [&str; 16] = [
    "CHARACTER_SETS",
    "CHECK_CONSTRAINTS",
    "COLLATIONS",
    "COLUMNS",
    "ENGINES",
    "EVENTS",
    "KEY_COLUMN_USAGE",
    "PROCESSLIST",
    "REFERENTIAL_CONSTRAINTS",
    "ROUTINES",
    "SCHEMATA",
    "STATISTICS",
    "TABLES",
    "TABLE_CONSTRAINTS",
    "TRIGGERS",
    "VIEWS",
];

/// Tables that are always empty because Tributary has no such objects
/// (stored routines, triggers, events): an empty answer is the true one.
const EMPTY: [&str; 3] = ["EVENTS", "ROUTINES", "TRIGGERS"];

/// Tables every user may read, as in MySQL: their rows reveal nothing
/// about objects the user has no grant on (PROCESSLIST is filtered to the
/// user's own sessions by the session layer). The others still need a
/// SELECT grant on `information_schema` (their rows are not filtered).
pub fn open_to_all(db: &str, table: &str) -> bool {
    is(db)
        && ["PROCESSLIST", "ENGINES", "CHARACTER_SETS", "COLLATIONS"]
            .iter()
            .any(|t| t.eq_ignore_ascii_case(table))
}

/// Whether `name` is this database.
pub fn is(name: &str) -> bool {
    name.eq_ignore_ascii_case(DB)
}

/// Id of a table here: outside the range storage ever hands out (its rows
/// are computed, never stored).
fn table_id(i: usize) -> u64 {
    u64::MAX - 64 + i as u64
}

/// The character sets a session may name (`SET NAMES`, `character_set_*`)
/// with their default collation, description and maximum bytes per
/// character. Text is stored as UTF-8 whatever the session's set.
pub const CHARSETS: [(&str, &str, &str, i64); 5] = [
    ("ascii", "ascii_bin", "US ASCII", 1),
    ("binary", "binary", "Binary pseudo charset", 1),
    ("utf8mb3", "utf8mb3_bin", "UTF-8 Unicode", 3),
    ("utf8", "utf8mb3_bin", "UTF-8 Unicode (alias of utf8mb3)", 3),
    ("utf8mb4", "utf8mb4_bin", "UTF-8 Unicode", 4),
];

/// Collations: the code point (binary) ones, and the case-insensitive
/// ones `crate::collation` implements; ids are MySQL's.
pub const COLLATIONS: [(&str, &str, i64); 7] = [
    ("ascii_bin", "ascii", 65),
    ("binary", "binary", 63),
    ("utf8mb3_bin", "utf8mb3", 83),
    ("utf8mb4_0900_ai_ci", "utf8mb4", 255),
    ("utf8mb4_0900_bin", "utf8mb4", 309),
    ("utf8mb4_bin", "utf8mb4", 46),
    ("utf8mb4_general_ci", "utf8mb4", 45),
];

/// The table definition of `information_schema.<name>` (any case).
pub fn table_def(name: &str) -> Option<TableDef> {
    use DataType::*;
    let upper = name.to_ascii_uppercase();
    let i = TABLES.iter().position(|t| *t == upper)?;
    let v = |n: &str| col(n, Varchar(64), false);
    let vn = |n: &str| col(n, Varchar(64), true);
    let big = |n: &str| col(n, BigInt, true);
    let columns = match TABLES[i] {
        "SCHEMATA" => vec![
            v("CATALOG_NAME"),
            v("SCHEMA_NAME"),
            v("DEFAULT_CHARACTER_SET_NAME"),
            v("DEFAULT_COLLATION_NAME"),
            vn("SQL_PATH"),
            v("DEFAULT_ENCRYPTION"),
        ],
        "TABLES" => vec![
            v("TABLE_CATALOG"),
            v("TABLE_SCHEMA"),
            v("TABLE_NAME"),
            v("TABLE_TYPE"),
            vn("ENGINE"),
            big("VERSION"),
            vn("ROW_FORMAT"),
            big("TABLE_ROWS"),
            big("AVG_ROW_LENGTH"),
            big("DATA_LENGTH"),
            big("MAX_DATA_LENGTH"),
            big("INDEX_LENGTH"),
            big("DATA_FREE"),
            big("AUTO_INCREMENT"),
            col("CREATE_TIME", DateTime, true),
            col("UPDATE_TIME", DateTime, true),
            col("CHECK_TIME", DateTime, true),
            vn("TABLE_COLLATION"),
            big("CHECKSUM"),
            vn("CREATE_OPTIONS"),
            col("TABLE_COMMENT", Text, true),
        ],
        "COLUMNS" => vec![
            v("TABLE_CATALOG"),
            v("TABLE_SCHEMA"),
            v("TABLE_NAME"),
            v("COLUMN_NAME"),
            col("ORDINAL_POSITION", BigInt, false),
            col("COLUMN_DEFAULT", Text, true),
            v("IS_NULLABLE"),
            col("DATA_TYPE", Text, false),
            big("CHARACTER_MAXIMUM_LENGTH"),
            big("CHARACTER_OCTET_LENGTH"),
            big("NUMERIC_PRECISION"),
            big("NUMERIC_SCALE"),
            big("DATETIME_PRECISION"),
            vn("CHARACTER_SET_NAME"),
            vn("COLLATION_NAME"),
            col("COLUMN_TYPE", Text, false),
            v("COLUMN_KEY"),
            v("EXTRA"),
            v("PRIVILEGES"),
            col("COLUMN_COMMENT", Text, false),
            col("GENERATION_EXPRESSION", Text, false),
            big("SRS_ID"),
        ],
        "STATISTICS" => vec![
            v("TABLE_CATALOG"),
            v("TABLE_SCHEMA"),
            v("TABLE_NAME"),
            col("NON_UNIQUE", Int, false),
            v("INDEX_SCHEMA"),
            v("INDEX_NAME"),
            col("SEQ_IN_INDEX", BigInt, false),
            vn("COLUMN_NAME"),
            vn("COLLATION"),
            big("CARDINALITY"),
            big("SUB_PART"),
            vn("PACKED"),
            v("NULLABLE"),
            v("INDEX_TYPE"),
            v("COMMENT"),
            v("INDEX_COMMENT"),
            v("IS_VISIBLE"),
            col("EXPRESSION", Text, true),
        ],
        "KEY_COLUMN_USAGE" => vec![
            v("CONSTRAINT_CATALOG"),
            v("CONSTRAINT_SCHEMA"),
            v("CONSTRAINT_NAME"),
            v("TABLE_CATALOG"),
            v("TABLE_SCHEMA"),
            v("TABLE_NAME"),
            v("COLUMN_NAME"),
            col("ORDINAL_POSITION", BigInt, false),
            big("POSITION_IN_UNIQUE_CONSTRAINT"),
            vn("REFERENCED_TABLE_SCHEMA"),
            vn("REFERENCED_TABLE_NAME"),
            vn("REFERENCED_COLUMN_NAME"),
        ],
        "REFERENTIAL_CONSTRAINTS" => vec![
            v("CONSTRAINT_CATALOG"),
            v("CONSTRAINT_SCHEMA"),
            v("CONSTRAINT_NAME"),
            v("UNIQUE_CONSTRAINT_CATALOG"),
            v("UNIQUE_CONSTRAINT_SCHEMA"),
            vn("UNIQUE_CONSTRAINT_NAME"),
            v("MATCH_OPTION"),
            v("UPDATE_RULE"),
            v("DELETE_RULE"),
            v("TABLE_NAME"),
            v("REFERENCED_TABLE_NAME"),
        ],
        "CHECK_CONSTRAINTS" => vec![
            v("CONSTRAINT_CATALOG"),
            v("CONSTRAINT_SCHEMA"),
            v("CONSTRAINT_NAME"),
            col("CHECK_CLAUSE", Text, false),
        ],
        "TABLE_CONSTRAINTS" => vec![
            v("CONSTRAINT_CATALOG"),
            v("CONSTRAINT_SCHEMA"),
            v("CONSTRAINT_NAME"),
            v("TABLE_SCHEMA"),
            v("TABLE_NAME"),
            v("CONSTRAINT_TYPE"),
            v("ENFORCED"),
        ],
        "PROCESSLIST" => vec![
            col("ID", BigInt, false),
            col("USER", Varchar(32), false),
            col("HOST", Varchar(261), false),
            vn("DB"),
            col("COMMAND", Varchar(16), false),
            col("TIME", Int, false),
            vn("STATE"),
            col("INFO", Text, true),
        ],
        "VIEWS" => vec![
            v("TABLE_CATALOG"),
            v("TABLE_SCHEMA"),
            v("TABLE_NAME"),
            col("VIEW_DEFINITION", Text, false),
            v("CHECK_OPTION"),
            v("IS_UPDATABLE"),
            v("DEFINER"),
            v("SECURITY_TYPE"),
            v("CHARACTER_SET_CLIENT"),
            v("COLLATION_CONNECTION"),
        ],
        "TRIGGERS" => [
            "TRIGGER_CATALOG",
            "TRIGGER_SCHEMA",
            "TRIGGER_NAME",
            "EVENT_MANIPULATION",
            "EVENT_OBJECT_CATALOG",
            "EVENT_OBJECT_SCHEMA",
            "EVENT_OBJECT_TABLE",
            "ACTION_ORDER",
            "ACTION_CONDITION",
            "ACTION_STATEMENT",
            "ACTION_ORIENTATION",
            "ACTION_TIMING",
            "ACTION_REFERENCE_OLD_TABLE",
            "ACTION_REFERENCE_NEW_TABLE",
            "ACTION_REFERENCE_OLD_ROW",
            "ACTION_REFERENCE_NEW_ROW",
            "CREATED",
            "SQL_MODE",
            "DEFINER",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "DATABASE_COLLATION",
        ]
        .into_iter()
        .map(vn)
        .collect(),
        "ROUTINES" => [
            "SPECIFIC_NAME",
            "ROUTINE_CATALOG",
            "ROUTINE_SCHEMA",
            "ROUTINE_NAME",
            "ROUTINE_TYPE",
            "DATA_TYPE",
            "CHARACTER_MAXIMUM_LENGTH",
            "CHARACTER_OCTET_LENGTH",
            "NUMERIC_PRECISION",
            "NUMERIC_SCALE",
            "DATETIME_PRECISION",
            "CHARACTER_SET_NAME",
            "COLLATION_NAME",
            "DTD_IDENTIFIER",
            "ROUTINE_BODY",
            "ROUTINE_DEFINITION",
            "EXTERNAL_NAME",
            "EXTERNAL_LANGUAGE",
            "PARAMETER_STYLE",
            "IS_DETERMINISTIC",
            "SQL_DATA_ACCESS",
            "SQL_PATH",
            "SECURITY_TYPE",
            "CREATED",
            "LAST_ALTERED",
            "SQL_MODE",
            "ROUTINE_COMMENT",
            "DEFINER",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "DATABASE_COLLATION",
        ]
        .into_iter()
        .map(vn)
        .collect(),
        "EVENTS" => [
            "EVENT_CATALOG",
            "EVENT_SCHEMA",
            "EVENT_NAME",
            "DEFINER",
            "TIME_ZONE",
            "EVENT_BODY",
            "EVENT_DEFINITION",
            "EVENT_TYPE",
            "EXECUTE_AT",
            "INTERVAL_VALUE",
            "INTERVAL_FIELD",
            "SQL_MODE",
            "STARTS",
            "ENDS",
            "STATUS",
            "ON_COMPLETION",
            "CREATED",
            "LAST_ALTERED",
            "LAST_EXECUTED",
            "EVENT_COMMENT",
            "ORIGINATOR",
            "CHARACTER_SET_CLIENT",
            "COLLATION_CONNECTION",
            "DATABASE_COLLATION",
        ]
        .into_iter()
        .map(vn)
        .collect(),
        "ENGINES" => vec![
            v("ENGINE"),
            v("SUPPORT"),
            col("COMMENT", Varchar(80), false),
            vn("TRANSACTIONS"),
            vn("XA"),
            vn("SAVEPOINTS"),
        ],
        "CHARACTER_SETS" => vec![
            v("CHARACTER_SET_NAME"),
            v("DEFAULT_COLLATE_NAME"),
            col("DESCRIPTION", Varchar(2048), false),
            col("MAXLEN", Int, false),
        ],
        "COLLATIONS" => vec![
            v("COLLATION_NAME"),
            v("CHARACTER_SET_NAME"),
            col("ID", BigInt, false),
            v("IS_DEFAULT"),
            v("IS_COMPILED"),
            col("SORTLEN", Int, false),
            col("PAD_ATTRIBUTE", Varchar(9), false),
        ],
        _ => return None,
    };
    Some(TableDef {
        id: table_id(i),
        db: DB.into(),
        name: TABLES[i].into(),
        columns,
        pk: vec![],
        indexes: vec![],
        comment: String::new(),
        view: None,
        collation: Default::default(),
        foreign_keys: Vec::new(),
        referenced_by: Vec::new(),
        checks: Vec::new(),
    })
}

fn t(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

fn int(i: impl TryInto<i64>) -> Value {
    i.try_into().map(Value::Int).unwrap_or(Value::Null)
}

/// Every table visible in the snapshot, system ones included.
fn all_tables(txn: &mut dyn Transaction) -> SqlResult<Vec<TableDef>> {
    let mut out = Vec::new();
    for d in list_databases(txn)? {
        out.extend(list_tables(txn, &d.name)?);
    }
    Ok(out)
}

/// MySQL's DATA_TYPE, COLUMN_TYPE and the length / precision columns of a
/// column type: (data_type, column_type, char_max, octet_max, num_prec,
/// num_scale, datetime_prec, is_text).
type TypeInfo = (String, String, Value, Value, Value, Value, Value, bool);

/// The privileges COLUMNS / SHOW FULL COLUMNS list for every column.
pub const PRIVILEGES: &str = "select,insert,update,references";

/// What `information_schema.COLUMNS`, `SHOW [FULL] COLUMNS` and `DESCRIBE`
/// say of one column: the one place these facts are worked out.
pub struct ColumnFacts {
    pub name: String,
    /// 1-based.
    pub position: usize,
    /// The default as text, NULL when there is none.
    pub default: Value,
    /// `YES` / `NO`.
    pub nullable: &'static str,
    pub data_type: String,
    pub char_max: Value,
    pub octet_max: Value,
    pub precision: Value,
    pub scale: Value,
    pub datetime_precision: Value,
    /// `utf8mb4` for a text column, else NULL.
    pub charset: Value,
    /// The collation of a text column, else NULL.
    pub collation: Value,
    /// `varchar(20)`, `decimal(10,2)`, …
    pub column_type: String,
    /// `PRI`, `UNI`, `MUL` or empty, as MySQL decides it.
    pub key: &'static str,
    /// `auto_increment` or empty.
    pub extra: &'static str,
}

/// [`ColumnFacts`] of each column of `td`, in order.
pub fn column_facts(td: &TableDef) -> Vec<ColumnFacts> {
    td.columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let (data_type, column_type, char_max, octet_max, precision, scale, dtp, text) =
                type_info(&c.ty);
            let key =
                if td.pk.contains(&i) {
                    "PRI"
                } else if td.indexes.iter().any(|x| {
                    x.columns == [i] && matches!(x.kind, IndexKind::BTree { unique: true })
                }) {
                    "UNI"
                } else if td.indexes.iter().any(|x| x.columns.first() == Some(&i)) {
                    "MUL"
                } else {
                    ""
                };
            ColumnFacts {
                name: c.name.clone(),
                position: i + 1,
                default: c
                    .default
                    .as_ref()
                    .map(|v| t(v.to_string()))
                    .unwrap_or(Value::Null),
                nullable: if c.nullable { "YES" } else { "NO" },
                data_type,
                char_max,
                octet_max,
                precision,
                scale,
                datetime_precision: dtp,
                charset: if text { t("utf8mb4") } else { Value::Null },
                collation: if text {
                    t(c.collation.name())
                } else {
                    Value::Null
                },
                column_type,
                key,
                extra: if c.auto_increment {
                    "auto_increment"
                } else {
                    ""
                },
            }
        })
        .collect()
}

fn type_info(ty: &DataType) -> TypeInfo {
    use DataType as D;
    let n = Value::Null;
    let column_type = ty.sql_name().to_ascii_lowercase();
    let data_type = column_type
        .split(['(', ' '])
        .next()
        .unwrap_or_default()
        .to_string();
    match ty {
        D::Varchar(len) => (
            data_type,
            column_type,
            int(*len),
            int(u64::from(*len) * 4),
            n.clone(),
            n.clone(),
            n,
            true,
        ),
        D::Text => (
            data_type,
            column_type,
            int(65_535),
            int(65_535),
            n.clone(),
            n.clone(),
            n,
            true,
        ),
        D::Bool => (
            "tinyint".into(),
            "tinyint(1)".into(),
            n.clone(),
            n.clone(),
            int(3),
            int(0),
            n,
            false,
        ),
        D::Int => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            int(10),
            int(0),
            n,
            false,
        ),
        D::BigInt => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            int(19),
            int(0),
            n,
            false,
        ),
        D::Integer { bits, unsigned } => {
            let prec = match (bits, unsigned) {
                (8, _) => 3,
                (16, _) => 5,
                (24, _) => 7,
                (32, _) => 10,
                (_, true) => 20,
                _ => 19,
            };
            (
                data_type,
                column_type,
                n.clone(),
                n.clone(),
                int(prec),
                int(0),
                n,
                false,
            )
        }
        D::Float => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            int(12),
            n.clone(),
            n,
            false,
        ),
        D::Double => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            int(22),
            n.clone(),
            n,
            false,
        ),
        D::Decimal(p, s) => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            int(*p),
            int(*s),
            n,
            false,
        ),
        D::DateTime | D::DateTimeFsp(_) => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            n.clone(),
            n,
            int(match ty {
                D::DateTimeFsp(f) => i64::from(*f),
                _ => 0,
            }),
            false,
        ),
        D::Date => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            n,
            false,
        ),
        // Binary strings: lengths in bytes, no character set.
        D::Binary(_) | D::VarBinary(_) | D::Blob(_) => {
            let len = ty.max_bytes().map_or(n.clone(), int);
            (
                data_type,
                column_type,
                len.clone(),
                len,
                n.clone(),
                n.clone(),
                n,
                false,
            )
        }
        D::VecF32(_) | D::VecF64(_) | D::Json => (
            data_type,
            column_type,
            n.clone(),
            n.clone(),
            n.clone(),
            n.clone(),
            n,
            false,
        ),
    }
}

/// Rows of `information_schema.<name>` at `txn`'s snapshot; `None` for a
/// name that is not one of [`TABLES`].
pub fn rows(txn: &mut dyn Transaction, name: &str) -> SqlResult<Option<Vec<Vec<Value>>>> {
    let upper = name.to_ascii_uppercase();
    let mut out = Vec::new();
    if EMPTY.contains(&upper.as_str()) {
        return Ok(Some(out));
    }
    match upper.as_str() {
        "SCHEMATA" => {
            for d in list_databases(txn)? {
                out.push(vec![
                    t("def"),
                    t(d.name),
                    t("utf8mb4"),
                    t("utf8mb4_bin"),
                    Value::Null,
                    t("NO"),
                ]);
            }
        }
        "TABLES" => {
            for td in all_tables(txn)? {
                let system = super::is_system_db(&td.db);
                let (kind, engine) = match (&td.view, system) {
                    (Some(_), _) => ("VIEW", Value::Null),
                    (None, true) => ("SYSTEM VIEW", t("Tributary")),
                    (None, false) => ("BASE TABLE", t("Tributary")),
                };
                let rows = if td.view.is_some() || system {
                    Value::Null
                } else {
                    int(txn.approx_rows(td.id))
                };
                out.push(vec![
                    t("def"),
                    t(td.db.clone()),
                    t(td.name.clone()),
                    t(kind),
                    engine,
                    int(10),
                    if td.view.is_some() {
                        Value::Null
                    } else {
                        t("Dynamic")
                    },
                    rows,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    Value::Null,
                    if td.view.is_some() {
                        Value::Null
                    } else {
                        t(td.collation.name())
                    },
                    Value::Null,
                    t(""),
                    t(td.comment.clone()),
                ]);
            }
        }
        "COLUMNS" => {
            for td in all_tables(txn)? {
                for f in column_facts(&td) {
                    out.push(vec![
                        t("def"),
                        t(td.db.clone()),
                        t(td.name.clone()),
                        t(f.name),
                        int(f.position),
                        f.default,
                        t(f.nullable),
                        t(f.data_type),
                        f.char_max,
                        f.octet_max,
                        f.precision,
                        f.scale,
                        f.datetime_precision,
                        f.charset,
                        f.collation,
                        t(f.column_type),
                        t(f.key),
                        t(f.extra),
                        t(PRIVILEGES),
                        t(""),
                        t(""),
                        Value::Null,
                    ]);
                }
            }
        }
        "STATISTICS" => {
            for td in all_tables(txn)? {
                for ic in td.index_columns() {
                    let asy = ic.index.is_some_and(|ix| ix.is_async);
                    let mut row = vec![
                        t("def"),
                        t(td.db.clone()),
                        t(td.name.clone()),
                        int(i64::from(!ic.unique)),
                        t(td.db.clone()),
                    ];
                    row.extend(ic.shared_fields());
                    row.extend([
                        t(if asy { "ASYNC" } else { "" }),
                        t(""),
                        t("YES"),
                        Value::Null,
                    ]);
                    out.push(row);
                }
            }
        }
        "REFERENTIAL_CONSTRAINTS" => {
            let tables = all_tables(txn)?;
            for td in &tables {
                for fk in &td.foreign_keys {
                    // The parent's index the key uses (NULL while the
                    // parent does not exist).
                    let unique = tables
                        .iter()
                        .find(|p| fk.references(&p.db, &p.name))
                        .and_then(|p| p.key_index_for(&fk.parent_columns));
                    out.push(vec![
                        t("def"),
                        t(td.db.clone()),
                        t(fk.name.clone()),
                        t("def"),
                        t(fk.parent_db.clone()),
                        unique.map(t).unwrap_or(Value::Null),
                        t("NONE"),
                        t(fk.on_update.sql()),
                        t(fk.on_delete.sql()),
                        t(td.name.clone()),
                        t(fk.parent_table.clone()),
                    ]);
                }
            }
        }
        "CHECK_CONSTRAINTS" => {
            for td in all_tables(txn)? {
                for c in &td.checks {
                    out.push(vec![
                        t("def"),
                        t(td.db.clone()),
                        t(c.name.clone()),
                        t(c.clause.clone()),
                    ]);
                }
            }
        }
        "KEY_COLUMN_USAGE" | "TABLE_CONSTRAINTS" => {
            let usage = upper == "KEY_COLUMN_USAGE";
            for td in all_tables(txn)? {
                let mut keys: Vec<(&str, &str, &[usize])> = Vec::new();
                if !td.pk.is_empty() && td.view.is_none() {
                    keys.push(("PRIMARY", "PRIMARY KEY", &td.pk));
                }
                for ix in &td.indexes {
                    if matches!(ix.kind, IndexKind::BTree { unique: true }) {
                        keys.push((&ix.name, "UNIQUE", &ix.columns));
                    }
                }
                for (name, kind, cols) in keys {
                    if !usage {
                        out.push(vec![
                            t("def"),
                            t(td.db.clone()),
                            t(name),
                            t(td.db.clone()),
                            t(td.name.clone()),
                            t(kind),
                            t("YES"),
                        ]);
                        continue;
                    }
                    for (seq, &c) in cols.iter().enumerate() {
                        let Some(cd) = td.columns.get(c) else {
                            continue;
                        };
                        out.push(vec![
                            t("def"),
                            t(td.db.clone()),
                            t(name),
                            t("def"),
                            t(td.db.clone()),
                            t(td.name.clone()),
                            t(cd.name.clone()),
                            int(seq + 1),
                            Value::Null,
                            Value::Null,
                            Value::Null,
                            Value::Null,
                        ]);
                    }
                }
                for fk in &td.foreign_keys {
                    if !usage {
                        out.push(vec![
                            t("def"),
                            t(td.db.clone()),
                            t(fk.name.clone()),
                            t(td.db.clone()),
                            t(td.name.clone()),
                            t("FOREIGN KEY"),
                            t("YES"),
                        ]);
                        continue;
                    }
                    for (seq, (c, p)) in fk.columns.iter().zip(&fk.parent_columns).enumerate() {
                        out.push(vec![
                            t("def"),
                            t(td.db.clone()),
                            t(fk.name.clone()),
                            t("def"),
                            t(td.db.clone()),
                            t(td.name.clone()),
                            t(c.clone()),
                            int(seq + 1),
                            int(seq + 1),
                            t(fk.parent_db.clone()),
                            t(fk.parent_table.clone()),
                            t(p.clone()),
                        ]);
                    }
                }
                if !usage {
                    // CHECK constraints name no key columns.
                    for c in &td.checks {
                        out.push(vec![
                            t("def"),
                            t(td.db.clone()),
                            t(c.name.clone()),
                            t(td.db.clone()),
                            t(td.name.clone()),
                            t("CHECK"),
                            t(if c.enforced { "YES" } else { "NO" }),
                        ]);
                    }
                }
            }
        }
        "VIEWS" => {
            for td in all_tables(txn)? {
                if let Some(v) = &td.view {
                    out.push(vec![
                        t("def"),
                        t(td.db.clone()),
                        t(td.name.clone()),
                        t(v.query.clone()),
                        t("NONE"),
                        t("NO"),
                        t(""),
                        t("INVOKER"),
                        t("utf8mb4"),
                        t("utf8mb4_bin"),
                    ]);
                }
            }
        }
        "ENGINES" => out.push(vec![
            t("Tributary"),
            t("DEFAULT"),
            t("MVCC row store with ISCP-maintained vector, full-text and secondary indexes"),
            t("YES"),
            t("NO"),
            t("YES"),
        ]),
        "CHARACTER_SETS" => {
            for (name, coll, desc, max) in CHARSETS {
                out.push(vec![t(name), t(coll), t(desc), int(max)]);
            }
        }
        "COLLATIONS" => {
            for (name, cs, id) in COLLATIONS {
                // Tributary's binary collations compare without padding
                // (docs/COMPATIBILITY.md); utf8mb4_general_ci pads.
                let pad = name == "utf8mb4_general_ci";
                let default = !matches!(
                    name,
                    "utf8mb4_general_ci" | "utf8mb4_0900_bin" | "utf8mb4_0900_ai_ci"
                );
                // MySQL 8 shows SORTLEN 0 for its uca900 collations.
                let sortlen = if name == "utf8mb4_0900_ai_ci" { 0 } else { 1 };
                out.push(vec![
                    t(name),
                    t(cs),
                    int(id),
                    t(if default { "Yes" } else { "" }),
                    t("Yes"),
                    int(sortlen),
                    t(if pad { "PAD SPACE" } else { "NO PAD" }),
                ]);
            }
        }
        _ => return Ok(None),
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_defined_in_any_case() {
        for n in TABLES {
            let td = table_def(&n.to_ascii_lowercase()).expect(n);
            assert_eq!(td.name, n);
            assert!(!td.columns.is_empty());
        }
        assert!(table_def("NO_SUCH_TABLE").is_none());
    }
}
