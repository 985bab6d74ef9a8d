//! The plan of a query: the types binding produces and execution reads.
//!
//! Owns the plan tree ([`Node`]: query blocks, joins, set operations,
//! recursive unions and their working tables), the statement's table of
//! planned subqueries ([`Subqueries`], named by id from expressions), the
//! facts execution asks of a plan (output columns and collations, whether
//! a join's right side can be read by key) and EXPLAIN's rendering of it.
//! Binding the AST into a plan is [`bind`] (with the query block in
//! [`block`], recursive CTEs in [`recursive`], window placement rules in
//! [`window`], table-function arguments in [`series`]).
//!
//! Never reads table rows, runs a plan or names the executor
//! ([`crate::sql::exec`] depends on this module, not the reverse).

use crate::error::{SqlError, SqlResult};
use crate::sql::expr::CExpr;
use crate::types::ColumnKind;

pub mod bind;
pub mod block;
pub mod recursive;
pub mod series;
pub mod window;

pub use bind::{base_table_at, columns_read, prune, push_where, union_kind, Planner};
pub use block::{Plan, Values};

/// A node of a query plan.
pub enum Node {
    /// A query block: scan or input → filter → aggregate → project → sort → limit.
    Block(Box<block::Plan>),
    /// A join of two inputs; output rows are left columns then right columns.
    Join(Box<Join>),
    /// `left UNION [ALL] right`.
    Union(Box<Union>),
    /// A recursive CTE: seed, then its recursive blocks to a fixed point.
    Recursive(Box<recursive::Recursive>),
    /// The previous round's rows, read by a recursive CTE's own blocks.
    WorkTable(Box<recursive::WorkTable>),
}

/// Join kinds MySQL has (FULL OUTER is not one of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    Left,
    Right,
}

/// A join of two inputs.
pub struct Join {
    pub kind: JoinKind,
    pub left: Node,
    pub right: Node,
    pub left_width: usize,
    pub right_width: usize,
    /// Equality keys: (expression over the left row, expression over the
    /// right row). Non-empty: a hash join.
    pub keys: Vec<(CExpr, CExpr)>,
    /// The rest of the join condition, over the concatenated row.
    pub residual: Vec<CExpr>,
}

/// Set operations MySQL 8 has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOp {
    Union,
    Intersect,
    Except,
}

/// A UNION / INTERSECT / EXCEPT of two inputs with the same number of
/// columns.
pub struct Union {
    pub op: SetOp,
    pub left: Node,
    pub right: Node,
    pub all: bool,
    pub columns: Vec<(String, ColumnKind)>,
}

/// An output column of a node.
#[derive(Debug, Clone)]
pub struct OutCol {
    pub name: String,
    pub kind: ColumnKind,
}

impl Node {
    /// Output columns.
    pub fn columns(&self) -> Vec<OutCol> {
        match self {
            Node::Block(p) => p
                .projection
                .iter()
                .map(|(n, _, k)| OutCol {
                    name: n.clone(),
                    kind: *k,
                })
                .collect(),
            Node::Join(j) => {
                let mut v = j.left.columns();
                v.extend(j.right.columns());
                v
            }
            Node::Union(u) => u
                .columns
                .iter()
                .map(|(n, k)| OutCol {
                    name: n.clone(),
                    kind: *k,
                })
                .collect(),
            Node::Recursive(r) => r.columns.clone(),
            Node::WorkTable(w) => w.columns.clone(),
        }
    }

    /// Number of output columns.
    pub fn width(&self) -> usize {
        match self {
            Node::Block(p) => p.projection.len(),
            Node::Join(j) => j.left_width + j.right_width,
            Node::Union(u) => u.columns.len(),
            Node::Recursive(r) => r.columns.len(),
            Node::WorkTable(w) => w.columns.len(),
        }
    }

    /// EXPLAIN lines, indented by depth; with `stats` (EXPLAIN ANALYZE)
    /// each node's line ends with what it did.
    pub fn explain(
        &self,
        depth: usize,
        stats: Option<&Stats>,
        subs: &Subqueries,
        out: &mut Vec<String>,
    ) {
        let pad = "  ".repeat(depth);
        let note = stats
            .map(|s| {
                let st = s
                    .get(&(self as *const Node as usize))
                    .copied()
                    .unwrap_or_default();
                format!(
                    " (actual rows={} loops={} time={:.3} ms)",
                    st.rows,
                    st.loops,
                    st.time.as_secs_f64() * 1e3
                )
            })
            .unwrap_or_default();
        match self {
            Node::Block(p) => block::explain_block(p, depth, stats, subs, &note, out),
            Node::Join(j) => {
                let kind = match j.kind {
                    JoinKind::Inner => "inner",
                    JoinKind::Left => "left outer",
                    JoinKind::Right => "right outer",
                };
                if j.keys.is_empty() {
                    out.push(format!(
                        "{pad}Nested Loop Join ({kind}{}){note}",
                        if j.residual.is_empty() {
                            ", no condition".to_string()
                        } else {
                            format!(", {} condition(s)", j.residual.len())
                        }
                    ));
                } else {
                    out.push(format!(
                        "{pad}Hash Join ({kind}, {} key(s){}{}){note}",
                        j.keys.len(),
                        if j.residual.is_empty() {
                            String::new()
                        } else {
                            format!(", {} residual condition(s)", j.residual.len())
                        },
                        if lookup_key(j).is_some() {
                            format!(
                                "; right side by primary key (prefix) when the left has at most {} keys (or an eighth of its rows)",
                                LOOKUP_JOIN_MAX_KEYS
                            )
                        } else {
                            String::new()
                        }
                    ));
                }
                for c in &j.residual {
                    explain_subqueries(c, depth + 1, stats, subs, out);
                }
                j.left.explain(depth + 1, stats, subs, out);
                j.right.explain(depth + 1, stats, subs, out);
            }
            Node::Union(u) => {
                let op = match u.op {
                    SetOp::Union => "Union",
                    SetOp::Intersect => "Intersect",
                    SetOp::Except => "Except",
                };
                out.push(format!(
                    "{pad}{op}{}{note}",
                    if u.all { " All" } else { " (distinct)" }
                ));
                u.left.explain(depth + 1, stats, subs, out);
                u.right.explain(depth + 1, stats, subs, out);
            }
            Node::Recursive(r) => r.explain(&pad, &note, depth, stats, subs, out),
            Node::WorkTable(w) => {
                out.push(format!(
                    "{pad}Scan of recursive working table {}{note}",
                    w.name
                ));
            }
        }
    }
}

/// What each node did in one run (EXPLAIN ANALYZE), by node address.
pub type Stats = std::collections::HashMap<usize, Stat>;

/// Rows produced, times run, and time spent (including inputs).
#[derive(Debug, Default, Clone, Copy)]
pub struct Stat {
    pub rows: u64,
    pub loops: u64,
    pub time: std::time::Duration,
}

/// A subquery of an expression, planned: entered in the statement's
/// [`Subqueries`] and named by a [`crate::sql::expr::SubqueryRef`] in the expression
/// (which also says what it reads of the outer row).
pub struct SubPlan {
    pub node: Node,
}

/// The planned subqueries of one statement, by [`crate::sql::expr::SubqueryRef::id`].
/// Append-only while the statement lives, so an id stays valid wherever
/// push-down moves the conjunct holding it; each plan sits behind its own
/// `Arc` so a running subquery does not borrow the table (its node's
/// address, which EXPLAIN ANALYZE keys statistics by, never moves).
#[derive(Default)]
pub struct Subqueries(Vec<std::sync::Arc<SubPlan>>);

impl Subqueries {
    /// Enter a planned subquery; its id.
    pub fn add(&mut self, sp: SubPlan) -> usize {
        self.0.push(std::sync::Arc::new(sp));
        self.0.len() - 1
    }

    /// The plan of subquery `id`.
    pub fn get(&self, id: usize) -> SqlResult<std::sync::Arc<SubPlan>> {
        self.0
            .get(id)
            .cloned()
            .ok_or_else(|| SqlError::internal(format!("no planned subquery {id}")))
    }
}

/// EXPLAIN lines for the subqueries inside an expression.
pub fn explain_subqueries(
    e: &CExpr,
    depth: usize,
    stats: Option<&Stats>,
    subs: &Subqueries,
    out: &mut Vec<String>,
) {
    e.walk(&mut |x| {
        let sp = match x {
            CExpr::Scalar(sp) | CExpr::Exists(sp, _) | CExpr::InSub(_, sp, _) => sp,
            _ => return,
        };
        let what = match x {
            CExpr::Scalar(_) => "Scalar Subquery",
            CExpr::Exists(..) => "Exists Subquery",
            _ => "In Subquery",
        };
        out.push(format!(
            "{}{what} ({})",
            "  ".repeat(depth),
            if sp.refs.is_empty() {
                "run once"
            } else {
                "correlated: run per row"
            }
        ));
        match subs.get(sp.id) {
            Ok(p) => p.node.explain(depth + 1, stats, subs, out),
            Err(e) => out.push(format!("{}{}", "  ".repeat(depth + 1), e.message)),
        }
    });
}

/// The non-binary collation of each output column of `node`: a block's
/// projections'; a set operation's where all its blocks agree (a `_bin`
/// side wins, as MySQL aggregates two column collations). Iterative: a
/// set operation may chain thousands of blocks.
pub fn out_collations(node: &Node) -> Vec<Option<crate::collation::Collation>> {
    let mut out: Option<Vec<Option<crate::collation::Collation>>> = None;
    let mut stack = vec![node];
    while let Some(n) = stack.pop() {
        let leaf: &[Option<crate::collation::Collation>] = match n {
            Node::Union(u) => {
                stack.push(&u.right);
                stack.push(&u.left);
                continue;
            }
            Node::Block(p) => &p.out_colls,
            Node::Recursive(r) => &r.colls,
            Node::WorkTable(w) => &w.colls,
            Node::Join(_) => &[],
        };
        out = Some(match out {
            None => leaf.to_vec(),
            Some(acc) => acc
                .iter()
                .enumerate()
                .map(|(i, a)| a.filter(|_| leaf.get(i).copied().flatten() == *a))
                .collect(),
        });
    }
    out.unwrap_or_default()
}

/// Most distinct left keys for which the right input is read by primary
/// key (an index nested-loop join, batched) instead of scanned, whatever
/// the right table's size; a larger table allows up to an eighth of its
/// rows ([`lookup_key_limit`]): a keyed read costs a few scanned rows.
pub const LOOKUP_JOIN_MAX_KEYS: usize = 8192;

/// How many distinct keys a lookup join reads `rows`-row table by.
pub fn lookup_key_limit(rows: u64) -> usize {
    LOOKUP_JOIN_MAX_KEYS.max(usize::try_from(rows / 8).unwrap_or(usize::MAX))
}

/// For an inner or left join whose right input is a plain scan of a table
/// whose primary key (or its first column) is a join key: that key's
/// position among the join keys, the scan and its table.
pub fn lookup_key(j: &Join) -> Option<(usize, &block::Plan, &crate::catalog::TableDef)> {
    if j.kind == JoinKind::Right {
        return None;
    }
    let Node::Block(p) = &j.right else {
        return None;
    };
    let t = p.source.table.as_ref()?;
    if !p.is_plain_scan() || t.pk.is_empty() || t.has_hidden_pk() {
        return None;
    }
    j.keys
        .iter()
        .position(|(_, r)| matches!(r, CExpr::Col(c) if *c == t.pk[0]))
        .map(|i| (i, &**p, t))
}
