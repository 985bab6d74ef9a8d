//! Executing plan nodes ([`crate::sql::plan::Node`]) into rows.
//!
//! Owns the join algorithms (hash join on equality keys, nested loop
//! otherwise; inner, left and right outer), UNION [ALL], and running the
//! subqueries inside expressions: uncorrelated ones once per run of their
//! block, correlated ones once per row, each turned into a literal (or a
//! materialized set for `IN`) before the expression is evaluated. Query
//! blocks themselves run in [`crate::sql::select`]. Never writes (row
//! locks of `FOR UPDATE` are taken by the block's scan).

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::{self, value_key, CExpr, EvalCtx, SubPlan, ValueSet};
use crate::sql::host::SessionHost;
use crate::sql::plan::{Join, JoinKind, Node, Stats};
use crate::sql::select;
use crate::sql::Ctx;
use crate::types::Value;

/// Run a node with `outer` as the row of the enclosing query (empty at the
/// top level).
pub fn run(cx: &mut Ctx<'_>, node: &Node, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    let analyzing = ANALYZE.with(|a| a.borrow().is_some());
    if !analyzing {
        return run_node(cx, node, outer);
    }
    let start = std::time::Instant::now();
    let rows = run_node(cx, node, outer)?;
    record(node, rows.len(), start.elapsed());
    Ok(rows)
}

thread_local! {
    /// Per-node statistics while an EXPLAIN ANALYZE runs on this thread
    /// (a statement runs on one thread from start to end).
    static ANALYZE: std::cell::RefCell<Option<Stats>> = const { std::cell::RefCell::new(None) };
}

/// Run `node` to the end (EXPLAIN ANALYZE), returning what each node did.
pub fn analyze(cx: &mut Ctx<'_>, node: &Node) -> SqlResult<Stats> {
    ANALYZE.with(|a| *a.borrow_mut() = Some(Stats::new()));
    let r = run(cx, node, &[]);
    let stats = ANALYZE.with(|a| a.borrow_mut().take()).unwrap_or_default();
    r.map(|_| stats)
}

fn run_node(cx: &mut Ctx<'_>, node: &Node, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    match node {
        Node::Block(p) => select::run(cx, p, outer),
        Node::Join(j) => join(cx, j, outer),
        Node::Union(u) => {
            let mut rows = run(cx, &u.left, outer)?;
            rows.extend(run(cx, &u.right, outer)?);
            if !u.all {
                let mut seen = HashSet::new();
                rows.retain(|r| seen.insert(row_key(r)));
            }
            Ok(rows)
        }
    }
}

/// The key under which SQL-equal rows coincide (for DISTINCT / UNION).
fn row_key(r: &[Value]) -> Vec<u8> {
    let mut k = Vec::new();
    for v in r {
        let part = value_key(v);
        k.extend_from_slice(&(part.len() as u32).to_be_bytes());
        k.extend_from_slice(&part);
    }
    k
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
    cx: &mut Ctx<'_>,
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
    cx: &mut Ctx<'_>,
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
    cx: &mut Ctx<'_>,
    e: CExpr,
    sub_outer: &[Value],
    only_above: Option<usize>,
) -> SqlResult<CExpr> {
    let ready = |sp: &SubPlan| only_above.is_none_or(|w| sp.refs.iter().all(|&r| r >= w));
    e.try_rewrite(&mut |x| {
        Ok(match x {
            CExpr::Scalar(sp) if ready(&sp) => CExpr::Lit(scalar(cx, &sp, sub_outer)?),
            CExpr::Exists(sp, negated) if ready(&sp) => {
                let rows = run_sub(cx, &sp, sub_outer, Some(1))?;
                CExpr::Lit(Value::Bool(rows.is_empty() == negated))
            }
            CExpr::InSub(x, sp, negated) if ready(&sp) => {
                let rows = run_sub(cx, &sp, sub_outer, None)?;
                let set = ValueSet::new(rows.into_iter().map(|mut r| r.swap_remove(0)));
                CExpr::InSet(x, Arc::new(set), negated)
            }
            other => other,
        })
    })
}

fn run_sub(
    cx: &mut Ctx<'_>,
    sp: &SubPlan,
    outer: &[Value],
    _stop_after: Option<usize>,
) -> SqlResult<Vec<Vec<Value>>> {
    run(cx, &sp.node, outer)
}

/// A scalar subquery's value: NULL for no row, error 1242 for several.
fn scalar(cx: &mut Ctx<'_>, sp: &SubPlan, outer: &[Value]) -> SqlResult<Value> {
    let mut rows = run_sub(cx, sp, outer, Some(2))?;
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

/// Most distinct left keys for which the right input is read by primary
/// key (an index nested-loop join, batched) instead of scanned.
pub const LOOKUP_JOIN_MAX_KEYS: usize = 2048;

/// For an inner or left join whose right input is a plain scan of a table
/// with a one-column primary key used as a join key: that key's position
/// among the join keys and the table's key column.
pub fn lookup_key(j: &Join) -> Option<(usize, usize)> {
    if j.kind == JoinKind::Right {
        return None;
    }
    let Node::Block(p) = &j.right else {
        return None;
    };
    let t = p.source.table.as_ref()?;
    if !p.is_plain_scan() || t.pk.len() != 1 || t.has_hidden_pk() {
        return None;
    }
    j.keys
        .iter()
        .position(|(_, r)| matches!(r, CExpr::Col(c) if *c == t.pk[0]))
        .map(|i| (i, t.pk[0]))
}

/// The right input of a join read by key: the scan with `key IN (…)`
/// added, when the left side has few keys of the key column's own type
/// (so that the key encoding finds exactly the rows `=` would).
fn right_by_lookup(
    cx: &mut Ctx<'_>,
    j: &Join,
    left: &[Vec<Value>],
    outer: &[Value],
) -> SqlResult<Option<Vec<Vec<Value>>>> {
    let Some((ki, col)) = lookup_key(j) else {
        return Ok(None);
    };
    let Node::Block(p) = &j.right else {
        return Ok(None);
    };
    let Some(t) = p.source.table.as_ref() else {
        return Ok(None);
    };
    let int_key = matches!(
        crate::sql::select::kind_of_type(&t.columns[col].ty),
        crate::types::ColumnKind::Int
    );
    let text_key = matches!(
        t.columns[col].ty,
        crate::types::DataType::Text | crate::types::DataType::Varchar(_)
    );
    let host = SessionHost::new(cx.session, cx.engine);
    let mut keys = Vec::new();
    let mut seen = HashSet::new();
    for l in left {
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
            keys.push(CExpr::Lit(v));
            if keys.len() > LOOKUP_JOIN_MAX_KEYS {
                return Ok(None);
            }
        }
    }
    let mut keyed = p.keyed_copy();
    keyed.add_filter(CExpr::InList(Box::new(CExpr::Col(col)), keys, false), &host);
    let start = std::time::Instant::now();
    let rows = select::run(cx, &keyed, outer)?;
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

/// Execute a join.
fn join(cx: &mut Ctx<'_>, j: &Join, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    let left = run(cx, &j.left, outer)?;
    let right = if left.is_empty() && j.kind != JoinKind::Right {
        Vec::new()
    } else {
        match right_by_lookup(cx, j, &left, outer)? {
            Some(rows) => rows,
            None => run(cx, &j.right, outer)?,
        }
    };
    let host = SessionHost::new(cx.session, cx.engine);
    let residual: Vec<Prepared<'_>> = j
        .residual
        .iter()
        .map(|c| prepare(cx, c, j.left_width + j.right_width, outer))
        .collect::<SqlResult<_>>()?;
    let eval_on = |cx: &mut Ctx<'_>, row: &[Value]| -> SqlResult<bool> {
        for p in &residual {
            let e = bind_row(cx, p, row, outer)?;
            let v = e.eval(&EvalCtx {
                row,
                outer,
                aggs: &[],
                matches: &[],
                funcs: &host,
            })?;
            if expr::truth(&v) != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    };
    let key_of = |side: &[(&CExpr, usize)], row: &[Value]| -> SqlResult<Option<Vec<Value>>> {
        let mut k = Vec::with_capacity(side.len());
        for (e, _) in side {
            let v = e.eval(&EvalCtx {
                row,
                outer,
                aggs: &[],
                matches: &[],
                funcs: &host,
            })?;
            if v.is_null() {
                return Ok(None);
            }
            k.push(v);
        }
        Ok(Some(k))
    };
    let lkeys: Vec<(&CExpr, usize)> = j.keys.iter().map(|(l, _)| (l, 0)).collect();
    let rkeys: Vec<(&CExpr, usize)> = j.keys.iter().map(|(_, r)| (r, 0)).collect();
    let lk: Vec<Option<Vec<Value>>> = left
        .iter()
        .map(|r| key_of(&lkeys, r))
        .collect::<SqlResult<_>>()?;
    let rk: Vec<Option<Vec<Value>>> = right
        .iter()
        .map(|r| key_of(&rkeys, r))
        .collect::<SqlResult<_>>()?;
    // Hash only when each key column holds one class of value on both
    // sides (numbers, or text): then SQL equality is key equality. Mixed
    // classes ('1' = 1) compare through the nested loop.
    let hashable = (0..j.keys.len()).all(|i| {
        let mut classes = HashSet::new();
        for k in lk.iter().chain(rk.iter()).flatten() {
            classes.insert(class_of(&k[i]));
        }
        classes.len() <= 1 && !classes.contains(&2)
    });
    let width = j.left_width + j.right_width;
    let mut out = Vec::new();
    let mut right_matched = vec![false; right.len()];
    let mut combined = Vec::with_capacity(width);
    let emit = |cx: &mut Ctx<'_>,
                l: &[Value],
                ri: usize,
                combined: &mut Vec<Value>,
                out: &mut Vec<Vec<Value>>|
     -> SqlResult<bool> {
        combined.clear();
        combined.extend_from_slice(l);
        combined.extend_from_slice(&right[ri]);
        if eval_on(cx, combined)? {
            out.push(combined.clone());
            return Ok(true);
        }
        Ok(false)
    };
    let table: Option<HashMap<Vec<u8>, Vec<usize>>> = (!j.keys.is_empty() && hashable).then(|| {
        let mut t: HashMap<Vec<u8>, Vec<usize>> = HashMap::new();
        for (ri, k) in rk.iter().enumerate() {
            if let Some(k) = k {
                t.entry(row_key(k)).or_default().push(ri);
            }
        }
        t
    });
    for (li, l) in left.iter().enumerate() {
        let mut matched = false;
        match (&table, &lk[li]) {
            (_, None) if !j.keys.is_empty() => {}
            (Some(t), Some(k)) => {
                if let Some(cands) = t.get(&row_key(k)) {
                    for &ri in cands {
                        if emit(cx, l, ri, &mut combined, &mut out)? {
                            matched = true;
                            right_matched[ri] = true;
                        }
                    }
                }
            }
            _ => {
                for ri in 0..right.len() {
                    if !j.keys.is_empty() {
                        let (Some(a), Some(b)) = (&lk[li], &rk[ri]) else {
                            continue;
                        };
                        let eq = a
                            .iter()
                            .zip(b)
                            .all(|(x, y)| expr::sql_cmp(x, y) == Some(std::cmp::Ordering::Equal));
                        if !eq {
                            continue;
                        }
                    }
                    if emit(cx, l, ri, &mut combined, &mut out)? {
                        matched = true;
                        right_matched[ri] = true;
                    }
                }
            }
        }
        if !matched && j.kind == JoinKind::Left {
            let mut r = l.clone();
            r.resize(width, Value::Null);
            out.push(r);
        }
    }
    if j.kind == JoinKind::Right {
        for (ri, r) in right.iter().enumerate() {
            if !right_matched[ri] {
                let mut row = vec![Value::Null; j.left_width];
                row.extend_from_slice(r);
                out.push(row);
            }
        }
    }
    Ok(out)
}

/// 0 number, 1 text, 2 anything else.
fn class_of(v: &Value) -> u8 {
    match v {
        Value::Int(_) | Value::Float(_) | Value::Bool(_) => 0,
        Value::Text(_) => 1,
        _ => 2,
    }
}
