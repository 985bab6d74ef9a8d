//! `LOAD DATA [LOCAL] INFILE`: rows read from a file (server-side, under
//! `secure_file_priv`) or from the client (LOCAL, through the connection's
//! [`crate::sql::load_spec::LocalFiles`]) and written through the DML row path
//! ([`dml::prepare_row`], [`dml::store_row`]): defaults, AUTO_INCREMENT,
//! coercion, UNIQUE checks, foreign keys, synchronous indexes; ASYNC
//! indexes get the rows from the change log like any write.
//!
//! Owns what a line means for a row, as MySQL: a short line (1261) or a
//! long one (1262) is an error under strict mode and a warning otherwise;
//! a bad value is an error naming the row (the line after IGNORE n
//! LINES); IGNORE (and LOCAL, which implies it) skips a bad or duplicate
//! row with a warning — Tributary never stores an adjusted value, so a
//! row MySQL would store with a 0 is skipped (docs/COMPATIBILITY.md).
//! The file is streamed (one buffer, one row at a time), the statement
//! runs in one transaction (InnoDB's), checks KILL at every row and
//! shows its progress as its State in the process list. Never reads a
//! file outside `secure_file_priv` and never commits.

use std::collections::BTreeMap;
use std::io::Read;

use sqlparser::ast;

use crate::catalog::TableDef;
use crate::error::{code, sqlstate_for, SqlError, SqlResult};
use crate::sql::dml::{self, OnDuplicate};
use crate::sql::expr::{CExpr, Compiler, EvalCtx, FunctionHost, Scope};
use crate::sql::host::LazyHost;
use crate::sql::load_format::{Reader, Row};
use crate::sql::load_spec::{self, LoadSpec, OnDup, Target};
use crate::sql::Ctx;
use crate::types::{QueryResult, Value};

/// Rows between two updates of the process list's State.
const PROGRESS_EVERY: u64 = 4096;

/// Where field `i` of a line goes.
enum Dest {
    Column(usize),
    Var(String),
}

/// How the file's bytes become text.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Charset {
    Utf8,
    Latin1,
}

/// Run a LOAD DATA statement in the caller's transaction.
pub fn execute(cx: &mut Ctx<'_>, spec: &LoadSpec) -> SqlResult<QueryResult> {
    let mut loader = Loader::open(cx, spec)?;
    loader.rows(cx, None)?;
    Ok(loader.finish(cx))
}

/// A load in progress: the file open, the counts so far. [`execute`]
/// runs it whole; `tributary_load_commit_rows` runs it in batches, each
/// in a transaction of its own (`mod.rs`).
pub struct Loader {
    table: String,
    db: Option<String>,
    /// The table as the load began (each batch checks it is unchanged).
    t: std::sync::Arc<TableDef>,
    dests: Vec<Dest>,
    sets: Vec<(usize, Option<CExpr>)>,
    defaults: Vec<Value>,
    on_dup: OnDuplicate,
    lenient: bool,
    charset: Charset,
    reader: Reader<Box<dyn Read>>,
    line: Row,
    vars: BTreeMap<String, Value>,
    n: Counts,
    first_id: Option<u64>,
}

impl Loader {
    /// Resolve the table and its targets, open the file, skip IGNORE n
    /// LINES.
    pub fn open(cx: &mut Ctx<'_>, spec: &LoadSpec) -> SqlResult<Loader> {
        let t = table(cx, spec.db.as_deref(), &spec.table)?;
        let charset = match spec.charset.as_deref() {
            None | Some("utf8mb4" | "utf8" | "utf8mb3" | "binary" | "ascii" | "default") => {
                Charset::Utf8
            }
            Some("latin1") => Charset::Latin1,
            Some(other) => {
                return Err(SqlError::unsupported(format!(
                    "LOAD DATA CHARACTER SET {other}"
                )))
            }
        };
        let dests: Vec<Dest> = if spec.targets.is_empty() {
            (0..t.columns.len()).map(Dest::Column).collect()
        } else {
            spec.targets
                .iter()
                .map(|tg| match tg {
                    Target::Column(c) => t.require_column(c).map(Dest::Column),
                    Target::Var(v) => Ok(Dest::Var(v.clone())),
                })
                .collect::<SqlResult<_>>()?
        };
        let sets = compile_sets(&t, spec)?;
        let on_dup = match spec.on_dup {
            OnDup::Error => OnDuplicate::Error,
            OnDup::Ignore => OnDuplicate::Skip,
            OnDup::Replace => OnDuplicate::Replace,
        };
        // IGNORE (and LOCAL without REPLACE: `load_spec`) skips a row with
        // a bad value, as MySQL 8 and MariaDB.
        let lenient = on_dup == OnDuplicate::Skip;
        let src = open_source(cx, spec)?;
        let mut reader = Reader::new(src, spec.format.clone());
        reader.skip_lines(spec.ignore_lines).map_err(read_error)?;
        cx.session.process.set_progress("Loading: 0 rows".into());
        let defaults = t
            .columns
            .iter()
            .map(|c| c.default.clone().unwrap_or(Value::Null))
            .collect();
        Ok(Loader {
            table: spec.table.clone(),
            db: spec.db.clone(),
            t,
            dests,
            sets,
            defaults,
            on_dup,
            lenient,
            charset,
            reader,
            line: Row::default(),
            vars: BTreeMap::new(),
            n: Counts::default(),
            first_id: None,
        })
    }

    /// Load up to `limit` more lines (all with `None`) in `cx`'s
    /// transaction; whether the file is done.
    pub fn rows(&mut self, cx: &mut Ctx<'_>, limit: Option<u64>) -> SqlResult<bool> {
        let t = self.t.clone();
        if limit.is_some() {
            // A batch in a new transaction: the table must be the one the
            // load began with (its metadata lock is taken again).
            let now = table(cx, self.db.as_deref(), &self.table)?;
            if now.id != t.id || now.columns.len() != t.columns.len() {
                return Err(SqlError::new(
                    1412,
                    "Table definition has changed, please retry transaction",
                ));
            }
        }
        let mut done = 0u64;
        while limit.is_none_or(|l| done < l) {
            if !self.reader.next_row(&mut self.line).map_err(read_error)? {
                return Ok(true);
            }
            done += 1;
            crate::sql::budget::tick()?;
            let n = &mut self.n;
            n.records += 1;
            let row_no = n.records;
            if row_no.is_multiple_of(PROGRESS_EVERY) {
                cx.session
                    .process
                    .set_progress(format!("Loading: {row_no} rows"));
            }
            let built = build_row(
                cx,
                &t,
                &self.line,
                &self.dests,
                &self.sets,
                &self.defaults,
                &mut self.vars,
                self.charset,
                n,
            )
            .and_then(|row| dml::prepare_row(cx, &t, row))
            .map_err(|e| at_row(e, row_no));
            let (row, generated) = match built {
                Ok(r) => r,
                Err(e) if self.lenient && is_data_error(e.code) => {
                    n.warn(e.code, e.message)?;
                    n.skipped += 1;
                    continue;
                }
                Err(e) => return Err(e),
            };
            match dml::store_row(cx, &t, row, self.on_dup)? {
                Ok(deleted) => {
                    n.inserted += 1;
                    n.deleted += deleted;
                    self.first_id = self.first_id.or(generated);
                }
                Err(w) => {
                    n.warn(w.code, w.message)?;
                    n.skipped += 1;
                }
            }
        }
        Ok(false)
    }

    /// The statement's result; the `@var` targets keep the last line's
    /// values, as in MySQL.
    pub fn finish(self, cx: &mut Ctx<'_>) -> QueryResult {
        for (k, v) in self.vars {
            cx.session.user_vars.insert(k, v);
        }
        if let Some(id) = self.first_id {
            cx.session.last_insert_id = id;
        }
        let n = self.n;
        cx.session
            .process
            .set_progress(format!("Loaded: {} rows", n.records));
        QueryResult {
            // As MySQL: REPLACE counts the rows it deleted too.
            affected_rows: n.inserted + n.deleted,
            last_insert_id: cx.session.last_insert_id,
            info: Some(format!(
                "Records: {}  Deleted: {}  Skipped: {}  Warnings: {}",
                n.records, n.deleted, n.skipped, n.warnings
            )),
            ..Default::default()
        }
    }
}

/// The table a load writes (its metadata lock taken in `cx`'s
/// transaction).
fn table(cx: &mut Ctx<'_>, db: Option<&str>, name: &str) -> SqlResult<std::sync::Arc<TableDef>> {
    let mut parts = Vec::new();
    if let Some(db) = db {
        parts.push(ast::Ident::new(db));
    }
    parts.push(ast::Ident::new(name));
    dml::table_from_name(cx, &ast::ObjectName::from(parts))
}

#[derive(Default)]
struct Counts {
    records: u64,
    inserted: u64,
    deleted: u64,
    skipped: u64,
    warnings: u64,
}

impl Counts {
    /// Report a warning (an error under strict mode: [`crate::warnings`]).
    fn warn(&mut self, code: u16, message: String) -> SqlResult<()> {
        crate::warnings::note(code, message)?;
        self.warnings += 1;
        Ok(())
    }
}

/// The `SET col = expr` assignments, compiled over the table's columns
/// (`None`: the column's default).
fn compile_sets(t: &TableDef, spec: &LoadSpec) -> SqlResult<Vec<(usize, Option<CExpr>)>> {
    let scope = Scope::of_table(t, &t.name);
    spec.set
        .iter()
        .map(|(col, e)| {
            let i = t.require_column(col)?;
            let ce = match e {
                Some(e) => Some(Compiler::new(&scope, false).compile(e)?),
                None => None,
            };
            Ok((i, ce))
        })
        .collect()
}

/// The row a line gives, in table column order (not yet coerced).
#[allow(clippy::too_many_arguments)]
fn build_row(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    line: &Row,
    dests: &[Dest],
    sets: &[(usize, Option<CExpr>)],
    defaults: &[Value],
    vars: &mut BTreeMap<String, Value>,
    charset: Charset,
    n: &mut Counts,
) -> SqlResult<Vec<Value>> {
    let mut row = defaults.to_vec();
    for (i, d) in dests.iter().enumerate() {
        let v = if i < line.fields.len() {
            match line.field(i) {
                None => Value::Null,
                Some(bytes) => Value::Text(decode(bytes, charset, t, d)?),
            }
        } else {
            match d {
                Dest::Column(c) => defaults[*c].clone(),
                Dest::Var(_) => Value::Null,
            }
        };
        match d {
            Dest::Column(c) => row[*c] = v,
            Dest::Var(name) => {
                vars.insert(name.clone(), v);
            }
        }
    }
    let row_no = n.records;
    if line.fields.len() < dests.len() {
        n.warn(
            code::WARN_TOO_FEW_RECORDS,
            format!("Row {row_no} doesn't contain data for all columns"),
        )?;
    } else if line.fields.len() > dests.len() {
        n.warn(
            code::WARN_TOO_MANY_RECORDS,
            format!(
                "Row {row_no} was truncated; it contained more data than there were input columns"
            ),
        )?;
    }
    if !sets.is_empty() {
        let inner = LazyHost::new(cx.session, cx.engine);
        let host = VarsHost {
            vars,
            inner: &inner,
        };
        for (col, e) in sets {
            let v = match e {
                None => defaults[*col].clone(),
                Some(e) => e.eval(&EvalCtx {
                    row: &row,
                    outer: &[],
                    aggs: &[],
                    matches: &[],
                    funcs: &host,
                })?,
            };
            row[*col] = v;
        }
    }
    Ok(row)
}

/// A field's text: UTF-8 (bad bytes: 1366, as MySQL's strict mode) or
/// Latin-1.
fn decode(bytes: &[u8], charset: Charset, t: &TableDef, d: &Dest) -> SqlResult<String> {
    match charset {
        Charset::Latin1 => Ok(bytes.iter().map(|&b| char::from(b)).collect()),
        Charset::Utf8 => match std::str::from_utf8(bytes) {
            Ok(s) => Ok(s.to_string()),
            Err(e) => {
                let bad: String = bytes[e.valid_up_to()..]
                    .iter()
                    .take(6)
                    .map(|b| format!("\\x{b:02X}"))
                    .collect();
                let what = match d {
                    Dest::Column(c) => t.columns[*c].name.clone(),
                    Dest::Var(v) => format!("@{v}"),
                };
                Err(SqlError::new(
                    1366,
                    format!("Incorrect string value: '{bad}' for column '{what}'"),
                ))
            }
        },
    }
}

/// `@v` from the load's own variables (assigned per line), every other
/// session function from the session.
struct VarsHost<'a> {
    vars: &'a BTreeMap<String, Value>,
    inner: &'a dyn FunctionHost,
}

impl FunctionHost for VarsHost<'_> {
    fn call(&self, name: &str, args: &[Value]) -> Option<SqlResult<Value>> {
        if name == "@" {
            if let Some(Value::Text(n)) = args.first() {
                if let Some(v) = self.vars.get(n) {
                    return Some(Ok(v.clone()));
                }
            }
        }
        self.inner.call(name, args)
    }
}

/// An error about a value, naming the line it came from (MySQL's "at row
/// n": the n-th line after IGNORE n LINES).
fn at_row(e: SqlError, row_no: u64) -> SqlError {
    if let Some(head) = e.message.strip_suffix(" at row 1") {
        return SqlError::new(e.code, format!("{head} at row {row_no}"));
    }
    if e.message.contains(" for column ") && !e.message.contains(" at row ") {
        return SqlError::new(e.code, format!("{} at row {row_no}", e.message));
    }
    e
}

/// Whether `code` is about a row's data (IGNORE skips the row with it as
/// a warning), not about the statement or the server.
fn is_data_error(code: u16) -> bool {
    matches!(sqlstate_for(code).get(..2), Some("22" | "23"))
        || matches!(code, 1048 | 1264 | 1265 | 1292 | 1366 | 1406 | 1525 | 3140)
}

fn read_error(e: std::io::Error) -> SqlError {
    if let Some(inner) = e.get_ref().and_then(|i| i.downcast_ref::<SqlError>()) {
        return inner.clone();
    }
    SqlError::new(
        code::FILE_NOT_FOUND,
        format!("Error reading the file of LOAD DATA: {e}"),
    )
}

/// The file: the client's (LOCAL), or the server's under
/// `secure_file_priv`.
fn open_source(cx: &mut Ctx<'_>, spec: &LoadSpec) -> SqlResult<Box<dyn Read>> {
    if spec.local {
        let on = cx
            .engine
            .globals
            .snapshot()
            .get("local_infile")
            .is_some_and(|v| v == "ON");
        if !on {
            return Err(SqlError::new(
                code::LOCAL_INFILE_DISABLED,
                "Loading local data is disabled; this must be enabled on both the client and server sides",
            ));
        }
        let Some(files) = load_spec::local_files() else {
            return Err(SqlError::new(
                code::NOT_ALLOWED_COMMAND,
                "The used command is not allowed with this MySQL version",
            ));
        };
        return files.open(&spec.file);
    }
    let refused = || {
        SqlError::new(
            code::OPTION_PREVENTS_STATEMENT,
            "The MySQL server is running with the --secure-file-priv option so it cannot execute this statement",
        )
    };
    let Some(dir) = cx.engine.config.secure_file_priv.as_ref() else {
        return Err(refused());
    };
    let path = std::path::Path::new(&spec.file);
    let path = if path.is_relative() {
        dir.join(path)
    } else {
        path.to_path_buf()
    };
    let not_found = |e: std::io::Error| {
        SqlError::new(
            code::FILE_NOT_FOUND,
            format!(
                "File '{}' not found (OS errno {} - {e})",
                path.display(),
                e.raw_os_error().unwrap_or(0)
            ),
        )
    };
    let dir = dir.canonicalize().map_err(|_| refused())?;
    let real = path.canonicalize().map_err(not_found)?;
    if !real.starts_with(&dir) {
        return Err(refused());
    }
    let f = std::fs::File::open(&real).map_err(not_found)?;
    Ok(Box::new(f))
}
