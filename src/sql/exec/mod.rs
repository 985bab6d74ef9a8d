//! Executing a plan ([`crate::sql::plan::Node`]) into rows.
//!
//! Owns running each node: query blocks ([`block`]), the join algorithms
//! (hash join on equality keys, nested loop otherwise, the right side read
//! by key when few left keys; inner, left and right outer), UNION /
//! INTERSECT / EXCEPT, recursive unions ([`recursive`]), window functions
//! ([`window`]), table functions ([`series`]), parallel aggregate scans
//! ([`parallel`]), and running the subqueries inside expressions (found by
//! id in the statement's [`crate::sql::plan::Subqueries`]): uncorrelated
//! ones once per run of their block, correlated ones once per row, each
//! turned into a literal (or a materialized set for `IN`) before the
//! expression is evaluated. Never plans (the plan is read, not changed)
//! and never writes (row locks of `FOR UPDATE` are taken by the block's
//! scan).

use crate::error::SqlResult;
use crate::sql::budget::Reservation;
use crate::sql::plan::bind::Planner;
use crate::sql::plan::{Node, Stage, Stat, Stats};
use crate::sql::Ctx;
use crate::types::{Column, ColumnKind, QueryResult, Value};

pub mod agg;
pub mod agg_args;
mod apply;
pub mod block;
mod join;
pub mod keys;
pub mod parallel;
pub mod recursive;
pub mod series;
mod set_op;
pub mod window;
pub mod window_slide;

pub use apply::{bind_row, prepare, Prepared};

/// What a plan runs with: the statement's context (which it derefs to),
/// the statement's planned subqueries (expressions name them by id) and
/// the table-function rows made so far (held until the statement ends).
pub struct Exec<'c, 'a> {
    cx: &'c mut Ctx<'a>,
    pub subqueries: crate::sql::plan::Subqueries,
    pub table_rows: series::Made,
}

impl<'c, 'a> Exec<'c, 'a> {
    /// Run plans over `cx` whose subqueries the planner left in
    /// `subqueries`.
    pub fn new(cx: &'c mut Ctx<'a>, subqueries: crate::sql::plan::Subqueries) -> Self {
        Exec {
            cx,
            subqueries,
            table_rows: Default::default(),
        }
    }
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

/// Run a node with `outer` as the row of the enclosing query (empty at the
/// top level).
pub fn run(cx: &mut Exec<'_, '_>, node: &Node, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    crate::sql::stack::descend(|| run_guarded(cx, node, outer))
}

fn run_guarded(cx: &mut Exec<'_, '_>, node: &Node, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    // A scan a running recursive CTE reads every round runs once.
    let is_block = matches!(node, Node::Block(_));
    if is_block {
        if let Some(rows) = recursive::cached_scan(node) {
            return Ok(rows);
        }
    }
    let start = analyzing().then(std::time::Instant::now);
    let rows = run_node(cx, node, outer)?;
    if let Some(start) = start {
        record(
            node,
            Stage::Node,
            Stat {
                rows: rows.len() as u64,
                batches: rows.len().div_ceil(BATCH_ROWS) as u64,
                loops: 1,
                time: start.elapsed(),
                peak_bytes: 0,
            },
        );
    }
    if is_block {
        recursive::remember_scan(node, &rows)?;
    }
    Ok(rows)
}

thread_local! {
    /// Per-node statistics while an EXPLAIN ANALYZE runs on this thread
    /// (a statement runs on one thread from start to end).
    static ANALYZE: std::cell::RefCell<Option<Stats>> = const { std::cell::RefCell::new(None) };
}

/// Run `node` to the end (EXPLAIN ANALYZE), returning what each node did.
pub fn analyze(cx: &mut Exec<'_, '_>, node: &Node) -> SqlResult<Stats> {
    ANALYZE.with(|a| *a.borrow_mut() = Some(Stats::new()));
    let r = run(cx, node, &[]);
    let stats = ANALYZE.with(|a| a.borrow_mut().take()).unwrap_or_default();
    r.map(|_| stats)
}

fn run_node(cx: &mut Exec<'_, '_>, node: &Node, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    match node {
        Node::Block(p) => block::run(cx, p, outer),
        Node::Join(j) => join::join(cx, j, outer),
        Node::Union(u) => {
            // Both inputs and the DISTINCT keys are charged to the
            // statement's budget while the set operation runs.
            let mut mem = Reservation::new();
            let rows = run(cx, &u.left, outer)?;
            mem.add_rows(&rows)?;
            let right = run(cx, &u.right, outer)?;
            mem.add_rows(&right)?;
            set_op::set_operation(node, u, rows, right, &mut mem)
        }
        Node::Recursive(r) => recursive::run(cx, r, outer),
        Node::WorkTable(w) => recursive::run_work(w),
    }
}

/// Most rows in one batch an operator passes to its parent.
pub const BATCH_ROWS: usize = 1024;

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

/// Execute a query statement.
pub fn query(cx: &mut Ctx<'_>, q: &sqlparser::ast::Query) -> SqlResult<QueryResult> {
    let mut planner = Planner::new(cx);
    let node = planner.plan_query(q, None)?;
    let subqueries = planner.into_subqueries();
    let rows = run(&mut Exec::new(cx, subqueries), &node, &[])?;
    let float_decimals = match &node {
        Node::Block(p) => p
            .projection
            .iter()
            .map(|(_, e, k)| match k {
                ColumnKind::Float => {
                    crate::sql::plan::block::double_decimals(e, &p.source, &p.aggs)
                }
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(QueryResult {
        float_decimals,
        columns: node
            .columns()
            .into_iter()
            .map(|c| Column {
                name: c.name,
                kind: c.kind,
            })
            .collect(),
        rows,
        ..Default::default()
    })
}
