//! `generate_series(start, stop[, step])`, MatrixOne's table function: a
//! one-column relation (`result`) of integers from `start` to `stop`
//! inclusive, `step` apart (default 1; negative counts down).
//!
//! Owns: the function's arguments' rules and its rows, computed once when
//! the query is planned (arguments must be constants), charged to the
//! statement's memory budget as they are made (1114 past it) and
//! stopped by KILL / `max_execution_time` ([`crate::sql::budget`]).
//! Never: reads a table, or produces more than [`MAX_ROWS`] rows
//! (refused with 1235).

use crate::error::{SqlError, SqlResult};
use crate::sql::budget::Reservation;
use crate::sql::select::Values;
use crate::types::{ColumnKind, Value};

/// Most rows one `generate_series` may produce.
pub const MAX_ROWS: u64 = 10_000_000;

/// The rows and their column kind.
pub struct Series {
    pub kind: ColumnKind,
    rows: Vec<Vec<Value>>,
    label: String,
    /// What the rows are charged to the statement's budget.
    mem: Reservation,
}

impl From<Series> for Values {
    fn from(s: Series) -> Values {
        Values {
            label: s.label,
            rows: s.rows,
            mem: s.mem,
        }
    }
}

/// Evaluate `name(args…)` (only `generate_series` exists).
pub fn generate(name: &sqlparser::ast::ObjectName, args: &[Value]) -> SqlResult<Series> {
    let shown = |v: &Value| v.to_string();
    let label = format!(
        "Function Scan generate_series({})",
        args.iter().map(shown).collect::<Vec<_>>().join(", ")
    );
    let int = |v: &Value| match v {
        Value::Int(i) => Ok(Some(*i)),
        Value::Null => Ok(None),
        Value::Text(s) => s.trim().parse::<i64>().map(Some).map_err(|_| bad(name, v)),
        other => Err(bad(name, other)),
    };
    let (start, stop, step) = match args {
        [a, b] => (int(a)?, int(b)?, Some(1)),
        [a, b, c] => (int(a)?, int(b)?, int(c)?),
        _ => {
            return Err(SqlError::new(
                1582,
                format!("Incorrect parameter count in the call to native function '{name}'"),
            ))
        }
    };
    let (Some(start), Some(stop), Some(step)) = (start, stop, step) else {
        // A NULL argument: no rows (as PostgreSQL and MatrixOne).
        return Ok(Series {
            kind: ColumnKind::Int,
            rows: Vec::new(),
            label,
            mem: Reservation::default(),
        });
    };
    if step == 0 {
        return Err(SqlError::wrong_args(
            "generate_series: step size cannot equal zero",
        ));
    }
    let span = if step > 0 {
        i128::from(stop) - i128::from(start)
    } else {
        i128::from(start) - i128::from(stop)
    };
    let count = if span < 0 {
        0
    } else {
        span / i128::from(step).abs() + 1
    };
    if count > i128::from(MAX_ROWS) {
        return Err(SqlError::unsupported(format!(
            "generate_series of more than {MAX_ROWS} rows ({count})"
        )));
    }
    // Reserved once for as many rows as the budget can hold (not for the
    // requested count: the budget bounds what is allocated), so that the
    // buffer never doubles under KILL (`budget::affordable_rows`).
    let one = crate::sql::budget::row_size(&[Value::Int(0)]);
    let want = usize::try_from(count).unwrap_or(usize::MAX);
    let mut rows = crate::sql::budget::Grave(Vec::with_capacity(
        crate::sql::budget::affordable_rows(want, one),
    ));
    let mut mem = Reservation::new();
    for i in 0..count {
        let row = vec![Value::Int(
            (i128::from(start) + i * i128::from(step)) as i64,
        )];
        mem.add_row(&row)?;
        rows.push(row);
    }
    Ok(Series {
        kind: ColumnKind::Int,
        rows: rows.take(),
        label,
        mem,
    })
}

fn bad(name: &sqlparser::ast::ObjectName, v: &Value) -> SqlError {
    SqlError::unsupported(format!("{name} over {v} (integers only)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[i64]) -> SqlResult<Vec<i64>> {
        let name =
            sqlparser::ast::ObjectName::from(vec![sqlparser::ast::Ident::new("generate_series")]);
        let vals: Vec<Value> = args.iter().map(|&i| Value::Int(i)).collect();
        let s = generate(&name, &vals)?;
        Ok(s.rows
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
