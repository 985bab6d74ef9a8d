//! Running a recursive CTE ([`Recursive`], planned by
//! [`crate::sql::plan::recursive`]) as an operator: the seed, then the
//! recursive blocks round after round to a fixed point, each round's rows
//! passed on in batches as soon as the next round has read them.
//!
//! Owns the iteration: each round runs the recursive blocks over the
//! previous round's rows only (the working table); `UNION DISTINCT` drops
//! rows already produced; a round that yields nothing ends it; a
//! base-table scan the recursive blocks join runs once per recursion, not
//! per round (its rows are kept while the CTE runs, and a join reading it
//! keeps its hash table on it: [`join_state`], or claims the scan and
//! keeps the rows itself: [`claim_scan`]); rows are converted to the
//! seed's column types. Bounded by `cte_max_recursion_depth` (3636), KILL
//! and `max_execution_time` ([`budget::tick`]) and the statement's memory
//! budget (1114; every produced row stays charged until the union ends,
//! as MySQL's CTE table holds it, also when nothing above keeps it).
//! Never plans and never writes.

use std::any::{Any, TypeId};
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;

use crate::error::{code, SqlError, SqlResult};
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::keys;
use crate::sql::exec::op::{Batch, BoxOp, Made, Meter, Operator, Row, BATCH_ROWS};
use crate::sql::exec::Exec;
use crate::sql::plan::{Join, Node, Recursive, Stage, WorkTable};
use crate::sql::Ctx;
use crate::types::{DataType, Value};

/// MySQL 8's default `cte_max_recursion_depth`.
pub const DEFAULT_MAX_DEPTH: u64 = 1000;

/// ER_CTE_MAX_RECURSION_DEPTH.
const MAX_RECURSION_DEPTH: u16 = 3636;

/// A recursive block's row converted to the seed's column types, in
/// place; `at` is its number among the CTE's rows (1-based, as MariaDB
/// 10.11 counts the rows of its result table in the message).
fn convert(cx: &Ctx<'_>, r: &Recursive, row: &mut [Value], at: usize) -> SqlResult<()> {
    for (v, (ty, col)) in row.iter_mut().zip(r.types.iter().zip(&r.columns)) {
        match (ty, &mut *v) {
            // Already of the type (the common case: nothing moves).
            (_, Value::Null) | (None, _) => {}
            (Some(DataType::BigInt), Value::Int(_)) => {}
            (Some(DataType::Double), Value::Float(f)) if f.is_finite() => {}
            (Some(DataType::Varchar(n)), Value::Text(s)) => {
                if let Some((i, _)) = s.char_indices().nth(*n as usize) {
                    // Asked here only: the session's sql_mode is looked up
                    // by name (not per row of the common case).
                    if cx.session.strict_writes() {
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
            }
            (Some(ty), v) => {
                let taken = std::mem::replace(v, Value::Null);
                *v = crate::catalog::schema::coerce_value(ty, taken, &col.name)?;
            }
        }
    }
    Ok(())
}

/// Run the working-table leaf.
pub fn run_work(w: &WorkTable) -> SqlResult<Vec<Vec<Value>>> {
    w.rows()
}

/// The working-table leaf `node`'s rows read in place (not copied, as
/// [`run_work`] does), its run metered as the leaf's operator would;
/// `None` when `node` is no working-table leaf.
pub fn shared_work(node: &Node) -> SqlResult<Option<Arc<Vec<Row>>>> {
    let Node::WorkTable(w) = node else {
        return Ok(None);
    };
    let mut meter = Meter::new(node, Stage::Node);
    let start = meter.start();
    let rows = w
        .rows
        .lock()
        .map_err(|_| SqlError::internal("recursive working table poisoned"))?
        .clone();
    meter.step(start, rows.len(), rows.len().div_ceil(BATCH_ROWS));
    Ok(Some(rows))
}

/// What a running recursive CTE knows of a scan its recursive blocks
/// read in every round.
enum KeptScan {
    /// Not run yet: its rows are kept when it runs.
    Wanted,
    /// A join keeps what it needs of its rows itself: they are not kept
    /// here.
    Claimed,
    /// Its rows and their charge.
    Rows {
        rows: Arc<Vec<Vec<Value>>>,
        _charge: Reservation,
    },
}

thread_local! {
    /// The base-table scans the recursive blocks of the recursive CTEs
    /// running on this thread read in every round, by node address: at
    /// the statement's snapshot a scan (with a deterministic filter and no
    /// subquery) gives the same rows each round, so it runs once; its rows
    /// stay charged to the statement until the CTE ends.
    static SCANS: std::cell::RefCell<std::collections::HashMap<usize, KeptScan>> =
        std::cell::RefCell::new(std::collections::HashMap::new());
}

thread_local! {
    /// The joins under a running recursive CTE (by address), and what
    /// they keep between rounds (their hash table over a kept scan:
    /// exec/join.rs, exec/recursive_join.rs) by the join's address and
    /// the kind of state: registered when the CTE starts, dropped when
    /// it ends.
    static JOINS: std::cell::RefCell<JoinStates> = std::cell::RefCell::new(JoinStates::default());
}

/// The joins of the running recursive CTEs and their kept states.
#[derive(Default)]
struct JoinStates {
    joins: HashSet<usize>,
    kept: std::collections::HashMap<(usize, TypeId), Rc<dyn Any>>,
}

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
                m.insert(*a, KeptScan::Wanted);
            }
        });
        JOINS.with(|m| {
            let mut m = m.borrow_mut();
            m.joins.extend(joins.iter().copied());
        });
        Memo(addrs, joins)
    }
}

impl Drop for Memo {
    fn drop(&mut self) {
        // Taken out before they drop: a kept state's teardown may not
        // reach these tables again while they are borrowed.
        let scans: Vec<_> = SCANS.with(|m| {
            let mut m = m.borrow_mut();
            self.0.iter().filter_map(|a| m.remove(a)).collect()
        });
        drop(scans);
        let kept: Vec<_> = JOINS.with(|m| {
            let mut m = m.borrow_mut();
            for a in &self.1 {
                m.joins.remove(a);
            }
            let gone: Vec<(usize, TypeId)> = m
                .kept
                .keys()
                .filter(|(a, _)| self.1.contains(a))
                .copied()
                .collect();
            gone.into_iter().filter_map(|k| m.kept.remove(&k)).collect()
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
            .map(|e| std::mem::replace(e, KeptScan::Claimed))
    });
    drop(kept);
}

/// Claim kept scan `node` for a join that keeps what it needs of its rows
/// itself: when it runs next, its rows are not kept a second time
/// ([`restore_scan`] gives them back if the join does not keep them after
/// all).
pub fn claim_scan(node: &Node) {
    SCANS.with(|m| {
        if let Some(e) = m.borrow_mut().get_mut(&(node as *const Node as usize)) {
            if matches!(e, KeptScan::Wanted) {
                *e = KeptScan::Claimed;
            }
        }
    });
}

/// Keep the rows of claimed scan `node` after all (its join did not).
pub fn restore_scan(node: &Node, rows: Vec<Vec<Value>>) -> SqlResult<()> {
    let key = node as *const Node as usize;
    let claimed = SCANS.with(|m| matches!(m.borrow().get(&key), Some(KeptScan::Claimed)));
    if !claimed {
        return Ok(());
    }
    let mut mem = Reservation::new();
    mem.add_rows(&rows)?;
    let rows = Arc::new(rows);
    SCANS.with(|m| {
        if let Some(e) = m.borrow_mut().get_mut(&key) {
            *e = KeptScan::Rows { rows, _charge: mem };
        }
    });
    Ok(())
}

/// What join `j` kept between the rounds of the running recursive CTE
/// (of type `T`): `None` when no running CTE reads it (nothing is kept),
/// `Some(None)` before it kept anything.
pub fn join_state<T: Any>(j: &Join) -> Option<Option<Rc<T>>> {
    let a = j as *const Join as usize;
    JOINS.with(|m| {
        let m = m.borrow();
        m.joins.contains(&a).then(|| {
            m.kept
                .get(&(a, TypeId::of::<T>()))
                .and_then(|s| s.clone().downcast::<T>().ok())
        })
    })
}

/// Keep `state` for join `j` until the running recursive CTE ends (when
/// one reads it).
pub fn keep_join_state<T: Any>(j: &Join, state: Rc<T>) {
    let a = j as *const Join as usize;
    JOINS.with(|m| {
        let mut m = m.borrow_mut();
        if m.joins.contains(&a) {
            m.kept.insert((a, TypeId::of::<T>()), state);
        }
    });
}

/// The rows of `node` when it is a scan a running recursive CTE already
/// ran (the block operator asks before running).
pub fn cached_scan(node: &Node) -> Option<Vec<Vec<Value>>> {
    SCANS.with(|m| match m.borrow().get(&(node as *const Node as usize)) {
        Some(KeptScan::Rows { rows, .. }) => Some(rows.as_ref().clone()),
        _ => None,
    })
}

/// Keep the rows of a scan a running recursive CTE reads every round
/// (unless a join claimed it).
pub fn remember_scan(node: &Node, rows: &[Vec<Value>]) -> SqlResult<()> {
    let key = node as *const Node as usize;
    let wanted = SCANS.with(|m| matches!(m.borrow().get(&key), Some(KeptScan::Wanted)));
    if !wanted {
        return Ok(());
    }
    let mut mem = Reservation::new();
    mem.add_rows(rows)?;
    let rows = Arc::new(rows.to_vec());
    SCANS.with(|m| {
        if let Some(e) = m.borrow_mut().get_mut(&key) {
            *e = KeptScan::Rows { rows, _charge: mem };
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

/// The operator of a recursive union ([`Recursive`]): the seed, then the
/// recursive blocks round after round, each round's rows passed on in
/// batches once the next round has read them (a round's rows are the
/// next round's working table, then moved out, never copied).
pub fn operator<'p>(node: &'p Node, r: &'p Recursive, outer: &'p [Value]) -> BoxOp<'p> {
    Box::new(Union {
        r,
        outer,
        meter: Meter::new(node, Stage::Node),
        rounds: None,
    })
}

/// A running recursive union.
struct Union<'p> {
    r: &'p Recursive,
    outer: &'p [Value],
    meter: Meter<'p>,
    /// Started at the first pull.
    rounds: Option<Rounds>,
}

/// The state of the iteration between two pulls.
struct Rounds {
    /// `@@cte_max_recursion_depth`.
    max: u64,
    iterations: u64,
    /// `UNION DISTINCT`: the keys of every row produced so far.
    seen: HashSet<Vec<u8>>,
    /// Every row produced and every key kept, charged until the union
    /// ends (MySQL holds them in the CTE's temporary table): so an
    /// unbounded recursion fails with 1114 even when nothing above keeps
    /// its rows.
    mem: Reservation,
    /// The last round's rows, not yet read by a next round; `None` once
    /// no round follows.
    working: Option<Vec<Row>>,
    /// Rows produced before `working` (row numbers in messages, LIMIT).
    before: usize,
    /// The rows being passed on.
    out: Made,
    /// LIMIT on the union: rows still to skip, rows still to pass on.
    skip: usize,
    take: usize,
    /// The scans and joins kept between rounds (dropped last).
    _memo: Memo,
}

impl Union<'_> {
    /// The seed's rows, the first working table.
    fn start(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Rounds> {
        let r = self.r;
        let mut mem = Reservation::new();
        let mut seen = HashSet::new();
        let seed = cx.run(&r.seed, self.outer)?;
        let working = keep(r, &mut seen, seed, &mut mem)?;
        let (skip, take) = r.limit.unwrap_or((0, usize::MAX));
        Ok(Rounds {
            max: max_depth(cx),
            iterations: 0,
            seen,
            mem,
            working: Some(working),
            before: 0,
            out: Made::new(Vec::new()),
            skip,
            take,
            _memo: Memo::register(&r.steps),
        })
    }

    /// The next batch: the current round's rows, else those of the round
    /// the next round reads (run now), else none.
    fn pull(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<Batch>> {
        if self.rounds.is_none() {
            self.rounds = Some(self.start(cx)?);
        }
        let r = self.r;
        let Some(st) = self.rounds.as_mut() else {
            return Ok(None);
        };
        loop {
            if let Some(b) = st.out.next_batch() {
                return Ok(Some(b));
            }
            let Some(working) = st.working.take() else {
                return Ok(None);
            };
            let have = st.before + working.len();
            let enough = r
                .limit
                .is_some_and(|(skip, n)| have >= skip.saturating_add(n));
            let done = if working.is_empty() || enough {
                working
            } else {
                st.iterations += 1;
                if st.iterations > st.max {
                    return Err(SqlError::new(
                        MAX_RECURSION_DEPTH,
                        format!(
                            "Recursive query aborted after {} iterations. Try increasing @@cte_max_recursion_depth to a larger value.",
                            st.iterations
                        ),
                    ));
                }
                let (done, next) = round(cx, r, self.outer, working, st.before)?;
                let next = keep(r, &mut st.seen, next, &mut st.mem)?;
                st.working = Some(next);
                done
            };
            st.before += done.len();
            // LIMIT [skip,] n on the union's rows, in the order produced.
            let mut done = done;
            let skipped = st.skip.min(done.len());
            done.drain(..skipped);
            st.skip -= skipped;
            done.truncate(st.take);
            st.take -= done.len();
            if st.take == 0 {
                st.working = None;
            }
            st.out = Made::new(done);
        }
    }
}

impl Operator for Union<'_> {
    fn next(&mut self, cx: &mut Exec<'_, '_>) -> SqlResult<Option<Batch>> {
        let start = self.meter.start();
        let b = self.pull(cx)?;
        if let Some(st) = &self.rounds {
            self.meter.holds(st.mem.bytes());
        }
        self.meter.step(
            start,
            b.as_ref().map_or(0, Batch::len),
            usize::from(b.is_some()),
        );
        Ok(b)
    }
}

/// Rows kept of those a round produced: under `UNION DISTINCT`, only
/// those not produced before; each charged to `mem`.
fn keep(
    r: &Recursive,
    seen: &mut HashSet<Vec<u8>>,
    rows: Vec<Row>,
    mem: &mut Reservation,
) -> SqlResult<Vec<Row>> {
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
}

/// One round: the recursive blocks over `working` (the working table
/// while they run); `before` rows were produced before it. Gives back
/// the working rows and the round's rows, converted to the seed's types.
fn round(
    cx: &mut Exec<'_, '_>,
    r: &Recursive,
    outer: &[Value],
    working: Vec<Row>,
    before: usize,
) -> SqlResult<(Vec<Row>, Vec<Row>)> {
    let this = Arc::new(working);
    let cell = || {
        r.work
            .lock()
            .map_err(|_| SqlError::internal("recursive working table poisoned"))
    };
    *cell()? = this.clone();
    let mut next = Vec::new();
    let ran = (|| -> SqlResult<()> {
        for s in &r.steps {
            for mut row in cx.run(s, outer)? {
                let at = before + this.len() + next.len() + 1;
                convert(cx, r, &mut row, at)?;
                next.push(row);
            }
        }
        Ok(())
    })();
    // The working table is read no more: its rows move out.
    *cell()? = Arc::new(Vec::new());
    ran?;
    let this = Arc::try_unwrap(this).unwrap_or_else(|a| a.as_ref().clone());
    Ok((this, next))
}
