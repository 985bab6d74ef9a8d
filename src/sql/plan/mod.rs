//! The plan of a query: the types binding produces and execution reads.
//!
//! Owns the plan tree's types, which refer to each other and so live in
//! this one file: [`Node`] (query blocks, joins, set operations,
//! recursive unions and their working tables), the query block ([`Plan`],
//! [`Source`], [`Values`]), [`Recursive`] / [`WorkTable`]; the statement's
//! table of planned subqueries ([`Subqueries`], named by id from
//! expressions); and the facts execution asks of a plan (output columns
//! and collations, whether a join's right side can be read by key, the
//! columns a block reads, its access path when a filter is added).
//! Binding the AST into a plan is [`bind`] (a query block in [`block`],
//! recursive CTEs' rules in [`recursive`], push-down in [`rewrite`],
//! window placement in [`window`], table-function arguments in
//! [`series`]); EXPLAIN is [`explain`] (Tributary's lines) and
//! [`explain_tree`] (MySQL's `FORMAT=TREE`, its expressions printed by
//! [`explain_expr`]). Imports inside run one way:
//! `bind` → `block` → `rewrite` / `recursive` / `window` / `series` →
//! this file.
//!
//! Never reads table rows, runs a plan or names the executor
//! ([`crate::sql::exec`] depends on this module, not the reverse), and
//! names none of its own submodules but the leaf rule `window`.

use std::sync::{Arc, Mutex};

use crate::catalog::TableDef;
use crate::error::{SqlError, SqlResult};
use crate::sql::access::{self, Access};
use crate::sql::expr::{AggCall, CExpr, Scope};
use crate::sql::host::SessionHost;
use crate::types::{ColumnKind, DataType, Value};

pub mod bind;
pub mod block;
pub mod explain;
pub mod explain_expr;
pub mod explain_tree;
pub mod prune;
pub mod recursive;
pub mod rewrite;
pub mod series;
pub mod window;

/// A node of a query plan.
pub enum Node {
    /// A query block: scan or input → filter → aggregate → project → sort → limit.
    Block(Box<Plan>),
    /// A join of two inputs; output rows are left columns then right columns.
    Join(Box<Join>),
    /// `left UNION [ALL] right`.
    Union(Box<Union>),
    /// A recursive CTE: seed, then its recursive blocks to a fixed point.
    Recursive(Box<Recursive>),
    /// The previous round's rows, read by a recursive CTE's own blocks.
    WorkTable(Box<WorkTable>),
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

impl Join {
    /// The columns each input must give when the join's output columns
    /// `needed` are read above it: those, plus what its condition reads
    /// (the residual over the joined row, each side's keys).
    pub fn side_needs(&self, needed: &[bool]) -> (Vec<bool>, Vec<bool>) {
        let lw = self.left_width;
        let mut all = needed.to_vec();
        all.resize(lw + self.right_width, false);
        for c in &self.residual {
            mark_columns(c, &mut all);
        }
        let mut r = all.split_off(lw);
        let mut l = all;
        for (a, b) in &self.keys {
            mark_columns(a, &mut l);
            mark_columns(b, &mut r);
        }
        (l, r)
    }
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
}

/// What each operator did in one run (EXPLAIN ANALYZE), by the address
/// of the plan node it belongs to and its [`Stage`] in that node: a query
/// block is several operators (scan, filter, aggregate, …), every other
/// node one ([`Stage::Node`]). Keyed by plan, not by operator instance, so
/// the runs of a correlated subquery (an operator tree built per outer
/// row) add up under one line.
pub type Stats = std::collections::HashMap<(usize, Stage), Stat>;

/// Which operator of a plan node a [`Stat`] belongs to. A query block's
/// operators, from its input up: [`Stage::Scan`] (table, key range, index
/// search, VALUES or the input node), [`Stage::Filter`],
/// [`Stage::Aggregate`], [`Stage::Window`], [`Stage::Project`],
/// [`Stage::Sort`] (also a top-N), [`Stage::Distinct`], [`Stage::Limit`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    /// The whole node (a join, a set operation, a recursive union, a
    /// working-table scan, or a query block as its parent sees it).
    Node,
    Scan,
    Filter,
    Aggregate,
    Window,
    Project,
    Sort,
    Distinct,
    Limit,
}

/// What one operator did: rows it produced, batches it produced, times it
/// was run (opened), time spent (including its inputs), and the most
/// bytes it held at once (its charge to the statement's memory budget).
#[derive(Debug, Default, Clone, Copy)]
pub struct Stat {
    pub rows: u64,
    pub batches: u64,
    pub loops: u64,
    pub time: std::time::Duration,
    pub peak_bytes: u64,
}

/// A subquery of an expression, planned: entered in the statement's
/// [`Subqueries`] and named by a [`crate::sql::expr::SubqueryRef`] in the expression
/// (which also says what it reads of the outer row).
pub struct SubPlan {
    pub node: Node,
    /// Whether its answer is a function of the outer values it reads
    /// (no volatile call, no `@v :=` assignment): a correlated run may
    /// then be answered from an earlier run with the same values.
    pub memo: bool,
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
pub fn lookup_key(j: &Join) -> Option<(usize, &Plan, &crate::catalog::TableDef)> {
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
    // The right key is over the scan's output (narrower than the table
    // once pruned): the key column is the output column showing `pk[0]`.
    let pk_at = p
        .projection
        .iter()
        .position(|(_, e, _)| matches!(e, CExpr::Col(c) if *c == t.pk[0]))?;
    j.keys
        .iter()
        .position(|(_, r)| matches!(r, CExpr::Col(c) if *c == pk_at))
        .map(|i| (i, &**p, t))
}

/// A resolved FROM clause: no table, one base table, or another node's
/// output.
pub struct Source {
    pub table: Option<TableDef>,
    pub alias: String,
    pub scope: Scope,
    /// Kind of each scope column.
    pub kinds: Vec<ColumnKind>,
    /// Scope positions `*` expands to, in order.
    pub star: Vec<usize>,
    /// The node read instead of a table.
    pub input: Option<Box<Node>>,
    /// The rows of a table function (`generate_series`), made when the
    /// block runs, read instead of a table.
    pub values: Option<Values>,
}

/// The rows of a table function, described (the executor makes them):
/// `count` integers from `start`, `step` apart; with how EXPLAIN names it.
pub struct Values {
    pub label: String,
    pub kind: ColumnKind,
    pub start: i64,
    pub step: i64,
    pub count: u64,
}

impl Source {
    /// `SELECT` without FROM: one row, no columns.
    pub fn none() -> Source {
        Source::computed("", std::iter::empty())
    }

    /// A source of no table whose columns `(name, kind)` are all named by
    /// `alias`; the caller says where its rows come from (`input`,
    /// `values`, or neither for one empty row).
    pub fn computed(alias: &str, cols: impl Iterator<Item = (String, ColumnKind)>) -> Source {
        let (names, kinds): (Vec<String>, Vec<ColumnKind>) = cols.unzip();
        Source {
            table: None,
            alias: alias.to_string(),
            star: (0..names.len()).collect(),
            scope: Scope {
                cols: names.into_iter().map(|n| (alias.to_string(), n)).collect(),
                hidden: Vec::new(),
                colls: Vec::new(),
            },
            kinds,
            input: None,
            values: None,
        }
    }

    /// Computed rows (`values`) under `alias` with columns `cols`.
    pub fn values(alias: &str, cols: &[(&str, ColumnKind)], values: Values) -> Source {
        Source {
            values: Some(values),
            ..Source::computed(alias, cols.iter().map(|(n, k)| (n.to_string(), *k)))
        }
    }

    /// A base table under `alias`.
    pub fn table(t: TableDef, alias: String) -> Source {
        let scope = Scope::of_table(&t, &alias);
        Source {
            kinds: t.columns.iter().map(|c| kind_of_type(&c.ty)).collect(),
            star: (0..t.columns.len()).collect(),
            table: Some(t),
            alias,
            scope,
            input: None,
            values: None,
        }
    }
}

/// A compiled single-table query.
pub struct Plan {
    pub source: Source,
    pub filter: Option<CExpr>,
    pub access: Access,
    /// Index-assisted candidate source (vector / full-text), if any.
    pub index_path: Option<crate::sql::search::IndexPath>,
    /// For a vector search filtered by a MATCH its full-text index
    /// answers: that full-text path, which evaluates the query exactly
    /// over the MATCH's hits instead of every row when the vector search
    /// does not yield k passing rows.
    pub match_path: Option<crate::sql::search::IndexPath>,
    pub projection: Vec<(String, CExpr, ColumnKind)>,
    pub aggs: Vec<AggCall>,
    pub matches: Vec<crate::sql::expr::MatchSpec>,
    /// For a block over a join: per MATCH slot, the base table its columns
    /// belong to and where that table's columns start in the joined row
    /// (the spec's columns are relative to it).
    pub match_tables: Vec<(TableDef, usize, crate::sql::expr::MatchSpec)>,
    pub group_by: Vec<CExpr>,
    pub having: Option<CExpr>,
    pub order_by: Vec<(CExpr, bool)>,
    pub limit: Option<usize>,
    pub offset: usize,
    pub aggregate: bool,
    pub distinct: bool,
    pub for_update: bool,
    /// Columns of the scanned table the plan reads (projection push-down:
    /// the others are not decoded); `None` reads all.
    pub needed: Option<Vec<bool>>,
    /// Columns the plan's expressions read — without the MATCH columns,
    /// whose scores an index hit already carries: what an index path must
    /// decode of each hit (nothing at all for `COUNT(*) … WHERE MATCH`).
    pub hit_needed: Option<Vec<bool>>,
    /// Each output column's collation when it is not binary (DISTINCT and
    /// UNION compare those by weight string); empty: all binary.
    pub out_colls: Vec<Option<crate::collation::Collation>>,
    /// A join leaf's scan that [`prune::narrow_block`] narrowed to the columns its
    /// join reads (its projection: those table columns, in order).
    pub pruned: bool,
}

/// The result kind of a column of SQL type `t`.
pub fn kind_of_type(t: &DataType) -> ColumnKind {
    match t {
        DataType::Bool | DataType::Int | DataType::BigInt | DataType::Integer { .. } => {
            ColumnKind::Int
        }
        DataType::Date => ColumnKind::Date,
        DataType::Decimal(precision, scale) => ColumnKind::Decimal {
            precision: *precision,
            scale: *scale,
        },
        DataType::Float | DataType::Double => ColumnKind::Float,
        DataType::DateTime => ColumnKind::DateTime(None),
        DataType::DateTimeFsp(fsp) => ColumnKind::DateTime(Some(*fsp)),
        DataType::VecF32(_) | DataType::VecF64(_) => ColumnKind::Vector,
        DataType::Binary(_) | DataType::VarBinary(_) | DataType::Blob(_) => ColumnKind::Bytes,
        _ => ColumnKind::Text,
    }
}

/// A plain scan of a base table (`SELECT * FROM t`), the leaf of a join
/// tree; predicates pushed into it later pick its access path.
pub fn scan_node(t: TableDef, alias: &str, for_update: bool) -> Node {
    Node::Block(Box::new(Plan::table_scan(t, alias, for_update)))
}

impl Plan {
    /// `SELECT * FROM t [FOR UPDATE]`: every column, in table order.
    pub fn table_scan(t: TableDef, alias: &str, for_update: bool) -> Plan {
        Plan::all_of(Source::table(t, alias.to_string()), for_update)
    }

    /// `SELECT * FROM source`.
    pub fn all_of(source: Source, for_update: bool) -> Plan {
        let projection = source
            .star
            .iter()
            .map(|&i| {
                (
                    source.scope.cols[i].1.clone(),
                    CExpr::Col(i),
                    source.kinds[i],
                )
            })
            .collect();
        Plan::scan(source, projection, for_update)
    }

    /// The read side of UPDATE / DELETE: a locking scan of `t` (current
    /// reads under row locks) filtered by `filter`, its access path chosen
    /// from the filter like a SELECT's.
    pub fn locking_scan(t: TableDef, filter: Option<CExpr>, host: &SessionHost<'_>) -> Plan {
        let alias = t.name.clone();
        let mut plan = Plan::table_scan(t, &alias, true);
        if let Some(f) = filter {
            plan.add_filter(f, host);
        }
        plan
    }
}

impl Plan {
    /// `k` when the plan is `… WHERE <only MATCH terms> ORDER BY <the
    /// searched MATCH> DESC LIMIT k` over a full-text index path: then the
    /// k best hits are all that can come out, and the index need not
    /// return more.
    pub fn relevance_top_k(&self) -> Option<usize> {
        let Some(crate::sql::search::IndexPath::FullText { slot, .. }) = &self.index_path else {
            return None;
        };
        // The filter may read this MATCH's score and constants only (then
        // every index hit passes it, or none does); another MATCH or a
        // column could reject hits, and the k best must then come from
        // further down.
        let only_scores = self.filter.as_ref().is_none_or(|f| {
            let mut ok = true;
            f.walk(&mut |x| {
                ok &= match x {
                    CExpr::Match(s) => s == slot,
                    CExpr::Col(_)
                    | CExpr::Outer(_)
                    | CExpr::Scalar(_)
                    | CExpr::Exists(..)
                    | CExpr::InSub(..)
                    | CExpr::InSet(..) => false,
                    _ => true,
                }
            });
            ok
        });
        let by_score = matches!(self.order_by.as_slice(), [(CExpr::Match(s), true)] if s == slot);
        if !only_scores
            || !by_score
            || self.aggregate
            || !window::prefix_safe(&self.aggs, &self.order_by)
            || self.distinct
            || self.having.is_some()
        {
            return None;
        }
        self.limit.map(|l| l.saturating_add(self.offset))
    }

    /// Whether the block computes window functions (its window operator
    /// runs after grouping, before DISTINCT / ORDER BY / LIMIT).
    pub fn windowed(&self) -> bool {
        self.aggs.iter().any(|a| a.window.is_some())
    }

    /// Whether the block's ORDER BY needs no sort of its own: the last
    /// window leaves the rows in that order ([`window::sorted_as`]) and no
    /// DISTINCT comes between. The executor skips the sort and EXPLAIN
    /// shows none.
    pub fn sorted_by_window(&self) -> bool {
        self.windowed() && !self.distinct && window::sorted_as(&self.aggs, &self.order_by)
    }

    /// A scan of a base table with no aggregate, order, limit, distinct or
    /// index path: a filter added to it changes nothing but the rows.
    pub fn is_plain_scan(&self) -> bool {
        self.source.table.is_some()
            && self.source.input.is_none()
            && !self.aggregate
            && self.order_by.is_empty()
            && self.limit.is_none()
            && self.offset == 0
            && !self.distinct
            && self.index_path.is_none()
            && self.matches.is_empty()
            && self.scan_columns().is_some()
    }

    /// A plain scan's output columns as source columns: every column in
    /// table order, or (once [`prune::narrow_block`] narrowed it) some of them in table
    /// order; `None` when the select list renames, reorders or computes
    /// columns (a derived table's, which is no plain scan).
    pub fn scan_columns(&self) -> Option<Vec<usize>> {
        let width = self.source.scope.cols.len();
        if !self.pruned && self.projection.len() != width {
            return None;
        }
        let mut cols = Vec::with_capacity(self.projection.len());
        for (_, e, _) in &self.projection {
            match e {
                CExpr::Col(c) if *c < width && cols.last().is_none_or(|l| l < c) => cols.push(*c),
                _ => return None,
            }
        }
        Some(cols)
    }

    /// A plain scan whose output column i is source column i: a filter
    /// over the output means the same over the source (not so once
    /// [`prune::narrow_block`] has narrowed it).
    pub fn is_unpruned_scan(&self) -> bool {
        self.is_plain_scan() && !self.pruned
    }

    /// A copy of a plain scan (to add a per-run key filter to).
    pub fn keyed_copy(&self) -> Plan {
        let source = Source {
            table: self.source.table.clone(),
            alias: self.source.alias.clone(),
            scope: self.source.scope.clone(),
            kinds: self.source.kinds.clone(),
            star: self.source.star.clone(),
            input: None,
            values: None,
        };
        let mut p = Plan::scan(source, self.projection.clone(), self.for_update);
        p.filter = self.filter.clone();
        p.access = self.access.clone();
        p.needed = self.needed.clone();
        p.hit_needed = self.hit_needed.clone();
        p.pruned = self.pruned;
        p
    }

    /// A full scan of `source`'s table producing `projection`; filters and
    /// access paths are added by the caller.
    fn scan(
        source: Source,
        projection: Vec<(String, CExpr, ColumnKind)>,
        for_update: bool,
    ) -> Plan {
        // A column read as is keeps its collation.
        let out_colls = projection
            .iter()
            .map(|(_, e, _)| match e {
                CExpr::Col(i) => Some(source.scope.collation(*i)).filter(|c| !c.is_binary()),
                _ => None,
            })
            .collect();
        Plan {
            source,
            filter: None,
            access: Access::FullScan,
            index_path: None,
            match_path: None,
            projection,
            aggs: Vec::new(),
            matches: Vec::new(),
            match_tables: Vec::new(),
            group_by: Vec::new(),
            having: None,
            order_by: Vec::new(),
            limit: None,
            offset: 0,
            aggregate: false,
            distinct: false,
            for_update,
            needed: None,
            hit_needed: None,
            out_colls,
            pruned: false,
        }
    }

    /// AND `c` into the filter and choose the access path again.
    pub fn add_filter(&mut self, c: CExpr, host: &SessionHost<'_>) {
        let c = fold_date_literals(c, &self.source.kinds);
        self.filter = Some(match self.filter.take() {
            None => c,
            Some(f) => CExpr::Bin(crate::sql::expr::BinOp::And, Box::new(f), Box::new(c)),
        });
        if let Some(t) = &self.source.table {
            self.access = access::choose(t, self.filter.as_ref(), host);
        }
    }
}

/// Mark in `out` the own-row columns `e` reads (subqueries included, by
/// the outer positions they read).
pub fn mark_columns(e: &CExpr, out: &mut Vec<bool>) {
    let w = out.len();
    let mark = |i: usize, out: &mut Vec<bool>| {
        if i < w {
            out[i] = true;
        }
    };
    e.walk(&mut |x| match x {
        CExpr::Col(i) => mark(*i, out),
        CExpr::Scalar(sp) | CExpr::Exists(sp, _) | CExpr::InSub(_, sp, _) => {
            for &r in &sp.refs {
                mark(r, out);
            }
        }
        _ => {}
    });
}

impl Plan {
    /// Projection push-down: the columns of its source this block reads;
    /// a base table decodes only those, a join input is told what it must
    /// produce.
    fn with_needed_columns(mut self) -> Plan {
        let width = self.source.scope.cols.len();
        let mut n = vec![false; width];
        let mut exprs: Vec<&CExpr> = self.projection.iter().map(|(_, e, _)| e).collect();
        exprs.extend(self.filter.iter());
        exprs.extend(self.having.iter());
        exprs.extend(self.group_by.iter());
        exprs.extend(self.order_by.iter().map(|(e, _)| e));
        exprs.extend(self.aggs.iter().filter_map(|a| a.arg.as_ref()));
        for w in self.aggs.iter().filter_map(|a| a.window.as_deref()) {
            exprs.extend(w.partition.iter().chain(w.order.iter().map(|(e, _)| e)));
            exprs.extend(w.default.iter());
        }
        for e in exprs {
            mark_columns(e, &mut n);
        }
        let by_exprs = n.clone();
        for m in &self.matches {
            for &c in &m.columns {
                if c < width {
                    n[c] = true;
                }
            }
        }
        for (t, off, _) in &self.match_tables {
            for &c in &t.pk {
                if off + c < width {
                    n[off + c] = true;
                }
            }
        }
        match self.source.input.as_deref_mut() {
            Some(node) => prune(node, &n),
            None if self.source.table.is_some() => {
                // An index path's hits, and the scan that answers the
                // query exactly instead (pre-filter, fallback).
                if self.index_path.is_some() {
                    self.hit_needed = Some(by_exprs);
                }
                self.needed = Some(n);
            }
            None => {}
        }
        self
    }
}

/// A text literal compared with a DATE / DATETIME column is parsed once
/// here instead of on every row: `d <= '1995-03-15'` compares the same way
/// (a comparison of a datetime with text parses the text, NULL when it is
/// not a datetime — such literals are left as they are).
pub fn fold_date_literals(e: CExpr, kinds: &[ColumnKind]) -> CExpr {
    use crate::sql::expr::BinOp::*;
    let is_date = |x: &CExpr| {
        matches!(x, CExpr::Col(i)
            if matches!(kinds.get(*i), Some(ColumnKind::Date | ColumnKind::DateTime(_))))
    };
    let parse = |x: CExpr| match x {
        CExpr::Lit(Value::Text(s)) => match crate::types::parse_datetime(&s) {
            Some(us) => CExpr::Lit(Value::DateTime(us)),
            None => CExpr::Lit(Value::Text(s)),
        },
        other => other,
    };
    e.rewrite(&mut |x| match x {
        CExpr::Bin(op @ (Eq | NotEq | Lt | LtEq | Gt | GtEq), a, b) if is_date(&a) => {
            CExpr::Bin(op, a, Box::new(parse(*b)))
        }
        CExpr::Bin(op @ (Eq | NotEq | Lt | LtEq | Gt | GtEq), a, b) if is_date(&b) => {
            CExpr::Bin(op, Box::new(parse(*a)), b)
        }
        CExpr::Between(x, lo, hi, n) if is_date(&x) => {
            CExpr::Between(x, Box::new(parse(*lo)), Box::new(parse(*hi)), n)
        }
        other => other,
    })
}

/// A filter with correlated references (`b.a_id = a.id` inside a
/// subquery) with each `Outer(i)` read as `outer(i)`, to choose its access
/// path for one run; `None` when it has no such reference (its path was
/// chosen at plan time).
pub(crate) fn correlated_filter(
    filter: Option<&CExpr>,
    outer: impl Fn(usize) -> Value,
) -> Option<CExpr> {
    let f = filter?;
    let mut has_outer = false;
    f.walk(&mut |x| has_outer |= matches!(x, CExpr::Outer(_)));
    has_outer.then(|| f.clone().map_outer(&outer))
}

/// Most rows a WHERE's key or B-tree range may yield for a vector search
/// to pre-filter: read those rows and rank them exactly (recall 1)
/// instead of walking the HNSW graph.
pub const PREFILTER_ROWS: usize = 2048;

/// The key or B-tree access path a filtered vector search may pre-filter
/// by, with its table (EXPLAIN shows it; the executor counts it).
pub(crate) fn prefilter_access(plan: &Plan) -> Option<(&TableDef, &Access)> {
    match (
        &plan.index_path,
        &plan.filter,
        &plan.source.table,
        &plan.access,
    ) {
        (Some(crate::sql::search::IndexPath::Vector { .. }), Some(_), _, Access::FullScan) => None,
        (Some(crate::sql::search::IndexPath::Vector { .. }), Some(_), Some(t), a) => Some((t, a)),
        _ => None,
    }
}
/// The rows of the previous round, shared by a [`Recursive`] node (which
/// fills it) and the [`WorkTable`] leaves of its recursive blocks.
pub(crate) type Cell = Arc<Mutex<Arc<Vec<Vec<Value>>>>>;

/// The leaf a recursive block reads its CTE through: the previous round's
/// rows.
#[derive(Clone)]
pub struct WorkTable {
    pub name: String,
    pub columns: Vec<OutCol>,
    pub colls: Vec<Option<crate::collation::Collation>>,
    pub(crate) rows: Cell,
}

impl WorkTable {
    /// The rows of the round being run.
    pub(crate) fn rows(&self) -> SqlResult<Vec<Vec<Value>>> {
        let g = self
            .rows
            .lock()
            .map_err(|_| SqlError::internal("recursive working table poisoned"))?;
        Ok(g.as_ref().clone())
    }
}

/// `seed UNION [ALL] recursive…`, iterated to a fixed point.
pub struct Recursive {
    pub name: String,
    pub all: bool,
    /// The non-recursive query blocks (one node: their set operation).
    pub seed: Node,
    /// The recursive query blocks, each reading `work`.
    pub steps: Vec<Node>,
    pub columns: Vec<OutCol>,
    pub colls: Vec<Option<crate::collation::Collation>>,
    /// The type the seed fixes for each column, where known: the
    /// recursive blocks' values are converted to it (a longer string is
    /// 1406 in strict mode, cut with warning 1265 otherwise).
    pub types: Vec<Option<DataType>>,
    /// `LIMIT count [OFFSET skip]` on the CTE's union (MySQL 8.0.19+):
    /// (skip, count); the rounds stop once `skip + count` rows exist.
    pub limit: Option<(usize, usize)>,
    pub(crate) work: Cell,
}

/// Tell a node which of its output columns are read above it: a plain
/// scan then decodes only those (plus what its own filter reads); a join
/// passes the request on, adding its keys' and conditions' columns.
pub fn prune(node: &mut Node, needed: &[bool]) {
    match node {
        Node::Block(p) if p.is_plain_scan() => {
            let width = p.source.scope.cols.len();
            let mut n = vec![false; width];
            let cols = p.scan_columns().unwrap_or_default();
            for (&c, _) in cols.iter().zip(needed).filter(|(_, need)| **need) {
                n[c] = true;
            }
            if let Some(f) = &p.filter {
                mark_columns(f, &mut n);
            }
            p.needed = Some(n);
        }
        Node::Join(j) => {
            let (l, r) = j.side_needs(needed);
            prune(&mut j.left, &l);
            prune(&mut j.right, &r);
        }
        // Blocks with their own select list and set operations read what
        // their own expressions need (decided when they were planned).
        Node::Block(_) | Node::Union(_) | Node::Recursive(_) | Node::WorkTable(_) => {}
    }
}
