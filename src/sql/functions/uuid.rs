//! UUID(), UUID_SHORT() and IS_UUID() as MySQL 8 answers them: a
//! time-based (version 1) UUID, a 64-bit number unique per server, and the
//! check of a UUID's text forms; UUID_TO_BIN / BIN_TO_UUID between a
//! UUID's text and its 16 bytes.
//!
//! Owns the process's UUID generator state (clock sequence, node, the last
//! timestamp handed out, UUID_SHORT's counter). Never reads the session.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use crate::error::{SqlError, SqlResult};
use crate::sql::expr::value::{bytes_of, text_of, truth, want, wrong_count};
use crate::types::Value;

/// 100-ns intervals between 1582-10-15 (the UUID epoch) and 1970-01-01.
const GREGORIAN_OFFSET: u64 = 0x01B2_1DD2_1381_4000;

/// The generator: a random 14-bit clock sequence and 48-bit node (with the
/// multicast bit set, as RFC 4122 asks of a node that is not a MAC
/// address), and the last timestamp used — each UUID gets a later one, so
/// two calls in the same 100 ns still differ.
struct Generator {
    clock_seq: u16,
    node: u64,
    last: Mutex<u64>,
}

static GENERATOR: LazyLock<Generator> = LazyLock::new(|| {
    let mut raw = [0u8; 8];
    // Without an entropy source the clock's nanoseconds stand in: the
    // UUIDs stay unique within this process, which is what the timestamp
    // sequence guarantees anyway.
    if getrandom::fill(&mut raw).is_err() {
        raw = unix_100ns().to_le_bytes();
    }
    let r = u64::from_le_bytes(raw);
    Generator {
        clock_seq: (r & 0x3FFF) as u16,
        node: ((r >> 16) & 0xFFFF_FFFF_FFFF) | 0x0100_0000_0000,
        last: Mutex::new(0),
    }
});

fn unix_100ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| (d.as_nanos() / 100) as u64)
}

/// A later UUID timestamp than any handed out before.
fn next_timestamp() -> u64 {
    let now = unix_100ns() + GREGORIAN_OFFSET;
    let mut last = GENERATOR.last.lock().unwrap_or_else(|p| p.into_inner());
    let t = now.max(*last + 1);
    *last = t;
    t
}

/// The text of the version-1 UUID of timestamp `t`.
fn format_v1(t: u64, clock_seq: u16, node: u64) -> String {
    let time_low = t & 0xFFFF_FFFF;
    let time_mid = (t >> 32) & 0xFFFF;
    let time_hi = ((t >> 48) & 0x0FFF) | 0x1000;
    let seq = (clock_seq & 0x3FFF) | 0x8000;
    format!("{time_low:08x}-{time_mid:04x}-{time_hi:04x}-{seq:04x}-{node:012x}")
}

/// `UUID()`: a version-1 UUID, `aaaaaaaa-bbbb-1ccc-dddd-eeeeeeeeeeee`.
pub(super) fn uuid(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 0, name)?;
    let g = &*GENERATOR;
    Ok(Value::Text(format_v1(
        next_timestamp(),
        g.clock_seq,
        g.node,
    )))
}

/// MySQL's `server_id` default: UUID_SHORT's top byte.
const SERVER_ID: u64 = 1;

/// UUID_SHORT's counter: `(server_id & 255) << 56 | startup seconds << 24`,
/// incremented by each call (MySQL's formula).
static SHORT: LazyLock<AtomicU64> = LazyLock::new(|| {
    let secs = unix_100ns() / 10_000_000;
    AtomicU64::new(((SERVER_ID & 255) << 56) + (secs << 24))
});

/// `UUID_SHORT()`: a number unique among this server's calls.
pub(super) fn uuid_short(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 0, name)?;
    let v = SHORT.fetch_add(1, Ordering::Relaxed);
    // Below 2^63 while the server id is below 128 (it is 1).
    Ok(Value::Int(i64::try_from(v).unwrap_or(i64::MAX)))
}

/// `IS_UUID(s)`: 1 when `s` is a UUID in one of MySQL's text forms (32
/// hex digits, optionally dashed 8-4-4-4-12, optionally in braces), 0
/// otherwise, NULL for NULL.
pub(super) fn is_uuid(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    Ok(Value::Int(i64::from(valid_uuid_text(&text_of(&args[0])))))
}

/// MySQL's 1411 for an argument a UUID function cannot read.
fn wrong_value(name: &str, v: &Value) -> SqlError {
    SqlError::new(
        1411,
        format!("Incorrect string value: '{v}' for function {name}"),
    )
}

/// The swap flag of UUID_TO_BIN / BIN_TO_UUID (second argument, default
/// 0): whether the time-low and time-high groups trade places, so that
/// version-1 UUIDs made one after the other sort together.
fn swap_flag(args: &[Value], name: &str) -> SqlResult<bool> {
    match args.len() {
        1 => Ok(false),
        2 => Ok(truth(&args[1]).unwrap_or(false)),
        _ => Err(wrong_count(name)),
    }
}

/// `UUID_TO_BIN(s[, swap])`: the 16 bytes of UUID text `s` (any form
/// IS_UUID accepts); 1411 for text that is not a UUID; NULL for NULL.
pub(super) fn uuid_to_bin(name: &str, args: &[Value]) -> SqlResult<Value> {
    let swap = swap_flag(args, name)?;
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    let s = text_of(&args[0]);
    if !valid_uuid_text(&s) {
        return Err(wrong_value(name, &args[0]));
    }
    let digits: Vec<u8> = s.bytes().filter(u8::is_ascii_hexdigit).collect();
    let mut b: Vec<u8> = digits
        .chunks(2)
        .map(|p| {
            let d = |c: u8| (c as char).to_digit(16).unwrap_or(0) as u8;
            d(p[0]) << 4 | d(p[1])
        })
        .collect();
    if swap {
        // time-hi (bytes 6..8), time-mid (4..6), time-low (0..4), rest.
        b = [&b[6..8], &b[4..6], &b[0..4], &b[8..16]].concat();
    }
    Ok(Value::Bytes(b))
}

/// `BIN_TO_UUID(b[, swap])`: the dashed lower-case text of 16 bytes;
/// 1411 for a value of another length; NULL for NULL.
pub(super) fn bin_to_uuid(name: &str, args: &[Value]) -> SqlResult<Value> {
    let swap = swap_flag(args, name)?;
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    let b = bytes_of(&args[0]);
    if b.len() != 16 {
        return Err(wrong_value(name, &args[0]));
    }
    let b = if swap {
        [&b[4..8], &b[2..4], &b[0..2], &b[8..16]].concat()
    } else {
        b.into_owned()
    };
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    Ok(Value::Text(format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )))
}

fn valid_uuid_text(s: &str) -> bool {
    let inner = match s.strip_prefix('{') {
        Some(rest) => match rest.strip_suffix('}') {
            Some(i) => i,
            None => return false,
        },
        None => s,
    };
    let hex = |p: &str| p.bytes().all(|b| b.is_ascii_hexdigit());
    match inner.len() {
        32 => hex(inner),
        36 => {
            let parts: Vec<&str> = inner.split('-').collect();
            parts.len() == 5
                && parts.iter().map(|p| p.len()).eq([8, 4, 4, 4, 12])
                && parts.iter().all(|p| hex(p))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: Value) -> String {
        match v {
            Value::Text(s) => s,
            v => panic!("not text: {v:?}"),
        }
    }

    #[test]
    fn uuids_are_version_1_variant_rfc4122_and_distinct() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let u = text(uuid("uuid", &[]).unwrap());
            assert!(valid_uuid_text(&u), "{u}");
            assert_eq!(&u[14..15], "1", "version 1: {u}");
            assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"), "variant: {u}");
            assert!(seen.insert(u), "a repeated UUID");
        }
    }

    #[test]
    fn the_timestamp_fields_are_laid_out_as_rfc4122() {
        // 1582-10-15 + 0x1_2345_6789_abcd 100-ns ticks.
        let u = format_v1(0x0123_4567_89ab_cdef, 0x1234, 0x0102_0304_0506);
        assert_eq!(u, "89abcdef-4567-1123-9234-010203040506");
    }

    #[test]
    fn uuid_short_counts_up_from_the_server_id_and_start() {
        let Value::Int(a) = uuid_short("uuid_short", &[]).unwrap() else {
            panic!()
        };
        let Value::Int(b) = uuid_short("uuid_short", &[]).unwrap() else {
            panic!()
        };
        assert!(b > a);
        assert_eq!(a >> 56, SERVER_ID as i64);
    }

    #[test]
    fn is_uuid_accepts_mysqls_three_forms_only() {
        for ok in [
            "6ccd780c-baba-1026-9564-5b8c656024db",
            "6CCD780CBABA102695645B8C656024DB",
            "{6ccd780c-baba-1026-9564-5b8c656024db}",
        ] {
            assert!(valid_uuid_text(ok), "{ok}");
        }
        for bad in [
            "6ccd780c-baba-1026-9564-5b8c656024d",
            "6ccd780cbaba-1026-9564-5b8c656024db0",
            "{6ccd780c-baba-1026-9564-5b8c656024db",
            "6ccd780c-baba-1026-9564-5b8c656024dg",
            "",
        ] {
            assert!(!valid_uuid_text(bad), "{bad}");
        }
        assert_eq!(is_uuid("is_uuid", &[Value::Null]).unwrap(), Value::Null);
    }
}
