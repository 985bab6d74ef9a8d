//! The scan of an aggregating block over its input node (a recursive CTE,
//! a derived table, a join), streamed: each batch the input passes on is
//! folded before the next is asked for, so the input's rows are never
//! all held at once (a recursive union's rounds go to the aggregate as
//! they are made).
//!
//! Used only where the block consumes every input row before passing
//! anything on (an aggregate without WHERE or MATCH scores, chosen by
//! [`super::chain`]): stopping early can then not leave a recursion
//! unfinished that would have failed (3636) had it run to its end.
//! Charges nothing itself (the aggregate charges its groups). Never plans,
//! never writes.

use crate::error::SqlResult;
use crate::sql::exec::op::{BoxOp, Exec, Meter};
use crate::sql::plan::{Node, Plan, Stage};
use crate::types::Value;

use super::stage::{step, Candidate, Run, Step};

/// The block's input node when an aggregating block may stream it.
pub(crate) fn streamable(plan: &Plan) -> Option<&Node> {
    let input = plan.source.input.as_deref()?;
    (plan.aggregate
        && plan.filter.is_none()
        && plan.match_tables.is_empty()
        && plan.matches.is_empty()
        && plan.source.values.is_none())
    .then_some(input)
}

/// The streamed scan of a block's input node.
pub(crate) struct Stream<'p> {
    meter: Meter<'p>,
    input: &'p Node,
    outer: &'p [Value],
    /// The input's operator, opened at the first pull.
    op: Option<BoxOp<'p>>,
}

impl<'p> Stream<'p> {
    /// `node`: the block's node (its figures are the scan's).
    pub fn new(node: &'p Node, input: &'p Node, outer: &'p [Value]) -> Stream<'p> {
        Stream {
            meter: Meter::new(node, Stage::Scan),
            input,
            outer,
            op: None,
        }
    }
}

impl Step<Candidate> for Stream<'_> {
    fn next(
        &mut self,
        cx: &mut Exec<'_, '_>,
        _run: &Run<'_, '_>,
    ) -> SqlResult<Option<Vec<Candidate>>> {
        let start = self.meter.start();
        if self.op.is_none() {
            self.op = Some(cx.open(self.input, self.outer)?);
        }
        let batch = match self.op.as_mut() {
            Some(op) => crate::sql::stack::descend(|| op.next(cx))?,
            None => None,
        };
        let out = batch.map(|b| b.rows.into_iter().map(|r| (r, Vec::new())).collect());
        step(&mut self.meter, start, &out);
        Ok(out)
    }
}
