//! A query block as a chain of operators — scan → filter → aggregate →
//! window → project → sort → distinct → limit, each present only when the
//! block needs it — and the block's [`Operator`] that runs the chain.
//!
//! The chain is put together when the block is first pulled: its
//! expressions are prepared then (uncorrelated subqueries run once per run
//! of the block), and what they need decides the shape (an aggregate over
//! a plain table scan folds each row as the scan visits it; one over an
//! input node without WHERE folds the input's batches as they come:
//! [`super::stream`]). A vector
//! index path is a fast path, never a different answer: when fewer than
//! LIMIT rows come out of it, the chain is run again by the exact path
//! (the block module's contract), so such a block passes nothing on before
//! it knows which. Never plans; never writes except the row locks of
//! `SELECT … FOR UPDATE` (taken by the scan).

use crate::error::SqlResult;
use crate::sql::exec::op::{Batch, BoxOp, Exec, Made, Meter, Operator, Row};
use crate::sql::host::SessionHost;
use crate::sql::plan::{Node, Plan, Stage};
use crate::sql::search::IndexPath;
use crate::types::Value;

use super::fold::{Aggregate, Feed, Fold, Window};
use super::input::{Filter, Scan};
use super::output::{Distinct, Limit, Project, Sort};
use super::stage::{collect, BoxStep, Candidate, Run, Step, Units};
use super::streamed_table;
use crate::sql::exec::unit::{Exprs, Unit};

/// The operator of a query block `plan` (the block of plan node `node`,
/// whose figures its operators record). With `whole`, the block is the
/// node itself (its [`Stage::Node`] figures are recorded, and a scan a
/// running recursive CTE already read is not run again); without, a copy
/// of the node's block run on its behalf (a join's side read by key).
pub fn operator<'p>(node: &'p Node, plan: &'p Plan, outer: &'p [Value], whole: bool) -> BoxOp<'p> {
    let mut meter = Meter::new(node, Stage::Node);
    if !whole {
        meter.off();
    }
    Box::new(Block {
        node,
        plan,
        outer,
        whole,
        meter,
        ex: None,
        path: None,
        chain: None,
        made: None,
    })
}

/// A running query block.
struct Block<'p> {
    node: &'p Node,
    plan: &'p Plan,
    outer: &'p [Value],
    whole: bool,
    meter: Meter<'p>,
    /// The block's expressions, prepared at the first pull.
    ex: Option<Exprs<'p>>,
    /// The index path of this run.
    path: Option<&'p IndexPath>,
    chain: Option<BoxStep<'p, Row>>,
    /// Rows made before being passed on (a vector search that might be
    /// run again, a scan kept for a recursive CTE).
    made: Option<Made>,
}

/// The chain of a block, bottom up.
fn chain<'p>(
    node: &'p Node,
    plan: &'p Plan,
    table: Option<&'p crate::catalog::TableDef>,
    outer: &'p [Value],
) -> BoxStep<'p, Row> {
    let input = || -> BoxStep<'p, Candidate> {
        let scan = Scan::new(node);
        if plan.filter.is_some() {
            Box::new(Filter::new(node, scan))
        } else {
            Box::new(scan)
        }
    };
    if plan.is_plain_scan() {
        // A scan whose output is its rows (a join input): no copy per value.
        return Box::new(Rows { input: input() });
    }
    let units: BoxStep<'p, Unit> = if plan.aggregate {
        let fold = match (table, super::stream::streamable(plan)) {
            (Some(t), _) => Fold::Table(t),
            // Its input's batches folded as they come.
            (None, Some(i)) => Fold::Input(Box::new(super::stream::Stream::new(node, i, outer))),
            (None, None) => Fold::Input(input()),
        };
        let agg = Box::new(Aggregate::new(node, fold));
        if plan.windowed() {
            Box::new(Window::new(node, Feed::Units(agg)))
        } else {
            agg
        }
    } else if plan.windowed() {
        // The window scans a plain table itself (no candidate list).
        let feed = match table {
            Some(t) => Feed::Table(t),
            None => Feed::Units(Box::new(Units { input: input() })),
        };
        Box::new(Window::new(node, feed))
    } else {
        Box::new(Units { input: input() })
    };
    // The last window left the units in ORDER BY's order: no second sort
    // (and the limit pulls only the units it keeps through the projection).
    let sorting = !plan.order_by.is_empty() && !plan.sorted_by_window();
    let mut rows: BoxStep<'p, _> = Box::new(Project::new(node, units, !sorting || plan.distinct));
    if plan.distinct {
        rows = Box::new(Distinct::new(node, rows));
    }
    if sorting {
        rows = Box::new(Sort::new(node, rows, !plan.distinct));
    }
    Box::new(Limit::new(node, plan, rows))
}

/// A plain scan's rows, without their (empty) MATCH scores.
struct Rows<'s> {
    input: BoxStep<'s, Candidate>,
}

impl Step<Row> for Rows<'_> {
    fn next(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Option<Vec<Row>>> {
        let Some(batch) = self.input.next(cx, run)? else {
            return Ok(None);
        };
        Ok(Some(scan_output(run.plan, batch)))
    }

    fn all(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<crate::sql::budget::Grave<Vec<Row>>> {
        let mut rows = self.input.all(cx, run)?;
        Ok(crate::sql::budget::Grave(scan_output(
            run.plan,
            rows.take(),
        )))
    }
}

/// A plain scan's candidates as its output rows: pruned (plan::prune), the
/// columns its join reads — which a row the storage scan narrowed already
/// (exactly that many values: a whole row has more) holds as it is.
fn scan_output(plan: &Plan, items: Vec<Candidate>) -> Vec<Row> {
    let rows = items.into_iter().map(|(r, _)| r);
    match plan.scan_columns() {
        Some(cols) if cols.len() < plan.source.scope.cols.len() => rows
            .map(|mut r| {
                if r.len() == cols.len() {
                    return r;
                }
                cols.iter()
                    .map(|&c| {
                        r.get_mut(c)
                            .map_or(Value::Null, |v| std::mem::replace(v, Value::Null))
                    })
                    .collect()
            })
            .collect(),
        _ => rows.collect(),
    }
}

impl<'p> Block<'p> {
    /// Prepare the block's expressions and choose its path.
    fn open(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<()> {
        // A vector search whose WHERE selects few rows by key or B-tree
        // ranks those rows exactly; one filtered by MATCH falls back to
        // the MATCH's hits; any other falls back to a scan.
        self.path = match &self.plan.index_path {
            Some(IndexPath::Vector { .. }) if super::prefilter(cx, self.plan)? => None,
            p => p.as_ref(),
        };
        let ex = Exprs::new(cx, self.plan, self.outer)?;
        let table = streamed_table(self.plan, self.path, &ex);
        self.chain = Some(chain(self.node, self.plan, table, self.outer));
        self.ex = Some(ex);
        Ok(())
    }

    /// The next batch of the chain.
    fn pull(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<Vec<Row>>> {
        let (Some(ex), Some(chain)) = (&self.ex, &mut self.chain) else {
            return Ok(None);
        };
        let host = SessionHost::new(cx.session, cx.engine);
        let run = Run {
            plan: self.plan,
            ex,
            outer: self.outer,
            host: &host,
            path: self.path,
        };
        chain.next(cx, &run)
    }

    /// Every row of the chain.
    fn pull_all(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Vec<Row>> {
        let (Some(ex), Some(chain)) = (&self.ex, &mut self.chain) else {
            return Ok(Vec::new());
        };
        let host = SessionHost::new(cx.session, cx.engine);
        let run = Run {
            plan: self.plan,
            ex,
            outer: self.outer,
            host: &host,
            path: self.path,
        };
        Ok(collect(chain.as_mut(), cx, &run)?.take())
    }

    /// The first pull: the chain put together, or the rows made at once
    /// when they must be seen whole before any is passed on.
    fn start(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<()> {
        if self.whole && self.plan.is_plain_scan() {
            // A scan a running recursive CTE reads every round runs once.
            if let Some(rows) = crate::sql::exec::recursive::cached_scan(self.node) {
                self.meter.off();
                self.made = Some(Made::new(rows));
                return Ok(());
            }
        }
        self.open(cx)?;
        if let (Some(IndexPath::Vector { .. }), Some(limit)) = (self.path, self.plan.limit) {
            let rows = self.pull_all(cx)?;
            if rows.len() >= limit {
                self.made = Some(Made::new(rows));
                return Ok(());
            }
            // Too few survivors of the index's candidates: the exact path.
            drop(rows);
            self.path = self.plan.match_path.as_ref();
            let table = self
                .ex
                .as_ref()
                .and_then(|ex| streamed_table(self.plan, self.path, ex));
            self.chain = Some(chain(self.node, self.plan, table, self.outer));
        }
        if self.whole && self.plan.is_plain_scan() {
            // Kept if a running recursive CTE reads it every round.
            let rows = self.pull_all(cx)?;
            crate::sql::exec::recursive::remember_scan(self.node, &rows)?;
            self.made = Some(Made::new(rows));
        }
        Ok(())
    }
}

impl Operator for Block<'_> {
    fn take_all(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<Vec<Row>>> {
        let start = self.meter.start();
        if self.ex.is_none() && self.made.is_none() {
            self.start(cx)?;
        }
        // Rows made whole already (a scan a join drains) go whole; so do
        // the chain's, made at once (a plain scan's are never cut into
        // batches to be joined again).
        let rows = match self.made.as_mut() {
            Some(m) => m.rest(),
            None => self.pull_all(cx)?,
        };
        self.meter.step(
            start,
            rows.len(),
            rows.len().div_ceil(crate::sql::exec::op::BATCH_ROWS),
        );
        Ok(Some(rows))
    }

    fn next(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<Batch>> {
        let start = self.meter.start();
        if self.ex.is_none() && self.made.is_none() {
            self.start(cx)?;
        }
        let batch = match &mut self.made {
            Some(m) => m.next_batch(),
            None => self.pull(cx)?.and_then(Batch::of),
        };
        self.meter.step(
            start,
            batch.as_ref().map_or(0, Batch::len),
            usize::from(batch.is_some()),
        );
        Ok(batch)
    }
}
