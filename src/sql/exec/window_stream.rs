//! The window operator's input and output as streams (decision 027): the
//! block's units come in batch by batch and are kept slim (a stored row
//! only up to the last column the block reads); while they fit the sort
//! budget (`sort_buffer_size`, at most half what the statement may still
//! charge) the window functions run over them in memory — every call but
//! the last over all units, the last one's units sorted and its values
//! computed a group of whole partitions at a time as batches are asked
//! for ([`crate::sql::exec::window::sort_last`], so a LIMIT above stops
//! the work) — and past it they go through
//! [`crate::sql::spill::sort`] one window call at a time: sorted on the
//! call's partition and order key values (ties in input order), read back
//! one partition at a time, the call's values computed over that
//! partition alone, and the units passed on to the next call's sort — or,
//! after the last call, out in batches, a partition at a time (a LIMIT
//! above stops the reading). Either way the units come out in the order
//! of the last window's sort, ties in input order.
//!
//! Owns the operator's buffer, its spill passes and the partition reader.
//! A single partition is held whole while its values are computed: charged
//! to the statement, so a partition past the statement's limit fails with
//! 1114 (never grows unbounded). Never plans, never reads tables, never
//! names the query block's operators.

use std::cmp::Ordering;

use crate::error::{SqlError, SqlResult};
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::apply::Prepared;
use crate::sql::exec::op::BATCH_ROWS;
use crate::sql::exec::unit::{is_distance_key, key_order, Exprs, Unit};
use crate::sql::exec::window::Sorted;
use crate::sql::plan::Plan;
use crate::sql::spill::sort::{Merge, Sorter};
use crate::sql::spill::{SpillFile, Spillable};
use crate::types::Value;

/// How many times `sort_buffer_size` the window's units may hold in
/// memory (still at most half what the statement may charge): what the
/// in-memory sort orders is one packed 16-byte key and a position per
/// unit, while a unit (its row, aggregate slots and scores) is some 200
/// to 400 bytes — the units of a window whose sort state fits the sort
/// buffer stay in memory, past that they spill (decision 027).
const UNITS_PER_KEY: u64 = 16;

/// Evaluates a prepared expression against a unit.
pub(crate) type Eval<'a> = dyn FnMut(&Prepared<'_>, &Unit) -> SqlResult<Value> + 'a;

/// A unit on its way through a window call's sort: the call's partition
/// and order key values then the unit's input position (an integer, the
/// last tie-breaker), and the unit.
#[derive(Default)]
struct Item {
    keys: Vec<Value>,
    unit: Unit,
}

impl Spillable for Item {
    fn size(&self) -> usize {
        budget::row_size(&self.keys)
            + budget::row_size(&self.unit.0)
            + budget::row_size(&self.unit.1)
            + budget::row_size(&self.unit.2)
    }
    fn write(&self, f: &mut SpillFile) -> SqlResult<()> {
        f.write(&[&self.keys, &self.unit.0, &self.unit.1, &self.unit.2])
    }
    fn read(parts: Vec<Vec<Value>>) -> SqlResult<Self> {
        let Ok([keys, row, aggs, m]) = <[Vec<Value>; 4]>::try_from(parts) else {
            return Err(SqlError::internal("a spilled window unit is damaged"));
        };
        Ok(Item {
            keys,
            unit: (row, aggs, m),
        })
    }
}

/// How a window call's items compare: key by key (a descending key
/// reversed; a vector distance's NULL after every value in both
/// directions, as the in-memory sort has it), then by input position.
struct Order {
    /// Partition keys.
    parts: usize,
    /// Per order key: (descending, a vector distance).
    order: Vec<(bool, bool)>,
}

impl Order {
    fn of(plan: &Plan, slot: usize) -> Order {
        let w = plan.aggs.get(slot).and_then(|a| a.window.as_deref());
        Order {
            parts: w.map_or(0, |w| w.partition.len()),
            order: w.map_or_else(Vec::new, |w| {
                w.order
                    .iter()
                    .map(|(e, desc)| (*desc, is_distance_key(e)))
                    .collect()
            }),
        }
    }

    fn cmp(&self, a: &Item, b: &Item) -> Ordering {
        for (k, (x, y)) in a.keys.iter().zip(&b.keys).enumerate() {
            let (desc, distance) = k
                .checked_sub(self.parts)
                .and_then(|o| self.order.get(o).copied())
                .unwrap_or((false, false));
            let o = key_order(x, y, desc, distance);
            if o.is_ne() {
                return o;
            }
        }
        Ordering::Equal
    }

    fn same_partition(&self, a: &Item, b: &Item) -> bool {
        a.keys
            .iter()
            .zip(&b.keys)
            .take(self.parts)
            .all(|(x, y)| x.total_cmp(y).is_eq())
    }
}

/// The slots of `plan`'s window calls, in order.
fn window_slots(plan: &Plan) -> Vec<usize> {
    plan.aggs
        .iter()
        .enumerate()
        .filter(|(_, a)| a.window.is_some())
        .map(|(i, _)| i)
        .collect()
}

/// One spill pass: the sort of window call `slot`.
struct Pass {
    slot: usize,
    order: Order,
    sorter: Sorter<Item>,
}

impl Pass {
    fn new(plan: &Plan, slot: usize) -> Pass {
        Pass {
            slot,
            order: Order::of(plan, slot),
            sorter: Sorter::for_statement(),
        }
    }

    /// Add `unit` (the `seq`-th of the input) with its keys.
    fn push(&mut self, ex: &Exprs<'_>, unit: Unit, seq: u64, ev: &mut Eval<'_>) -> SqlResult<()> {
        let Some(Some(prep)) = ex.windows.get(self.slot) else {
            return Err(SqlError::internal("a window pass without its call"));
        };
        let mut keys = Vec::with_capacity(prep.keys().len() + 1);
        for k in prep.keys() {
            keys.push(ev(k, &unit)?);
        }
        keys.push(Value::Int(seq as i64));
        let order = &self.order;
        self.sorter
            .push(Item { keys, unit }, &|a, b| order.cmp(a, b))
    }
}

/// The window operator's input, collected batch by batch.
pub(crate) struct Collect {
    /// Units kept in memory while they fit.
    units: budget::Grave<Vec<Unit>>,
    mem: Reservation,
    bytes: u64,
    /// Past this many bytes the units go to the first call's sort.
    limit: u64,
    /// The first window call's sort, once spilling.
    spill: Option<Pass>,
    /// Units seen.
    seq: u64,
    /// A stored row's columns past this are never read (decoded as NULL).
    keep: usize,
    aggs: usize,
}

impl Collect {
    /// An empty input of `plan`'s window operator.
    pub fn new(plan: &Plan) -> Collect {
        let (settings, limit) = crate::sql::spill::sort_limit_times(UNITS_PER_KEY);
        let keep = plan.needed.as_ref().map_or(usize::MAX, |n| {
            n.iter().rposition(|&x| x).map_or(0, |i| i + 1)
        });
        Collect {
            units: Default::default(),
            mem: Reservation::new(),
            bytes: 0,
            limit: if settings.is_some() { limit } else { u64::MAX },
            spill: None,
            seq: 0,
            keep,
            aggs: plan.aggs.len(),
        }
    }

    /// Bytes held in memory.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// A stored row as a unit, without the columns nothing reads.
    pub fn unit_of_row(&self, row: &[Value]) -> Unit {
        let n = row.len().min(self.keep);
        (row[..n].to_vec(), Vec::new(), Vec::new())
    }

    /// Add the next unit of the input.
    pub fn push(
        &mut self,
        plan: &Plan,
        ex: &Exprs<'_>,
        mut unit: Unit,
        ev: &mut Eval<'_>,
    ) -> SqlResult<()> {
        // A row's unit gets its aggregate slots when its window values
        // are computed (one allocation fewer per unit held); a group's
        // has them already.
        if !unit.1.is_empty() {
            unit.1.resize(self.aggs, Value::Null);
        }
        let seq = self.seq;
        self.seq += 1;
        if let Some(p) = &mut self.spill {
            return p.push(ex, unit, seq, ev);
        }
        let n = budget::row_size(&unit.0) + budget::row_size(&unit.1) + budget::row_size(&unit.2);
        self.mem.add(n)?;
        self.bytes += n as u64;
        self.units.push(unit);
        if self.bytes > self.limit {
            // Past the sort budget: everything so far to the first call's
            // sort, in input order.
            let Some(&slot) = window_slots(plan).first() else {
                return Ok(());
            };
            let mut p = Pass::new(plan, slot);
            for (i, u) in self.units.take().into_iter().enumerate() {
                budget::tick()?;
                p.push(ex, u, i as u64, ev)?;
            }
            self.mem = Reservation::new();
            self.bytes = 0;
            self.spill = Some(p);
        }
        Ok(())
    }

    /// The window functions computed: the units to pass on.
    pub fn finish(mut self, plan: &Plan, ex: &Exprs<'_>, ev: &mut Eval<'_>) -> SqlResult<Output> {
        let Some(first) = self.spill.take() else {
            let mut units = self.units.take();
            let mem = std::mem::take(&mut self.mem);
            let sorted = crate::sql::exec::window::sort_last(plan, ex, &mut units, ev)?;
            if sorted.is_none() {
                for u in units.iter_mut() {
                    u.1.resize(self.aggs, Value::Null);
                }
            }
            return Ok(Output(match sorted {
                Some(sorted) => Out::Lazy {
                    units: budget::Grave(units),
                    sorted,
                    part: 0,
                    group: Default::default(),
                    at: 0,
                    _mem: mem,
                },
                None => Out::Memory {
                    units: budget::Grave(units),
                    at: 0,
                    _mem: mem,
                },
            }));
        };
        // Every call but the last: its partitions computed one at a time
        // and passed to the next call's sort.
        let slots = window_slots(plan);
        let mut pass = first;
        for &next in slots.iter().skip(1) {
            let mut reader = Partitions::new(pass)?;
            let mut to = Pass::new(plan, next);
            while let Some(part) = reader.next(plan, ex, ev)? {
                for it in part.0 {
                    budget::tick()?;
                    let seq = match it.keys.last() {
                        Some(Value::Int(s)) => *s as u64,
                        _ => return Err(SqlError::internal("a window unit lost its position")),
                    };
                    to.push(ex, it.unit, seq, ev)?;
                }
            }
            pass = to;
        }
        Ok(Output(Out::Spilled {
            reader: Box::new(Partitions::new(pass)?),
            part: Default::default(),
            _mem: Reservation::new(),
            at: 0,
        }))
    }
}

/// A window call's sorted items read back one partition at a time, the
/// call's values computed over each.
struct Partitions {
    slot: usize,
    order: Order,
    merge: Merge<Item>,
    /// The first item of the next partition, read already.
    head: Option<Item>,
}

impl Partitions {
    fn new(p: Pass) -> SqlResult<Partitions> {
        let order = p.order;
        let merge = p.sorter.finish(&|a: &Item, b: &Item| order.cmp(a, b))?;
        Ok(Partitions {
            slot: p.slot,
            order,
            merge,
            head: None,
        })
    }

    /// The next partition with its call's values, in sort order; its
    /// items are charged while held.
    fn next(
        &mut self,
        plan: &Plan,
        ex: &Exprs<'_>,
        ev: &mut Eval<'_>,
    ) -> SqlResult<Option<(Vec<Item>, Reservation)>> {
        let order = &self.order;
        let cmp = |a: &Item, b: &Item| order.cmp(a, b);
        let first = match self.head.take() {
            Some(h) => h,
            None => match self.merge.next(&cmp)? {
                Some(h) => h,
                None => return Ok(None),
            },
        };
        let mut mem = Reservation::new();
        mem.add(first.size())?;
        let mut items = vec![first];
        while let Some(it) = self.merge.next(&cmp)? {
            if !order.same_partition(&items[0], &it) {
                self.head = Some(it);
                break;
            }
            mem.add(it.size())?;
            items.push(it);
        }
        // The call's values over this partition (its items are in the
        // call's order already: the stable sort inside keeps it).
        let mut units: Vec<Unit> = items
            .iter_mut()
            .map(|i| std::mem::take(&mut i.unit))
            .collect();
        crate::sql::exec::window::apply_slot(plan, ex, self.slot, &mut units, ev)?;
        for (i, u) in items.iter_mut().zip(units) {
            i.unit = u;
        }
        Ok(Some((items, mem)))
    }
}

/// The cut of window call `slot` ([`crate::sql::expr::Window::cut`]).
fn cut_of(plan: &Plan, slot: usize) -> Option<i64> {
    plan.aggs
        .get(slot)
        .and_then(|a| a.window.as_deref())
        .and_then(|w| w.cut)
}

/// Whether `unit`'s value of window call `slot` is within its cut `k`
/// (an integer function's value: never NULL).
fn within(unit: &Unit, slot: usize, k: i64) -> bool {
    match unit.1.get(slot) {
        Some(Value::Int(v)) => *v <= k,
        _ => true,
    }
}

/// The window operator's units, passed on in batches.
pub(crate) struct Output(Out);

enum Out {
    /// In memory, the last window call's values computed a group of whole
    /// partitions at a time as the units are passed on.
    Lazy {
        /// The units, each taken when its group is computed.
        units: budget::Grave<Vec<Unit>>,
        sorted: Sorted,
        /// The next partition (an index into `sorted.ends`).
        part: usize,
        /// The group computed and being passed on.
        group: budget::Grave<Vec<Unit>>,
        at: usize,
        _mem: Reservation,
    },
    /// Computed in memory (no window call).
    Memory {
        units: budget::Grave<Vec<Unit>>,
        at: usize,
        _mem: Reservation,
    },
    /// The last call's partitions, read as they are passed on.
    Spilled {
        reader: Box<Partitions>,
        /// The partition being passed on, and its charge.
        part: budget::Grave<Vec<Item>>,
        _mem: Reservation,
        at: usize,
    },
}

impl Output {
    /// The next batch of units (1 to [`BATCH_ROWS`]); `None` at the end.
    pub fn next_batch(
        &mut self,
        plan: &Plan,
        ex: &Exprs<'_>,
        ev: &mut Eval<'_>,
    ) -> SqlResult<Option<Vec<Unit>>> {
        match &mut self.0 {
            Out::Lazy {
                units,
                sorted,
                part,
                group,
                at,
                ..
            } => {
                let cut = cut_of(plan, sorted.slot);
                while *at >= group.len() {
                    // The next group: whole partitions while they fit a
                    // batch, at least one.
                    let from = match part.checked_sub(1) {
                        Some(p) => sorted.ends[p],
                        None => 0,
                    };
                    let Some(&first_end) = sorted.ends.get(*part) else {
                        return Ok(None);
                    };
                    let mut to = first_end;
                    *part += 1;
                    while let Some(&e) = sorted.ends.get(*part) {
                        if e - from > BATCH_ROWS {
                            break;
                        }
                        to = e;
                        *part += 1;
                    }
                    let mut g = Vec::with_capacity(to - from);
                    for &i in &sorted.order[from..to] {
                        budget::tick()?;
                        g.push(std::mem::take(&mut units[i]));
                    }
                    crate::sql::exec::window::apply_slot(plan, ex, sorted.slot, &mut g, ev)?;
                    if let Some(k) = cut {
                        g.retain(|u| within(u, sorted.slot, k));
                    }
                    group.0 = g;
                    *at = 0;
                    if !group.is_empty() && group.len() <= BATCH_ROWS {
                        *at = usize::MAX;
                        return Ok(Some(group.take()));
                    }
                }
                let end = group.len().min(at.saturating_add(BATCH_ROWS));
                let mut batch = Vec::with_capacity(end - *at);
                for i in *at..end {
                    budget::tick()?;
                    batch.push(std::mem::take(&mut group[i]));
                }
                *at = end;
                Ok(Some(batch))
            }
            Out::Memory { units, at, .. } => {
                if *at == 0 && units.len() <= BATCH_ROWS {
                    *at = usize::MAX;
                    let all = units.take();
                    return Ok((!all.is_empty()).then_some(all));
                }
                let end = units.len().min(at.saturating_add(BATCH_ROWS));
                if *at >= end {
                    return Ok(None);
                }
                let mut batch = Vec::with_capacity(end - *at);
                for i in *at..end {
                    budget::tick()?;
                    batch.push(std::mem::take(&mut units[i]));
                }
                *at = end;
                Ok(Some(batch))
            }
            Out::Spilled {
                reader,
                part,
                _mem,
                at,
            } => {
                let mut batch = Vec::new();
                while batch.len() < BATCH_ROWS {
                    if *at >= part.len() {
                        match reader.next(plan, ex, ev)? {
                            Some((mut items, mem)) => {
                                if let Some(k) = cut_of(plan, reader.slot) {
                                    items.retain(|i| within(&i.unit, reader.slot, k));
                                }
                                part.0 = items;
                                *_mem = mem;
                                *at = 0;
                                continue;
                            }
                            None => break,
                        }
                    }
                    budget::tick()?;
                    batch.push(std::mem::take(&mut part[*at].unit));
                    *at += 1;
                }
                Ok((!batch.is_empty()).then_some(batch))
            }
        }
    }
}
