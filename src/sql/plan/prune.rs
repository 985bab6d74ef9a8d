//! Column pruning of the join tree under a query block (issue 41 item 7):
//! the last step of planning a block over joins.
//!
//! Owns narrowing: each plain table scan at a join leaf produces only the
//! columns something above it reads (the block's expressions, the join
//! keys and residual conditions on the way up), in table order; each join
//! then emits its narrowed left row followed by its narrowed right row,
//! and every column reference above is renumbered — the joins' keys and
//! residual conditions, the block's expressions and its source scope
//! (names, kinds, collations, `*` and `USING` positions), so the block
//! reads the same values at new positions. A join of six tables then
//! carries the dozen columns the query uses, not every column of every
//! table (TPC-H Q5: 33 values per row before).
//!
//! Never changes which rows any node produces, what a block outputs, or
//! the tree's shape, and never narrows where positions are shared with
//! something it cannot renumber: a block with MATCH … AGAINST over the join
//! (its scores are looked up by each table's offset in the joined row), a
//! correlated subquery of the block (its outer row is the block's row, by
//! position), or any subquery in a join's residual condition. Blocks with
//! their own select list, set operations and recursive working tables
//! below a join keep their width (they read what their own expressions
//! need, decided when they were planned).
//!
//! A plan field holding an expression over the block's row must be
//! visited by [`exprs_mut`], or its columns would be neither kept nor
//! renumbered.

use crate::sql::expr::CExpr;
use crate::sql::plan::{mark_columns, Node, Plan};
use crate::types::Value;

/// Join trees deeper than this are left as they are (MySQL joins at most
/// 61 tables; a guard, not a limit anyone meets).
const MAX_DEPTH: usize = 256;

/// Narrow the join tree `plan` reads to the columns its expressions read,
/// renumbering them (see the module doc); `plan` unchanged when it does
/// not read a join or shares positions with what cannot be renumbered.
pub fn narrow_block(mut plan: Plan) -> Plan {
    if !plan.matches.is_empty() || !plan.match_tables.is_empty() {
        return plan;
    }
    match plan.source.input.as_deref() {
        Some(n @ Node::Join(_)) if !subquery_in_conditions(n, 0) => {}
        _ => return plan,
    }
    let width = plan.source.scope.cols.len();
    let mut needed = vec![false; width];
    let mut correlated = false;
    exprs_mut(&mut plan, &mut |e| {
        correlated |= has_correlated_subquery(e);
        mark_columns(e, &mut needed);
    });
    if correlated {
        return plan;
    }
    let Some(node) = plan.source.input.as_deref_mut() else {
        return plan;
    };
    let map = narrow(node, &needed, 0);
    debug_assert_eq!(map.len(), width, "join width and block scope");
    if map.iter().enumerate().all(|(i, m)| *m == Some(i)) {
        return plan;
    }
    exprs_mut(&mut plan, &mut |e| remap(e, &map));
    let src = &mut plan.source;
    let kept = |i: &usize| map.get(*i).copied().flatten().is_some();
    src.scope.cols = retain(std::mem::take(&mut src.scope.cols), &kept);
    src.scope.colls = retain(std::mem::take(&mut src.scope.colls), &kept);
    src.kinds = retain(std::mem::take(&mut src.kinds), &kept);
    let moved = |v: &mut Vec<usize>| {
        *v = v
            .iter()
            .filter_map(|&i| map.get(i).copied().flatten())
            .collect();
    };
    moved(&mut src.scope.hidden);
    moved(&mut src.star);
    plan
}

/// The items of `v` whose position `kept` accepts, in order.
fn retain<T>(v: Vec<T>, kept: &dyn Fn(&usize) -> bool) -> Vec<T> {
    v.into_iter()
        .enumerate()
        .filter(|(i, _)| kept(i))
        .map(|(_, x)| x)
        .collect()
}

/// Every expression of `p` over its own row (the block's source row).
fn exprs_mut(p: &mut Plan, f: &mut dyn FnMut(&mut CExpr)) {
    for (_, e, _) in &mut p.projection {
        f(e);
    }
    for e in p.filter.iter_mut().chain(p.having.iter_mut()) {
        f(e);
    }
    for e in &mut p.group_by {
        f(e);
    }
    for (e, _) in &mut p.order_by {
        f(e);
    }
    for a in &mut p.aggs {
        if let Some(e) = &mut a.arg {
            f(e);
        }
        if let Some(w) = a.window.as_deref_mut() {
            for e in &mut w.partition {
                f(e);
            }
            for (e, _) in &mut w.order {
                f(e);
            }
            if let Some(e) = &mut w.default {
                f(e);
            }
            for (e, _) in w.range_at.iter_mut().flatten() {
                f(e);
            }
        }
    }
}

/// Whether `e` holds a subquery that reads its outer row (whose positions
/// are the block's row's).
fn has_correlated_subquery(e: &CExpr) -> bool {
    let mut found = false;
    e.walk(&mut |x| match x {
        CExpr::Scalar(r) | CExpr::Exists(r, _) | CExpr::InSub(_, r, _) => {
            found |= !r.refs.is_empty()
        }
        _ => {}
    });
    found
}

/// Whether a join of the tree holds a subquery in its conditions (run
/// against the joined row's positions); also `true` past [`MAX_DEPTH`].
fn subquery_in_conditions(n: &Node, depth: usize) -> bool {
    let Node::Join(j) = n else {
        return false;
    };
    if depth > MAX_DEPTH {
        return true;
    }
    let mut found = false;
    for c in j
        .residual
        .iter()
        .chain(j.keys.iter().flat_map(|(a, b)| [a, b]))
    {
        c.walk(&mut |x| {
            found |= matches!(x, CExpr::Scalar(_) | CExpr::Exists(..) | CExpr::InSub(..))
        });
    }
    found
        || subquery_in_conditions(&j.left, depth + 1)
        || subquery_in_conditions(&j.right, depth + 1)
}

/// Renumber the own-row columns of `e` by `map` (old position → new).
fn remap(e: &mut CExpr, map: &[Option<usize>]) {
    let old = std::mem::replace(e, CExpr::Lit(Value::Null));
    *e = old.map_cols(&mut |i| {
        let to = map.get(i).copied().flatten();
        // Every column read above was marked needed, so it was kept.
        debug_assert!(to.is_some(), "pruned column {i} is still read");
        to.unwrap_or(usize::MAX)
    });
}

/// Make `node` produce only the `needed` columns of its output (more when
/// it cannot narrow); for each old output position, its new one.
fn narrow(node: &mut Node, needed: &[bool], depth: usize) -> Vec<Option<usize>> {
    let is = |n: &Node| -> Vec<Option<usize>> { (0..n.width()).map(Some).collect() };
    match node {
        Node::Block(p) if p.is_plain_scan() => narrow_scan(p, needed),
        Node::Join(j) if depth <= MAX_DEPTH => {
            let (lw, rw) = (j.left_width, j.right_width);
            let (l, r) = j.side_needs(needed);
            let lm = narrow(&mut j.left, &l, depth + 1);
            let rm = narrow(&mut j.right, &r, depth + 1);
            debug_assert_eq!((lm.len(), rm.len()), (lw, rw), "join input widths");
            let nlw = lm.iter().flatten().count();
            for (a, b) in &mut j.keys {
                remap(a, &lm);
                remap(b, &rm);
            }
            let both: Vec<Option<usize>> = lm
                .iter()
                .copied()
                .chain(rm.iter().map(|m| m.map(|x| x + nlw)))
                .collect();
            for c in &mut j.residual {
                remap(c, &both);
            }
            j.left_width = nlw;
            j.right_width = rm.iter().flatten().count();
            both
        }
        other => is(other),
    }
}

/// A plain scan keeping only its `needed` output columns (and decoding
/// only those plus what its own filter reads).
fn narrow_scan(p: &mut Plan, needed: &[bool]) -> Vec<Option<usize>> {
    let Some(cols) = p.scan_columns() else {
        return (0..p.projection.len()).map(Some).collect();
    };
    let keep = |i: usize| needed.get(i).copied().unwrap_or(false);
    let mut map = Vec::with_capacity(cols.len());
    let mut decode = vec![false; p.source.scope.cols.len()];
    let mut at = 0;
    for (i, &c) in cols.iter().enumerate() {
        if keep(i) {
            map.push(Some(at));
            decode[c] = true;
            at += 1;
        } else {
            map.push(None);
        }
    }
    if let Some(f) = &p.filter {
        mark_columns(f, &mut decode);
    }
    p.needed = Some(decode);
    p.pruned = true;
    let is_kept = |i: &usize| keep(*i);
    p.projection = retain(std::mem::take(&mut p.projection), &is_kept);
    if p.out_colls.len() == cols.len() {
        p.out_colls = retain(std::mem::take(&mut p.out_colls), &is_kept);
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnDef, TableDef};
    use crate::collation::Collation;
    use crate::sql::expr::{BinOp, SubqueryRef};
    use crate::sql::plan::{Join, JoinKind, Source};
    use crate::types::{ColumnKind, DataType};

    fn table(id: u64, cols: &[&str]) -> TableDef {
        TableDef {
            id,
            db: "d".into(),
            name: format!("t{id}"),
            columns: cols
                .iter()
                .map(|c| ColumnDef {
                    name: c.to_string(),
                    ty: DataType::BigInt,
                    nullable: true,
                    default: None,
                    auto_increment: false,
                    collation: Collation::default(),
                })
                .collect(),
            pk: vec![0],
            indexes: Vec::new(),
            comment: String::new(),
            view: None,
            collation: Collation::default(),
            foreign_keys: Vec::new(),
            referenced_by: Vec::new(),
            checks: Vec::new(),
        }
    }

    fn scan(id: u64, cols: &[&str]) -> Node {
        crate::sql::plan::scan_node(table(id, cols), &format!("t{id}"), false)
    }

    fn join(kind: JoinKind, left: Node, right: Node, keys: Vec<(CExpr, CExpr)>) -> Node {
        let (left_width, right_width) = (left.width(), right.width());
        Node::Join(Box::new(Join {
            kind,
            left,
            right,
            left_width,
            right_width,
            keys,
            residual: Vec::new(),
        }))
    }

    /// `SELECT <projection> FROM <node> [WHERE filter]` over all its columns.
    fn block(node: Node, projection: Vec<CExpr>, filter: Option<CExpr>) -> Plan {
        let names: Vec<String> = node.columns().into_iter().map(|c| c.name).collect();
        let source = Source {
            input: Some(Box::new(node)),
            ..Source::computed("", names.into_iter().map(|n| (n, ColumnKind::Int)))
        };
        let mut p = Plan::all_of(source, false);
        p.projection = projection
            .into_iter()
            .map(|e| ("x".to_string(), e, ColumnKind::Int))
            .collect();
        p.filter = filter;
        p
    }

    fn col(i: usize) -> CExpr {
        CExpr::Col(i)
    }

    fn gt(a: CExpr, b: CExpr) -> CExpr {
        CExpr::Bin(BinOp::Gt, Box::new(a), Box::new(b))
    }

    fn leaf(n: &Node) -> &Plan {
        match n {
            Node::Block(p) => p,
            _ => panic!("not a block"),
        }
    }

    fn the_join(p: &Plan) -> &Join {
        match p.source.input.as_deref() {
            Some(Node::Join(j)) => j,
            _ => panic!("not over a join"),
        }
    }

    #[test]
    fn join_leaves_keep_only_what_is_read_and_references_follow() {
        // SELECT b2 FROM a JOIN b ON a1 = b0 WHERE a0 > 1
        let j = join(
            JoinKind::Inner,
            scan(1, &["a0", "a1", "a2"]),
            scan(2, &["b0", "b1", "b2"]),
            vec![(col(1), col(0))],
        );
        let p = narrow_block(block(j, vec![col(5)], Some(gt(col(0), col(2)))));
        let j = the_join(&p);
        assert_eq!((j.left_width, j.right_width), (3, 2));
        let (l, r) = (leaf(&j.left), leaf(&j.right));
        assert_eq!(l.scan_columns(), Some(vec![0, 1, 2]));
        assert_eq!(r.scan_columns(), Some(vec![0, 2]));
        assert!(r.pruned && r.is_plain_scan() && !r.is_unpruned_scan());
        assert_eq!(r.needed.as_deref(), Some(&[true, false, true][..]));
        assert!(matches!(j.keys[0], (CExpr::Col(1), CExpr::Col(0))));
        assert!(matches!(p.projection[0].1, CExpr::Col(4)));
        let names: Vec<&str> = p.source.scope.cols.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(names, ["a0", "a1", "a2", "b0", "b2"]);
        assert_eq!(p.source.kinds.len(), 5);
        assert_eq!(p.source.star, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn nested_joins_shift_the_right_side_and_residuals() {
        // (a JOIN b ON a0 = b0) LEFT JOIN c ON b0 = c0 AND c2 > a1; SELECT c1
        let ab = join(
            JoinKind::Inner,
            scan(1, &["a0", "a1", "a2"]),
            scan(2, &["b0", "b1"]),
            vec![(col(0), col(0))],
        );
        let mut abc = join(
            JoinKind::Left,
            ab,
            scan(3, &["c0", "c1", "c2"]),
            vec![(col(3), col(0))],
        );
        if let Node::Join(j) = &mut abc {
            j.residual.push(gt(col(7), col(1)));
        }
        let p = narrow_block(block(abc, vec![col(6)], None));
        let top = the_join(&p);
        // a0 a1 | b0 ; c0 c1 c2
        assert_eq!((top.left_width, top.right_width), (3, 3));
        assert!(matches!(top.keys[0], (CExpr::Col(2), CExpr::Col(0))));
        assert!(matches!(&top.residual[0], CExpr::Bin(_, a, b)
            if matches!(**a, CExpr::Col(5)) && matches!(**b, CExpr::Col(1))));
        assert!(matches!(p.projection[0].1, CExpr::Col(4)));
        let Node::Join(ab) = &top.left else {
            panic!("left is the inner join")
        };
        assert_eq!((ab.left_width, ab.right_width), (2, 1));
        assert!(matches!(ab.keys[0], (CExpr::Col(0), CExpr::Col(0))));
    }

    #[test]
    fn a_correlated_subquery_keeps_the_row_as_it_is() {
        let sub = CExpr::Scalar(std::sync::Arc::new(SubqueryRef {
            id: 0,
            refs: vec![2],
            width: 1,
            kind: ColumnKind::Int,
            collation: None,
        }));
        let j = join(
            JoinKind::Inner,
            scan(1, &["a0", "a1", "a2"]),
            scan(2, &["b0", "b1", "b2"]),
            vec![(col(1), col(0))],
        );
        let p = narrow_block(block(j, vec![col(5), sub], None));
        let j = the_join(&p);
        assert_eq!((j.left_width, j.right_width), (3, 3));
        assert!(!leaf(&j.right).pruned);
        assert_eq!(p.source.scope.cols.len(), 6);
    }
}
