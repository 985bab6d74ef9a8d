//! The aggregates MySQL 8 has beside COUNT / SUM / AVG / MIN / MAX: STD /
//! STDDEV / STDDEV_POP, STDDEV_SAMP, VARIANCE / VAR_POP, VAR_SAMP
//! (DOUBLE), BIT_AND / BIT_OR / BIT_XOR (BIGINT UNSIGNED) and
//! JSON_ARRAYAGG / JSON_OBJECTAGG (JSON), grouped or `OVER` a window
//! frame.
//!
//! Owns: their names, running state ([`State`], one per group or frame),
//! fold ([`update`]) and result ([`finish`]). The GROUP BY fold
//! (`exec::agg::agg_update` / `agg_final`) and the window operator call in
//! here for an [`crate::sql::expr::AggFunc::Stat`].
//!
//! Never: evaluates expressions, plans, or inverts a fold (a sliding
//! window frame is folded afresh: exact, never approximated by
//! subtraction); holds a JSON aggregate's values uncharged (they are
//! charged to the statement as they come).

use crate::error::{code, SqlError, SqlResult};
use crate::json::{self, JsonArg};
use crate::sql::budget::{self, Reservation};
use crate::types::Value;

/// One of the aggregates this module computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatFunc {
    /// STD, STDDEV, STDDEV_POP: the population standard deviation.
    StdPop,
    StdSamp,
    /// VARIANCE, VAR_POP: the population variance.
    VarPop,
    VarSamp,
    BitAnd,
    BitOr,
    BitXor,
    /// JSON_ARRAYAGG(x); `json`: x is JSON-typed (nests as JSON).
    JsonArray {
        json: bool,
    },
    /// JSON_OBJECTAGG(k, v), its argument compiled as `JSON_ARRAY(k, v)`
    /// (one value per row).
    JsonObject,
}

impl StatFunc {
    /// Whether the result is BIGINT UNSIGNED (else DOUBLE).
    pub fn is_bitwise(self) -> bool {
        matches!(self, StatFunc::BitAnd | StatFunc::BitOr | StatFunc::BitXor)
    }

    /// Whether the result is JSON (JSON_ARRAYAGG / JSON_OBJECTAGG).
    pub fn is_json(self) -> bool {
        matches!(self, StatFunc::JsonArray { .. } | StatFunc::JsonObject)
    }
}

/// The internal function `json aggregate` (expr's `JSON_AGG`): its
/// argument, a JSON aggregate's text, as is.
pub fn json_aggregate(name: &str, args: &[Value]) -> SqlResult<Value> {
    match args {
        [v] => Ok(v.clone()),
        _ => Err(SqlError::new(
            code::WRONG_PARAMCOUNT,
            format!("Incorrect parameter count in the call to native function '{name}'"),
        )),
    }
}

/// The running state: Welford's recurrence for the variance (MySQL's
/// `variance_fp_recurrence_next`: mean and sum of squared deviations, in
/// DOUBLE) and the bits so far.
#[derive(Debug, Default)]
pub struct State {
    count: u64,
    mean: f64,
    m2: f64,
    /// BIT_AND's bits are kept inverted, so the default (0) is its
    /// identity (all ones) as it is BIT_OR's and BIT_XOR's.
    bits: u64,
    /// A JSON aggregate's values (JSON_OBJECTAGG: key, value, …), each
    /// already checked to nest in the result, and their charge.
    items: Vec<JsonArg>,
    /// JSON_OBJECTAGG's members: key, value's JSON text.
    members: Vec<(String, String)>,
    mem: Option<Reservation>,
}

impl Clone for State {
    /// A copy holds the same values uncharged (states are copied fresh,
    /// before any value is folded).
    fn clone(&self) -> Self {
        State {
            count: self.count,
            mean: self.mean,
            m2: self.m2,
            bits: self.bits,
            items: self.items.clone(),
            members: self.members.clone(),
            mem: None,
        }
    }
}

/// Whether `f` folds NULL values too (JSON_ARRAYAGG keeps them as null).
pub fn keeps_nulls(f: StatFunc) -> bool {
    f.is_json()
}

/// Fold one value `v` into `st` (not NULL unless [`keeps_nulls`]). A JSON
/// aggregate refuses here what its result could not hold: a NULL key
/// (3158), a value nested too deep (3157), invalid JSON text.
pub fn update(st: &mut State, f: StatFunc, v: &Value) -> SqlResult<()> {
    match f {
        StatFunc::JsonArray { json } => {
            let arg = JsonArg {
                value: v.clone(),
                json,
            };
            // One level deeper, as in the result: refused now if too deep.
            json::call("json_array", std::slice::from_ref(&arg))?;
            let size = budget::row_size(std::slice::from_ref(v));
            st.mem.get_or_insert_with(Reservation::new).add(size)?;
            st.items.push(arg);
            st.count += 1;
            return Ok(());
        }
        StatFunc::JsonObject => {
            // `v` is the row's `JSON_ARRAY(k, v)` in canonical form:
            // `[<k>, <v>]`, the value's text exactly as JSON prints it.
            let Value::Text(pair) = v else {
                return Err(crate::error::SqlError::internal(
                    "JSON_OBJECTAGG's pair is JSON text",
                ));
            };
            let key = json::call(
                "json_extract",
                &[
                    JsonArg {
                        value: v.clone(),
                        json: true,
                    },
                    JsonArg {
                        value: Value::Text("$[0]".into()),
                        json: false,
                    },
                ],
            )?;
            let Value::Text(key_text) = &key else {
                return Err(crate::error::SqlError::internal("a JSON key is text"));
            };
            let value_text = pair
                .get(1 + key_text.len() + 2..pair.len().saturating_sub(1))
                .unwrap_or_default()
                .to_string();
            debug_assert!(pair.starts_with(&format!("[{key_text}, ")));
            let key = if key_text == "null" {
                Value::Null
            } else {
                json::call(
                    "json_unquote",
                    &[JsonArg {
                        value: key,
                        json: true,
                    }],
                )?
            };
            // A NULL key is refused as JSON_OBJECT refuses it (3158).
            let Value::Text(key) = key else {
                return Err(crate::error::SqlError::new(
                    3158,
                    "JSON documents may not contain NULL member names.",
                ));
            };
            let size = key.len() + value_text.len() + 64;
            st.mem.get_or_insert_with(Reservation::new).add(size)?;
            st.members.push((key, value_text));
            st.count += 1;
            return Ok(());
        }
        _ => {}
    }
    st.count += 1;
    if f.is_bitwise() {
        let b = as_u64(v);
        match f {
            StatFunc::BitAnd => st.bits |= !b,
            StatFunc::BitOr => st.bits |= b,
            _ => st.bits ^= b,
        }
        return Ok(());
    }
    let x = as_f64(v);
    if st.count == 1 {
        st.mean = x;
        st.m2 = 0.0;
    } else {
        let prev = st.mean;
        st.mean = prev + (x - prev) / st.count as f64;
        st.m2 += (x - prev) * (x - st.mean);
    }
    Ok(())
}

/// The aggregate's value over what `st` folded: NULL over no row (and a
/// sample statistic over one); BIT_AND of no row is all ones, BIT_OR /
/// BIT_XOR 0 (MySQL).
pub fn finish(st: &State, f: StatFunc) -> Value {
    let n = st.count as f64;
    let var = |d: f64| Value::Float(st.m2 / d);
    match f {
        _ if f.is_json() && st.count == 0 => Value::Null,
        StatFunc::JsonObject => object_text(&st.members),
        StatFunc::JsonArray { .. } => {
            // Each value was checked to nest when it was folded.
            match json::call("json_array", &st.items) {
                Ok(v) => v,
                Err(e) => {
                    debug_assert!(false, "a checked JSON aggregate failed: {e:?}");
                    Value::Null
                }
            }
        }
        StatFunc::BitAnd => unsigned(!st.bits),
        StatFunc::BitOr | StatFunc::BitXor => unsigned(st.bits),
        _ if st.count == 0 => Value::Null,
        StatFunc::VarPop => var(n),
        StatFunc::StdPop => Value::Float((st.m2 / n).sqrt()),
        _ if st.count == 1 => Value::Null,
        StatFunc::VarSamp => var(n - 1.0),
        StatFunc::StdSamp => Value::Float((st.m2 / (n - 1.0)).sqrt()),
    }
}

/// A JSON object of `members` (key, value's JSON text) in MySQL's
/// canonical form: the last duplicate key wins, members sorted by key
/// length then bytes, `", "` and `": "` separators.
fn object_text(members: &[(String, String)]) -> Value {
    let mut last: Vec<&(String, String)> = Vec::with_capacity(members.len());
    let mut order: Vec<usize> = (0..members.len()).collect();
    // Stable: among equal keys the later member comes last.
    order.sort_by(|&a, &b| {
        let (ka, kb) = (&members[a].0, &members[b].0);
        ka.len()
            .cmp(&kb.len())
            .then_with(|| ka.as_bytes().cmp(kb.as_bytes()))
    });
    for i in order {
        let m = &members[i];
        match last.last_mut() {
            Some(prev) if prev.0 == m.0 => *prev = m,
            _ => last.push(m),
        }
    }
    let mut out = String::from("{");
    for (n, (k, v)) in last.iter().enumerate() {
        if n > 0 {
            out.push_str(", ");
        }
        match json::call(
            "json_quote",
            &[JsonArg {
                value: Value::Text(k.clone()),
                json: false,
            }],
        ) {
            Ok(Value::Text(q)) => out.push_str(&q),
            other => {
                debug_assert!(false, "JSON_QUOTE of text failed: {other:?}");
                out.push_str("\"\"");
            }
        }
        out.push_str(": ");
        out.push_str(v);
    }
    out.push('}');
    Value::Text(out)
}

/// A BIGINT UNSIGNED value: an exact DECIMAL past i64::MAX (values are
/// signed 64-bit here).
fn unsigned(b: u64) -> Value {
    match i64::try_from(b) {
        Ok(i) => Value::Int(i),
        Err(_) => Value::Decimal(crate::decimal::Decimal::new(b.into(), 0)),
    }
}

/// A value as MySQL's `val_real` reads it.
fn as_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i) => *i as f64,
        Value::Float(f) => *f,
        Value::Decimal(d) => d.to_f64(),
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::Text(s) => text_to_double(s),
        Value::Bytes(b) => text_to_double(&String::from_utf8_lossy(b)),
        Value::DateTime(us) => *us as f64,
        Value::Null | Value::Vector(_) => 0.0,
    }
}

/// Text as a DOUBLE: its numeric prefix, with MySQL's warning when that is
/// not the whole text (as expressions convert it).
fn text_to_double(s: &str) -> f64 {
    let (f, whole) = crate::types::parse_number_prefix(s);
    if !whole {
        crate::warnings::note_later(
            code::TRUNCATED_WRONG_VALUE,
            format!("Truncated incorrect DOUBLE value: '{s}'"),
        );
    }
    f
}

/// A value as MySQL's `val_uint` reads it: a negative integer's two's
/// complement, a fraction rounded half away from zero.
fn as_u64(v: &Value) -> u64 {
    match v {
        Value::Int(i) => *i as u64,
        Value::Bool(b) => u64::from(*b),
        Value::Decimal(d) => round_u64(d.to_f64()),
        other => round_u64(as_f64(other)),
    }
}

fn round_u64(f: f64) -> u64 {
    let r = f.round();
    if r < 0.0 {
        (r.max(i64::MIN as f64) as i64) as u64
    } else {
        r as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fold(f: StatFunc, xs: &[i64]) -> Value {
        let mut st = State::default();
        for &x in xs {
            update(&mut st, f, &Value::Int(x)).unwrap();
        }
        finish(&st, f)
    }

    /// Against the definitions: variance = mean of squared deviations.
    #[test]
    fn variance_and_deviation_match_their_definitions() {
        let xs = [2, 4, 4, 4, 5, 5, 7, 9];
        assert_eq!(fold(StatFunc::VarPop, &xs), Value::Float(4.0));
        assert_eq!(fold(StatFunc::StdPop, &xs), Value::Float(2.0));
        assert_eq!(fold(StatFunc::VarSamp, &xs), Value::Float(32.0 / 7.0));
        assert_eq!(fold(StatFunc::VarPop, &[]), Value::Null);
        assert_eq!(fold(StatFunc::VarSamp, &[3]), Value::Null);
        assert_eq!(fold(StatFunc::VarPop, &[3]), Value::Float(0.0));
    }

    /// MySQL's canonical object: last duplicate wins, keys by length then
    /// bytes, values' text untouched.
    #[test]
    fn objects_are_canonical() {
        let m = |k: &str, v: &str| (k.to_string(), v.to_string());
        let got = object_text(&[m("bb", "1"), m("a", "2.50"), m("bb", "3"), m("c", "null")]);
        assert_eq!(
            got,
            Value::Text(r#"{"a": 2.50, "c": null, "bb": 3}"#.into())
        );
        assert_eq!(object_text(&[]), Value::Text("{}".into()));
    }

    #[test]
    fn bitwise_identities_and_unsigned_results() {
        assert_eq!(fold(StatFunc::BitAnd, &[]), unsigned(u64::MAX));
        assert_eq!(fold(StatFunc::BitOr, &[]), Value::Int(0));
        assert_eq!(fold(StatFunc::BitAnd, &[6, 3]), Value::Int(2));
        assert_eq!(fold(StatFunc::BitOr, &[6, 3]), Value::Int(7));
        assert_eq!(fold(StatFunc::BitXor, &[6, 3, 1]), Value::Int(4));
        assert_eq!(fold(StatFunc::BitOr, &[-1]), unsigned(u64::MAX));
        assert_eq!(
            format!("{:?}", fold(StatFunc::BitAnd, &[])),
            format!(
                "{:?}",
                Value::Decimal(crate::decimal::Decimal::new(u64::MAX.into(), 0))
            )
        );
    }
}
