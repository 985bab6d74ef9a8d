//! The DDL helpers CREATE / DROP ([`crate::sql::ddl`]), ALTER / RENAME
//! ([`crate::sql::alter`]) and TRUNCATE ([`crate::sql::truncate`]) share:
//! column declarations and key parts, index definitions and their
//! initial fill, the steps around an atomic DDL statement's commit
//! (fault points, draining what it dropped, loading what it created), and
//! the HNSW defaults.
//!
//! Never: runs a statement of its own or names a statement module — it
//! sits a level below all three (`tests/layering.rs`), so they share it
//! without naming each other.

use sqlparser::ast::{self as ast, ColumnOption};

use crate::catalog::schema::coerce_value;
use crate::catalog::{ColumnDef, IndexDef, IndexKind, TableDef};
use crate::collation::Collation;
use crate::error::{code, SqlError, SqlResult};
use crate::iscp;
use crate::sql::expr::{eval_const, ident_name, Compiler, Scope};
use crate::sql::host::SessionHost;
use crate::sql::parse::{IndexSpec, Name};
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

/// Write the entries of synchronous vector / full-text index `ix` for
/// `rows` (primary-key bytes, the indexed columns' values), checking the
/// statement's interrupt as it goes.
pub fn fill_entry_values<'r>(
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
            if p == 0 {
                // MySQL says "too big" for a zero precision too.
                return Err(SqlError::new(
                    1426,
                    format!("Too-big precision {p} specified for '{s}'. Maximum is 65."),
                ));
            }
            crate::sql::expr::check_decimal_type(p, sc, s)?;
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
        "text" | "longtext" | "mediumtext" | "tinytext" => DataType::Text,
        // BINARY [(n)] (n defaults to 1), VARBINARY(n): MySQL's limits
        // (255 and 65 535 bytes); 0 is allowed, as MySQL allows it.
        "binary" => {
            let len = if arg.is_empty() { 1 } else { n()? };
            if len > 255 {
                return Err(SqlError::new(
                    1074,
                    format!("Column length too big for column '{s}' (max = 255); use BLOB or TEXT instead"),
                ));
            }
            DataType::Binary(len)
        }
        "varbinary" => {
            if arg.is_empty() {
                return Err(SqlError::parse(format!("VARBINARY needs a length: {s}")));
            }
            let len = n()?;
            if len > 65_535 {
                return Err(SqlError::new(
                    1074,
                    format!("Column length too big for column '{s}' (max = 65535); use BLOB or TEXT instead"),
                ));
            }
            DataType::VarBinary(len)
        }
        "tinyblob" => DataType::Blob(1),
        "mediumblob" => DataType::Blob(3),
        "longblob" => DataType::Blob(4),
        // BLOB(n): the smallest BLOB type that holds n bytes (MySQL).
        "blob" if !arg.is_empty() => {
            let len = u64::from(n()?);
            DataType::Blob(match len {
                0..=255 => 1,
                256..=65_535 => 2,
                65_536..=16_777_215 => 3,
                _ => 4,
            })
        }
        "blob" => DataType::Blob(2),
        "json" => DataType::Json,
        "datetime" | "timestamp" => DataType::DateTimeFsp(crate::sql::expr::fsp_of(&arg, s)?),
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

/// MySQL's ER_WRONG_SUB_KEY.
const WRONG_SUB_KEY: u16 = 1089;

/// Check the key-part lengths of an index on `cols` (MySQL's rules: text
/// and binary-string columns only, not 0, not longer than the column, none on FULLTEXT or
/// vector indexes). A UNIQUE or PRIMARY key on a prefix is refused (1235):
/// its uniqueness would be the prefix's, which the index does not hold. A
/// plain key on a prefix holds the whole values: it answers exactly as a
/// prefix key does (the length only bounds a key's size in InnoDB).
pub fn check_prefixes(
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
            DataType::Varchar(n) | DataType::Binary(n) | DataType::VarBinary(n) => {
                len <= n as usize
            }
            DataType::Text | DataType::Blob(_) => true,
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

/// A fresh table / index-storage id for the running DDL statement: its
/// wait for the durable write ends with 1317 / 3024 when the statement is
/// interrupted ([`crate::catalog::IdAllocator::object_id`]).
pub fn new_object_id(cx: &Ctx<'_>) -> SqlResult<u64> {
    cx.engine
        .ids
        .object_id(&cx.engine.storage, &cx.session.interrupt)
}

/// Rows an index build writes between two checks of the statement's
/// interrupt (KILL stops a CREATE INDEX, which then rolls back).
const INTERRUPT_EVERY: usize = 1024;

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

/// Rows a page of [`for_each_current_page`] holds (a multiple of
/// [`INTERRUPT_EVERY`], so a build's checkpoints keep their spacing).
const PAGE: usize = 4096;
const _: () = assert!(PAGE.is_multiple_of(INTERRUPT_EVERY));
