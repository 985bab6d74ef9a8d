//! Where window functions may be used in a query block, and when an
//! index top-k path may still answer a windowed block.
//!
//! Owns two planning rules: a window call read through a select-list
//! alias in WHERE, GROUP BY or HAVING is refused (3594,
//! [`check_placement`]); a block's first k rows suffice for its windows
//! only when every window is ROW_NUMBER / RANK / DENSE_RANK without
//! PARTITION BY ordered as the block ([`prefix_safe`]); a derived
//! table's ROW_NUMBER / RANK / DENSE_RANK rows its reader's WHERE rejects
//! by value are not passed on ([`push_cut`]). Never computes a window
//! function (that is [`crate::sql::exec::window`]).

use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::{AggCall, BinOp, CExpr, WinFunc};
use crate::types::{ColumnKind, Value};

/// `col <= k` in a WHERE conjunct `c` over a derived table's columns
/// (also `col < k + 1`, `col = k` and the mirrored forms): the column
/// and the greatest value of an integer column it lets through.
fn upper_bound(c: &CExpr) -> Option<(usize, i64)> {
    let CExpr::Bin(op, a, b) = c else {
        return None;
    };
    match (op, &**a, &**b) {
        (BinOp::LtEq | BinOp::Eq, CExpr::Col(i), CExpr::Lit(Value::Int(k)))
        | (BinOp::GtEq | BinOp::Eq, CExpr::Lit(Value::Int(k)), CExpr::Col(i)) => Some((*i, *k)),
        (BinOp::Lt, CExpr::Col(i), CExpr::Lit(Value::Int(k)))
        | (BinOp::Gt, CExpr::Lit(Value::Int(k)), CExpr::Col(i)) => Some((*i, k.checked_sub(1)?)),
        _ => None,
    }
}

/// The block's WHERE conjunct `c` over the rows of its derived block
/// (its `projection` and `aggs`; the caller checks it has no LIMIT or
/// DISTINCT, whose rows would otherwise change): when it bounds a column
/// that is the derived block's last window call, a ROW_NUMBER, RANK or
/// DENSE_RANK (`rn <= 3`), the window passes on only the rows within the
/// bound ([`crate::sql::expr::Window::cut`]): the others the conjunct
/// would reject. (A row's number or rank is its value whatever rows
/// follow it; the block reads the derived table alone, and the conjunct
/// stays in its WHERE.) MySQL computes those rows and drops them; the
/// answer is the same.
pub(crate) fn push_cut(
    projection: &[(String, CExpr, ColumnKind)],
    aggs: &mut [AggCall],
    c: &CExpr,
) {
    let Some((col, k)) = upper_bound(c) else {
        return;
    };
    let Some((_, CExpr::Agg(slot), _)) = projection.get(col) else {
        return;
    };
    let slot = *slot;
    if aggs.iter().rposition(|a| a.window.is_some()) != Some(slot) {
        return;
    }
    let Some(w) = aggs.get_mut(slot).and_then(|a| a.window.as_deref_mut()) else {
        return;
    };
    if matches!(
        w.func,
        WinFunc::RowNumber | WinFunc::Rank | WinFunc::DenseRank
    ) {
        w.cut = Some(w.cut.map_or(k, |c| c.min(k)));
    }
}

/// Whether the block's first `k` rows in its ORDER BY are all its window
/// functions need — so an index top-k path (vector / full-text) may
/// still answer it: every window is ROW_NUMBER, RANK or DENSE_RANK without
/// PARTITION BY, ordered exactly as the block (a row's number or rank
/// depends only on the rows before it in that order, never on those after
/// the cut). True without windows.
pub(crate) fn prefix_safe(aggs: &[AggCall], order_by: &[(CExpr, bool)]) -> bool {
    let key = |(e, d): &(CExpr, bool)| format!("{e:?} {d}");
    aggs.iter().filter_map(|a| a.window.as_deref()).all(|w| {
        w.func != WinFunc::Agg
            && w.partition.is_empty()
            && w.order.len() == order_by.len()
            && w.order.iter().map(key).eq(order_by.iter().map(key))
    })
}

/// Whether the units the window operator hands back are already in the
/// order the block's ORDER BY (`order_by`) would sort them into: it is a
/// prefix of the last window's keys — its PARTITION BY keys ascending,
/// then its ORDER BY keys — key for key, direction for direction, with no
/// vector distance among them (whose NULLs sort last in both directions).
/// The window sorts stably by all of those, so a stable sort by a prefix
/// of them leaves the units where they are: the block may skip it. False
/// without windows.
pub(crate) fn sorted_as(aggs: &[AggCall], order_by: &[(CExpr, bool)]) -> bool {
    let key = |e: &CExpr, d: bool| format!("{e:?} {d}");
    let Some(w) = aggs.iter().rev().find_map(|a| a.window.as_deref()) else {
        return false;
    };
    let window_keys = w
        .partition
        .iter()
        .map(|e| (e, false))
        .chain(w.order.iter().map(|(e, d)| (e, *d)));
    !order_by.is_empty()
        && order_by.len() <= w.partition.len() + w.order.len()
        && order_by.iter().zip(window_keys).all(|((o, od), (k, kd))| {
            let distance = matches!(o, CExpr::Func(name, _)
                    if crate::sql::expr::VECTOR_DISTANCE_FNS.contains(&name.as_str()));
            !distance && key(o, *od) == key(k, kd)
        })
}

/// Refuse a window call read where MySQL allows none: through a select
/// list alias in WHERE, GROUP BY or HAVING (3594). Direct calls there
/// were refused by the compiler (3593).
pub(crate) fn check_placement<'e>(
    aggs: &[AggCall],
    projection: &[(String, CExpr)],
    places: impl Iterator<Item = &'e CExpr>,
) -> SqlResult<()> {
    let windowed = |e: &CExpr| {
        let mut found = false;
        e.walk(&mut |x| {
            if let CExpr::Agg(i) = x {
                found |= aggs.get(*i).is_some_and(|a| a.window.is_some());
            }
        });
        found
    };
    for e in places {
        if windowed(e) {
            let alias = projection
                .iter()
                .find(|(_, p)| windowed(p))
                .map_or("", |(n, _)| n.as_str());
            return Err(SqlError::new(
                code::WINDOW_INVALID_ALIAS_USE,
                format!(
                    "You cannot use the alias '{alias}' of an expression containing a window function in this context.'"
                ),
            ));
        }
    }
    Ok(())
}

/// Check each RANGE frame with an offset against its ORDER BY key's type
/// (`kind`) as MySQL does: the key numeric or temporal (3587), a
/// temporal key's offsets INTERVALs (3588), a numeric key's numbers
/// (3589).
pub(crate) fn check_range_types(
    aggs: &[AggCall],
    kind: &mut dyn FnMut(&CExpr) -> ColumnKind,
) -> SqlResult<()> {
    for w in aggs.iter().filter_map(|a| a.window.as_deref()) {
        for (_, interval) in w.range_at.iter().flatten() {
            let Some((key, _)) = w.order.first() else {
                continue;
            };
            match (kind(key), interval) {
                (ColumnKind::Int | ColumnKind::Float | ColumnKind::Decimal { .. }, false)
                | (ColumnKind::Date | ColumnKind::DateTime(_), true) => {}
                (ColumnKind::Int | ColumnKind::Float | ColumnKind::Decimal { .. }, true) => {
                    return Err(SqlError::new(
                        code::WINDOW_RANGE_FRAME_NUMERIC_TYPE,
                        "Window '<unnamed window>' with RANGE frame has ORDER BY expression of numeric type, INTERVAL bound value not allowed.",
                    ))
                }
                (ColumnKind::Date | ColumnKind::DateTime(_), false) => {
                    return Err(SqlError::new(
                        code::WINDOW_RANGE_FRAME_TEMPORAL_TYPE,
                        "Window '<unnamed window>' with RANGE frame has ORDER BY expression of datetime type. Only INTERVAL bound value allowed.",
                    ))
                }
                _ => {
                    return Err(SqlError::new(
                        code::WINDOW_RANGE_FRAME_ORDER_TYPE,
                        "Window '<unnamed window>' with RANGE N PRECEDING/FOLLOWING frame requires exactly one ORDER BY expression, of numeric or temporal type",
                    ))
                }
            }
        }
    }
    Ok(())
}
