//! Everything a command answers with besides errors: OK and EOF packets
//! (with server status and warning count), Column Definition 41 packets
//! derived from [`ColumnKind`], and text- and binary-protocol rows.
//!
//! This module owns how a [`Value`] of a [`ColumnKind`] looks on the wire.
//! It never decides a status flag (the caller passes them) and never does
//! I/O.

use super::packet::{put_lenenc_int, put_lenenc_str};
use super::{BINARY_CHARSET, UTF8MB4_GENERAL_CI};
use crate::types::{format_datetime, format_value, parse_datetime, ColumnKind, Value};

/// Column types (`MYSQL_TYPE_*`).
#[allow(dead_code, reason = "the protocol's table, listed whole")]
pub mod types {
    pub const DECIMAL: u8 = 0;
    pub const TINY: u8 = 1;
    pub const SHORT: u8 = 2;
    pub const LONG: u8 = 3;
    pub const FLOAT: u8 = 4;
    pub const DOUBLE: u8 = 5;
    pub const NULL: u8 = 6;
    pub const TIMESTAMP: u8 = 7;
    pub const LONGLONG: u8 = 8;
    pub const INT24: u8 = 9;
    pub const DATE: u8 = 10;
    pub const TIME: u8 = 11;
    pub const DATETIME: u8 = 12;
    pub const YEAR: u8 = 13;
    pub const VARCHAR: u8 = 15;
    pub const BIT: u8 = 16;
    pub const JSON: u8 = 245;
    pub const NEWDECIMAL: u8 = 246;
    pub const BLOB: u8 = 252;
    pub const VAR_STRING: u8 = 253;
    pub const STRING: u8 = 254;
}

/// Column flags (`*_FLAG`).
#[allow(dead_code, reason = "the protocol's table, listed whole")]
pub mod flags {
    pub const NOT_NULL: u16 = 1;
    pub const PRI_KEY: u16 = 2;
    pub const UNSIGNED: u16 = 32;
    pub const BINARY: u16 = 128;
    pub const NUM: u16 = 32768;
}

/// `decimals` for floating-point columns without a fixed scale.
pub const NOT_FIXED_DEC: u8 = 31;
/// Display length of a text column whose width is unknown
/// (65,535 characters of up to 4 bytes).
const TEXT_LENGTH: u32 = 65_535 * 4;

/// OK packet payload. `header` is 0x00, or 0xFE when it ends a result set
/// for a `CLIENT_DEPRECATE_EOF` client.
pub fn ok_packet(
    header: u8,
    affected: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
) -> Vec<u8> {
    let mut p = Vec::with_capacity(16);
    p.push(header);
    put_lenenc_int(&mut p, affected);
    put_lenenc_int(&mut p, last_insert_id);
    p.extend_from_slice(&status.to_le_bytes());
    p.extend_from_slice(&warnings.to_le_bytes());
    p
}

/// An OK packet with a human-readable info string (LOAD DATA's
/// `Records: …`), length-encoded as MySQL's `net_send_ok` writes it.
pub fn ok_packet_with_info(
    affected: u64,
    last_insert_id: u64,
    status: u16,
    warnings: u16,
    info: &str,
) -> Vec<u8> {
    let mut p = ok_packet(0, affected, last_insert_id, status, warnings);
    super::packet::put_lenenc_str(&mut p, info.as_bytes());
    p
}

/// Classic EOF packet payload.
pub fn eof_packet(warnings: u16, status: u16) -> Vec<u8> {
    let mut p = Vec::with_capacity(5);
    p.push(0xfe);
    p.extend_from_slice(&warnings.to_le_bytes());
    p.extend_from_slice(&status.to_le_bytes());
    p
}

/// The end of a result set (or of a column list): an EOF packet, or an OK
/// packet with a 0xFE header for `CLIENT_DEPRECATE_EOF` clients.
pub fn end_packet(deprecate_eof: bool, status: u16, warnings: u16) -> Vec<u8> {
    if deprecate_eof {
        ok_packet(0xfe, 0, 0, status, warnings)
    } else {
        eof_packet(warnings, status)
    }
}

/// One column as sent in a Column Definition 41 packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDef {
    pub schema: String,
    pub table: String,
    pub name: String,
    pub charset: u16,
    pub length: u32,
    pub column_type: u8,
    pub flags: u16,
    pub decimals: u8,
}

impl ColumnDef {
    /// The definition of a column of `kind`. `fractional` says whether a
    /// DATETIME column carries microseconds (decimals 6, length 26).
    pub fn new(name: &str, kind: ColumnKind, fractional: bool) -> Self {
        let numeric = |column_type, length, decimals| ColumnDef {
            schema: String::new(),
            table: String::new(),
            name: name.to_string(),
            charset: BINARY_CHARSET,
            length,
            column_type,
            flags: flags::NUM | flags::BINARY,
            decimals,
        };
        match kind {
            ColumnKind::Int => numeric(types::LONGLONG, 20, 0),
            ColumnKind::Float => numeric(types::DOUBLE, 22, NOT_FIXED_DEC),
            ColumnKind::Decimal { precision, scale } => ColumnDef {
                charset: BINARY_CHARSET,
                flags: flags::NUM,
                ..numeric(types::NEWDECIMAL, u32::from(precision) + 2, scale)
            },
            ColumnKind::DateTime(fsp) => {
                let fsp = fsp.unwrap_or(if fractional { 6 } else { 0 });
                ColumnDef {
                    flags: flags::BINARY,
                    ..numeric(
                        types::DATETIME,
                        if fsp > 0 { 20 + u32::from(fsp) } else { 19 },
                        fsp,
                    )
                }
            }
            ColumnKind::Date => ColumnDef {
                flags: flags::BINARY,
                ..numeric(types::DATE, 10, 0)
            },
            // A binary string: charset 63 and the BINARY flag, which
            // clients read as bytes (PyMySQL, mysqlclient: `bytes`).
            ColumnKind::Bytes => ColumnDef {
                schema: String::new(),
                table: String::new(),
                name: name.to_string(),
                charset: BINARY_CHARSET,
                length: TEXT_LENGTH,
                column_type: types::VAR_STRING,
                flags: flags::BINARY,
                decimals: 0,
            },
            ColumnKind::Text | ColumnKind::Vector => ColumnDef {
                schema: String::new(),
                table: String::new(),
                name: name.to_string(),
                charset: u16::from(UTF8MB4_GENERAL_CI),
                length: TEXT_LENGTH,
                column_type: types::VAR_STRING,
                flags: 0,
                decimals: 0,
            },
        }
    }

    /// Column Definition 41 payload; `field_list` appends the default
    /// value (NULL) that COM_FIELD_LIST responses carry.
    pub fn payload(&self, field_list: bool) -> Vec<u8> {
        let mut p = Vec::with_capacity(32 + 2 * (self.name.len() + self.table.len()));
        put_lenenc_str(&mut p, b"def");
        put_lenenc_str(&mut p, self.schema.as_bytes());
        put_lenenc_str(&mut p, self.table.as_bytes());
        put_lenenc_str(&mut p, self.table.as_bytes());
        put_lenenc_str(&mut p, self.name.as_bytes());
        put_lenenc_str(&mut p, self.name.as_bytes());
        p.push(0x0c);
        p.extend_from_slice(&self.charset.to_le_bytes());
        p.extend_from_slice(&self.length.to_le_bytes());
        p.push(self.column_type);
        p.extend_from_slice(&self.flags.to_le_bytes());
        p.push(self.decimals);
        p.extend_from_slice(&[0, 0]);
        if field_list {
            p.push(0xfb);
        }
        p
    }
}

/// Whether any DATETIME value in column `i` of `rows` has microseconds.
pub fn has_fraction(rows: &[Vec<Value>], i: usize) -> bool {
    rows.iter().any(|r| match r.get(i) {
        Some(Value::DateTime(us)) => us.rem_euclid(1_000_000) != 0,
        Some(Value::Text(s)) => s.contains('.'),
        _ => false,
    })
}

/// Text form of `v` as a column of `kind` (`None` for NULL).
pub fn text_value(v: &Value, kind: ColumnKind) -> Option<String> {
    match (kind, v) {
        (_, Value::Null) => None,
        (ColumnKind::Date, Value::Text(s)) => {
            Some(parse_datetime(s).map_or_else(|| s.clone(), date_text))
        }
        _ => format_value(v, kind),
    }
}

fn date_text(us: i64) -> String {
    let mut s = format_datetime(us);
    s.truncate(10);
    s
}

/// A text-protocol row. A binary string is sent as its bytes.
pub fn text_row(values: &[Value], kinds: &[ColumnKind]) -> Vec<u8> {
    let mut p = Vec::with_capacity(values.len() * 8);
    for (i, kind) in kinds.iter().enumerate() {
        if let Some(Value::Bytes(b)) = values.get(i) {
            put_lenenc_str(&mut p, b);
            continue;
        }
        match values.get(i).and_then(|v| text_value(v, *kind)) {
            None => p.push(0xfb),
            Some(s) => put_lenenc_str(&mut p, s.as_bytes()),
        }
    }
    p
}

/// The kinds result columns are sent with: those `kinds` say, except that
/// a text column holding a binary string is sent as binary (charset 63),
/// so that its bytes reach the client as bytes.
pub fn wire_kinds(kinds: &[ColumnKind], rows: &[Vec<Value>]) -> Vec<ColumnKind> {
    kinds
        .iter()
        .enumerate()
        .map(|(i, &k)| {
            if k == ColumnKind::Text
                && rows
                    .iter()
                    .any(|r| matches!(r.get(i), Some(Value::Bytes(_))))
            {
                ColumnKind::Bytes
            } else {
                k
            }
        })
        .collect()
}

fn as_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i) => *i,
        Value::Bool(b) => i64::from(*b),
        Value::Float(f) => *f as i64,
        Value::Decimal(d) => d.to_i64_round().unwrap_or(0),
        Value::DateTime(us) => *us,
        Value::Text(s) => s.trim().parse().unwrap_or(0),
        Value::Null | Value::Vector(_) | Value::Bytes(_) => 0,
    }
}

fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Float(f) => *f,
        Value::Decimal(d) => d.to_f64(),
        Value::DateTime(us) => *us as f64,
        Value::Text(s) => s.trim().parse().unwrap_or(0.0),
        Value::Null | Value::Vector(_) | Value::Bytes(_) => 0.0,
    }
}

/// A binary-protocol row: 0x00, the NULL bitmap (offset 2), the values.
pub fn binary_row(values: &[Value], kinds: &[ColumnKind]) -> Vec<u8> {
    let n = kinds.len();
    let bitmap_len = (n + 7 + 2) / 8;
    let mut p = Vec::with_capacity(1 + bitmap_len + n * 8);
    p.push(0x00);
    let bitmap_at = p.len();
    p.resize(bitmap_at + bitmap_len, 0);
    for (i, kind) in kinds.iter().enumerate() {
        let v = values.get(i).unwrap_or(&Value::Null);
        if v.is_null() {
            let bit = i + 2;
            p[bitmap_at + bit / 8] |= 1 << (bit % 8);
            continue;
        }
        match kind {
            ColumnKind::Int => p.extend_from_slice(&as_i64(v).to_le_bytes()),
            ColumnKind::Float => p.extend_from_slice(&as_f64(v).to_le_bytes()),
            ColumnKind::DateTime(_) | ColumnKind::Date => {
                let us = match v {
                    Value::DateTime(us) => Some(*us),
                    Value::Text(s) => parse_datetime(s),
                    _ => None,
                };
                put_binary_datetime(&mut p, us, *kind == ColumnKind::Date);
            }
            _ if matches!(v, Value::Bytes(_)) => {
                if let Value::Bytes(b) = v {
                    put_lenenc_str(&mut p, b);
                }
            }
            ColumnKind::Text
            | ColumnKind::Vector
            | ColumnKind::Decimal { .. }
            | ColumnKind::Bytes => {
                let s = text_value(v, *kind).unwrap_or_default();
                put_lenenc_str(&mut p, s.as_bytes());
            }
        }
    }
    p
}

/// Binary DATE/DATETIME: length byte, then y(2) m d [h i s [micros(4)]].
fn put_binary_datetime(p: &mut Vec<u8>, us: Option<i64>, date_only: bool) {
    let Some(us) = us else {
        p.push(0);
        return;
    };
    let text = format_datetime(us);
    let num = |r: std::ops::Range<usize>| -> u32 {
        text.get(r).and_then(|s| s.parse().ok()).unwrap_or(0)
    };
    let (y, mo, d) = (num(0..4), num(5..7), num(8..10));
    if text.len() < 19 || y > u32::from(u16::MAX) {
        p.push(0);
        return;
    }
    if date_only {
        p.push(4);
        p.extend_from_slice(&(y as u16).to_le_bytes());
        p.extend_from_slice(&[mo as u8, d as u8]);
        return;
    }
    let (h, mi, s) = (num(11..13), num(14..16), num(17..19));
    let micros = us.rem_euclid(1_000_000) as u32;
    p.push(if micros != 0 { 11 } else { 7 });
    p.extend_from_slice(&(y as u16).to_le_bytes());
    p.extend_from_slice(&[mo as u8, d as u8, h as u8, mi as u8, s as u8]);
    if micros != 0 {
        p.extend_from_slice(&micros.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::protocol::packet::Cursor;
    use crate::sql::params;

    /// Decode a Column Definition 41 back into (name, charset, length,
    /// type, flags, decimals).
    fn decode(p: &[u8]) -> (String, u16, u32, u8, u16, u8) {
        let mut c = Cursor::new(p);
        assert_eq!(c.lenenc_bytes().unwrap(), b"def");
        for _ in 0..3 {
            c.lenenc_bytes().unwrap();
        }
        let name = String::from_utf8(c.lenenc_bytes().unwrap().to_vec()).unwrap();
        c.lenenc_bytes().unwrap();
        assert_eq!(c.u8().unwrap(), 0x0c);
        let r = (
            name,
            c.u16().unwrap(),
            c.u32().unwrap(),
            c.u8().unwrap(),
            c.u16().unwrap(),
            c.u8().unwrap(),
        );
        assert_eq!(c.u16().unwrap(), 0);
        assert!(c.is_empty());
        r
    }

    /// Every byte value goes out as it is, in both protocols; a text
    /// column holding bytes is announced as binary.
    #[test]
    fn binary_strings_are_sent_as_their_bytes() {
        let all: Vec<u8> = (0..=255u8).collect();
        let row = vec![Value::Bytes(all.clone()), Value::Null];
        let kinds = [ColumnKind::Bytes, ColumnKind::Bytes];
        let mut want = vec![0xfc, 0, 1];
        want.extend_from_slice(&all);
        want.push(0xfb);
        assert_eq!(text_row(&row, &kinds), want);
        let mut want = vec![0x00, 0b0000_1000, 0xfc, 0, 1];
        want.extend_from_slice(&all);
        assert_eq!(binary_row(&row, &kinds), want);
        let rows = vec![
            vec![Value::Text("a".into()), Value::Text("b".into())],
            vec![Value::Bytes(vec![0xff]), Value::Text("c".into())],
        ];
        assert_eq!(
            wire_kinds(&[ColumnKind::Text, ColumnKind::Text], &rows),
            vec![ColumnKind::Bytes, ColumnKind::Text]
        );
    }

    #[test]
    fn column_definitions_per_kind() {
        let d = |k, frac| decode(&ColumnDef::new("c", k, frac).payload(false));
        assert_eq!(
            d(ColumnKind::Int, false),
            (
                "c".into(),
                63,
                20,
                types::LONGLONG,
                flags::NUM | flags::BINARY,
                0
            )
        );
        assert_eq!(d(ColumnKind::Float, false).3, types::DOUBLE);
        assert_eq!(d(ColumnKind::Float, false).5, 31);
        let t = d(ColumnKind::Text, false);
        assert_eq!((t.1, t.3), (45, types::VAR_STRING));
        assert_eq!(d(ColumnKind::Vector, false).3, types::VAR_STRING);
        // A binary string: charset 63 (binary) and the BINARY flag.
        let b = d(ColumnKind::Bytes, false);
        assert_eq!((b.1, b.3, b.4), (63, types::VAR_STRING, flags::BINARY));
        assert_eq!(d(ColumnKind::DateTime(None), true).2, 26);
        assert_eq!(d(ColumnKind::DateTime(None), true).5, 6);
        assert_eq!(d(ColumnKind::DateTime(None), false).5, 0);
        assert_eq!(d(ColumnKind::DateTime(Some(3)), false).2, 23);
        assert_eq!(d(ColumnKind::DateTime(Some(3)), false).5, 3);
        assert_eq!(d(ColumnKind::DateTime(Some(0)), true).5, 0);
        let date = d(ColumnKind::Date, false);
        assert_eq!((date.2, date.3), (10, types::DATE));
        let dec = d(
            ColumnKind::Decimal {
                precision: 10,
                scale: 2,
            },
            false,
        );
        assert_eq!((dec.2, dec.3, dec.5), (12, types::NEWDECIMAL, 2));
        let fl = ColumnDef::new("c", ColumnKind::Int, false).payload(true);
        assert_eq!(fl.last(), Some(&0xfb));
    }

    #[test]
    fn ok_and_eof_carry_status_and_warnings() {
        let ok = ok_packet(0, 300, 5, 0x0003, 2);
        assert_eq!(ok, vec![0, 0xfc, 0x2c, 0x01, 5, 3, 0, 2, 0]);
        assert_eq!(eof_packet(1, 0x000a), vec![0xfe, 1, 0, 0x0a, 0]);
        assert_eq!(end_packet(true, 2, 0), vec![0xfe, 0, 0, 2, 0, 0, 0]);
        assert_eq!(end_packet(false, 2, 0), vec![0xfe, 0, 0, 2, 0]);
    }

    fn dec(s: &str) -> Value {
        Value::Decimal(crate::decimal::Decimal::parse(s).expect("decimal"))
    }

    #[test]
    fn text_rows() {
        let date = parse_datetime("2024-02-29").unwrap();
        let row = text_row(
            &[
                Value::Null,
                Value::Int(42),
                Value::DateTime(date),
                Value::Float(1.5),
                Value::Text("x".repeat(300)),
                dec("12345678901234567890123456789.123456789"),
                dec("0.5"),
            ],
            &[
                ColumnKind::Text,
                ColumnKind::Int,
                ColumnKind::Date,
                ColumnKind::Decimal {
                    precision: 5,
                    scale: 3,
                },
                ColumnKind::Text,
                ColumnKind::Decimal {
                    precision: 38,
                    scale: 9,
                },
                ColumnKind::Decimal {
                    precision: 5,
                    scale: 2,
                },
            ],
        );
        let mut c = Cursor::new(&row);
        assert_eq!(c.lenenc_int().unwrap(), None);
        assert_eq!(c.lenenc_bytes().unwrap(), b"42");
        assert_eq!(c.lenenc_bytes().unwrap(), b"2024-02-29");
        assert_eq!(c.lenenc_bytes().unwrap(), b"1.500");
        assert_eq!(c.lenenc_bytes().unwrap().len(), 300);
        assert_eq!(
            c.lenenc_bytes().unwrap(),
            b"12345678901234567890123456789.123456789"
        );
        assert_eq!(c.lenenc_bytes().unwrap(), b"0.50");
        assert!(c.is_empty());
    }

    #[test]
    fn binary_rows() {
        let dt = parse_datetime("2026-12-02 16:25:41.5").unwrap();
        let date = parse_datetime("2024-02-29").unwrap();
        let row = binary_row(
            &[
                Value::Int(-2),
                Value::Null,
                Value::DateTime(dt),
                Value::DateTime(date),
                Value::Float(0.25),
                Value::Float(2.0),
                dec("-0.10"),
            ],
            &[
                ColumnKind::Int,
                ColumnKind::Text,
                ColumnKind::DateTime(None),
                ColumnKind::Date,
                ColumnKind::Float,
                ColumnKind::Decimal {
                    precision: 4,
                    scale: 1,
                },
                ColumnKind::Decimal {
                    precision: 10,
                    scale: 2,
                },
            ],
        );
        let mut c = Cursor::new(&row);
        assert_eq!(c.u8().unwrap(), 0);
        // Column 1 is NULL: bit 1 + 2 = 3 (7 columns: a 2-byte bitmap).
        assert_eq!(c.u8().unwrap(), 1 << 3);
        assert_eq!(c.u8().unwrap(), 0);
        assert_eq!(c.u64().unwrap() as i64, -2);
        let n = usize::from(c.u8().unwrap());
        assert_eq!(n, 11);
        assert_eq!(
            params::format_binary_datetime(c.take(n).unwrap(), false).as_deref(),
            Some("2026-12-02 16:25:41.500000")
        );
        assert_eq!(c.u8().unwrap(), 4);
        assert_eq!(c.take(4).unwrap(), &[0xe8, 0x07, 2, 29]);
        assert_eq!(f64::from_bits(c.u64().unwrap()), 0.25);
        assert_eq!(c.lenenc_bytes().unwrap(), b"2.0");
        // NEWDECIMAL is sent as text, exactly.
        assert_eq!(c.lenenc_bytes().unwrap(), b"-0.10");
        assert!(c.is_empty());
    }
}
