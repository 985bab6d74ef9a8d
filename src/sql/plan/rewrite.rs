//! Rewrites of a planned tree that binding and block planning share:
//! which columns an expression reads and whether it may move
//! ([`columns_read`], [`is_deterministic`]), predicate push-down into join
//! inputs ([`push_where`]: a conjunct goes into an input's scan filter,
//! becomes a hash-join key or stays a residual check), which base table
//! produces an output column ([`base_table_at`]) and MySQL's type of a
//! UNION column ([`union_kind`]).
//!
//! Never binds names, reads rows or runs anything.

use crate::catalog::TableDef;
use crate::sql::expr::CExpr;
use crate::sql::host::SessionHost;
use crate::sql::plan::{Join, JoinKind, Node};
use crate::types::ColumnKind;

/// Whether a function gives the same answer for the same arguments within
/// a statement (so a predicate using it may be evaluated earlier).
pub fn is_deterministic(name: &str) -> bool {
    crate::sql::functions::is_deterministic(name)
}

/// MySQL's type of a UNION column from its two inputs (also of the
/// functions that return one of their arguments: COALESCE, IF, …).
pub fn union_kind(a: ColumnKind, b: ColumnKind) -> ColumnKind {
    use ColumnKind as K;
    match (a, b) {
        _ if a == b => a,
        (
            K::Decimal {
                precision: p1,
                scale: s1,
            },
            K::Decimal {
                precision: p2,
                scale: s2,
            },
        ) => {
            let scale = s1.max(s2);
            let int = (p1 - s1).max(p2 - s2);
            K::Decimal {
                precision: int.saturating_add(scale).min(65),
                scale,
            }
        }
        // A datetime of each precision: the wider (an untracked one stays
        // untracked).
        (K::DateTime(x), K::DateTime(y)) => K::DateTime(x.zip(y).map(|(x, y)| x.max(y))),
        (K::Int, K::Decimal { .. }) => b,
        (K::Decimal { .. }, K::Int) => a,
        (K::Int | K::Float | K::Decimal { .. }, K::Int | K::Float | K::Decimal { .. }) => K::Float,
        // A binary string beside anything else: binary (MySQL).
        (K::Bytes, _) | (_, K::Bytes) => K::Bytes,
        _ => K::Text,
    }
}

/// Column positions an expression reads from its own row; `None` if it
/// contains something that must not move (a subquery or MATCH).
pub fn columns_read(e: &CExpr) -> Option<Vec<usize>> {
    let mut cols = Vec::new();
    let mut movable = true;
    e.walk(&mut |x| match x {
        CExpr::Col(i) => cols.push(*i),
        CExpr::Scalar(_) | CExpr::Exists(..) | CExpr::InSub(..) | CExpr::InSet(..) => {
            movable = false
        }
        CExpr::Match(_) | CExpr::Agg(_) => movable = false,
        CExpr::Func(name, _) if !is_deterministic(name) => movable = false,
        _ => {}
    });
    movable.then_some(cols)
}

/// Shift column references by `-by` (into a join input's own row).
pub fn shift_columns(e: &CExpr, by: usize) -> CExpr {
    e.clone().map_cols(&mut |i| i - by)
}

/// Put one conjunct of a join's ON condition (or of an inner join's
/// WHERE) where it is cheapest and still correct: into an input's filter,
/// as a hash-join key, or as a residual check on the joined row.
pub(super) fn place_on_condition(j: &mut Join, c: CExpr, host: &SessionHost<'_>) {
    let lw = j.left_width;
    let Some(cols) = columns_read(&c) else {
        j.residual.push(c);
        return;
    };
    let left_only = cols.iter().all(|&i| i < lw);
    let right_only = cols.iter().all(|&i| i >= lw);
    // Filtering the inner side of an outer join (or either side of an inner
    // join) before joining gives the same answer.
    let push_left = matches!(j.kind, JoinKind::Inner | JoinKind::Right);
    let push_right = matches!(j.kind, JoinKind::Inner | JoinKind::Left);
    if !cols.is_empty() && left_only && push_left && push_filter(&mut j.left, c.clone(), host) {
        return;
    }
    if !cols.is_empty()
        && right_only
        && push_right
        && push_filter(&mut j.right, shift_columns(&c, lw), host)
    {
        return;
    }
    if let CExpr::Bin(crate::sql::expr::BinOp::Eq, a, b) = &c {
        let side = |e: &CExpr| -> Option<bool> {
            let cs = columns_read(e)?;
            if cs.is_empty() {
                None
            } else if cs.iter().all(|&i| i < lw) {
                Some(true)
            } else if cs.iter().all(|&i| i >= lw) {
                Some(false)
            } else {
                None
            }
        };
        match (side(a), side(b)) {
            (Some(true), Some(false)) => {
                j.keys.push(((**a).clone(), shift_columns(b, lw)));
                return;
            }
            (Some(false), Some(true)) => {
                j.keys.push(((**b).clone(), shift_columns(a, lw)));
                return;
            }
            _ => {}
        }
    }
    j.residual.push(c);
}

/// Most columns of one class [`implied_equalities`] completes (a guard: the
/// pairs grow with its square).
const MAX_IMPLIED_CLASS: usize = 16;

/// The equalities WHERE's conjuncts imply between integer columns and
/// do not state: `a = b AND b = c` implies `a = c` (among integers `=` is
/// transitive; not so for text under a collation or a number compared
/// with text, which are left alone). Pushed into the join tree like the
/// conjuncts themselves, they let a join key on `a = c` (the comma-join
/// order counts on them: `bind::join_order`); the block need not re-check
/// them.
pub fn implied_equalities(filter: &CExpr, kinds: &[ColumnKind]) -> Vec<CExpr> {
    use crate::sql::expr::BinOp;
    let int = |i: usize| kinds.get(i) == Some(&ColumnKind::Int);
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for c in filter.conjuncts() {
        if let CExpr::Bin(BinOp::Eq, a, b) = c {
            if let (CExpr::Col(a), CExpr::Col(b)) = (&**a, &**b) {
                if a != b && int(*a) && int(*b) {
                    pairs.push((*a.min(b), *a.max(b)));
                }
            }
        }
    }
    // Union-find over the columns the equalities name.
    let mut parent: std::collections::BTreeMap<usize, usize> = Default::default();
    fn find(parent: &std::collections::BTreeMap<usize, usize>, mut x: usize) -> usize {
        while let Some(&p) = parent.get(&x) {
            if p == x {
                break;
            }
            x = p;
        }
        x
    }
    for &(a, b) in &pairs {
        let (ra, rb) = (find(&parent, a), find(&parent, b));
        parent.entry(a).or_insert(a);
        parent.entry(b).or_insert(b);
        if ra != rb {
            parent.insert(ra, rb);
        }
    }
    let mut classes: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for &c in parent.keys() {
        classes.entry(find(&parent, c)).or_default().push(c);
    }
    let mut out = Vec::new();
    for cols in classes.values() {
        if cols.len() < 3 || cols.len() > MAX_IMPLIED_CLASS {
            continue;
        }
        for (i, &a) in cols.iter().enumerate() {
            for &b in &cols[i + 1..] {
                if !pairs.contains(&(a, b)) {
                    out.push(CExpr::Bin(
                        BinOp::Eq,
                        Box::new(CExpr::Col(a)),
                        Box::new(CExpr::Col(b)),
                    ));
                }
            }
        }
    }
    out
}

/// Whether WHERE conjunct `c` (over a block's row of column kinds
/// `kinds`), once [`push_where`] placed it, is checked exactly where it
/// went, so that the block need not re-check it: an input's filter and a
/// join's residual condition evaluate it as it is; a join key compares
/// exactly only integers (text keys compare by key form, not always under
/// the comparison's collation), so an equality that may become a key (each
/// side reads columns) must be of two integer columns.
pub fn placed_exactly(c: &CExpr, kinds: &[ColumnKind]) -> bool {
    use crate::sql::expr::BinOp;
    let CExpr::Bin(BinOp::Eq, a, b) = c else {
        return true;
    };
    let reads = |e: &CExpr| columns_read(e).is_none_or(|cols| !cols.is_empty());
    if !reads(a) || !reads(b) {
        return true;
    }
    let int = |e: &CExpr| matches!(e, CExpr::Col(i) if kinds.get(*i) == Some(&ColumnKind::Int));
    int(a) && int(b)
}

/// Push a WHERE conjunct of a block into the node it reads (a join tree).
/// Returns whether it was placed somewhere; the block re-checks what was
/// not, and what was placed where it may not be checked exactly
/// ([`placed_exactly`]).
pub fn push_where(node: &mut Node, c: &CExpr, host: &SessionHost<'_>) -> bool {
    let Some(cols) = columns_read(c) else {
        return false;
    };
    if cols.is_empty() {
        return false;
    }
    match node {
        Node::Join(j) => {
            let lw = j.left_width;
            let left_only = cols.iter().all(|&i| i < lw);
            let right_only = cols.iter().all(|&i| i >= lw);
            match j.kind {
                JoinKind::Inner => {
                    if left_only {
                        return push_where(&mut j.left, c, host)
                            || push_filter(&mut j.left, c.clone(), host);
                    }
                    if right_only {
                        let s = shift_columns(c, lw);
                        return push_where(&mut j.right, &s, host)
                            || push_filter(&mut j.right, s, host);
                    }
                    place_on_condition(j, c.clone(), host);
                    true
                }
                JoinKind::Left if left_only => {
                    push_where(&mut j.left, c, host) || push_filter(&mut j.left, c.clone(), host)
                }
                JoinKind::Right if right_only => {
                    let s = shift_columns(c, lw);
                    push_where(&mut j.right, &s, host) || push_filter(&mut j.right, s, host)
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// AND a conjunct into a base-table scan block's filter and re-choose its
/// access path. Only plain scans accept (no aggregate, limit, or index
/// path whose answer a filter would change).
fn push_filter(node: &mut Node, c: CExpr, host: &SessionHost<'_>) -> bool {
    match node {
        Node::Block(p) if p.is_unpruned_scan() => {
            p.add_filter(c, host);
            true
        }
        _ => false,
    }
}

/// The base table whose scan produces column `col` of `node`'s output,
/// with the position its columns start at and its width; `None` when that
/// column is computed (a derived table, a UNION).
pub fn base_table_at(node: &Node, col: usize) -> Option<(TableDef, usize, usize)> {
    match node {
        Node::Block(p) if p.is_unpruned_scan() => {
            let t = p.source.table.clone()?;
            let w = t.columns.len();
            (col < w).then_some((t, 0, w))
        }
        Node::Join(j) if col < j.left_width => base_table_at(&j.left, col),
        Node::Join(j) => base_table_at(&j.right, col - j.left_width)
            .map(|(t, off, w)| (t, off + j.left_width, w)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::expr::BinOp;
    use crate::types::Value;

    fn eq(a: usize, b: usize) -> CExpr {
        CExpr::Bin(BinOp::Eq, Box::new(CExpr::Col(a)), Box::new(CExpr::Col(b)))
    }

    fn and(a: CExpr, b: CExpr) -> CExpr {
        CExpr::Bin(BinOp::And, Box::new(a), Box::new(b))
    }

    fn pairs(v: &[CExpr]) -> Vec<(usize, usize)> {
        v.iter()
            .map(|e| match e {
                CExpr::Bin(BinOp::Eq, a, b) => match (&**a, &**b) {
                    (CExpr::Col(a), CExpr::Col(b)) => (*a, *b),
                    _ => panic!("{e:?}"),
                },
                _ => panic!("{e:?}"),
            })
            .collect()
    }

    #[test]
    fn integer_equalities_imply_the_missing_pairs_only() {
        let int = vec![ColumnKind::Int; 6];
        // 0 = 2 AND 2 = 4: 0 = 4 is implied; 1 = 3 stands alone.
        let f = and(and(eq(0, 2), eq(4, 2)), eq(1, 3));
        assert_eq!(pairs(&implied_equalities(&f, &int)), vec![(0, 4)]);
        // A full triangle implies nothing new.
        let f = and(and(eq(0, 2), eq(2, 4)), eq(0, 4));
        assert!(implied_equalities(&f, &int).is_empty());
        // Two chains joined by a fourth equality: every missing pair.
        let f = and(and(eq(0, 1), eq(2, 3)), eq(1, 2));
        assert_eq!(
            pairs(&implied_equalities(&f, &int)),
            vec![(0, 2), (0, 3), (1, 3)]
        );
    }

    #[test]
    fn only_equalities_that_may_key_a_join_inexactly_stay_rechecked() {
        let mut kinds = vec![ColumnKind::Int; 3];
        kinds[2] = ColumnKind::Text;
        let lit = |v: Value| Box::new(CExpr::Lit(v));
        // Two integer columns: a key compares them exactly.
        assert!(placed_exactly(&eq(0, 1), &kinds));
        // A text column on one side: a key would compare key forms.
        assert!(!placed_exactly(&eq(0, 2), &kinds));
        assert!(!placed_exactly(&eq(2, 0), &kinds));
        // An expression over columns on a side may become a key too.
        let sum = CExpr::Bin(BinOp::Add, Box::new(CExpr::Col(0)), Box::new(CExpr::Col(1)));
        assert!(!placed_exactly(
            &CExpr::Bin(BinOp::Eq, Box::new(sum), Box::new(CExpr::Col(1))),
            &kinds
        ));
        // A comparison with a constant, or no equality: never a key.
        let c = CExpr::Bin(BinOp::Eq, Box::new(CExpr::Col(2)), lit(Value::Int(1)));
        assert!(placed_exactly(&c, &kinds));
        let c = CExpr::Bin(BinOp::Gt, Box::new(CExpr::Col(2)), Box::new(CExpr::Col(0)));
        assert!(placed_exactly(&c, &kinds));
    }

    #[test]
    fn text_or_decimal_columns_imply_nothing() {
        let mut kinds = vec![ColumnKind::Int; 3];
        kinds[1] = ColumnKind::Text;
        let f = and(eq(0, 1), eq(1, 2));
        assert!(implied_equalities(&f, &kinds).is_empty());
        kinds[1] = ColumnKind::Decimal {
            precision: 10,
            scale: 2,
        };
        assert!(implied_equalities(&f, &kinds).is_empty());
        // OR is no conjunction.
        let f = CExpr::Bin(BinOp::Or, Box::new(eq(0, 1)), Box::new(eq(1, 2)));
        assert!(implied_equalities(&f, &[ColumnKind::Int; 3]).is_empty());
    }
}
