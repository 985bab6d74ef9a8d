//! Running a recursive CTE ([`Recursive`], planned by
//! [`crate::sql::plan::recursive`]): the seed, then the recursive blocks
//! round after round to a fixed point.
//!
//! Owns the iteration: each round runs the recursive blocks over the
//! previous round's rows only (the working table); `UNION DISTINCT` drops
//! rows already produced; a round that yields nothing ends it; a
//! base-table scan the recursive blocks join runs once per recursion, not
//! per round (its rows are kept while the CTE runs, and a join reading it
//! keeps its hash table on it: [`join_state`]); rows are converted
//! to the seed's column types. Bounded by `cte_max_recursion_depth`
//! (3636), KILL and `max_execution_time` ([`budget::tick`]) and the
//! statement's memory budget (1114; every produced row is charged).
//! Never plans and never writes.

use std::any::Any;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::{code, SqlError, SqlResult};
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::keys;
use crate::sql::exec::Exec;
use crate::sql::plan::{Join, Node, Recursive, WorkTable};
use crate::sql::Ctx;
use crate::types::{DataType, Value};

/// MySQL 8's default `cte_max_recursion_depth`.
pub const DEFAULT_MAX_DEPTH: u64 = 1000;

/// ER_CTE_MAX_RECURSION_DEPTH.
const MAX_RECURSION_DEPTH: u16 = 3636;

/// A recursive block's row converted to the seed's column types; `at` is
/// its number among the CTE's rows (1-based, as MariaDB 10.11 counts the
/// rows of its result table in the message).
fn convert(cx: &Ctx<'_>, r: &Recursive, row: Vec<Value>, at: usize) -> SqlResult<Vec<Value>> {
    let strict = cx.session.strict_writes();
    row.into_iter()
        .zip(r.types.iter().zip(&r.columns))
        .map(|(v, (ty, col))| match (ty, v) {
            (_, Value::Null) => Ok(Value::Null),
            (None, v) => Ok(v),
            (Some(DataType::Varchar(n)), Value::Text(mut s)) => {
                if let Some((i, _)) = s.char_indices().nth(*n as usize) {
                    if strict {
                        return Err(SqlError::new(
                            code::DATA_TOO_LONG,
                            format!("Data too long for column '{}' at row {at}", col.name),
                        ));
                    }
                    s.truncate(i);
                    crate::warnings::note_later(
                        1265,
                        format!("Data truncated for column '{}' at row {at}", col.name),
                    );
                }
                Ok(Value::Text(s))
            }
            (Some(ty), v) => crate::catalog::schema::coerce_value(ty, v, &col.name),
        })
        .collect()
}

/// Run the working-table leaf.
pub fn run_work(w: &WorkTable) -> SqlResult<Vec<Vec<Value>>> {
    w.rows()
}

thread_local! {
    /// The base-table scans the recursive blocks of the recursive CTEs
    /// running on this thread read in every round, by node address: at
    /// the statement's snapshot a scan (with a deterministic filter and no
    /// subquery) gives the same rows each round, so it runs once; its rows
    /// stay charged to the statement until the CTE ends.
    static SCANS: std::cell::RefCell<std::collections::HashMap<usize, Option<Scanned>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

thread_local! {
    /// What a join under a running recursive CTE keeps between rounds
    /// (its hash table over a kept scan: exec/join.rs), by the join's
    /// address: registered empty when the CTE starts, dropped when it ends.
    static JOINS: std::cell::RefCell<std::collections::HashMap<usize, Option<Rc<dyn Any>>>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

/// A remembered scan's rows and their charge.
type Scanned = (Arc<Vec<Vec<Value>>>, Reservation);

/// The scans under a recursive block that do not change between rounds:
/// plain base-table scans reached through joins and block inputs; and
/// the joins on the way to them (`joins`).
fn invariant_scans(n: &Node, out: &mut Vec<usize>, joins: &mut Vec<usize>) {
    match n {
        Node::Block(p)
            if p.is_plain_scan()
                && !p.for_update
                && p.filter
                    .as_ref()
                    .is_none_or(|f| crate::sql::plan::rewrite::columns_read(f).is_some()) =>
        {
            out.push(n as *const Node as usize)
        }
        Node::Block(p) => {
            if let Some(i) = &p.source.input {
                invariant_scans(i, out, joins);
            }
        }
        Node::Join(j) => {
            joins.push(&**j as *const Join as usize);
            invariant_scans(&j.left, out, joins);
            invariant_scans(&j.right, out, joins);
        }
        _ => {}
    }
}

/// The scans and joins of one running recursive CTE, forgotten when it
/// ends.
struct Memo(Vec<usize>, Vec<usize>);

impl Memo {
    fn register(steps: &[Node]) -> Memo {
        let (mut addrs, mut joins) = (Vec::new(), Vec::new());
        for s in steps {
            invariant_scans(s, &mut addrs, &mut joins);
        }
        SCANS.with(|m| {
            let mut m = m.borrow_mut();
            for a in &addrs {
                m.insert(*a, None);
            }
        });
        JOINS.with(|m| {
            let mut m = m.borrow_mut();
            for a in &joins {
                m.insert(*a, None);
            }
        });
        Memo(addrs, joins)
    }
}

impl Drop for Memo {
    fn drop(&mut self) {
        SCANS.with(|m| {
            let mut m = m.borrow_mut();
            for a in &self.0 {
                m.remove(a);
            }
        });
        // Taken out before it drops: a kept state's teardown may not
        // reach this table again while it is borrowed.
        let kept: Vec<_> = JOINS.with(|m| {
            let mut m = m.borrow_mut();
            self.1.iter().filter_map(|a| m.remove(a)).collect()
        });
        drop(kept);
    }
}

/// Whether `node` is a scan a running recursive CTE keeps between rounds
/// (its rows are the same in every round).
pub fn is_kept_scan(node: &Node) -> bool {
    SCANS.with(|m| m.borrow().contains_key(&(node as *const Node as usize)))
}

/// Let go of the rows kept for scan `node` (a join keeps them itself: a
/// second copy would only take memory); it stays a kept scan.
pub fn release_scan(node: &Node) {
    let kept = SCANS.with(|m| {
        m.borrow_mut()
            .get_mut(&(node as *const Node as usize))
            .and_then(Option::take)
    });
    drop(kept);
}

/// What join `j` kept between the rounds of the running recursive CTE:
/// `None` when no running CTE reads it (nothing is kept), `Some(None)`
/// before it kept anything.
pub fn join_state<T: Any>(j: &Join) -> Option<Option<Rc<T>>> {
    JOINS.with(|m| {
        m.borrow()
            .get(&(j as *const Join as usize))
            .map(|s| s.clone().and_then(|s| s.downcast::<T>().ok()))
    })
}

/// Keep `state` for join `j` until the running recursive CTE ends (when
/// one reads it).
pub fn keep_join_state<T: Any>(j: &Join, state: Rc<T>) {
    JOINS.with(|m| {
        if let Some(e) = m.borrow_mut().get_mut(&(j as *const Join as usize)) {
            *e = Some(state);
        }
    });
}

/// The rows of `node` when it is a scan a running recursive CTE already
/// ran (the block operator asks before running).
pub fn cached_scan(node: &Node) -> Option<Vec<Vec<Value>>> {
    SCANS.with(|m| {
        m.borrow()
            .get(&(node as *const Node as usize))
            .and_then(|e| e.as_ref().map(|(rows, _)| rows.as_ref().clone()))
    })
}

/// Keep the rows of a scan a running recursive CTE reads every round.
pub fn remember_scan(node: &Node, rows: &[Vec<Value>]) -> SqlResult<()> {
    let key = node as *const Node as usize;
    let wanted = SCANS.with(|m| matches!(m.borrow().get(&key), Some(None)));
    if !wanted {
        return Ok(());
    }
    let mut mem = Reservation::new();
    mem.add_rows(rows)?;
    let rows = Arc::new(rows.to_vec());
    SCANS.with(|m| {
        if let Some(e) = m.borrow_mut().get_mut(&key) {
            *e = Some((rows, mem));
        }
    });
    Ok(())
}

/// `@@cte_max_recursion_depth` of the session.
fn max_depth(cx: &Ctx<'_>) -> u64 {
    cx.session
        .vars
        .get("cte_max_recursion_depth")
        .and_then(|v| v.parse().ok())
        .unwrap_or(DEFAULT_MAX_DEPTH)
}

/// Run a recursive union to its fixed point.
pub fn run(cx: &mut Exec<'_, '_>, r: &Recursive, outer: &[Value]) -> SqlResult<Vec<Vec<Value>>> {
    let limit = max_depth(cx);
    let mut mem = Reservation::new();
    let mut seen: HashSet<Vec<u8>> = HashSet::new();
    let mut keep = |rows: Vec<Vec<Value>>, mem: &mut Reservation| -> SqlResult<Vec<Vec<Value>>> {
        let mut kept = Vec::with_capacity(rows.len());
        for row in rows {
            budget::tick()?;
            debug_assert_eq!(row.len(), r.columns.len(), "recursive row width");
            if !r.all {
                let k = keys::group_key_under(&row, &r.colls);
                if seen.contains(&k) {
                    continue;
                }
                mem.add(k.len() + 48)?;
                seen.insert(k);
            }
            mem.add_row(&row)?;
            kept.push(row);
        }
        Ok(kept)
    };
    let seed = cx.run(&r.seed, outer)?;
    let mut working = keep(seed, &mut mem)?;
    let _memo = Memo::register(&r.steps);
    let mut out: Vec<Vec<Value>> = Vec::new();
    let mut iterations: u64 = 0;
    let enough = |have: usize| {
        r.limit
            .is_some_and(|(skip, n)| have >= skip.saturating_add(n))
    };
    while !working.is_empty() && !enough(out.len() + working.len()) {
        iterations += 1;
        if iterations > limit {
            return Err(SqlError::new(
                MAX_RECURSION_DEPTH,
                format!(
                    "Recursive query aborted after {iterations} iterations. Try increasing @@cte_max_recursion_depth to a larger value."
                ),
            ));
        }
        let this = Arc::new(working);
        *r.work
            .lock()
            .map_err(|_| SqlError::internal("recursive working table poisoned"))? = this.clone();
        let mut next = Vec::new();
        for s in &r.steps {
            for row in cx.run(s, outer)? {
                let at = out.len() + this.len() + next.len() + 1;
                next.push(convert(cx, r, row, at)?);
            }
        }
        let next = keep(next, &mut mem)?;
        // The previous round's rows are part of the answer.
        *r.work
            .lock()
            .map_err(|_| SqlError::internal("recursive working table poisoned"))? =
            Arc::new(Vec::new());
        out.extend(Arc::try_unwrap(this).unwrap_or_else(|a| a.as_ref().clone()));
        working = next;
    }
    out.extend(working);
    if let Some((skip, n)) = r.limit {
        out = out.into_iter().skip(skip).take(n).collect();
    }
    // Charged while produced; the caller charges the answer it keeps.
    drop(mem);
    Ok(out)
}
