//! Values, column types and statement results: the data model shared by the
//! SQL engine, the MySQL server and the CLI.
//!
//! This module owns how a SQL value looks in memory and how it prints. It
//! never touches storage encoding (see `catalog::codec`) or the wire protocol.

use std::cmp::Ordering;
use std::fmt;

/// A column's SQL type.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum DataType {
    Bool,
    Int,
    BigInt,
    Float,
    Double,
    /// VARCHAR(n): at most n characters.
    Varchar(u32),
    Text,
    /// DATETIME / TIMESTAMP of a table written before column precision was
    /// recorded: values are kept as they were given (up to microseconds).
    DateTime,
    /// DATETIME(fsp) / TIMESTAMP(fsp), fsp 0..=6: values are rounded to
    /// `fsp` fractional digits on write, as MySQL 8 does (half up).
    DateTimeFsp(u8),
    /// VECF32(n)
    VecF32(u32),
    /// VECF64(n)
    VecF64(u32),
    /// TINYINT / SMALLINT / MEDIUMINT (signed or not) and INT / BIGINT
    /// UNSIGNED: an integer of `bits` bits, range-checked on write. Values
    /// are `Value::Int`; BIGINT UNSIGNED values above i64::MAX are refused.
    Integer {
        bits: u8,
        unsigned: bool,
    },
    /// DATE: `Value::DateTime` at midnight.
    Date,
    /// DECIMAL(precision, scale), precision ≤ `MAX_DECIMAL_PRECISION` (65),
    /// scale ≤ 30: `Value::Decimal` holding the value rounded to `scale`
    /// digits (files written before exact decimals hold `Value::Float`).
    Decimal(u8, u8),
    /// JSON: `Value::Text` holding a valid document in MySQL's canonical
    /// form (see `json::normalize`).
    Json,
    /// BINARY(n): `Value::Bytes` of exactly n bytes (a shorter value is
    /// right-padded with 0x00 on store, as MySQL does).
    Binary(u32),
    /// VARBINARY(n): `Value::Bytes` of at most n bytes.
    VarBinary(u32),
    /// TINYBLOB / BLOB / MEDIUMBLOB / LONGBLOB: `Value::Bytes` whose
    /// length fits in this many bytes (1, 2, 3, 4: at most 255, 65 535,
    /// 16 777 215, 4 294 967 295 bytes).
    Blob(u8),
}

/// Largest DECIMAL precision (MySQL's 65).
pub const MAX_DECIMAL_PRECISION: u8 = 65;
/// Largest DECIMAL scale (MySQL's 30).
pub const MAX_DECIMAL_SCALE: u8 = 30;

impl DataType {
    /// SQL spelling, as SHOW CREATE TABLE and DESCRIBE print it.
    pub fn sql_name(&self) -> String {
        match self {
            DataType::Bool => "BOOL".into(),
            DataType::Int => "INT".into(),
            DataType::BigInt => "BIGINT".into(),
            DataType::Float => "FLOAT".into(),
            DataType::Double => "DOUBLE".into(),
            DataType::Varchar(n) => format!("VARCHAR({n})"),
            DataType::Text => "TEXT".into(),
            DataType::DateTime | DataType::DateTimeFsp(0) => "DATETIME".into(),
            DataType::DateTimeFsp(n) => format!("DATETIME({n})"),
            DataType::VecF32(n) => format!("VECF32({n})"),
            DataType::VecF64(n) => format!("VECF64({n})"),
            DataType::Integer { bits, unsigned } => {
                let base = match bits {
                    8 => "TINYINT",
                    16 => "SMALLINT",
                    24 => "MEDIUMINT",
                    32 => "INT",
                    _ => "BIGINT",
                };
                if *unsigned {
                    format!("{base} UNSIGNED")
                } else {
                    base.into()
                }
            }
            DataType::Date => "DATE".into(),
            DataType::Decimal(p, s) => format!("DECIMAL({p},{s})"),
            DataType::Json => "JSON".into(),
            DataType::Binary(n) => format!("BINARY({n})"),
            DataType::VarBinary(n) => format!("VARBINARY({n})"),
            DataType::Blob(1) => "TINYBLOB".into(),
            DataType::Blob(2) => "BLOB".into(),
            DataType::Blob(3) => "MEDIUMBLOB".into(),
            DataType::Blob(_) => "LONGBLOB".into(),
        }
    }

    /// Whether values of this type are binary strings (`Value::Bytes`).
    pub fn is_binary_string(&self) -> bool {
        matches!(
            self,
            DataType::Binary(_) | DataType::VarBinary(_) | DataType::Blob(_)
        )
    }

    /// The most bytes a value of a binary-string type holds (MySQL's
    /// CHARACTER_OCTET_LENGTH); `None` for other types.
    pub fn max_bytes(&self) -> Option<u64> {
        match self {
            DataType::Binary(n) | DataType::VarBinary(n) => Some(u64::from(*n)),
            DataType::Blob(l) => Some((1u64 << (8 * u32::from((*l).min(4)))) - 1),
            _ => None,
        }
    }

    /// Whether values of this type are integers (AUTO_INCREMENT allowed).
    pub fn is_integer(&self) -> bool {
        matches!(
            self,
            DataType::Int | DataType::BigInt | DataType::Integer { .. }
        )
    }

    /// Whether values of this type are vectors.
    pub fn vector_dim(&self) -> Option<u32> {
        match self {
            DataType::VecF32(n) | DataType::VecF64(n) => Some(*n),
            _ => None,
        }
    }
}

/// A SQL value.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// An exact DECIMAL (a decimal literal, a DECIMAL column's value).
    Decimal(crate::decimal::Decimal),
    Text(String),
    /// Microseconds since 1970-01-01 00:00:00 (UTC, no zone).
    DateTime(i64),
    Vector(Vec<f64>),
    /// A binary string (BINARY / VARBINARY / BLOB values, X'..' literals,
    /// UNHEX …): bytes without a character set, compared byte-wise.
    Bytes(Vec<u8>),
}

impl Value {
    /// True for SQL NULL.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// Total order used by ORDER BY, indexes and comparisons (NULL first;
    /// numbers compare across Int/Float; text by bytes).
    pub fn total_cmp(&self, other: &Value) -> Ordering {
        use Value::*;
        match (self, other) {
            (Null, Null) => Ordering::Equal,
            (Null, _) => Ordering::Less,
            (_, Null) => Ordering::Greater,
            (Bool(a), Bool(b)) => a.cmp(b),
            (Int(a), Int(b)) => a.cmp(b),
            // `+ 0.0` folds -0.0 into 0.0: they are one SQL value.
            (Int(a), Float(b)) => (*a as f64).total_cmp(&(b + 0.0)),
            (Float(a), Int(b)) => (a + 0.0).total_cmp(&(*b as f64)),
            (Float(a), Float(b)) => (a + 0.0).total_cmp(&(b + 0.0)),
            // Decimals order as they show (a quotient's held digits beyond
            // its scale do not count in ORDER BY or keys; SQL comparisons
            // use them: see `sql::expr::sql_cmp`).
            (Decimal(a), Decimal(b)) => a.cmp_sql(b),
            (Decimal(a), Int(b)) => a.cmp_sql(&crate::decimal::Decimal::from_i64(*b)),
            (Int(a), Decimal(b)) => crate::decimal::Decimal::from_i64(*a).cmp_sql(b),
            (Decimal(a), Float(b)) => (a.to_f64() + 0.0).total_cmp(&(b + 0.0)),
            (Float(a), Decimal(b)) => (a + 0.0).total_cmp(&(b.to_f64() + 0.0)),
            (Bool(a), Int(b)) => (*a as i64).cmp(b),
            (Int(a), Bool(b)) => a.cmp(&(*b as i64)),
            (Text(a), Text(b)) => a.cmp(b),
            // A binary string compares with anything string-like by
            // bytes, as MySQL compares a binary string with a text one.
            (Bytes(a), Bytes(b)) => a.cmp(b),
            (Bytes(a), Text(b)) => a.as_slice().cmp(b.as_bytes()),
            (Text(a), Bytes(b)) => a.as_bytes().cmp(b.as_slice()),
            (DateTime(a), DateTime(b)) => a.cmp(b),
            (Vector(a), Vector(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    match x.total_cmp(y) {
                        Ordering::Equal => continue,
                        o => return o,
                    }
                }
                a.len().cmp(&b.len())
            }
            (a, b) => a.rank().cmp(&b.rank()),
        }
    }

    fn rank(&self) -> u8 {
        match self {
            Value::Null => 0,
            Value::Bool(_) => 1,
            Value::Int(_) | Value::Float(_) | Value::Decimal(_) => 2,
            Value::DateTime(_) => 3,
            Value::Text(_) | Value::Bytes(_) => 4,
            Value::Vector(_) => 5,
        }
    }

    /// Text form as the MySQL text protocol and `--batch` print it
    /// (`None` for NULL).
    pub fn to_text(&self) -> Option<String> {
        match self {
            Value::Null => None,
            other => Some(other.to_string()),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => write!(f, "NULL"),
            Value::Bool(b) => write!(f, "{}", if *b { 1 } else { 0 }),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{}", format_float(*x)),
            Value::Decimal(d) => write!(f, "{d}"),
            Value::Text(s) => write!(f, "{s}"),
            // UTF-8 bytes without control characters show as their text;
            // others with every byte that is not printable ASCII as `\xNN`, as MySQL's messages show
            // them (`Duplicate entry '\x80\x00'`). The wire sends the bytes
            // themselves.
            Value::Bytes(b) => match std::str::from_utf8(b) {
                Ok(s) if !s.chars().any(|c| c.is_ascii_control()) => write!(f, "{s}"),
                _ => {
                    for &c in b {
                        if (0x20..0x7f).contains(&c) {
                            write!(f, "{}", char::from(c))?;
                        } else {
                            write!(f, "\\x{c:02X}")?;
                        }
                    }
                    Ok(())
                }
            },
            Value::DateTime(us) => write!(f, "{}", format_datetime(*us)),
            Value::Vector(v) => {
                write!(f, "[")?;
                for (i, x) in v.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{}", format_float(*x))?;
                }
                write!(f, "]")
            }
        }
    }
}

/// A DOUBLE's text as MySQL prints it: the shortest round-trip digits,
/// without a trailing `.0` (`1`, not `1.0`), in plain notation for
/// magnitudes from 1e-15 up to 1e15 and with an exponent beyond
/// (`1e15`, `1.5e20`, `1e-300`).
pub fn format_float(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    let sci = format!("{x:e}");
    let exp: i32 = sci
        .rsplit_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    if !(-15..15).contains(&exp) {
        sci
    } else if x == x.trunc() {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// `YYYY-MM-DD HH:MM:SS[.ffffff]` for microseconds since the epoch.
pub fn format_datetime(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let micros = us.rem_euclid(1_000_000);
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let base = format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}",
        sod / 3600,
        (sod / 60) % 60,
        sod % 60
    );
    if micros == 0 {
        base
    } else {
        format!("{base}.{micros:06}")
    }
}

/// Largest fractional-seconds precision of a DATETIME (MySQL's 6).
pub const MAX_DATETIME_FSP: u8 = 6;

/// `us` rounded to `fsp` fractional digits, half up (MySQL 8 rounds a
/// fraction wider than the column's, unless TIME_TRUNCATE_FRACTIONAL, which
/// is not offered). A carry moves into the seconds, and on into the date.
pub fn round_fsp(us: i64, fsp: u8) -> i64 {
    debug_assert!(fsp <= MAX_DATETIME_FSP, "fsp {fsp} above 6");
    let unit = 10i64.pow(u32::from(MAX_DATETIME_FSP.saturating_sub(fsp)));
    let frac = us.rem_euclid(unit);
    if frac * 2 >= unit {
        us - frac + unit
    } else {
        us - frac
    }
}

/// `YYYY-MM-DD HH:MM:SS` followed by exactly `fsp` fractional digits (the
/// value's own, cut: values are rounded when they are stored or cast).
pub fn format_datetime_fsp(us: i64, fsp: u8) -> String {
    let mut s = format_datetime(us.div_euclid(1_000_000) * 1_000_000);
    if fsp > 0 {
        let micros = format!("{:06}", us.rem_euclid(1_000_000));
        s.push('.');
        s.push_str(&micros[..usize::from(fsp.min(MAX_DATETIME_FSP))]);
    }
    s
}

/// Parse `YYYY-MM-DD[ HH:MM:SS[.f]]` into microseconds since the epoch.
pub fn parse_datetime(s: &str) -> Option<i64> {
    let s = s.trim();
    let (date, time) = match s.split_once([' ', 'T']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut dp = date.split('-');
    let y: i64 = dp.next()?.parse().ok()?;
    let m: u32 = dp.next()?.parse().ok()?;
    let d: u32 = dp.next()?.parse().ok()?;
    // No 2020-02-30: MySQL answers NULL (and a warning) for a date that
    // is not in the calendar rather than moving it to March.
    if dp.next().is_some()
        || !(0..=9999).contains(&y)
        || !(1..=12).contains(&m)
        || d < 1
        || i64::from(d) > days_in_month(y, i64::from(m))
    {
        return None;
    }
    let (mut hh, mut mm, mut ss, mut frac) = (0i64, 0i64, 0i64, 0i64);
    if let Some(t) = time {
        let (hms, f) = match t.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (t, None),
        };
        let mut tp = hms.split(':');
        hh = tp.next()?.parse().ok()?;
        mm = tp.next()?.parse().ok()?;
        ss = tp.next().unwrap_or("0").parse().ok()?;
        if hh > 23 || mm > 59 || ss > 59 {
            return None;
        }
        if let Some(f) = f {
            if f.is_empty() || f.len() > 6 || !f.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            frac = format!("{f:0<6}").parse().ok()?;
        }
    }
    let days = days_from_civil(y, m, d);
    Some(((days * 86_400) + hh * 3600 + mm * 60 + ss) * 1_000_000 + frac)
}

/// Days in month `m` (1..=12) of year `y` (proleptic Gregorian).
pub(crate) fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        2 => 28,
        _ => 31,
    }
}

// Howard Hinnant's civil-date algorithms.
/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm); `m` in 1..=12, `d` in 1..=31.
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = m as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The proleptic Gregorian (year, month, day) of a day number.
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// The type a result column reports to clients (MySQL column type in the
/// wire protocol's column definition).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// BIGINT (MYSQL_TYPE_LONGLONG).
    Int,
    /// DOUBLE.
    Float,
    /// VARCHAR / TEXT (utf8mb4).
    Text,
    /// DATETIME(fsp): `Some(fsp)` prints exactly fsp fractional digits (a
    /// column's or CAST's precision); `None` (an expression whose precision
    /// is not tracked) prints 6 when any value of the result has a fraction.
    DateTime(Option<u8>),
    /// DATE (values are `DateTime` at midnight; printed `YYYY-MM-DD`).
    Date,
    /// DECIMAL(precision, scale) (MYSQL_TYPE_NEWDECIMAL; values printed
    /// with exactly `scale` digits after the point).
    Decimal { precision: u8, scale: u8 },
    /// A vector (VECF32/VECF64), sent as its text form.
    Vector,
    /// A binary string (BINARY / VARBINARY / BLOB, charset 63 on the
    /// wire): its bytes are sent as they are.
    Bytes,
}

/// A value's text form as a column of `kind` is sent and printed: DATE as
/// `YYYY-MM-DD`, DECIMAL with exactly its scale's digits; `None` for NULL.
pub fn format_value(v: &Value, kind: ColumnKind) -> Option<String> {
    match (kind, v) {
        (_, Value::Null) => None,
        (ColumnKind::Date, Value::DateTime(us)) => {
            let mut s = format_datetime(*us);
            s.truncate(10);
            Some(s)
        }
        (ColumnKind::DateTime(Some(fsp)), Value::DateTime(us)) => {
            Some(format_datetime_fsp(*us, fsp))
        }
        (ColumnKind::Decimal { scale, .. }, Value::Float(f)) => Some(format_decimal(*f, scale)),
        // An exact value prints the declared scale when that is wider
        // (padding loses nothing), else its own: never rounded here.
        (ColumnKind::Decimal { scale, .. }, Value::Decimal(d)) if scale > d.scale() => {
            Some(d.rescale(scale).to_string())
        }
        (_, Value::Decimal(d)) => Some(d.to_string()),
        (ColumnKind::Decimal { scale, .. }, Value::Int(i)) => Some(if scale == 0 {
            i.to_string()
        } else {
            format!("{i}.{}", "0".repeat(usize::from(scale)))
        }),
        _ => v.to_text(),
    }
}

/// A DOUBLE column value as MySQL's text protocol prints it for a column
/// typed with `decimals` fractional digits (`my_fcvt`: fixed notation,
/// the double's exact value rounded; no minus sign on zero).
pub fn format_fixed_float(v: &Value, decimals: u8) -> Option<String> {
    let d = usize::from(decimals);
    match v {
        Value::Float(f) if f.is_finite() => {
            let s = format!("{:.d$}", f + 0.0);
            Some(
                if s.starts_with('-') && s[1..].bytes().all(|b| b == b'0' || b == b'.') {
                    s[1..].to_string()
                } else {
                    s
                },
            )
        }
        Value::Int(i) => Some(format!("{:.d$}", *i as f64)),
        Value::Decimal(x) => Some(x.rescale(decimals).to_string()),
        _ => None,
    }
}

/// `x` with exactly `scale` fractional digits, rounded half away from zero
/// on its shortest decimal form (so 1.005 → "1.01", as DECIMAL does).
pub fn format_decimal(x: f64, scale: u8) -> String {
    let s = round_decimal_text(&format_float_plain(x), scale);
    if s.starts_with('-') && s[1..].bytes().all(|b| b == b'0' || b == b'.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// Shortest round-trip decimal form of `x` without an exponent.
fn format_float_plain(x: f64) -> String {
    let s = format!("{x}");
    if !s.contains(['e', 'E']) {
        return s;
    }
    // Rust's Display never uses exponents for f64, but be safe.
    format!("{x:.17}")
}

/// Round a plain decimal string (`-12.3456`) to `scale` fractional digits,
/// half away from zero, padding with zeros.
pub fn round_decimal_text(s: &str, scale: u8) -> String {
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    let scale = usize::from(scale);
    let mut digits: Vec<u8> = int
        .bytes()
        .chain(frac.bytes().chain(std::iter::repeat(b'0')).take(scale))
        .collect();
    let round_up = frac.as_bytes().get(scale).is_some_and(|d| *d >= b'5');
    if round_up {
        let mut i = digits.len();
        loop {
            if i == 0 {
                digits.insert(0, b'1');
                break;
            }
            i -= 1;
            if digits[i] == b'9' {
                digits[i] = b'0';
            } else {
                digits[i] += 1;
                break;
            }
        }
    }
    let split = digits.len() - scale;
    let mut out = String::with_capacity(digits.len() + 2);
    if neg {
        out.push('-');
    }
    let int_part = std::str::from_utf8(&digits[..split]).unwrap_or("0");
    out.push_str(if int_part.is_empty() { "0" } else { int_part });
    if scale > 0 {
        out.push('.');
        out.push_str(std::str::from_utf8(&digits[split..]).unwrap_or(""));
    }
    out
}

impl ColumnKind {
    /// Whether values of this kind are numbers (right-aligned in tables).
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            ColumnKind::Int | ColumnKind::Float | ColumnKind::Decimal { .. }
        )
    }
}

/// One result column.
#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub kind: ColumnKind,
}

/// A warning attached to a statement's result (SHOW WARNINGS).
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    pub code: u16,
    pub message: String,
}

/// The result of one statement.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryResult {
    /// Empty for statements that return no result set.
    pub columns: Vec<Column>,
    /// Per column, when known: the fractional digits MySQL types a DOUBLE
    /// column with (`PI()` 6, `ROUND(f)` 0, `AVG(ROUND(f))` 4), which its
    /// text protocol prints (`3.141593`); `None` (or a short vector): all
    /// digits. Only the text form changes, never the value.
    pub float_decimals: Vec<Option<u8>>,
    pub rows: Vec<Vec<Value>>,
    /// Rows inserted/updated/deleted.
    pub affected_rows: u64,
    pub last_insert_id: u64,
    pub warnings: Vec<Warning>,
    /// The OK packet's human-readable info (`Records: 3  Deleted: 0
    /// Skipped: 0  Warnings: 0` after LOAD DATA).
    pub info: Option<String>,
}

impl QueryResult {
    /// Whether the statement produced a result set (even an empty one).
    pub fn has_result_set(&self) -> bool {
        !self.columns.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetime_round_trip() {
        for s in [
            "1970-01-01 00:00:00",
            "2026-12-02 16:25:41",
            "1999-02-28 23:59:59.500000",
        ] {
            let us = parse_datetime(s).expect("parse");
            assert_eq!(format_datetime(us), s);
        }
        assert_eq!(
            parse_datetime("2024-02-29").map(format_datetime).as_deref(),
            Some("2024-02-29 00:00:00")
        );
        assert!(parse_datetime("2024-13-01").is_none());
        assert!(parse_datetime("nonsense").is_none());
    }

    #[test]
    fn decimal_and_date_text() {
        assert_eq!(format_decimal(1.005, 2), "1.01");
        assert_eq!(format_decimal(-1.005, 2), "-1.01");
        assert_eq!(format_decimal(0.1 + 0.2, 2), "0.30");
        assert_eq!(format_decimal(9.995, 2), "10.00");
        assert_eq!(format_decimal(3.0, 0), "3");
        assert_eq!(format_decimal(-0.001, 2), "0.00");
        assert_eq!(format_decimal(12.5, 3), "12.500");
        let d = parse_datetime("2024-02-29").map(Value::DateTime).unwrap();
        assert_eq!(
            format_value(&d, ColumnKind::Date).as_deref(),
            Some("2024-02-29")
        );
        assert_eq!(format_value(&Value::Null, ColumnKind::Date), None);
    }

    #[test]
    fn value_does_not_grow() {
        // Decimals are 24 bytes (a wide mantissa is boxed): Value stays 32.
        assert_eq!(std::mem::size_of::<Value>(), 32);
    }

    #[test]
    fn numbers_compare_across_types() {
        let d = |s: &str| Value::Decimal(crate::decimal::Decimal::parse(s).unwrap());
        assert_eq!(d("1.00").total_cmp(&Value::Int(1)), Ordering::Equal);
        assert_eq!(d("1.5").total_cmp(&Value::Int(2)), Ordering::Less);
        assert_eq!(d("1.5").total_cmp(&Value::Float(1.25)), Ordering::Greater);
        assert_eq!(d("0.10").total_cmp(&d("0.1")), Ordering::Equal);
        assert_eq!(Value::Int(2).total_cmp(&Value::Float(2.5)), Ordering::Less);
        assert_eq!(Value::Null.total_cmp(&Value::Int(0)), Ordering::Less);
        assert_eq!(format_float(3.0), "3");
        assert_eq!(format_float(0.25), "0.25");
        // MySQL's notation switch (checked against MariaDB).
        assert_eq!(format_float(1e15), "1e15");
        assert_eq!(format_float(1e14), "100000000000000");
        assert_eq!(format_float(1e308), "1e308");
        assert_eq!(format_float(-1e16), "-1e16");
        assert_eq!(format_float(1.5e20), "1.5e20");
        assert_eq!(format_float(123456789012345678.0), "1.2345678901234568e17");
        assert_eq!(format_float(999999999999999.9), "999999999999999.9");
        assert_eq!(format_float(1.5e-15), "0.0000000000000015");
        assert_eq!(format_float(1.5e-16), "1.5e-16");
        assert_eq!(format_float(0.1 + 0.2), "0.30000000000000004");
        assert_eq!(format_float(-0.0), "0");
    }
}

/// The longest numeric prefix of a string after leading whitespace — sign,
/// digits, `.` and digits, an exponent with at least one digit — and
/// whether it is the whole string (trailing whitespace allowed). Empty
/// (and never whole) when the string starts with no digit: `'abc'`, `''`,
/// `'-x'`, `'.'`. MySQL reads strings this way in numeric contexts.
pub fn numeric_prefix(s: &str) -> (&str, bool) {
    let b = s.as_bytes();
    let skip_digits = |mut i: usize| {
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = 0;
    while i < b.len() && b[i].is_ascii_whitespace() {
        i += 1;
    }
    let start = i;
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    let int_start = i;
    i = skip_digits(i);
    let mut digits = i - int_start;
    if i < b.len() && b[i] == b'.' {
        let frac_end = skip_digits(i + 1);
        digits += frac_end - (i + 1);
        i = frac_end;
    }
    if digits == 0 {
        return ("", false);
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_end = skip_digits(j);
        if exp_end > j {
            i = exp_end;
        }
    }
    (&s[start..i], b[i..].iter().all(u8::is_ascii_whitespace))
}

/// MySQL's conversion of a string to a DOUBLE: its [`numeric_prefix`]
/// (`'3x'` → 3, `'.5e1z'` → 5, `'abc'` and `''` → 0), and whether that was
/// the whole string. A number too large for a double is its largest
/// finite value and not whole. MySQL warns (1292) when it is not whole.
pub fn parse_number_prefix(s: &str) -> (f64, bool) {
    let (text, whole) = numeric_prefix(s);
    if text.is_empty() {
        return (0.0, false);
    }
    let text = text.strip_suffix('.').unwrap_or(text);
    match text.parse::<f64>() {
        Ok(f) if f.is_finite() => (f, whole),
        Ok(f) => (f64::MAX.copysign(f), false),
        Err(_) => (0.0, false),
    }
}

#[cfg(test)]
mod number_prefix_tests {
    use super::parse_number_prefix as p;

    /// Each case as MariaDB answers `SELECT '<s>' + 0` (and whether it
    /// warns).
    #[test]
    fn strings_convert_by_their_longest_numeric_prefix() {
        let cases: &[(&str, f64, bool)] = &[
            ("3x", 3.0, false),
            ("3", 3.0, true),
            ("  3  ", 3.0, true),
            ("", 0.0, false),
            ("   ", 0.0, false),
            ("abc", 0.0, false),
            ("-x", 0.0, false),
            ("1e2x", 100.0, false),
            ("1e", 1.0, false),
            ("1e+", 1.0, false),
            (".5x", 0.5, false),
            ("-.5", -0.5, true),
            ("+7.", 7.0, true),
            ("3.", 3.0, true),
            (".", 0.0, false),
            ("0x10", 0.0, false),
            ("1.5e-3", 0.0015, true),
            ("12abc34", 12.0, false),
            ("1e400", f64::MAX, false),
            ("-1e400", -f64::MAX, false),
            ("\t\n42", 42.0, true),
        ];
        for &(s, v, whole) in cases {
            assert_eq!(p(s), (v, whole), "{s:?}");
        }
    }
}
