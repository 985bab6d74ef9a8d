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

use crate::error::SqlResult;
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
    /// integers once `sum_i` would overflow (the sum is sum_i + sum_d).
    pub sum_d: Option<crate::decimal::Decimal>,
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

impl AggState {
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
                            let d = crate::decimal::Decimal::from_i64(*i);
                            st.sum_d = Some(match st.sum_d.take() {
                                Some(x) => x.add(&d),
                                None => d,
                            });
                        }
                    },
                    Value::Decimal(d) if !st.float => {
                        let sum = match st.sum_d.take() {
                            Some(x) => x.add(d),
                            None => d.clone(),
                        };
                        st.sum_d = Some(match st.store_scale {
                            Some(s) => sum.rescale(s),
                            None => sum,
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
                                st.sum_i as f64 + st.sum_d.take().map_or(0.0, |d| d.to_f64());
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

/// A MIN/MAX value as a grouped block keeps it ([`AggState::store_scale`]).
fn stored(v: Value, scale: Option<u8>) -> Value {
    match (v, scale) {
        (Value::Decimal(d), Some(s)) => Value::Decimal(d.rescale(s)),
        (v, _) => v,
    }
}

/// The exact sum of a non-float SUM/AVG state.
fn exact_sum(st: &AggState) -> crate::decimal::Decimal {
    let i = crate::decimal::Decimal::from_i64(st.sum_i);
    match &st.sum_d {
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
            } else if st.sum_d.is_none() {
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
                    .div(&crate::decimal::Decimal::from_i64(st.count))
                    .map_or(Value::Null, Value::Decimal)
            }
        }
        AggFunc::Min | AggFunc::Max => st.best.clone().unwrap_or(Value::Null),
        AggFunc::Stat(f) => crate::sql::agg_stats::finish(&st.stat, f),
    }
}
