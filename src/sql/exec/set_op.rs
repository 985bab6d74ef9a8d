//! UNION / INTERSECT / EXCEPT over their two inputs' rows.
//!
//! Owns combining them: UNION ALL concatenates; the DISTINCT forms keep
//! the first of rows that are equal as in DISTINCT (NULLs equal, text
//! under the output columns' collations). Every key is charged to the
//! statement's budget and every row ticks. Never runs its inputs (the
//! caller hands their rows in).

use std::collections::HashSet;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::plan::{out_collations, Node, SetOp};
use crate::types::Value;

/// Combine a set operation's inputs. Out of line: `run_node` recurses
/// once per operator of a long chain, so its frame stays small.
#[inline(never)]
pub(super) fn set_operation(
    node: &Node,
    u: &crate::sql::plan::Union,
    mut rows: Vec<Vec<Value>>,
    right: Vec<Vec<Value>>,
    mem: &mut Reservation,
) -> SqlResult<Vec<Vec<Value>>> {
    let colls = out_collations(node);
    let mut key = |r: &[Value]| -> SqlResult<Vec<u8>> {
        budget::tick()?;
        let k = super::keys::group_key_under(r, &colls);
        mem.add(k.len() + 48)?;
        Ok(k)
    };
    match u.op {
        SetOp::Union => {
            rows.extend(right);
            if !u.all {
                // Its keys spill past `tmp_table_size` (decision 027).
                rows = crate::sql::spill::hash::distinct(rows, |r| {
                    super::keys::group_key_under(r, &colls)
                })?;
            }
        }
        // Distinct rows of the left that are (not) in the right; rows
        // compare as in DISTINCT (NULLs equal).
        SetOp::Intersect | SetOp::Except => {
            let other: HashSet<Vec<u8>> = right.iter().map(|r| key(r)).collect::<SqlResult<_>>()?;
            let wanted = u.op == SetOp::Intersect;
            let mut seen = HashSet::new();
            let mut keep = Vec::with_capacity(rows.len());
            for r in &rows {
                let k = key(r)?;
                keep.push(other.contains(&k) == wanted && seen.insert(k));
            }
            let mut it = keep.into_iter();
            rows.retain(|_| it.next().unwrap_or(false));
        }
    }
    Ok(rows)
}
