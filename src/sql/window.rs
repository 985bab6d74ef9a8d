//! The window operator: computes a query block's window functions
//! (`f(…) OVER (PARTITION BY … ORDER BY …)`) over the block's rows after
//! WHERE / GROUP BY / HAVING and before DISTINCT / ORDER BY / LIMIT, as
//! MySQL does.
//!
//! Owns: for each window call (an aggregate slot whose [`AggCall::window`]
//! is set, see [`crate::sql::expr::Window`]), sorting the block's output
//! units by (partition keys, order keys) with the bounded, interruptible
//! [`budget::sort_by`], and writing the function's value into that slot of
//! every unit; the select list and ORDER BY then read it like an
//! aggregate. The subset: ROW_NUMBER, RANK, DENSE_RANK and COUNT / SUM /
//! AVG / MIN / MAX with MySQL's default frame (the whole partition without
//! ORDER BY; with ORDER BY from the partition's start to the current row's
//! last peer). Aggregates reuse the GROUP BY fold ([`agg_update`] /
//! [`agg_final`]) and its result types.
//!
//! Never: plans (the compiler refuses the rest of the syntax with 1235 /
//! 3593, [`check_placement`] catches aliases used where a window may not
//! be), reads tables, or grows memory unbudgeted (keys are charged to the
//! block's reservation, every loop ticks).

use std::cmp::Ordering;

use crate::error::{code, SqlError, SqlResult};
use crate::sql::budget::{self, Reservation};
use crate::sql::exec;
use crate::sql::expr::{AggCall, CExpr, WinFunc};
use crate::sql::select::{agg_final, agg_update, AggState, Exprs, Plan, Unit};
use crate::types::Value;

/// A window call's expressions prepared for one run of the block.
pub(crate) struct Prepared<'p> {
    arg: Option<exec::Prepared<'p>>,
    /// Partition keys, then order keys.
    keys: Vec<exec::Prepared<'p>>,
}

/// Prepare the window call in slot `a` (`None` for a plain aggregate).
pub(crate) fn prepare<'p>(
    a: &'p AggCall,
    p: &mut dyn FnMut(&'p CExpr) -> SqlResult<exec::Prepared<'p>>,
) -> SqlResult<Option<Prepared<'p>>> {
    let Some(w) = a.window.as_deref() else {
        return Ok(None);
    };
    let arg = a.arg.as_ref().map(&mut *p).transpose()?;
    let keys = w
        .partition
        .iter()
        .chain(w.order.iter().map(|(e, _)| e))
        .map(p)
        .collect::<SqlResult<_>>()?;
    Ok(Some(Prepared { arg, keys }))
}

/// Whether the block's first `k` rows in its ORDER BY are all its window
/// functions need — so an index top-k path (vector / full-text) may
/// still answer it: every window is ROW_NUMBER, RANK or DENSE_RANK without
/// PARTITION BY, ordered exactly as the block (a row's number or rank
/// depends only on the rows before it in that order, never on those after
/// the cut). True without windows.
pub(crate) fn prefix_safe(aggs: &[AggCall], order_by: &[(CExpr, bool)]) -> bool {
    let key = |(e, d): &(CExpr, bool)| format!("{e:?} {d}");
    aggs.iter().filter_map(|a| a.window.as_deref()).all(|w| {
        w.func != WinFunc::Agg
            && w.partition.is_empty()
            && w.order.len() == order_by.len()
            && w.order.iter().map(key).eq(order_by.iter().map(key))
    })
}

/// Refuse a window call read where MySQL allows none: through a select
/// list alias in WHERE, GROUP BY or HAVING (3594). Direct calls there
/// were refused by the compiler (3593).
pub(crate) fn check_placement<'e>(
    aggs: &[AggCall],
    projection: &[(String, CExpr)],
    places: impl Iterator<Item = &'e CExpr>,
) -> SqlResult<()> {
    let windowed = |e: &CExpr| {
        let mut found = false;
        e.walk(&mut |x| {
            if let CExpr::Agg(i) = x {
                found |= aggs.get(*i).is_some_and(|a| a.window.is_some());
            }
        });
        found
    };
    for e in places {
        if windowed(e) {
            let alias = projection
                .iter()
                .find(|(_, p)| windowed(p))
                .map_or("", |(n, _)| n.as_str());
            return Err(SqlError::new(
                code::WINDOW_INVALID_ALIAS_USE,
                format!(
                    "You cannot use the alias '{alias}' of an expression containing a window function in this context.'"
                ),
            ));
        }
    }
    Ok(())
}

/// Compute every window call of `plan` over `units` (the block's rows or
/// groups, HAVING applied) and store each in its aggregate slot. The units
/// come out in the order of the last window's sort (as MySQL's do when no
/// ORDER BY follows).
pub(crate) fn apply(
    plan: &Plan,
    ex: &Exprs<'_>,
    units: &mut Vec<Unit>,
    mem: &mut Reservation,
    ev: &mut dyn FnMut(&exec::Prepared<'_>, &Unit) -> SqlResult<Value>,
) -> SqlResult<()> {
    for u in units.iter_mut() {
        u.1.resize(plan.aggs.len(), Value::Null);
    }
    let mut last: Option<Vec<usize>> = None;
    for (slot, (call, prep)) in plan.aggs.iter().zip(&ex.windows).enumerate() {
        let (Some(w), Some(prep)) = (call.window.as_deref(), prep) else {
            continue;
        };
        let parts = w.partition.len();
        // Each unit's keys and argument.
        let mut keys: Vec<(Vec<Value>, Option<Value>)> = Vec::with_capacity(units.len());
        for u in units.iter() {
            budget::tick()?;
            let k = prep
                .keys
                .iter()
                .map(|p| ev(p, u))
                .collect::<SqlResult<Vec<_>>>()?;
            let a = prep.arg.as_ref().map(|p| ev(p, u)).transpose()?;
            mem.add(
                budget::row_size(&k)
                    + a.as_ref()
                        .map_or(0, |v| budget::row_size(std::slice::from_ref(v))),
            )?;
            keys.push((k, a));
        }
        let mut order: Vec<usize> = (0..units.len()).collect();
        mem.add(order.len() * std::mem::size_of::<usize>())?;
        let stop = budget::SortStop::default();
        let cmp_part = |a: &[Value], b: &[Value]| -> Ordering {
            a[..parts]
                .iter()
                .zip(&b[..parts])
                .map(|(x, y)| x.total_cmp(y))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        };
        let cmp_order = |a: &[Value], b: &[Value]| -> Ordering {
            a[parts..]
                .iter()
                .zip(&b[parts..])
                .zip(&w.order)
                .map(|((x, y), (_, desc))| {
                    let o = x.total_cmp(y);
                    if *desc {
                        o.reverse()
                    } else {
                        o
                    }
                })
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        };
        budget::sort_by(&mut order, |&i, &j| {
            if stop.stopped() {
                return Ordering::Equal;
            }
            let (a, b) = (&keys[i].0, &keys[j].0);
            cmp_part(a, b).then_with(|| cmp_order(a, b))
        })?;
        stop.finish()?;
        // One partition at a time; inside it, one peer group at a time.
        let mut values: Vec<Value> = vec![Value::Null; units.len()];
        let mut start = 0;
        while start < order.len() {
            let mut end = start + 1;
            while end < order.len() && cmp_part(&keys[order[start]].0, &keys[order[end]].0).is_eq()
            {
                budget::tick()?;
                end += 1;
            }
            let part = &order[start..end];
            let mut st = AggState::default();
            if w.order.is_empty() && w.func == WinFunc::Agg {
                for &i in part {
                    budget::tick()?;
                    agg_update(&mut st, call, keys[i].1.clone())?;
                }
                let v = agg_final(&st, call);
                for &i in part {
                    values[i] = v.clone();
                }
            } else {
                let mut peer = 0;
                let mut groups = 0i64;
                while peer < part.len() {
                    let mut next = peer + 1;
                    while next < part.len()
                        && cmp_order(&keys[part[peer]].0, &keys[part[next]].0).is_eq()
                    {
                        next += 1;
                    }
                    groups += 1;
                    if w.func == WinFunc::Agg {
                        for &i in &part[peer..next] {
                            budget::tick()?;
                            agg_update(&mut st, call, keys[i].1.clone())?;
                        }
                    }
                    let shared = agg_final(&st, call);
                    for (k, &i) in part[peer..next].iter().enumerate() {
                        budget::tick()?;
                        values[i] = match w.func {
                            WinFunc::RowNumber => Value::Int((peer + k + 1) as i64),
                            WinFunc::Rank => Value::Int((peer + 1) as i64),
                            WinFunc::DenseRank => Value::Int(groups),
                            WinFunc::Agg => shared.clone(),
                        };
                    }
                    peer = next;
                }
            }
            start = end;
        }
        for (u, v) in units.iter_mut().zip(values) {
            u.1[slot] = v;
        }
        last = Some(order);
    }
    if let Some(order) = last {
        let mut slots: Vec<Option<Unit>> = std::mem::take(units).into_iter().map(Some).collect();
        *units = order.into_iter().filter_map(|i| slots[i].take()).collect();
    }
    Ok(())
}
