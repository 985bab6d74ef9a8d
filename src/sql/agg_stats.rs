//! The statistical and bitwise aggregates MySQL 8 has beside COUNT / SUM /
//! AVG / MIN / MAX: STD / STDDEV / STDDEV_POP, STDDEV_SAMP, VARIANCE /
//! VAR_POP, VAR_SAMP (DOUBLE) and BIT_AND / BIT_OR / BIT_XOR (BIGINT
//! UNSIGNED), grouped or `OVER` a window frame.
//!
//! Owns: their names, running state ([`State`], one per group or frame),
//! fold ([`update`]) and result ([`finish`]). The GROUP BY fold
//! (`select::agg_update` / `agg_final`) and the window operator call in
//! here for an [`AggFunc::Stat`].
//!
//! Never: evaluates expressions, plans, or inverts a fold (a sliding
//! window frame is folded afresh: exact, never approximated by
//! subtraction).

use crate::sql::expr::AggFunc;
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
}

impl StatFunc {
    /// Whether the result is BIGINT UNSIGNED (else DOUBLE).
    pub fn is_bitwise(self) -> bool {
        matches!(self, StatFunc::BitAnd | StatFunc::BitOr | StatFunc::BitXor)
    }
}

/// The aggregate named `name` (lower case), if it is one of these.
pub fn by_name(name: &str) -> Option<AggFunc> {
    Some(AggFunc::Stat(match name {
        "std" | "stddev" | "stddev_pop" => StatFunc::StdPop,
        "stddev_samp" => StatFunc::StdSamp,
        "variance" | "var_pop" => StatFunc::VarPop,
        "var_samp" => StatFunc::VarSamp,
        "bit_and" => StatFunc::BitAnd,
        "bit_or" => StatFunc::BitOr,
        "bit_xor" => StatFunc::BitXor,
        _ => return None,
    }))
}

/// The running state: Welford's recurrence for the variance (MySQL's
/// `variance_fp_recurrence_next`: mean and sum of squared deviations, in
/// DOUBLE) and the bits so far.
#[derive(Debug, Clone, Default)]
pub struct State {
    count: u64,
    mean: f64,
    m2: f64,
    /// BIT_AND's bits are kept inverted, so the default (0) is its
    /// identity (all ones) as it is BIT_OR's and BIT_XOR's.
    bits: u64,
}

/// Fold one non-NULL value `v` into `st`.
pub fn update(st: &mut State, f: StatFunc, v: &Value) {
    st.count += 1;
    if f.is_bitwise() {
        let b = as_u64(v);
        match f {
            StatFunc::BitAnd => st.bits |= !b,
            StatFunc::BitOr => st.bits |= b,
            _ => st.bits ^= b,
        }
        return;
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
}

/// The aggregate's value over what `st` folded: NULL over no row (and a
/// sample statistic over one); BIT_AND of no row is all ones, BIT_OR /
/// BIT_XOR 0 (MySQL).
pub fn finish(st: &State, f: StatFunc) -> Value {
    let n = st.count as f64;
    let var = |d: f64| Value::Float(st.m2 / d);
    match f {
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
        Value::Text(s) => crate::sql::expr::text_to_double(s),
        Value::DateTime(us) => *us as f64,
        Value::Null | Value::Vector(_) => 0.0,
    }
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
            update(&mut st, f, &Value::Int(x));
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
