//! The value helpers every evaluator shares (the compiler's evaluation,
//! the registry's function bodies, the date/time and regular-expression
//! functions): MySQL's coercion of a value to a number, an integer or
//! text, three-valued logic, comparison with MySQL's coercions, LIKE,
//! the key form of grouping / DISTINCT / IN-set keys ([`ValueSet`]),
//! vector arguments and distances, and the argument-count, result-size
//! and out-of-range errors.
//!
//! A leaf: names nothing of the SQL layer, so that the functions below the
//! compiler can use these without naming it.

use std::borrow::Cow;
use std::cmp::Ordering;

use crate::catalog::schema::parse_vector;
use crate::collation::wildcard;
use crate::decimal::Decimal;
use crate::error::{code, SqlError, SqlResult};
use crate::types::{parse_datetime, Value};

/// A string as a DOUBLE, as MySQL converts it in a numeric context: its
/// longest numeric prefix, with warning 1292 when that is not the whole
/// string (an error while a strict-mode write runs: see
/// [`crate::warnings::note_later`]).
pub(crate) fn text_to_double(s: &str) -> f64 {
    let (f, whole) = crate::types::parse_number_prefix(s);
    if !whole {
        crate::warnings::note_later(
            code::TRUNCATED_WRONG_VALUE,
            format!("Truncated incorrect DOUBLE value: '{s}'"),
        );
    }
    f
}

/// A value in a numeric context: INT / DOUBLE / DECIMAL as they are, a
/// boolean as 0 / 1, text as a DOUBLE ([`text_to_double`]), a datetime as
/// its microseconds; `None` for NULL and vectors.
pub(crate) fn num(v: &Value) -> Option<Value> {
    match v {
        Value::Int(_) | Value::Float(_) | Value::Decimal(_) => Some(v.clone()),
        Value::Bool(b) => Some(Value::Int(*b as i64)),
        // A string in a numeric context is a DOUBLE (`'3' + 1` is 4e0).
        Value::Text(s) => Some(Value::Float(text_to_double(s))),
        Value::Bytes(b) => Some(Value::Float(text_to_double(&String::from_utf8_lossy(b)))),
        Value::DateTime(us) => Some(Value::Int(*us)),
        _ => None,
    }
}

/// An integer argument (numbers truncated as MySQL's integer arguments,
/// numeric text parsed); `None` for NULL or non-numbers.
pub(crate) fn num_i64(v: &Value) -> Option<i64> {
    match num(v)? {
        Value::Int(i) => Some(i),
        Value::Decimal(d) => {
            Some(
                d.to_i64_round()
                    .unwrap_or(if d.is_negative() { i64::MIN } else { i64::MAX }),
            )
        }
        Value::Float(f) if f.is_finite() => Some(f.round() as i64),
        _ => None,
    }
}

/// A value as text, borrowed when it is text already.
pub(crate) fn text_of(v: &Value) -> Cow<'_, str> {
    match v {
        Value::Text(s) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_string()),
    }
}

/// A value's bytes: a binary string's own, any other value's text in
/// UTF-8 (as MySQL converts a utf8mb4 string to binary).
pub(crate) fn bytes_of(v: &Value) -> Cow<'_, [u8]> {
    match v {
        Value::Bytes(b) => Cow::Borrowed(b),
        Value::Text(s) => Cow::Borrowed(s.as_bytes()),
        other => Cow::Owned(other.to_string().into_bytes()),
    }
}

/// 1582 unless there are `n` arguments.
pub(crate) fn want(args: &[Value], n: usize, name: &str) -> SqlResult<()> {
    if args.len() != n {
        return Err(wrong_count(name));
    }
    Ok(())
}

/// MySQL's error 1582 for a call to `name` with the wrong number of
/// arguments.
pub(crate) fn wrong_count(name: &str) -> SqlError {
    SqlError::new(
        code::WRONG_PARAMCOUNT,
        format!("Incorrect parameter count in the call to native function '{name}'"),
    )
}

/// The server's `max_allowed_packet`: a string function whose result would
/// be larger fails before allocating it.
const MAX_RESULT_BYTES: u128 = 64 << 20;

/// 1301 when a string result of `bytes` would pass `max_allowed_packet`.
pub(crate) fn check_result_size(name: &str, bytes: u128) -> SqlResult<()> {
    if bytes > MAX_RESULT_BYTES {
        return Err(SqlError::new(
            1301,
            format!(
                "Result of {name}() was larger than max_allowed_packet ({MAX_RESULT_BYTES}) - truncated"
            ),
        ));
    }
    Ok(())
}

/// The non-NULL values of a materialized `IN (subquery)` plus whether a
/// NULL was among them (which turns a miss into NULL, as in MySQL).
#[derive(Debug, Default)]
pub struct ValueSet {
    values: Vec<Value>,
    /// Normalized keys of `values` when they are all numbers or all text
    /// (then equality is key equality); `None` when mixed.
    keys: Option<std::collections::HashSet<Vec<u8>>>,
    class: Option<u8>,
    has_null: bool,
}

/// 0 number, 1 text, 2 other (datetime / vector): values of one class
/// compare equal exactly when their [`value_key`]s are equal.
fn value_class(v: &Value) -> u8 {
    match v {
        Value::Int(_) | Value::Float(_) | Value::Decimal(_) | Value::Bool(_) => 0,
        // Text and binary strings share their key form (their bytes).
        Value::Text(_) | Value::Bytes(_) => 1,
        _ => 2,
    }
}

/// The form of a value in grouping, DISTINCT, set and hash-join keys:
/// numbers that are equal in SQL get one form (3, 3.0 and TRUE-as-1 are
/// `Int(3)`; -0.0 and 0 are `Int(0)`; 1.50 and 1.5 one decimal; a
/// decimal a double holds exactly, that double).
pub fn key_form(v: &Value) -> Value {
    match v {
        Value::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::Int(*f as i64),
        Value::Decimal(d) => {
            // The value as it shows (as comparisons see it).
            let d = d.normalized();
            match d.to_i64_exact() {
                Some(i) => Value::Int(i),
                None => {
                    let f = d.to_f64();
                    match Decimal::from_f64(f) {
                        Some(back) if back.cmp_value(&d) == Ordering::Equal => Value::Float(f),
                        _ => Value::Decimal(d),
                    }
                }
            }
        }
        Value::Bool(b) => Value::Int(i64::from(*b)),
        other => other.clone(),
    }
}

/// A key under which SQL-equal values of one class coincide.
pub fn value_key(v: &Value) -> Vec<u8> {
    crate::catalog::codec::encode_key(std::slice::from_ref(&key_form(v)))
}

impl ValueSet {
    /// Build from a subquery's single column.
    pub fn new(vals: impl IntoIterator<Item = Value>) -> ValueSet {
        let mut s = ValueSet::default();
        let mut classes = std::collections::HashSet::new();
        for v in vals {
            if v.is_null() {
                s.has_null = true;
            } else {
                classes.insert(value_class(&v));
                s.values.push(v);
            }
        }
        if classes.len() == 1 {
            let c = classes.into_iter().next().unwrap_or(2);
            if c < 2 {
                s.class = Some(c);
                s.keys = Some(s.values.iter().map(value_key).collect());
            }
        }
        s
    }

    /// `x IN set` with SQL's three-valued answer.
    pub fn contains(&self, x: &Value) -> Option<bool> {
        if self.values.is_empty() && !self.has_null {
            return Some(false);
        }
        if x.is_null() {
            return None;
        }
        let hit = match (&self.keys, self.class) {
            (Some(keys), Some(c)) if value_class(x) == c => keys.contains(&value_key(x)),
            _ => self
                .values
                .iter()
                .any(|v| sql_cmp(x, v) == Some(Ordering::Equal)),
        };
        if hit {
            Some(true)
        } else if self.has_null {
            None
        } else {
            Some(false)
        }
    }
}

/// SQL's three-valued AND (`None` = NULL/UNKNOWN).
pub fn and3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(false), _) | (_, Some(false)) => Some(false),
        (Some(true), Some(true)) => Some(true),
        _ => None,
    }
}

/// SQL's three-valued OR (`None` = NULL/UNKNOWN).
pub fn or3(a: Option<bool>, b: Option<bool>) -> Option<bool> {
    match (a, b) {
        (Some(true), _) | (_, Some(true)) => Some(true),
        (Some(false), Some(false)) => Some(false),
        _ => None,
    }
}

/// SQL truthiness: `None` for NULL.
pub fn truth(v: &Value) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Bool(b) => Some(*b),
        Value::Int(i) => Some(*i != 0),
        Value::Float(f) => Some(*f != 0.0),
        Value::Decimal(d) => Some(!d.is_zero()),
        Value::Text(s) => Some(text_to_double(s) != 0.0),
        Value::Bytes(b) => Some(text_to_double(&String::from_utf8_lossy(b)) != 0.0),
        Value::DateTime(_) | Value::Vector(_) => Some(true),
    }
}

/// A value as a number (text parsed as MySQL does), `None` if it is none.
pub fn as_f64(v: &Value) -> Option<f64> {
    match num(v)? {
        Value::Int(i) => Some(i as f64),
        Value::Float(f) => Some(f),
        Value::Decimal(d) => Some(d.to_f64()),
        _ => None,
    }
}

/// Compare two non-NULL values with MySQL coercions (text vs number compares
/// as numbers; text vs datetime parses the text).
pub fn sql_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Text(x), Value::Text(y)) => Some(x.cmp(y)),
        // A binary string beside a string compares byte-wise (MySQL
        // compares a binary string with a text one as binary).
        (Value::Bytes(x), Value::Bytes(y)) => Some(x.cmp(y)),
        (Value::Bytes(x), Value::Text(y)) => Some(x.as_slice().cmp(y.as_bytes())),
        (Value::Text(x), Value::Bytes(y)) => Some(x.as_bytes().cmp(y.as_slice())),
        (Value::DateTime(x), Value::Bytes(b)) => {
            parse_datetime(&String::from_utf8_lossy(b)).map(|y| x.cmp(&y))
        }
        (Value::Bytes(b), Value::DateTime(y)) => {
            parse_datetime(&String::from_utf8_lossy(b)).map(|x| x.cmp(y))
        }
        (Value::DateTime(x), Value::Text(s)) => parse_datetime(s).map(|y| x.cmp(&y)),
        (Value::Text(s), Value::DateTime(y)) => parse_datetime(s).map(|x| x.cmp(y)),
        (Value::Vector(_), _) | (_, Value::Vector(_)) => Some(a.total_cmp(b)),
        (Value::Text(_) | Value::Bytes(_), _) | (_, Value::Text(_) | Value::Bytes(_)) => {
            let (x, y) = (num(a)?, num(b)?);
            Some(num_cmp(&x, &y))
        }
        _ => Some(num_cmp(a, b)),
    }
}

/// Numeric comparison in which -0.0 equals 0.0, as in MySQL (`total_cmp`
/// orders -0.0 first); other values by [`Value::total_cmp`].
pub(crate) fn num_cmp(a: &Value, b: &Value) -> Ordering {
    let f = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(x) => Some(*x),
        Value::Decimal(d) => Some(d.to_f64()),
        _ => None,
    };
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        // Exact: DECIMAL with DECIMAL or INT (DOUBLE beside a DECIMAL
        // compares as doubles, as MySQL does). Of every held digit: a
        // quotient is compared as MySQL 8's Arg_comparator::compare_decimal
        // compares it, unrounded (`1/3 = 0.3333` is 0, `1/3 > 0.3333` 1;
        // MariaDB rounds both sides to their scale first). ORDER BY and
        // keys use the value as shown ([`Value::total_cmp`]).
        (Value::Decimal(x), Value::Decimal(y)) => x.cmp_value(y),
        (Value::Decimal(x), Value::Int(i)) => x.cmp_value(&Decimal::from_i64(*i)),
        (Value::Int(i), Value::Decimal(y)) => Decimal::from_i64(*i).cmp_value(y),
        _ => match (f(a), f(b)) {
            (Some(x), Some(y)) if x == 0.0 && y == 0.0 => Ordering::Equal,
            _ => a.total_cmp(b),
        },
    }
}

/// An exact operand (INT or DECIMAL) as a decimal.
pub(crate) fn exact(v: &Value) -> Option<Decimal> {
    match v {
        Value::Int(i) => Some(Decimal::from_i64(*i)),
        Value::Decimal(d) => Some(d.clone()),
        _ => None,
    }
}

pub(crate) fn overflow(op: &str) -> SqlError {
    SqlError::new(1690, format!("BIGINT value is out of range in '{op}'"))
}

/// SQL's `LIKE` under the binary collation text compares by
/// (`utf8mb4_bin`, as `=`): `%` and `_` (one character), `\\` escapes;
/// case matters (`'ABC' LIKE '%a%'` is 0, as in MySQL with that
/// collation).
pub fn like_match(s: &str, pat: &str) -> bool {
    crate::collation::like_bin(s, pat)
}

/// `LIKE` ignoring case: the pattern of `SHOW … LIKE`, whose names MySQL
/// compares case-insensitively (`SHOW VARIABLES LIKE 'SQL_MODE'`).
pub fn like_match_ci(s: &str, pat: &str) -> bool {
    if s.is_ascii() && pat.is_ascii() {
        // Byte-wise, case folded per byte: no allocation.
        return wildcard(s.as_bytes(), pat.as_bytes(), |a, b| {
            a.eq_ignore_ascii_case(&b)
        });
    }
    let s: Vec<char> = s.to_lowercase().chars().collect();
    let p: Vec<char> = pat.to_lowercase().chars().collect();
    wildcard(&s, &p, |a, b| a == b)
}

/// Vector argument: a vector value or a `'[…]'` literal.
pub fn vector_arg(v: &Value, fname: &str) -> SqlResult<Option<Vec<f64>>> {
    match v {
        Value::Null => Ok(None),
        Value::Vector(x) => Ok(Some(x.clone())),
        Value::Text(s) => parse_vector(s)
            .map(Some)
            .map_err(|m| SqlError::new(code::INCORRECT_VALUE, format!("{fname}: {m}"))),
        other => Err(SqlError::wrong_args(format!(
            "{fname}: expected a vector, got '{other}'"
        ))),
    }
}

/// Like [`vector_arg`], borrowing a vector value instead of copying it.
pub(crate) fn vector_ref<'a>(v: &'a Value, fname: &str) -> SqlResult<Option<Cow<'a, [f64]>>> {
    match v {
        Value::Vector(x) => Ok(Some(Cow::Borrowed(x.as_slice()))),
        other => Ok(vector_arg(other, fname)?.map(Cow::Owned)),
    }
}

/// The distance functions of two vectors (`vector_fn`).
pub const VECTOR_DISTANCE_FNS: &[&str] = &[
    "l2_distance",
    "l2_distance_sq",
    "cosine_distance",
    "cosine_similarity",
    "inner_product",
    "l1_distance",
];

/// Exact vector distance functions (as MatrixOne defines them).
pub fn vector_fn(name: &str, a: &[f64], b: &[f64]) -> SqlResult<f64> {
    if a.len() != b.len() {
        return Err(SqlError::new(
            code::INCORRECT_VALUE,
            format!(
                "{name}: vector dimensions do not match ({} vs {})",
                a.len(),
                b.len()
            ),
        ));
    }
    let dot: f64 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    Ok(match name {
        "l2_distance" => a
            .iter()
            .zip(b)
            .map(|(x, y)| (x - y) * (x - y))
            .sum::<f64>()
            .sqrt(),
        "l2_distance_sq" => a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum(),
        // MatrixOne's convention: the negated dot product, a distance
        // (smaller = more similar), so `ORDER BY inner_product(v, q)`
        // ascending finds the best matches, as with the other distances.
        "inner_product" => -dot,
        "l1_distance" => a.iter().zip(b).map(|(x, y)| (x - y).abs()).sum(),
        "cosine_distance" | "cosine_similarity" => {
            let na = a.iter().map(|x| x * x).sum::<f64>().sqrt();
            let nb = b.iter().map(|x| x * x).sum::<f64>().sqrt();
            let sim = if na == 0.0 || nb == 0.0 {
                0.0
            } else {
                dot / (na * nb)
            };
            if name == "cosine_similarity" {
                sim
            } else {
                1.0 - sim
            }
        }
        _ => {
            return Err(SqlError::new(
                code::UNKNOWN_FUNCTION,
                format!("FUNCTION {name} does not exist"),
            ))
        }
    })
}

pub(crate) fn text(v: &Value) -> String {
    text_of(v).into_owned()
}

/// The units `pos[, len]` select out of `n` in SUBSTRING and MatrixOne's
/// subvector (the same rule): `pos` 1-based, negative from the end; `len`
/// optional (to the end); `pos` 0, a position outside, or `len` < 1 select
/// nothing. `None` when an argument is NULL or not a number.
pub(crate) fn sub_range(pos_len: &[Value], n: usize) -> Option<std::ops::Range<usize>> {
    let pos = num_i64(pos_len.first()?)?;
    let len = match pos_len.get(1) {
        Some(l) => Some(num_i64(l)?),
        None => None,
    };
    let n = n as i64;
    let start = if pos > 0 { pos - 1 } else { n + pos };
    if pos == 0 || start < 0 || start >= n || len.is_some_and(|l| l < 1) {
        return Some(0..0);
    }
    let end = len.map_or(n, |l| start.saturating_add(l).min(n));
    Some(start as usize..end as usize)
}

/// A DOUBLE result; infinity or NaN is MySQL's out-of-range error.
pub(crate) fn finite(name: &str, r: f64) -> SqlResult<Value> {
    if r.is_finite() {
        Ok(Value::Float(r))
    } else {
        Err(SqlError::new(
            1690,
            format!("DOUBLE value is out of range in '{name}'"),
        ))
    }
}

/// `TRUNCATE(x, d)` on a double: cut its shortest decimal form after `d`
/// fractional digits (so 0.29 stays 0.29 at d = 2), or zero the last `-d`
/// integer digits.
pub(crate) fn truncate_float(f: f64, d: i64) -> f64 {
    if !f.is_finite() {
        return f;
    }
    if d >= 0 {
        let s = format!("{f}");
        return match s.find('.') {
            Some(dot) if s.len() - dot - 1 > d as usize => {
                let cut = if d == 0 { dot } else { dot + 1 + d as usize };
                s[..cut].parse::<f64>().unwrap_or(f)
            }
            _ => f,
        };
    }
    let m = 10f64.powi(d.unsigned_abs().min(400) as i32);
    if m.is_finite() {
        (f / m).trunc() * m
    } else {
        0.0
    }
}
