//! The aggregate fold: the running state of one aggregate of one group
//! ([`AggState`]), folding a value into it ([`agg_update`]) and its final
//! value ([`agg_final`]). The GROUP BY fold of a query block, the parallel
//! scans' partial states and the window operator's frames all use it.
//!
//! Owns: the exact arithmetic of SUM / AVG (integers, DECIMAL at the
//! scale MySQL's temporary table keeps, DOUBLE once any value is one),
//! MIN / MAX under a collation, DISTINCT's seen values, and the scale a
//! grouped DECIMAL is stored at. Never reads rows, runs subqueries or
//! names the executor's blocks (`exec/mod.rs`, `exec/block.rs`): it sits
//! below the operators.

use std::cmp::Ordering;

use crate::decimal::Decimal;
use crate::error::SqlResult;
use crate::sql::exec::agg_args::Num;
use crate::sql::expr::{collate, AggCall, AggFunc};
use crate::sql::plan::block::kind_of_expr;
use crate::sql::plan::Plan;
use crate::types::{ColumnKind, Value};

/// The running state of one aggregate of one group.
#[derive(Default, Clone)]
pub(crate) struct AggState {
    pub count: i64,
    pub sum_i: i64,
    /// The exact part of SUM/AVG beyond `sum_i`: DECIMAL arguments, and
    /// integers once `sum_i` would overflow (the sum is sum_i + sum_d, or
    /// sum_i + `dec` while the DECIMAL sum is on its fast path; never both).
    pub sum_d: Option<Decimal>,
    /// The DECIMAL sum while every value so far was one of an `i64`
    /// mantissa added exactly ([`DecSum`]): no `Decimal` built per row.
    pub dec: Option<DecSum>,
    /// A DECIMAL value was rounded to `store_scale` on its way into the
    /// sum: partial sums of two key ranges no longer merge exactly.
    pub rounded: bool,
    pub sum_f: f64,
    pub float: bool,
    pub best: Option<Value>,
    /// DISTINCT's values so far.
    pub seen: Vec<Value>,
    /// Under GROUP BY, the scale a DECIMAL argument's running SUM/AVG sum
    /// and MIN/MAX are kept at: MySQL 8 groups (by a column no index
    /// orders) in a temporary table whose fields have the aggregate's
    /// declared type, so each step is rounded there (`2/d` summed at
    /// scale 4, not with its 9 held digits). Not when an aggregate of the
    /// block is DISTINCT: MySQL then groups by sorting, exactly (its
    /// `allow_group_via_temp_table`). A DISTINCT SUM/AVG itself keeps its
    /// values at that scale with or without GROUP BY (MySQL dedups them
    /// in a `Unique` tree of the argument's type). `None`: exact.
    pub store_scale: Option<u8>,
    /// STD / VARIANCE / BIT_* state ([`crate::sql::agg_stats`]).
    pub stat: crate::sql::agg_stats::State,
}

/// A running DECIMAL sum as an `i128` mantissa at a scale: the value
/// [`Decimal::add`] (and, under [`AggState::store_scale`], `rescale`) would
/// hold after the same steps, for values whose mantissa fits an `i64`
/// and which need no rounding. Overflow leaves it for the `Decimal` sum.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct DecSum {
    m: i128,
    /// The held scale (`Decimal::held_scale`).
    scale: u8,
    /// The shown scale (`Decimal::scale`).
    shown: u8,
}

impl DecSum {
    /// `prev` (none: the first value) plus `d`, kept at `store` digits
    /// when given; `None` when `d` or the sum is not for this path (a
    /// big mantissa, more digits than `store`, `i128` overflow).
    fn add(prev: Option<DecSum>, d: &Decimal, store: Option<u8>) -> Option<DecSum> {
        let (m, held) = d.small_parts()?;
        DecSum::add_parts(prev, i128::from(m), held, d.scale(), store)
    }

    /// [`DecSum::add`] of the decimal with mantissa `m` (within `i64`),
    /// held scale `held` and shown scale `d_shown`.
    fn add_parts(
        prev: Option<DecSum>,
        m: i128,
        held: u8,
        d_shown: u8,
        store: Option<u8>,
    ) -> Option<DecSum> {
        let (scale, shown) = match (store, prev) {
            (Some(s), _) if held > s => return None,
            // `rescale(s)` of the sum: held and shown `s`.
            (Some(s), _) => (s, s),
            (None, None) => (held, d_shown),
            (None, Some(p)) => (p.scale.max(held), p.shown.max(d_shown)),
        };
        let up = |m: i128, from: u8| m.checked_mul(10i128.checked_pow(u32::from(scale - from))?);
        let v = up(m, held)?;
        let m = match prev {
            Some(p) => up(p.m, p.scale)?.checked_add(v)?,
            None => v,
        };
        Some(DecSum { m, scale, shown })
    }

    /// Two partial sums of the same aggregate added (exact, as `add`).
    pub(crate) fn merge(a: DecSum, b: DecSum) -> Option<DecSum> {
        let scale = a.scale.max(b.scale);
        let up = |x: DecSum| {
            x.m.checked_mul(10i128.checked_pow(u32::from(scale - x.scale))?)
        };
        Some(DecSum {
            m: up(a)?.checked_add(up(b)?)?,
            scale,
            shown: a.shown.max(b.shown),
        })
    }

    /// The sum as a `Decimal`, digit for digit the one `Decimal::add` gives.
    pub(crate) fn decimal(self) -> Decimal {
        Decimal::from_i128(self.m, self.scale).with_shown(self.shown)
    }
}

impl AggState {
    /// The `Decimal` sum, taking over the fast path's (which ends).
    fn slow_sum(&mut self) -> &mut Option<Decimal> {
        if let Some(d) = self.dec.take() {
            debug_assert!(self.sum_d.is_none(), "a DECIMAL sum held twice");
            self.sum_d = Some(d.decimal());
        }
        &mut self.sum_d
    }

    /// The DECIMAL part of the sum, on either path.
    pub(crate) fn decimal_sum(&self) -> Option<Decimal> {
        match (&self.sum_d, self.dec) {
            (Some(d), _) => Some(d.clone()),
            (None, Some(d)) => Some(d.decimal()),
            (None, None) => None,
        }
    }

    /// The state of a new group of a grouped block.
    pub(crate) fn for_group(plan: &Plan, call: &AggCall) -> AggState {
        let store_scale = match (&call.arg, call.func) {
            (Some(a), AggFunc::Sum | AggFunc::Avg | AggFunc::Min | AggFunc::Max)
                if call.distinct
                    || (!plan.group_by.is_empty() && !plan.aggs.iter().any(|c| c.distinct)) =>
            {
                match kind_of_expr(a, &plan.source, &plan.aggs) {
                    ColumnKind::Decimal { scale, .. } => Some(scale),
                    _ => None,
                }
            }
            _ => None,
        };
        AggState {
            store_scale,
            ..AggState::default()
        }
    }
}

pub(crate) fn agg_update(st: &mut AggState, call: &AggCall, v: Option<Value>) -> SqlResult<()> {
    match call.func {
        AggFunc::CountStar => st.count += 1,
        AggFunc::Stat(f) if crate::sql::agg_stats::keeps_nulls(f) => {
            let v = v.unwrap_or(Value::Null);
            crate::sql::agg_stats::update(&mut st.stat, f, &v)?;
        }
        _ => {
            let Some(v) = v else { return Ok(()) };
            if v.is_null() {
                return Ok(());
            }
            if call.distinct {
                if st
                    .seen
                    .iter()
                    .any(|s| collate::value_cmp(call.collation, s, &v) == Ordering::Equal)
                {
                    return Ok(());
                }
                st.seen.push(v.clone());
            }
            st.count += 1;
            match call.func {
                AggFunc::Sum | AggFunc::Avg => match &v {
                    Value::Int(i) if !st.float => match st.sum_i.checked_add(*i) {
                        Some(s) => st.sum_i = s,
                        None => {
                            let d = Decimal::from_i64(*i);
                            let sum = st.slow_sum();
                            *sum = Some(match sum.take() {
                                Some(x) => x.add(&d),
                                None => d,
                            });
                        }
                    },
                    Value::Decimal(d) if !st.float => {
                        if st.sum_d.is_none() {
                            if let Some(s) = DecSum::add(st.dec, d, st.store_scale) {
                                st.dec = Some(s);
                                return Ok(());
                            }
                        }
                        let store = st.store_scale;
                        if store.is_some_and(|s| d.held_scale() > s) {
                            st.rounded = true;
                        }
                        let sum = st.slow_sum();
                        let next = match sum.take() {
                            Some(x) => x.add(d),
                            None => d.clone(),
                        };
                        *sum = Some(match store {
                            Some(s) => next.rescale(s),
                            None => next,
                        });
                    }
                    other => {
                        let f = match other {
                            Value::Int(i) => *i as f64,
                            Value::Float(f) => *f,
                            Value::Decimal(d) => d.to_f64(),
                            Value::Bool(b) => *b as i64 as f64,
                            Value::Text(s) => s.trim().parse().unwrap_or(0.0),
                            _ => 0.0,
                        };
                        if !st.float {
                            st.float = true;
                            st.sum_f =
                                st.sum_i as f64 + st.slow_sum().take().map_or(0.0, |d| d.to_f64());
                        }
                        st.sum_f += f;
                    }
                },
                AggFunc::Min
                    if st.best.as_ref().is_none_or(|b| {
                        collate::value_cmp(call.collation, &v, b) == Ordering::Less
                    }) =>
                {
                    st.best = Some(stored(v, st.store_scale));
                }
                AggFunc::Max
                    if st.best.as_ref().is_none_or(|b| {
                        collate::value_cmp(call.collation, &v, b) == Ordering::Greater
                    }) =>
                {
                    st.best = Some(stored(v, st.store_scale));
                }
                AggFunc::Stat(f) => crate::sql::agg_stats::update(&mut st.stat, f, &v)?,
                _ => {}
            }
        }
    }
    Ok(())
}

/// [`agg_update`] with a number of the argument program
/// ([`crate::sql::exec::agg_args`]): the same fold, without building the
/// number's `Value` for COUNT and a SUM / AVG on its fast path.
pub(crate) fn agg_update_num(st: &mut AggState, call: &AggCall, n: Num) -> SqlResult<()> {
    if !call.distinct && !st.float && st.sum_d.is_none() {
        match (call.func, n) {
            (AggFunc::Count | AggFunc::Sum | AggFunc::Avg, Num::Null) => return Ok(()),
            (AggFunc::Count, _) => {
                st.count += 1;
                return Ok(());
            }
            (AggFunc::Sum | AggFunc::Avg, Num::Int(i)) => {
                if let Some(s) = st.sum_i.checked_add(i) {
                    st.sum_i = s;
                    st.count += 1;
                    return Ok(());
                }
            }
            (AggFunc::Sum | AggFunc::Avg, Num::Dec(m, held, shown)) => {
                if let Some(s) = DecSum::add_parts(st.dec, m, held, shown, st.store_scale) {
                    st.dec = Some(s);
                    st.count += 1;
                    return Ok(());
                }
            }
            _ => {}
        }
    }
    agg_update(st, call, Some(n.value()))
}

/// A MIN/MAX value as a grouped block keeps it ([`AggState::store_scale`]).
fn stored(v: Value, scale: Option<u8>) -> Value {
    match (v, scale) {
        (Value::Decimal(d), Some(s)) => Value::Decimal(d.rescale(s)),
        (v, _) => v,
    }
}

/// The exact sum of a non-float SUM/AVG state.
fn exact_sum(st: &AggState) -> Decimal {
    let i = Decimal::from_i64(st.sum_i);
    match st.decimal_sum() {
        Some(d) => d.add(&i),
        None => i,
    }
}

pub(crate) fn agg_final(st: &AggState, call: &AggCall) -> Value {
    match call.func {
        AggFunc::CountStar | AggFunc::Count => Value::Int(st.count),
        AggFunc::Sum => {
            if st.count == 0 {
                Value::Null
            } else if st.float {
                Value::Float(st.sum_f)
            } else if st.sum_d.is_none() && st.dec.is_none() {
                // SUM of integers is a DECIMAL of scale 0 in MySQL; an
                // i64 prints and compares as that decimal does.
                Value::Int(st.sum_i)
            } else {
                Value::Decimal(exact_sum(st))
            }
        }
        AggFunc::Avg => {
            if st.count == 0 {
                Value::Null
            } else if st.float {
                Value::Float(st.sum_f / st.count as f64)
            } else {
                // AVG of INT / DECIMAL: the sum divided by the count as
                // `/` divides (MySQL's Item_sum_avg: 4 more fractional
                // digits shown, whole words held).
                exact_sum(st)
                    .div(&Decimal::from_i64(st.count))
                    .map_or(Value::Null, Value::Decimal)
            }
        }
        AggFunc::Min | AggFunc::Max => st.best.clone().unwrap_or(Value::Null),
        AggFunc::Stat(f) => crate::sql::agg_stats::finish(&st.stat, f),
    }
}

/// Merge `b` (the state of a later key range) into `a`, as if `b`'s rows
/// had been folded after `a`'s. False when that is not exact.
pub(crate) fn merge_state(a: &mut AggState, b: &AggState, call: &AggCall) -> bool {
    if !b.seen.is_empty() || !a.seen.is_empty() {
        return false;
    }
    match call.func {
        AggFunc::CountStar | AggFunc::Count => {}
        AggFunc::Stat(_) => return false,
        AggFunc::Sum | AggFunc::Avg => {
            // A value rounded into a partial sum makes the rounding depend
            // on where the ranges were cut.
            if a.float || b.float || a.rounded || b.rounded {
                return false;
            }
            match a.sum_i.checked_add(b.sum_i) {
                Some(s) => a.sum_i = s,
                None => return false,
            }
            let fast = match (a.sum_d.is_none(), a.dec, b.sum_d.is_none(), b.dec) {
                (true, Some(x), true, Some(y)) => DecSum::merge(x, y),
                _ => None,
            };
            if let Some(s) = fast {
                a.dec = Some(s);
            } else if let Some(bd) = b.decimal_sum() {
                let sum = match a.decimal_sum() {
                    Some(ad) => ad.add(&bd),
                    None => bd,
                };
                // Both parts are kept at `store_scale` already (nothing
                // was rounded): their sum needs no rounding.
                debug_assert!(a.store_scale.is_none_or(|s| sum.held_scale() <= s));
                a.dec = None;
                a.sum_d = Some(sum);
            }
        }
        AggFunc::Min | AggFunc::Max => {
            let better = if call.func == AggFunc::Min {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            // The earlier range's value wins ties, as in one scan.
            if let Some(bv) = &b.best {
                if a.best.as_ref().is_none_or(|av| {
                    crate::sql::expr::collate::value_cmp(call.collation, bv, av) == better
                }) {
                    a.best = Some(bv.clone());
                }
            }
        }
    }
    match a.count.checked_add(b.count) {
        Some(c) => a.count = c,
        None => return false,
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use num_bigint::BigInt;

    /// The SUM fold before the fast path, kept as the reference: every
    /// INT summed in an `i64` (a `Decimal` past overflow), every DECIMAL
    /// added as a `Decimal` and rounded to `store` digits.
    fn reference(values: &[Value], store: Option<u8>) -> (i64, Option<Decimal>) {
        let (mut sum_i, mut sum_d): (i64, Option<Decimal>) = (0, None);
        for v in values {
            match v {
                Value::Int(i) => match sum_i.checked_add(*i) {
                    Some(s) => sum_i = s,
                    None => {
                        let d = Decimal::from_i64(*i);
                        sum_d = Some(match sum_d.take() {
                            Some(x) => x.add(&d),
                            None => d,
                        });
                    }
                },
                Value::Decimal(d) => {
                    let sum = match sum_d.take() {
                        Some(x) => x.add(d),
                        None => d.clone(),
                    };
                    sum_d = Some(match store {
                        Some(s) => sum.rescale(s),
                        None => sum,
                    });
                }
                _ => unreachable!("test values are INT or DECIMAL"),
            }
        }
        (sum_i, sum_d)
    }

    /// The same decimal digit for digit: held and shown scale, mantissa.
    fn same(a: &Decimal, b: &Decimal) -> bool {
        a.held_scale() == b.held_scale() && a.scale() == b.scale() && a.mantissa() == b.mantissa()
    }

    fn call(func: AggFunc) -> AggCall {
        AggCall {
            func,
            arg: None,
            distinct: false,
            collation: None,
            window: None,
        }
    }

    /// SUM / AVG folded on the `i128` fast path (and off it: big
    /// mantissas, more digits than the stored scale, INT overflow) give
    /// exactly the `Decimal` fold's value, held and shown digits included.
    #[test]
    fn fast_decimal_sums_equal_the_decimal_fold() {
        let mut x: u64 = 41;
        let mut next = |n: u64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) % n
        };
        for round in 0..3000 {
            let store = match round % 3 {
                0 => None,
                _ => Some(next(7) as u8),
            };
            let len = 1 + next(12) as usize;
            let values: Vec<Value> = (0..len)
                .map(|_| {
                    let sign = if next(2) == 0 { 1 } else { -1 };
                    match next(10) {
                        // INT, sometimes at the edge of i64.
                        0 => Value::Int(sign * next(1000) as i64),
                        1 => Value::Int(if sign > 0 { i64::MAX } else { i64::MIN + 1 }),
                        // A mantissa past i64.
                        2 => Value::Decimal(Decimal::new(
                            BigInt::from(i64::MAX) * 1000 * sign,
                            next(4) as u8,
                        )),
                        // Near the top of i64.
                        3 => Value::Decimal(Decimal::from_i128(
                            i128::from(sign) * i128::from(i64::MAX - next(10) as i64),
                            next(8) as u8,
                        )),
                        // A quotient: held digits past the shown ones.
                        4 => {
                            let held = 4 + next(6) as u8;
                            Value::Decimal(
                                Decimal::from_i128(i128::from(sign) * next(1 << 40) as i128, held)
                                    .with_shown(next(u64::from(held) + 1) as u8),
                            )
                        }
                        _ => Value::Decimal(Decimal::from_i128(
                            i128::from(sign) * next(1_000_000) as i128,
                            next(7) as u8,
                        )),
                    }
                })
                .collect();
            let (ri, rd) = reference(&values, store);
            let mut st = AggState {
                store_scale: store,
                ..AggState::default()
            };
            // The same values folded as the argument program hands them
            // over (a number where it can): the same state.
            let mut by_num = st.clone();
            for v in &values {
                agg_update(&mut st, &call(AggFunc::Sum), Some(v.clone())).unwrap();
                match Num::of(v) {
                    Some(n) => agg_update_num(&mut by_num, &call(AggFunc::Sum), n).unwrap(),
                    None => agg_update(&mut by_num, &call(AggFunc::Sum), Some(v.clone())).unwrap(),
                }
            }
            assert_eq!(
                (by_num.count, by_num.sum_i, by_num.dec),
                (st.count, st.sum_i, st.dec)
            );
            match (by_num.decimal_sum(), st.decimal_sum()) {
                (None, None) => {}
                (Some(a), Some(b)) => assert!(same(&a, &b), "{a:?} vs {b:?}"),
                (a, b) => panic!("{a:?} vs {b:?}"),
            }
            assert_eq!(st.sum_i, ri, "{values:?} at {store:?}");
            match (st.decimal_sum(), &rd) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    assert!(same(&a, b), "{a:?} vs {b:?}: {values:?} at {store:?}")
                }
                (a, b) => panic!("{a:?} vs {b:?}: {values:?} at {store:?}"),
            }
            // The final values, SUM and AVG, as the reference's.
            let want = match rd {
                Some(d) => Value::Decimal(d.add(&Decimal::from_i64(ri))),
                None => Value::Int(ri),
            };
            let got = agg_final(&st, &call(AggFunc::Sum));
            match (&got, &want) {
                (Value::Decimal(a), Value::Decimal(b)) => assert!(same(a, b), "{a:?} vs {b:?}"),
                _ => assert_eq!(got, want),
            }
            let avg = |v: &Value| match v {
                Value::Decimal(d) => d.div(&Decimal::from_i64(len as i64)),
                Value::Int(i) => Decimal::from_i64(*i).div(&Decimal::from_i64(len as i64)),
                _ => None,
            };
            match (agg_final(&st, &call(AggFunc::Avg)), avg(&want)) {
                (Value::Decimal(a), Some(b)) => assert!(same(&a, &b), "{a:?} vs {b:?}"),
                (a, b) => panic!("AVG {a:?} vs {b:?}"),
            }
        }
    }

    /// The fast path is taken for ordinary DECIMAL column values and left
    /// for good once a value does not fit it.
    #[test]
    fn the_fast_path_is_taken_and_left() {
        let d = |m: i128, s: u8| Value::Decimal(Decimal::from_i128(m, s));
        let mut st = AggState {
            store_scale: Some(2),
            ..AggState::default()
        };
        let sum = call(AggFunc::Sum);
        agg_update(&mut st, &sum, Some(d(150, 2))).unwrap();
        agg_update(&mut st, &sum, Some(d(5, 1))).unwrap();
        assert!(st.dec.is_some() && st.sum_d.is_none() && !st.rounded);
        // 0.125 at scale 2: rounded into the stored sum, off the fast path.
        agg_update(&mut st, &sum, Some(d(125, 3))).unwrap();
        assert!(st.dec.is_none() && st.rounded);
        agg_update(&mut st, &sum, Some(d(1, 2))).unwrap();
        assert!(st.dec.is_none());
        assert_eq!(agg_final(&st, &sum).to_string(), "2.14");
        // COUNT from the argument program's numbers skips NULL.
        let count = call(AggFunc::Count);
        let mut c = AggState::default();
        for n in [Num::Null, Num::Int(3), Num::Dec(5, 1, 1)] {
            agg_update_num(&mut c, &count, n).unwrap();
        }
        assert_eq!(agg_final(&c, &count), Value::Int(2));
    }
}
