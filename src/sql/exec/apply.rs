//! Running the subqueries inside an expression (found by id in the
//! statement's [`crate::sql::plan::Subqueries`]) and binding their
//! results into it: uncorrelated ones once per run of their block
//! ([`prepare`]), correlated ones once per row ([`bind_row`]); a scalar
//! subquery becomes a literal (NULL for no row, 1242 for several), EXISTS
//! a boolean, `IN (subquery)` a materialized set charged to the budget.
//! A scalar or EXISTS subquery whose answer depends only on the outer
//! values it reads ([`SubPlan::memo`]) is answered from the statement's
//! memo (`exec::memo`) when it ran before with the same values (MariaDB's subquery
//! cache). Never evaluates the expression itself and never plans.

use std::borrow::Cow;
use std::sync::Arc;

use crate::error::{code, SqlError, SqlResult};
use crate::sql::budget::Reservation;
use crate::sql::exec::Exec;
use crate::sql::expr::{CExpr, EvalCtx, SubqueryRef, ValueSet};
use crate::sql::host::SessionHost;
use crate::sql::plan::SubPlan;
use crate::types::Value;

/// An expression whose subqueries that do not depend on the current row
/// have been run.
pub struct Prepared<'e> {
    /// Borrowed when there was nothing to run (deep expressions are never
    /// copied).
    expr: Cow<'e, CExpr>,
    /// Whether correlated subqueries remain (to run per row).
    per_row: bool,
}

impl Prepared<'_> {
    /// The expression (subqueries run so far replaced by their results).
    pub fn expr(&self) -> &CExpr {
        &self.expr
    }

    /// Whether subqueries ran and were replaced by their results.
    pub fn ran_subqueries(&self) -> bool {
        matches!(self.expr, Cow::Owned(_))
    }

    /// Whether correlated subqueries remain to run for each row.
    pub fn per_row(&self) -> bool {
        self.per_row
    }
}

/// The memo key of a run of `sp` named by `r` with `sub_outer` as its outer
/// row: the exact values it reads (typed, so 1 and '1' differ), or `None`
/// when its answer may change between runs.
fn memo_key(sp: &SubPlan, r: &SubqueryRef, sub_outer: &[Value]) -> Option<String> {
    if !sp.memo {
        return None;
    }
    let vals: Vec<&Value> = r.refs.iter().filter_map(|&i| sub_outer.get(i)).collect();
    debug_assert_eq!(
        vals.len(),
        r.refs.len(),
        "a subquery reads past its outer row"
    );
    Some(format!("{vals:?}"))
}

/// A scalar or EXISTS answer: from the memo when this subquery ran with the
/// same outer values, else run by `run` (and kept).
fn memoized(
    cx: &mut Exec<'_, '_>,
    sp: &SubPlan,
    r: &SubqueryRef,
    sub_outer: &[Value],
    run: impl FnOnce(&mut Exec<'_, '_>) -> SqlResult<Value>,
) -> SqlResult<Value> {
    let key = memo_key(sp, r, sub_outer);
    if let Some(v) = key.as_deref().and_then(|k| cx.memo.get(r.id, k)) {
        return Ok(v);
    }
    let v = run(cx)?;
    if let Some(k) = key {
        cx.memo.put(r.id, k, &v);
    }
    Ok(v)
}

/// Whether an expression still holds subqueries.
fn has_subquery(e: &CExpr) -> bool {
    let mut found = false;
    e.walk(&mut |x| {
        if matches!(x, CExpr::Scalar(_) | CExpr::Exists(..) | CExpr::InSub(..)) {
            found = true;
        }
    });
    found
}

/// Prepare `e` for a block whose own rows are `width` wide: every subquery
/// reading nothing of the block's row runs now, once.
pub fn prepare<'e>(
    cx: &mut Exec<'_, '_>,
    e: &'e CExpr,
    width: usize,
    outer: &[Value],
) -> SqlResult<Prepared<'e>> {
    if !has_subquery(e) {
        return Ok(Prepared {
            expr: Cow::Borrowed(e),
            per_row: false,
        });
    }
    let mut sub_outer = vec![Value::Null; width];
    sub_outer.extend_from_slice(outer);
    let expr = bind(cx, e.clone(), &sub_outer, Some(width))?;
    let per_row = has_subquery(&expr);
    Ok(Prepared {
        expr: Cow::Owned(expr),
        per_row,
    })
}

/// The expression for one row: correlated subqueries run with this row.
pub fn bind_row<'p>(
    cx: &mut Exec<'_, '_>,
    p: &'p Prepared<'_>,
    row: &[Value],
    outer: &[Value],
) -> SqlResult<Cow<'p, CExpr>> {
    if !p.per_row {
        return Ok(Cow::Borrowed(&p.expr));
    }
    let mut sub_outer = row.to_vec();
    sub_outer.extend_from_slice(outer);
    Ok(Cow::Owned(bind(
        cx,
        p.expr.as_ref().clone(),
        &sub_outer,
        None,
    )?))
}

/// Replace subqueries by their results, running them with `sub_outer`
/// as their outer row. With `only_above = Some(w)`, only subqueries that
/// read no position below `w` (nothing of the current row) are run.
fn bind(
    cx: &mut Exec<'_, '_>,
    e: CExpr,
    sub_outer: &[Value],
    only_above: Option<usize>,
) -> SqlResult<CExpr> {
    let ready = |r: &SubqueryRef| only_above.is_none_or(|w| r.refs.iter().all(|&r| r >= w));
    e.try_rewrite(&mut |x| {
        Ok(match x {
            CExpr::Scalar(r) if ready(&r) => {
                let sp = cx.subqueries.get(r.id)?;
                CExpr::Lit(memoized(cx, &sp, &r, sub_outer, |cx| {
                    scalar(cx, &sp, sub_outer)
                })?)
            }
            CExpr::Exists(r, negated) if ready(&r) => {
                let sp = cx.subqueries.get(r.id)?;
                // The first row answers it: the subquery stops there.
                let found = memoized(cx, &sp, &r, sub_outer, |cx| {
                    Ok(Value::Bool(
                        !cx.run_first(&sp.node, sub_outer, 1)?.is_empty(),
                    ))
                })?;
                CExpr::Lit(Value::Bool((found == Value::Bool(false)) == negated))
            }
            CExpr::InSub(x, r, negated) if ready(&r) => {
                let sp = cx.subqueries.get(r.id)?;
                let rows = cx.run(&sp.node, sub_outer)?;
                let mut mem = Reservation::new();
                mem.add_rows(&rows)?;
                let set = ValueSet::new(rows.into_iter().map(|mut r| r.swap_remove(0)));
                CExpr::InSet(x, Arc::new(set), negated)
            }
            other => other,
        })
    })
}

/// A scalar subquery's value: NULL for no row, error 1242 for several.
fn scalar(cx: &mut Exec<'_, '_>, sp: &SubPlan, outer: &[Value]) -> SqlResult<Value> {
    // A second row is an error: the subquery stops there.
    let mut rows = cx.run_first(&sp.node, outer, 2)?;
    match rows.len() {
        0 => Ok(Value::Null),
        1 => Ok(rows
            .pop()
            .and_then(|mut r| r.drain(..).next())
            .unwrap_or(Value::Null)),
        _ => Err(SqlError::new(
            code::SUBQUERY_NO_1_ROW,
            "Subquery returns more than 1 row",
        )),
    }
}

/// Whether every condition of `conds` (a join's residual ON / WHERE
/// conjuncts) is true on the joined `row`, its correlated subqueries run
/// for that row.
pub fn all_hold(
    cx: &mut Exec<'_, '_>,
    conds: &[Prepared<'_>],
    outer: &[Value],
    host: &SessionHost<'_>,
    row: &[Value],
) -> SqlResult<bool> {
    for p in conds {
        let e = bind_row(cx, p, row, outer)?;
        let v = e.eval(&EvalCtx {
            row,
            outer,
            aggs: &[],
            matches: &[],
            funcs: host,
        })?;
        if crate::sql::expr::truth(&v) != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}
