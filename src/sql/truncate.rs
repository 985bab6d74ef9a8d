//! `TRUNCATE [TABLE] t`: empty a table at once, as MySQL's (which drops
//! and re-creates it).
//!
//! Owns: the swap of a table's storage. One DDL transaction, holding the
//! table's catalog record exclusively (every writer of the table has
//! committed; none starts), gives the table a **new storage id** and every
//! index a new storage id (ISCP indexes: a new job generation, registered
//! exactly as CREATE INDEX does, built from the new, empty table), and
//! drops the old rows and indexes through the paths DROP TABLE uses: old
//! B-tree and row storage is purged after the commit, old ISCP jobs go
//! through the DROP protocol (Canceling in this transaction; fenced,
//! drained and finalized after it), so no consumer applies a change of the
//! old contents to the new generation, and a search right after the
//! commit reads the new, empty index. The AUTO_INCREMENT counter is keyed
//! by the storage id, so it restarts at 1 (MariaDB's and MySQL's
//! behaviour, also for a table created with `AUTO_INCREMENT = n`).
//!
//! Atomic (issue 39): a KILL, an error or a crash before the commit leaves
//! the old table and its indexes whole (the answer is then 1317 or the
//! error); after the commit the statement stands and succeeds. Fault
//! points: [`tributary_fault::points::DDL_TRUNCATE_SWAP`], then the shared
//! `fj/ddl/before-commit` / `fj/ddl/after-commit`.
//!
//! Never: deletes rows one by one (the cost does not grow with the table,
//! except the purge of the old storage after the commit); runs under LOCK
//! TABLES (the lock's own transaction holds the catalog record the swap
//! writes: refused with 1192 like the other DDL, after MySQL's 1100 / 1099
//! checks); truncates a view (1146, as MySQL) or a system table (1227).

use crate::catalog::{self, TableDef};
use crate::error::{code, SqlError, SqlResult};
use crate::iscp;
use crate::sql::parse::Name;
use crate::sql::schema::{self, Dropped};
use crate::sql::{Ctx, Engine, SessionState};
use crate::types::QueryResult;

/// `TRUNCATE [TABLE] t` (the session has no open transaction: DDL commits
/// it first).
pub fn truncate(engine: &Engine, st: &mut SessionState, table: &Name) -> SqlResult<QueryResult> {
    let db = st.db_for(table.db.as_deref())?.to_string();
    let name = table.name.clone();
    let mut dropped = Vec::new();
    let mut created = Vec::new();
    let r = engine.in_txn(st, |cx| {
        swap(cx, &db, &name, &mut dropped, &mut created)?;
        schema::before_commit(cx, &name)?;
        Ok(QueryResult::default())
    })?;
    schema::commit_and_finish(engine, st, &name, r, dropped, created)
}

/// TRUNCATE while the session holds LOCK TABLES: MySQL's checks first
/// (1100 if `t` is not locked, 1099 if it is READ-locked), then refused
/// with 1192 as every DDL statement here is (MySQL runs it under a WRITE
/// lock: a documented difference).
pub fn under_lock_tables(st: &SessionState, table: &Name) -> SqlResult<QueryResult> {
    let db = st.db_for(table.db.as_deref())?;
    st.table_locks.check(db, &table.name, true)?;
    Err(SqlError::new(
        1192,
        "Can't execute the given command because you have active locked tables or an active transaction",
    ))
}

/// The swap, in the DDL transaction: the old storage dropped, the new
/// empty one registered under the same name.
fn swap(
    cx: &mut Ctx<'_>,
    db: &str,
    name: &str,
    dropped: &mut Vec<Dropped>,
    created: &mut Vec<(iscp::JobKey, iscp::log::JobSpec)>,
) -> SqlResult<()> {
    if catalog::is_system_db(db) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!("Access denied: {db} tables cannot be truncated"),
        ));
    }
    // Exclusive: waits for the table's writers, keeps new ones out.
    let old = match catalog::get_table(cx.txn, db, name, true)? {
        Some(t) if t.view.is_none() => t,
        // A view is not a table to TRUNCATE (MySQL: 1146).
        _ => {
            return Err(SqlError::new(
                code::NO_SUCH_TABLE,
                format!("Table '{db}.{name}' doesn't exist"),
            ))
        }
    };
    crate::sql::fk::before_truncate(cx, &old)?;
    // The old contents: rows and B-trees purged after the commit, ISCP
    // jobs Canceling (the DROP protocol).
    for ix in &old.indexes {
        schema::drop_index_parts(cx, &old, ix, dropped)?;
    }
    dropped.push(Dropped::Storage(old.id));
    cx.txn
        .delete(catalog::SYS_AUTOINC, &old.id.to_be_bytes())
        .map_err(SqlError::from)?;
    let fault = tributary_fault::hit_blocking(
        tributary_fault::points::DDL_TRUNCATE_SWAP,
        Some(name),
        cx.session.interrupt.token(),
    );
    cx.txn.check_interrupt()?;
    fault.map_err(SqlError::from)?;
    let new = fresh(cx, &old, created)?;
    catalog::put_table(cx.txn, &new)
}

/// `old`'s definition over new, empty storage: a new table id, and each
/// index re-created (new storage id; an ISCP index a new job generation).
fn fresh(
    cx: &mut Ctx<'_>,
    old: &TableDef,
    created: &mut Vec<(iscp::JobKey, iscp::log::JobSpec)>,
) -> SqlResult<TableDef> {
    let mut t = old.clone();
    t.id = catalog::alloc_object_id(cx.engine.storage.as_ref())?;
    t.indexes = Vec::with_capacity(old.indexes.len());
    // As a new table: no change log until an ISCP job reads it.
    cx.engine.storage.set_change_log_on_demand(t.id, true)?;
    for ix in &old.indexes {
        let new_ix = schema::index_def(cx, &t, &schema::spec_of(old, ix))?;
        debug_assert_eq!(
            new_ix.job_id.is_some(),
            ix.job_id.is_some(),
            "an index keeps its kind across TRUNCATE"
        );
        if new_ix.job_id.is_some() {
            cx.engine.storage.set_change_log_on_demand(t.id, false)?;
            let key = iscp::log::register_job(cx.txn, &t, &new_ix)?;
            created.push((key, iscp::log::JobSpec::of(&t, &new_ix)));
        }
        t.indexes.push(new_ix);
    }
    debug_assert_eq!(t.indexes.len(), old.indexes.len());
    Ok(t)
}

#[cfg(test)]
mod tests {
    use crate::sql::parse::{parse, Name, Stmt};

    #[test]
    fn parses_one_table_with_or_without_table_keyword() {
        for (sql, db) in [
            ("TRUNCATE TABLE t", None),
            ("truncate t", None),
            ("TRUNCATE k.t", Some("k")),
        ] {
            match parse(sql) {
                Ok(Stmt::Truncate { table }) => assert_eq!(
                    table,
                    Name {
                        db: db.map(str::to_string),
                        name: "t".into()
                    },
                    "{sql}"
                ),
                other => panic!("{sql}: {other:?}"),
            }
        }
        // MySQL takes one table: a list is a syntax error.
        for sql in [
            "TRUNCATE t, u",
            "TRUNCATE TABLE",
            "TRUNCATE t PARTITION (p0)",
        ] {
            assert_eq!(parse(sql).map(|_| ()).unwrap_err().code, 1064, "{sql}");
        }
    }
}
