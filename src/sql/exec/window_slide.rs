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
//! Never: approximates (DOUBLE sums are declined, not subtracted), reads
//! rows or plans, or grows unbudgeted (its counts and queue are charged
//! to the statement); every step ticks the statement's interrupt.

use std::cmp::Ordering;
use std::collections::VecDeque;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::agg::{agg_final, agg_update, AggState};
use crate::sql::expr::{collate, AggCall, AggFunc};
use crate::types::Value;

/// Fill `out[j]` with the aggregate `call` over frame `range(j)` (inclusive
/// positions in the partition, `None` empty) for every position `j` of a
/// partition of `len` rows whose argument at position `p` is `arg(p)`.
/// The frames' non-empty starts and ends never decrease. False (nothing
/// written) when `call` does not slide exactly over these values.
pub(crate) fn slide(
    call: &AggCall,
    len: usize,
    arg: &dyn Fn(usize) -> Option<Value>,
    range: &dyn Fn(usize) -> Option<(usize, usize)>,
    out: &mut dyn FnMut(usize, Value),
) -> SqlResult<bool> {
    let mut mem = Reservation::new();
    match call.func {
        AggFunc::CountStar | AggFunc::Count => {
            // Rows counted before each position.
            mem.add((len + 1) * std::mem::size_of::<i64>())?;
            let mut before = Vec::with_capacity(len + 1);
            before.push(0i64);
            for p in 0..len {
                budget::tick()?;
                let counted =
                    call.func == AggFunc::CountStar || arg(p).is_some_and(|v| !v.is_null());
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
        AggFunc::Min | AggFunc::Max => {
            let keep = if call.func == AggFunc::Min {
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
                        while queue
                            .back()
                            .is_some_and(|(_, b)| collate::value_cmp(call.collation, &v, b) == keep)
                        {
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
        AggFunc::Sum | AggFunc::Avg => {
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
            let ints = call.func == AggFunc::Sum && !matches!(kind, Some(Err(_)));
            let mut st = AggState::default();
            let (mut lo, mut hi) = (0usize, 0usize);
            for j in 0..len {
                let Some((fs, fe)) = range(j) else {
                    out(j, agg_final(&AggState::default(), call));
                    continue;
                };
                if hi < fs {
                    st = AggState::default();
                    (lo, hi) = (fs, fs);
                }
                while hi <= fe {
                    budget::tick()?;
                    agg_update(&mut st, call, arg(hi))?;
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
                        agg_update(&mut st, call, Some(neg))?;
                        // The negation removed one value; it counted one.
                        st.count -= 2;
                    }
                    lo += 1;
                }
                debug_assert!(st.count >= 0 && !st.float);
                let v = agg_final(&st, call);
                out(j, if ints { int_sum(v) } else { v });
            }
            Ok(true)
        }
        AggFunc::Stat(_) => Ok(false),
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Sliding equals folding each frame afresh, for every aggregate that
    /// slides, over integers near the i64 edges, NULLs and DECIMALs, and
    /// frames of every width (empty ones included).
    #[test]
    fn sliding_equals_folding_each_frame() {
        let dec = |s: &str| Value::Decimal(crate::decimal::Decimal::parse(s).unwrap());
        let columns: Vec<Vec<Value>> = vec![
            vec![
                Value::Int(i64::MAX),
                Value::Int(5),
                Value::Null,
                Value::Int(i64::MAX - 1),
                Value::Int(-7),
                Value::Int(i64::MIN + 1),
                Value::Int(3),
            ],
            vec![
                dec("1.50"),
                Value::Null,
                dec("-2.25"),
                dec("9.99"),
                dec("0.01"),
            ],
            vec![Value::Null, Value::Null, Value::Int(4)],
        ];
        for col in &columns {
            let len = col.len();
            for func in [
                AggFunc::CountStar,
                AggFunc::Count,
                AggFunc::Sum,
                AggFunc::Avg,
                AggFunc::Min,
                AggFunc::Max,
            ] {
                let call = AggCall {
                    func,
                    arg: None,
                    distinct: false,
                    collation: None,
                    window: None,
                };
                for before in 0..4i64 {
                    for after in -2..4i64 {
                        // ROWS BETWEEN `before` PRECEDING AND `after`
                        // FOLLOWING (negative: PRECEDING).
                        let range = |j: usize| {
                            let fs = (j as i64 - before).max(0);
                            let fe = (j as i64 + after).min(len as i64 - 1);
                            (fs <= fe).then_some((fs as usize, fe as usize))
                        };
                        let arg = |p: usize| Some(col[p].clone());
                        let mut got = vec![Value::Null; len];
                        let slid = slide(&call, len, &arg, &range, &mut |j, v| got[j] = v).unwrap();
                        assert!(slid);
                        for (j, g) in got.iter().enumerate() {
                            let mut st = AggState::default();
                            if let Some((fs, fe)) = range(j) {
                                for p in fs..=fe {
                                    agg_update(&mut st, &call, arg(p)).unwrap();
                                }
                            }
                            let want = agg_final(&st, &call);
                            // The same number (an integer SUM may be an
                            // i64 on one side, a DECIMAL on the other:
                            // both print alike).
                            assert!(
                                g.total_cmp(&want) == Ordering::Equal
                                    && g.is_null() == want.is_null(),
                                "{func:?} {before} {after} row {j} of {col:?}: {g:?} vs {want:?}"
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn doubles_and_mixed_scales_are_declined() {
        let call = AggCall {
            func: AggFunc::Sum,
            arg: None,
            distinct: false,
            collation: None,
            window: None,
        };
        for col in [
            vec![Value::Int(1), Value::Float(0.5)],
            vec![
                Value::Decimal(crate::decimal::Decimal::parse("1.5").unwrap()),
                Value::Decimal(crate::decimal::Decimal::parse("1.25").unwrap()),
            ],
            vec![
                Value::Int(1),
                Value::Decimal(crate::decimal::Decimal::parse("1.5").unwrap()),
            ],
            vec![Value::Int(i64::MIN)],
        ] {
            let arg = |p: usize| Some(col[p].clone());
            let range = |j: usize| Some((j, j));
            assert!(!slide(&call, col.len(), &arg, &range, &mut |_, _| {}).unwrap());
        }
    }
}
