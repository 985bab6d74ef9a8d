//! The top of a query block: the projection (the select list and the
//! ORDER BY keys of each unit), the sort (a top-N under LIMIT; past
//! `sort_buffer_size` sorted runs go to disk and are merged as the parent
//! pulls), DISTINCT (the first row of each key; past `tmp_table_size` rows
//! of new keys go to disk, decision 027), and the limit (OFFSET rows
//! skipped, then at most LIMIT passed on: it stops pulling once it has
//! them, so nothing below it makes more than it must).
//!
//! Everything kept is charged to the statement's budget while the block
//! runs; KILL is seen inside every loop and sort. Never writes.

use std::cmp::Ordering;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::keys::group_key_under;
use crate::sql::exec::op::{Exec, Meter, Row};
use crate::sql::plan::{Node, Plan, Stage};
use crate::sql::spill::sort::{Merge, Sorted, Sorter};

use super::stage::{collect, pass_made, step, BoxStep, Items, Projected, Run, Step};
use super::top_k;
use crate::sql::exec::unit::{is_distance_key, key_order, Unit};

/// The ORDER BY order of two projected rows (by their keys). A total
/// order, always: a KILL is seen between the bounded pieces the sorts cut
/// their work into ([`budget::sort_by`], [`top_k`]), never inside a
/// comparison (the standard sorts may panic on a comparator that changes
/// its answers).
fn order(plan: &Plan, a: &Projected, b: &Projected) -> Ordering {
    for (i, (key, desc)) in plan.order_by.iter().enumerate() {
        let (x, y) = (&a.1[i], &b.1[i]);
        // NULL distance last whatever the direction.
        let o = key_order(x, y, *desc, is_distance_key(key));
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// The select list and the ORDER BY keys of each unit.
pub(crate) struct Project<'s> {
    meter: Meter<'s>,
    input: BoxStep<'s, Unit>,
    /// The projected rows' charge while the block runs (none when a sort
    /// that charges what it keeps takes them).
    mem: Option<Reservation>,
}

impl<'s> Project<'s> {
    pub fn new(node: &'s Node, input: BoxStep<'s, Unit>, charged: bool) -> Project<'s> {
        Project {
            meter: Meter::new(node, Stage::Project),
            input,
            mem: charged.then(Reservation::new),
        }
    }
}

impl Step<Projected> for Project<'_> {
    fn next(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<Option<Vec<Projected>>> {
        let start = self.meter.start();
        let Some(units) = self.input.next(cx, run)? else {
            step(&mut self.meter, start, &None::<Vec<Projected>>);
            return Ok(None);
        };
        let mut out = Vec::with_capacity(units.len());
        for (row, aggs, m) in &units {
            let proj: Vec<_> = run
                .ex
                .projection
                .iter()
                .map(|e| run.eval(cx, e, row, aggs, m))
                .collect::<SqlResult<_>>()?;
            let keys: Vec<_> = run
                .ex
                .order_by
                .iter()
                .map(|e| run.eval(cx, e, row, aggs, m))
                .collect::<SqlResult<_>>()?;
            if let Some(mem) = &mut self.mem {
                mem.add(budget::row_size(&proj) + budget::row_size(&keys))?;
            }
            out.push((proj, keys));
        }
        if let Some(mem) = &self.mem {
            self.meter.holds(mem.bytes());
        }
        let out = Some(out);
        step(&mut self.meter, start, &out);
        Ok(out)
    }
}

/// Where a sort's rows come from once its input is read.
enum Sorting {
    /// Not started.
    Input,
    /// Sorted in memory, handed out in batches (with the sorter's
    /// charge for them, held until the block ends).
    Ready(
        Items<Projected>,
        #[allow(dead_code, reason = "held for its charge")] Option<Reservation>,
    ),
    /// Merged from sorted runs on disk as they are pulled.
    Merging(Merge<Projected>),
    Done,
}

/// ORDER BY (a top-N when the block has a LIMIT): its input is the
/// projection (through a [`Sorter`] that spills) or DISTINCT's rows.
pub(crate) struct Sort<'s> {
    meter: Meter<'s>,
    input: BoxStep<'s, Projected>,
    /// Whether the rows go through a spilling [`Sorter`].
    spilling: bool,
    state: Sorting,
    /// Merged rows' charge.
    mem: Reservation,
}

impl<'s> Sort<'s> {
    pub fn new(node: &'s Node, input: BoxStep<'s, Projected>, spilling: bool) -> Sort<'s> {
        Sort {
            meter: Meter::new(node, Stage::Sort),
            input,
            spilling,
            state: Sorting::Input,
            mem: Reservation::new(),
        }
    }

    /// Read all of the input and sort it.
    fn sort(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Sorting> {
        let plan = run.plan;
        let cmp = |a: &Projected, b: &Projected| order(plan, a, b);
        let top = plan.limit.map(|l| plan.offset.saturating_add(l));
        let (mut items, charge) = if self.spilling {
            // Sorted rows past `sort_buffer_size` go to disk as sorted
            // runs (decision 027).
            let mut sorter = Sorter::for_statement().top(top);
            while let Some(batch) = self.input.next(cx, run)? {
                for item in batch {
                    sorter.push(item, &cmp)?;
                }
            }
            match sorter.done(&cmp)? {
                Sorted::Merged(m) => return Ok(Sorting::Merging(m)),
                Sorted::InMemory(items, charge) => (budget::Grave(items), Some(charge)),
            }
        } else {
            (collect(self.input.as_mut(), cx, run)?, None)
        };
        if let Some(c) = &charge {
            self.meter.holds(c.bytes());
        }
        items.0 = match top {
            Some(k) if k < items.len() => top_k(items.take(), k, cmp)?,
            _ => {
                budget::sort_by(&mut items.0, cmp)?;
                items.take()
            }
        };
        Ok(Sorting::Ready(Items::new(items), charge))
    }
}

impl Step<Projected> for Sort<'_> {
    fn next(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<Option<Vec<Projected>>> {
        let start = self.meter.start();
        if matches!(self.state, Sorting::Input) {
            self.state = self.sort(cx, run)?;
        }
        let batch = match &mut self.state {
            Sorting::Ready(items, _) => items.next_batch()?,
            Sorting::Merging(m) => {
                let plan = run.plan;
                let cmp = |a: &Projected, b: &Projected| order(plan, a, b);
                let mut batch = Vec::new();
                while batch.len() < crate::sql::exec::op::BATCH_ROWS {
                    let Some(item) = m.next(&cmp)? else { break };
                    self.mem.add_row(&item.0)?;
                    batch.push(item);
                }
                (!batch.is_empty()).then_some(batch)
            }
            Sorting::Input | Sorting::Done => None,
        };
        if batch.is_none() {
            self.state = Sorting::Done;
        }
        step(&mut self.meter, start, &batch);
        Ok(batch)
    }
}

/// SELECT DISTINCT: the first row of each output key, in input order (the
/// rows of keys past `tmp_table_size` after the others).
pub(crate) struct Distinct<'s> {
    meter: Meter<'s>,
    input: BoxStep<'s, Projected>,
    made: Option<Items<Projected>>,
    mem: Reservation,
}

impl<'s> Distinct<'s> {
    pub fn new(node: &'s Node, input: BoxStep<'s, Projected>) -> Distinct<'s> {
        Distinct {
            meter: Meter::new(node, Stage::Distinct),
            input,
            made: None,
            mem: Reservation::new(),
        }
    }

    fn distinct(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Vec<Projected>> {
        let colls = &run.plan.out_colls;
        let mut out = collect(self.input.as_mut(), cx, run)?;
        // In place: the first of each key moves to the front; a duplicate
        // is freed as it is met. On a KILL or past the budget the rows
        // and keys are left to the statement's teardown (a `retain` freed
        // every row after the failing one before the error was answered:
        // ~100 ms at 1,000,000 rows).
        let mut seen: budget::Grave<std::collections::HashSet<Vec<u8>>> = Default::default();
        let mut kept = 0;
        // Past `tmp_table_size` of keys, rows of new keys go to disk
        // (decision 027).
        let mut overflow = crate::sql::spill::hash::Overflow::for_statement();
        let mut seen_bytes = 0;
        for i in 0..out.len() {
            let k = group_key_under(&out[i].0, colls);
            if kept > 0 && overflow.full(seen_bytes) && !seen.contains(&k) {
                overflow.put_item(&k, &std::mem::take(&mut out[i]))?;
                continue;
            }
            seen_bytes += k.len() as u64 + 48;
            self.mem.add(k.len() + 48)?;
            budget::tick()?;
            if seen.insert(k) {
                out.swap(kept, i);
                kept += 1;
            } else {
                drop(std::mem::take(&mut out[i]));
            }
        }
        self.meter.holds(self.mem.bytes());
        // What is past `kept` holds nothing any more.
        out.truncate(kept);
        crate::sql::spill::hash::distinct_partitions(overflow, &mut out.0, |item| {
            group_key_under(&item.0, colls)
        })?;
        Ok(out.take())
    }
}

impl Step<Projected> for Distinct<'_> {
    fn next(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<Option<Vec<Projected>>> {
        let start = self.meter.start();
        if self.made.is_none() {
            let rows = self.distinct(cx, run)?;
            self.made = Some(Items::new(budget::Grave(rows)));
        }
        pass_made(&mut self.meter, start, &mut self.made)
    }
}

/// OFFSET / LIMIT over the projected rows, which it passes on without
/// their sort keys; with neither (`meter` none) it only drops the keys.
pub(crate) struct Limit<'s> {
    meter: Option<Meter<'s>>,
    input: BoxStep<'s, Projected>,
    /// Rows still to skip.
    skip: usize,
    /// Rows still to pass on (`usize::MAX`: no LIMIT).
    left: usize,
}

impl<'s> Limit<'s> {
    pub fn new(node: &'s Node, plan: &Plan, input: BoxStep<'s, Projected>) -> Limit<'s> {
        let limited = plan.limit.is_some() || plan.offset > 0;
        Limit {
            meter: limited.then(|| Meter::new(node, Stage::Limit)),
            input,
            skip: plan.offset,
            left: plan.limit.unwrap_or(usize::MAX),
        }
    }
}

impl Step<Row> for Limit<'_> {
    fn next(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Option<Vec<Row>>> {
        let start = self.meter.as_ref().and_then(Meter::start);
        let mut out = None;
        while self.left > 0 {
            let Some(batch) = self.input.next(cx, run)? else {
                break;
            };
            let skip = self.skip.min(batch.len());
            self.skip -= skip;
            let rows: Vec<Row> = batch
                .into_iter()
                .skip(skip)
                .take(self.left)
                .map(|(p, _)| p)
                .collect();
            if rows.is_empty() {
                continue;
            }
            self.left -= rows.len();
            out = Some(rows);
            break;
        }
        if let Some(m) = &mut self.meter {
            step(m, start, &out);
        }
        Ok(out)
    }
}
