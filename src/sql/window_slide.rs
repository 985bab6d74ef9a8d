//! Sliding window frames folded incrementally: COUNT, MIN / MAX and exact
//! SUM / AVG over frames whose both ends move forward (`ROWS BETWEEN 2
//! PRECEDING AND 2 FOLLOWING`, RANGE offsets), in one pass per partition
//! instead of one fold per frame.
//!
//! Owns: which aggregates slide exactly and how — COUNT by counting in and
//! out; MIN / MAX by a monotonic queue of positions (no inversion: the
//! queue holds every candidate, ties kept in order so the first minimal
//! value wins as in the fold); SUM / AVG by adding and subtracting only
//! when every value of the partition is an integer, or a DECIMAL of one
//! scale (exact arithmetic: the answer is the fresh fold's, digit for
//! digit). Anything else is declined and the window operator folds each
//! frame afresh.
//!
//! Never: names the planner's or the expression compiler's types (the
//! window operator lends its fold, [`Fold`], and says which aggregate,
//! [`Agg`]: this file sits below both), approximates (DOUBLE sums are
//! declined, not subtracted), reads rows or plans, or grows unbudgeted (its counts and queue are charged
//! to the statement); every step ticks the statement's interrupt.

use std::cmp::Ordering;
use std::collections::VecDeque;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::types::Value;

/// The GROUP BY fold the window operator lends (`select::agg_update` /
/// `agg_final` over its `AggState`): add a value, the result, and
/// `uncount` — a value is removed by adding its negation, which counted
/// one row where one fewer is meant.
pub(crate) struct Fold<S, C> {
    pub add: fn(&mut S, &C, Option<Value>) -> SqlResult<()>,
    pub finish: fn(&S, &C) -> Value,
    pub uncount: fn(&mut S),
}

/// The aggregate to slide (the window operator names it: this module
/// names no expression type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Agg {
    /// COUNT(*) (`star`) or COUNT(x).
    Count {
        star: bool,
    },
    Min,
    Max,
    Sum,
    Avg,
}

/// Fill `out[j]` with the aggregate `call` over frame `range(j)` (inclusive
/// positions in the partition, `None` empty) for every position `j` of a
/// partition of `len` rows whose argument at position `p` is `arg(p)`,
/// folding with `fold`. The frames' non-empty starts and ends never
/// decrease. False (nothing written) when `call` does not slide exactly
/// over these values.
#[allow(clippy::too_many_arguments)]
pub(crate) fn slide<S: Default, C>(
    fold: &Fold<S, C>,
    call: &C,
    agg: Agg,
    cmp: &dyn Fn(&Value, &Value) -> Ordering,
    len: usize,
    arg: &dyn Fn(usize) -> Option<Value>,
    range: &dyn Fn(usize) -> Option<(usize, usize)>,
    out: &mut dyn FnMut(usize, Value),
) -> SqlResult<bool> {
    let mut mem = Reservation::new();
    match agg {
        Agg::Count { star } => {
            // Rows counted before each position.
            mem.add((len + 1) * std::mem::size_of::<i64>())?;
            let mut before = Vec::with_capacity(len + 1);
            before.push(0i64);
            for p in 0..len {
                budget::tick()?;
                let counted = star || arg(p).is_some_and(|v| !v.is_null());
                before.push(before[p] + i64::from(counted));
            }
            for j in 0..len {
                out(
                    j,
                    Value::Int(range(j).map_or(0, |(fs, fe)| before[fe + 1] - before[fs])),
                );
            }
            Ok(true)
        }
        Agg::Min | Agg::Max => {
            let keep = if agg == Agg::Min {
                Ordering::Less
            } else {
                Ordering::Greater
            };
            let value = |p: usize| arg(p).filter(|v| !v.is_null());
            // Positions in the frame so far whose value may still be its
            // MIN (MAX): values in order, none beaten by a later one.
            let mut queue: VecDeque<(usize, Value)> = VecDeque::new();
            let mut peak = 0;
            let mut next = 0;
            for j in 0..len {
                let Some((fs, fe)) = range(j) else {
                    out(j, Value::Null);
                    continue;
                };
                next = next.max(fs);
                while next <= fe {
                    budget::tick()?;
                    if let Some(v) = value(next) {
                        while queue.back().is_some_and(|(_, b)| cmp(&v, b) == keep) {
                            queue.pop_back();
                        }
                        // Charged as the queue grows past its peak.
                        if queue.len() == peak {
                            mem.add(budget::row_size(std::slice::from_ref(&v)) + 8)?;
                            peak += 1;
                        }
                        queue.push_back((next, v));
                    }
                    next += 1;
                }
                while queue.front().is_some_and(|(p, _)| *p < fs) {
                    queue.pop_front();
                }
                out(j, queue.front().map_or(Value::Null, |(_, v)| v.clone()));
            }
            Ok(true)
        }
        Agg::Sum | Agg::Avg => {
            // Exact only: every value an integer (not i64::MIN, whose
            // negation overflows) or every one a DECIMAL of one scale.
            // Ok: integers; Err(scale): DECIMALs of that scale.
            let mut kind: Option<Result<(), u8>> = None;
            for p in 0..len {
                budget::tick()?;
                match (arg(p), kind) {
                    (None | Some(Value::Null), _) => {}
                    (Some(Value::Int(i)), None | Some(Ok(()))) if i != i64::MIN => {
                        kind = Some(Ok(()));
                    }
                    (Some(Value::Decimal(d)), None) => kind = Some(Err(d.scale())),
                    (Some(Value::Decimal(d)), Some(Err(s))) if d.scale() == s => {}
                    _ => return Ok(false),
                }
            }
            let ints = agg == Agg::Sum && !matches!(kind, Some(Err(_)));
            let mut st = S::default();
            let (mut lo, mut hi) = (0usize, 0usize);
            for j in 0..len {
                let Some((fs, fe)) = range(j) else {
                    out(j, (fold.finish)(&S::default(), call));
                    continue;
                };
                if hi < fs {
                    st = S::default();
                    (lo, hi) = (fs, fs);
                }
                while hi <= fe {
                    budget::tick()?;
                    (fold.add)(&mut st, call, arg(hi))?;
                    hi += 1;
                }
                while lo < fs {
                    budget::tick()?;
                    if let Some(v) = arg(lo).filter(|v| !v.is_null()) {
                        let neg = match v {
                            Value::Int(i) => Value::Int(-i),
                            Value::Decimal(d) => Value::Decimal(d.neg()),
                            other => other,
                        };
                        (fold.add)(&mut st, call, Some(neg))?;
                        (fold.uncount)(&mut st);
                    }
                    lo += 1;
                }
                let v = (fold.finish)(&st, call);
                out(j, if ints { int_sum(v) } else { v });
            }
            Ok(true)
        }
    }
}

/// An integer SUM as the fresh fold gives it: an integer while it fits
/// (the sliding one may have passed through a wider running sum).
fn int_sum(v: Value) -> Value {
    match &v {
        Value::Decimal(d) if d.scale() == 0 => d.to_string().parse::<i64>().map_or(v, Value::Int),
        _ => v,
    }
}
