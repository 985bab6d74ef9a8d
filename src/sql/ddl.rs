//! DDL: CREATE/DROP DATABASE, CREATE/DROP TABLE, CREATE/DROP INDEX
//! (and their ALTER TABLE forms); column changes and renames are in
//! [`crate::sql::alter`].
//!
//! Each statement runs in its own transaction. Index DDL on asynchronous,
//! vector and full-text indexes goes through ISCP: CREATE registers a job
//! (new generation), DROP performs the *logical drop* only (metadata gone,
//! job row → Canceling with drop_at) and then waits, bounded, for the
//! runner's cancel queue to finalize the job (see `crate::iscp::drop`). DDL
//! never takes a lock on hidden index tables, so it can never wait on a
//! consumer that waits on it.

use sqlparser::ast::{self as ast, ColumnOption, Statement, TableConstraint};

use crate::catalog::codec::decode_row;
use crate::catalog::schema::coerce_value;
use crate::catalog::{self, ColumnDef, DatabaseDef, IndexDef, IndexKind, TableDef};
use crate::collation::Collation;
use crate::error::{code, SqlError, SqlResult};
use crate::iscp;
use crate::sql::expr::{eval_const, ident_name, object_parts, Compiler, Scope};
use crate::sql::host::SessionHost;
use crate::sql::parse::{IndexSpec, Name, Stmt};
use crate::sql::{Ctx, Engine, SessionState};
use crate::types::{DataType, QueryResult, Value, Warning};

/// Default HNSW connectivity. MatrixOne uses 16; on uniform 128-d data
/// M = 16 reaches only ~0.94 recall@10 even with a wide beam, M = 32 reaches
/// ≥ 0.98 (measured in `tests/iscp_e2e.rs`), so Tributary defaults to 32.
pub const DEFAULT_HNSW_M: usize = 32;
/// Default EF_CONSTRUCTION (as MatrixOne).
pub const DEFAULT_HNSW_EF_CONSTRUCTION: usize = 128;
/// Default EF_SEARCH (as MatrixOne).
pub const DEFAULT_HNSW_EF_SEARCH: usize = 64;

/// Execute a DDL statement (the session has no open transaction).
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
        Stmt::Truncate { table } => crate::sql::truncate::truncate(engine, st, &table),
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
            Statement::AlterTable(at) => crate::sql::alter::alter_table(engine, st, &at),
            Statement::RenameTable(renames) => {
                crate::sql::alter::rename_tables(engine, st, &renames)
            }
            other => Err(SqlError::unsupported(other.to_string())),
        },
        other => Err(SqlError::internal(format!("not DDL: {other:?}"))),
    }
}

/// The last step of an atomic DDL statement's transaction (ALTER TABLE,
/// CREATE INDEX, RENAME TABLE): every write is done, nothing is committed.
/// Fault point [`tributary_fault::points::DDL_BEFORE_COMMIT`] (target: the
/// table), then the statement's interrupt: a KILL up to here rolls the
/// whole statement back and answers 1317.
pub fn before_commit(cx: &Ctx<'_>, table: &str) -> SqlResult<()> {
    let fault = tributary_fault::hit_blocking(
        tributary_fault::points::DDL_BEFORE_COMMIT,
        Some(table),
        cx.session.interrupt.token(),
    );
    cx.txn.check_interrupt()?;
    fault.map(|_| ()).map_err(SqlError::from)
}

/// Right after an atomic DDL statement committed, before what follows
/// the commit (draining dropped jobs, loading new synchronous indexes):
/// fault point [`tributary_fault::points::DDL_AFTER_COMMIT`]. Its outcome
/// is only logged: the statement has taken effect, so it succeeds.
pub fn after_commit(st: &SessionState, table: &str) {
    if let Err(e) = tributary_fault::hit_blocking(
        tributary_fault::points::DDL_AFTER_COMMIT,
        Some(table),
        st.interrupt.token(),
    ) {
        tracing::info!(table, error = %e, "fault after a DDL commit (the statement stands)");
    }
}

/// The end of an atomic DDL statement whose transaction did its work
/// (ALTER TABLE, TRUNCATE TABLE): commit, [`after_commit`], then purge and
/// drain what it dropped ([`finish_drop`]) and load what it created
/// ([`after_create`]).
pub fn commit_and_finish(
    engine: &Engine,
    st: &mut SessionState,
    table: &str,
    r: QueryResult,
    dropped: Vec<Dropped>,
    created: Vec<(iscp::JobKey, iscp::log::JobSpec)>,
) -> SqlResult<QueryResult> {
    engine.commit_open(st)?;
    after_commit(st, table);
    let r = finish_drop(engine, r, dropped)?;
    after_create(engine, created);
    Ok(r)
}

/// Write the entries of synchronous vector / full-text index `ix` for
/// `rows` (primary-key bytes, row values in the table's layout) in the
/// DDL's transaction, checking the statement's interrupt as it goes.
pub fn fill_entries<'r>(
    cx: &mut Ctx<'_>,
    ix: &IndexDef,
    rows: impl Iterator<Item = (&'r [u8], &'r [Value])>,
) -> SqlResult<()> {
    let rows = rows.map(|(k, row)| {
        let vals = ix
            .columns
            .iter()
            .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
            .collect();
        Ok((k, vals))
    });
    fill_entry_values(cx, ix, rows)
}

/// After a CREATE that registered ISCP jobs committed: keep the entry log
/// of every new synchronous vector/full-text index until its first base
/// and load this CN's copy (its entries were written by the CREATE), then
/// wake the runner.
pub fn after_create(engine: &Engine, created: Vec<(iscp::JobKey, iscp::log::JobSpec)>) {
    if created.is_empty() {
        return;
    }
    let ts = engine.storage.latest_ts();
    for (key, job) in created.iter().filter(|(_, j)| j.is_sync_live()) {
        engine.storage.set_consumer_watermark(
            &iscp::consumer::consumer_name(key.job_id),
            job.storage_id,
            0,
        );
        if let Err(e) = engine.iscp.sync_catch_up(key, job, ts, false) {
            tracing::warn!(index = %job.index, error = %e, "loading the new index failed; the first search retries");
        }
    }
    engine.iscp.wake();
}

/// After a DROP committed: purge storage that nobody reads any more and
/// wait (bounded) for dropped ISCP jobs to reach Canceled.
pub fn finish_drop(
    engine: &Engine,
    mut r: QueryResult,
    dropped: Vec<Dropped>,
) -> SqlResult<QueryResult> {
    let mut jobs = Vec::new();
    for d in dropped {
        match d {
            Dropped::Storage(id) => {
                if let Err(e) = engine.storage.purge_table(id) {
                    tracing::warn!(table = id, error = %e, "purge after drop failed; left for GC");
                }
            }
            Dropped::Job(k) => jobs.push(k),
        }
    }
    if !jobs.is_empty() {
        let pending = engine.iscp.await_canceled(&jobs, engine.config.drop_wait);
        for k in pending {
            r.warnings.push(Warning {
                code: 1105,
                message: format!(
                    "index job {} (job_id {}) is dropped durably; its finalization is still pending and will complete in the background",
                    k.job_name, k.job_id
                ),
            });
        }
    }
    Ok(r)
}

/// Something a DROP left to clean up after commit.
pub enum Dropped {
    /// A storage table (base table or synchronous index) to purge.
    Storage(u64),
    /// An ISCP job to drain and finalize.
    Job(iscp::JobKey),
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
    for t in tables {
        drop_one_table(cx, &t, dropped)?;
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
        K::DateTime => DataType::DateTime,
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

fn drop_one_table(cx: &mut Ctx<'_>, t: &TableDef, dropped: &mut Vec<Dropped>) -> SqlResult<()> {
    // Lock the record so concurrent DDL on the table serialises.
    catalog::require_table(cx.txn, &t.db, &t.name, true)?;
    for ix in &t.indexes {
        drop_index_parts(cx, t, ix, dropped)?;
    }
    catalog::delete_table(cx.txn, &t.db, &t.name)?;
    dropped.push(Dropped::Storage(t.id));
    Ok(())
}

/// The part of dropping one index that happens inside the DDL transaction.
pub fn drop_index_parts(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    ix: &IndexDef,
    dropped: &mut Vec<Dropped>,
) -> SqlResult<()> {
    match iscp::JobKey::of(t, ix) {
        Some(key) => {
            iscp::log::mark_canceling(cx.txn, &key)?;
            dropped.push(Dropped::Job(key));
        }
        None => dropped.push(Dropped::Storage(ix.storage_id)),
    }
    Ok(())
}

fn drop_tables(
    cx: &mut Ctx<'_>,
    names: &[Name],
    if_exists: bool,
    dropped: &mut Vec<Dropped>,
) -> SqlResult<QueryResult> {
    let mut missing = Vec::new();
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
            Some(t) => drop_one_table(cx, &t, dropped)?,
            None => missing.push(format!("{db}.{}", n.name)),
        }
    }
    unknown_tables(missing, if_exists)
}

/// The CREATE INDEX statement that re-creates index `ix` of `t` (REINDEX).
pub fn spec_of(t: &TableDef, ix: &IndexDef) -> IndexSpec {
    let mut spec = IndexSpec {
        name: ix.name.clone(),
        table: Name {
            db: Some(t.db.clone()),
            name: t.name.clone(),
        },
        columns: ix
            .columns
            .iter()
            .filter_map(|&c| t.columns.get(c).map(|c| c.name.clone()))
            .collect(),
        is_async: ix.is_async,
        ..Default::default()
    };
    match &ix.kind {
        IndexKind::BTree { unique } => spec.unique = *unique,
        IndexKind::Hnsw {
            op_type,
            m,
            ef_construction,
            ef_search,
        } => {
            spec.using = Some("hnsw".into());
            spec.op_type = Some(op_type.clone());
            spec.m = Some(*m);
            spec.ef_construction = Some(*ef_construction);
            spec.ef_search = Some(*ef_search);
        }
        IndexKind::FullText { parser } => {
            spec.fulltext = true;
            spec.parser = Some(parser.clone());
        }
    }
    spec
}

/// Parse a column type from sqlparser's rendering of it.
///
/// Every accepted type keeps MySQL's range and precision: TINYINT is an
/// 8-bit integer (not a boolean), UNSIGNED is range-checked, DECIMAL keeps
/// its scale. A type this engine cannot hold faithfully is refused (1235).
pub fn parse_type(s: &str) -> SqlResult<DataType> {
    let l = s.trim().to_ascii_lowercase();
    let mut words: Vec<&str> = l.split_whitespace().collect();
    let mut unsigned = false;
    words.retain(|w| match *w {
        "unsigned" => {
            unsigned = true;
            false
        }
        "signed" => false,
        _ => true,
    });
    if words.contains(&"zerofill") {
        return Err(SqlError::unsupported(format!("column type {s}")));
    }
    let l = words.join(" ");
    let (base, arg) = match l.split_once('(') {
        Some((b, rest)) => (
            b.trim().to_string(),
            rest.trim_end_matches(')').trim().to_string(),
        ),
        None => (l.clone(), String::new()),
    };
    let n = || -> SqlResult<u32> {
        arg.split(',')
            .next()
            .unwrap_or("")
            .trim()
            .parse::<u32>()
            .map_err(|_| SqlError::parse(format!("bad type length in {s}")))
    };
    let base = base.trim().to_string();
    let integer = |bits: u8| -> DataType {
        match (bits, unsigned) {
            (32, false) => DataType::Int,
            (64, false) => DataType::BigInt,
            (bits, unsigned) => DataType::Integer { bits, unsigned },
        }
    };
    if unsigned
        && !matches!(
            base.as_str(),
            "tinyint" | "smallint" | "mediumint" | "int" | "integer" | "bigint"
        )
    {
        return Err(SqlError::unsupported(format!("column type {s}")));
    }
    Ok(match base.as_str() {
        // MySQL's BOOL is TINYINT(1): it stores any 8-bit integer.
        "bool" | "boolean" | "tinyint" => integer(8),
        "smallint" => integer(16),
        "mediumint" => integer(24),
        "int" | "integer" => integer(32),
        "bigint" => integer(64),
        // FLOAT(M,D) / DOUBLE(M,D) round what they store to D digits
        // (deprecated in MySQL 8): refused rather than stored unrounded.
        "float" | "real" | "double" | "double precision" if arg.contains(',') => {
            return Err(SqlError::unsupported(format!(
                "column type {s} (FLOAT(M,D) / DOUBLE(M,D)): use DECIMAL(M,D) or a plain FLOAT / DOUBLE"
            )))
        }
        // FLOAT(p): single precision up to p = 24, double above (MySQL).
        "float" if !arg.is_empty() && n()? > 24 => DataType::Double,
        "float" => DataType::Float,
        // REAL is DOUBLE in MySQL (unless REAL_AS_FLOAT, not offered).
        "real" | "double" | "double precision" => DataType::Double,
        "decimal" | "numeric" | "dec" => {
            let mut parts = arg.split(',').map(|p| p.trim());
            let p = match parts.next() {
                None | Some("") => 10,
                Some(x) => x
                    .parse::<u32>()
                    .map_err(|_| SqlError::parse(format!("bad DECIMAL precision in {s}")))?,
            };
            let sc = match parts.next() {
                None => 0,
                Some(x) => x
                    .parse::<u32>()
                    .map_err(|_| SqlError::parse(format!("bad DECIMAL scale in {s}")))?,
            };
            if p == 0 || p > 65 {
                return Err(SqlError::new(
                    1426,
                    format!("Too-big precision {p} specified for '{s}'. Maximum is 65."),
                ));
            }
            if sc > u32::from(crate::types::MAX_DECIMAL_SCALE) {
                return Err(SqlError::new(
                    1425,
                    format!("Too big scale {sc} specified for column '{s}'. Maximum is 30."),
                ));
            }
            if sc > p {
                return Err(SqlError::new(
                    1427,
                    format!("For float(M,D), double(M,D) or decimal(M,D), M must be >= D (column '{s}')."),
                ));
            }
            DataType::Decimal(p as u8, sc as u8)
        }
        "date" => DataType::Date,
        "varchar" | "char" | "character varying" => {
            let len = if arg.is_empty() { 255 } else { n()? };
            if len == 0 || len > 65_535 {
                return Err(SqlError::new(
                    1074,
                    format!("Column length too big for {s} (max = 65535)"),
                ));
            }
            DataType::Varchar(len)
        }
        "text" | "longtext" | "mediumtext" | "tinytext" | "blob" => DataType::Text,
        "json" => DataType::Json,
        "datetime" | "timestamp" => DataType::DateTime,
        "vecf32" | "vecf64" => {
            let d = n()?;
            if d == 0 || d > 65_535 {
                return Err(SqlError::parse(format!(
                    "vector dimension must be 1..65535 in {s}"
                )));
            }
            if base == "vecf32" {
                DataType::VecF32(d)
            } else {
                DataType::VecF64(d)
            }
        }
        _ => return Err(SqlError::unsupported(format!("column type {s}"))),
    })
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

/// Text columns (VARCHAR, TEXT) have a collation; JSON compares as JSON.
pub fn has_collation(ty: &DataType) -> bool {
    matches!(ty, DataType::Varchar(_) | DataType::Text)
}

/// The column names and key-part lengths of an index's column list as
/// sqlparser reads it (`a(10)` comes as a call of `a` with one number).
pub fn key_parts(cols: &[ast::IndexColumn]) -> (Vec<String>, Vec<Option<usize>>) {
    let mut names = Vec::with_capacity(cols.len());
    let mut prefixes = Vec::with_capacity(cols.len());
    for c in cols {
        let (name, len) = match &c.column.expr {
            ast::Expr::Identifier(i) => (ident_name(i), None),
            ast::Expr::Function(f) => {
                let len = match &f.args {
                    ast::FunctionArguments::List(l) => match l.args.as_slice() {
                        [ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                            ast::Expr::Value(v),
                        ))] => match &v.value {
                            ast::Value::Number(n, _) => n.parse::<usize>().ok(),
                            _ => None,
                        },
                        _ => None,
                    },
                    _ => None,
                };
                match (len, f.name.0.as_slice()) {
                    (Some(len), [ast::ObjectNamePart::Identifier(i)]) => (ident_name(i), Some(len)),
                    _ => (f.to_string().to_ascii_lowercase(), None),
                }
            }
            other => (other.to_string().to_ascii_lowercase(), None),
        };
        names.push(name);
        prefixes.push(len);
    }
    if prefixes.iter().all(Option::is_none) {
        prefixes.clear();
    }
    (names, prefixes)
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

/// MySQL's ER_WRONG_SUB_KEY.
const WRONG_SUB_KEY: u16 = 1089;

/// Check the key-part lengths of an index on `cols` (MySQL's rules: string
/// columns only, not 0, not longer than the column, none on FULLTEXT or
/// vector indexes). A UNIQUE or PRIMARY key on a prefix is refused (1235):
/// its uniqueness would be the prefix's, which the index does not hold. A
/// plain key on a prefix holds the whole values: it answers exactly as a
/// prefix key does (the length only bounds a key's size in InnoDB).
fn check_prefixes(
    t: &TableDef,
    cols: &[usize],
    prefixes: &[Option<usize>],
    unique: bool,
    plain: bool,
) -> SqlResult<()> {
    for (&c, len) in cols.iter().zip(prefixes) {
        let Some(len) = *len else { continue };
        let col = &t.columns[c];
        if len == 0 {
            return Err(SqlError::new(
                1391,
                format!("Key part '{}' length cannot be 0", col.name),
            ));
        }
        let fits = match col.ty {
            DataType::Varchar(n) => len <= n as usize,
            DataType::Text => true,
            _ => false,
        };
        if !fits || !plain {
            return Err(SqlError::new(
                WRONG_SUB_KEY,
                "Incorrect prefix key; the used key part isn't a string, the used length is \
                 longer than the key part, or the storage engine doesn't support unique prefix keys",
            ));
        }
        if unique {
            return Err(SqlError::unsupported(format!(
                "a UNIQUE or PRIMARY KEY on a column prefix ({}({len})): use the whole column",
                col.name
            )));
        }
    }
    Ok(())
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

/// A column as declared (CREATE TABLE, ALTER TABLE ADD / MODIFY / CHANGE).
pub struct ColumnDecl {
    pub col: ColumnDef,
    /// `PRIMARY KEY` was written on the column.
    pub primary: bool,
    /// `UNIQUE` was written on the column.
    pub unique: bool,
    /// `COLLATE c` was written on the column (without it a text column
    /// takes the table's default collation).
    pub collation: Option<Collation>,
}

/// Read a column definition: its type and options (NULL / NOT NULL,
/// DEFAULT, PRIMARY KEY, UNIQUE, AUTO_INCREMENT; COMMENT and CHARACTER SET
/// are accepted and ignored; COLLATE only as `utf8mb4_bin`, what every
/// comparison is). Anything else is refused (1235).
pub fn column_decl<'o>(
    host: &SessionHost<'_>,
    name: String,
    data_type: &ast::DataType,
    options: impl IntoIterator<Item = &'o ColumnOption>,
) -> SqlResult<ColumnDecl> {
    let type_text = data_type.to_string();
    let ty = parse_type(&type_text).map_err(|mut e| {
        // MySQL names the column in its DECIMAL(M,D) limit errors.
        if matches!(e.code, 1425..=1427) {
            e.message = e
                .message
                .replace(&format!("'{type_text}'"), &format!("'{name}'"));
        }
        e
    })?;
    let mut d = ColumnDecl {
        col: ColumnDef {
            name,
            ty,
            nullable: true,
            default: None,
            auto_increment: false,
            collation: Default::default(),
        },
        primary: false,
        unique: false,
        collation: None,
    };
    for o in options {
        match o {
            ColumnOption::Null => d.col.nullable = true,
            ColumnOption::NotNull => d.col.nullable = false,
            ColumnOption::Default(e) => {
                let scope = Scope::default();
                let mut comp = Compiler::new(&scope, false);
                let v = eval_const(&comp.compile(e)?, host)?;
                d.col.default = if v.is_null() {
                    None
                } else {
                    Some(coerce_value(&d.col.ty, v, &d.col.name)?)
                };
            }
            ColumnOption::PrimaryKey(_) => {
                d.primary = true;
                d.col.nullable = false;
            }
            ColumnOption::Unique(_) => d.unique = true,
            ColumnOption::DialectSpecific(toks) => {
                let s: String = toks.iter().map(|t| t.to_string()).collect();
                if s.eq_ignore_ascii_case("auto_increment") {
                    d.col.auto_increment = true;
                } else {
                    return Err(SqlError::unsupported(format!("column option {s}")));
                }
            }
            ColumnOption::CharacterSet(cs) => {
                crate::sql::vars::require_stored_charset(&cs.to_string())?
            }
            ColumnOption::Collation(c) => d.collation = Some(Collation::lookup(&c.to_string())?),
            ColumnOption::Comment(_) => {}
            other => return Err(SqlError::unsupported(format!("column option {other}"))),
        }
    }
    if has_collation(&d.col.ty) {
        d.col.collation = d.collation.unwrap_or_default();
    }
    if d.col.auto_increment && !d.col.ty.is_integer() {
        return Err(SqlError::new(
            1063,
            format!("Incorrect column specifier for column '{}'", d.col.name),
        ));
    }
    Ok(d)
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
    let host = SessionHost::new(cx.session, cx.engine);
    for (i, c) in ct.columns.iter().enumerate() {
        let cname = ident_name(&c.name);
        if t.column_index(&cname).is_some() {
            return Err(SqlError::new(
                1060,
                format!("Duplicate column name '{cname}'"),
            ));
        }
        let decl = column_decl(
            &host,
            cname,
            &c.data_type,
            c.options.iter().map(|o| &o.option),
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
        if spec.name.is_empty() {
            spec.name = spec
                .columns
                .first()
                .cloned()
                .unwrap_or_else(|| "idx".into());
        }
        spec.table = Name {
            db: Some(t.db.clone()),
            name: t.name.clone(),
        };
        create_index(cx, &spec, created)?;
    }
    Ok(QueryResult::default())
}

/// Build an index definition from a spec (validates columns and options).
pub fn index_def(cx: &mut Ctx<'_>, t: &TableDef, spec: &IndexSpec) -> SqlResult<IndexDef> {
    let cols: Vec<usize> = spec
        .columns
        .iter()
        .map(|c| {
            t.column_index(c).ok_or_else(|| {
                SqlError::new(
                    code::KEY_COLUMN_DOES_NOT_EXIST,
                    format!("Key column '{c}' doesn't exist in table"),
                )
            })
        })
        .collect::<SqlResult<_>>()?;
    let using = spec.using.as_deref().unwrap_or("");
    check_prefixes(
        t,
        &cols,
        &spec.prefixes,
        spec.unique,
        !spec.fulltext && (using.is_empty() || using == "btree"),
    )?;
    let kind = if using == "hnsw" {
        let [c] = cols.as_slice() else {
            return Err(SqlError::wrong_args(
                "an HNSW index covers exactly one vector column",
            ));
        };
        if t.columns[*c].ty.vector_dim().is_none() {
            return Err(SqlError::wrong_args(format!(
                "HNSW index needs a VECF32/VECF64 column; '{}' is {}",
                t.columns[*c].name,
                t.columns[*c].ty.sql_name()
            )));
        }
        let op_type = spec
            .op_type
            .clone()
            .unwrap_or_else(|| "vector_l2_ops".into());
        tributary_index::Metric::from_op_type(&op_type)
            .map_err(|e| SqlError::wrong_args(e.to_string()))?;
        let m = spec.m.unwrap_or(DEFAULT_HNSW_M);
        let efc = spec.ef_construction.unwrap_or(DEFAULT_HNSW_EF_CONSTRUCTION);
        let efs = spec.ef_search.unwrap_or(DEFAULT_HNSW_EF_SEARCH);
        for (what, v, lo, hi) in [
            ("M", m, 2, 256),
            ("EF_CONSTRUCTION", efc, 1, 10_000),
            ("EF_SEARCH", efs, 1, 10_000),
        ] {
            if v < lo || v > hi {
                return Err(SqlError::wrong_args(format!(
                    "{what} must be between {lo} and {hi}, got {v}"
                )));
            }
        }
        IndexKind::Hnsw {
            op_type,
            m,
            ef_construction: efc,
            ef_search: efs,
        }
    } else if spec.fulltext {
        for &c in &cols {
            if !matches!(t.columns[c].ty, DataType::Varchar(_) | DataType::Text) {
                return Err(SqlError::wrong_args(format!(
                    "FULLTEXT index needs VARCHAR/TEXT columns; '{}' is {}",
                    t.columns[c].name,
                    t.columns[c].ty.sql_name()
                )));
            }
        }
        let parser = spec.parser.clone().unwrap_or_else(|| "default".into());
        tributary_index::Parser::from_name(&parser)
            .map_err(|e| SqlError::wrong_args(e.to_string()))?;
        IndexKind::FullText { parser }
    } else if using.is_empty() || using == "btree" {
        for &c in &cols {
            if t.columns[c].ty.vector_dim().is_some() {
                return Err(SqlError::wrong_args(format!(
                    "vector column '{}' needs an HNSW index (USING HNSW)",
                    t.columns[c].name
                )));
            }
        }
        IndexKind::BTree {
            unique: spec.unique,
        }
    } else {
        return Err(SqlError::unsupported(format!("index algorithm {using}")));
    };
    let needs_job = spec.is_async || !matches!(kind, IndexKind::BTree { .. });
    if spec.unique && needs_job {
        return Err(SqlError::unsupported("UNIQUE on an asynchronous index"));
    }
    let storage_id = new_object_id(cx)?;
    let job_id = if needs_job {
        Some(
            cx.engine
                .ids
                .durable_id(&cx.engine.storage, "iscp_job", &cx.session.interrupt)?,
        )
    } else {
        None
    };
    Ok(IndexDef {
        name: spec.name.clone(),
        storage_id,
        kind,
        columns: cols,
        is_async: spec.is_async,
        job_id,
    })
}

/// A fresh table / index-storage id for the running DDL statement: its
/// wait for the durable write ends with 1317 / 3024 when the statement is
/// interrupted ([`catalog::IdAllocator::object_id`]).
pub fn new_object_id(cx: &Ctx<'_>) -> SqlResult<u64> {
    cx.engine
        .ids
        .object_id(&cx.engine.storage, &cx.session.interrupt)
}

/// Rows an index build writes between two checks of the statement's
/// interrupt (KILL stops a CREATE INDEX, which then rolls back).
const INTERRUPT_EVERY: usize = 1024;

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

/// Every [`INTERRUPT_EVERY`] rows of an index build: the fault point
/// (released by a KILL) and the statement's interrupt.
fn build_checkpoint(cx: &Ctx<'_>, index: &str) -> SqlResult<()> {
    let fault = tributary_fault::hit_blocking(
        tributary_fault::points::DDL_INDEX_BUILD,
        Some(index),
        cx.session.interrupt.token(),
    );
    cx.txn.check_interrupt()?;
    // The statement's own look too: a killed build is then a failing
    // statement, whose transaction is torn down after the reply.
    crate::sql::budget::check()?;
    fault.map(|_| ()).map_err(SqlError::from)
}

/// Write the entries of synchronous vector / full-text index `ix` for
/// `rows` (primary-key bytes, the indexed columns' values), checking the
/// statement's interrupt as it goes.
fn fill_entry_values<'r>(
    cx: &mut Ctx<'_>,
    ix: &IndexDef,
    rows: impl Iterator<Item = SqlResult<(&'r [u8], Vec<Value>)>>,
) -> SqlResult<()> {
    for (i, r) in rows.enumerate() {
        if i.is_multiple_of(INTERRUPT_EVERY) {
            build_checkpoint(cx, &ix.name)?;
        }
        let (k, vals) = r?;
        cx.txn.put(
            ix.storage_id,
            &iscp::live::entry_key(k),
            iscp::live::encode_entry(&vals),
        )?;
    }
    Ok(())
}

/// Write B-tree index `ix`'s entries for `rows` (primary-key bytes, row
/// values) into its storage table; 1062 on a duplicate in a unique index.
/// Checks the statement's interrupt as it goes.
pub fn fill_btree<K, R>(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    ix: &IndexDef,
    rows: impl Iterator<Item = SqlResult<(K, R)>>,
) -> SqlResult<()>
where
    K: AsRef<[u8]>,
    R: AsRef<[Value]>,
{
    let Some(target) = crate::catalog::entries::Target::of(t, ix) else {
        return Err(SqlError::internal("synchronous index must be a B-tree"));
    };
    for (i, r) in rows.enumerate() {
        if i.is_multiple_of(INTERRUPT_EVERY) {
            build_checkpoint(cx, &ix.name)?;
        }
        let (k, row) = r?;
        let vals = crate::catalog::entries::entry_values(row.as_ref(), &ix.columns);
        crate::catalog::entries::put(cx.txn, &target, &vals, k.as_ref())?;
    }
    Ok(())
}

/// Every committed row of `t` as of now — not as of the DDL transaction's
/// snapshot. The caller holds `t`'s catalog record exclusively, so every
/// writer of `t` has committed (writers hold it shared) and no new one can
/// start: the latest state is the whole truth a synchronous index must be
/// built from. (A snapshot read would miss the rows of writers the DDL
/// waited for.)
pub fn current_rows(cx: &mut Ctx<'_>, t: &TableDef) -> SqlResult<Vec<(Vec<u8>, Vec<u8>)>> {
    // Left to the statement's teardown when a KILL stops the read.
    let mut out = crate::sql::budget::Grave(Vec::new());
    for_each_current_page(cx, t, |_, page| {
        out.extend(page.drain(..));
        Ok(())
    })?;
    Ok(out.take())
}

/// Rows a page of [`for_each_current_page`] holds (a multiple of
/// [`INTERRUPT_EVERY`], so a build's checkpoints keep their spacing).
const PAGE: usize = 4096;
const _: () = assert!(PAGE.is_multiple_of(INTERRUPT_EVERY));

/// [`current_rows`] a page at a time: `f` gets each page of committed
/// rows (primary-key bytes, encoded row) in key order and may take them.
/// An index build writes each page's entries before the next is read, so
/// it never holds the table's rows at once — nor frees them all, before
/// it can answer a KILL. Checks the statement's interrupt between pages.
pub fn for_each_current_page(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    mut f: impl FnMut(&mut Ctx<'_>, &mut Vec<(Vec<u8>, Vec<u8>)>) -> SqlResult<()>,
) -> SqlResult<()> {
    let storage = cx.engine.storage.clone();
    let ts = storage.latest_ts();
    let mut after: Option<Vec<u8>> = None;
    loop {
        cx.txn.check_interrupt()?;
        let mut page = storage.snapshot_scan(t.id, ts, after.as_deref(), PAGE)?;
        let more = page.len() == PAGE;
        after = page.last().map(|(k, _)| k.clone());
        f(cx, &mut page)?;
        if !more {
            return Ok(());
        }
    }
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
    drop_index_parts(cx, &t, &ix, dropped)?;
    catalog::put_table(cx.txn, &t)?;
    Ok(QueryResult::default())
}
