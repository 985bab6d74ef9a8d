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
//! aggregate. The functions: ROW_NUMBER, RANK, DENSE_RANK, PERCENT_RANK,
//! CUME_DIST, NTILE, LAG, LEAD, FIRST_VALUE, LAST_VALUE, NTH_VALUE and
//! every aggregate (COUNT / SUM / AVG / MIN / MAX and those of
//! [`crate::sql::agg_stats`]) with MySQL's default frame (the whole
//! partition without ORDER BY; with ORDER BY from the partition's start to
//! the current row's last peer) or an explicit ROWS / RANGE frame
//! ([`crate::sql::expr::Frame`]; a RANGE offset finds its rows by binary
//! search on the one ORDER BY key). Aggregates reuse the GROUP BY fold ([`agg_update`] /
//! [`agg_final`]) and its result types; a frame whose both ends move is
//! slid ([`super::window_slide`]) or folded afresh. Named windows
//! (`WINDOW w AS (…)`) are resolved, and specifications refused as MySQL
//! refuses them, while compiling ([`crate::sql::expr::window_spec`]); a
//! RANGE offset's key type is checked while planning
//! ([`crate::sql::plan::window::check_range_types`]).
//!
//! Never: plans (the compiler refuses the rest of the syntax with 1235 /
//! 3593, [`crate::sql::plan::window::check_placement`] catches aliases
//! used where a window may not be), reads tables, or grows memory unbudgeted (keys are charged to the
//! block's reservation, every loop ticks).

use std::cmp::Ordering;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec;
use crate::sql::exec::agg::{agg_final, agg_update, AggState};
use crate::sql::exec::block::{is_distance_key, Exprs, Unit};
use crate::sql::expr::{AggCall, CExpr, Frame, FrameBound, WinFunc};
use crate::sql::plan::Plan;
use crate::types::Value;

/// A window call's expressions prepared for one run of the block.
pub(crate) struct Prepared<'p> {
    arg: Option<exec::Prepared<'p>>,
    /// Partition keys, then order keys.
    keys: Vec<exec::Prepared<'p>>,
    /// LAG / LEAD's default.
    default: Option<exec::Prepared<'p>>,
    /// A RANGE frame's offset bounds ([`crate::sql::expr::Window::range_at`]).
    range_at: [Option<exec::Prepared<'p>>; 2],
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
        .map(&mut *p)
        .collect::<SqlResult<_>>()?;
    let default = w.default.as_ref().map(&mut *p).transpose()?;
    let [a, b] = &w.range_at;
    let range_at = [
        a.as_ref().map(|(e, _)| p(e)).transpose()?,
        b.as_ref().map(|(e, _)| p(e)).transpose()?,
    ];
    Ok(Some(Prepared {
        arg,
        keys,
        default,
        range_at,
    }))
}

/// Compute every window call of `plan` over `units` (the block's rows or
/// groups, HAVING applied) and store each in its aggregate slot; each
/// window's working memory is charged to the statement while it runs
/// (the units themselves already are). The units
/// come out in the order of the last window's sort (as MySQL's do when no
/// ORDER BY follows).
pub(crate) fn apply(
    plan: &Plan,
    ex: &Exprs<'_>,
    units: &mut Vec<Unit>,
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
        // This window's keys, sort and values, charged while it runs.
        let mut mem = Reservation::new();
        // Each unit's keys, argument and default.
        let mut keys: Vec<(Vec<Value>, Option<Value>)> = Vec::with_capacity(units.len());
        let mut defaults: Vec<Value> = Vec::new();
        // A RANGE frame's offset bounds' key values, per unit.
        let mut targets: Vec<[Value; 2]> = Vec::new();
        let ranged = prep.range_at.iter().any(Option::is_some);
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
            if let Some(d) = &prep.default {
                let d = ev(d, u)?;
                mem.add(budget::row_size(std::slice::from_ref(&d)))?;
                defaults.push(d);
            }
            if ranged {
                let mut t = [Value::Null, Value::Null];
                for (slot, p) in t.iter_mut().zip(&prep.range_at) {
                    if let Some(p) = p {
                        *slot = ev(p, u)?;
                    }
                }
                mem.add(budget::row_size(&t))?;
                targets.push(t);
            }
        }
        let arg_at = |i: usize| keys[i].1.clone().unwrap_or(Value::Null);
        let default_at = |i: usize| defaults.get(i).cloned().unwrap_or(Value::Null);
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
                .map(|((x, y), (key, desc))| {
                    // A NULL vector distance sorts after every real one in
                    // both directions, as the block's ORDER BY and the
                    // vector index have it.
                    if is_distance_key(key) && x.is_null() != y.is_null() {
                        return if x.is_null() {
                            Ordering::Greater
                        } else {
                            Ordering::Less
                        };
                    }
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
        mem.add(units.len() * std::mem::size_of::<Value>())?;
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
            let framed = matches!(
                w.func,
                WinFunc::Agg | WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue
            );
            // NTH_VALUE always goes through a frame: the default one is
            // RANGE from the partition's start to the row's last peer.
            let frame = w.frame.or((w.func == WinFunc::NthValue).then_some(Frame {
                rows: false,
                start: FrameBound::UnboundedPreceding,
                end: FrameBound::CurrentRow,
            }));
            if let (Some(frame), true) = (frame, framed) {
                let len = part.len();
                // Each position's peer group [start, end).
                mem.add(len * std::mem::size_of::<(usize, usize)>())?;
                let mut peers = vec![(0usize, 0usize); len];
                let mut a = 0;
                while a < len {
                    let mut b = a + 1;
                    while b < len && cmp_order(&keys[part[a]].0, &keys[part[b]].0).is_eq() {
                        budget::tick()?;
                        b += 1;
                    }
                    for p in &mut peers[a..b] {
                        *p = (a, b);
                    }
                    a = b;
                }
                // A RANGE offset bound of row `j`: the first row not
                // before the frame (start) or the last not after it (end).
                let offset_at = |j: usize, start: bool| -> usize {
                    let Some((_, desc)) = w.order.first() else {
                        return if start { 0 } else { len };
                    };
                    let key = |r: usize| &keys[r].0[parts];
                    if key(part[j]).is_null() {
                        // A NULL key's offsets are its peers (the NULLs).
                        return if start { peers[j].0 } else { peers[j].1 - 1 };
                    }
                    let t = &targets[part[j]][usize::from(!start)];
                    // Candidate `r` against the bound, in sort order: NULLs
                    // sort first ascending, last descending.
                    let cmp = |r: usize| -> Ordering {
                        let k = key(r);
                        if k.is_null() {
                            return if *desc {
                                Ordering::Greater
                            } else {
                                Ordering::Less
                            };
                        }
                        let o = k.total_cmp(t);
                        if *desc {
                            o.reverse()
                        } else {
                            o
                        }
                    };
                    if start {
                        part.partition_point(|&r| cmp(r).is_lt())
                    } else {
                        // May be 0: the frame is then empty.
                        part.partition_point(|&r| cmp(r).is_le()).wrapping_sub(1)
                    }
                };
                let range = |j: usize| frame_range(frame, j, len, peers[j], &offset_at);
                let empty = agg_final(&AggState::default(), call);
                match w.func {
                    WinFunc::FirstValue | WinFunc::LastValue | WinFunc::NthValue => {
                        let nth = usize::try_from(w.n.saturating_sub(1)).unwrap_or(usize::MAX);
                        for j in 0..len {
                            budget::tick()?;
                            values[part[j]] = match (w.func, range(j)) {
                                (WinFunc::FirstValue, Some((fs, _))) => arg_at(part[fs]),
                                (WinFunc::LastValue, Some((_, fe))) => arg_at(part[fe]),
                                (WinFunc::NthValue, Some((fs, fe)))
                                    if fs.checked_add(nth).is_some_and(|k| k <= fe) =>
                                {
                                    arg_at(part[fs + nth])
                                }
                                _ => Value::Null,
                            };
                        }
                    }
                    _ if frame.start == FrameBound::UnboundedPreceding => {
                        // Frames [0, fe], fe never decreasing: one pass.
                        let mut next = 0;
                        for j in 0..len {
                            values[part[j]] = match range(j) {
                                Some((_, fe)) => {
                                    while next <= fe {
                                        budget::tick()?;
                                        agg_update(&mut st, call, keys[part[next]].1.clone())?;
                                        next += 1;
                                    }
                                    agg_final(&st, call)
                                }
                                None => empty.clone(),
                            };
                        }
                    }
                    _ if frame.end == FrameBound::UnboundedFollowing => {
                        // Frames [fs, len - 1], fs never decreasing: one
                        // pass from the end.
                        let mut next = len;
                        for j in (0..len).rev() {
                            values[part[j]] = match range(j) {
                                Some((fs, _)) => {
                                    while next > fs {
                                        budget::tick()?;
                                        next -= 1;
                                        agg_update(&mut st, call, keys[part[next]].1.clone())?;
                                    }
                                    agg_final(&st, call)
                                }
                                None => empty.clone(),
                            };
                        }
                    }
                    _ if super::window_slide::slide(
                        call,
                        len,
                        &|p| keys[part[p]].1.clone(),
                        &range,
                        &mut |j, v| values[part[j]] = v,
                    )? => {}
                    _ => {
                        // Both ends move and the aggregate does not slide
                        // exactly: each frame folded on its own (at most
                        // its offsets' width).
                        for j in 0..len {
                            let mut st = AggState::default();
                            if let Some((fs, fe)) = range(j) {
                                for &r in &part[fs..=fe] {
                                    budget::tick()?;
                                    agg_update(&mut st, call, keys[r].1.clone())?;
                                }
                            }
                            values[part[j]] = agg_final(&st, call);
                        }
                    }
                }
            } else if w.order.is_empty() && w.func == WinFunc::Agg {
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
                    let len = part.len();
                    for (j, &i) in part.iter().enumerate().take(next).skip(peer) {
                        budget::tick()?;
                        values[i] = match w.func {
                            WinFunc::RowNumber => Value::Int((j + 1) as i64),
                            WinFunc::Rank => Value::Int((peer + 1) as i64),
                            WinFunc::DenseRank => Value::Int(groups),
                            WinFunc::PercentRank if len > 1 => {
                                Value::Float(peer as f64 / (len - 1) as f64)
                            }
                            WinFunc::PercentRank => Value::Float(0.0),
                            WinFunc::CumeDist => Value::Float(next as f64 / len as f64),
                            WinFunc::Ntile => Value::Int(ntile(j, len, w.n) as i64),
                            WinFunc::Lag => match usize::try_from(w.n) {
                                Ok(n) if j >= n => arg_at(part[j - n]),
                                _ => default_at(i),
                            },
                            WinFunc::Lead => match usize::try_from(w.n) {
                                Ok(n) if j.checked_add(n).is_some_and(|x| x < len) => {
                                    arg_at(part[j + n])
                                }
                                _ => default_at(i),
                            },
                            WinFunc::FirstValue => arg_at(part[0]),
                            // The default frame ends at the row's last peer.
                            WinFunc::LastValue => arg_at(part[next - 1]),
                            WinFunc::Agg => shared.clone(),
                            WinFunc::NthValue => {
                                debug_assert!(false, "NTH_VALUE always has a frame");
                                Value::Null
                            }
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

/// Positions [fs, fe] (inclusive, in the partition of `len` rows) of row
/// `j`'s frame, whose peer group is `peers` = [start, end); `None` when
/// the frame is empty. ROWS offsets count rows; a RANGE CURRENT ROW is
/// the row's peers, a RANGE offset where `offset_at(j, start)` puts it
/// (usize::MAX: before the first row).
fn frame_range(
    f: Frame,
    j: usize,
    len: usize,
    peers: (usize, usize),
    offset_at: &dyn Fn(usize, bool) -> usize,
) -> Option<(usize, usize)> {
    let row = j;
    let (j, len) = (j as i128, len as i128);
    let at = |b: FrameBound, start: bool| -> i128 {
        match b {
            FrameBound::UnboundedPreceding => 0,
            FrameBound::Preceding(_) | FrameBound::Following(_) if !f.rows => {
                match offset_at(row, start) {
                    usize::MAX => -1,
                    p => p as i128,
                }
            }
            FrameBound::Preceding(n) => j - i128::from(n),
            FrameBound::CurrentRow if f.rows => j,
            FrameBound::CurrentRow if start => peers.0 as i128,
            FrameBound::CurrentRow => peers.1 as i128 - 1,
            FrameBound::Following(n) => j + i128::from(n),
            FrameBound::UnboundedFollowing => len - 1,
        }
    };
    let fs = at(f.start, true).max(0);
    let fe = at(f.end, false).min(len - 1);
    (fs <= fe).then_some((fs as usize, fe as usize))
}

/// NTILE(n)'s bucket (1-based) of the `j`-th (0-based) of `len` rows: the
/// first `len % n` buckets hold one row more than the others (MySQL).
fn ntile(j: usize, len: usize, n: u64) -> u64 {
    let n = n.max(1);
    let (len, j) = (len as u64, j as u64);
    let small = len / n;
    let extra = len % n;
    let big_rows = extra * (small + 1);
    if j < big_rows {
        j / (small + 1) + 1
    } else {
        // Here small > 0: rows past the big buckets exist only then.
        (j - big_rows) / small.max(1) + extra + 1
    }
}

#[cfg(test)]
mod tests {
    use super::ntile;

    /// NTILE against its definition: bucket sizes differ by at most one,
    /// larger first, in order, every row in 1..=min(n, len).
    #[test]
    fn ntile_buckets_are_balanced_and_ordered() {
        for len in 1..40usize {
            for n in 1..45u64 {
                let b: Vec<u64> = (0..len).map(|j| ntile(j, len, n)).collect();
                assert_eq!(b[0], 1);
                assert!(b.windows(2).all(|w| w[1] == w[0] || w[1] == w[0] + 1));
                let buckets = (len as u64).min(n);
                assert_eq!(*b.last().unwrap(), buckets, "len {len} n {n}");
                let sizes: Vec<usize> = (1..=buckets)
                    .map(|k| b.iter().filter(|&&x| x == k).count())
                    .collect();
                assert!(sizes.windows(2).all(|w| w[0] == w[1] || w[0] == w[1] + 1));
            }
        }
    }
}
