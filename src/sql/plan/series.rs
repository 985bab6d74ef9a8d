//! `generate_series(start, stop[, step])`, MatrixOne's table function: a
//! one-column relation (`result`) of integers from `start` to `stop`
//! inclusive, `step` apart (default 1; negative counts down).
//!
//! Owns the function's arguments' rules, checked when the query is
//! planned (arguments must be constants: integers, integer text or NULL;
//! a step of 0 is 1210; more than [`MAX_ROWS`] rows is refused with
//! 1235), and the [`Values`] description of its rows. Never produces a
//! row: the rows are made when the block runs
//! ([`crate::sql::exec::series`], charged to the statement's budget and
//! stopped by KILL).

use crate::error::{SqlError, SqlResult};
use crate::sql::plan::Values;
use crate::types::{ColumnKind, Value};

/// Most rows one call may produce (more is refused with 1235).
pub const MAX_ROWS: u64 = 10_000_000;

/// The rows `name(args…)` stands for (only `generate_series` exists).
pub fn plan(name: &sqlparser::ast::ObjectName, args: &[Value]) -> SqlResult<Values> {
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
        return Ok(Values {
            label,
            kind: ColumnKind::Int,
            start: 0,
            step: 1,
            count: 0,
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
    debug_assert!((0..=i128::from(MAX_ROWS)).contains(&count));
    Ok(Values {
        label,
        kind: ColumnKind::Int,
        start,
        step,
        count: u64::try_from(count).unwrap_or(0),
    })
}

fn bad(name: &sqlparser::ast::ObjectName, v: &Value) -> SqlError {
    SqlError::unsupported(format!("{name} over {v} (integers only)"))
}
