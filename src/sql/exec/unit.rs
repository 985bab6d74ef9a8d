//! The parts of a query block its operators share, below them all: the
//! block's output unit ([`Unit`]), its expressions prepared for one run
//! ([`Exprs`], a window call's in [`WindowExprs`]), and the groups of an
//! aggregate ([`Groups`], each folding its aggregates with
//! [`crate::sql::exec::agg`], spilling past `tmp_table_size`). The block
//! (`exec::block` and its operators), the window operator
//! (`exec::window`, `exec::window_stream`) and the parallel fold
//! (`exec::parallel`) read them; this file names none of those. Never
//! plans, never reads tables; every kept group is charged to the
//! statement's budget.

use std::collections::HashMap;

use crate::error::{SqlError, SqlResult};
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::agg::{agg_update, AggState};
use crate::sql::exec::keys::group_key;
use crate::sql::exec::Exec;
use crate::sql::exec::{prepare, Prepared};
use crate::sql::expr::{AggCall, CExpr};
use crate::sql::plan::Plan;
use crate::types::Value;

/// An output unit of a block: (context row, aggregates, MATCH scores).
pub(crate) type Unit = (Vec<Value>, Vec<Value>, Vec<Value>);

/// The block's expressions with their subqueries prepared for this run.
pub(crate) struct Exprs<'p> {
    pub filter: Option<Prepared<'p>>,
    pub group_by: Vec<Prepared<'p>>,
    pub agg_args: Vec<Option<Prepared<'p>>>,
    /// The aggregates' arguments computed together on fixed-point numbers
    /// when they can be ([`super::agg_args`]).
    pub(crate) agg_prog: Option<super::agg_args::ArgProgram>,
    pub(crate) having: Option<Prepared<'p>>,
    pub(crate) projection: Vec<Prepared<'p>>,
    pub(crate) order_by: Vec<Prepared<'p>>,
    /// Per aggregate slot, a window call's (argument, partition keys,
    /// order keys); `None` for a plain aggregate.
    pub(crate) windows: Vec<Option<WindowExprs<'p>>>,
}

impl<'p> Exprs<'p> {
    pub(crate) fn new(
        cx: &mut Exec<'_, '_>,
        plan: &'p Plan,
        outer: &[Value],
    ) -> SqlResult<Exprs<'p>> {
        let w = plan.source.scope.cols.len();
        let mut p = |e: &'p CExpr| prepare(cx, e, w, outer);
        let agg_args: Vec<Option<Prepared<'p>>> = plan
            .aggs
            .iter()
            .map(|a| match a.window {
                Some(_) => Ok(None),
                None => a.arg.as_ref().map(&mut p).transpose(),
            })
            .collect::<SqlResult<_>>()?;
        Ok(Exprs {
            filter: plan.filter.as_ref().map(&mut p).transpose()?,
            group_by: plan.group_by.iter().map(&mut p).collect::<SqlResult<_>>()?,
            agg_prog: super::agg_args::ArgProgram::compile(
                agg_args.iter().map(|a| a.as_ref().map(|a| a.expr())),
            ),
            agg_args,
            windows: plan
                .aggs
                .iter()
                .map(|a| prepare_window(a, &mut p))
                .collect::<SqlResult<_>>()?,
            having: plan.having.as_ref().map(&mut p).transpose()?,
            projection: plan
                .projection
                .iter()
                .map(|(_, e, _)| p(e))
                .collect::<SqlResult<_>>()?,
            order_by: plan
                .order_by
                .iter()
                .map(|(e, _)| p(e))
                .collect::<SqlResult<_>>()?,
        })
    }
}

/// Whether an ORDER BY key is a vector distance: rows without one (a NULL
/// vector) sort after every real neighbour, in both directions, so that
/// the index path and exact evaluation agree.
pub(crate) fn is_distance_key(e: &CExpr) -> bool {
    matches!(e, CExpr::Func(name, _)
        if crate::sql::expr::VECTOR_DISTANCE_FNS.contains(&name.as_str()))
}

/// The order of two values of one ORDER BY / window key part: ascending or
/// (`desc`) descending by [`Value::total_cmp`], except that for a vector
/// `distance` key a NULL sorts after every real value in both directions.
pub(crate) fn key_order(x: &Value, y: &Value, desc: bool, distance: bool) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    if distance && x.is_null() != y.is_null() {
        return if x.is_null() {
            Ordering::Greater
        } else {
            Ordering::Less
        };
    }
    let o = x.total_cmp(y);
    if desc {
        o.reverse()
    } else {
        o
    }
}

/// Evaluates a prepared expression against a row and its MATCH scores.
pub(crate) type EvalRow<'a> = dyn FnMut(&Prepared<'_>, &[Value], &[Value]) -> SqlResult<Value> + 'a;

/// The groups of an aggregate query block in first-seen order: each with
/// its first row (the context of its non-aggregated expressions), that
/// row's MATCH scores and its aggregates' states.
#[derive(Default)]
pub(crate) struct Groups {
    pub(crate) groups: Vec<(Vec<Value>, Vec<Value>, Vec<AggState>)>,
    index: HashMap<Vec<u8>, usize, foldhash::fast::RandomState>,
    /// The groups' charge to the statement's memory budget (none for
    /// `Groups::default()`: see [`Groups::charged`]).
    mem: Reservation,
    /// Where rows of new groups go once the table is full (none: it
    /// never spills; decision 027).
    overflow: Option<crate::sql::spill::hash::Overflow>,
    /// The numbers of the row's aggregate arguments ([`Exprs::agg_prog`]).
    args: Vec<super::agg_args::Num>,
}

impl Drop for Groups {
    /// A killed or over-budget statement frees its groups after
    /// answering ([`budget::defer_teardown`]).
    fn drop(&mut self) {
        if budget::failing() {
            budget::bury((
                std::mem::take(&mut self.groups),
                std::mem::take(&mut self.index),
            ));
        }
    }
}

/// Estimated bytes of one group beyond its first row: key, states, map
/// entry.
fn group_size(key: &[u8], states: usize) -> usize {
    key.len() + 64 + states * std::mem::size_of::<AggState>()
}

impl Groups {
    /// No groups yet, charged to the statement `mem` belongs to.
    pub fn charged(mem: Reservation) -> Groups {
        let mut g = Groups::default();
        g.mem = mem;
        g
    }

    /// No groups yet, charged to `mem`'s statement, spilling past its
    /// `tmp_table_size` ([`Groups::spilled`]).
    pub fn spilling(mem: Reservation) -> Groups {
        let mut g = Groups::charged(mem);
        g.overflow = Some(crate::sql::spill::hash::Overflow::for_statement());
        g
    }

    /// Bytes the groups hold.
    pub fn bytes(&self) -> u64 {
        self.mem.bytes()
    }

    /// The partitions of rows whose groups did not fit (decision 027):
    /// each is folded into fresh groups by [`Groups::of_partition`].
    pub fn spilled(&mut self) -> SqlResult<Vec<crate::sql::spill::hash::Partition>> {
        match self.overflow.take() {
            Some(o) => o.finish(),
            None => Ok(Vec::new()),
        }
    }

    /// The groups of a spilled partition's rows (which may spill again).
    pub fn of_partition(
        p: crate::sql::spill::hash::Partition,
        plan: &Plan,
        ex: &Exprs<'_>,
        ev: &mut EvalRow<'_>,
    ) -> SqlResult<Groups> {
        let mut g = Groups::charged(Reservation::new());
        g.overflow = Some(p.overflow());
        let mut r = p.reader()?;
        while let Some(rec) = r.next_record()? {
            let Ok([row, m]) = <[Vec<Value>; 2]>::try_from(rec) else {
                return Err(SqlError::internal("a spilled group row is damaged"));
            };
            g.add(plan, ex, &row, &m, ev)?;
        }
        Ok(g)
    }

    /// Merge `later` (the groups of rows that come after this one's in
    /// scan order) into this one, keeping first-seen order and each
    /// group's first row: the groups one scan of both would give. False
    /// (and `self` unusable) when a state does not merge exactly
    /// ([`super::agg::merge_state`]).
    pub fn merge(&mut self, mut later: Groups, aggs: &[AggCall]) -> bool {
        let later_index = std::mem::take(&mut later.index);
        let later_groups = std::mem::take(&mut later.groups);
        let mut keys: Vec<Option<Vec<u8>>> = vec![None; later_groups.len()];
        for (k, i) in later_index {
            if let Some(slot) = keys.get_mut(i) {
                *slot = Some(k);
            }
        }
        for (group, key) in later_groups.into_iter().zip(keys) {
            let Some(key) = key else { return false };
            match self.index.get(&key) {
                Some(&i) => {
                    let states = &mut self.groups[i].2;
                    for ((a, b), call) in states.iter_mut().zip(&group.2).zip(aggs) {
                        if !super::agg::merge_state(a, b, call) {
                            return false;
                        }
                    }
                }
                None => {
                    // The group moves here; its charge goes with it (an
                    // error here only means the budget is spent: the
                    // statement fails at its next charge or check).
                    let _ = self.mem.add(
                        budget::row_size(&group.0)
                            + budget::row_size(&group.1)
                            + group_size(&key, group.2.len()),
                    );
                    self.groups.push(group);
                    self.index.insert(key, self.groups.len() - 1);
                }
            }
        }
        true
    }

    /// Fold one row (with MATCH scores `m`) into its group; `ev` evaluates
    /// a GROUP BY key or an aggregate's argument against it.
    pub fn add(
        &mut self,
        plan: &Plan,
        ex: &Exprs<'_>,
        row: &[Value],
        m: &[Value],
        ev: &mut EvalRow<'_>,
    ) -> SqlResult<()> {
        let key: Vec<Value> = ex
            .group_by
            .iter()
            .map(|g| ev(g, row, m))
            .collect::<SqlResult<_>>()?;
        let kb = group_key(&key);
        budget::tick()?;
        let gi = match self.index.get(&kb) {
            Some(&i) => i,
            None => {
                if let Some(o) = &mut self.overflow {
                    if !self.groups.is_empty() && o.full(self.mem.bytes()) {
                        // Full: the row waits on disk for its group.
                        return o.put(&kb, &[row, m]);
                    }
                }
                self.mem.add(
                    budget::row_size(row) + budget::row_size(m) + group_size(&kb, plan.aggs.len()),
                )?;
                self.groups.push((
                    row.to_vec(),
                    m.to_vec(),
                    plan.aggs
                        .iter()
                        .map(|c| AggState::for_group(plan, c))
                        .collect(),
                ));
                self.index.insert(kb, self.groups.len() - 1);
                self.groups.len() - 1
            }
        };
        let fast = ex.agg_prog.as_ref().filter(|p| p.run(row, &mut self.args));
        for (ai, call) in plan.aggs.iter().enumerate() {
            if call.window.is_some() {
                // Filled by the window operator after grouping.
                continue;
            }
            if let Some(n) = fast.and_then(|p| p.arg(ai, &self.args)) {
                super::agg::agg_update_num(&mut self.groups[gi].2[ai], call, n)?;
                continue;
            }
            let v = match &ex.agg_args[ai] {
                Some(a) => Some(ev(a, row, m)?),
                None => None,
            };
            agg_update(&mut self.groups[gi].2[ai], call, v)?;
        }
        Ok(())
    }
}

/// A window call's expressions prepared for one run of the block.
pub(crate) struct WindowExprs<'p> {
    pub(crate) arg: Option<Prepared<'p>>,
    /// Partition keys, then order keys.
    pub(crate) keys: Vec<Prepared<'p>>,
    /// LAG / LEAD's default.
    pub(crate) default: Option<Prepared<'p>>,
    /// A RANGE frame's offset bounds ([`crate::sql::expr::Window::range_at`]).
    pub(crate) range_at: [Option<Prepared<'p>>; 2],
}

impl WindowExprs<'_> {
    /// Partition keys, then order keys.
    pub(crate) fn keys(&self) -> &[Prepared<'_>] {
        &self.keys
    }

    /// Whether any of its expressions runs a subquery per row.
    pub(crate) fn per_row(&self) -> bool {
        self.arg
            .iter()
            .chain(&self.keys)
            .chain(&self.default)
            .chain(self.range_at.iter().flatten())
            .any(|p| p.per_row())
    }
}

/// Prepare the window call in slot `a` (`None` for a plain aggregate).
pub(crate) fn prepare_window<'p>(
    a: &'p AggCall,
    p: &mut dyn FnMut(&'p CExpr) -> SqlResult<Prepared<'p>>,
) -> SqlResult<Option<WindowExprs<'p>>> {
    let Some(w) = a.window.as_deref() else {
        return Ok(None);
    };
    let arg = a.arg.as_ref().map(&mut *p).transpose()?;
    let keys = w
        .partition
        .iter()
        .chain(w.order.iter().map(|(e, _)| e))
        .map(&mut *p)
        .collect::<SqlResult<_>>()?;
    let default = w.default.as_ref().map(&mut *p).transpose()?;
    let [a, b] = &w.range_at;
    let range_at = [
        a.as_ref().map(|(e, _)| p(e)).transpose()?,
        b.as_ref().map(|(e, _)| p(e)).transpose()?,
    ];
    Ok(Some(WindowExprs {
        arg,
        keys,
        default,
        range_at,
    }))
}
