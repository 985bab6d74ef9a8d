//! `ANALYZE TABLE`, `CHECK TABLE` and `OPTIMIZE TABLE` as MySQL answers
//! them: one result of (`Table`, `Op`, `Msg_type`, `Msg_text`) rows per
//! statement, a table that fails (missing, damaged) reported in its rows
//! with `Operation failed` rather than failing the statement.
//!
//! Owns what each operation means here: ANALYZE has nothing to refresh
//! (the planner reads the storage's live row counts, never stored
//! statistics) and answers `OK`; CHECK runs the index checker
//! ([`crate::sql::check`]) on every index of the table and reports each
//! difference; OPTIMIZE does not rewrite a table and says so with MySQL's
//! note for an engine without it. Never writes.

use std::collections::HashSet;

use crate::catalog::{self, SYSTEM_DB};
use crate::error::{code, SqlError, SqlResult};
use crate::sql::parse::{MaintenanceOp, Name};
use crate::sql::Ctx;
use crate::types::{Column, ColumnKind, QueryResult, Value};

/// Run `op` over `tables` in order.
pub fn run(cx: &mut Ctx<'_>, op: MaintenanceOp, tables: &[Name]) -> SqlResult<QueryResult> {
    let mut seen = HashSet::new();
    let mut rows = Vec::new();
    for name in tables {
        let db = cx.session.db_for(name.db.as_deref())?.to_string();
        if !seen.insert((db.clone(), name.name.clone())) {
            return Err(SqlError::new(
                code::NONUNIQ_TABLE,
                format!("Not unique table/alias: '{}'", name.name),
            ));
        }
        let qualified = format!("{db}.{}", name.name);
        let mut row = |kind: &str, text: String| {
            rows.push(vec![
                Value::Text(qualified.clone()),
                Value::Text(op.name().into()),
                Value::Text(kind.into()),
                Value::Text(text),
            ]);
        };
        if db == SYSTEM_DB || catalog::information_schema::is(&db) {
            row(
                "note",
                format!(
                    "The storage engine for the table doesn't support {}",
                    op.name()
                ),
            );
            continue;
        }
        let t = match catalog::get_table(cx.txn, &db, &name.name, false) {
            Ok(Some(t)) => t,
            Ok(None) => {
                row("Error", catalog::no_such_table(&db, &name.name).message);
                row("status", "Operation failed".into());
                continue;
            }
            // A KILL or a storage failure ends the statement.
            Err(e) => return Err(e),
        };
        match op {
            MaintenanceOp::Analyze => row("status", "OK".into()),
            MaintenanceOp::Optimize => row(
                "note",
                "The storage engine for the table doesn't support optimize".into(),
            ),
            MaintenanceOp::Check => {
                let mut corrupt = false;
                for ix in &t.indexes {
                    let rep = crate::sql::check::check_index(cx, &t, ix)?;
                    if !rep.ok() {
                        corrupt = true;
                        row(
                            "error",
                            format!(
                                "Index '{}': {} rows, {} indexed, {} missing, {} unreachable, {} stale",
                                ix.name,
                                rep.rows,
                                rep.indexed,
                                rep.missing,
                                rep.unreachable,
                                rep.stale
                            ),
                        );
                    } else if rep.pending > 0 {
                        row(
                            "note",
                            format!(
                                "Index '{}': {} changed rows not yet applied (ASYNC) were not judged",
                                ix.name, rep.pending
                            ),
                        );
                    }
                }
                if corrupt {
                    row("error", "Corrupt".into());
                } else {
                    row("status", "OK".into());
                }
            }
        }
    }
    Ok(QueryResult {
        columns: ["Table", "Op", "Msg_type", "Msg_text"]
            .iter()
            .map(|c| Column {
                name: (*c).into(),
                kind: ColumnKind::Text,
            })
            .collect(),
        rows,
        ..Default::default()
    })
}
