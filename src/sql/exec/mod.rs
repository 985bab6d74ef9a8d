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

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::error::{code, SqlError, SqlResult};
use crate::sql::budget::{self, Reservation};
use crate::sql::expr::{self, value_key, CExpr, EvalCtx, SubqueryRef, ValueSet};
use crate::sql::host::SessionHost;
use crate::sql::plan::{
    lookup_key, lookup_key_limit, out_collations, Join, JoinKind, Node, Planner, SetOp, Stats,
    SubPlan,
};
use crate::sql::Ctx;
use crate::types::Value;
use crate::types::{Column, ColumnKind, QueryResult};

pub mod block;
pub mod parallel;
pub mod recursive;
pub mod series;
pub mod window;

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
    let analyzing = ANALYZE.with(|a| a.borrow().is_some());
    let start = analyzing.then(std::time::Instant::now);
    let rows = run_node(cx, node, outer)?;
    if let Some(start) = start {
        record(node, rows.len(), start.elapsed());
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
        Node::Join(j) => join(cx, j, outer),
        Node::Union(u) => {
            // Both inputs and the DISTINCT keys are charged to the
            // statement's budget while the set operation runs.
            let mut mem = Reservation::new();
            let rows = run(cx, &u.left, outer)?;
            mem.add_rows(&rows)?;
            let right = run(cx, &u.right, outer)?;
            mem.add_rows(&right)?;
            set_operation(node, u, rows, right, &mut mem)
        }
        Node::Recursive(r) => recursive::run(cx, r, outer),
        Node::WorkTable(w) => recursive::run_work(w),
    }
}

/// Combine a set operation's inputs. Out of line: `run_node` recurses
/// once per operator of a long chain, so its frame stays small.
#[inline(never)]
fn set_operation(
    node: &Node,
    u: &crate::sql::plan::Union,
    mut rows: Vec<Vec<Value>>,
    right: Vec<Vec<Value>>,
    mem: &mut Reservation,
) -> SqlResult<Vec<Vec<Value>>> {
    let colls = out_collations(node);
    let mut key = |r: &[Value]| -> SqlResult<Vec<u8>> {
        budget::tick()?;
        let k = block::group_key_under(r, &colls);
        mem.add(k.len() + 48)?;
        Ok(k)
    };
    match u.op {
        SetOp::Union => {
            rows.extend(right);
            if !u.all {
                let mut seen = HashSet::new();
                let mut keep = Vec::with_capacity(rows.len());
                for r in &rows {
                    keep.push(seen.insert(key(r)?));
                }
                let mut it = keep.into_iter();
                rows.retain(|_| it.next().unwrap_or(false));
            }
        }
        // Distinct rows of the left that are (not) in the right; rows
        // compare as in DISTINCT (NULLs equal).
        SetOp::Intersect | SetOp::Except => {
            let other: HashSet<Vec<u8>> = right.iter().map(|r| key(r)).collect::<SqlResult<_>>()?;
            let wanted = u.op == SetOp::Intersect;
            let mut seen = HashSet::new();
            let mut keep = Vec::with_capacity(rows.len());
            for r in &rows {
                let k = key(r)?;
                keep.push(other.contains(&k) == wanted && seen.insert(k));
            }
            let mut it = keep.into_iter();
            rows.retain(|_| it.next().unwrap_or(false));
        }
    }
    Ok(rows)
}

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
                CExpr::Lit(scalar(cx, &sp, sub_outer)?)
            }
            CExpr::Exists(r, negated) if ready(&r) => {
                let sp = cx.subqueries.get(r.id)?;
                let rows = run(cx, &sp.node, sub_outer)?;
                CExpr::Lit(Value::Bool(rows.is_empty() == negated))
            }
            CExpr::InSub(x, r, negated) if ready(&r) => {
                let sp = cx.subqueries.get(r.id)?;
                let rows = run(cx, &sp.node, sub_outer)?;
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
    let mut rows = run(cx, &sp.node, outer)?;
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

/// The right input of a join read by key: the scan with `key IN (…)`
/// added, when the left side has few keys of the key column's own type
/// (so that the key encoding finds exactly the rows `=` would).
fn right_by_lookup(
    cx: &mut Exec<'_, '_>,
    j: &Join,
    left: &[Vec<Value>],
    outer: &[Value],
) -> SqlResult<Option<Vec<Vec<Value>>>> {
    let Some((ki, p, t)) = lookup_key(j) else {
        return Ok(None);
    };
    let col = t.pk[0];
    // Integer columns hold `Value::Int` (BOOL holds `Value::Bool`, whose
    // key encoding differs): only then does an integer's key find the row.
    let int_key = matches!(
        t.columns[col].ty,
        crate::types::DataType::Int
            | crate::types::DataType::BigInt
            | crate::types::DataType::Integer { .. }
    );
    let text_key = matches!(
        t.columns[col].ty,
        crate::types::DataType::Text | crate::types::DataType::Varchar(_)
    );
    let host = SessionHost::new(cx.session, cx.engine);
    let max_keys = lookup_key_limit(cx.txn.approx_rows(t.id));
    let mut keys = Vec::new();
    let mut seen = HashSet::new();
    for l in left {
        budget::tick()?;
        let v = j.keys[ki].0.eval(&EvalCtx {
            row: l,
            outer,
            aggs: &[],
            matches: &[],
            funcs: &host,
        })?;
        let ok = match &v {
            Value::Null => continue,
            Value::Int(_) => int_key,
            Value::Text(_) => text_key,
            _ => false,
        };
        if !ok {
            return Ok(None);
        }
        if seen.insert(value_key(&v)) {
            keys.push(v);
            if keys.len() > max_keys {
                return Ok(None);
            }
        }
    }
    // Keys of the column's own type encode exactly as the stored primary
    // keys do (text under the column's collation), so the lookups find
    // the rows `key = value` would — under a non-binary collation a
    // superset of the join's binary equality, which the join re-checks.
    let coll = t.key_collations(&t.pk[..1]);
    let mut starts: Vec<Vec<u8>> = keys
        .iter()
        .map(|v| crate::catalog::codec::encode_key_in(std::slice::from_ref(v), &coll))
        .collect();
    starts.sort();
    starts.dedup();
    let mut keyed = p.keyed_copy();
    keyed.access = if t.pk.len() == 1 {
        crate::sql::access::Access::PkPoint(starts)
    } else {
        // A composite key: one range per value of its first column.
        crate::sql::access::Access::PkRanges(
            starts
                .into_iter()
                .map(|start| {
                    let end = match crate::catalog::codec::prefix_end(&start) {
                        Some(e) => std::ops::Bound::Excluded(e),
                        None => std::ops::Bound::Unbounded,
                    };
                    (std::ops::Bound::Included(start), end)
                })
                .collect(),
        )
    };
    let start = std::time::Instant::now();
    let rows = block::run(cx, &keyed, outer)?;
    record(&j.right, rows.len(), start.elapsed());
    Ok(Some(rows))
}

/// Add one run of `node` to the EXPLAIN ANALYZE statistics.
fn record(node: &Node, rows: usize, elapsed: std::time::Duration) {
    ANALYZE.with(|a| {
        if let Some(stats) = a.borrow_mut().as_mut() {
            let st = stats.entry(node as *const Node as usize).or_default();
            st.rows += rows as u64;
            st.loops += 1;
            st.time += elapsed;
        }
    });
}

/// A hash-join key part: SQL-equal values of one class (numbers, or
/// text) get equal keys; `Other` (datetimes, vectors) never hash-joins.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum HKey {
    Int(i64),
    Float(u64),
    /// A decimal no i64 or f64 holds exactly: its normalized key bytes.
    Decimal(Vec<u8>),
    Text(String),
    Other,
}

impl HKey {
    /// `None` for NULL (which matches nothing).
    fn of(v: &Value) -> Option<HKey> {
        Some(match expr::key_form(v) {
            Value::Null => return None,
            Value::Int(i) => HKey::Int(i),
            Value::Float(f) => HKey::Float(f.to_bits()),
            Value::Decimal(d) => {
                let mut k = Vec::new();
                d.encode_key(&mut k);
                HKey::Decimal(k)
            }
            Value::Text(t) => HKey::Text(t),
            _ => HKey::Other,
        })
    }

    fn class(&self) -> u8 {
        match self {
            HKey::Int(_) | HKey::Float(_) | HKey::Decimal(_) => 0,
            HKey::Text(_) => 1,
            HKey::Other => 2,
        }
    }
}

/// The join keys of every row of one side (`None`: a NULL key part).
fn side_keys(
    exprs: &[&CExpr],
    rows: &[Vec<Value>],
    outer: &[Value],
    host: &SessionHost<'_>,
    mem: &mut Reservation,
) -> SqlResult<Vec<Option<Vec<HKey>>>> {
    let mut out = Vec::with_capacity(rows.len());
    'rows: for row in rows {
        budget::tick()?;
        mem.add(32 + exprs.len() * std::mem::size_of::<HKey>())?;
        let mut k = Vec::with_capacity(exprs.len());
        for e in exprs {
            let part = match e {
                CExpr::Col(i) => row.get(*i).and_then(HKey::of),
                e => HKey::of(&e.eval(&EvalCtx {
                    row,
                    outer,
                    aggs: &[],
                    matches: &[],
                    funcs: host,
                })?),
            };
            match part {
                Some(p) => k.push(p),
                None => {
                    out.push(None);
                    continue 'rows;
                }
            }
        }
        out.push(Some(k));
    }
    Ok(out)
}

/// Execute a join: a hash join on its keys (built on the smaller input of
/// an inner join), or a nested loop when there are none or a key column
/// mixes numbers and text (whose SQL equality is not key equality).
///
/// Both inputs, the keys, the hash table and the output are charged to the
/// statement's memory budget while the join runs; every row pair tried is
/// a [`budget::tick`].
fn join(cx: &mut Exec<'_, '_>, j: &Join, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    let mut mem = Reservation::new();
    // Inputs and output in graves: a killed join answers before it frees.
    let left = budget::Grave(run(cx, &j.left, outer)?);
    mem.add_rows(&left)?;
    let right = budget::Grave(if left.is_empty() && j.kind != JoinKind::Right {
        Vec::new()
    } else {
        match right_by_lookup(cx, j, &left, outer)? {
            Some(rows) => rows,
            None => run(cx, &j.right, outer)?,
        }
    });
    mem.add_rows(&right)?;
    // The output's charge (kept apart: `emit` holds it).
    let mut out_mem = Reservation::new();
    let host = SessionHost::new(cx.session, cx.engine);
    let residual: Vec<Prepared<'_>> = j
        .residual
        .iter()
        .map(|c| prepare(cx, c, j.left_width + j.right_width, outer))
        .collect::<SqlResult<_>>()?;
    let width = j.left_width + j.right_width;
    let mut out: budget::Grave<Vec<Vec<Value>>> = Default::default();
    let mut left_matched = vec![false; left.len()];
    let mut right_matched = vec![false; right.len()];
    let mut combined = Vec::with_capacity(width);
    // Emit left[li] ++ right[ri] if the residual condition holds. A KILL
    // (or the deadline) stops a long join between two checks.
    let mut emit = |cx: &mut Exec<'_, '_>, li: usize, ri: usize| -> SqlResult<()> {
        budget::tick()?;
        combined.clear();
        combined.extend_from_slice(&left[li]);
        combined.extend_from_slice(&right[ri]);
        for p in &residual {
            let e = bind_row(cx, p, &combined, outer)?;
            let v = e.eval(&EvalCtx {
                row: &combined,
                outer,
                aggs: &[],
                matches: &[],
                funcs: &host,
            })?;
            if expr::truth(&v) != Some(true) {
                return Ok(());
            }
        }
        out_mem.add_row(&combined)?;
        out.push(combined.clone());
        left_matched[li] = true;
        right_matched[ri] = true;
        Ok(())
    };
    if j.keys.is_empty() {
        for li in 0..left.len() {
            for ri in 0..right.len() {
                emit(cx, li, ri)?;
            }
        }
    } else {
        let lexprs: Vec<&CExpr> = j.keys.iter().map(|(l, _)| l).collect();
        let rexprs: Vec<&CExpr> = j.keys.iter().map(|(_, r)| r).collect();
        let lk = side_keys(&lexprs, &left, outer, &host, &mut mem)?;
        let rk = side_keys(&rexprs, &right, outer, &host, &mut mem)?;
        let hashable = (0..j.keys.len()).all(|i| {
            let mut classes = HashSet::new();
            for k in lk.iter().chain(rk.iter()).flatten() {
                classes.insert(k[i].class());
            }
            classes.len() <= 1 && !classes.contains(&2)
        });
        if hashable {
            // Build on the smaller side of an inner join; an outer join
            // builds on the side whose unmatched rows it does not emit.
            let build_left = j.kind == JoinKind::Inner && left.len() < right.len();
            let (build, probe) = if build_left { (&lk, &rk) } else { (&rk, &lk) };
            let mut table: HashMap<&[HKey], Vec<usize>, foldhash::fast::RandomState> =
                HashMap::with_capacity_and_hasher(build.len(), Default::default());
            for (i, k) in build.iter().enumerate() {
                if let Some(k) = k {
                    budget::tick()?;
                    mem.add(48)?;
                    table.entry(k.as_slice()).or_default().push(i);
                }
            }
            for (pi, k) in probe.iter().enumerate() {
                budget::tick()?;
                let Some(k) = k else { continue };
                if let Some(hits) = table.get(k.as_slice()) {
                    for &bi in hits {
                        let (li, ri) = if build_left { (bi, pi) } else { (pi, bi) };
                        emit(cx, li, ri)?;
                    }
                }
            }
        } else {
            let keyvals = |side: &[&CExpr], row: &[Value]| -> SqlResult<Vec<Value>> {
                side.iter()
                    .map(|e| {
                        e.eval(&EvalCtx {
                            row,
                            outer,
                            aggs: &[],
                            matches: &[],
                            funcs: &host,
                        })
                    })
                    .collect()
            };
            let lv: Vec<Vec<Value>> = left
                .iter()
                .map(|r| keyvals(&lexprs, r))
                .collect::<SqlResult<_>>()?;
            mem.add_rows(&lv)?;
            let rv: Vec<Vec<Value>> = right
                .iter()
                .map(|r| keyvals(&rexprs, r))
                .collect::<SqlResult<_>>()?;
            mem.add_rows(&rv)?;
            for (li, lvals) in lv.iter().enumerate() {
                for (ri, rvals) in rv.iter().enumerate() {
                    budget::tick()?;
                    let eq = lvals
                        .iter()
                        .zip(rvals)
                        .all(|(x, y)| expr::sql_cmp(x, y) == Some(std::cmp::Ordering::Equal));
                    if eq {
                        emit(cx, li, ri)?;
                    }
                }
            }
        }
    }
    if j.kind == JoinKind::Left {
        for (li, l) in left.iter().enumerate() {
            if !left_matched[li] {
                let mut r = l.clone();
                r.resize(width, Value::Null);
                out_mem.add_row(&r)?;
                out.push(r);
            }
        }
    }
    if j.kind == JoinKind::Right {
        for (ri, r) in right.iter().enumerate() {
            if !right_matched[ri] {
                let mut row = vec![Value::Null; j.left_width];
                row.extend_from_slice(r);
                out_mem.add_row(&row)?;
                out.push(row);
            }
        }
    }
    Ok(out.take())
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
