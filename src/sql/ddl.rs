//! DDL: CREATE/DROP DATABASE, CREATE/DROP TABLE, CREATE/DROP INDEX
//! (and their ALTER TABLE forms); column changes and renames are in
//! [`crate::sql::alter`], and what those share with TRUNCATE (column
//! declarations, index definitions and builds, the steps around a DDL
//! commit) in [`crate::sql::schema`].
//!
//! Each statement runs in its own transaction. Index DDL on asynchronous,
//! vector and full-text indexes goes through ISCP: CREATE registers a job
//! (new generation), DROP performs the *logical drop* only (metadata gone,
//! job row → Canceling with drop_at) and then waits, bounded, for the
//! runner's cancel queue to finalize the job (see `crate::iscp::drop`). DDL
//! never takes a lock on hidden index tables, so it can never wait on a
//! consumer that waits on it.

use sqlparser::ast::{self as ast, Statement, TableConstraint};

use crate::catalog::codec::decode_row;
use crate::catalog::{self, ColumnDef, DatabaseDef, TableDef};
use crate::collation::Collation;
use crate::error::{code, SqlError, SqlResult};
use crate::iscp;
use crate::sql::check_constraint;
use crate::sql::expr::{ident_name, object_parts};
use crate::sql::fk;
use crate::sql::host::SessionHost;
use crate::sql::parse::{IndexSpec, Name, Stmt};
use crate::sql::schema::{
    after_commit, after_create, before_commit, check_prefixes, column_decl, drop_index_parts,
    fill_btree, fill_entry_values, finish_drop, for_each_current_page, has_collation, index_def,
    key_parts, new_object_id, Dropped,
};
use crate::sql::{Ctx, Engine, SessionState};
use crate::types::{DataType, QueryResult, Warning};

/// Execute a DDL statement (the session has no open transaction): all
/// but ALTER / RENAME TABLE and TRUNCATE, which [`crate::sql`] hands to
/// their own modules.
pub fn execute(engine: &Engine, st: &mut SessionState, s: Stmt) -> SqlResult<QueryResult> {
    match s {
        Stmt::CreateDatabase {
            name,
            if_not_exists,
        } => engine.in_txn(st, |cx| create_database(cx, &name, if_not_exists)),
        Stmt::DropDatabase { name, if_exists } => {
            let mut dropped = Vec::new();
            let r = engine.in_txn(st, |cx| drop_database(cx, &name, if_exists, &mut dropped))?;
            // The drop is durable before its jobs are awaited (with
            // autocommit off `in_txn` leaves the transaction open).
            engine.commit_open(st)?;
            finish_drop(engine, r, dropped)
        }
        Stmt::DropTable { names, if_exists } => {
            let mut dropped = Vec::new();
            let r = engine.in_txn(st, |cx| drop_tables(cx, &names, if_exists, &mut dropped))?;
            // The drop is durable before its jobs are awaited (with
            // autocommit off `in_txn` leaves the transaction open).
            engine.commit_open(st)?;
            finish_drop(engine, r, dropped)
        }
        Stmt::CreateIndex(spec) => {
            let mut created = Vec::new();
            let r = engine.in_txn(st, |cx| {
                let r = create_index(cx, &spec, &mut created)?;
                before_commit(cx, &spec.table.name)?;
                Ok(r)
            })?;
            // Committed before the index is loaded, with autocommit off
            // too (`in_txn` leaves the transaction open): the load below
            // then builds it whatever `autocommit` is, not the first search.
            engine.commit_open(st)?;
            after_commit(st, &spec.table.name);
            after_create(engine, created);
            Ok(r)
        }
        Stmt::DropIndex {
            name,
            table,
            if_exists,
        } => {
            let mut dropped = Vec::new();
            let r = engine.in_txn(st, |cx| {
                drop_index(cx, &name, &table, if_exists, &mut dropped)
            })?;
            // The drop is durable before its jobs are awaited (with
            // autocommit off `in_txn` leaves the transaction open).
            engine.commit_open(st)?;
            finish_drop(engine, r, dropped)
        }
        Stmt::CreateTable(a, indexes) => {
            let Statement::CreateTable(ct) = *a else {
                return Err(SqlError::internal("CREATE TABLE expected"));
            };
            let mut created = Vec::new();
            let r = engine.in_txn(st, |cx| {
                create_table(cx, &ct, indexes.clone(), &mut created)
            })?;
            engine.commit_open(st)?;
            after_create(engine, created);
            Ok(r)
        }
        Stmt::Ast(a) => match a.into_statement() {
            Statement::CreateTable(ct) => {
                let mut created = Vec::new();
                let r = engine.in_txn(st, |cx| create_table(cx, &ct, Vec::new(), &mut created))?;
                engine.commit_open(st)?;
                after_create(engine, created);
                Ok(r)
            }
            Statement::CreateView(cv) => engine.in_txn(st, |cx| create_view(cx, &cv)),
            Statement::Drop {
                object_type: ast::ObjectType::View,
                if_exists,
                names,
                ..
            } => engine.in_txn(st, |cx| drop_views(cx, &names, if_exists)),
            other => Err(SqlError::unsupported(other.to_string())),
        },
        other => Err(SqlError::internal(format!("not DDL: {other:?}"))),
    }
}

fn create_database(cx: &mut Ctx<'_>, name: &str, if_not_exists: bool) -> SqlResult<QueryResult> {
    if catalog::get_database(cx.txn, name)?.is_some() {
        if if_not_exists {
            return Ok(QueryResult::default());
        }
        return Err(SqlError::new(
            code::DB_CREATE_EXISTS,
            format!("Can't create database '{name}'; database exists"),
        ));
    }
    let id = new_object_id(cx)?;
    catalog::put_database(
        cx.txn,
        &DatabaseDef {
            id,
            name: name.to_string(),
        },
    )?;
    Ok(QueryResult {
        affected_rows: 1,
        ..Default::default()
    })
}

fn drop_database(
    cx: &mut Ctx<'_>,
    name: &str,
    if_exists: bool,
    dropped: &mut Vec<Dropped>,
) -> SqlResult<QueryResult> {
    if catalog::is_system_db(name) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!("Access denied: {name} cannot be dropped"),
        ));
    }
    if catalog::get_database(cx.txn, name)?.is_none() {
        if if_exists {
            return Ok(QueryResult::default());
        }
        return Err(SqlError::new(
            code::DB_DROP_EXISTS,
            format!("Can't drop database '{name}'; database doesn't exist"),
        ));
    }
    let tables = catalog::list_tables(cx.txn, name)?;
    let n = tables.len() as u64;
    let dropping: Vec<(String, String)> = tables
        .iter()
        .map(|t| (t.db.clone(), t.name.clone()))
        .collect();
    for t in tables {
        drop_one_table(cx, &t, &dropping, dropped)?;
    }
    catalog::delete_database(cx.txn, name)?;
    if cx.session.db.as_deref() == Some(name) {
        cx.session.db = None;
    }
    Ok(QueryResult {
        affected_rows: n,
        ..Default::default()
    })
}

/// The SQL type a result column of `kind` is stored as by CREATE TABLE …
/// AS SELECT; kinds without a faithful column type are refused.
fn type_of_kind(kind: crate::types::ColumnKind, name: &str) -> SqlResult<DataType> {
    use crate::types::ColumnKind as K;
    Ok(match kind {
        K::Int => DataType::BigInt,
        K::Float => DataType::Double,
        K::Text => DataType::Text,
        K::DateTime(Some(fsp)) => DataType::DateTimeFsp(fsp),
        // An expression whose precision is not tracked: 6 keeps every value
        // exactly (MySQL would take the expression's own fsp).
        K::DateTime(None) => DataType::DateTimeFsp(crate::types::MAX_DATETIME_FSP),
        K::Date => DataType::Date,
        K::Decimal { precision, scale } if precision <= crate::types::MAX_DECIMAL_PRECISION => {
            DataType::Decimal(precision, scale)
        }
        K::Decimal { scale, .. } if scale <= crate::types::MAX_DECIMAL_SCALE => {
            // SUM / AVG results: the widest DECIMAL we store; a value that
            // does not fit is refused on insert (1264), never rounded.
            DataType::Decimal(crate::types::MAX_DECIMAL_PRECISION, scale)
        }
        other => {
            return Err(SqlError::unsupported(format!(
                "CREATE TABLE … AS SELECT of column '{name}' ({other:?})"
            )))
        }
    })
}

/// CREATE TABLE … AS SELECT: the columns take the query's names and
/// types; the rows are inserted in the same transaction.
fn create_table_as(
    cx: &mut Ctx<'_>,
    db: String,
    name: String,
    q: &ast::Query,
) -> SqlResult<QueryResult> {
    let res = crate::sql::exec::query(cx, q)?;
    // The new columns keep the query's collations (as MySQL's do).
    let colls = crate::sql::plan::out_collations(
        &crate::sql::plan::bind::Planner::new(cx).plan_query(q, None)?,
    );
    let mut t = empty_table(cx, db, name)?;
    for (i, c) in res.columns.iter().enumerate() {
        if t.column_index(&c.name).is_some() {
            return Err(SqlError::new(
                1060,
                format!("Duplicate column name '{}'", c.name),
            ));
        }
        t.columns.push(ColumnDef {
            name: c.name.clone(),
            ty: type_of_kind(c.kind, &c.name)?,
            nullable: true,
            default: None,
            auto_increment: false,
            collation: colls.get(i).copied().flatten().unwrap_or_default(),
        });
    }
    catalog::put_table(cx.txn, &t)?;
    let n = res.rows.len() as u64;
    for row in res.rows {
        crate::sql::dml::insert_row(cx, &t, row, false)?;
    }
    Ok(QueryResult {
        affected_rows: n,
        ..Default::default()
    })
}

/// CREATE [OR REPLACE] VIEW: the query is planned now (so a view over a
/// missing table or column is refused at once) and stored as text.
fn create_view(cx: &mut Ctx<'_>, cv: &ast::CreateView) -> SqlResult<QueryResult> {
    if cv.materialized || cv.temporary || cv.or_alter || cv.to.is_some() {
        return Err(SqlError::unsupported("this kind of view"));
    }
    let (db, name) = new_object_name(cx, &cv.name, "views")?;
    let columns: Vec<String> = cv.columns.iter().map(|c| ident_name(&c.name)).collect();
    // Plan in the view's database so its unqualified names mean the same
    // thing whoever reads it later.
    let saved = cx.session.db.replace(db.clone());
    let node = crate::sql::plan::bind::Planner::for_view_body(cx).plan_query(&cv.query, None);
    cx.session.db = saved;
    let out = node?.columns();
    if !columns.is_empty() && columns.len() != out.len() {
        return Err(SqlError::new(
            1353,
            "In definition of view, derived table or common table expression, SELECT list and column names list have different column counts",
        ));
    }
    let mut cols = Vec::new();
    for (i, c) in out.iter().enumerate() {
        let n = columns.get(i).cloned().unwrap_or_else(|| c.name.clone());
        if cols
            .iter()
            .any(|x: &ColumnDef| x.name.eq_ignore_ascii_case(&n))
        {
            return Err(SqlError::new(1060, format!("Duplicate column name '{n}'")));
        }
        cols.push(ColumnDef {
            name: n.clone(),
            ty: type_of_kind(c.kind, &n).unwrap_or(DataType::Text),
            nullable: true,
            default: None,
            auto_increment: false,
            collation: Default::default(),
        });
    }
    let id = match catalog::get_table(cx.txn, &db, &name, true)? {
        Some(old) if old.view.is_some() && cv.or_replace => old.id,
        Some(old) if old.view.is_none() && cv.or_replace => {
            return Err(SqlError::new(1347, format!("'{db}.{name}' is not VIEW")))
        }
        Some(_) if cv.if_not_exists => return Ok(QueryResult::default()),
        Some(_) => {
            return Err(SqlError::new(
                code::TABLE_EXISTS,
                format!("Table '{name}' already exists"),
            ))
        }
        None => new_object_id(cx)?,
    };
    let t = TableDef {
        id,
        db,
        name,
        columns: cols,
        pk: Vec::new(),
        indexes: Vec::new(),
        comment: String::new(),
        view: Some(crate::catalog::schema::ViewDef {
            query: cv.query.to_string(),
            columns,
        }),
        collation: Default::default(),
        foreign_keys: Vec::new(),
        referenced_by: Vec::new(),
        checks: Vec::new(),
    };
    catalog::put_table(cx.txn, &t)?;
    Ok(QueryResult::default())
}

/// DROP VIEW [IF EXISTS] v, …: every name must be a view.
fn drop_views(
    cx: &mut Ctx<'_>,
    names: &[ast::ObjectName],
    if_exists: bool,
) -> SqlResult<QueryResult> {
    let mut missing = Vec::new();
    for n in names {
        let parts = object_parts(n);
        let (db, name) = match parts.as_slice() {
            [t] => (cx.session.require_db()?.to_string(), t.clone()),
            [d, t] => (d.clone(), t.clone()),
            _ => return Err(SqlError::parse(format!("bad view name {n}"))),
        };
        match catalog::get_table(cx.txn, &db, &name, true)? {
            Some(t) if t.view.is_some() => catalog::delete_table(cx.txn, &db, &name)?,
            Some(_) => return Err(SqlError::new(1347, format!("'{db}.{name}' is not VIEW"))),
            None => missing.push(format!("{db}.{name}")),
        }
    }
    unknown_tables(missing, if_exists)
}

/// DROP TABLE / VIEW of names that do not exist: error 1051 naming them
/// all, or with IF EXISTS one warning each.
fn unknown_tables(missing: Vec<String>, if_exists: bool) -> SqlResult<QueryResult> {
    let mut r = QueryResult::default();
    if !missing.is_empty() {
        if !if_exists {
            return Err(SqlError::new(
                1051,
                format!("Unknown table '{}'", missing.join(",")),
            ));
        }
        for m in missing {
            r.warnings.push(Warning {
                code: 1051,
                message: format!("Unknown table '{m}'"),
            });
        }
    }
    Ok(r)
}

/// Drop table `t`, one of `dropping` (the statement's tables: keys among
/// them do not hold the drop back).
fn drop_one_table(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    dropping: &[(String, String)],
    dropped: &mut Vec<Dropped>,
) -> SqlResult<()> {
    // Lock the record so concurrent DDL on the table serialises (and
    // read it again: an earlier table of the statement may have changed
    // its foreign-key references).
    let t = &catalog::require_table(cx.txn, &t.db, &t.name, true)?;
    fk::before_drop(cx, t, dropping)?;
    for ix in &t.indexes {
        drop_index_parts(cx, t, ix, dropped)?;
    }
    catalog::delete_table(cx.txn, &t.db, &t.name)?;
    dropped.push(Dropped::Storage(t.id));
    Ok(())
}

fn drop_tables(
    cx: &mut Ctx<'_>,
    names: &[Name],
    if_exists: bool,
    dropped: &mut Vec<Dropped>,
) -> SqlResult<QueryResult> {
    let mut missing = Vec::new();
    let dropping = names
        .iter()
        .map(|n| {
            Ok((
                cx.session.db_for(n.db.as_deref())?.to_string(),
                n.name.clone(),
            ))
        })
        .collect::<SqlResult<Vec<_>>>()?;
    for n in names {
        let db = cx.session.db_for(n.db.as_deref())?.to_string();
        if catalog::is_system_db(&db) {
            return Err(SqlError::new(
                code::SPECIFIC_ACCESS_DENIED,
                format!("Access denied: {db} tables cannot be dropped"),
            ));
        }
        match catalog::get_table(cx.txn, &db, &n.name, true)? {
            // DROP TABLE does not drop a view (MySQL: unknown table).
            Some(t) if t.view.is_some() => missing.push(format!("{db}.{}", n.name)),
            Some(t) => drop_one_table(cx, &t, &dropping, dropped)?,
            None => missing.push(format!("{db}.{}", n.name)),
        }
    }
    unknown_tables(missing, if_exists)
}

/// The options after CREATE TABLE's column list. Those that change what
/// the table holds are honoured (`AUTO_INCREMENT = n`: returned, the first
/// value generated) or refused (another engine, a character set or
/// collation Tributary does not keep, MERGE / federated options); storage
/// hints of InnoDB (ROW_FORMAT, KEY_BLOCK_SIZE, STATS_*, COMPRESSION,
/// TABLESPACE, …) change no answer and are accepted.
fn table_options(opts: &ast::CreateTableOptions) -> SqlResult<(Option<i64>, Option<Collation>)> {
    let list = match opts {
        ast::CreateTableOptions::None => return Ok((None, None)),
        ast::CreateTableOptions::Plain(l) => l,
        other => return Err(SqlError::unsupported(format!("table options {other}"))),
    };
    let mut start = None;
    let mut collation = None;
    for o in list {
        match o {
            ast::SqlOption::NamedParenthesizedList(l)
                if l.key.value.eq_ignore_ascii_case("engine") =>
            {
                let engine = l.name.as_ref().map(|n| n.value.to_ascii_lowercase());
                if engine.as_deref() != Some("innodb") || !l.values.is_empty() {
                    return Err(SqlError::unsupported(format!(
                        "{o}: tables are transactional, as InnoDB's"
                    )));
                }
            }
            ast::SqlOption::KeyValue { key, value } => {
                let text = value.to_string();
                match key.to_string().to_ascii_uppercase().as_str() {
                    "DEFAULT CHARSET" | "CHARSET" | "DEFAULT CHARACTER SET" | "CHARACTER SET" => {
                        crate::sql::vars::require_stored_charset(&text)?
                    }
                    "DEFAULT COLLATE" | "COLLATE" => collation = Some(Collation::lookup(&text)?),
                    "AUTO_INCREMENT" => {
                        let n = text
                            .parse::<i64>()
                            .ok()
                            .filter(|n| *n >= 0)
                            .ok_or_else(|| SqlError::parse(format!("bad AUTO_INCREMENT {text}")))?;
                        start = Some(n.max(1));
                    }
                    "ROW_FORMAT" | "KEY_BLOCK_SIZE" | "PACK_KEYS" | "STATS_AUTO_RECALC"
                    | "STATS_PERSISTENT" | "STATS_SAMPLE_PAGES" | "DELAY_KEY_WRITE"
                    | "COMPRESSION" | "MAX_ROWS" | "MIN_ROWS" | "AUTOEXTEND_SIZE"
                    | "AVG_ROW_LENGTH" | "CHECKSUM" => {}
                    _ => return Err(SqlError::unsupported(format!("table option {o}"))),
                }
            }
            ast::SqlOption::Comment(_) | ast::SqlOption::TableSpace(_) => {}
            other => return Err(SqlError::unsupported(format!("table option {other}"))),
        }
    }
    Ok((start, collation))
}

fn column_positions(t: &TableDef, names: &[String]) -> SqlResult<Vec<usize>> {
    names
        .iter()
        .map(|name| {
            t.column_index(name).ok_or_else(|| {
                SqlError::new(
                    code::KEY_COLUMN_DOES_NOT_EXIST,
                    format!("Key column '{name}' doesn't exist in table"),
                )
            })
        })
        .collect()
}

/// A new table with a fresh id and nothing in it yet.
fn empty_table(cx: &Ctx<'_>, db: String, name: String) -> SqlResult<TableDef> {
    let id = new_object_id(cx)?;
    // Only an ISCP job reads a user table's change log, and it registers
    // as its consumer before it reads: no other writes pay for one. (A
    // durable write: interruptible, as the id's; a KILL leaves the unused
    // id on demand, which nobody reads.)
    cx.engine
        .ids
        .durably(&cx.engine.storage, &cx.session.interrupt, move |s| {
            s.set_change_log_on_demand(id, true).map_err(SqlError::from)
        })?;
    Ok(TableDef {
        id,
        db,
        name,
        columns: Vec::new(),
        pk: Vec::new(),
        indexes: Vec::new(),
        comment: String::new(),
        view: None,
        collation: Default::default(),
        foreign_keys: Vec::new(),
        referenced_by: Vec::new(),
        checks: Vec::new(),
    })
}

/// `(database, name)` of an object a CREATE makes: the database must
/// exist and not be `mo_catalog` (1227).
fn new_object_name(
    cx: &mut Ctx<'_>,
    n: &ast::ObjectName,
    what: &str,
) -> SqlResult<(String, String)> {
    let parts = object_parts(n);
    let (db, name) = match parts.as_slice() {
        [t] => (cx.session.require_db()?.to_string(), t.clone()),
        [d, t] => (d.clone(), t.clone()),
        _ => return Err(SqlError::parse(format!("bad name {n}"))),
    };
    if catalog::is_system_db(&db) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!("Access denied: cannot create {what} in {db}"),
        ));
    }
    catalog::require_database(cx.txn, &db)?;
    Ok((db, name))
}

fn create_table(
    cx: &mut Ctx<'_>,
    ct: &ast::CreateTable,
    inline_indexes: Vec<IndexSpec>,
    created: &mut Vec<(iscp::JobKey, iscp::log::JobSpec)>,
) -> SqlResult<QueryResult> {
    let (db, name) = new_object_name(cx, &ct.name, "tables")?;
    if ct.like.is_some() {
        return Err(SqlError::unsupported("CREATE TABLE … LIKE"));
    }
    if ct.query.is_some() && !ct.columns.is_empty() {
        return Err(SqlError::unsupported(
            "CREATE TABLE with both column definitions and AS SELECT",
        ));
    }
    if catalog::get_table(cx.txn, &db, &name, true)?.is_some() {
        if ct.if_not_exists {
            return Ok(QueryResult::default());
        }
        return Err(SqlError::new(
            code::TABLE_EXISTS,
            format!("Table '{name}' already exists"),
        ));
    }
    if let Some(q) = &ct.query {
        return create_table_as(cx, db, name, q);
    }
    if ct.temporary {
        return Err(SqlError::unsupported(
            "CREATE TEMPORARY TABLE (a session's private table)",
        ));
    }
    let (auto_increment_start, default_collation) = table_options(&ct.table_options)?;
    let mut t = empty_table(cx, db, name)?;
    t.collation = default_collation.unwrap_or_default();
    let mut unique_cols = Vec::new();
    let mut fk_specs = Vec::new();
    let mut check_specs = Vec::new();
    let host = SessionHost::new(cx.session, cx.engine);
    for (i, c) in ct.columns.iter().enumerate() {
        let cname = ident_name(&c.name);
        if t.column_index(&cname).is_some() {
            return Err(SqlError::new(
                1060,
                format!("Duplicate column name '{cname}'"),
            ));
        }
        for o in &c.options {
            match &o.option {
                ast::ColumnOption::ForeignKey(f) => fk_specs.push(fk::spec(f, Some(&cname))?),
                ast::ColumnOption::Check(ck) => {
                    check_specs.push(check_constraint::spec(ck, Some(&cname), o.name.as_ref())?)
                }
                _ => {}
            }
        }
        let decl = column_decl(
            &host,
            cname,
            &c.data_type,
            c.options.iter().map(|o| &o.option).filter(|o| {
                !matches!(
                    o,
                    ast::ColumnOption::ForeignKey(_) | ast::ColumnOption::Check(_)
                )
            }),
        )?;
        if decl.primary {
            if !t.pk.is_empty() {
                return Err(SqlError::new(
                    code::MULTIPLE_PRI_KEY,
                    "Multiple primary key defined",
                ));
            }
            t.pk = vec![i];
        }
        if decl.unique {
            unique_cols.push(i);
        }
        let mut col = decl.col;
        if decl.collation.is_none() && has_collation(&col.ty) {
            col.collation = t.collation;
        }
        t.columns.push(col);
    }
    if t.columns.is_empty() {
        return Err(SqlError::new(1113, "A table must have at least 1 column"));
    }
    let mut pending_indexes: Vec<IndexSpec> = inline_indexes;
    for c in &ct.constraints {
        match c {
            TableConstraint::PrimaryKey(pk) => {
                if !t.pk.is_empty() {
                    return Err(SqlError::new(
                        code::MULTIPLE_PRI_KEY,
                        "Multiple primary key defined",
                    ));
                }
                let (names, prefixes) = key_parts(&pk.columns);
                t.pk = column_positions(&t, &names)?;
                check_prefixes(&t, &t.pk, &prefixes, true, true)?;
                for &p in &t.pk {
                    t.columns[p].nullable = false;
                }
            }
            TableConstraint::Unique(u) => {
                let (names, prefixes) = key_parts(&u.columns);
                let cols = column_positions(&t, &names)?;
                pending_indexes.push(IndexSpec {
                    // MySQL: the index name, else the CONSTRAINT name.
                    name: u
                        .index_name
                        .as_ref()
                        .or(u.name.as_ref())
                        .map(ident_name)
                        .unwrap_or_default(),
                    columns: cols.iter().map(|&c| t.columns[c].name.clone()).collect(),
                    unique: true,
                    prefixes,
                    ..Default::default()
                });
            }
            TableConstraint::Index(ix) => {
                let (names, prefixes) = key_parts(&ix.columns);
                let cols = column_positions(&t, &names)?;
                pending_indexes.push(IndexSpec {
                    name: ix.name.as_ref().map(ident_name).unwrap_or_default(),
                    columns: cols.iter().map(|&c| t.columns[c].name.clone()).collect(),
                    prefixes,
                    ..Default::default()
                });
            }
            TableConstraint::FulltextOrSpatial(ft) if ft.fulltext => {
                let (names, prefixes) = key_parts(&ft.columns);
                let cols = column_positions(&t, &names)?;
                pending_indexes.push(IndexSpec {
                    prefixes,
                    name: ft
                        .opt_index_name
                        .as_ref()
                        .map(ident_name)
                        .unwrap_or_default(),
                    columns: cols.iter().map(|&c| t.columns[c].name.clone()).collect(),
                    fulltext: true,
                    ..Default::default()
                });
            }
            TableConstraint::ForeignKey(f) => fk_specs.push(fk::spec(f, None)?),
            TableConstraint::Check(ck) => check_specs.push(check_constraint::spec(ck, None, None)?),
            other => return Err(SqlError::unsupported(format!("table constraint {other}"))),
        }
    }
    for i in unique_cols {
        pending_indexes.push(IndexSpec {
            name: t.columns[i].name.clone(),
            columns: vec![t.columns[i].name.clone()],
            unique: true,
            ..Default::default()
        });
    }
    for spec in &mut pending_indexes {
        if spec.name.is_empty() {
            spec.name = spec
                .columns
                .first()
                .cloned()
                .unwrap_or_else(|| "idx".into());
        }
    }
    // The index InnoDB gives each key none of the table's starts with.
    let me = Name {
        db: Some(t.db.clone()),
        name: t.name.clone(),
    };
    if !check_specs.is_empty() {
        let taken = check_constraint::names_in(cx, &t.db, None)?;
        check_constraint::add(&mut t, check_specs, &taken)?;
    }
    let fk_indexes = fk::needed_indexes(&me, &fk::pk_names(&t), &pending_indexes, &fk_specs);
    pending_indexes.extend(fk_indexes);
    catalog::put_table(cx.txn, &t)?;
    if let Some(n) = auto_increment_start {
        // The counter's first value (dml::next_auto_increment reads it).
        cx.txn.put(
            catalog::SYS_AUTOINC,
            &t.id.to_be_bytes(),
            n.to_be_bytes().to_vec(),
        )?;
    }
    for mut spec in pending_indexes {
        spec.table = me.clone();
        create_index(cx, &spec, created)?;
    }
    // Its foreign keys (checked against their parents, which learn of
    // them), and the keys of tables created before it that name it.
    let mut t = catalog::require_table(cx.txn, &t.db, &t.name, true)?;
    fk::add(cx, &mut t, &fk_specs)?;
    check_constraint::check_fk_actions(&t)?;
    fk::adopt(cx, &mut t)?;
    if !t.foreign_keys.is_empty() || !t.referenced_by.is_empty() {
        catalog::put_table(cx.txn, &t)?;
    }
    Ok(QueryResult::default())
}

fn create_index(
    cx: &mut Ctx<'_>,
    spec: &IndexSpec,
    created: &mut Vec<(iscp::JobKey, iscp::log::JobSpec)>,
) -> SqlResult<QueryResult> {
    let db = cx.session.db_for(spec.table.db.as_deref())?.to_string();
    if catalog::is_system_db(&db) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!("Access denied: cannot index {db} tables"),
        ));
    }
    let mut t = catalog::require_table(cx.txn, &db, &spec.table.name, true)?;
    if t.view.is_some() {
        return Err(SqlError::new(
            1347,
            format!("'{db}.{}' is not BASE TABLE", t.name),
        ));
    }
    if t.index(&spec.name).is_some() || spec.name.eq_ignore_ascii_case("primary") {
        return Err(SqlError::new(
            code::DUP_KEYNAME,
            format!("Duplicate key name '{}'", spec.name),
        ));
    }
    let ix = index_def(cx, &t, spec)?;
    if ix.job_id.is_some() {
        // Its job and searches read the table's change log from now on:
        // a durable write, which may wait for the data file to take a
        // large transaction; interruptible (a KILL leaves the table's
        // change log kept, which costs only its writes).
        let table_id = t.id;
        cx.engine
            .ids
            .durably(&cx.engine.storage, &cx.session.interrupt, move |s| {
                s.set_change_log_on_demand(table_id, false)
                    .map_err(SqlError::from)
            })?;
        let key = iscp::log::register_job(cx.txn, &t, &ix)?;
        let job = iscp::log::JobSpec::of(&t, &ix);
        if job.is_sync_live() {
            // Synchronous vector/full-text: one entry per current row, in
            // this transaction (the index is complete when CREATE commits).
            for_each_current_page(cx, &t, |cx, page| {
                let rows = page.iter().map(|(k, v)| {
                    iscp::live::cols_of(v, &ix.columns).map(|vals| (k.as_slice(), vals))
                });
                fill_entry_values(cx, &ix, rows)
            })?;
        }
        created.push((key, job));
    } else {
        // Synchronous B-tree: build from the current rows in this txn.
        for_each_current_page(cx, &t, |cx, page| {
            let rows = page.iter().map(|(k, v)| {
                decode_row(v)
                    .map(|row| (k.as_slice(), row))
                    .map_err(|e| SqlError::internal(e.to_string()))
            });
            fill_btree(cx, &t, &ix, rows)
        })?;
    }
    t.indexes.push(ix);
    catalog::put_table(cx.txn, &t)?;
    Ok(QueryResult::default())
}

fn drop_index(
    cx: &mut Ctx<'_>,
    name: &str,
    table: &Name,
    if_exists: bool,
    dropped: &mut Vec<Dropped>,
) -> SqlResult<QueryResult> {
    let db = cx.session.db_for(table.db.as_deref())?.to_string();
    let mut t = catalog::require_table(cx.txn, &db, &table.name, true)?;
    let Some(pos) = t
        .indexes
        .iter()
        .position(|i| i.name.eq_ignore_ascii_case(name))
    else {
        let msg = format!("Can't DROP '{name}'; check that column/key exists");
        if if_exists {
            return Ok(QueryResult {
                warnings: vec![Warning {
                    code: code::CANT_DROP_FIELD_OR_KEY,
                    message: msg,
                }],
                ..Default::default()
            });
        }
        return Err(SqlError::new(code::CANT_DROP_FIELD_OR_KEY, msg));
    };
    let ix = t.indexes.remove(pos);
    fk::check_index_drop(cx, &t, &ix.name)?;
    drop_index_parts(cx, &t, &ix, dropped)?;
    catalog::put_table(cx.txn, &t)?;
    Ok(QueryResult::default())
}
