//! Executing a plan ([`crate::sql::plan::Node`]) into rows.
//!
//! A plan runs as a tree of operators ([`op`]: the interface, batches of
//! at most [`BATCH_ROWS`] rows, EXPLAIN ANALYZE figures) built from it by
//! [`build`], the one place that maps each node to its operator: query
//! blocks as chains of operators ([`block`]), the join algorithms (hash
//! join on equality keys, nested loop otherwise, the right side read by
//! key when few left keys; inner, left and right outer), UNION /
//! INTERSECT / EXCEPT, recursive unions ([`recursive`]), window functions
//! ([`window`]), table functions ([`series`]), parallel aggregate scans
//! ([`parallel`]), and running the subqueries inside expressions (found by
//! id in the statement's [`crate::sql::plan::Subqueries`]): uncorrelated
//! ones once per run of their block, correlated ones once per row, each
//! turned into a literal (or a materialized set for `IN`) before the
//! expression is evaluated. An operator that must run a node below it
//! asks the [`Exec`] (which builds through [`build`]), so no operator
//! names the builder and the imports run one way. Never plans (the plan
//! is read, not changed) and never writes (row locks of `FOR UPDATE` are
//! taken by the block's scan).

use crate::error::SqlResult;
use crate::sql::plan::bind::Planner;
use crate::sql::plan::{Node, Stats};
use crate::sql::Ctx;
use crate::types::{Column, ColumnKind, QueryResult, Value};

pub mod agg;
pub mod agg_args;
mod apply;
pub mod block;
mod build;
mod join;
pub mod keys;
mod memo;
pub mod op;
pub mod parallel;
pub mod recursive;
mod recursive_join;
pub mod series;
mod set_op;
pub mod unit;
pub mod window;
pub mod window_slide;
pub mod window_stream;

pub use apply::{all_hold, bind_row, prepare, Prepared};
#[allow(
    unused_imports,
    reason = "the operators' shared contract: exec::analyzing()"
)]
pub(crate) use op::analyzing;
pub(crate) use op::record;
pub use op::{Exec, BATCH_ROWS};

impl<'c, 'a> Exec<'c, 'a> {
    /// Run plans over `cx` whose subqueries the planner left in
    /// `subqueries`.
    pub fn new(cx: &'c mut Ctx<'a>, subqueries: crate::sql::plan::Subqueries) -> Self {
        Exec {
            cx,
            subqueries,
            table_rows: Default::default(),
            memo: Default::default(),
            build: build::build,
            block: block::chain::operator,
        }
    }
}

/// Run a node with `outer` as the row of the enclosing query (empty at the
/// top level): its operator tree built ([`build`]) and drained.
pub fn run(cx: &mut Exec<'_, '_>, node: &Node, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    cx.run(node, outer)
}

/// Run `node` to the end (EXPLAIN ANALYZE), returning what each operator
/// did.
pub fn analyze(cx: &mut Exec<'_, '_>, node: &Node) -> SqlResult<Stats> {
    op::start_analyzing();
    let r = run(cx, node, &[]);
    let stats = op::stop_analyzing();
    r.map(|_| stats)
}

/// Execute a query statement.
pub fn query(cx: &mut Ctx<'_>, q: &sqlparser::ast::Query) -> SqlResult<QueryResult> {
    let mut planner = Planner::new(cx);
    let node = planner.plan_query(q, None)?;
    let subqueries = planner.into_subqueries();
    let rows = if cx.session.describe_only {
        Vec::new()
    } else {
        run(&mut Exec::new(cx, subqueries), &node, &[])?
    };
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
