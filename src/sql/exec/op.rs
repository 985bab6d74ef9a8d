//! The operator interface: what a plan runs with ([`Exec`]), the
//! [`Operator`] every node of a running plan is, the [`Batch`] operators
//! pass up, and the EXPLAIN ANALYZE figures each operator records
//! ([`record`], kept by [`Meter`]).
//!
//! A running plan is a tree of operators built from the plan by
//! [`crate::sql::exec::build`] (the one place that knows every operator);
//! a parent pulls batches from its children with [`Operator::next`] until
//! `None`, and may stop pulling early (a LIMIT, an EXISTS): what the child
//! has not produced is never computed. Batches are rows — `Vec<Value>`
//! each, at most [`BATCH_ROWS`] per batch, never empty — not columns:
//! decision 028 has the measurement.
//!
//! Code below the dispatcher that must run a plan node (a join runs its
//! sides, a subquery its plan) asks the [`Exec`] ([`Exec::run`],
//! [`Exec::open`]), which builds through the builder it was made with:
//! so no operator names the builder, and the imports of `exec` run one
//! way (tests/layering.rs).
//!
//! Never plans, never evaluates an expression, never names an operator.

use crate::error::SqlResult;
use crate::sql::budget;
use crate::sql::plan::{Node, Plan, Stage, Stat, Stats};
use crate::sql::Ctx;
use crate::types::Value;

/// Most rows in one batch an operator passes to its parent.
pub const BATCH_ROWS: usize = 1024;

/// One row of values.
pub type Row = Vec<Value>;

/// Rows an operator passes to its parent: at least one, at most
/// [`BATCH_ROWS`].
#[derive(Debug, Default)]
pub struct Batch {
    pub rows: Vec<Row>,
}

impl Batch {
    /// A batch of `rows` (1 to [`BATCH_ROWS`] of them).
    pub fn new(rows: Vec<Row>) -> Batch {
        debug_assert!(
            !rows.is_empty() && rows.len() <= BATCH_ROWS,
            "a batch holds 1 to {BATCH_ROWS} rows, not {}",
            rows.len()
        );
        Batch { rows }
    }

    /// `None` for no rows (an operator never passes an empty batch).
    pub fn of(rows: Vec<Row>) -> Option<Batch> {
        (!rows.is_empty()).then(|| Batch::new(rows))
    }

    pub fn len(&self) -> usize {
        self.rows.len()
    }
}

/// A node of a running plan.
pub trait Operator {
    /// The next batch of rows; `None` once there are no more (then again
    /// `None`). A parent may stop calling at any point: dropping the
    /// operator ends it.
    fn next(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<Batch>>;

    /// Every row still to come as one list, when the operator holds them
    /// already made (a materializing operator: join, set operation,
    /// recursive union): a parent that wants them all takes them without
    /// cutting them into batches and joining them again. `None` when the
    /// operator streams (then [`Operator::next`] is asked).
    fn take_all(&mut self, _cx: &mut Exec<'_, '_>) -> SqlResult<Option<Vec<Row>>> {
        Ok(None)
    }
}

/// An operator of a running plan, borrowing the plan (and the outer row).
pub type BoxOp<'p> = Box<dyn Operator + 'p>;

/// Builds the operator tree of a plan node, with `outer` as the row of the
/// enclosing query ([`crate::sql::exec::build::build`]).
pub type Builder = for<'p> fn(&'p Node, &'p [Value]) -> SqlResult<BoxOp<'p>>;

/// Builds the operator of a query block run on behalf of a plan node (a
/// copy of the node's block with a per-run key filter: a join's side read
/// by key), its figures recorded under that node's stages
/// ([`crate::sql::exec::block::chain::operator`]).
pub type BlockBuilder = for<'p> fn(&'p Node, &'p Plan, &'p [Value], bool) -> BoxOp<'p>;

/// Every row `op` produces, in order. A failing statement leaves the rows
/// taken so far to its teardown ([`budget::Grave`]).
pub fn drain(op: &mut dyn Operator, cx: &mut Exec<'_, '_>) -> SqlResult<Vec<Row>> {
    if let Some(all) = op.take_all(cx)? {
        return Ok(all);
    }
    let mut out: budget::Grave<Vec<Row>> = Default::default();
    while let Some(b) = op.next(cx)? {
        if out.is_empty() {
            out.0 = b.rows;
        } else {
            out.extend(b.rows);
        }
    }
    Ok(out.take())
}

/// Rows already made, passed on in batches (or whole to a parent that
/// takes them all). Each row is moved out of its slot as its batch goes.
pub struct Made {
    rows: budget::Grave<Vec<Row>>,
    at: usize,
}

impl Made {
    pub fn new(rows: Vec<Row>) -> Made {
        Made {
            rows: budget::Grave(rows),
            at: 0,
        }
    }

    /// The next batch of the rows.
    pub fn next_batch(&mut self) -> Option<Batch> {
        if self.at == 0 && self.rows.len() <= BATCH_ROWS {
            // All of it in one batch: no copy.
            self.at = usize::MAX;
            return Batch::of(self.rows.take());
        }
        let end = self.rows.len().min(self.at.saturating_add(BATCH_ROWS));
        if self.at >= end {
            return None;
        }
        let batch = self.rows[self.at..end]
            .iter_mut()
            .map(std::mem::take)
            .collect();
        self.at = end;
        Batch::of(batch)
    }

    /// The rows not yet passed on.
    pub fn rest(&mut self) -> Vec<Row> {
        let mut rows = self.rows.take();
        if self.at == usize::MAX {
            rows.clear();
        } else if self.at > 0 {
            rows.drain(..self.at.min(rows.len()));
        }
        self.at = usize::MAX;
        rows
    }
}

/// What a plan runs with: the statement's context (which it derefs to),
/// the statement's planned subqueries (expressions name them by id), the
/// table-function rows made so far (held until the statement ends), and
/// the builder of operator trees.
pub struct Exec<'c, 'a> {
    pub(super) cx: &'c mut Ctx<'a>,
    pub subqueries: crate::sql::plan::Subqueries,
    pub table_rows: super::series::Made,
    /// Answers of repeatable correlated subqueries (see `apply`).
    pub(super) memo: super::memo::Memo,
    pub(super) build: Builder,
    pub(super) block: BlockBuilder,
}

impl<'a> std::ops::Deref for Exec<'_, 'a> {
    type Target = Ctx<'a>;
    fn deref(&self) -> &Ctx<'a> {
        self.cx
    }
}

impl<'a> std::ops::DerefMut for Exec<'_, 'a> {
    fn deref_mut(&mut self) -> &mut Ctx<'a> {
        self.cx
    }
}

impl Exec<'_, '_> {
    /// The operator tree of `node`, not yet run.
    pub fn open<'p>(&self, node: &'p Node, outer: &'p [Value]) -> SqlResult<BoxOp<'p>> {
        (self.build)(node, outer)
    }

    /// Run `node` to the end with `outer` as the row of the enclosing
    /// query (empty at the top level): every row it produces.
    pub fn run(&mut self, node: &Node, outer: &[Value]) -> SqlResult<Vec<Row>> {
        crate::sql::stack::descend(|| {
            let mut op = self.open(node, outer)?;
            drain(op.as_mut(), self)
        })
    }

    /// The first rows `node` produces, at least `n` of them when it has
    /// that many: its operators are dropped once they have passed them on,
    /// so nothing past them is computed (an EXISTS needs one row, a scalar
    /// subquery two).
    pub fn run_first(&mut self, node: &Node, outer: &[Value], n: usize) -> SqlResult<Vec<Row>> {
        crate::sql::stack::descend(|| {
            let mut op = self.open(node, outer)?;
            let mut out = Vec::new();
            while out.len() < n {
                match op.next(self)? {
                    Some(b) if out.is_empty() => out = b.rows,
                    Some(b) => out.extend(b.rows),
                    None => break,
                }
            }
            Ok(out)
        })
    }

    /// Run the query block `plan` on behalf of `node` (whose stages'
    /// figures it adds to) to the end: every row it produces.
    pub fn run_block(&mut self, node: &Node, plan: &Plan, outer: &[Value]) -> SqlResult<Vec<Row>> {
        crate::sql::stack::descend(|| {
            let mut op = (self.block)(node, plan, outer, false);
            drain(op.as_mut(), self)
        })
    }
}

thread_local! {
    /// Per-operator statistics while an EXPLAIN ANALYZE runs on this
    /// thread (a statement runs on one thread from start to end).
    static ANALYZE: std::cell::RefCell<Option<Stats>> = const { std::cell::RefCell::new(None) };
}

/// Collect statistics on this thread from now on (EXPLAIN ANALYZE).
pub(super) fn start_analyzing() {
    ANALYZE.with(|a| *a.borrow_mut() = Some(Stats::new()));
}

/// The statistics collected since [`start_analyzing`]; collecting stops.
pub(super) fn stop_analyzing() -> Stats {
    ANALYZE.with(|a| a.borrow_mut().take()).unwrap_or_default()
}

/// Whether an EXPLAIN ANALYZE is collecting statistics on this thread
/// (operators skip their clock reads otherwise).
pub(crate) fn analyzing() -> bool {
    ANALYZE.with(|a| a.borrow().is_some())
}

/// Add what one operator (`stage` of `node`) did to the EXPLAIN ANALYZE
/// statistics: counts and times add up, the peak is the largest seen.
pub(crate) fn record(node: &Node, stage: Stage, did: Stat) {
    ANALYZE.with(|a| {
        if let Some(stats) = a.borrow_mut().as_mut() {
            let st = stats
                .entry((node as *const Node as usize, stage))
                .or_default();
            st.rows += did.rows;
            st.batches += did.batches;
            st.loops += did.loops;
            st.time += did.time;
            st.peak_bytes = st.peak_bytes.max(did.peak_bytes);
        }
    });
}

/// One operator's figures while it runs, recorded ([`record`]) as one
/// loop when it is dropped — only under EXPLAIN ANALYZE; otherwise it
/// reads no clock and records nothing.
pub struct Meter<'p> {
    node: &'p Node,
    stage: Stage,
    on: bool,
    st: Stat,
}

impl<'p> Meter<'p> {
    pub fn new(node: &'p Node, stage: Stage) -> Meter<'p> {
        Meter {
            node,
            stage,
            on: analyzing(),
            st: Stat::default(),
        }
    }

    /// Record nothing for this run (a scan whose rows were kept from an
    /// earlier run: it did not run again).
    pub fn off(&mut self) {
        self.on = false;
    }

    /// The clock at the start of a step (`None` when not analyzing).
    #[inline]
    pub fn start(&self) -> Option<std::time::Instant> {
        self.on.then(std::time::Instant::now)
    }

    /// A step that began at `start` produced `rows` rows in `batches`
    /// batches.
    #[inline]
    pub fn step(&mut self, start: Option<std::time::Instant>, rows: usize, batches: usize) {
        if let Some(s) = start {
            self.st.time += s.elapsed();
            self.st.rows += rows as u64;
            self.st.batches += batches as u64;
        }
    }

    /// The operator holds `bytes` now (its peak is kept).
    #[inline]
    pub fn holds(&mut self, bytes: u64) {
        self.st.peak_bytes = self.st.peak_bytes.max(bytes);
    }
}

impl Drop for Meter<'_> {
    fn drop(&mut self) {
        if self.on {
            self.st.loops = 1;
            record(self.node, self.stage, self.st);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Vec<Row> {
        (0..n).map(|i| vec![Value::Int(i as i64)]).collect()
    }

    /// Made rows go out in order, in batches of 1 to BATCH_ROWS rows, all
    /// of them once; what a parent takes whole after some batches is the
    /// rest.
    #[test]
    fn made_rows_go_out_in_bounded_batches() {
        for n in [
            0,
            1,
            2,
            BATCH_ROWS - 1,
            BATCH_ROWS,
            BATCH_ROWS + 1,
            3 * BATCH_ROWS + 7,
        ] {
            let mut m = Made::new(rows(n));
            let mut seen = Vec::new();
            let mut batches = 0;
            while let Some(b) = m.next_batch() {
                assert!((1..=BATCH_ROWS).contains(&b.len()), "{n}: {}", b.len());
                batches += 1;
                seen.extend(b.rows);
            }
            assert_eq!(seen, rows(n), "{n}");
            assert_eq!(batches, n.div_ceil(BATCH_ROWS), "{n}");
            assert!(m.next_batch().is_none());
            assert!(m.rest().is_empty());
            for taken in 0..3 {
                let mut m = Made::new(rows(n));
                let mut seen = Vec::new();
                for _ in 0..taken {
                    if let Some(b) = m.next_batch() {
                        seen.extend(b.rows);
                    }
                }
                seen.extend(m.rest());
                assert_eq!(seen, rows(n), "{n} after {taken} batches");
            }
        }
    }
}
