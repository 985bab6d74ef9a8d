//! The rows of a table function (`generate_series`, planned as a
//! [`Values`] by [`crate::sql::plan::series`]), made when its block runs.
//!
//! Owns producing them, once per statement at the block's first run, and
//! holding them until the statement ends ([`Made`]; as the plan held them
//! when they were made at planning time): each row is charged to the
//! statement's memory budget as it is made (1114 past it) and every row
//! ticks ([`budget::tick`]: KILL / `max_execution_time`). Never checks the
//! arguments (the planner did) and never reads a table.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::SqlResult;
use crate::sql::budget::{self, Reservation};
use crate::sql::plan::Values;
use crate::types::Value;

/// A table function's rows: charged to the statement while they live; a
/// failing statement frees them after it answers.
pub struct Rows {
    pub rows: Vec<Vec<Value>>,
    #[allow(dead_code, reason = "held for its Drop")]
    mem: Reservation,
}

impl Drop for Rows {
    fn drop(&mut self) {
        if budget::failing() {
            budget::bury(std::mem::take(&mut self.rows));
        }
    }
}

/// The table-function rows made so far in a statement, by the address of
/// their plan's [`Values`] (stable while the statement's plan lives) and
/// what they are (so a plan planned later at a freed address can only
/// find the very rows it describes).
#[derive(Default)]
pub struct Made(HashMap<(usize, i64, i64, u64), Arc<Rows>>);

impl Made {
    /// The rows of `v`: made at the first call of the statement, then the
    /// same rows (a block run again, e.g. a correlated subquery, reads
    /// them again without making them again).
    pub fn rows(&mut self, v: &Values) -> SqlResult<Arc<Rows>> {
        let at = (v as *const Values as usize, v.start, v.step, v.count);
        if let Some(r) = self.0.get(&at) {
            return Ok(r.clone());
        }
        let r = Arc::new(rows(v)?);
        self.0.insert(at, r.clone());
        Ok(r)
    }
}

thread_local! {
    /// Table-function row sets made on this thread (a statement runs on
    /// one thread): what tests count makings by.
    static MADE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many table-function row sets statements on this thread have made.
pub fn makings() -> u64 {
    MADE.with(std::cell::Cell::get)
}

/// Make the rows `v` describes.
fn rows(v: &Values) -> SqlResult<Rows> {
    MADE.with(|m| m.set(m.get() + 1));
    // Reserved once for as many rows as the budget can hold (not for the
    // requested count: the budget bounds what is allocated), so that the
    // buffer never doubles under KILL (`budget::affordable_rows`).
    let one = budget::row_size(&[Value::Int(0)]);
    let want = usize::try_from(v.count).unwrap_or(usize::MAX);
    let mut rows = budget::Grave(Vec::with_capacity(budget::affordable_rows(want, one)));
    let mut mem = Reservation::new();
    for i in 0..v.count {
        budget::tick()?;
        let row = vec![Value::Int(
            (i128::from(v.start) + i128::from(i) * i128::from(v.step)) as i64,
        )];
        mem.add_row(&row)?;
        rows.push(row);
    }
    Ok(Rows {
        rows: rows.take(),
        mem,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[i64]) -> SqlResult<Vec<i64>> {
        let name =
            sqlparser::ast::ObjectName::from(vec![sqlparser::ast::Ident::new("generate_series")]);
        let vals: Vec<Value> = args.iter().map(|&i| Value::Int(i)).collect();
        let v = crate::sql::plan::series::plan(&name, &vals)?;
        Ok(rows(&v)?
            .rows
            .iter()
            .map(|r| match r[0] {
                Value::Int(i) => i,
                _ => unreachable!("integer rows"),
            })
            .collect())
    }

    #[test]
    fn counts_up_down_and_to_the_edges() {
        assert_eq!(run(&[1, 5]).unwrap(), [1, 2, 3, 4, 5]);
        assert_eq!(run(&[1, 10, 4]).unwrap(), [1, 5, 9]);
        assert_eq!(run(&[5, 1, -2]).unwrap(), [5, 3, 1]);
        assert!(run(&[5, 1]).unwrap().is_empty());
        assert_eq!(
            run(&[i64::MAX - 1, i64::MAX]).unwrap(),
            [i64::MAX - 1, i64::MAX]
        );
        assert_eq!(run(&[i64::MIN, i64::MIN + 1]).unwrap().len(), 2);
        assert_eq!(run(&[1, 2, 0]).unwrap_err().code, 1210);
        assert_eq!(run(&[0, i64::MAX]).unwrap_err().code, 1235);
        assert_eq!(run(&[1]).unwrap_err().code, 1582);
    }
}
