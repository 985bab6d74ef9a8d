//! SHOW …, DESCRIBE and EXPLAIN: result sets about the schema, the session
//! and query plans. Never writes.

use crate::catalog::information_schema::{column_facts, PRIVILEGES};
use crate::catalog::{self, IndexKind, TableDef};
use crate::error::{SqlError, SqlResult};
use crate::sql::parse::{Name, Stmt};
use crate::sql::{Ctx, Engine, SessionState};
use crate::types::{Column, ColumnKind, QueryResult, Value};

fn text_cols(names: &[&str]) -> Vec<Column> {
    names
        .iter()
        .map(|n| Column {
            name: n.to_string(),
            kind: ColumnKind::Text,
        })
        .collect()
}

fn rs(names: &[&str], rows: Vec<Vec<Value>>) -> QueryResult {
    QueryResult {
        columns: text_cols(names),
        rows,
        ..Default::default()
    }
}

fn t(s: impl Into<String>) -> Value {
    Value::Text(s.into())
}

fn table(cx: &mut Ctx<'_>, n: &Name) -> SqlResult<TableDef> {
    let db = cx.session.db_for(n.db.as_deref())?.to_string();
    catalog::require_database(cx.txn, &db)?;
    catalog::require_table(cx.txn, &db, &n.name, false)
}

/// SHOW DATABASES
pub fn databases(cx: &mut Ctx<'_>) -> SqlResult<QueryResult> {
    let rows = catalog::list_databases(cx.txn)?
        .into_iter()
        .map(|d| vec![t(d.name)])
        .collect();
    Ok(rs(&["Database"], rows))
}

/// SHOW \[FULL\] TABLES
pub fn tables(cx: &mut Ctx<'_>, db: Option<String>, full: bool) -> SqlResult<QueryResult> {
    let db = match db {
        Some(d) => d,
        None => cx.session.require_db()?.to_string(),
    };
    catalog::require_database(cx.txn, &db)?;
    let system = catalog::is_system_db(&db);
    let rows = catalog::list_tables(cx.txn, &db)?
        .into_iter()
        .map(|x| {
            let kind = match (&x.view, system) {
                (Some(_), _) => "VIEW",
                (None, true) => "SYSTEM VIEW",
                (None, false) => "BASE TABLE",
            };
            let mut row = vec![t(x.name)];
            if full {
                row.push(t(kind));
            }
            row
        })
        .collect();
    let name = format!("Tables_in_{db}");
    if full {
        Ok(rs(&[&name, "Table_type"], rows))
    } else {
        Ok(rs(&[&name], rows))
    }
}

/// SHOW INDEX's `Index_params` of an index kind.
fn index_params(kind: &IndexKind) -> String {
    match kind {
        IndexKind::Hnsw {
            op_type,
            m,
            ef_construction,
            ef_search,
        } => format!(
            "op_type={op_type} m={m} ef_construction={ef_construction} ef_search={ef_search}"
        ),
        IndexKind::FullText { parser } => format!("parser={parser}"),
        IndexKind::BTree { .. } => String::new(),
    }
}

/// SHOW INDEX FROM t: MySQL's columns (Index_type is BTREE, HNSW or
/// FULLTEXT), then Tributary's `Async` and `Index_params`.
pub fn index(cx: &mut Ctx<'_>, n: &Name) -> SqlResult<QueryResult> {
    let td = table(cx, n)?;
    let mut rows = Vec::new();
    for ic in td.index_columns() {
        let (asy, params) = match ic.index {
            None => (false, String::new()),
            Some(ix) => (ix.is_async, index_params(&ix.kind)),
        };
        let mut row = vec![t(td.name.clone()), Value::Int(i64::from(!ic.unique))];
        row.extend(ic.shared_fields());
        row.extend([
            t(""),
            t(""),
            t("YES"),
            Value::Null,
            t(if asy { "YES" } else { "NO" }),
            t(params),
        ]);
        rows.push(row);
    }
    let mut r = rs(
        &[
            "Table",
            "Non_unique",
            "Key_name",
            "Seq_in_index",
            "Column_name",
            "Collation",
            "Cardinality",
            "Sub_part",
            "Packed",
            "Null",
            "Index_type",
            "Comment",
            "Index_comment",
            "Visible",
            "Expression",
            "Async",
            "Index_params",
        ],
        rows,
    );
    for i in [1, 3, 6, 7] {
        r.columns[i].kind = ColumnKind::Int;
    }
    Ok(r)
}

/// The CREATE TABLE text of a table.
pub fn create_table_sql(td: &TableDef) -> String {
    let mut lines = Vec::new();
    for c in &td.columns {
        // Types in lower case, as MySQL prints them (ORMs parse this text).
        let mut l = format!("  `{}` {}", c.name, c.ty.sql_name().to_ascii_lowercase());
        // As MySQL: a column's collation when it is not the table's.
        if c.collation != td.collation && crate::sql::schema::has_collation(&c.ty) {
            l.push_str(&format!(" COLLATE {}", c.collation));
        }
        if !c.nullable {
            l.push_str(" NOT NULL");
        }
        if c.auto_increment {
            l.push_str(" AUTO_INCREMENT");
        }
        match &c.default {
            Some(Value::Text(s)) => l.push_str(&format!(" DEFAULT '{}'", s.replace('\'', "''"))),
            // A binary default as a hex literal: any bytes, read back as
            // they are.
            Some(v @ Value::Bytes(_)) => l.push_str(&format!(
                " DEFAULT {}",
                crate::sql::plan::explain_expr::literal(v)
            )),
            Some(v) => l.push_str(&format!(" DEFAULT {v}")),
            None if c.nullable => l.push_str(" DEFAULT NULL"),
            None => {}
        }
        lines.push(l);
    }
    if !td.pk.is_empty() {
        let cols: Vec<String> = td
            .pk
            .iter()
            .map(|&i| format!("`{}`", td.columns[i].name))
            .collect();
        lines.push(format!("  PRIMARY KEY ({})", cols.join(",")));
    }
    for ix in &td.indexes {
        let cols: Vec<String> = ix
            .columns
            .iter()
            .map(|&i| format!("`{}`", td.columns[i].name))
            .collect();
        let asy = if ix.is_async { " ASYNC" } else { "" };
        lines.push(match &ix.kind {
            IndexKind::BTree { unique: true } => format!("  UNIQUE KEY `{}` ({}){asy}", ix.name, cols.join(",")),
            IndexKind::BTree { unique: false } => format!("  KEY `{}` ({}){asy}", ix.name, cols.join(",")),
            IndexKind::Hnsw {
                op_type,
                m,
                ef_construction,
                ef_search,
            } => format!(
                "  KEY `{}` USING hnsw ({}) OP_TYPE '{op_type}' M {m} EF_CONSTRUCTION {ef_construction} EF_SEARCH {ef_search}{asy}",
                ix.name,
                cols.join(",")
            ),
            IndexKind::FullText { parser } => {
                let p = if parser == "default" { String::new() } else { format!(" WITH PARSER {parser}") };
                format!("  FULLTEXT KEY `{}` ({}){p}{asy}", ix.name, cols.join(","))
            }
        });
    }
    for fk in &td.foreign_keys {
        lines.push(format!("  CONSTRAINT `{}` {}", fk.name, fk.clause(&td.db)));
    }
    // MySQL lists them by name.
    let mut checks: Vec<_> = td.checks.iter().collect();
    checks.sort_by_key(|c| c.name.to_lowercase());
    for c in checks {
        lines.push(format!("  {}", crate::sql::check_constraint::show_line(c)));
    }
    let options = if td.collation.is_default() {
        String::new()
    } else {
        format!(" DEFAULT CHARSET=utf8mb4 COLLATE={}", td.collation)
    };
    format!(
        "CREATE TABLE `{}` (\n{}\n){options}",
        td.name,
        lines.join(",\n")
    )
}

/// SHOW CREATE TABLE; of a view, SHOW CREATE VIEW's answer (as MySQL:
/// mysqldump tells views from tables by it).
pub fn create_table(cx: &mut Ctx<'_>, n: &Name) -> SqlResult<QueryResult> {
    let td = table(cx, n)?;
    if td.view.is_some() {
        return Ok(view_result(&td));
    }
    Ok(rs(
        &["Table", "Create Table"],
        vec![vec![t(td.name.clone()), t(create_table_sql(&td))]],
    ))
}

/// SHOW CREATE VIEW: 1347 for a base table.
pub fn create_view(cx: &mut Ctx<'_>, n: &Name) -> SqlResult<QueryResult> {
    let td = table(cx, n)?;
    if td.view.is_none() {
        return Err(SqlError::new(
            1347,
            format!("'{}.{}' is not VIEW", td.db, td.name),
        ));
    }
    Ok(view_result(&td))
}

/// A view's `CREATE … VIEW` text and its session character set: views
/// run with the invoker's privileges and have no definer
/// (`information_schema.VIEWS` says the same), the query as written.
fn view_result(td: &TableDef) -> QueryResult {
    let Some(v) = &td.view else {
        debug_assert!(false, "view_result of a base table");
        return rs(&["View"], Vec::new());
    };
    let columns = if v.columns.is_empty() {
        String::new()
    } else {
        let names: Vec<String> = v.columns.iter().map(|c| format!("`{c}`")).collect();
        format!(" ({})", names.join(","))
    };
    let text = format!(
        "CREATE ALGORITHM=UNDEFINED SQL SECURITY INVOKER VIEW `{}`{columns} AS {}",
        td.name, v.query
    );
    rs(
        &[
            "View",
            "Create View",
            "character_set_client",
            "collation_connection",
        ],
        vec![vec![
            t(td.name.clone()),
            t(text),
            t("utf8mb4"),
            t("utf8mb4_bin"),
        ]],
    )
}

/// SHOW CREATE {DATABASE | SCHEMA} [IF NOT EXISTS] d (1049 when unknown).
pub fn create_database(cx: &mut Ctx<'_>, db: &str, if_not_exists: bool) -> SqlResult<QueryResult> {
    catalog::require_database(cx.txn, db)?;
    let guard = if if_not_exists {
        "/*!32312 IF NOT EXISTS*/ "
    } else {
        ""
    };
    let text = format!(
        "CREATE DATABASE {guard}`{db}` /*!40100 DEFAULT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin */ /*!80016 DEFAULT ENCRYPTION='N' */"
    );
    Ok(rs(
        &["Database", "Create Database"],
        vec![vec![t(db), t(text)]],
    ))
}

/// `DESCRIBE t` and `SHOW [FULL] COLUMNS FROM t`: the facts
/// `information_schema.COLUMNS` shows ([`column_facts`]), with FULL also
/// the collation, privileges and comment.
pub fn columns(cx: &mut Ctx<'_>, n: &Name, full: bool) -> SqlResult<QueryResult> {
    let td = table(cx, n)?;
    let rows = column_facts(&td)
        .into_iter()
        .map(|f| {
            let mut row = vec![t(f.name), t(f.column_type)];
            if full {
                row.push(f.collation);
            }
            row.extend([t(f.nullable), t(f.key), f.default, t(f.extra)]);
            if full {
                row.extend([t(PRIVILEGES), t("")]);
            }
            row
        })
        .collect();
    if full {
        Ok(rs(
            &[
                "Field",
                "Type",
                "Collation",
                "Null",
                "Key",
                "Default",
                "Extra",
                "Privileges",
                "Comment",
            ],
            rows,
        ))
    } else {
        Ok(rs(
            &["Field", "Type", "Null", "Key", "Default", "Extra"],
            rows,
        ))
    }
}

/// SHOW ISCP STATUS: one row per job ([`crate::iscp::status::JobStatus`]):
/// its table by name, a phase that says what the job is doing, lag (in
/// commits and in milliseconds), build progress and when this CN last
/// wrote a checkpoint of it.
pub fn iscp_status(cx: &mut Ctx<'_>) -> SqlResult<QueryResult> {
    let jobs =
        crate::iscp::status::job_statuses(cx.engine.storage.as_ref(), &cx.engine.iscp, cx.txn, 0)?;
    let opt_text = |v: &Option<String>| v.clone().map_or(Value::Null, Value::Text);
    let rows = jobs
        .into_iter()
        .map(|j| {
            let checkpoint = j.checkpoint_ms.map_or(Value::Null, |ms| {
                // UTC, to the millisecond.
                let us = i64::try_from(ms).unwrap_or(i64::MAX / 1000) * 1000;
                Value::Text(crate::sql::expr::datetime::date_format(
                    us,
                    "%Y-%m-%d %H:%i:%s.%f UTC",
                ))
            });
            let (error_code, error_msg) = j.error.clone().unwrap_or_default();
            vec![
                opt_text(&j.db),
                opt_text(&j.table),
                Value::Int(j.key.table_id as i64),
                t(j.key.job_name.clone()),
                Value::Int(j.key.job_id as i64),
                t(j.phase.name()),
                t(j.state.name()),
                Value::Int(j.state as i64),
                Value::Int(j.watermark as i64),
                Value::Int(j.lag_ts as i64),
                j.lag_ms.map_or(Value::Null, |ms| Value::Int(ms as i64)),
                Value::Int(j.rows_applied as i64),
                Value::Int(j.iterations as i64),
                t(if j.sync { "sync" } else { j.stage.name() }),
                t(j.progress.text()),
                checkpoint,
                Value::Int(j.deferred as i64),
                Value::Int(i64::from(error_code)),
                t(error_msg),
            ]
        })
        .collect();
    let mut r = rs(
        &[
            "db",
            "table_name",
            "table_id",
            "job_name",
            "job_id",
            "phase",
            "state",
            "state_code",
            "watermark",
            "lag_ts",
            "lag_ms",
            "rows_applied",
            "iterations",
            "stage",
            "progress",
            "last_checkpoint",
            "deferred",
            "error_code",
            "error_msg",
        ],
        rows,
    );
    for i in [2, 4, 7, 8, 9, 10, 11, 12, 16, 17] {
        r.columns[i].kind = ColumnKind::Int;
    }
    Ok(r)
}

/// `EXPLAIN [ANALYZE] [FORMAT=TREE] <select>`: Tributary's lines, one row
/// each under `QUERY PLAN`; or MySQL's tree, one row under `EXPLAIN`
/// holding every line (joined by `\n`), as MySQL 8 answers it.
pub fn explain(
    cx: &mut Ctx<'_>,
    inner: Stmt,
    opts: crate::sql::parse::ExplainOpts,
) -> SqlResult<QueryResult> {
    let Stmt::Ast(a) = inner else {
        return Err(SqlError::unsupported("EXPLAIN of this statement"));
    };
    let sqlparser::ast::Statement::Query(q) = a.into_statement() else {
        return Err(SqlError::unsupported("EXPLAIN of a non-SELECT statement"));
    };
    let mut planner = crate::sql::plan::bind::Planner::new(cx);
    let node = planner.plan_query(&q, None)?;
    let subqueries = planner.into_subqueries();
    let mut ex = crate::sql::exec::Exec::new(cx, subqueries);
    let stats = if opts.analyze {
        Some(crate::sql::exec::analyze(&mut ex, &node)?)
    } else {
        None
    };
    match opts.format {
        crate::sql::parse::ExplainFormat::Tree => {
            let tree =
                crate::sql::plan::explain_tree::render(&node, stats.as_ref(), &ex.subqueries)?;
            Ok(rs(&["EXPLAIN"], vec![vec![t(tree)]]))
        }
        crate::sql::parse::ExplainFormat::Lines => {
            let mut lines = Vec::new();
            node.explain(0, stats.as_ref(), &ex.subqueries, &mut lines);
            Ok(rs(
                &["QUERY PLAN"],
                lines.into_iter().map(|l| vec![t(l)]).collect(),
            ))
        }
    }
}

/// SHOW ENGINES / COLLATION / CHARSET: rows of the `information_schema`
/// table, columns renamed and ordered as MySQL's SHOW prints them, the
/// first column filtered by `like`.
pub fn info(cx: &mut Ctx<'_>, table: &str, like: Option<&str>) -> SqlResult<QueryResult> {
    let rows = catalog::information_schema::rows(cx.txn, table)?
        .ok_or_else(|| SqlError::internal(format!("no information_schema.{table}")))?;
    // (SHOW's column name, position in the information_schema row).
    let cols: &[(&str, usize)] = match table {
        "ENGINES" => &[
            ("Engine", 0),
            ("Support", 1),
            ("Comment", 2),
            ("Transactions", 3),
            ("XA", 4),
            ("Savepoints", 5),
        ],
        "COLLATIONS" => &[
            ("Collation", 0),
            ("Charset", 1),
            ("Id", 2),
            ("Default", 3),
            ("Compiled", 4),
            ("Sortlen", 5),
            ("Pad_attribute", 6),
        ],
        _ => &[
            ("Charset", 0),
            ("Description", 2),
            ("Default collation", 1),
            ("Maxlen", 3),
        ],
    };
    let out: Vec<Vec<Value>> = rows
        .into_iter()
        .filter(|r| match (like, r.first()) {
            (Some(p), Some(Value::Text(name))) => crate::sql::expr::like_match_ci(name, p),
            _ => true,
        })
        .map(|r| {
            cols.iter()
                .map(|&(_, i)| r.get(i).cloned().unwrap_or(Value::Null))
                .collect()
        })
        .collect();
    let names: Vec<&str> = cols.iter().map(|&(n, _)| n).collect();
    let mut res = rs(&names, out);
    for (c, (name, _)) in res.columns.iter_mut().zip(cols) {
        if matches!(*name, "Id" | "Sortlen" | "Maxlen") {
            c.kind = ColumnKind::Int;
        }
    }
    Ok(res)
}

/// SHOW WARNINGS
pub fn warnings(st: &SessionState) -> QueryResult {
    let rows = st
        .warnings
        .iter()
        .map(|w| {
            vec![
                t("Warning"),
                Value::Int(w.code as i64),
                t(w.message.clone()),
            ]
        })
        .collect();
    let mut r = rs(&["Level", "Code", "Message"], rows);
    r.columns[1].kind = ColumnKind::Int;
    r
}

/// SHOW VARIABLES [LIKE …]
pub fn variables(
    engine: &Engine,
    st: &SessionState,
    like: Option<&str>,
    global: bool,
) -> QueryResult {
    let mut vars = crate::sql::vars::all(engine, st, global);
    vars.sort();
    let rows = vars
        .into_iter()
        .filter(|(k, _)| like.is_none_or(|p| crate::sql::expr::like_match_ci(k, p)))
        .map(|(k, v)| vec![t(k), t(v)])
        .collect();
    rs(&["Variable_name", "Value"], rows)
}

/// `SHOW [FULL] PROCESSLIST`: the sessions the user may see (all with
/// SUPER); without FULL a statement's text is cut to 100 characters.
pub fn processlist(engine: &Engine, st: &SessionState, full: bool) -> QueryResult {
    let rows = engine
        .processes
        .rows(&st.user, st.sees_all)
        .into_iter()
        .map(|mut r| {
            if let (false, Some(Value::Text(info))) = (full, r.last_mut()) {
                if let Some((cut, _)) = info.char_indices().nth(crate::sql::process::INFO_SHORT) {
                    info.truncate(cut);
                }
            }
            r
        })
        .collect();
    let mut r = rs(
        &[
            "Id", "User", "Host", "db", "Command", "Time", "State", "Info",
        ],
        rows,
    );
    r.columns[0].kind = ColumnKind::Int;
    r.columns[5].kind = ColumnKind::Int;
    r
}

/// `SHOW [GLOBAL | SESSION] STATUS [LIKE …]`: this node's counters
/// (both scopes show the node's).
pub fn status(engine: &Engine, like: Option<&str>) -> QueryResult {
    let storage = engine.storage.status();
    // Whether this node holds the ISCP runner lease now.
    let runner = engine
        .iscp
        .is_runner
        .load(std::sync::atomic::Ordering::Acquire);
    let rows = engine
        .processes
        .status()
        .into_iter()
        .chain(storage)
        .chain(std::iter::once((
            "Tributary_iscp_runner",
            u64::from(runner),
        )))
        .chain([
            // Decision 023: bytes charged by running statements (and
            // SQL prepared statements) now, and the most at once.
            ("Tributary_statement_memory_used", engine.budget.used()),
            ("Tributary_statement_memory_peak", engine.budget.peak()),
        ])
        .chain(engine.spill.status())
        .filter(|(k, _)| {
            like.is_none_or(|p| {
                crate::sql::expr::like_match_ci(&k.to_ascii_lowercase(), &p.to_ascii_lowercase())
            })
        })
        .map(|(k, v)| vec![t(k), t(v.to_string())])
        .collect();
    rs(&["Variable_name", "Value"], rows)
}

/// Apply a SHOW statement's `LIKE` (first column) or `WHERE` (an
/// expression over the result's column names, as MySQL allows) to its
/// rows.
pub fn filter(
    engine: &Engine,
    st: &SessionState,
    mut res: QueryResult,
    f: &crate::sql::parse::ShowFilter,
) -> SqlResult<QueryResult> {
    use crate::sql::expr::{truth, Compiler, EvalCtx, Scope};
    use crate::sql::parse::ShowFilter;
    match f {
        ShowFilter::Like(pattern) => res.rows.retain(|r| {
            r.first()
                .and_then(Value::to_text)
                .is_some_and(|v| crate::sql::expr::like_match_ci(&v, pattern))
        }),
        ShowFilter::Where(e) => {
            let scope = Scope {
                cols: res
                    .columns
                    .iter()
                    .map(|c| (String::new(), c.name.clone()))
                    .collect(),
                hidden: Vec::new(),
                colls: Vec::new(),
            };
            let cond = Compiler::new(&scope, false).compile(e)?;
            let host = crate::sql::host::SessionHost::new(st, engine);
            let mut kept = Vec::with_capacity(res.rows.len());
            for row in std::mem::take(&mut res.rows) {
                let v = cond.eval(&EvalCtx {
                    row: &row,
                    outer: &[],
                    aggs: &[],
                    matches: &[],
                    funcs: &host,
                })?;
                if truth(&v) == Some(true) {
                    kept.push(row);
                }
            }
            res.rows = kept;
        }
    }
    Ok(res)
}
