//! Schema objects: databases, tables, columns and indexes as stored in the
//! catalog (JSON in the `mo_tables` system records).
//!
//! Pure data plus the rules that need only the definition itself (column
//! lookup, value coercion to a column's type). Never touches storage.

use serde::{Deserialize, Serialize};

use crate::collation::Collation;
use crate::error::{code, SqlError, SqlResult};
use crate::types::{parse_datetime, DataType, Value};

/// A database.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct DatabaseDef {
    pub id: u64,
    pub name: String,
}

/// A column.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ColumnDef {
    pub name: String,
    pub ty: DataType,
    pub nullable: bool,
    pub default: Option<Value>,
    #[serde(default)]
    pub auto_increment: bool,
    /// The collation of a text column (`utf8mb4_bin` for every other
    /// column, and for columns of catalogs written before collations).
    #[serde(default, skip_serializing_if = "Collation::is_default")]
    pub collation: Collation,
}

/// What kind of index.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum IndexKind {
    /// Ordered secondary index (storage table of `index key ++ pk → pk`).
    BTree { unique: bool },
    /// HNSW vector index (usearch).
    Hnsw {
        op_type: String,
        m: usize,
        ef_construction: usize,
        ef_search: usize,
    },
    /// Full-text index (tantivy BM25).
    FullText { parser: String },
}

impl IndexKind {
    /// `BTREE`, `HNSW` or `FULLTEXT`, as SHOW INDEX prints it.
    pub fn algo(&self) -> &'static str {
        match self {
            IndexKind::BTree { .. } => "BTREE",
            IndexKind::Hnsw { .. } => "HNSW",
            IndexKind::FullText { .. } => "FULLTEXT",
        }
    }
}

/// An index of a table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct IndexDef {
    pub name: String,
    /// Storage table holding the index entries / index state.
    pub storage_id: u64,
    pub kind: IndexKind,
    /// Column positions in the table.
    pub columns: Vec<usize>,
    /// Maintained by ISCP instead of the writing transaction.
    pub is_async: bool,
    /// ISCP job generation when `is_async` (or for HNSW/full-text state).
    pub job_id: Option<u64>,
}

/// A table.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct TableDef {
    pub id: u64,
    pub db: String,
    pub name: String,
    pub columns: Vec<ColumnDef>,
    /// Primary-key column positions; empty = hidden row id.
    pub pk: Vec<usize>,
    pub indexes: Vec<IndexDef>,
    /// Next AUTO_INCREMENT value hint (authoritative counter is in storage).
    #[serde(default)]
    pub comment: String,
    /// Set for a view: the query it stands for (a view has no rows and
    /// no storage of its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view: Option<ViewDef>,
    /// The table's default collation (`DEFAULT COLLATE = …`): what a text
    /// column added without its own gets.
    #[serde(default, skip_serializing_if = "Collation::is_default")]
    pub collation: Collation,
    /// FOREIGN KEY constraints of this table (as child).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub foreign_keys: Vec<ForeignKeyDef>,
    /// The tables whose foreign keys reference this one, as (database,
    /// table): where a DELETE or UPDATE of this table looks for children.
    /// A table never referenced pays nothing for foreign keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub referenced_by: Vec<(String, String)>,
    /// CHECK constraints, in declaration order (`crate::sql::check_constraint`
    /// reads, names and enforces them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckDef>,
}

/// A CHECK constraint. The condition is kept as SQL text over the table's
/// column names (backquoted), as MySQL keeps it, so column moves need no
/// rewrite.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CheckDef {
    /// The constraint's name (`<table>_chk_<n>` unless named).
    pub name: String,
    /// The condition, parenthesized: what `CHECK_CLAUSE` shows.
    pub clause: String,
    /// `NOT ENFORCED` clears it: kept and shown, never checked.
    pub enforced: bool,
}

/// What a foreign key does to the child rows when the parent row they
/// reference is deleted or its referenced columns change. (`SET DEFAULT`
/// is refused, as InnoDB refuses it.)
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub enum FkAction {
    /// Refuse the parent change while children exist (the default).
    #[default]
    NoAction,
    /// The same, as InnoDB checks both at once.
    Restrict,
    /// Delete the children / give them the parent's new values.
    Cascade,
    /// Set the children's foreign-key columns to NULL.
    SetNull,
}

impl FkAction {
    /// The rule as SQL and `information_schema` spell it.
    pub fn sql(self) -> &'static str {
        match self {
            FkAction::NoAction => "NO ACTION",
            FkAction::Restrict => "RESTRICT",
            FkAction::Cascade => "CASCADE",
            FkAction::SetNull => "SET NULL",
        }
    }
}

/// A FOREIGN KEY constraint: columns of the child table (the one holding
/// it) that must match a row of the parent table. Columns are kept by
/// name on both sides, so column moves in either table need no rewrite.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ForeignKeyDef {
    /// The constraint's name (`<table>_ibfk_<n>` unless named).
    pub name: String,
    /// The child's columns.
    pub columns: Vec<String>,
    pub parent_db: String,
    pub parent_table: String,
    /// The parent's columns, one per child column.
    pub parent_columns: Vec<String>,
    #[serde(default)]
    pub on_delete: FkAction,
    #[serde(default)]
    pub on_update: FkAction,
}

impl ForeignKeyDef {
    /// `FOREIGN KEY (…) REFERENCES p (…) ON …` as MySQL 8 prints it in SHOW
    /// CREATE TABLE and in errors 1451 / 1452 (the parent's database only
    /// when it is not `child_db`; NO ACTION, the default, not printed).
    pub fn clause(&self, child_db: &str) -> String {
        let list = |cols: &[String]| {
            cols.iter()
                .map(|c| format!("`{c}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let parent = if self.parent_db == child_db {
            format!("`{}`", self.parent_table)
        } else {
            format!("`{}`.`{}`", self.parent_db, self.parent_table)
        };
        let mut s = format!(
            "FOREIGN KEY ({}) REFERENCES {parent} ({})",
            list(&self.columns),
            list(&self.parent_columns)
        );
        if self.on_delete != FkAction::NoAction {
            s.push_str(&format!(" ON DELETE {}", self.on_delete.sql()));
        }
        if self.on_update != FkAction::NoAction {
            s.push_str(&format!(" ON UPDATE {}", self.on_update.sql()));
        }
        s
    }

    /// Whether this key references table `db`.`table`.
    pub fn references(&self, db: &str, table: &str) -> bool {
        self.parent_db == db && self.parent_table == table
    }
}

/// The definition of a view.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ViewDef {
    /// The SELECT text, as written.
    pub query: String,
    /// Column names given with the view (`CREATE VIEW v (a, b) AS …`).
    #[serde(default)]
    pub columns: Vec<String>,
}

/// One column of one index (the primary key first, then the indexes in
/// order), as SHOW INDEX and `information_schema.STATISTICS` list them.
pub struct IndexColumn<'a> {
    pub key_name: &'a str,
    pub unique: bool,
    /// `BTREE`, `HNSW` or `FULLTEXT`.
    pub index_type: &'static str,
    /// 1-based position in the index.
    pub seq: usize,
    pub column: &'a ColumnDef,
    /// The secondary index (`None` for the primary key).
    pub index: Option<&'a IndexDef>,
}

impl IndexColumn<'_> {
    /// The fields SHOW INDEX and `information_schema.STATISTICS` share, in
    /// their order: index name, position, column, collation (`A` for a
    /// B-tree), cardinality, sub-part, packed (all NULL: no statistics),
    /// nullable (`YES` or empty), index type.
    pub fn shared_fields(&self) -> [Value; 9] {
        let text = |s: &str| Value::Text(s.to_string());
        [
            text(self.key_name),
            Value::Int(self.seq as i64),
            text(&self.column.name),
            if self.index_type == "BTREE" {
                text("A")
            } else {
                Value::Null
            },
            Value::Null,
            Value::Null,
            Value::Null,
            text(if self.column.nullable { "YES" } else { "" }),
            text(self.index_type),
        ]
    }
}

impl TableDef {
    /// Every column of every index, the primary key first (a view has
    /// none).
    pub fn index_columns(&self) -> Vec<IndexColumn<'_>> {
        let keys = std::iter::once(("PRIMARY", true, "BTREE", &self.pk, None)).chain(
            self.indexes.iter().map(|ix| {
                let unique = matches!(ix.kind, IndexKind::BTree { unique: true });
                (
                    ix.name.as_str(),
                    unique,
                    ix.kind.algo(),
                    &ix.columns,
                    Some(ix),
                )
            }),
        );
        let mut out = Vec::new();
        for (key_name, unique, index_type, cols, index) in keys {
            for (i, &c) in cols.iter().enumerate() {
                if let Some(column) = self.columns.get(c) {
                    out.push(IndexColumn {
                        key_name,
                        unique,
                        index_type,
                        seq: i + 1,
                        column,
                        index,
                    });
                }
            }
        }
        out
    }

    /// Position of a column by (case-insensitive) name.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns
            .iter()
            .position(|c| c.name.eq_ignore_ascii_case(name))
    }

    /// Like [`column_index`](Self::column_index) but a 1054 error if absent.
    pub fn require_column(&self, name: &str) -> SqlResult<usize> {
        self.column_index(name).ok_or_else(|| {
            SqlError::new(
                code::BAD_FIELD,
                format!("Unknown column '{name}' in '{}'", self.name),
            )
        })
    }

    /// Index by name.
    pub fn index(&self, name: &str) -> Option<&IndexDef> {
        self.indexes
            .iter()
            .find(|i| i.name.eq_ignore_ascii_case(name))
    }

    /// The name of the index (`PRIMARY` or a synchronous B-tree) whose
    /// leading columns are `cols` (by name, in order), if there is one:
    /// what each end of a foreign key needs. An ASYNC index does not
    /// count (its entries lag the writing transaction).
    pub fn key_index_for(&self, cols: &[String]) -> Option<&str> {
        let leads = |ix: &[usize]| {
            ix.len() >= cols.len()
                && ix.iter().zip(cols).all(|(&i, c)| {
                    self.columns
                        .get(i)
                        .is_some_and(|col| col.name.eq_ignore_ascii_case(c))
                })
        };
        if !self.pk.is_empty() && leads(&self.pk) {
            return Some("PRIMARY");
        }
        self.indexes
            .iter()
            .find(|ix| {
                !ix.is_async && matches!(ix.kind, IndexKind::BTree { .. }) && leads(&ix.columns)
            })
            .map(|ix| ix.name.as_str())
    }

    /// Whether the table uses a hidden row id as key.
    pub fn has_hidden_pk(&self) -> bool {
        self.pk.is_empty()
    }

    /// Primary-key values of a row (not for hidden-pk tables).
    pub fn pk_values(&self, row: &[Value]) -> Vec<Value> {
        self.pk
            .iter()
            .map(|&i| row.get(i).cloned().unwrap_or(Value::Null))
            .collect()
    }

    /// The collation each of `cols` keys by (binary for a position past
    /// the columns and for every non-text column).
    pub fn key_collations(&self, cols: &[usize]) -> Vec<Collation> {
        cols.iter()
            .map(|&c| self.columns.get(c).map(|c| c.collation).unwrap_or_default())
            .collect()
    }

    /// The storage key of a row whose primary-key values are `vals` (not
    /// for hidden-pk tables): text of a non-binary collation keyed by its
    /// weight string, so rows the collation calls equal share one key.
    pub fn pk_key(&self, vals: &[Value]) -> Vec<u8> {
        debug_assert_eq!(
            vals.len(),
            self.pk.len(),
            "{}: primary-key arity",
            self.name
        );
        super::codec::encode_key_in(vals, &self.key_collations(&self.pk))
    }

    /// Whether the primary key's storage key decodes back to its values
    /// (no column of it keys by a weight string).
    pub fn pk_decodable(&self) -> bool {
        self.pk
            .iter()
            .all(|&c| self.columns.get(c).is_none_or(|c| c.collation.is_binary()))
    }

    /// `db.table`
    pub fn qualified(&self) -> String {
        format!("{}.{}", self.db, self.name)
    }
}

/// Coerce `v` to the column's type, enforcing NOT NULL, VARCHAR length and
/// vector dimension / finiteness. Errors name the column.
pub fn coerce_to_column(col: &ColumnDef, v: Value) -> SqlResult<Value> {
    if v.is_null() {
        if !col.nullable {
            return Err(SqlError::new(
                code::BAD_NULL,
                format!("Column '{}' cannot be null", col.name),
            ));
        }
        return Ok(Value::Null);
    }
    coerce_value(&col.ty, v, &col.name)
}

/// A value stored into a JSON column: text must be a JSON document (kept
/// in MySQL's canonical form; 3140 otherwise); a number or boolean becomes
/// that JSON scalar.
fn json_value(v: Value, what: &str) -> SqlResult<Value> {
    let text = match v {
        Value::Text(s) => s,
        Value::Int(i) => i.to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Float(f) if f.is_finite() => crate::types::format_float(f),
        Value::Decimal(d) => d.to_string(),
        other => {
            return Err(SqlError::new(
                3140,
                format!(
                    "Invalid JSON text: \"Invalid value.\" in value for column '{what}' ({other})"
                ),
            ))
        }
    };
    crate::json::normalize(&text).map(Value::Text).map_err(|e| {
        SqlError::new(
            e.code,
            format!(
                "{} in value for column '{what}'.",
                e.message.trim_end_matches('.')
            ),
        )
    })
}

/// Coerce a non-NULL value to a type (`what` names the column in errors).
pub fn coerce_value(ty: &DataType, v: Value, what: &str) -> SqlResult<Value> {
    let bad = |v: &Value| {
        SqlError::new(
            code::TRUNCATED_WRONG_VALUE,
            format!(
                "Incorrect {} value: '{}' for column '{what}'",
                ty.sql_name(),
                v
            ),
        )
    };
    // A binary string stored in a column of another type is read as text
    // (its bytes must be UTF-8: 1366 otherwise, as MySQL for bytes a
    // utf8mb4 column cannot hold); JSON refuses it (3144).
    let v = match v {
        Value::Bytes(b) if !ty.is_binary_string() => {
            if matches!(ty, DataType::Json) {
                return Err(SqlError::new(
                    3144,
                    "Cannot create a JSON value from a string with CHARACTER SET 'binary'.",
                ));
            }
            // MySQL stores a hexadecimal literal in a number column as
            // the number it spells, another binary string as the number
            // its text reads as; a value here no longer says which it was.
            if !matches!(ty, DataType::Varchar(_) | DataType::Text) {
                return Err(SqlError::unsupported(format!(
                    "storing a binary string in a {} column: CAST it (CAST(x AS CHAR), CAST(0x… AS UNSIGNED))",
                    ty.sql_name()
                )));
            }
            Value::Text(utf8_or_1366(b, what)?)
        }
        v => v,
    };
    match ty {
        DataType::Binary(_) | DataType::VarBinary(_) | DataType::Blob(_) => {
            let mut b = match v {
                Value::Bytes(b) => b,
                Value::Text(s) => s.into_bytes(),
                other => other.to_string().into_bytes(),
            };
            let max = ty.max_bytes().unwrap_or(u64::MAX);
            if b.len() as u64 > max {
                return Err(SqlError::new(
                    code::DATA_TOO_LONG,
                    format!("Data too long for column '{what}' at row 1"),
                ));
            }
            if let DataType::Binary(n) = ty {
                // BINARY(n) holds exactly n bytes: 0x00 pads (MySQL).
                b.resize(*n as usize, 0);
            }
            Ok(Value::Bytes(b))
        }
        DataType::Json => json_value(v, what),
        DataType::Bool => match v {
            Value::Bool(b) => Ok(Value::Bool(b)),
            Value::Int(i) => Ok(Value::Bool(i != 0)),
            Value::Float(f) => Ok(Value::Bool(f != 0.0)),
            Value::Decimal(d) => Ok(Value::Bool(!d.is_zero())),
            Value::Text(ref s) => match s.to_ascii_lowercase().as_str() {
                "true" | "1" => Ok(Value::Bool(true)),
                "false" | "0" => Ok(Value::Bool(false)),
                _ => Err(bad(&v)),
            },
            other => Err(bad(&other)),
        },
        DataType::Int | DataType::BigInt => {
            let i = match v {
                Value::Int(i) => i,
                Value::Bool(b) => b as i64,
                Value::Float(f) => float_to_i64(f).ok_or_else(|| out_of_range(what))?,
                Value::Decimal(d) => d.to_i64_round().ok_or_else(|| out_of_range(what))?,
                Value::Text(ref s) => match s.trim().parse::<i64>() {
                    Ok(i) => i,
                    Err(_) => match s.trim().parse::<f64>() {
                        Ok(f) if f.is_finite() => {
                            float_to_i64(f).ok_or_else(|| out_of_range(what))?
                        }
                        _ => return Err(bad(&v)),
                    },
                },
                other => return Err(bad(&other)),
            };
            if matches!(ty, DataType::Int) && (i < i32::MIN as i64 || i > i32::MAX as i64) {
                return Err(out_of_range(what));
            }
            Ok(Value::Int(i))
        }
        DataType::Float | DataType::Double => {
            let f = match v {
                Value::Int(i) => i as f64,
                Value::Float(f) => f,
                Value::Decimal(d) => d.to_f64(),
                Value::Bool(b) => b as i64 as f64,
                Value::Text(ref s) => s.trim().parse::<f64>().map_err(|_| bad(&v))?,
                other => return Err(bad(&other)),
            };
            if !f.is_finite() {
                return Err(out_of_range(what));
            }
            if matches!(ty, DataType::Float) {
                Ok(Value::Float(f as f32 as f64))
            } else {
                Ok(Value::Float(f))
            }
        }
        DataType::Varchar(n) => {
            let s = text_of(v);
            if s.chars().count() > *n as usize {
                return Err(SqlError::new(
                    code::DATA_TOO_LONG,
                    format!("Data too long for column '{what}' at row 1"),
                ));
            }
            Ok(Value::Text(s))
        }
        DataType::Text => Ok(Value::Text(text_of(v))),
        DataType::Integer { bits, unsigned } => {
            let Value::Int(i) = coerce_value(&DataType::BigInt, v, what)? else {
                return Err(SqlError::internal("integer coercion"));
            };
            let (lo, hi) = if *unsigned {
                (0i128, (1i128 << bits) - 1)
            } else {
                (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
            };
            if i128::from(i) < lo || i128::from(i) > hi {
                return Err(out_of_range(what));
            }
            Ok(Value::Int(i))
        }
        DataType::Date => {
            let us = match coerce_value(&DataType::DateTime, v, what)? {
                Value::DateTime(us) => us,
                _ => return Err(SqlError::internal("date coercion")),
            };
            // MySQL keeps the date part of a datetime stored in a DATE.
            Ok(Value::DateTime(
                us.div_euclid(86_400_000_000) * 86_400_000_000,
            ))
        }
        DataType::Decimal(p, sc) => {
            use crate::decimal::Decimal;
            let d = match &v {
                Value::Decimal(d) => d.clone(),
                Value::Int(i) => Decimal::from_i64(*i),
                Value::Bool(b) => Decimal::from_i64(i64::from(*b)),
                Value::Float(f) => Decimal::from_f64(*f).ok_or_else(|| out_of_range(what))?,
                Value::Text(t) => {
                    let t = t.trim();
                    match Decimal::parse(t) {
                        Some(d) => d,
                        None => match t.parse::<f64>() {
                            Ok(f) if !t.contains(['x', 'X', 'n', 'N']) => {
                                Decimal::from_f64(f).ok_or_else(|| out_of_range(what))?
                            }
                            _ => return Err(bad(&v)),
                        },
                    }
                }
                other => return Err(bad(other)),
            };
            // Rounded half away from zero to the column's scale; an
            // integer part wider than p - s is out of range (strict mode).
            let r = d.rescale(*sc);
            if r.int_digits() > u32::from(p.saturating_sub(*sc)) {
                return Err(out_of_range(what));
            }
            Ok(Value::Decimal(r))
        }
        DataType::DateTime => match v {
            Value::DateTime(us) => Ok(Value::DateTime(us)),
            Value::Text(ref s) => parse_datetime(s)
                .map(Value::DateTime)
                .ok_or_else(|| bad(&v)),
            other => Err(bad(&other)),
        },
        DataType::DateTimeFsp(fsp) => match coerce_value(&DataType::DateTime, v, what)? {
            Value::DateTime(us) => Ok(Value::DateTime(crate::types::round_fsp(us, *fsp))),
            _ => Err(SqlError::internal("datetime coercion")),
        },
        DataType::VecF32(dim) | DataType::VecF64(dim) => {
            let xs = match v {
                Value::Vector(xs) => xs,
                Value::Text(ref s) => parse_vector(s).map_err(|m| {
                    SqlError::new(code::INCORRECT_VALUE, format!("{m} for column '{what}'"))
                })?,
                other => return Err(bad(&other)),
            };
            if xs.len() != *dim as usize {
                return Err(SqlError::new(
                    code::INCORRECT_VALUE,
                    format!(
                        "vector dimension mismatch for column '{what}': expected {dim}, got {}",
                        xs.len()
                    ),
                ));
            }
            if let Some(x) = xs.iter().find(|x| !x.is_finite()) {
                return Err(SqlError::new(
                    code::INCORRECT_VALUE,
                    format!("vector for column '{what}' contains a non-finite value ({x})"),
                ));
            }
            if matches!(ty, DataType::VecF32(_)) {
                let ys: Vec<f64> = xs.iter().map(|x| *x as f32 as f64).collect();
                if let Some(x) = ys.iter().find(|x| !x.is_finite()) {
                    return Err(SqlError::new(
                        code::INCORRECT_VALUE,
                        format!("vector for column '{what}' overflows f32 ({x})"),
                    ));
                }
                Ok(Value::Vector(ys))
            } else {
                Ok(Value::Vector(xs))
            }
        }
    }
}

/// `f` rounded to the nearest integer, if that is a BIGINT: every value in
/// `[-2^63, 2^63)` (both bounds are exact in an f64), none outside.
fn float_to_i64(f: f64) -> Option<i64> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    let r = f.round();
    (r.is_finite() && (-TWO_63..TWO_63).contains(&r)).then_some(r as i64)
}

fn out_of_range(what: &str) -> SqlError {
    SqlError::new(
        1264,
        format!("Out of range value for column '{what}' at row 1"),
    )
}

/// `b` as text, or MySQL's 1366 for bytes that are not UTF-8 (showing
/// the first offending bytes as MySQL does: `'\xFF\xFE'`).
pub fn utf8_or_1366(b: Vec<u8>, what: &str) -> SqlResult<String> {
    String::from_utf8(b).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let shown: String = e.as_bytes()[at..]
            .iter()
            .take(6)
            .map(|x| format!("\\x{x:02X}"))
            .collect();
        SqlError::new(
            1366,
            format!("Incorrect string value: '{shown}' for column '{what}' at row 1"),
        )
    })
}

fn text_of(v: Value) -> String {
    match v {
        Value::Text(s) => s,
        other => other.to_string(),
    }
}

/// Parse a vector literal `'[1, 2.5, -3]'`.
pub fn parse_vector(s: &str) -> Result<Vec<f64>, String> {
    let t = s.trim();
    let inner = t
        .strip_prefix('[')
        .and_then(|x| x.strip_suffix(']'))
        .ok_or_else(|| format!("malformed vector literal '{s}'"))?;
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    inner
        .split(',')
        .map(|p| {
            let p = p.trim();
            let x: f64 = p
                .parse()
                .map_err(|_| format!("malformed vector literal '{s}'"))?;
            if !x.is_finite() {
                return Err(format!("vector literal '{s}' contains a non-finite value"));
            }
            Ok(x)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A catalog written before collations (no `collation` fields) reads
    /// as utf8mb4_bin everywhere; a binary column is written as before (so
    /// an older binary still reads it); a case-insensitive one round-trips.
    #[test]
    fn collations_in_old_and_new_catalog_records() {
        let old = r#"{"id":7,"db":"d","name":"t","columns":[
            {"name":"s","ty":{"Varchar":10},"nullable":true,"default":null}],
            "pk":[],"indexes":[],"comment":""}"#;
        let t: TableDef = serde_json::from_str(old).expect("old record");
        // Nor foreign keys: none either way, and none written back.
        assert!(t.foreign_keys.is_empty() && t.referenced_by.is_empty());
        assert_eq!(t.collation, Collation::Utf8mb4Bin);
        assert_eq!(t.columns[0].collation, Collation::Utf8mb4Bin);
        let again = serde_json::to_string(&t).expect("encode");
        assert!(!again.contains("collation"), "{again}");
        assert!(
            !again.contains("foreign_keys") && !again.contains("referenced_by"),
            "{again}"
        );
        let mut ci = t.clone();
        ci.columns[0].collation = Collation::Utf8mb4GeneralCi;
        ci.collation = Collation::Utf8mb4GeneralCi;
        let text = serde_json::to_string(&ci).expect("encode");
        assert!(
            text.contains(r#""collation":"utf8mb4_general_ci""#),
            "{text}"
        );
        let back: TableDef = serde_json::from_str(&text).expect("decode");
        assert_eq!(back, ci);
    }

    /// A table with foreign keys round-trips; the rule spelled by SQL
    /// and the clause MySQL 8 prints (NO ACTION, the default, omitted;
    /// the parent's database only when it is another).
    #[test]
    fn foreign_keys_round_trip_and_print_as_mysql() {
        let fk = ForeignKeyDef {
            name: "c_ibfk_1".into(),
            columns: vec!["a".into(), "b".into()],
            parent_db: "other".into(),
            parent_table: "p".into(),
            parent_columns: vec!["x".into(), "y".into()],
            on_delete: FkAction::Cascade,
            on_update: FkAction::NoAction,
        };
        assert_eq!(
            fk.clause("d"),
            "FOREIGN KEY (`a`, `b`) REFERENCES `other`.`p` (`x`, `y`) ON DELETE CASCADE"
        );
        assert_eq!(
            fk.clause("other"),
            "FOREIGN KEY (`a`, `b`) REFERENCES `p` (`x`, `y`) ON DELETE CASCADE"
        );
        let t = TableDef {
            id: 1,
            db: "d".into(),
            name: "c".into(),
            columns: vec![],
            pk: vec![],
            indexes: vec![],
            comment: String::new(),
            view: None,
            collation: Collation::default(),
            foreign_keys: vec![fk],
            referenced_by: vec![("d".into(), "c".into())],
            checks: Vec::new(),
        };
        let text = serde_json::to_string(&t).expect("encode");
        let back: TableDef = serde_json::from_str(&text).expect("decode");
        assert_eq!(back, t);
        assert_eq!(FkAction::SetNull.sql(), "SET NULL");
    }

    fn col(ty: DataType, nullable: bool) -> ColumnDef {
        ColumnDef {
            name: "c".into(),
            ty,
            nullable,
            default: None,
            auto_increment: false,
            collation: Collation::default(),
        }
    }

    #[test]
    fn floats_become_bigints_up_to_the_exact_bounds() {
        assert_eq!(float_to_i64(-9_223_372_036_854_775_808.0), Some(i64::MIN));
        assert_eq!(float_to_i64(9_223_372_036_854_775_808.0), None);
        // The largest f64 below 2^63.
        assert_eq!(
            float_to_i64(9_223_372_036_854_774_784.0),
            Some(9_223_372_036_854_774_784)
        );
        assert_eq!(float_to_i64(-9_223_372_036_854_777_856.0), None);
        assert_eq!(float_to_i64(2.5), Some(3));
        assert_eq!(float_to_i64(-2.5), Some(-3));
        assert_eq!(float_to_i64(f64::NAN), None);
        assert_eq!(float_to_i64(f64::INFINITY), None);
        let big = coerce_to_column(&col(DataType::BigInt, true), Value::Float(9.21e18));
        assert_eq!(big.unwrap(), Value::Int(9_210_000_000_000_000_000));
        let text = coerce_to_column(
            &col(DataType::BigInt, true),
            Value::Text("-9223372036854775808.0".into()),
        );
        assert_eq!(text.unwrap(), Value::Int(i64::MIN));
        let over = coerce_to_column(&col(DataType::BigInt, true), Value::Text("1e19".into()));
        assert_eq!(over.unwrap_err().code, 1264);
    }

    #[test]
    fn coercion_rules() {
        let v = coerce_to_column(&col(DataType::Varchar(3), true), Value::Text("abcd".into()));
        assert_eq!(v.unwrap_err().code, code::DATA_TOO_LONG);
        let v = coerce_to_column(&col(DataType::Int, false), Value::Null);
        assert_eq!(v.unwrap_err().code, code::BAD_NULL);
        let v = coerce_to_column(
            &col(DataType::VecF32(2), true),
            Value::Text("[1,2,3]".into()),
        );
        assert!(v.unwrap_err().message.contains("dimension"));
        let v = coerce_to_column(
            &col(DataType::VecF32(2), true),
            Value::Text("[1,nan]".into()),
        );
        assert!(v.is_err());
        let v = coerce_to_column(
            &col(DataType::VecF32(2), true),
            Value::Text("[1,1e39]".into()),
        );
        assert!(v.is_err());
        assert_eq!(
            coerce_to_column(&col(DataType::BigInt, true), Value::Text("42".into())).unwrap(),
            Value::Int(42)
        );
        assert!(coerce_to_column(&col(DataType::Int, true), Value::Int(1 << 40)).is_err());
    }
}
