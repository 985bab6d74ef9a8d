//! INSERT, UPDATE, DELETE and the synchronous maintenance of indexes in the
//! writing transaction: B-tree entries, and the entries of non-ASYNC HNSW
//! and full-text indexes (whose in-memory copies the session catches up
//! after commit).
//!
//! Every statement reads its table's definition under a shared lock on the
//! catalog record (a metadata lock: DDL takes it exclusively). Every write
//! takes the row lock (through storage) and checks primary-key and
//! unique-index duplicates with locking current reads, so two sessions can
//! never both insert the same key. Asynchronous indexes are not touched
//! here: their input is the storage change log, read by ISCP. Never commits:
//! the session decides (autocommit or explicit transaction).

use std::sync::Arc;

use sqlparser::ast::{self as ast, Expr, SetExpr};

use crate::catalog::codec::encode_row;
use crate::catalog::entries::{self, dup_entry};
use crate::catalog::schema::coerce_to_column;
use crate::catalog::{self, IndexKind, TableDef, SYS_AUTOINC};
use crate::error::{code, SqlError, SqlResult};
use crate::sql::access::btree_entry_key;
use crate::sql::check_constraint;
use crate::sql::expr::{eval_const, ident_name, object_parts, CExpr, Compiler, EvalCtx, Scope};
use crate::sql::fk_enforce;
use crate::sql::host::SessionHost;
use crate::sql::write::{self, maintain_indexes, row_key};
use crate::sql::Ctx;
use crate::types::{QueryResult, Value, Warning};

/// The table a statement writes, under its metadata lock (system tables:
/// 1227; LOCK TABLES checked).
pub fn table_from_name(cx: &mut Ctx<'_>, name: &ast::ObjectName) -> SqlResult<Arc<TableDef>> {
    let parts = object_parts(name);
    let (db, t) = match parts.as_slice() {
        [t] => (cx.session.require_db()?.to_string(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::parse(format!("bad table name {name}"))),
    };
    if catalog::is_system_db(&db) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!("Access denied: {db}.{t} is a system table and is read-only"),
        ));
    }
    cx.session.table_locks.check(&db, &t, true)?;
    let metadata_lock = !cx.session.table_locks.writes_under_lock(&db, &t);
    match catalog::require_table_for_write(cx.txn, &db, &t, metadata_lock) {
        // A table's record exists only inside its database (DROP DATABASE
        // removes both in one transaction), so the database is looked up
        // only to tell 1049 from 1146 — not on every write.
        Err(e) if e.code == code::NO_SUCH_TABLE => {
            catalog::require_database(cx.txn, &db)?;
            Err(e)
        }
        r => r,
    }
}

fn next_auto_increment(cx: &mut Ctx<'_>, t: &TableDef, at_least: Option<i64>) -> SqlResult<i64> {
    let k = t.id.to_be_bytes();
    let cur = match cx.txn.get(SYS_AUTOINC, &k, true)? {
        Some(b) if b.len() == 8 => {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b);
            i64::from_be_bytes(a)
        }
        _ => 1,
    };
    let (val, next) = match at_least {
        Some(explicit) => (explicit, cur.max(explicit.saturating_add(1))),
        None => (cur, cur.saturating_add(1)),
    };
    if next != cur {
        cx.txn.put(SYS_AUTOINC, &k, next.to_be_bytes().to_vec())?;
    }
    Ok(val)
}

/// A value error of the `row_no`-th row of a statement (1-based): the
/// coercion reports "at row 1", knowing one value only.
fn at_row(e: SqlError, row_no: u64) -> SqlError {
    match e.message.strip_suffix(" at row 1") {
        Some(head) if row_no != 1 => SqlError::new(e.code, format!("{head} at row {row_no}")),
        _ => e,
    }
}

/// Insert one full row (already ordered by table columns, not yet coerced).
pub fn insert_row(cx: &mut Ctx<'_>, t: &TableDef, row: Vec<Value>, replace: bool) -> SqlResult<()> {
    let (row, generated) = prepare_row(cx, t, row)?;
    write_new_row(cx, t, row, replace)?;
    if let Some(id) = generated {
        cx.session.last_insert_id = id;
    }
    Ok(())
}

/// A row as it will be stored: AUTO_INCREMENT values assigned, every value
/// coerced to its column's type; with the value generated, if one was.
pub fn prepare_row(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    mut row: Vec<Value>,
) -> SqlResult<(Vec<Value>, Option<u64>)> {
    let mut generated = None;
    for (i, c) in t.columns.iter().enumerate() {
        if c.auto_increment {
            let explicit = match &row[i] {
                Value::Null => None,
                Value::Int(0) => None,
                v => match coerce_to_column(c, v.clone())? {
                    Value::Int(x) => Some(x),
                    _ => None,
                },
            };
            let v = next_auto_increment(cx, t, explicit)?;
            if explicit.is_none() {
                generated = Some(v as u64);
            }
            row[i] = Value::Int(v);
        }
    }
    let row = row
        .into_iter()
        .zip(&t.columns)
        .map(|(v, c)| coerce_to_column(c, v))
        .collect::<SqlResult<_>>()?;
    Ok((row, generated))
}

/// Store a prepared row. REPLACE first deletes every stored row it
/// collides with — on the primary key or on any UNIQUE index, equal under
/// the key's collation — as MySQL does; returns how many it deleted.
fn write_new_row(cx: &mut Ctx<'_>, t: &TableDef, row: Vec<Value>, replace: bool) -> SqlResult<u64> {
    let mut deleted = 0u64;
    if replace {
        while let Some(c) = conflicting_row(cx, t, &row)? {
            crate::sql::budget::tick()?;
            let Some(stored) = cx.txn.get(t.id, &c.key, true)? else {
                return Err(SqlError::internal("a unique index entry without its row"));
            };
            let old = crate::catalog::codec::decode_row(&stored)
                .map_err(|e| SqlError::internal(e.to_string()))?;
            // As InnoDB: REPLACE deletes, so a parent's children follow
            // its ON DELETE rule.
            fk_enforce::parent_deleted(cx, t, &c.key, &old)?;
            write::delete_row(cx, t, &c.key, &old)?;
            deleted += 1;
        }
    }
    check_constraint::enforce(cx, t, &row)?;
    let key = row_key(cx, t, &row)?;
    if !t.has_hidden_pk() && cx.txn.get(t.id, &key, true)?.is_some() {
        debug_assert!(!replace, "REPLACE deleted the row under its key");
        return Err(dup_entry(&t.pk_values(&row), "PRIMARY"));
    }
    maintain_indexes(cx, t, &key, None, Some(&row))?;
    // The key was read (and locked) above, or is a fresh row id.
    cx.txn.put_unread(t.id, &key, encode_row(&row))?;
    // After the row is in: a row may reference itself (InnoDB's order).
    fk_enforce::check_parents(cx, t, None, &row)?;
    Ok(deleted)
}

/// What a duplicate key does to a loaded row (LOAD DATA, `load.rs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDuplicate {
    Error,
    /// Skipped with warning 1062 (a row without its parent: 1452).
    Skip,
    /// The stored rows it collides with are deleted first.
    Replace,
}

/// Store one prepared row ([`prepare_row`]) for LOAD DATA: `Ok(deleted)`
/// (rows REPLACE deleted), or the warning a skipped row gives.
pub fn store_row(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    row: Vec<Value>,
    on_dup: OnDuplicate,
) -> SqlResult<Result<u64, Warning>> {
    match on_dup {
        OnDuplicate::Error => write_new_row(cx, t, row, false).map(Ok),
        OnDuplicate::Replace => write_new_row(cx, t, row, true).map(Ok),
        OnDuplicate::Skip => {
            if let Some(c) = conflicting_row(cx, t, &row)? {
                return Ok(Err(Warning {
                    code: code::DUP_ENTRY,
                    message: dup_entry(&c.values, &c.key_name).message,
                }));
            }
            let sp = cx.txn.savepoint();
            match write_new_row(cx, t, row, false) {
                // As INSERT IGNORE: a row without its parent or failing a
                // CHECK constraint is skipped with the error as a warning.
                Err(e)
                    if e.code == code::NO_REFERENCED_ROW
                        || e.code == check_constraint::VIOLATED =>
                {
                    cx.txn.rollback_to(sp);
                    Ok(Err(Warning {
                        code: e.code,
                        message: e.message,
                    }))
                }
                r => r.map(Ok),
            }
        }
    }
}

/// A stored row a new row collides with: its storage key, the name of the
/// key they share, and the shared values.
struct Conflict {
    key: Vec<u8>,
    key_name: String,
    values: Vec<Value>,
}

/// The stored row a prepared row would collide with, checked as MySQL
/// does (the primary key first, then each UNIQUE index in order).
fn conflicting_row(cx: &mut Ctx<'_>, t: &TableDef, row: &[Value]) -> SqlResult<Option<Conflict>> {
    if !t.has_hidden_pk() {
        let key = t.pk_key(&t.pk_values(row));
        if cx.txn.get(t.id, &key, true)?.is_some() {
            return Ok(Some(Conflict {
                key,
                key_name: "PRIMARY".into(),
                values: t.pk_values(row),
            }));
        }
    }
    for ix in &t.indexes {
        if !matches!(ix.kind, IndexKind::BTree { unique: true }) {
            continue;
        }
        let vals = entries::entry_values(row, &ix.columns);
        if vals.iter().any(Value::is_null) {
            continue;
        }
        let colls = t.key_collations(&ix.columns);
        if let Some(existing) = cx.txn.get(
            ix.storage_id,
            &btree_entry_key(&vals, &colls, &[], true),
            true,
        )? {
            return Ok(Some(Conflict {
                key: existing,
                key_name: ix.name.clone(),
                values: vals,
            }));
        }
    }
    Ok(None)
}

/// Replace row `old` stored under `key` by `new` (its key may change),
/// with the foreign keys of both sides enforced: a parent's children
/// follow (or refuse) the change, a child's new values need a parent.
fn rewrite_row(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    key: &[u8],
    old: &[Value],
    new: &[Value],
) -> SqlResult<()> {
    check_constraint::enforce(cx, t, new)?;
    fk_enforce::parent_updated(cx, t, key, old, new)?;
    write::rewrite_row(cx, t, key, old, new)?;
    fk_enforce::check_parents(cx, t, Some(old), new)
}

/// The name the inserted row's values go by in ON DUPLICATE KEY UPDATE
/// (`VALUES(c)` is rewritten to it; a row alias `AS new` names it too).
const NEW_ROW: &str = "__inserted";

/// `VALUES(col)` → `__inserted.col`.
fn rewrite_values_calls(e: &mut Expr) {
    use std::ops::ControlFlow;
    let _ = ast::visit_expressions_mut(e, |x: &mut Expr| {
        if let Expr::Function(f) = x {
            let is_values = f
                .name
                .0
                .last()
                .and_then(|p| p.as_ident())
                .is_some_and(|i| i.value.eq_ignore_ascii_case("values"));
            if is_values {
                if let ast::FunctionArguments::List(l) = &f.args {
                    if let [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                        Expr::Identifier(col),
                    ))] = l.args.as_slice()
                    {
                        *x = Expr::CompoundIdentifier(vec![ast::Ident::new(NEW_ROW), col.clone()]);
                    }
                }
            }
        }
        ControlFlow::<()>::Continue(())
    });
}

/// INSERT / REPLACE.
pub fn insert(cx: &mut Ctx<'_>, ins: &ast::Insert) -> SqlResult<QueryResult> {
    let ast::TableObject::TableName(name) = &ins.table else {
        return Err(SqlError::unsupported("INSERT into a table function"));
    };
    let on_dup = match &ins.on {
        None => None,
        Some(ast::OnInsert::DuplicateKeyUpdate(a)) => Some(a),
        Some(_) => return Err(SqlError::unsupported("INSERT … ON CONFLICT")),
    };
    if ins.replace_into && (ins.ignore || on_dup.is_some()) {
        return Err(SqlError::unsupported(
            "REPLACE with IGNORE or ON DUPLICATE KEY UPDATE",
        ));
    }
    let row_alias = match &ins.insert_alias {
        None => None,
        Some(a) if a.col_aliases.as_ref().is_none_or(Vec::is_empty) && on_dup.is_some() => Some(
            object_parts(&a.row_alias)
                .last()
                .cloned()
                .unwrap_or_default(),
        ),
        Some(_) => return Err(SqlError::unsupported("INSERT … AS alias (column aliases)")),
    };
    if ins.returning.is_some()
        || ins.output.is_some()
        || ins.or.is_some()
        || ins.partitioned.is_some()
        || !ins.after_columns.is_empty()
        || ins.overriding.is_some()
        || ins.settings.is_some()
        || ins.format_clause.is_some()
    {
        return Err(SqlError::unsupported("this INSERT clause"));
    }
    let t = table_from_name(cx, name)?;
    // ON DUPLICATE KEY UPDATE: assignments over the stored row's columns
    // followed by the inserted row's (`VALUES(c)`, `alias.c`).
    let updates: Option<Vec<(usize, crate::sql::expr::CExpr)>> = match on_dup {
        None => None,
        Some(assignments) => {
            let table_name = object_parts(name).last().cloned().unwrap_or_default();
            let mut cols: Vec<(String, String)> = t
                .columns
                .iter()
                .map(|c| (table_name.clone(), c.name.clone()))
                .collect();
            cols.extend(
                t.columns
                    .iter()
                    .map(|c| (NEW_ROW.to_string(), c.name.clone())),
            );
            if let Some(a) = &row_alias {
                cols.extend(t.columns.iter().map(|c| (a.clone(), c.name.clone())));
            }
            // The inserted row's columns resolve only when qualified
            // (`VALUES(c)` becomes `__inserted.c`): a bare name is the
            // stored row's.
            let hidden = (t.columns.len()..cols.len()).collect();
            // The stored row, the inserted one, its alias: one collation
            // per table column, repeated.
            let colls = (0..cols.len())
                .map(|i| t.columns[i % t.columns.len()].collation)
                .collect();
            let scope = Scope {
                cols,
                hidden,
                colls,
            };
            let mut out = Vec::new();
            for a in assignments {
                let ast::AssignmentTarget::ColumnName(n) = &a.target else {
                    return Err(SqlError::unsupported("tuple assignment"));
                };
                let parts = object_parts(n);
                let col = t.require_column(parts.last().map(String::as_str).unwrap_or(""))?;
                let mut value = a.value.clone();
                rewrite_values_calls(&mut value);
                let mut c = Compiler::new(&scope, false);
                let compiled = c.compile(&value).map_err(|mut e| {
                    e.message = e.message.replace(&format!("{NEW_ROW}."), "");
                    e
                })?;
                out.push((col, compiled));
            }
            Some(out)
        }
    };
    // Column positions for the given values.
    let positions: Vec<usize> = if ins.columns.is_empty() {
        (0..t.columns.len()).collect()
    } else {
        ins.columns
            .iter()
            .map(|c| {
                let parts = object_parts(c);
                let n = parts.last().cloned().unwrap_or_default();
                t.require_column(&n)
            })
            .collect::<SqlResult<_>>()?
    };
    let Some(source) = &ins.source else {
        return Err(SqlError::unsupported("INSERT … SET"));
    };
    let value_rows: Vec<Vec<Value>> = match source.body.as_ref() {
        SetExpr::Values(vals) => {
            let host = crate::sql::host::LazyHost::new(cx.session, cx.engine);
            let scope = Scope::default();
            let mut rows = Vec::with_capacity(vals.rows.len());
            for r in &vals.rows {
                let exprs: &Vec<Expr> = &r.content;
                let mut out = Vec::with_capacity(exprs.len());
                for e in exprs {
                    let mut c = Compiler::new(&scope, false);
                    let ce = c.compile(e).map_err(|err| {
                        if err.code == code::BAD_FIELD {
                            SqlError::new(
                                code::BAD_FIELD,
                                err.message.replace("'field list'", "'VALUES'"),
                            )
                        } else {
                            err
                        }
                    })?;
                    out.push(eval_const(&ce, &host)?);
                }
                rows.push(out);
            }
            rows
        }
        _ => crate::sql::exec::query(cx, source)?.rows,
    };
    let mut n = 0u64;
    let mut warnings = Vec::new();
    let mut first_id: Option<u64> = None;
    for (row_no, vals) in (1u64..).zip(value_rows) {
        crate::sql::budget::tick()?;
        if vals.len() != positions.len() {
            return Err(SqlError::new(
                code::WRONG_VALUE_COUNT,
                format!("Column count doesn't match value count at row {row_no}"),
            ));
        }
        let mut row: Vec<Value> = t
            .columns
            .iter()
            .map(|c| c.default.clone().unwrap_or(Value::Null))
            .collect();
        let mut given = vec![false; t.columns.len()];
        for (p, v) in positions.iter().zip(vals) {
            row[*p] = v;
            given[*p] = true;
        }
        for (i, c) in t.columns.iter().enumerate() {
            if !given[i] && c.default.is_none() && !c.nullable && !c.auto_increment {
                return Err(SqlError::new(
                    1364,
                    format!("Field '{}' doesn't have a default value", c.name),
                ));
            }
        }
        let (row, generated) = prepare_row(cx, &t, row).map_err(|e| at_row(e, row_no))?;
        if !ins.ignore && updates.is_none() {
            // REPLACE: MySQL counts the deleted rows too.
            n += 1 + write_new_row(cx, &t, row, ins.replace_into)?;
            // LAST_INSERT_ID(): the first value generated by the statement.
            first_id = first_id.or(generated);
            continue;
        }
        let Some(Conflict {
            key,
            key_name,
            values: vals,
        }) = conflicting_row(cx, &t, &row)?
        else {
            if ins.ignore {
                // INSERT IGNORE: a row without its parent is skipped with
                // warning 1452, as in MySQL (its writes undone).
                let sp = cx.txn.savepoint();
                match write_new_row(cx, &t, row, false) {
                    Err(e)
                        if e.code == code::NO_REFERENCED_ROW
                            || e.code == check_constraint::VIOLATED =>
                    {
                        cx.txn.rollback_to(sp);
                        warnings.push(Warning {
                            code: e.code,
                            message: e.message,
                        });
                        continue;
                    }
                    r => r?,
                };
            } else {
                write_new_row(cx, &t, row, false)?;
            }
            n += 1;
            first_id = first_id.or(generated);
            continue;
        };
        // Not inserted: the value generated for it does not count.
        let Some(updates) = &updates else {
            // INSERT IGNORE: the duplicate row is skipped with a warning.
            warnings.push(Warning {
                code: code::DUP_ENTRY,
                message: dup_entry(&vals, &key_name).message,
            });
            continue;
        };
        let Some(stored) = cx.txn.get(t.id, &key, true)? else {
            return Err(SqlError::internal("a unique index entry without its row"));
        };
        let old = crate::catalog::codec::decode_row(&stored)
            .map_err(|e| SqlError::internal(e.to_string()))?;
        let mut new = old.clone();
        {
            let mut ctx_row = old.clone();
            ctx_row.extend(row.iter().cloned());
            if row_alias.is_some() {
                ctx_row.extend(row.iter().cloned());
            }
            let host = SessionHost::new(cx.session, cx.engine);
            // MySQL applies the assignments left to right, each seeing the
            // stored row as the ones before it left it.
            for (col, e) in updates {
                let v = e.eval(&EvalCtx {
                    row: &ctx_row,
                    outer: &[],
                    aggs: &[],
                    matches: &[],
                    funcs: &host,
                })?;
                let v = coerce_to_column(&t.columns[*col], v)?;
                ctx_row[*col] = v.clone();
                new[*col] = v;
            }
        }
        if new != old {
            rewrite_row(cx, &t, &key, &old, &new)?;
            // MySQL counts an updated row twice.
            n += 2;
        } else {
            // Unchanged: 0, or 1 for CLIENT_FOUND_ROWS.
            n += u64::from(cx.session.found_rows);
        }
    }
    if let Some(id) = first_id {
        cx.session.last_insert_id = id;
    }
    Ok(QueryResult {
        affected_rows: n,
        last_insert_id: cx.session.last_insert_id,
        warnings,
        ..Default::default()
    })
}

/// Rows of `t` matching `selection`, fetched with row locks.
fn matching_rows(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    scope: &Scope,
    selection: Option<&Expr>,
) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    let mut planner = crate::sql::plan::bind::Planner::new(cx);
    let mut c = Compiler::new(scope, false);
    c.sub = Some(&mut planner);
    let filter = match selection {
        Some(e) => Some(c.compile(e)?),
        None => None,
    };
    let matches = std::mem::take(&mut c.matches);
    drop(c);
    let subqueries = planner.into_subqueries();
    if !matches.is_empty() {
        crate::sql::search::require_fulltext_indexes(t, &matches)?;
        return Err(SqlError::unsupported("MATCH … AGAINST in UPDATE/DELETE"));
    }
    // The same plan node as a SELECT … FOR UPDATE of the table: access
    // path from the filter, filter tested in the scan. Every subquery runs
    // before the first row is written: it reads the statement's snapshot,
    // never its own changes.
    let host = SessionHost::new(cx.session, cx.engine);
    let plan = crate::sql::plan::Plan::locking_scan(t.clone(), filter, &host);
    drop(host);
    crate::sql::exec::block::keyed_rows(&mut crate::sql::exec::Exec::new(cx, subqueries), &plan)
}

/// `ORDER BY … LIMIT n` of a single-table UPDATE/DELETE: the rows it
/// touches, in that order (MySQL applies LIMIT to matched rows).
fn order_and_limit(
    cx: &mut Ctx<'_>,
    scope: &Scope,
    mut rows: Vec<(Vec<u8>, Vec<Value>)>,
    order_by: &[ast::OrderByExpr],
    limit: Option<&Expr>,
) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    let host = SessionHost::new(cx.session, cx.engine);
    if !order_by.is_empty() {
        let mut c = Compiler::new(scope, false);
        let keys: Vec<(CExpr, bool)> = order_by
            .iter()
            .map(|o| {
                if o.with_fill.is_some() || o.options.nulls_first.is_some() {
                    return Err(SqlError::unsupported("NULLS FIRST/LAST or WITH FILL"));
                }
                Ok((
                    c.compile(&o.expr)?,
                    matches!(o.options.sort, Some(ast::OrderBySort::Desc)),
                ))
            })
            .collect::<SqlResult<_>>()?;
        let mut keyed = Vec::with_capacity(rows.len());
        for (k, r) in rows {
            crate::sql::budget::tick()?;
            let ecx = EvalCtx {
                row: &r,
                outer: &[],
                aggs: &[],
                matches: &[],
                funcs: &host,
            };
            let vals = keys
                .iter()
                .map(|(e, _)| e.eval(&ecx))
                .collect::<SqlResult<Vec<Value>>>()?;
            keyed.push((vals, k, r));
        }
        // Stable: ties keep primary-key order. A KILL is seen between the
        // sort's bounded runs.
        crate::sql::budget::sort_by(&mut keyed, |a, b| {
            for (i, (_, desc)) in keys.iter().enumerate() {
                let o = a.0[i].total_cmp(&b.0[i]);
                let o = if *desc { o.reverse() } else { o };
                if o != std::cmp::Ordering::Equal {
                    return o;
                }
            }
            std::cmp::Ordering::Equal
        })?;
        rows = keyed.into_iter().map(|(_, k, r)| (k, r)).collect();
    }
    if let Some(e) = limit {
        let s = Scope::default();
        let mut c = Compiler::new(&s, false);
        match eval_const(&c.compile(e)?, &host)? {
            Value::Int(i) if i >= 0 => rows.truncate(usize::try_from(i).unwrap_or(usize::MAX)),
            _ => return Err(SqlError::parse("LIMIT must be a non-negative integer")),
        }
    }
    Ok(rows)
}

fn single_table(cx: &mut Ctx<'_>, twj: &ast::TableWithJoins) -> SqlResult<(Arc<TableDef>, Scope)> {
    if !twj.joins.is_empty() {
        return Err(SqlError::unsupported("multi-table UPDATE/DELETE"));
    }
    let ast::TableFactor::Table { name, alias, .. } = &twj.relation else {
        return Err(SqlError::unsupported("UPDATE/DELETE of a derived table"));
    };
    let t = table_from_name(cx, name)?;
    let a = alias
        .as_ref()
        .map(|a| ident_name(&a.name))
        .unwrap_or_else(|| t.name.clone());
    let scope = Scope::of_table(&t, &a);
    Ok((t, scope))
}

/// UPDATE.
pub fn update(cx: &mut Ctx<'_>, up: &ast::Update) -> SqlResult<QueryResult> {
    let (t, scope) = single_table(cx, &up.table)?;
    let mut sets = Vec::new();
    for a in &up.assignments {
        let ast::AssignmentTarget::ColumnName(n) = &a.target else {
            return Err(SqlError::unsupported("tuple assignment"));
        };
        let parts = object_parts(n);
        let col = t.require_column(parts.last().map(String::as_str).unwrap_or(""))?;
        let mut c = Compiler::new(&scope, false);
        sets.push((col, c.compile(&a.value)?));
    }
    if up.from.is_some() {
        return Err(SqlError::unsupported("UPDATE … FROM"));
    }
    if up.returning.is_some() || up.output.is_some() || up.or.is_some() || up.settings.is_some() {
        return Err(SqlError::unsupported("this UPDATE clause"));
    }
    let rows = matching_rows(cx, &t, &scope, up.selection.as_ref())?;
    let rows = order_and_limit(cx, &scope, rows, &up.order_by, up.limit.as_ref())?;
    let host_db = cx.session.db.clone();
    let _ = host_db;
    let mut changed = 0u64;
    for (row_no, (key, old)) in (1u64..).zip(rows) {
        crate::sql::budget::tick()?;
        // A cascade of an earlier row may have changed or deleted it.
        let Some(old) = fk_enforce::current(cx, &t, &key, old)? else {
            continue;
        };
        let mut new = old.clone();
        {
            let host = SessionHost::new(cx.session, cx.engine);
            // MySQL evaluates single-table assignments left to right, each
            // seeing the columns the ones before it set (`SET a = a + 1,
            // b = a` gives b the new a) — unlike standard SQL.
            for (col, e) in &sets {
                let v = e.eval(&EvalCtx {
                    row: &new,
                    outer: &[],
                    aggs: &[],
                    matches: &[],
                    funcs: &host,
                })?;
                new[*col] = coerce_to_column(&t.columns[*col], v).map_err(|e| at_row(e, row_no))?;
            }
        }
        if new == old {
            // Matched, not changed: counted only for CLIENT_FOUND_ROWS.
            changed += u64::from(cx.session.found_rows);
            continue;
        }
        rewrite_row(cx, &t, &key, &old, &new)?;
        changed += 1;
    }
    Ok(QueryResult {
        affected_rows: changed,
        ..Default::default()
    })
}

/// DELETE.
pub fn delete(cx: &mut Ctx<'_>, del: &ast::Delete) -> SqlResult<QueryResult> {
    let tables = match &del.from {
        ast::FromTable::WithFromKeyword(v) | ast::FromTable::WithoutKeyword(v) => v,
    };
    let [twj] = tables.as_slice() else {
        return Err(SqlError::unsupported("multi-table DELETE"));
    };
    if !del.tables.is_empty() || del.using.is_some() {
        return Err(SqlError::unsupported("multi-table DELETE"));
    }
    if del.returning.is_some() || del.output.is_some() || del.settings.is_some() {
        return Err(SqlError::unsupported("this DELETE clause"));
    }
    let (t, scope) = single_table(cx, twj)?;
    let rows = matching_rows(cx, &t, &scope, del.selection.as_ref())?;
    let rows = order_and_limit(cx, &scope, rows, &del.order_by, del.limit.as_ref())?;
    let mut n = 0u64;
    for (key, old) in rows {
        crate::sql::budget::tick()?;
        // A cascade of an earlier row (a self-referencing key) may have
        // deleted this one already: not deleted again, not counted.
        let Some(old) = fk_enforce::current(cx, &t, &key, old)? else {
            continue;
        };
        fk_enforce::parent_deleted(cx, &t, &key, &old)?;
        write::delete_row(cx, &t, &key, &old)?;
        n += 1;
    }
    Ok(QueryResult {
        affected_rows: n,
        ..Default::default()
    })
}
