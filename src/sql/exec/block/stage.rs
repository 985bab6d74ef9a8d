//! What the operators of a query block share: the run they belong to
//! ([`Run`]: the plan, its prepared expressions, the outer row, the
//! session's function host), the interface by which one pulls batches
//! from the one below it ([`Step`]), and handing out made items in
//! batches ([`Items`]).
//!
//! A block's operators pass typed batches: candidate rows with their MATCH
//! scores out of the scan and the filter, output units (row, aggregates,
//! scores) out of the aggregate and the window, projected rows with their
//! sort keys out of the projection, the sort and the distinct; the limit
//! passes the projected rows up as the block's [`crate::sql::exec::op::Batch`]es.
//! Every batch holds 1 to [`BATCH_ROWS`] items. Never plans, never names
//! the operators themselves.

use crate::error::SqlResult;
use crate::sql::budget;
use crate::sql::exec::op::{Exec, Meter, BATCH_ROWS};
use crate::sql::host::SessionHost;
use crate::sql::plan::Plan;
use crate::sql::search::IndexPath;
use crate::types::Value;

use super::ev;
use crate::sql::exec::unit::{Exprs, Unit};
use crate::sql::exec::Prepared;

/// One run of a query block: what every one of its operators reads.
pub(crate) struct Run<'r, 'p> {
    pub plan: &'p Plan,
    pub ex: &'r Exprs<'p>,
    pub outer: &'p [Value],
    pub host: &'r SessionHost<'r>,
    /// The index path the scan takes this run (none: the access path).
    pub path: Option<&'p IndexPath>,
}

impl Run<'_, '_> {
    /// Evaluate `p` on one unit of this run.
    pub fn eval(
        &self,
        cx: &mut Exec<'_, '_>,
        p: &Prepared<'_>,
        row: &[Value],
        aggs: &[Value],
        matches: &[Value],
    ) -> SqlResult<Value> {
        ev(cx, p, self.host, row, self.outer, aggs, matches)
    }
}

/// A candidate row and its MATCH scores.
pub(crate) type Candidate = (Vec<Value>, Vec<Value>);

/// A projected row and its ORDER BY keys.
pub(crate) type Projected = (Vec<Value>, Vec<Value>);

/// An operator of a query block, passing batches of `T`.
pub(crate) trait Step<T> {
    /// The next batch (1 to [`BATCH_ROWS`] items); `None` at the end.
    fn next(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Option<Vec<T>>>;

    /// Every item left, at once, for a parent that needs them all before
    /// it passes anything on (a join's input, a sort, a window): by
    /// default the batches joined. A step whose items are made already
    /// (the scan) hands them over whole instead of cutting them into
    /// batches to be joined again; a step over one (the filter, a plain
    /// scan's rows) works on its input's items in place.
    fn all(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<budget::Grave<Vec<T>>>
    where
        T: Default + 'static,
    {
        let mut out: budget::Grave<Vec<T>> = Default::default();
        while let Some(b) = self.next(cx, run)? {
            if out.is_empty() {
                out.0 = b;
            } else {
                out.extend(b);
            }
        }
        Ok(out)
    }
}

/// A boxed operator of a block passing `T`s.
pub(crate) type BoxStep<'s, T> = Box<dyn Step<T> + 's>;

/// Every item `step` produces (for an operator that needs all of its
/// input before it can pass anything on). The items live in a
/// [`budget::Grave`]: a failing statement frees them after answering.
pub(crate) fn collect<T: Default + 'static>(
    step: &mut dyn Step<T>,
    cx: &mut Exec<'_, '_>,
    run: &Run<'_, '_>,
) -> SqlResult<budget::Grave<Vec<T>>> {
    step.all(cx, run)
}

/// Items already made, handed out in batches; each item is moved out of
/// its slot as its batch goes, so that what is left stays in the
/// statement's teardown ([`budget::Grave`]) if it fails.
pub(crate) struct Items<T: Default + 'static> {
    items: budget::Grave<Vec<T>>,
    at: usize,
}

impl<T: Default + 'static> Items<T> {
    pub fn new(items: budget::Grave<Vec<T>>) -> Items<T> {
        Items { items, at: 0 }
    }

    /// The next batch, moved out (with a tick per item: KILL is seen
    /// while millions move).
    pub fn next_batch(&mut self) -> SqlResult<Option<Vec<T>>> {
        if self.at == 0 && self.items.len() <= BATCH_ROWS {
            // All of it in one batch: no copy.
            self.at = usize::MAX;
            let all = self.items.take();
            return Ok((!all.is_empty()).then_some(all));
        }
        let end = self.items.len().min(self.at.saturating_add(BATCH_ROWS));
        if self.at >= end {
            return Ok(None);
        }
        let mut batch = Vec::with_capacity(end - self.at);
        for i in self.at..end {
            budget::tick()?;
            batch.push(std::mem::take(&mut self.items[i]));
        }
        self.at = end;
        Ok(Some(batch))
    }

    /// Every item not handed out yet, at once (no copy when none was).
    pub fn rest(&mut self) -> budget::Grave<Vec<T>> {
        let mut items = self.items.take();
        if self.at == usize::MAX {
            items.clear();
        } else if self.at > 0 {
            items.drain(..self.at.min(items.len()));
        }
        self.at = usize::MAX;
        budget::Grave(items)
    }
}

/// Units out of a block that does not aggregate: each candidate row with
/// no aggregate values.
pub(crate) struct Units<'s> {
    pub input: BoxStep<'s, Candidate>,
}

impl Step<Unit> for Units<'_> {
    fn next(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<Option<Vec<Unit>>> {
        Ok(self
            .input
            .next(cx, run)?
            .map(|b| b.into_iter().map(|(r, m)| (r, Vec::new(), m)).collect()))
    }
}

/// Batch figures of a step that began at `start` and passes `batch` on.
pub(crate) fn step<T>(
    meter: &mut Meter<'_>,
    start: Option<std::time::Instant>,
    batch: &Option<Vec<T>>,
) {
    meter.step(
        start,
        batch.as_ref().map_or(0, Vec::len),
        usize::from(batch.is_some()),
    );
}

/// The next batch of a step that made its items at once (`made`), with
/// the step's figures (it began at `start`).
pub(crate) fn pass_made<T: Default + 'static>(
    meter: &mut Meter<'_>,
    start: Option<std::time::Instant>,
    made: &mut Option<Items<T>>,
) -> SqlResult<Option<Vec<T>>> {
    let batch = match made {
        Some(m) => m.next_batch()?,
        None => None,
    };
    step(meter, start, &batch);
    Ok(batch)
}
