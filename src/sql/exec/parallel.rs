//! Parallel scans: an aggregate over a full scan of a large table folds
//! each of several key ranges on its own thread
//! ([`tributary_storage::Transaction::scan_visit_parts`], one snapshot) and
//! merges the partial groups in key order; a filtered full scan whose rows
//! are all kept (a join's input) tests and narrows each range's rows on its
//! own thread and concatenates them in key order ([`scan`]): the same rows
//! in the same order as one scan.
//!
//! This module owns the rule for when that is exact and the merge. It runs
//! only what needs nothing but the row — the WHERE, GROUP BY keys and
//! aggregate arguments are built from columns, literals and operators (no
//! function, subquery, outer reference or MATCH) — and only aggregates
//! whose partial states merge exactly: COUNT, MIN, MAX, and SUM / AVG of an
//! integer or DECIMAL argument while no partial sum becomes a DOUBLE or
//! rounds a value into itself (`exec::agg`'s `rounded`). Whenever a
//! merge would not be exact it answers `None` and the caller runs the
//! sequential scan, so an answer never depends on how the table was cut.
//! It must never evaluate a host function (the threads have no session)
//! nor change the first-seen order of groups.

use crate::catalog::TableDef;
use crate::error::{SqlError, SqlResult};
use crate::sql::access::Access;
use crate::sql::exec::unit::{Exprs, Groups};
use crate::sql::exec::Exec;
use crate::sql::expr::{AggCall, AggFunc, CExpr, EvalCtx, NoHost};
use crate::sql::plan::block::kind_of_expr;
use crate::sql::plan::Plan;
use crate::sql::Ctx;
use crate::types::{ColumnKind, Value};

/// Rows below which a table is scanned on one thread (starting threads
/// costs more than it saves).
pub const PARALLEL_MIN_ROWS: u64 = 100_000;
/// Most threads one scan uses.
const MAX_PARTS: usize = 4;

/// Whether `e` needs nothing but the row: columns, literals and operators
/// (no function call, aggregate, MATCH score, outer column or subquery).
fn row_only(e: &CExpr) -> bool {
    let mut only = true;
    e.walk(&mut |x| {
        only &= matches!(
            x,
            CExpr::Lit(_)
                | CExpr::Col(_)
                | CExpr::Bin(..)
                | CExpr::Like(..)
                | CExpr::Not(_)
                | CExpr::Neg(_)
                | CExpr::IsNull(..)
                | CExpr::Cast(..)
                | CExpr::InList(..)
                | CExpr::Between(..)
                | CExpr::Case(..)
        )
    });
    only
}

/// Whether partial states of `call` (argument `arg`) are expected to
/// merge exactly: SUM / AVG of an integer or DECIMAL argument (whose
/// values [`merge_state`](super::agg::merge_state) still checks: a DOUBLE or a rounded value
/// refuses the merge).
fn mergeable(plan: &Plan, call: &AggCall, arg: Option<&CExpr>) -> bool {
    if call.distinct {
        return false;
    }
    match call.func {
        AggFunc::CountStar | AggFunc::Count | AggFunc::Min | AggFunc::Max => true,
        AggFunc::Stat(_) => false,
        AggFunc::Sum | AggFunc::Avg => arg.is_some_and(|a| {
            matches!(
                kind_of_expr(a, &plan.source, &plan.aggs),
                ColumnKind::Int | ColumnKind::Decimal { .. }
            )
        }),
    }
}

/// How many threads fold the aggregate block `plan` over table `t`; 1
/// when it must run sequentially.
pub(crate) fn parts_for(cx: &Ctx<'_>, plan: &Plan, t: &TableDef, ex: &Exprs<'_>) -> usize {
    let exprs_ok = ex
        .filter
        .as_ref()
        .is_none_or(|f| !f.ran_subqueries() && row_only(f.expr()))
        && ex.group_by.iter().all(|g| row_only(g.expr()))
        && !plan.windowed()
        && plan.aggs.iter().zip(&ex.agg_args).all(|(call, a)| {
            a.as_ref().is_none_or(|a| row_only(a.expr()))
                && mergeable(plan, call, a.as_ref().map(|a| a.expr()))
        });
    if !exprs_ok
        || !matches!(plan.access, Access::FullScan)
        || plan.for_update
        || cx.txn.approx_rows(t.id) < PARALLEL_MIN_ROWS
    {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_PARTS)
}

/// Primary-key ranges below which a scan by ranges (a join reading a
/// composite key by its first column) runs on one thread.
const PARALLEL_MIN_RANGES: usize = 256;

/// Whether the scan of `t` by block `plan` (whose WHERE, tested in the
/// scan, is `filter`), all of whose rows are kept, runs on several threads
/// ([`scan`]): the filter needs nothing but the row, no row is locked or
/// scored, and it reads a large table whole or many primary-key ranges;
/// 1 when it runs on one.
pub(crate) fn scan_parts(
    cx: &Ctx<'_>,
    plan: &Plan,
    t: &TableDef,
    filter: Option<&crate::sql::exec::Prepared<'_>>,
) -> usize {
    let filter_ok =
        filter.is_none_or(|f| !f.ran_subqueries() && !f.per_row() && row_only(f.expr()));
    let large = match &plan.access {
        Access::FullScan => cx.txn.approx_rows(t.id) >= PARALLEL_MIN_ROWS,
        Access::PkRanges(r) => r.len() >= PARALLEL_MIN_RANGES,
        _ => false,
    };
    if !filter_ok
        || !large
        || plan.filter.is_some() != filter.is_some()
        || plan.for_update
        || !plan.matches.is_empty()
    {
        return 1;
    }
    std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(MAX_PARTS)
}

/// What every scan thread keeps besides its result: its decode buffer,
/// its first error and the warnings its rows raised (a scan thread has no
/// statement sink of its own: they are handed to the statement's after
/// the scan), and how many rows it visited (the statement's interrupt is
/// looked at every [`crate::sql::budget::TICK_EVERY`]).
#[derive(Default)]
struct Worker {
    row: Vec<Value>,
    failed: Option<SqlError>,
    warnings: Vec<crate::types::Warning>,
    visited: u32,
}

impl Worker {
    /// Visit one stored row `v`: the interrupt looked at on its tick, the
    /// row decoded (the `needed` columns) and handed to `step`, whose
    /// warnings are kept and whose error ends this thread's share. Whether
    /// the scan goes on.
    fn visit(
        &mut self,
        stmt: Option<&std::sync::Arc<crate::sql::budget::Statement>>,
        v: &[u8],
        needed: Option<&[bool]>,
        corrupt: impl Fn(crate::catalog::codec::CodecError) -> SqlError,
        step: impl FnOnce(&mut Vec<Value>) -> SqlResult<()>,
    ) -> bool {
        self.visited = self.visited.wrapping_add(1);
        if self.visited.is_multiple_of(crate::sql::budget::TICK_EVERY) {
            if let Some(Err(e)) = stmt.map(|s| s.check()) {
                self.failed = Some(e);
                return false;
            }
        }
        let sink = crate::warnings::Collect::open();
        let r = crate::catalog::codec::decode_row_into(v, needed, &mut self.row)
            .map_err(corrupt)
            .and_then(|()| step(&mut self.row));
        let raised = sink.finish();
        if self.warnings.len() < crate::warnings::MAX_WARNINGS {
            self.warnings.extend(raised);
        }
        match r {
            Ok(()) => true,
            Err(e) => {
                self.failed = Some(e);
                false
            }
        }
    }

    /// After the scan: this share's error, else its warnings given to the
    /// statement.
    fn finish(self) -> SqlResult<()> {
        if let Some(e) = self.failed {
            return Err(e);
        }
        for w in self.warnings {
            crate::warnings::note_later(w.code, w.message);
        }
        Ok(())
    }
}

/// One thread's share of a filtered scan: its kept rows (charged to the
/// statement) and its [`Worker`].
struct ScanPart {
    rows: Vec<Vec<Value>>,
    mem: crate::sql::budget::Reservation,
    w: Worker,
}

/// All rows of `t` (or of the primary-key ranges of `plan`'s access path)
/// that `filter` accepts, made as `shape` says, read in `parts` runs of
/// consecutive keys on as many threads and concatenated in key order:
/// exactly the rows, in the order, of one scan
/// ([`crate::sql::access::fetch_where`] over the same path). Each kept
/// row is charged to `mem` (through the statement, as the threads keep
/// it); warnings the filter raises are the statement's.
pub(crate) fn scan(
    cx: &mut Exec<'_, '_>,
    plan: &Plan,
    t: &TableDef,
    filter: Option<&CExpr>,
    shape: crate::sql::access::Kept<'_>,
    parts: usize,
    mem: &mut crate::sql::budget::Reservation,
) -> SqlResult<Vec<Vec<Value>>> {
    debug_assert!(!shape.keys, "a parallel scan keeps no keys");
    let needed = plan.needed.as_deref();
    let corrupt = |e: crate::catalog::codec::CodecError| {
        SqlError::internal(format!("{}: {e}", t.qualified()))
    };
    let stmt = crate::sql::budget::current();
    let mut states: Vec<ScanPart> = (0..parts)
        .map(|_| ScanPart {
            rows: Vec::new(),
            mem: crate::sql::budget::Reservation::of(stmt.clone()),
            w: Worker::default(),
        })
        .collect();
    {
        let mut visitors: Vec<Box<tributary_storage::PartVisitor<'_>>> = states
            .iter_mut()
            .map(|p| {
                let stmt = stmt.clone();
                let ScanPart { rows, mem, w } = p;
                Box::new(move |_k: &[u8], v: &[u8]| {
                    w.visit(stmt.as_ref(), v, needed, corrupt, |buf| {
                        let keep = match filter {
                            Some(f) => {
                                f.test(&EvalCtx {
                                    row: buf,
                                    outer: &[],
                                    aggs: &[],
                                    matches: &[],
                                    funcs: &NoHost,
                                })? == Some(true)
                            }
                            None => true,
                        };
                        if keep {
                            let row = shape.row(buf);
                            mem.add_row(&row)?;
                            rows.push(row);
                        }
                        Ok(())
                    })
                }) as Box<tributary_storage::PartVisitor>
            })
            .collect();
        let mut refs: Vec<&mut tributary_storage::PartVisitor> =
            visitors.iter_mut().map(|b| &mut **b as _).collect();
        match &plan.access {
            Access::PkRanges(ranges) => {
                // Consecutive runs of ranges, one per part.
                let per = ranges.len().div_ceil(parts).max(1);
                let mut work: Vec<tributary_storage::RangesPart<'_, '_>> =
                    ranges.chunks(per).zip(refs).collect();
                cx.txn.scan_visit_ranges_parts(t.id, &mut work)?;
            }
            _ => cx.txn.scan_visit_parts(t.id, &mut refs)?,
        }
    }
    FILTERED_SCANS_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let total = states.iter().map(|p| p.rows.len()).sum();
    let mut out = Vec::with_capacity(total);
    for p in states {
        p.w.finish()?;
        mem.absorb(p.mem);
        out.extend(p.rows);
    }
    Ok(out)
}

/// Filtered scans run on several threads by this process (for tests).
static FILTERED_SCANS_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many filtered scans this process has run on several threads.
pub fn filtered_scans_run() -> u64 {
    FILTERED_SCANS_RUN.load(std::sync::atomic::Ordering::Relaxed)
}

/// Parallel scans run by this process (for tests and diagnostics).
static SCANS_RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many aggregate scans this process has run on several threads.
pub fn scans_run() -> u64 {
    SCANS_RUN.load(std::sync::atomic::Ordering::Relaxed)
}

/// One thread's share of an aggregate scan: its groups and its
/// [`Worker`].
#[derive(Default)]
struct Part {
    groups: Groups,
    w: Worker,
    /// Its groups passed its share of `tmp_table_size`: the block runs
    /// sequentially, spilling (decision 027).
    too_big: bool,
}

/// Fold the aggregate block `plan` over all of `t` in `parts` key ranges
/// on as many threads. `None` when the partial states do not merge
/// exactly (then run it sequentially).
pub(crate) fn fold(
    cx: &mut Exec<'_, '_>,
    plan: &Plan,
    t: &TableDef,
    ex: &Exprs<'_>,
    parts: usize,
) -> SqlResult<Option<Groups>> {
    let needed = plan.needed.as_deref();
    let filter = ex.filter.as_ref().map(|f| f.expr());
    let corrupt = |e: crate::catalog::codec::CodecError| {
        SqlError::internal(format!("{}: {e}", t.qualified()))
    };
    // The threads charge their groups to the statement and stop on its
    // interrupt (they run no statement of their own).
    let stmt = crate::sql::budget::current();
    let spill_at = crate::sql::spill::hash::Overflow::for_statement().limit();
    let mut states: Vec<Part> = (0..parts)
        .map(|_| Part {
            groups: Groups::charged(crate::sql::budget::Reservation::of(stmt.clone())),
            ..Part::default()
        })
        .collect();
    {
        let mut visitors: Vec<Box<tributary_storage::PartVisitor<'_>>> = states
            .iter_mut()
            .map(|p| {
                let stmt = stmt.clone();
                let Part { groups, w, too_big } = p;
                Box::new(move |_k: &[u8], v: &[u8]| {
                    let go = w.visit(stmt.as_ref(), v, needed, corrupt, |row| {
                        fold_row(plan, ex, filter, groups, row)
                    });
                    // Past its share of the spill limit, the block runs
                    // sequentially instead (then an error here is met again).
                    if spill_at.is_some_and(|l| groups.bytes() * parts as u64 >= l) {
                        *too_big = true;
                        return false;
                    }
                    go
                }) as Box<tributary_storage::PartVisitor>
            })
            .collect();
        let mut refs: Vec<&mut tributary_storage::PartVisitor> =
            visitors.iter_mut().map(|b| &mut **b as _).collect();
        cx.txn.scan_visit_parts(t.id, &mut refs)?;
    }
    SCANS_RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if states.iter().any(|p| p.too_big) {
        return Ok(None);
    }
    let mut merged = Groups::charged(crate::sql::budget::Reservation::new());
    for p in states {
        p.w.finish()?;
        if !merged.merge(p.groups, &plan.aggs) {
            return Ok(None);
        }
    }
    Ok(Some(merged))
}

/// Fold one row into `groups` if it passes `filter`.
fn fold_row(
    plan: &Plan,
    ex: &Exprs<'_>,
    filter: Option<&CExpr>,
    groups: &mut Groups,
    row: &[Value],
) -> SqlResult<()> {
    fn cx(row: &[Value]) -> EvalCtx<'_> {
        EvalCtx {
            row,
            outer: &[],
            aggs: &[],
            matches: &[],
            funcs: &NoHost,
        }
    }
    if let Some(f) = filter {
        if f.test(&cx(row))? != Some(true) {
            return Ok(());
        }
    }
    groups.add(plan, ex, row, &[], &mut |p, row, _| p.expr().eval(&cx(row)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::exec::agg::{merge_state, AggState};

    #[test]
    fn row_only_refuses_anything_beyond_the_row() {
        let col = || Box::new(CExpr::Col(0));
        let lit = || Box::new(CExpr::Lit(Value::Int(1)));
        let case = CExpr::Case(None, vec![(CExpr::Not(col()), *lit())], Some(col()));
        assert!(row_only(&case));
        assert!(row_only(&CExpr::InList(
            col(),
            vec![*lit(), CExpr::Col(1)],
            false
        )));
        // Deep inside an operator: a function call, an outer column.
        let call = CExpr::Func("abs".into(), vec![CExpr::Col(0)]);
        assert!(!row_only(&CExpr::Not(Box::new(call))));
        assert!(!row_only(&CExpr::Case(
            None,
            vec![(CExpr::Col(0), CExpr::Outer(0))],
            None
        )));
        assert!(!row_only(&CExpr::InList(col(), vec![CExpr::Agg(0)], false)));
    }

    fn st(count: i64, sum: i64, best: Option<Value>) -> AggState {
        AggState {
            count,
            sum_i: sum,
            best,
            ..AggState::default()
        }
    }

    fn call(func: AggFunc) -> AggCall {
        AggCall {
            func,
            arg: Some(CExpr::Col(0)),
            distinct: false,
            collation: None,
            window: None,
        }
    }

    #[test]
    fn merged_states_equal_one_scan_or_refuse() {
        let mut a = st(2, 5, Some(Value::Int(3)));
        assert!(merge_state(
            &mut a,
            &st(3, 7, Some(Value::Int(1))),
            &call(AggFunc::Min)
        ));
        assert_eq!((a.count, a.best.clone()), (5, Some(Value::Int(1))));
        let mut a = st(2, 5, Some(Value::Int(3)));
        assert!(merge_state(
            &mut a,
            &st(3, 7, Some(Value::Int(1))),
            &call(AggFunc::Max)
        ));
        assert_eq!(a.best, Some(Value::Int(3)));
        // Ties keep the earlier range's value (1 = 1.0 in MySQL's order).
        let mut a = st(1, 0, Some(Value::Int(1)));
        assert!(merge_state(
            &mut a,
            &st(1, 0, Some(Value::Float(1.0))),
            &call(AggFunc::Min)
        ));
        assert_eq!(a.best, Some(Value::Int(1)));
        // An empty earlier range takes the later one's.
        let mut a = st(0, 0, None);
        assert!(merge_state(
            &mut a,
            &st(1, 0, Some(Value::Int(9))),
            &call(AggFunc::Max)
        ));
        assert_eq!(a.best, Some(Value::Int(9)));
        let mut a = st(2, 5, None);
        assert!(merge_state(&mut a, &st(3, 7, None), &call(AggFunc::Sum)));
        assert_eq!((a.count, a.sum_i), (5, 12));
        // Not exact: integer overflow, a float sum, DISTINCT's seen values.
        let mut a = st(1, i64::MAX, None);
        assert!(!merge_state(&mut a, &st(1, 1, None), &call(AggFunc::Sum)));
        let mut f = st(1, 0, None);
        f.float = true;
        assert!(!merge_state(&mut st(1, 1, None), &f, &call(AggFunc::Avg)));
        let mut d = st(1, 0, None);
        d.seen.push(Value::Int(1));
        assert!(!merge_state(&mut st(1, 1, None), &d, &call(AggFunc::Count)));
    }

    #[test]
    fn only_row_only_expressions_run_on_threads() {
        let col = || Box::new(CExpr::Col(0));
        assert!(row_only(&CExpr::Bin(
            crate::sql::expr::BinOp::Eq,
            col(),
            Box::new(CExpr::Lit(Value::Int(1)))
        )));
        assert!(!row_only(&CExpr::Not(Box::new(CExpr::Func(
            "connection_id".into(),
            vec![]
        )))));
        assert!(!row_only(&CExpr::Bin(
            crate::sql::expr::BinOp::Eq,
            col(),
            Box::new(CExpr::Outer(0))
        )));
    }
}
