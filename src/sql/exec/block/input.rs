//! The bottom of a query block: the scan (its table by the access path or
//! an index search, the block's input node, a table function's rows, a
//! system table, or the one empty row of a block without FROM) and the
//! filter (the WHERE, re-checked exactly on every candidate unless the
//! scan tested it on each stored row already).
//!
//! The scan makes its candidates at its first pull — the storage scan
//! stops early once it holds what the block's LIMIT needs
//! ([`super::scan_cap`]) — and hands them out in batches, or whole to a
//! parent that takes them all (a join's input: no batch is cut to be
//! joined again); every kept row is charged to the statement's budget
//! until the block ends. A pruned plain scan's rows come narrowed to its
//! output columns from the storage scan when the filter is tested there. Never
//! writes except the row locks of `SELECT … FOR UPDATE`.

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::exec::op::{Exec, Meter, BATCH_ROWS};
use crate::sql::plan::{Node, Stage};

use super::stage::{pass_made, Candidate, Items, Run, Step};

/// The block's scan: its candidate rows with their MATCH scores.
pub(crate) struct Scan<'p> {
    meter: Meter<'p>,
    /// The candidates' charge while the block runs.
    mem: Reservation,
    made: Option<Items<Candidate>>,
    /// Whether the scan tested the WHERE on each row itself.
    pub filtered: bool,
}

impl<'p> Scan<'p> {
    pub fn new(node: &'p Node) -> Scan<'p> {
        Scan {
            meter: Meter::new(node, Stage::Scan),
            mem: Reservation::new(),
            made: None,
            filtered: false,
        }
    }
}

impl Scan<'_> {
    /// The candidates, made at the first pull.
    fn make(&mut self, cx: &mut Exec<'_, '_>, run: &Run<'_, '_>) -> SqlResult<()> {
        if self.made.is_none() {
            let plan = run.plan;
            // A table function's rows (made at the statement's first run
            // of the block, held until the statement ends).
            let values = match &plan.source.values {
                Some(v) => Some(cx.table_rows.rows(v)?),
                None => None,
            };
            let (rows, filtered) = super::candidates(
                cx,
                plan,
                run.path,
                run.outer,
                run.ex.filter.as_ref(),
                run.host,
                true,
                &mut self.mem,
                values.as_deref(),
            )?;
            self.filtered = filtered;
            self.meter.holds(self.mem.bytes());
            self.made = Some(Items::new(budget::Grave(rows)));
        }
        Ok(())
    }
}

impl Step<Candidate> for Scan<'_> {
    fn next(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<Option<Vec<Candidate>>> {
        let start = self.meter.start();
        self.make(cx, run)?;
        pass_made(&mut self.meter, start, &mut self.made)
    }

    fn all(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<budget::Grave<Vec<Candidate>>> {
        let start = self.meter.start();
        self.make(cx, run)?;
        let rows = self.made.as_mut().map(Items::rest).unwrap_or_default();
        self.meter
            .step(start, rows.len(), rows.len().div_ceil(BATCH_ROWS));
        Ok(rows)
    }
}

/// The block's WHERE over the scan's candidates (passed through when the
/// scan tested it already).
pub(crate) struct Filter<'p> {
    meter: Meter<'p>,
    pub input: Scan<'p>,
}

impl<'p> Filter<'p> {
    pub fn new(node: &'p Node, input: Scan<'p>) -> Filter<'p> {
        Filter {
            meter: Meter::new(node, Stage::Filter),
            input,
        }
    }
}

impl Step<Candidate> for Filter<'_> {
    fn next(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<Option<Vec<Candidate>>> {
        loop {
            // Timed with its input (as every operator's figure is).
            let start = self.meter.start();
            let Some(mut batch) = self.input.next(cx, run)? else {
                self.meter.step(start, 0, 0);
                return Ok(None);
            };
            self.keep(cx, run, &mut batch)?;
            self.meter
                .step(start, batch.len(), usize::from(!batch.is_empty()));
            if !batch.is_empty() {
                return Ok(Some(batch));
            }
        }
    }

    fn all(
        &mut self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
    ) -> SqlResult<budget::Grave<Vec<Candidate>>> {
        let start = self.meter.start();
        let mut rows = self.input.all(cx, run)?;
        self.keep(cx, run, &mut rows)?;
        self.meter
            .step(start, rows.len(), rows.len().div_ceil(BATCH_ROWS));
        Ok(rows)
    }
}

impl Filter<'_> {
    /// The candidates of `items` the WHERE accepts, kept in place (the
    /// survivors move to the front in order), unless the scan tested it.
    fn keep(
        &self,
        cx: &mut Exec<'_, '_>,
        run: &Run<'_, '_>,
        items: &mut Vec<Candidate>,
    ) -> SqlResult<()> {
        let (Some(f), false) = (&run.ex.filter, self.input.filtered) else {
            return Ok(());
        };
        let mut kept = 0;
        for i in 0..items.len() {
            budget::tick()?;
            let (row, m) = &items[i];
            let v = run.eval(cx, f, row, &[], m)?;
            if crate::sql::expr::truth(&v) == Some(true) {
                items.swap(kept, i);
                kept += 1;
            }
        }
        items.truncate(kept);
        Ok(())
    }
}
