//! The join of a recursive CTE's step with a table it reads every round,
//! on one integer key (a tree or graph walk: `tree t JOIN sub s ON
//! t.parent = s.id`): the table's rows are read once per recursion and
//! kept with a table from key to rows, and each round probes it with the
//! working table's keys only.
//!
//! Owns that table ([`IntKept`]): built in the first round from the kept
//! scan (claimed from [`crate::sql::exec::recursive`], so its rows are not
//! kept twice), charged to the statement until the CTE ends, chains in
//! row order so the output is in the order the general hash join gives.
//! A join it does not fit (other key shapes, a kept key that is not an
//! integer, a probe key of another class) is left to the general join in
//! exec/join.rs, which answers the same. Never plans and never writes.

use std::collections::HashMap;
use std::rc::Rc;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::recursive;
use crate::sql::exec::{all_hold, prepare, Exec, Prepared};
use crate::sql::expr::{key_form, CExpr, EvalCtx};
use crate::sql::host::SessionHost;
use crate::sql::plan::{Join, JoinKind};
use crate::types::Value;

/// No further row in a chain.
const END: u32 = u32::MAX;

/// What the join keeps between rounds.
enum IntKept {
    /// The kept input's key is not always an integer (or NULL): the
    /// general join answers every round.
    Declined,
    Table {
        rows: Vec<Vec<Value>>,
        /// Key → first row with it; `next[i]`: the next row with row
        /// `i`'s key, in row order.
        heads: HashMap<i64, u32, foldhash::fast::RandomState>,
        next: Vec<u32>,
        /// The charge of the rows and the table, until the CTE ends.
        _mem: Reservation,
    },
}

/// The kept input's key column when the join has one equality key, a
/// plain column on the kept side.
fn kept_column(j: &Join, kept_left: bool) -> Option<usize> {
    match j.keys.as_slice() {
        [(l, r)] => match if kept_left { l } else { r } {
            CExpr::Col(i) => Some(*i),
            _ => None,
        },
        _ => None,
    }
}

/// Which input is the kept scan: `Some(true)` the left one.
fn kept_side(j: &Join) -> Option<bool> {
    match (
        recursive::is_kept_scan(&j.left),
        recursive::is_kept_scan(&j.right),
        j.kind,
    ) {
        (true, false, JoinKind::Inner) => Some(true),
        (false, true, JoinKind::Inner | JoinKind::Left) => Some(false),
        _ => None,
    }
}

/// Build the kept table over the kept input's rows (`Declined` when a key
/// is not an integer).
fn build(rows: Vec<Vec<Value>>, col: usize) -> SqlResult<Result<IntKept, Vec<Vec<Value>>>> {
    let Ok(n) = u32::try_from(rows.len()) else {
        return Ok(Err(rows));
    };
    if n == END {
        return Ok(Err(rows));
    }
    let mut mem = Reservation::new();
    mem.add_rows(&rows)?;
    let mut heads: HashMap<i64, u32, foldhash::fast::RandomState> =
        HashMap::with_capacity_and_hasher(rows.len(), Default::default());
    let mut next = vec![END; rows.len()];
    mem.add(rows.len() * (4 + 16))?;
    // Backwards, each row put at the front of its chain: chains run in
    // row order.
    for i in (0..n).rev() {
        budget::tick()?;
        let k = match rows[i as usize].get(col).map(key_form) {
            Some(Value::Int(k)) => k,
            Some(Value::Null) => continue,
            _ => return Ok(Err(rows)),
        };
        let head = heads.entry(k).or_insert(END);
        next[i as usize] = *head;
        *head = i;
    }
    Ok(Ok(IntKept::Table {
        rows,
        heads,
        next,
        _mem: mem,
    }))
}

/// Join `j` by the kept table when it is such a join under a running
/// recursive CTE; `None`: the general join answers (nothing was run).
pub(super) fn join(
    cx: &mut Exec<'_, '_>,
    j: &Join,
    outer: &[Value],
) -> SqlResult<Option<Vec<Vec<Value>>>> {
    let Some(kept_left) = kept_side(j) else {
        return Ok(None);
    };
    let Some(col) = kept_column(j, kept_left) else {
        return Ok(None);
    };
    let kept_node = if kept_left { &j.left } else { &j.right };
    let kept = match recursive::join_state::<IntKept>(j) {
        None => return Ok(None),
        Some(Some(k)) => k,
        Some(None) => {
            recursive::claim_scan(kept_node);
            let rows = cx.run(kept_node, outer)?;
            let k = match build(rows, col)? {
                Ok(k) => k,
                Err(rows) => {
                    // The general join keeps its own state over them.
                    recursive::restore_scan(kept_node, rows)?;
                    IntKept::Declined
                }
            };
            let k = Rc::new(k);
            recursive::keep_join_state(j, k.clone());
            k
        }
    };
    let IntKept::Table {
        rows: kept_rows,
        heads,
        next,
        ..
    } = kept.as_ref()
    else {
        return Ok(None);
    };
    let host = SessionHost::new(cx.session, cx.engine);
    // The working table read in place (the union charges its rows);
    // any other input run and charged here.
    let other_node = if kept_left { &j.right } else { &j.left };
    let mut mem = Reservation::new();
    let (shared, owned);
    let other: &[Vec<Value>] = match recursive::shared_work(other_node)? {
        Some(rows) => {
            shared = rows;
            &shared
        }
        None => {
            owned = budget::Grave(cx.run(other_node, outer)?);
            mem.add_rows(&owned)?;
            &owned
        }
    };
    let key_expr = if kept_left {
        &j.keys[0].1
    } else {
        &j.keys[0].0
    };
    // The probe keys first: one of another class than an integer's
    // leaves the round to the general join (SQL equality is then no key
    // equality).
    let mut keys = Vec::with_capacity(other.len());
    for row in other.iter() {
        budget::tick()?;
        let v = match key_expr {
            CExpr::Col(i) => row.get(*i).map_or(Value::Null, key_form),
            e => key_form(&e.eval(&EvalCtx {
                row,
                outer,
                aggs: &[],
                matches: &[],
                funcs: &host,
            })?),
        };
        keys.push(match v {
            Value::Int(k) => Some(k),
            // Matches nothing: NULL, and numbers no integer equals.
            Value::Null | Value::Float(_) | Value::Decimal(_) => None,
            _ => return Ok(None),
        });
    }
    mem.add(keys.len() * 16)?;
    let residual: Vec<Prepared<'_>> = j
        .residual
        .iter()
        .map(|c| prepare(cx, c, j.left_width + j.right_width, outer))
        .collect::<SqlResult<_>>()?;
    let mut out_mem = Reservation::new();
    let mut out: budget::Grave<Vec<Vec<Value>>> = Default::default();
    let mut spare: Vec<Value> = Vec::new();
    for (oi, k) in keys.iter().enumerate() {
        budget::tick()?;
        let mut matched = false;
        let mut at = k.and_then(|k| heads.get(&k).copied()).unwrap_or(END);
        while at != END {
            budget::tick()?;
            let kr = kept_rows[at as usize].as_slice();
            at = next[at as usize];
            let (l, r) = if kept_left {
                (kr, other[oi].as_slice())
            } else {
                (other[oi].as_slice(), kr)
            };
            let mut row = std::mem::take(&mut spare);
            row.clear();
            row.reserve(l.len() + r.len());
            row.extend_from_slice(l);
            row.extend_from_slice(r);
            if !all_hold(cx, &residual, outer, &host, &row)? {
                spare = row;
                continue;
            }
            out_mem.add_row(&row)?;
            out.push(row);
            matched = true;
        }
        if !matched && j.kind == JoinKind::Left {
            let mut row = other[oi].clone();
            row.resize(j.left_width + j.right_width, Value::Null);
            out_mem.add_row(&row)?;
            out.push(row);
        }
    }
    Ok(Some(out.take()))
}
