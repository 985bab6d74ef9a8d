//! A query block ([`Plan`]): its operators (scan → filter → aggregate →
//! window → project → sort → distinct → limit, in `block/`: put together
//! by [`chain`], which nothing here names) and the parts they are made of.
//!
//! Over a base table the rows come by the plan's access path (or a
//! vector / full-text index path through [`crate::sql::search`], whose
//! answer is never different from exact evaluation: too few survivors
//! re-run exactly), and the WHERE clause is always re-checked exactly on
//! every candidate row. Owns the candidate scan ([`candidates`],
//! [`scan_rows`], [`scan_cap`]) and the bounded top-k; the parts its
//! operators share with the window operator and the parallel fold — the
//! output unit, the prepared expressions ([`Exprs`]), the groups — are in
//! [`crate::sql::exec::unit`], below all of them. Subqueries in
//! its expressions run through [`crate::sql::exec`] (once per run when
//! uncorrelated, per row otherwise). Never plans, and never writes except
//! row locks taken by `SELECT … FOR UPDATE`; every loop ticks and every
//! kept row is charged to the statement's budget.

use std::cmp::Ordering;

use crate::catalog::{self, TableDef};
use crate::error::{SqlError, SqlResult};
use crate::sql::access::{self, Access};
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::Exec;
use crate::sql::exec::{bind_row, prepare, Prepared};
use crate::sql::expr::{CExpr, EvalCtx};
use crate::sql::host::SessionHost;
use crate::sql::plan::Plan;
use crate::sql::plan::{correlated_filter, mark_columns, prefilter_access, PREFILTER_ROWS};
use crate::types::{DataType, Value};

use crate::sql::exec::unit::Exprs;

// The block's operators (their chain is put together in `chain`, which
// nothing here names: the operators use this file's parts, not the other
// way round).
pub(super) mod chain;
mod fold;
mod input;
mod output;
mod stage;
mod stream;

/// Fetch candidate rows for a plan (index path or access path) with their
/// MATCH scores.
/// A candidate row and its MATCH scores.
type Candidate = (Vec<Value>, Vec<Value>);
/// A stored row and its primary-key bytes.
type KeyedRow = (Vec<u8>, Vec<Value>);

/// Whether a stored row passes an early filter (one that reads nothing
/// but the row: no MATCH score, no per-row subquery).
fn passes(
    f: &Prepared<'_>,
    row: &[Value],
    outer: &[Value],
    host: &SessionHost<'_>,
) -> SqlResult<bool> {
    let t = f.expr().test(&EvalCtx {
        row,
        outer,
        aggs: &[],
        matches: &[],
        funcs: host,
    })?;
    Ok(t == Some(true))
}

#[allow(clippy::too_many_arguments)]
fn candidates(
    cx: &mut Exec<'_, '_>,
    plan: &Plan,
    path: Option<&crate::sql::search::IndexPath>,
    outer: &[Value],
    filter: Option<&Prepared<'_>>,
    host: &SessionHost<'_>,
    limited: bool,
    mem: &mut Reservation,
    values: Option<&super::series::Rows>,
) -> SqlResult<(Vec<Candidate>, bool)> {
    if let Some(v) = values {
        // Reserved once (no doubling under KILL), freed after the reply
        // if the statement fails (`budget::Grave`).
        let one = v.rows.first().map_or(0, |r| budget::row_size(r));
        let mut out = budget::Grave(Vec::with_capacity(budget::affordable_rows(
            v.rows.len(),
            one,
        )));
        for r in &v.rows {
            mem.add_row(r)?;
            out.push((r.clone(), Vec::new()));
        }
        return Ok((out.take(), false));
    }
    if let Some(node) = &plan.source.input {
        let rows = cx.run(node, outer)?;
        mem.add_rows(&rows)?;
        if plan.match_tables.is_empty() {
            return Ok((rows.into_iter().map(|r| (r, Vec::new())).collect(), false));
        }
        // MATCH scores of the joined rows, by each table's primary key.
        let mut scores = Vec::new();
        for (t, _, spec) in &plan.match_tables {
            let mut m =
                crate::sql::search::exact_match_scores(cx.txn, t, std::slice::from_ref(spec))?;
            scores.push(m.pop().unwrap_or_default());
        }
        return Ok((
            rows.into_iter()
                .map(|r| {
                    let m = plan
                        .match_tables
                        .iter()
                        .zip(&scores)
                        .map(|((t, off, _), sc)| {
                            let pk: Vec<Value> =
                                t.pk.iter()
                                    .map(|&i| r.get(off + i).cloned().unwrap_or(Value::Null))
                                    .collect();
                            if pk.iter().any(Value::is_null) {
                                return Value::Float(0.0);
                            }
                            let key = t.pk_key(&pk);
                            Value::Float(sc.get(&key).copied().unwrap_or(0.0))
                        })
                        .collect();
                    (r, m)
                })
                .collect(),
            false,
        ));
    }
    let Some(t) = &plan.source.table else {
        return Ok((vec![(Vec::new(), Vec::new())], false));
    };
    if catalog::is_system_db(&t.db) {
        if catalog::information_schema::is(&t.db) && t.name.eq_ignore_ascii_case("PROCESSLIST") {
            let rows = cx
                .engine
                .processes
                .rows(&cx.session.user, cx.session.sees_all);
            return Ok((rows.into_iter().map(|r| (r, Vec::new())).collect(), false));
        }
        if let Some(rows) = catalog::virtual_rows(cx.txn, &t.db, &t.name)? {
            return Ok((rows.into_iter().map(|r| (r, Vec::new())).collect(), false));
        }
    }
    if let Some(ip) = path {
        // The WHERE as a row predicate for a filtered vector search, when
        // it needs nothing but the row (as for a scan's early filter).
        let early = filter.filter(|f| !f.per_row() && plan.matches.is_empty());
        let mut keep = |row: &[Value]| -> SqlResult<bool> {
            early.map_or(Ok(true), |f| passes(f, row, outer, host))
        };
        // The predicate decodes only the columns the WHERE reads.
        let filter_cols = early.and(plan.filter.as_ref()).map(|f| {
            let mut n = vec![false; plan.source.scope.cols.len()];
            mark_columns(f, &mut n);
            n
        });
        let row_filter = early.map(|_| crate::sql::search::RowFilter {
            needed: filter_cols.as_deref(),
            keep: &mut keep,
        });
        let found = crate::sql::search::fetch_candidates(
            cx,
            t,
            ip,
            &plan.matches,
            plan.hit_needed.as_deref(),
            plan.relevance_top_k(),
            row_filter,
        )?;
        for (r, _) in &found {
            mem.add_row(r)?;
        }
        return Ok((found, false));
    }
    // A pruned plain scan's rows come narrowed to its output columns from
    // the storage scan (when it tests the filter there): no full-width row
    // is kept (the chain's `Rows` passes them as they are).
    let cols = plan
        .scan_columns()
        .filter(|c| plan.is_plain_scan() && c.len() < plan.source.scope.cols.len());
    let shape = access::Kept {
        columns: cols.as_deref(),
        keys: !plan.matches.is_empty(),
    };
    // A large filtered full scan whose rows are all kept (a join's input)
    // reads its key ranges on several threads.
    let parts = crate::sql::exec::parallel::scan_parts(cx, plan, t, filter);
    if parts > 1 && (!limited || scan_cap(plan, filter, &plan.access) == usize::MAX) {
        let f = filter.map(|f| f.expr());
        let rows = crate::sql::exec::parallel::scan(cx, plan, t, f, shape, parts, mem)?;
        return Ok((
            rows.into_iter().map(|r| (r, Vec::new())).collect(),
            filter.is_some(),
        ));
    }
    let (rows, early) = scan_rows(
        cx,
        plan,
        t,
        outer,
        filter,
        host,
        limited,
        shape,
        &mut |row| {
            mem.add_row(row)?;
            Ok(true)
        },
    )?;
    let scores = if plan.matches.is_empty() {
        Vec::new()
    } else {
        crate::sql::search::exact_match_scores(cx.txn, t, &plan.matches)?
    };
    let rows = rows
        .into_iter()
        .map(|(k, r)| {
            let m = if scores.is_empty() {
                Vec::new()
            } else {
                scores
                    .iter()
                    .map(|s| {
                        s.get(&k)
                            .copied()
                            .map(Value::Float)
                            .unwrap_or(Value::Float(0.0))
                    })
                    .collect()
            };
            (r, m)
        })
        .collect();
    Ok((rows, early))
}

/// The table scan of `plan` (its access path, re-chosen when the filter's
/// subqueries have run or it reads the outer row) as `(key, row)` pairs.
/// With `filter`, rows are tested inside the storage scan when the filter
/// needs nothing but the row; the flag says whether that happened. Each
/// row that passes goes to `sink`, which says whether to keep it in the
/// returned rows. With `limited` (the rows kept are the block's output),
/// the scan stops once it has kept what the block's LIMIT needs
/// ([`scan_cap`]). A kept row is made as `shape` says — narrowed to
/// its columns only when the filter is tested here (or there is none):
/// a filter tested later reads the whole row.
#[allow(clippy::too_many_arguments)]
fn scan_rows(
    cx: &mut Exec<'_, '_>,
    plan: &Plan,
    t: &TableDef,
    outer: &[Value],
    filter: Option<&Prepared<'_>>,
    host: &SessionHost<'_>,
    limited: bool,
    mut shape: access::Kept<'_>,
    sink: &mut dyn FnMut(&[Value]) -> SqlResult<bool>,
) -> SqlResult<(Vec<KeyedRow>, bool)> {
    // A correlated filter (`b.a_id = a.id` inside a subquery) is a
    // constant for this run: its access path is chosen with the outer
    // values, so a correlated lookup is a key lookup, not a scan.
    let dynamic = correlated_filter(plan.filter.as_ref(), |i| {
        outer.get(i).cloned().unwrap_or(Value::Null)
    })
    .map(|f| access::choose(t, Some(&f), host))
    // A filter whose subqueries have run (`id IN (SELECT …)` is now an
    // IN-list of keys) may have a better path than the planned one.
    .or_else(|| {
        filter
            .filter(|f| f.ran_subqueries() && !f.per_row())
            .map(|f| access::choose(t, Some(f.expr()), host))
    });
    let path = dynamic.as_ref().unwrap_or(&plan.access);
    // The filter is tested inside the scan when it needs nothing but the
    // row: no subquery left to run per row, no MATCH score (known by key
    // after the scan).
    let early = filter.filter(|f| !f.per_row() && plan.matches.is_empty());
    if filter.is_some() && early.is_none() {
        shape.columns = None;
    }
    let max = if limited {
        scan_cap(plan, early, path)
    } else {
        usize::MAX
    };
    let mut keep = |row: &[Value]| -> SqlResult<bool> {
        if let Some(f) = early {
            if !passes(f, row, outer, host)? {
                return Ok(false);
            }
        }
        sink(row)
    };
    let rows = access::fetch_where(
        cx.txn,
        t,
        path,
        plan.for_update,
        plan.needed.as_deref(),
        max,
        &mut keep,
        shape,
    )?;
    Ok((rows, early.is_some()))
}

/// The rows an UPDATE or DELETE touches: `plan` is a locking scan of the
/// target table with its WHERE as filter ([`Plan::locking_scan`]); each
/// row comes with its key. Subqueries run first, at the statement's
/// snapshot, before any row is written.
pub fn keyed_rows(cx: &mut Exec<'_, '_>, plan: &Plan) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    let Some(t) = &plan.source.table else {
        return Err(SqlError::internal("a locking scan without a table"));
    };
    let w = plan.source.scope.cols.len();
    let filter = match &plan.filter {
        Some(f) => Some(prepare(cx, f, w, &[])?),
        None => None,
    };
    let host = SessionHost::new(cx.session, cx.engine);
    let mut mem = Reservation::new();
    let (rows, filtered) = scan_rows(
        cx,
        plan,
        t,
        &[],
        filter.as_ref(),
        &host,
        false,
        access::Kept {
            columns: None,
            keys: true,
        },
        &mut |row| {
            mem.add_row(row)?;
            Ok(true)
        },
    )?;
    let Some(f) = filter.filter(|_| !filtered) else {
        return Ok(rows);
    };
    let mut out = Vec::with_capacity(rows.len());
    for (k, r) in rows {
        budget::tick()?;
        if crate::sql::expr::truth(&ev(cx, &f, &host, &r, &[], &[], &[])?) == Some(true) {
            out.push((k, r));
        }
    }
    Ok(out)
}

/// Whether a filtered vector search pre-filters: its WHERE has a key or
/// B-tree access path that yields at most [`PREFILTER_ROWS`] rows.
fn prefilter(cx: &mut Exec<'_, '_>, plan: &Plan) -> SqlResult<bool> {
    match prefilter_access(plan) {
        Some((t, a)) => access::yields_at_most(cx.txn, t, a, PREFILTER_ROWS),
        None => Ok(false),
    }
}

/// Evaluate a prepared expression on one row (running its correlated
/// subqueries for that row first).
fn ev(
    cx: &mut Exec<'_, '_>,
    p: &Prepared<'_>,
    host: &SessionHost<'_>,
    row: &[Value],
    outer: &[Value],
    aggs: &[Value],
    matches: &[Value],
) -> SqlResult<Value> {
    let e = bind_row(cx, p, row, outer)?;
    e.eval(&EvalCtx {
        row,
        outer,
        aggs,
        matches,
        funcs: host,
    })
}

/// How many rows a block's table scan on `path` must keep at most:
/// `OFFSET + LIMIT` when the block outputs the first rows it keeps in the
/// order the scan finds them — no aggregation, DISTINCT or MATCH, a WHERE
/// the scan tests itself (`early`, or none), and no ORDER BY or one the
/// path's primary-key order already gives ([`sorted_by_key`] on a full or
/// primary-key range scan; a secondary index yields its own order) — else
/// all (`usize::MAX`).
fn scan_cap(plan: &Plan, early: Option<&Prepared<'_>>, path: &Access) -> usize {
    let key_order = matches!(path, Access::FullScan | Access::PkRange(..));
    let in_scan_order = !plan.aggregate
        && !plan.windowed()
        && plan.group_by.is_empty()
        && plan.having.is_none()
        && (plan.order_by.is_empty() || (key_order && sorted_by_key(plan)))
        && !plan.distinct
        && plan.matches.is_empty()
        && plan.match_tables.is_empty()
        && (plan.filter.is_none() || early.is_some());
    match plan.limit {
        Some(l) if in_scan_order => plan.offset.saturating_add(l),
        _ => usize::MAX,
    }
}

/// Whether the block's ORDER BY is a prefix of its table's primary key,
/// ascending, on integer columns: the order in which a primary-key scan
/// (full or one range) yields the rows, since integer keys are encoded in
/// numeric order. (Ties on a shorter prefix come in key order, as the
/// stable sort of the whole table would leave them.)
fn sorted_by_key(plan: &Plan) -> bool {
    let Some(t) = &plan.source.table else {
        return false;
    };
    !plan.order_by.is_empty()
        && plan.order_by.len() <= t.pk.len()
        && plan.order_by.iter().zip(&t.pk).all(|((e, desc), &c)| {
            !*desc
                && matches!(e, CExpr::Col(i) if *i == c)
                && t.columns.get(c).is_some_and(|col| {
                    matches!(
                        col.ty,
                        DataType::Int | DataType::BigInt | DataType::Integer { .. }
                    )
                })
        })
}

/// The table an aggregate block can fold while scanning it, or a windowed
/// block's window can keep slim units of while scanning it (candidate rows
/// are never collected): a plain scan of a stored table — no VALUES, join
/// input, index search, MATCH or system table — whose filter, GROUP BY
/// keys, aggregate arguments and window expressions run no subquery per
/// row.
fn streamed_table<'p>(
    plan: &'p Plan,
    path: Option<&crate::sql::search::IndexPath>,
    ex: &Exprs<'_>,
) -> Option<&'p TableDef> {
    let t = plan.source.table.as_ref()?;
    let plain = (plan.aggregate || plan.windowed())
        && plan.source.values.is_none()
        && plan.source.input.is_none()
        && path.is_none()
        && plan.matches.is_empty()
        && plan.match_tables.is_empty()
        && !catalog::is_system_db(&t.db);
    let per_row = ex.filter.iter().any(|f| f.per_row())
        || ex.group_by.iter().any(|g| g.per_row())
        || ex.agg_args.iter().flatten().any(|a| a.per_row())
        || ex.windows.iter().flatten().any(|w| w.per_row());
    (plain && !per_row).then_some(t)
}

/// The first `k` items of `items` in the order a stable sort by `order`
/// gives (ties keep their input order), without sorting the rest. The items
/// are taken a chunk at a time (at least [`TOP_K_CHUNK`], at least `k`):
/// the best `k` so far and the chunk are cut to their best `k` by a
/// selection, with a look at the interrupt between chunks, so a KILL is
/// seen after a bounded piece of work (the comparator itself never stops:
/// it must stay a total order). Past a quarter of the items a stable sort
/// ([`budget::sort_by`]) is cheaper. The rest of the items (millions of
/// rows, a second to free) are freed with a [`budget::tick`] each, and left
/// to the statement's teardown once it fires.
fn top_k<T: Default + 'static>(
    mut items: Vec<T>,
    k: usize,
    order: impl Fn(&T, &T) -> Ordering,
) -> SqlResult<Vec<T>> {
    let n = items.len();
    if k >= n / 4 {
        budget::sort_by(&mut items, &order)?;
        if k < items.len() {
            budget::drop_ticking(items.split_off(k))?;
        }
        return Ok(items);
    }
    let mut best: Vec<usize> = Vec::new();
    if k > 0 {
        let chunk = TOP_K_CHUNK.max(k);
        let by = |&i: &usize, &j: &usize| order(&items[i], &items[j]).then(i.cmp(&j));
        for lo in (0..n).step_by(chunk) {
            if let Err(e) = budget::check() {
                drop(best);
                budget::bury(items);
                return Err(e);
            }
            best.extend(lo..(lo + chunk).min(n));
            if best.len() > k {
                best.select_nth_unstable_by(k - 1, by);
                best.truncate(k);
            }
        }
        best.sort_unstable_by(by);
    }
    let chosen: Vec<T> = best
        .into_iter()
        .map(|i| std::mem::take(&mut items[i]))
        .collect();
    if let Err(e) = budget::drop_ticking(items) {
        budget::bury(chosen);
        return Err(e);
    }
    Ok(chosen)
}

/// Items a top-N selection takes between two looks at the interrupt.
const TOP_K_CHUNK: usize = 1 << 16;

#[cfg(test)]
mod tests {
    use super::*;

    /// Top-k gives exactly the prefix a stable sort gives, ties included.
    #[test]
    fn top_k_is_the_stable_sort_prefix() {
        let mut x: u64 = 7;
        for round in 0..200 {
            let n = (round % 40) as usize;
            let items: Vec<(u64, usize)> = (0..n)
                .map(|i| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    ((x >> 60) % 5, i)
                })
                .collect();
            for k in 0..=n + 1 {
                let mut sorted = items.clone();
                sorted.sort_by_key(|a| a.0);
                sorted.truncate(k);
                assert_eq!(
                    top_k(items.clone(), k, |a, b| a.0.cmp(&b.0)).unwrap(),
                    sorted
                );
            }
        }
    }
}
