//! The evaluators of the scalar functions that take their arguments'
//! values (moved here from `expr::call_builtin`, unchanged): each is
//! named in [`super::table::FUNCTIONS`] and receives the name it was
//! called by (one evaluator serves CEIL and FLOOR, LEFT and RIGHT, …).
//!
//! Owns nothing but the functions' semantics; the value helpers (numeric
//! promotion, comparison, text conversion) are `expr::value`'s and the
//! arithmetic `expr::arith`'s, both below the registry.

use std::cmp::Ordering;

use crate::decimal::Decimal;
use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::arith::arith;
use crate::sql::expr::tree::BinOp;
use crate::sql::expr::value::{
    as_f64, bytes_of, check_result_size, exact, finite, num, num_cmp, num_i64, overflow, sql_cmp,
    sub_range, text, text_of, truncate_float, truth, vector_arg, vector_fn, vector_ref, want,
    wrong_count,
};
use crate::types::Value;

/// The distance functions of two vectors (`expr::VECTOR_DISTANCE_FNS`).
pub(super) fn vector_distance(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    let (Some(a), Some(b)) = (vector_ref(&args[0], name)?, vector_ref(&args[1], name)?) else {
        return Ok(Value::Null);
    };
    Ok(Value::Float(vector_fn(name, &a, &b)?))
}

pub(super) fn l2_norm(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(match vector_arg(&args[0], name)? {
        None => Value::Null,
        Some(a) => Value::Float(a.iter().map(|x| x * x).sum::<f64>().sqrt()),
    })
}

pub(super) fn l1_norm(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(match vector_arg(&args[0], name)? {
        None => Value::Null,
        Some(a) if name == "l1_norm" => Value::Float(a.iter().map(|x| x.abs()).sum()),
        Some(a) => Value::Float(a.iter().sum()),
    })
}

pub(super) fn normalize_l2(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    let Some(a) = vector_arg(&args[0], name)? else {
        return Ok(Value::Null);
    };
    let n = a.iter().map(|x| x * x).sum::<f64>().sqrt();
    if n == 0.0 || !n.is_finite() {
        return Err(SqlError::new(
            code::INCORRECT_VALUE,
            "normalize_l2: a zero vector has no direction",
        ));
    }
    Ok(Value::Vector(a.iter().map(|x| x / n).collect()))
}

pub(super) fn subvector(name: &str, args: &[Value]) -> SqlResult<Value> {
    // MatrixOne: 1-based `pos`, negative from the end; `len`
    // optional (to the end); `len` < 1 or a position outside the
    // vector gives the empty vector.
    if !(2..=3).contains(&args.len()) {
        return Err(wrong_count(name));
    }
    let Some(a) = vector_arg(&args[0], name)? else {
        return Ok(Value::Null);
    };
    Ok(match sub_range(&args[1..], a.len()) {
        None => Value::Null,
        Some(r) => Value::Vector(a[r].to_vec()),
    })
}

pub(super) fn vector_dims(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(match vector_arg(&args[0], name)? {
        None => Value::Null,
        Some(a) => Value::Int(a.len() as i64),
    })
}

pub(super) fn abs(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(match num(&args[0]) {
        // ABS of the smallest BIGINT is past BIGINT: 1690, as
        // MySQL and MariaDB answer.
        Some(Value::Int(i)) => Value::Int(
            i.checked_abs()
                .ok_or_else(|| overflow(&format!("abs({i})")))?,
        ),
        Some(Value::Float(f)) => Value::Float(f.abs()),
        Some(Value::Decimal(d)) => Value::Decimal(d.abs()),
        _ => Value::Null,
    })
}

pub(super) fn floor(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(match num(&args[0]) {
        Some(Value::Int(i)) => Value::Int(i),
        Some(Value::Decimal(d)) => {
            let r = if name == "floor" { d.floor() } else { d.ceil() };
            match r.to_i64_exact() {
                Some(i) => Value::Int(i),
                None => Value::Decimal(r),
            }
        }
        // Of a DOUBLE (or a string) a DOUBLE, as MySQL.
        Some(Value::Float(f)) => Value::Float(if name == "floor" { f.floor() } else { f.ceil() }),
        _ => Value::Null,
    })
}

pub(super) fn round(name: &str, args: &[Value]) -> SqlResult<Value> {
    let arg0 = || args.first().cloned().unwrap_or(Value::Null);
    let x = arg0();
    if x.is_null() {
        return Ok(Value::Null);
    }
    if let Some(Value::Decimal(dec)) = num(&x).filter(|_| !matches!(x, Value::Text(_))) {
        let Some(d) = args.get(1).map_or(Some(0), num_i64) else {
            return Ok(Value::Null);
        };
        return Ok(Value::Decimal(dec.round_to(d, false)));
    }
    if args.get(1).is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    let d = args.get(1).and_then(as_f64).unwrap_or(0.0) as i32;
    let f = as_f64(&x).unwrap_or(0.0);
    let m = 10f64.powi(d);
    let exact = matches!(num(&x), Some(Value::Int(_)));
    let r = match name {
        // An exact value rounds half away from zero; a DOUBLE half
        // to even (MySQL's rint()): ROUND(2.5e0) is 2, ROUND(25, -1) 30.
        "round" if exact => (f * m).round() / m,
        "round" => (f * m).round_ties_even() / m,
        "floor" => (f * m).floor() / m,
        _ => (f * m).ceil() / m,
    };
    // Of a DOUBLE (or a string) the answer is a DOUBLE whatever the
    // digits (ROUND(-0.4e0) keeps its sign: ATAN2 of it is -π).
    Ok(if d <= 0 && exact {
        Value::Int(r as i64)
    } else {
        Value::Float(r)
    })
}

pub(super) fn sqrt(_name: &str, args: &[Value]) -> SqlResult<Value> {
    Ok(match args.first().and_then(as_f64) {
        Some(f) if f >= 0.0 => Value::Float(f.sqrt()),
        _ => Value::Null,
    })
}

pub(super) fn lower(_name: &str, args: &[Value]) -> SqlResult<Value> {
    let arg0 = || args.first().cloned().unwrap_or(Value::Null);
    Ok(match arg0() {
        Value::Null => Value::Null,
        // A binary string has no letter case: unchanged (MySQL).
        v @ Value::Bytes(_) => v,
        v => Value::Text(text(&v).to_lowercase()),
    })
}

pub(super) fn upper(_name: &str, args: &[Value]) -> SqlResult<Value> {
    let arg0 = || args.first().cloned().unwrap_or(Value::Null);
    Ok(match arg0() {
        Value::Null => Value::Null,
        v @ Value::Bytes(_) => v,
        v => Value::Text(text(&v).to_uppercase()),
    })
}

pub(super) fn length(_name: &str, args: &[Value]) -> SqlResult<Value> {
    let arg0 = || args.first().cloned().unwrap_or(Value::Null);
    Ok(match arg0() {
        Value::Null => Value::Null,
        v => Value::Int(bytes_of(&v).len() as i64),
    })
}

pub(super) fn char_length(_name: &str, args: &[Value]) -> SqlResult<Value> {
    let arg0 = || args.first().cloned().unwrap_or(Value::Null);
    Ok(match arg0() {
        Value::Null => Value::Null,
        // A binary string's characters are its bytes.
        Value::Bytes(b) => Value::Int(b.len() as i64),
        v => Value::Int(text(&v).chars().count() as i64),
    })
}

pub(super) fn concat(_name: &str, args: &[Value]) -> SqlResult<Value> {
    // With a binary argument the result is a binary string (MySQL).
    if args.iter().any(|a| matches!(a, Value::Bytes(_))) {
        let mut b = Vec::new();
        for a in args {
            if a.is_null() {
                return Ok(Value::Null);
            }
            b.extend_from_slice(&bytes_of(a));
        }
        return Ok(Value::Bytes(b));
    }
    let mut s = String::new();
    for a in args {
        if a.is_null() {
            return Ok(Value::Null);
        }
        s.push_str(&text(a));
    }
    Ok(Value::Text(s))
}

pub(super) fn concat_ws(name: &str, args: &[Value]) -> SqlResult<Value> {
    if args.len() < 2 {
        return Err(wrong_count(name));
    }
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    if args.iter().any(|a| matches!(a, Value::Bytes(_))) {
        let sep = bytes_of(&args[0]);
        let mut b = Vec::new();
        for (i, a) in args[1..].iter().filter(|a| !a.is_null()).enumerate() {
            if i > 0 {
                b.extend_from_slice(&sep);
            }
            b.extend_from_slice(&bytes_of(a));
        }
        return Ok(Value::Bytes(b));
    }
    let sep = text_of(&args[0]);
    let mut s = String::new();
    let mut first = true;
    for a in args[1..].iter().filter(|a| !a.is_null()) {
        if !first {
            s.push_str(&sep);
        }
        first = false;
        s.push_str(&text_of(a));
    }
    Ok(Value::Text(s))
}

pub(super) fn substring(name: &str, args: &[Value]) -> SqlResult<Value> {
    if !(2..=3).contains(&args.len()) {
        return Err(wrong_count(name));
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    if let Value::Bytes(b) = &args[0] {
        return Ok(match sub_range(&args[1..], b.len()) {
            None => Value::Null,
            Some(r) => Value::Bytes(b[r].to_vec()),
        });
    }
    let s = text_of(&args[0]);
    Ok(match sub_range(&args[1..], s.chars().count()) {
        None => Value::Null,
        Some(r) => Value::Text(s.chars().skip(r.start).take(r.len()).collect()),
    })
}

pub(super) fn left(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    let Some(len) = num_i64(&args[1]) else {
        return Ok(Value::Null);
    };
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    if let Value::Bytes(b) = &args[0] {
        let k = (len.clamp(0, b.len() as i64)) as usize;
        return Ok(Value::Bytes(if name == "left" {
            b[..k].to_vec()
        } else {
            b[b.len() - k..].to_vec()
        }));
    }
    let s = text_of(&args[0]);
    let n = s.chars().count() as i64;
    let k = len.clamp(0, n) as usize;
    Ok(Value::Text(if name == "left" {
        s.chars().take(k).collect()
    } else {
        s.chars().skip(n as usize - k).collect()
    }))
}

pub(super) fn lpad(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 3, name)?;
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let Some(len) = num_i64(&args[1]) else {
        return Ok(Value::Null);
    };
    if len < 0 {
        return Ok(Value::Null);
    }
    if matches!(args[0], Value::Bytes(_)) || matches!(args[2], Value::Bytes(_)) {
        let (s, pad) = (bytes_of(&args[0]), bytes_of(&args[2]));
        let len = len as usize;
        if len <= s.len() {
            return Ok(Value::Bytes(s[..len].to_vec()));
        }
        if pad.is_empty() {
            return Ok(Value::Null);
        }
        check_result_size(name, len as u128)?;
        let padding: Vec<u8> = pad.iter().copied().cycle().take(len - s.len()).collect();
        return Ok(Value::Bytes(if name == "lpad" {
            [padding.as_slice(), &s].concat()
        } else {
            [&s[..], padding.as_slice()].concat()
        }));
    }
    let (s, pad) = (text_of(&args[0]), text_of(&args[2]));
    let n = s.chars().count() as i64;
    if len <= n {
        return Ok(Value::Text(s.chars().take(len as usize).collect()));
    }
    if pad.is_empty() {
        return Ok(Value::Null);
    }
    let fill = (len - n) as usize;
    // Bytes of the result, bounded before anything is allocated.
    let pad_chars = pad.chars().count();
    let tail: usize = pad.chars().take(fill % pad_chars).map(char::len_utf8).sum();
    check_result_size(
        name,
        (fill / pad_chars) as u128 * pad.len() as u128 + (tail + s.len()) as u128,
    )?;
    let mut padding = pad.repeat(fill / pad_chars);
    padding.extend(pad.chars().take(fill % pad_chars));
    Ok(Value::Text(if name == "lpad" {
        padding + &s
    } else {
        s.into_owned() + &padding
    }))
}

pub(super) fn ltrim(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    if args[0].is_null() {
        return Ok(Value::Null);
    }
    if let Value::Bytes(b) = &args[0] {
        let start = if name == "rtrim" {
            0
        } else {
            b.iter().position(|&c| c != b' ').unwrap_or(b.len())
        };
        let end = if name == "ltrim" {
            b.len()
        } else {
            b.iter().rposition(|&c| c != b' ').map_or(start, |p| p + 1)
        };
        return Ok(Value::Bytes(b[start..end.max(start)].to_vec()));
    }
    let s = text_of(&args[0]);
    Ok(Value::Text(
        match name {
            "ltrim" => s.trim_start_matches(' '),
            "rtrim" => s.trim_end_matches(' '),
            _ => s.trim_matches(' '),
        }
        .to_string(),
    ))
}

pub(super) fn trim_both(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    if args.iter().any(|a| matches!(a, Value::Bytes(_))) {
        let (s, what) = (bytes_of(&args[0]), bytes_of(&args[1]));
        let mut t: &[u8] = &s;
        if !what.is_empty() {
            if name != "trim trailing" {
                while let Some(r) = t.strip_prefix(&*what) {
                    t = r;
                }
            }
            if name != "trim leading" {
                while let Some(r) = t.strip_suffix(&*what) {
                    t = r;
                }
            }
        }
        return Ok(Value::Bytes(t.to_vec()));
    }
    let (s, what) = (text_of(&args[0]), text_of(&args[1]));
    let mut t: &str = &s;
    if !what.is_empty() {
        if name != "trim trailing" {
            while let Some(r) = t.strip_prefix(&*what) {
                t = r;
            }
        }
        if name != "trim leading" {
            while let Some(r) = t.strip_suffix(&*what) {
                t = r;
            }
        }
    }
    Ok(Value::Text(t.to_string()))
}

pub(super) fn replace(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 3, name)?;
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    if args.iter().any(|a| matches!(a, Value::Bytes(_))) {
        let (s, from, to) = (bytes_of(&args[0]), bytes_of(&args[1]), bytes_of(&args[2]));
        if from.is_empty() {
            return Ok(Value::Bytes(s.into_owned()));
        }
        let mut out = Vec::with_capacity(s.len());
        let mut i = 0;
        while i < s.len() {
            if s[i..].starts_with(&from) {
                out.extend_from_slice(&to);
                i += from.len();
            } else {
                out.push(s[i]);
                i += 1;
            }
            check_result_size(name, out.len() as u128)?;
        }
        return Ok(Value::Bytes(out));
    }
    let (s, from, to) = (text_of(&args[0]), text_of(&args[1]), text_of(&args[2]));
    if from.is_empty() {
        return Ok(Value::Text(s.into_owned()));
    }
    let hits = s.matches(&*from).count() as u128;
    check_result_size(
        name,
        s.len() as u128 + hits * (to.len() as u128).saturating_sub(from.len() as u128),
    )?;
    Ok(Value::Text(s.replace(&*from, &to)))
}

pub(super) fn instr(name: &str, args: &[Value]) -> SqlResult<Value> {
    let (hay, needle, from) = if name == "instr" {
        want(args, 2, name)?;
        (&args[0], &args[1], None)
    } else {
        if !(2..=3).contains(&args.len()) {
            return Err(wrong_count(name));
        }
        (&args[1], &args[0], args.get(2))
    };
    if hay.is_null() || needle.is_null() || from.is_some_and(Value::is_null) {
        return Ok(Value::Null);
    }
    let start = match from {
        None => 1,
        Some(p) => match num_i64(p) {
            Some(p) => p,
            None => return Ok(Value::Null),
        },
    };
    // A binary operand: positions count bytes.
    if matches!(hay, Value::Bytes(_)) || matches!(needle, Value::Bytes(_)) {
        let (h, nd) = (bytes_of(hay), bytes_of(needle));
        if start < 1 || start - 1 > h.len() as i64 {
            return Ok(Value::Int(0));
        }
        if nd.is_empty() {
            return Ok(Value::Int(start));
        }
        let begin = (start - 1) as usize;
        return Ok(Value::Int(
            h[begin..]
                .windows(nd.len())
                .position(|w| w == &nd[..])
                .map_or(0, |p| (begin + p) as i64 + 1),
        ));
    }
    let (h, nd) = (text_of(hay), text_of(needle));
    let chars = h.chars().count() as i64;
    if start < 1 || start - 1 > chars {
        return Ok(Value::Int(0));
    }
    if nd.is_empty() {
        return Ok(Value::Int(start));
    }
    // A linear-time substring search (byte-wise equality is code
    // point equality, `utf8mb4_bin`), then back to characters.
    let begin = (start - 1) as usize;
    let at = h.char_indices().nth(begin).map_or(h.len(), |(i, _)| i);
    Ok(Value::Int(match h[at..].find(&*nd) {
        Some(b) => (begin + h[at..at + b].chars().count()) as i64 + 1,
        None => 0,
    }))
}

pub(super) fn reverse(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(match &args[0] {
        Value::Null => Value::Null,
        Value::Bytes(b) => Value::Bytes(b.iter().rev().copied().collect()),
        v => Value::Text(text_of(v).chars().rev().collect()),
    })
}

pub(super) fn repeat(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let Some(count) = num_i64(&args[1]) else {
        return Ok(Value::Null);
    };
    if let Value::Bytes(b) = &args[0] {
        if count < 1 || b.is_empty() {
            return Ok(Value::Bytes(Vec::new()));
        }
        check_result_size(name, b.len() as u128 * count as u128)?;
        return Ok(Value::Bytes(b.repeat(count as usize)));
    }
    let s = text_of(&args[0]);
    if count < 1 || s.is_empty() {
        return Ok(Value::Text(String::new()));
    }
    check_result_size(name, s.len() as u128 * count as u128)?;
    Ok(Value::Text(s.repeat(count as usize)))
}

pub(super) fn space(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    let Some(count) = num_i64(&args[0]) else {
        return Ok(Value::Null);
    };
    if count < 1 {
        return Ok(Value::Text(String::new()));
    }
    check_result_size(name, count as u128)?;
    Ok(Value::Text(" ".repeat(count as usize)))
}

pub(super) fn mod_(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    arith(BinOp::Mod, &args[0], &args[1])
}

pub(super) fn pow_(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    let (Some(x), Some(y)) = (as_f64(&args[0]), as_f64(&args[1])) else {
        return Ok(Value::Null);
    };
    let r = if name == "atan2" {
        x.atan2(y)
    } else {
        x.powf(y)
    };
    finite(name, r)
}

pub(super) fn exp(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    let Some(x) = as_f64(&args[0]) else {
        return Ok(Value::Null);
    };
    let r = match name {
        "exp" => x.exp(),
        "sin" => x.sin(),
        "cos" => x.cos(),
        "tan" => x.tan(),
        "cot" => 1.0 / x.tan(),
        "degrees" => x.to_degrees(),
        "radians" => x.to_radians(),
        "asin" | "acos" if !(-1.0..=1.0).contains(&x) => return Ok(Value::Null),
        "asin" => x.asin(),
        "acos" => x.acos(),
        _ if x <= 0.0 => return Ok(Value::Null),
        "ln" => x.ln(),
        "log2" => x.log2(),
        _ => x.log10(),
    };
    finite(name, r)
}

pub(super) fn log(name: &str, args: &[Value]) -> SqlResult<Value> {
    let vals = match args {
        [x] => as_f64(x).map(|x| (std::f64::consts::E, x)),
        [b, x] => as_f64(b).zip(as_f64(x)),
        _ => return Err(wrong_count(name)),
    };
    // MySQL: NULL when X <= 0 or (two arguments) B <= 0 or B = 1.
    Ok(match vals {
        Some((_, x)) if x > 0.0 && args.len() == 1 => Value::Float(x.ln()),
        Some((b, x)) if x > 0.0 && b > 0.0 && b != 1.0 => Value::Float(x.ln() / b.ln()),
        _ => Value::Null,
    })
}

pub(super) fn atan(name: &str, args: &[Value]) -> SqlResult<Value> {
    let r = match args {
        [x] => as_f64(x).map(f64::atan),
        [y, x] => as_f64(y).zip(as_f64(x)).map(|(y, x)| y.atan2(x)),
        _ => return Err(wrong_count(name)),
    };
    Ok(r.map(Value::Float).unwrap_or(Value::Null))
}

pub(super) fn pi(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 0, name)?;
    Ok(Value::Float(std::f64::consts::PI))
}

pub(super) fn sign(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(match num(&args[0]) {
        Some(Value::Int(i)) => Value::Int(i.signum()),
        Some(Value::Decimal(d)) => Value::Int(d.signum()),
        Some(Value::Float(f)) => Value::Int(if f > 0.0 {
            1
        } else if f < 0.0 {
            -1
        } else {
            0
        }),
        _ => Value::Null,
    })
}

pub(super) fn truncate(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    let (Some(x), Some(d)) = (num(&args[0]), num_i64(&args[1])) else {
        return Ok(Value::Null);
    };
    Ok(match x {
        Value::Int(i) if d >= 0 => Value::Int(i),
        Value::Int(i) => {
            let m = 10i64.checked_pow(d.unsigned_abs().min(u32::MAX as u64) as u32);
            Value::Int(m.map_or(0, |m| i / m * m))
        }
        Value::Float(f) => Value::Float(truncate_float(f, d)),
        Value::Decimal(x) => Value::Decimal(x.round_to(d, true)),
        _ => Value::Null,
    })
}

pub(super) fn greatest(name: &str, args: &[Value]) -> SqlResult<Value> {
    if args.len() < 2 {
        return Err(wrong_count(name));
    }
    if args.iter().any(Value::is_null) {
        return Ok(Value::Null);
    }
    let numeric = args.iter().all(|a| {
        matches!(
            a,
            Value::Int(_) | Value::Float(_) | Value::Decimal(_) | Value::Bool(_)
        )
    });
    let want_greater = name == "greatest";
    if numeric {
        let all_int = args
            .iter()
            .all(|a| matches!(a, Value::Int(_) | Value::Bool(_)));
        let any_float = args.iter().any(|a| matches!(a, Value::Float(_)));
        let mut best = num(&args[0]).unwrap_or(Value::Null);
        for a in &args[1..] {
            let v = num(a).unwrap_or(Value::Null);
            let o = num_cmp(&v, &best);
            if (want_greater && o == Ordering::Greater) || (!want_greater && o == Ordering::Less) {
                best = v;
            }
        }
        // The arguments' common type: DOUBLE if one is, else
        // DECIMAL at the widest scale, else INT.
        return Ok(match best {
            _ if all_int => best,
            Value::Int(i) if any_float => Value::Float(i as f64),
            Value::Decimal(d) if any_float => Value::Float(d.to_f64()),
            Value::Int(_) | Value::Decimal(_) => {
                let scale = args
                    .iter()
                    .filter_map(|a| match a {
                        Value::Decimal(d) => Some(d.scale()),
                        _ => None,
                    })
                    .max()
                    .unwrap_or(0);
                exact(&best).map_or(best, |d| Value::Decimal(d.rescale(scale)))
            }
            other => other,
        });
    }
    // As strings, by code point (`utf8mb4_bin`, as `<` compares);
    // of equal strings the first is kept.
    let mut best = text_of(&args[0]);
    for a in &args[1..] {
        let v = text_of(a);
        let o = v.as_ref().cmp(best.as_ref());
        if (want_greater && o == Ordering::Greater) || (!want_greater && o == Ordering::Less) {
            best = v;
        }
    }
    Ok(Value::Text(best.into_owned()))
}

pub(super) fn nullif(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    // Equal exactly when `a = b` is true.
    let equal = sql_cmp(&args[0], &args[1]) == Some(Ordering::Equal);
    Ok(if equal { Value::Null } else { args[0].clone() })
}

pub(super) fn fixed_text(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    let d = num_i64(&args[1]).unwrap_or(0).clamp(0, 30) as u8;
    Ok(match crate::types::format_fixed_float(&args[0], d) {
        Some(t) => Value::Text(t),
        None => args[0].clone(),
    })
}

pub(super) fn show_scale(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    let s = num_i64(&args[1]).unwrap_or(0).clamp(0, 30) as u8;
    Ok(match &args[0] {
        Value::Decimal(d) if d.scale() < s => Value::Decimal(if d.held_scale() >= s {
            d.clone().with_shown(s)
        } else {
            d.rescale(s)
        }),
        Value::Int(i) => Value::Decimal(Decimal::from_i64(*i).rescale(s)),
        other => other.clone(),
    })
}

pub(super) fn is_true(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(Value::Bool(truth(&args[0]) == Some(true)))
}

/// `x LIKE p` over bytes (`x LIKE BINARY p`): NULL if either is NULL.
/// [`crate::sql::expr::tree::HEX_OPERAND`]: the hexadecimal literal's
/// number (third argument) when the compared value (first) is a number,
/// else its bytes (second).
pub(super) fn hex_operand(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 3, name)?;
    Ok(match &args[0] {
        Value::Int(_) | Value::Float(_) | Value::Decimal(_) | Value::Bool(_) => args[2].clone(),
        _ => args[1].clone(),
    })
}

pub(super) fn like_binary(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 2, name)?;
    if args[0].is_null() || args[1].is_null() {
        return Ok(Value::Null);
    }
    let (s, p) = (text_of(&args[0]), text_of(&args[1]));
    Ok(Value::Bool(crate::collation::wildcard(
        s.as_bytes(),
        p.as_bytes(),
        |a, b| a == b,
    )))
}

pub(super) fn is_false(name: &str, args: &[Value]) -> SqlResult<Value> {
    want(args, 1, name)?;
    Ok(Value::Bool(truth(&args[0]) == Some(false)))
}

pub(super) fn now(name: &str, args: &[Value]) -> SqlResult<Value> {
    // NOW(fsp): the clock cut to fsp fractional digits (0..=6).
    let fsp = match args.first() {
        None => 0,
        Some(Value::Int(n)) if (0..=i64::from(crate::types::MAX_DATETIME_FSP)).contains(n) => {
            *n as u32
        }
        Some(Value::Int(n)) if *n > 0 => {
            return Err(SqlError::new(
                1426,
                format!("Too-big precision {n} specified for '{name}'. Maximum is 6."),
            ))
        }
        Some(other) => {
            return Err(SqlError::parse(format!(
                "{name}() takes a precision 0..6, not {other}"
            )))
        }
    };
    let us = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_micros() as i64)
        .unwrap_or(0);
    let unit = 10i64.pow(6 - fsp);
    Ok(Value::DateTime(us - us % unit))
}

pub(super) fn version(_name: &str, _args: &[Value]) -> SqlResult<Value> {
    Ok(Value::Text(crate::sql::vars::server_version()))
}
