//! The value helpers every evaluator shares (the compiler's evaluation,
//! the registry's function bodies, the date/time and regular-expression
//! functions): MySQL's coercion of a value to a number, an integer or
//! text, and the argument-count and result-size errors.
//!
//! A leaf: names nothing of the SQL layer, so that the functions below the
//! compiler can use these without naming it.

use std::borrow::Cow;

use crate::error::{code, SqlError, SqlResult};
use crate::types::Value;

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
