//! The middle of a query block: the aggregate (rows folded into their
//! groups — while the table scan visits them when nothing per row stops
//! it, on several threads for a large table — then each group's
//! aggregates finished and its HAVING tested) and the window operator
//! (window functions over all the block's units, by
//! [`crate::sql::exec::window_stream`]: its input taken batch by batch,
//! or a plain table scanned by the window itself).
//!
//! Both need all of their input before passing anything on; what they
//! hold is charged to the statement's budget, groups past
//! `tmp_table_size` wait on disk a partition at a time, and a window's
//! units past `sort_buffer_size` go through the spilling sort (decision
//! 027).
//! The aggregate state itself (`AggState`, `agg_final`) is not owned
//! here. Never writes.

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::op::{Exec, Meter};
use crate::sql::expr::EvalCtx;
use crate::sql::plan::{Node, Stage};
use crate::types::Value;

use super::stage::{pass_made, step, BoxStep, Candidate, Items, Run, Step};
use crate::sql::exec::agg::{agg_final, AggState};
use crate::sql::exec::unit::{Groups, Unit};
use crate::sql::exec::window_stream::{Collect, Output};

/// Where the aggregate's rows come from.
pub(crate) enum Fold<'s> {
    /// Its input operator (the filter or the scan).
    Input(BoxStep<'s, Candidate>),
    /// Its table, scanned by the aggregate itself, each row folded as the
    /// scan visits it (none is kept): [`super::streamed_table`].
    Table(&'s crate::catalog::TableDef),
}

/// GROUP BY / aggregates / HAVING: one unit per group that passes.
pub(crate) struct Aggregate<'s> {
    meter: Meter<'s>,
    source: Option<Fold<'s>>,
    made: Option<Items<Unit>>,
    /// The units' charge (rows, aggregates, scores) while the block runs.
    mem: Reservation,
    /// The groups of the table and of the last spilled partition, held
    /// (with their charge) until the block ends, as the whole-block code
    /// did: a partition's groups are freed when the next one is folded.
    held: (Option<Groups>, Option<Groups>),
}

impl<'s> Aggregate<'s> {
    pub fn new(node: &'s Node, source: Fold<'s>) -> Aggregate<'s> {
        Aggregate {
            meter: Meter::new(node, Stage::Aggregate),
            source: Some(source),
            made: None,
            mem: Reservation::new(),
            held: (None, None),
        }
    }

    /// The groups of every input row.
    fn group(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Groups> {
        let (plan, ex, outer, host) = (run.plan, run.ex, run.outer, run.host);
        let empty: Vec<Value> = Vec::new();
        let mut groups = Groups::spilling(Reservation::new());
        match self.source.take() {
            Some(Fold::Table(t)) => {
                // A large table: its key ranges folded on several threads.
                let parts = crate::sql::exec::parallel::parts_for(cx, plan, t, ex);
                let folded = if parts > 1 {
                    crate::sql::exec::parallel::fold(cx, plan, t, ex, parts)?
                } else {
                    None
                };
                if let Some(g) = folded {
                    return Ok(g);
                }
                let mut fold = |row: &[Value]| -> SqlResult<bool> {
                    groups.add(plan, ex, row, &empty, &mut |p, row, m| {
                        p.expr().eval(&EvalCtx {
                            row,
                            outer,
                            aggs: &[],
                            matches: m,
                            funcs: host,
                        })
                    })?;
                    Ok(false)
                };
                // What the scan keeps is folded.
                scan_streamed(cx, plan, t, run, ex.filter.as_ref(), &mut fold)?;
            }
            Some(Fold::Input(mut input)) => {
                while let Some(batch) = input.next(cx, run)? {
                    for (row, m) in batch {
                        groups.add(plan, ex, &row, &m, &mut |p, row, m| {
                            run.eval(cx, p, row, &empty, m)
                        })?;
                    }
                }
            }
            None => {}
        }
        Ok(groups)
    }

    /// Every group's unit (HAVING applied), the spilled partitions' after
    /// the others, one partition at a time (decision 027).
    fn units(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Vec<Unit>> {
        let plan = run.plan;
        let empty: Vec<Value> = Vec::new();
        let mut groups = self.group(cx, run)?;
        self.meter.holds(groups.bytes());
        let mut units: budget::Grave<Vec<Unit>> = Default::default();
        let mut pending = groups.spilled()?;
        let mut current = budget::Grave(std::mem::take(&mut groups.groups));
        self.held.0 = Some(groups);
        if current.is_empty() && plan.group_by.is_empty() {
            let width = plan.source.scope.cols.len();
            current.push((
                vec![Value::Null; width],
                Vec::new(),
                vec![AggState::default(); plan.aggs.len()],
            ));
        }
        loop {
            for (row, m, states) in current.take() {
                budget::tick()?;
                let aggs: Vec<Value> = states
                    .iter()
                    .zip(&plan.aggs)
                    .map(|(s, c)| agg_final(s, c))
                    .collect();
                if let Some(h) = &run.ex.having {
                    let v = run.eval(cx, h, &row, &aggs, &m)?;
                    if crate::sql::expr::truth(&v) != Some(true) {
                        continue;
                    }
                }
                self.mem
                    .add(budget::row_size(&row) + budget::row_size(&aggs) + budget::row_size(&m))?;
                units.push((row, aggs, m));
            }
            let Some(p) = pending.pop() else { break };
            let mut g = Groups::of_partition(p, plan, run.ex, &mut |p, row, m| {
                run.eval(cx, p, row, &empty, m)
            })?;
            self.meter.holds(g.bytes());
            pending.extend(g.spilled()?);
            current.0 = std::mem::take(&mut g.groups);
            self.held.1 = Some(g);
        }
        Ok(units.take())
    }
}

impl Step<Unit> for Aggregate<'_> {
    fn next(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Option<Vec<Unit>>> {
        let start = self.meter.start();
        if self.made.is_none() {
            let units = self.units(cx, run)?;
            self.made = Some(Items::new(budget::Grave(units)));
        }
        pass_made(&mut self.meter, start, &mut self.made)
    }
}

/// Where the window operator's units come from.
pub(crate) enum Feed<'s> {
    /// Its input operator (the aggregate, or the scan's candidates).
    Units(BoxStep<'s, Unit>),
    /// Its table, scanned by the window itself: each stored row that
    /// passes the WHERE (tested in the scan) kept as a slim unit, no
    /// candidate list in between ([`super::streamed_table`]).
    Table(&'s crate::catalog::TableDef),
}

/// The window functions of the block over all its units: the input
/// consumed batch by batch, computed in memory or spilled past the sort
/// budget ([`crate::sql::exec::window_stream`]), passed on in batches.
pub(crate) struct Window<'s> {
    meter: Meter<'s>,
    feed: Option<Feed<'s>>,
    out: Option<Output>,
}

impl<'s> Window<'s> {
    pub fn new(node: &'s Node, feed: Feed<'s>) -> Window<'s> {
        Window {
            meter: Meter::new(node, Stage::Window),
            feed: Some(feed),
            out: None,
        }
    }

    /// Every input unit, collected (and spilled past the budget).
    fn collect(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Collect> {
        let (plan, ex) = (run.plan, run.ex);
        let mut c = Collect::new(plan);
        match self.feed.take() {
            Some(Feed::Units(mut input)) => {
                while let Some(batch) = input.next(cx, run)? {
                    for u in batch {
                        c.push(plan, ex, u, &mut |p, u| run.eval(cx, p, &u.0, &u.1, &u.2))?;
                    }
                }
            }
            Some(Feed::Table(t)) => {
                let (outer, host) = (run.outer, run.host);
                // Nothing the window reads runs a subquery per row
                // (`streamed_table`): its expressions evaluate here.
                let mut direct = |p: &crate::sql::exec::Prepared<'_>, u: &Unit| {
                    p.expr().eval(&EvalCtx {
                        row: &u.0,
                        outer,
                        aggs: &u.1,
                        matches: &u.2,
                        funcs: host,
                    })
                };
                let mut keep = |row: &[Value]| -> SqlResult<bool> {
                    let u = c.unit_of_row(row);
                    c.push(plan, ex, u, &mut direct)?;
                    Ok(false)
                };
                scan_streamed(cx, plan, t, run, ex.filter.as_ref(), &mut keep)?;
            }
            None => {}
        }
        Ok(c)
    }
}

impl Step<Unit> for Window<'_> {
    fn next(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Option<Vec<Unit>>> {
        let start = self.meter.start();
        if self.out.is_none() {
            let c = self.collect(cx, run)?;
            self.meter.holds(c.bytes());
            let mut ev =
                |p: &crate::sql::exec::Prepared<'_>, u: &Unit| run.eval(cx, p, &u.0, &u.1, &u.2);
            self.out = Some(c.finish(run.plan, run.ex, &mut ev)?);
        }
        let mut ev =
            |p: &crate::sql::exec::Prepared<'_>, u: &Unit| run.eval(cx, p, &u.0, &u.1, &u.2);
        let batch = match &mut self.out {
            Some(o) => o.next_batch(run.plan, run.ex, &mut ev)?,
            None => None,
        };
        step(&mut self.meter, start, &batch);
        Ok(batch)
    }
}

/// A streamed block's stored table, every row the scan keeps handed to
/// `sink`: the scan tests the block's filter on each row itself (a
/// streamed table's filter runs nothing per row).
fn scan_streamed(
    cx: &mut Exec<'_, '_>,
    plan: &crate::sql::plan::Plan,
    t: &crate::catalog::TableDef,
    run: &Run<'_, '_>,
    filter: Option<&crate::sql::exec::Prepared<'_>>,
    sink: &mut dyn FnMut(&[Value]) -> SqlResult<bool>,
) -> SqlResult<()> {
    let (_, filtered) = super::scan_rows(
        cx,
        plan,
        t,
        run.outer,
        filter,
        run.host,
        false,
        crate::sql::access::Kept::default(),
        sink,
    )?;
    debug_assert!(
        filtered || filter.is_none(),
        "a streamed block's filter is tested in the scan"
    );
    Ok(())
}
