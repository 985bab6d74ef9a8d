//! Byte encodings of rows and keys.
//!
//! * Rows: a compact tagged format ([`encode_row`] / [`decode_row`]).
//! * Keys: a memcomparable format ([`encode_key`]): the byte order of two
//!   encoded tuples equals the SQL order of the tuples, so primary-key and
//!   index range scans are byte-range scans in storage.
//! * Keys under a collation ([`encode_key_in`], [`btree_entry_key`]): a
//!   text key part of a non-binary collation is its weight string
//!   ([`Collation::sort_key`], tag `0x07`), so that values the collation
//!   calls equal share one key and keys sort in the collation's order. Such
//!   a part cannot be decoded back to its text ([`decode_key`] refuses the
//!   tag): whoever needs the value reads the row. Binary collations encode
//!   exactly as [`encode_key`] (keys of databases written before
//!   collations stay valid).
//!
//! This module never decides *which* columns form a key; the catalog does.

use crate::collation::Collation;
use crate::types::{DataType, Value};

const T_NULL: u8 = 0;
const T_FALSE: u8 = 1;
const T_TRUE: u8 = 2;
const T_INT: u8 = 3;
const T_FLOAT: u8 = 4;
const T_TEXT: u8 = 5;
const T_DATETIME: u8 = 6;
const T_VEC: u8 = 7;
/// Exact decimal: held scale (u8), shown scale (u8), mantissa length
/// (u8), mantissa as little-endian two's complement.
const T_DECIMAL: u8 = 8;
/// Binary string: length (u32), the bytes. A tag of its own, so rows
/// written before binary strings decode exactly as they did.
const T_BYTES: u8 = 9;

/// Decoding failure (stored bytes are damaged or of another format).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("corrupt row encoding: {0}")]
pub struct CodecError(pub &'static str);

/// Encode a row.
pub fn encode_row(row: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(16 + row.len() * 9);
    out.extend_from_slice(&(row.len() as u32).to_le_bytes());
    for v in row {
        match v {
            Value::Null => out.push(T_NULL),
            Value::Bool(false) => out.push(T_FALSE),
            Value::Bool(true) => out.push(T_TRUE),
            Value::Int(i) => {
                out.push(T_INT);
                out.extend_from_slice(&i.to_le_bytes());
            }
            Value::Float(f) => {
                out.push(T_FLOAT);
                out.extend_from_slice(&f.to_le_bytes());
            }
            Value::Decimal(d) => {
                out.push(T_DECIMAL);
                out.push(d.held_scale());
                out.push(d.scale());
                let len_at = out.len();
                out.push(0);
                d.mantissa_bytes(&mut out);
                // A DECIMAL(65) mantissa needs 28 bytes; anything longer
                // than 255 bytes is not a value this engine makes.
                let len = out.len() - len_at - 1;
                debug_assert!(len <= 255);
                out.truncate(len_at + 1 + len.min(255));
                out[len_at] = len.min(255) as u8;
            }
            Value::Text(s) => {
                out.push(T_TEXT);
                out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                out.extend_from_slice(s.as_bytes());
            }
            Value::DateTime(us) => {
                out.push(T_DATETIME);
                out.extend_from_slice(&us.to_le_bytes());
            }
            Value::Bytes(b) => {
                out.push(T_BYTES);
                out.extend_from_slice(&(b.len() as u32).to_le_bytes());
                out.extend_from_slice(b);
            }
            Value::Vector(xs) => {
                out.push(T_VEC);
                out.extend_from_slice(&(xs.len() as u32).to_le_bytes());
                for x in xs {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
        }
    }
    out
}

struct Reader<'a> {
    b: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], CodecError> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or(CodecError("length overflow"))?;
        let s = self.b.get(self.pos..end).ok_or(CodecError("truncated"))?;
        self.pos = end;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, CodecError> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32, CodecError> {
        let s = self.take(4)?;
        Ok(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self) -> Result<[u8; 8], CodecError> {
        let s = self.take(8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        Ok(a)
    }
}

/// Decode a row written by [`encode_row`].
pub fn decode_row(bytes: &[u8]) -> Result<Vec<Value>, CodecError> {
    decode_row_masked(bytes, None)
}

/// Decode a row, materializing only the columns `needed` marks (the others
/// are skipped over and read as NULL: a query that does not read them
/// cannot tell). `None` decodes every column.
pub fn decode_row_masked(bytes: &[u8], needed: Option<&[bool]>) -> Result<Vec<Value>, CodecError> {
    let mut row = Vec::new();
    decode_row_into(bytes, needed, &mut row)?;
    Ok(row)
}

/// [`decode_row_masked`] into `row`, reusing what it holds: a text column
/// decoded over a text value keeps that string's allocation, so a scan
/// that decodes into one buffer and keeps few rows allocates little.
/// On error `row` holds a partial decode.
pub fn decode_row_into(
    bytes: &[u8],
    needed: Option<&[bool]>,
    row: &mut Vec<Value>,
) -> Result<(), CodecError> {
    let mut r = Reader { b: bytes, pos: 0 };
    let n = r.u32()? as usize;
    if n > bytes.len() {
        return Err(CodecError("column count larger than row"));
    }
    row.truncate(n);
    row.resize(n, Value::Null);
    for (i, slot) in row.iter_mut().enumerate() {
        if needed.is_some_and(|m| !m.get(i).copied().unwrap_or(true)) {
            match r.u8()? {
                T_NULL | T_FALSE | T_TRUE => {}
                T_INT | T_FLOAT | T_DATETIME => {
                    r.u64()?;
                }
                T_TEXT | T_BYTES => {
                    let len = r.u32()? as usize;
                    r.take(len)?;
                }
                T_VEC => {
                    let len = r.u32()? as usize;
                    r.take(len.checked_mul(8).ok_or(CodecError("vector length"))?)?;
                }
                T_DECIMAL => {
                    r.u8()?;
                    r.u8()?;
                    let len = r.u8()? as usize;
                    r.take(len)?;
                }
                _ => return Err(CodecError("unknown value tag")),
            }
            *slot = Value::Null;
            continue;
        }
        *slot = match r.u8()? {
            T_NULL => Value::Null,
            T_FALSE => Value::Bool(false),
            T_TRUE => Value::Bool(true),
            T_INT => Value::Int(i64::from_le_bytes(r.u64()?)),
            T_FLOAT => Value::Float(f64::from_le_bytes(r.u64()?)),
            T_TEXT => {
                let len = r.u32()? as usize;
                let s =
                    std::str::from_utf8(r.take(len)?).map_err(|_| CodecError("invalid utf-8"))?;
                if let Value::Text(old) = slot {
                    old.clear();
                    old.push_str(s);
                    continue;
                }
                Value::Text(s.to_string())
            }
            T_DATETIME => Value::DateTime(i64::from_le_bytes(r.u64()?)),
            T_BYTES => {
                let len = r.u32()? as usize;
                let b = r.take(len)?;
                if let Value::Bytes(old) = slot {
                    old.clear();
                    old.extend_from_slice(b);
                    continue;
                }
                Value::Bytes(b.to_vec())
            }
            T_DECIMAL => {
                let held = r.u8()?;
                let shown = r.u8()?;
                let len = r.u8()? as usize;
                Value::Decimal(
                    crate::decimal::Decimal::from_mantissa_bytes(r.take(len)?, held)
                        .with_shown(shown),
                )
            }
            T_VEC => {
                let len = r.u32()? as usize;
                let raw = r.take(len.checked_mul(8).ok_or(CodecError("vector length"))?)?;
                Value::Vector(
                    raw.chunks_exact(8)
                        .map(|c| {
                            let mut a = [0u8; 8];
                            a.copy_from_slice(c);
                            f64::from_le_bytes(a)
                        })
                        .collect(),
                )
            }
            _ => return Err(CodecError("unknown value tag")),
        };
    }
    if r.pos != bytes.len() {
        return Err(CodecError("trailing bytes"));
    }
    Ok(())
}

/// Append the memcomparable encoding of one value.
pub fn encode_key_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.push(0x00),
        Value::Bool(b) => {
            out.push(0x01);
            out.push(*b as u8);
        }
        Value::Int(i) | Value::DateTime(i) => {
            out.push(0x02);
            out.extend_from_slice(&((*i as u64) ^ (1u64 << 63)).to_be_bytes());
        }
        Value::Float(f) => {
            out.push(0x03);
            // -0.0 and 0.0 are one value in SQL: one key.
            let bits = (f + 0.0).to_bits();
            let ord = if bits >> 63 == 1 {
                !bits
            } else {
                bits | (1u64 << 63)
            };
            out.extend_from_slice(&ord.to_be_bytes());
        }
        Value::Decimal(d) => {
            out.push(0x06);
            d.encode_key(out);
        }
        Value::Text(s) => {
            out.push(0x04);
            escape_bytes(out, s.as_bytes());
        }
        // The tag of text: a binary string's key is its bytes, ordered as
        // memcmp orders them, and a text value looked up in a binary
        // column finds the equal bytes. `decode_key` tells the two apart
        // by the column's type.
        Value::Bytes(b) => {
            out.push(0x04);
            escape_bytes(out, b);
        }
        Value::Vector(xs) => {
            out.push(0x05);
            let mut raw = Vec::with_capacity(xs.len() * 8);
            for x in xs {
                raw.extend_from_slice(&x.to_be_bytes());
            }
            escape_bytes(out, &raw);
        }
    }
}

/// Key tag of a weight string (text under a non-binary collation).
const K_WEIGHTS: u8 = 0x07;

/// Append the key encoding of `v` in a key part of collation `coll`: text
/// under a non-binary collation is its weight string (equal exactly when
/// the collation says equal, ordered as it orders); anything else is
/// [`encode_key_value`]'s encoding, byte for byte.
pub fn encode_key_value_in(out: &mut Vec<u8>, v: &Value, coll: Collation) {
    match v {
        Value::Text(s) if !coll.is_binary() => {
            out.push(K_WEIGHTS);
            escape_bytes(out, &coll.sort_key(s));
        }
        _ => encode_key_value(out, v),
    }
}

/// Memcomparable encoding of a tuple of key values, part `i` under
/// collation `colls[i]` (binary where `colls` is shorter).
pub fn encode_key_in(values: &[Value], colls: &[Collation]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 9);
    for (i, v) in values.iter().enumerate() {
        encode_key_value_in(&mut out, v, colls.get(i).copied().unwrap_or_default());
    }
    out
}

fn escape_bytes(out: &mut Vec<u8>, b: &[u8]) {
    for &c in b {
        if c == 0 {
            out.extend_from_slice(&[0x00, 0xFF]);
        } else {
            out.push(c);
        }
    }
    out.extend_from_slice(&[0x00, 0x01]);
}

/// Decode a key made by [`encode_key`] back into its values; `types` are
/// the key columns' types (the encoding does not tell an integer from a
/// datetime). The inverse of `encode_key` for every value a key column
/// holds; a weight string (a text part of a non-binary collation, see
/// [`encode_key_in`]) is refused: it does not hold the text.
pub fn decode_key(mut b: &[u8], types: &[&DataType]) -> Result<Vec<Value>, CodecError> {
    let bad = || CodecError("bad key");
    let mut out = Vec::with_capacity(types.len());
    for ty in types {
        let (&tag, rest) = b.split_first().ok_or_else(bad)?;
        b = rest;
        let fixed = |b: &mut &[u8]| -> Result<u64, CodecError> {
            let (head, rest) = b.split_at_checked(8).ok_or_else(bad)?;
            *b = rest;
            Ok(u64::from_be_bytes(head.try_into().map_err(|_| bad())?))
        };
        let v = match tag {
            0x00 => Value::Null,
            0x01 => {
                let (&x, rest) = b.split_first().ok_or_else(bad)?;
                b = rest;
                Value::Bool(x != 0)
            }
            0x02 => {
                let i = (fixed(&mut b)? ^ (1u64 << 63)) as i64;
                match ty {
                    DataType::DateTime | DataType::DateTimeFsp(_) | DataType::Date => {
                        Value::DateTime(i)
                    }
                    _ => Value::Int(i),
                }
            }
            0x03 => {
                let ord = fixed(&mut b)?;
                let bits = if ord >> 63 == 1 {
                    ord & !(1u64 << 63)
                } else {
                    !ord
                };
                let f = f64::from_bits(bits);
                match ty {
                    // Keys written before exact decimals hold doubles.
                    DataType::Decimal(_, s) => crate::decimal::Decimal::from_f64(f)
                        .map(|d| Value::Decimal(d.rescale(*s)))
                        .unwrap_or(Value::Float(f)),
                    _ => Value::Float(f),
                }
            }
            0x06 => {
                let (d, rest) = crate::decimal::Decimal::decode_key(b).ok_or_else(bad)?;
                b = rest;
                match ty {
                    DataType::Decimal(_, s) => Value::Decimal(d.rescale(*s)),
                    _ => Value::Decimal(d),
                }
            }
            0x04 | 0x05 => {
                let mut raw = Vec::new();
                loop {
                    match b {
                        [0x00, 0xFF, rest @ ..] => {
                            raw.push(0);
                            b = rest;
                        }
                        [0x00, 0x01, rest @ ..] => {
                            b = rest;
                            break;
                        }
                        [c, rest @ ..] if *c != 0 => {
                            raw.push(*c);
                            b = rest;
                        }
                        _ => return Err(bad()),
                    }
                }
                if tag == 0x04 && ty.is_binary_string() {
                    Value::Bytes(raw)
                } else if tag == 0x04 {
                    Value::Text(String::from_utf8(raw).map_err(|_| bad())?)
                } else {
                    let xs = raw
                        .chunks_exact(8)
                        .map(|c| c.try_into().map(f64::from_be_bytes).map_err(|_| bad()))
                        .collect::<Result<Vec<_>, _>>()?;
                    Value::Vector(xs)
                }
            }
            _ => return Err(bad()),
        };
        out.push(v);
    }
    if !b.is_empty() {
        return Err(bad());
    }
    Ok(out)
}

/// Memcomparable encoding of a tuple of values.
pub fn encode_key(values: &[Value]) -> Vec<u8> {
    let mut out = Vec::with_capacity(values.len() * 9);
    for v in values {
        encode_key_value(&mut out, v);
    }
    out
}

/// The smallest byte string greater than every string with prefix `p`
/// (`None` if there is none).
pub fn prefix_end(p: &[u8]) -> Option<Vec<u8>> {
    let mut v = p.to_vec();
    while let Some(last) = v.pop() {
        if last < 0xFF {
            v.push(last + 1);
            return Some(v);
        }
    }
    None
}

/// Index entry key for a B-tree index: memcomparable index values (value
/// `i` under collation `colls[i]`, see `encode_key_in`), then the
/// primary key — except for unique indexes without NULLs, whose key is the
/// values alone so that one locking read detects a duplicate.
pub fn btree_entry_key(vals: &[Value], colls: &[Collation], pk: &[u8], unique: bool) -> Vec<u8> {
    let mut k = encode_key_in(vals, colls);
    if !(unique && vals.iter().all(|v| !v.is_null())) {
        k.extend_from_slice(pk);
    }
    k
}

#[cfg(test)]
mod tests {
    fn dec(s: &str) -> Value {
        Value::Decimal(crate::decimal::Decimal::parse(s).expect("decimal"))
    }

    #[test]
    fn decimal_rows_round_trip_exactly() {
        // A quotient holds more digits than it shows: both survive.
        let third = crate::decimal::Decimal::from_i64(1)
            .div(&crate::decimal::Decimal::from_i64(3))
            .expect("nonzero");
        let row = vec![
            Value::Decimal(third),
            dec("0.10"),
            dec("-12345678901234567890123456789012345.123456789012345678901234567890"),
            dec("0"),
            dec("-0.5"),
        ];
        assert_eq!(decode_row(&encode_row(&row)).unwrap(), row);
        let masked =
            decode_row_masked(&encode_row(&row), Some(&[true, false, true, false, true])).unwrap();
        assert_eq!(
            masked,
            vec![
                row[0].clone(),
                Value::Null,
                row[2].clone(),
                Value::Null,
                row[4].clone()
            ]
        );
        // A key written before exact decimals (a double) reads back as a
        // decimal of the column's scale.
        let old = encode_key(&[Value::Float(0.1)]);
        assert_eq!(
            decode_key(&old, &[&crate::types::DataType::Decimal(10, 2)]).unwrap(),
            vec![dec("0.10")]
        );
    }

    #[test]
    fn keys_decode_back_to_their_values() {
        use crate::types::DataType as D;
        let cases: Vec<(Vec<Value>, Vec<D>)> = vec![
            (
                vec![Value::Int(-5), Value::Text("a\0b".into())],
                vec![D::Int, D::Text],
            ),
            (
                vec![Value::DateTime(1_700_000_000_000_000)],
                vec![D::DateTime],
            ),
            (
                vec![Value::Float(-2.5), Value::Float(0.0), Value::Float(7.25)],
                vec![D::Double; 3],
            ),
            (vec![Value::Null, Value::Bool(true)], vec![D::Int, D::Bool]),
            (vec![Value::Vector(vec![1.0, -0.5])], vec![D::VecF64(2)]),
            (
                vec![Value::Int(i64::MIN), Value::Int(i64::MAX)],
                vec![D::BigInt, D::BigInt],
            ),
            (
                vec![
                    dec("-12.50"),
                    dec("0.000"),
                    dec("99999999999999999999999999999999999.999999999999999999999999999999"),
                ],
                vec![D::Decimal(10, 2), D::Decimal(5, 3), D::Decimal(65, 30)],
            ),
        ];
        for (vals, types) in cases {
            let key = encode_key(&vals);
            let refs: Vec<&D> = types.iter().collect();
            assert_eq!(decode_key(&key, &refs).unwrap(), vals);
            // Truncated or extended keys are refused, never misread.
            assert!(decode_key(&key[..key.len() - 1], &refs).is_err());
            let mut longer = key.clone();
            longer.push(1);
            assert!(decode_key(&longer, &refs).is_err());
        }
    }

    use super::*;

    #[test]
    fn masked_decode_skips_unneeded_columns() {
        let row = vec![
            Value::Int(7),
            Value::Text("skip me".into()),
            Value::Vector(vec![1.0, 2.0]),
            Value::Float(2.5),
            Value::Null,
            Value::Text("keep".into()),
        ];
        let b = encode_row(&row);
        let mask = [true, false, false, true, false, true];
        assert_eq!(
            decode_row_masked(&b, Some(&mask)).unwrap(),
            vec![
                Value::Int(7),
                Value::Null,
                Value::Null,
                Value::Float(2.5),
                Value::Null,
                Value::Text("keep".into())
            ]
        );
        assert_eq!(decode_row_masked(&b, None).unwrap(), row);
        // A short mask reads the rest; garbage is still refused.
        assert_eq!(decode_row_masked(&b, Some(&[false])).unwrap()[5], row[5]);
        assert!(decode_row_masked(&b[..b.len() - 1], Some(&mask)).is_err());
    }

    /// Binary strings: every byte value survives a row and a key, keys
    /// order as memcmp, and the bytes of a row written before binary
    /// strings existed (pinned here) still decode to the same values.
    #[test]
    fn binary_strings_round_trip_and_old_rows_still_decode() {
        let all: Vec<u8> = (0..=255u8).collect();
        let row = vec![
            Value::Bytes(all.clone()),
            Value::Bytes(Vec::new()),
            Value::Text("t".into()),
            Value::Bytes(vec![0, 0xFF, 0]),
        ];
        let b = encode_row(&row);
        assert_eq!(decode_row(&b).unwrap(), row);
        assert_eq!(
            decode_row_masked(&b, Some(&[false, true, true, false])).unwrap(),
            vec![
                Value::Null,
                Value::Bytes(Vec::new()),
                row[2].clone(),
                Value::Null
            ]
        );
        let ty = DataType::VarBinary(300);
        let key = encode_key(&[Value::Bytes(all.clone())]);
        assert_eq!(decode_key(&key, &[&ty]).unwrap(), vec![Value::Bytes(all)]);
        let ordered: [&[u8]; 7] = [
            b"",
            b"\x00",
            b"\x00\x00",
            b"\x00\x01",
            b"\x01",
            b"\x7f\xff",
            b"\xff",
        ];
        for w in ordered.windows(2) {
            let (a, b) = (Value::Bytes(w[0].to_vec()), Value::Bytes(w[1].to_vec()));
            assert!(
                encode_key(&[a.clone(), Value::Int(9)]) < encode_key(&[b.clone(), Value::Int(1)]),
                "{w:?}"
            );
            assert_eq!(a.total_cmp(&b), std::cmp::Ordering::Less);
        }
        // Text looked up in a binary column: the same key as its bytes.
        assert_eq!(
            encode_key(&[Value::Text("ab".into())]),
            encode_key(&[Value::Bytes(b"ab".to_vec())])
        );
        // A row as the code before binary strings wrote it.
        let old: &[u8] = &[
            3, 0, 0, 0, 3, 7, 0, 0, 0, 0, 0, 0, 0, 5, 2, 0, 0, 0, b'h', b'i', 0,
        ];
        assert_eq!(
            decode_row(old).unwrap(),
            vec![Value::Int(7), Value::Text("hi".into()), Value::Null]
        );
        assert_eq!(encode_row(&decode_row(old).unwrap()), old);
    }

    #[test]
    fn row_round_trip_and_garbage() {
        let row = vec![
            Value::Int(-5),
            Value::Null,
            Value::Text("héllo".into()),
            Value::Float(1.5),
            Value::Bool(true),
            Value::DateTime(42),
            Value::Vector(vec![1.0, -2.5]),
        ];
        let b = encode_row(&row);
        assert_eq!(decode_row(&b).unwrap(), row);
        assert!(decode_row(&b[..b.len() - 1]).is_err());
        assert!(decode_row(&[0xff, 0xff, 0xff, 0xff]).is_err());
    }

    #[test]
    fn keys_sort_like_values() {
        let vals = [
            vec![Value::Int(-10)],
            vec![Value::Int(-1)],
            vec![Value::Int(0)],
            vec![Value::Int(7)],
            vec![Value::Int(i64::MAX)],
        ];
        for w in vals.windows(2) {
            assert!(encode_key(&w[0]) < encode_key(&w[1]));
        }
        let f = [-3.5f64, -0.0, 0.5, 2.0, 1e300];
        for w in f.windows(2) {
            assert!(
                encode_key(&[Value::Float(w[0])]) < encode_key(&[Value::Float(w[1])]),
                "{w:?}"
            );
        }
        let t = ["", "a", "a\u{0}b", "ab", "b"];
        for w in t.windows(2) {
            assert!(
                encode_key(&[Value::Text(w[0].into())]) < encode_key(&[Value::Text(w[1].into())])
            );
        }
        // composite: (a, 2) < (ab, 1)
        assert!(
            encode_key(&[Value::Text("a".into()), Value::Int(2)])
                < encode_key(&[Value::Text("ab".into()), Value::Int(1)])
        );
        assert!(encode_key(&[Value::Null]) < encode_key(&[Value::Int(i64::MIN)]));
        assert_eq!(prefix_end(&[1, 2, 0xff]), Some(vec![1, 3]));
        assert_eq!(prefix_end(&[0xff]), None);
    }

    /// Keys of binary collations are exactly the keys written before
    /// collations (databases with such keys stay readable): pinned bytes,
    /// and `encode_key_in` / `btree_entry_key` equal to the plain encoding.
    #[test]
    fn binary_collation_keys_are_unchanged() {
        assert_eq!(
            encode_key(&[Value::Text("a\0".into()), Value::Int(1)]),
            [
                &[0x04, b'a', 0x00, 0xFF, 0x00, 0x01][..],
                &[0x02, 0x80, 0, 0, 0, 0, 0, 0, 1]
            ]
            .concat()
        );
        let vals = vec![
            Value::Text("Ab ".into()),
            Value::Int(-3),
            Value::Null,
            Value::Text("ß".into()),
            dec("1.50"),
        ];
        for c in Collation::ALL.into_iter().filter(|c| c.is_binary()) {
            let colls = vec![c; vals.len()];
            assert_eq!(encode_key_in(&vals, &colls), encode_key(&vals), "{c}");
            let pk = encode_key(&[Value::Int(9)]);
            for unique in [false, true] {
                let mut old = encode_key(&vals);
                if !unique || vals.iter().any(Value::is_null) {
                    old.extend_from_slice(&pk);
                }
                assert_eq!(btree_entry_key(&vals, &colls, &pk, unique), old);
            }
        }
        // Missing collations are binary; non-text values ignore theirs.
        assert_eq!(encode_key_in(&vals, &[]), encode_key(&vals));
        let ci = Collation::Utf8mb4GeneralCi;
        let nums = [Value::Int(4), Value::Null, dec("2.5"), Value::Float(1.0)];
        assert_eq!(encode_key_in(&nums, &[ci; 4]), encode_key(&nums));
    }

    /// Under every non-binary collation a text key part is equal exactly
    /// when the collation says so and ordered as it orders, alone and
    /// followed by another part (the weight encoding is prefix-free).
    #[test]
    fn collation_keys_order_as_the_collation() {
        let words = [
            "", "a", "A", "a ", "a  ", "á", "Ä", "b", "B", "ß", "s", "ss", "a\t", "a\u{0}", "😀",
            "😁", "ab", "Ab ", " a", "a b", "a\u{0}b", "\u{ffff}", "z",
        ];
        let mut checked = 0;
        for c in Collation::ALL.into_iter().filter(|c| !c.is_binary()) {
            for x in words {
                for y in words {
                    let (kx, ky) = (
                        encode_key_in(&[Value::Text(x.into())], &[c]),
                        encode_key_in(&[Value::Text(y.into())], &[c]),
                    );
                    assert_eq!(kx.cmp(&ky), c.cmp(x, y), "{c}: {x:?} vs {y:?}");
                    let (cx, cy) = (
                        encode_key_in(&[Value::Text(x.into()), Value::Int(2)], &[c]),
                        encode_key_in(&[Value::Text(y.into()), Value::Int(1)], &[c]),
                    );
                    let want = c.cmp(x, y).then(std::cmp::Ordering::Greater);
                    assert_eq!(cx.cmp(&cy), want, "{c}: ({x:?}, 2) vs ({y:?}, 1)");
                    checked += 1;
                }
                // NULL sorts first, as in a binary key.
                assert!(
                    encode_key_in(&[Value::Null], &[c])
                        < encode_key_in(&[Value::Text(x.into())], &[c])
                );
            }
        }
        assert!(checked > 0, "no non-binary collation was checked");
        // A weight string does not hold the text: decoding it is refused.
        let k = encode_key_in(&[Value::Text("A".into())], &[Collation::Utf8mb4GeneralCi]);
        assert!(decode_key(&k, &[&DataType::Text]).is_err());
    }
}
