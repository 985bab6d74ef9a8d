//! Hash and encoding functions of a string's bytes: MD5, SHA1 / SHA, SHA2,
//! CRC32, HEX, TO_BASE64, and their inverses UNHEX and FROM_BASE64. Their
//! argument is a binary string's bytes, or the value's text (a number's as
//! MySQL prints it) in UTF-8, as MySQL hashes a utf8mb4 string; digests
//! are text (lower-case hex, as MySQL), UNHEX and FROM_BASE64 give binary
//! strings.

use base64::Engine as _;
use md5::Digest as _;

use crate::error::{SqlError, SqlResult};
use crate::sql::expr::value::bytes_of;
use crate::types::Value;

fn lower_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The one argument's bytes, or `None` for NULL.
fn arg_bytes(args: &[Value], name: &str) -> SqlResult<Option<Vec<u8>>> {
    match args.first() {
        None => Err(crate::sql::expr::wrong_count(name)),
        Some(Value::Null) => Ok(None),
        Some(v) => Ok(Some(bytes_of(v).into_owned())),
    }
}

pub(super) fn md5(name: &str, args: &[Value]) -> SqlResult<Value> {
    Ok(arg_bytes(args, name)?.map_or(Value::Null, |b| {
        Value::Text(lower_hex(&md5::Md5::digest(&b)))
    }))
}

pub(super) fn sha1(name: &str, args: &[Value]) -> SqlResult<Value> {
    use sha1::Digest as _;
    Ok(arg_bytes(args, name)?.map_or(Value::Null, |b| {
        Value::Text(lower_hex(&sha1::Sha1::digest(&b)))
    }))
}

/// SHA2(str, bits): bits 224, 256 (or 0), 384 or 512; NULL for any other
/// length (MySQL's answer, with no warning) or a NULL argument.
pub(super) fn sha2(name: &str, args: &[Value]) -> SqlResult<Value> {
    let Some(b) = arg_bytes(args, name)? else {
        return Ok(Value::Null);
    };
    let bits = match args.get(1) {
        None => return Err(crate::sql::expr::wrong_count(name)),
        Some(Value::Null) => return Ok(Value::Null),
        Some(v) => crate::sql::expr::as_f64(v).unwrap_or(-1.0),
    };
    Ok(Value::Text(match bits as i64 {
        _ if bits.fract() != 0.0 => return Ok(Value::Null),
        224 => lower_hex(&sha2::Sha224::digest(&b)),
        0 | 256 => lower_hex(&sha2::Sha256::digest(&b)),
        384 => lower_hex(&sha2::Sha384::digest(&b)),
        512 => lower_hex(&sha2::Sha512::digest(&b)),
        _ => return Ok(Value::Null),
    }))
}

/// CRC32(str): the CRC-32 (ISO-HDLC, as zlib) of the bytes, unsigned.
pub(super) fn crc32(name: &str, args: &[Value]) -> SqlResult<Value> {
    Ok(arg_bytes(args, name)?.map_or(Value::Null, |b| Value::Int(i64::from(crc32fast::hash(&b)))))
}

/// HEX(x): a string's bytes as upper-case hex digits; a number as the
/// hex digits of its value rounded to an integer (two's complement in 64
/// bits when negative, as MySQL).
pub(super) fn hex(name: &str, args: &[Value]) -> SqlResult<Value> {
    let v = match args.first() {
        None => return Err(crate::sql::expr::wrong_count(name)),
        Some(v) => v,
    };
    Ok(match v {
        Value::Null => Value::Null,
        Value::Int(i) => Value::Text(format!("{:X}", *i as u64)),
        Value::Bool(b) => Value::Text(format!("{:X}", u8::from(*b))),
        Value::Float(_) | Value::Decimal(_) => {
            let f = crate::sql::expr::as_f64(v).unwrap_or(0.0).round();
            if !f.is_finite() || f.abs() >= i64::MAX as f64 {
                return Err(SqlError::wrong_args(format!(
                    "HEX of {v}: out of the 64-bit range"
                )));
            }
            Value::Text(format!("{:X}", f as i64 as u64))
        }
        other => Value::Text(bytes_of(other).iter().map(|b| format!("{b:02X}")).collect()),
    })
}

/// BINARY(x) written as a call: the value's bytes as a binary string.
pub(super) fn binary(name: &str, args: &[Value]) -> SqlResult<Value> {
    Ok(match args.first() {
        None => return Err(crate::sql::expr::wrong_count(name)),
        Some(Value::Null) => Value::Null,
        Some(v) => Value::Bytes(bytes_of(v).into_owned()),
    })
}

/// UNHEX(s): the bytes whose hex digits `s` holds (either case; an odd
/// count reads as if a leading 0 were there), a binary string; NULL for a
/// character that is not a hex digit, as MySQL.
pub(super) fn unhex(name: &str, args: &[Value]) -> SqlResult<Value> {
    let Some(b) = arg_bytes(args, name)? else {
        return Ok(Value::Null);
    };
    let digit = |c: u8| (c as char).to_digit(16).map(|d| d as u8);
    let mut out = Vec::with_capacity(b.len() / 2 + 1);
    let (head, rest) = b.split_at(b.len() % 2);
    if let Some(&c) = head.first() {
        match digit(c) {
            Some(d) => out.push(d),
            None => return Ok(Value::Null),
        }
    }
    for p in rest.chunks(2) {
        match (digit(p[0]), digit(p[1])) {
            (Some(h), Some(l)) => out.push(h << 4 | l),
            _ => return Ok(Value::Null),
        }
    }
    Ok(Value::Bytes(out))
}

/// FROM_BASE64(s): the bytes `s` encodes in base-64 (whitespace
/// ignored, as MySQL), a binary string; NULL when it is not base-64.
pub(super) fn from_base64(name: &str, args: &[Value]) -> SqlResult<Value> {
    let Some(b) = arg_bytes(args, name)? else {
        return Ok(Value::Null);
    };
    let clean: Vec<u8> = b.into_iter().filter(|c| !c.is_ascii_whitespace()).collect();
    Ok(base64::engine::general_purpose::STANDARD
        .decode(clean)
        .map_or(Value::Null, Value::Bytes))
}

/// TO_BASE64(str): the bytes in base-64 (MySQL's alphabet and padding,
/// with a newline after every 76 characters, as MySQL).
pub(super) fn to_base64(name: &str, args: &[Value]) -> SqlResult<Value> {
    Ok(arg_bytes(args, name)?.map_or(Value::Null, |b| {
        let s = base64::engine::general_purpose::STANDARD.encode(b);
        let lines: Vec<&str> = s
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap_or_default())
            .collect();
        Value::Text(lines.join("\n"))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: &str) -> Value {
        Value::Text(s.into())
    }

    #[test]
    fn digests_match_known_values() {
        assert_eq!(
            md5("md5", &[t("")]).unwrap(),
            t("d41d8cd98f00b204e9800998ecf8427e")
        );
        assert_eq!(
            sha1("sha1", &[t("abc")]).unwrap(),
            t("a9993e364706816aba3e25717850c26c9cd0d89d")
        );
        assert_eq!(
            sha2("sha2", &[t("abc"), Value::Int(256)]).unwrap(),
            t("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        );
        assert_eq!(
            sha2("sha2", &[t("abc"), Value::Int(255)]).unwrap(),
            Value::Null
        );
        assert_eq!(
            crc32("crc32", &[t("MySQL")]).unwrap(),
            Value::Int(3_259_397_556)
        );
        assert_eq!(hex("hex", &[Value::Int(255)]).unwrap(), t("FF"));
        assert_eq!(
            hex("hex", &[Value::Int(-1)]).unwrap(),
            t("FFFFFFFFFFFFFFFF")
        );
        assert_eq!(hex("hex", &[t("abc")]).unwrap(), t("616263"));
        assert_eq!(to_base64("to_base64", &[t("abc")]).unwrap(), t("YWJj"));
        assert_eq!(md5("md5", &[Value::Null]).unwrap(), Value::Null);
    }
}
