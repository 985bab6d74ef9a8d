//! CHECK constraints, as MySQL 8.0.16+ has them: declared in CREATE TABLE
//! (a column's `[CONSTRAINT n] CHECK (…)` or a table constraint), named
//! `<table>_chk_<n>` unless named, `[NOT] ENFORCED`, and checked on every
//! row an INSERT, REPLACE, UPDATE or ON DUPLICATE KEY UPDATE writes: a
//! condition that is FALSE refuses the row (3819); TRUE and NULL pass.
//!
//! Owns: reading a constraint from the AST and MySQL's definition-time
//! rules (3813 a column check naming another column, 3814 / 3815 a
//! disallowed function or subquery, 3816 a variable, 3818 an
//! AUTO_INCREMENT column, 3820 an unknown column, 3822 a name already
//! used in the database, 3823 a column a foreign key's referential action
//! writes), the stored clause text (identifiers backquoted), the columns
//! a clause names (for ALTER TABLE's 3959), and evaluating the clauses
//! against a row.
//!
//! Never: writes a row or a catalog record (the DDL and DML callers do),
//! or lets a statement through unchecked: what it cannot check (ALTER
//! TABLE ADD / DROP CHECK, a CHECK on an added or redefined column) is
//! refused by its callers (1235).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::rc::Rc;

use sqlparser::ast::{self, Expr, Spanned};
use sqlparser::dialect::MySqlDialect;
use sqlparser::parser::Parser;

use crate::catalog::schema::{CheckDef, FkAction};
use crate::catalog::TableDef;
use crate::error::{SqlError, SqlResult};
use crate::sql::expr::{datetime, ident_name, truth, CExpr, Compiler, EvalCtx, Scope};
use crate::sql::functions::is_deterministic;
use crate::sql::host::SessionHost;
use crate::sql::Ctx;
use crate::types::Value;

/// ER_CHECK_CONSTRAINT_VIOLATED.
pub const VIOLATED: u16 = 3819;

/// Functions MySQL refuses in a CHECK clause (not deterministic, or
/// reading the session or the clock), refused as written (3814 names
/// them); any other call the registry does not hold deterministic, or
/// that reads the clock, is refused once compiled.
const DISALLOWED: &[&str] = &[
    "benchmark",
    "connection_id",
    "curdate",
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "curtime",
    "database",
    "found_rows",
    "get_lock",
    "is_free_lock",
    "is_used_lock",
    "last_insert_id",
    "load_file",
    "localtime",
    "localtimestamp",
    "now",
    "rand",
    "release_all_locks",
    "release_lock",
    "row_count",
    "schema",
    "session_user",
    "sleep",
    "sysdate",
    "system_user",
    "unix_timestamp",
    "user",
    "utc_date",
    "utc_time",
    "utc_timestamp",
    "uuid",
    "uuid_short",
    "version",
];

/// A constraint as declared, before it is named and checked.
#[derive(Debug, Clone)]
pub struct CheckSpec {
    name: Option<String>,
    expr: Expr,
    enforced: bool,
    /// The column a column-level check was written on.
    column: Option<String>,
    /// Where the clause starts in the statement (line, column): generated
    /// names are numbered in the order the checks are written, columns'
    /// and the table's interleaved.
    at: (u64, u64),
}

/// The CHECK constraint names the tables of database `db` use (MySQL's
/// names are unique per database), but for table `except`'s (an ALTER
/// holds that table's own list, which it may change).
pub fn names_in(cx: &mut Ctx<'_>, db: &str, except: Option<&str>) -> SqlResult<Vec<String>> {
    Ok(crate::catalog::list_tables(cx.txn, db)?
        .into_iter()
        .filter(|t| except.is_none_or(|e| t.name != e))
        .flat_map(|t| t.checks.into_iter().map(|c| c.name))
        .collect())
}

/// Read `CHECK (…)`: a table constraint (`column` None) or a column's
/// option, whose `CONSTRAINT name` may sit on the option (`option_name`).
pub fn spec(
    c: &ast::CheckConstraint,
    column: Option<&str>,
    option_name: Option<&ast::Ident>,
) -> SqlResult<CheckSpec> {
    if c.no_inherit {
        return Err(SqlError::parse("NO INHERIT is not MySQL syntax"));
    }
    Ok(CheckSpec {
        name: c.name.as_ref().or(option_name).map(ident_name),
        expr: (*c.expr).clone(),
        enforced: c.enforced.unwrap_or(true),
        column: column.map(str::to_string),
        at: {
            let s = c.expr.span().start;
            (s.line, s.column)
        },
    })
}

/// Name, check and add `specs` to table `t` (its columns all declared).
/// `taken`: the CHECK constraint names other tables of the database use.
pub fn add(t: &mut TableDef, specs: Vec<CheckSpec>, taken: &[String]) -> SqlResult<()> {
    let mut specs = specs;
    specs.sort_by_key(|s| s.at);
    // As MySQL: generated names go on from the highest `<table>_chk_<n>`
    // the table has (an ALTER's ADD CHECK after CREATE TABLE's).
    let prefix = format!("{}_chk_", t.name);
    let mut generated = t
        .checks
        .iter()
        .filter_map(|c| c.name.strip_prefix(&prefix)?.parse::<usize>().ok())
        .max()
        .unwrap_or(0);
    for s in specs {
        let name = match s.name {
            Some(n) => n,
            None => {
                generated += 1;
                format!("{}_chk_{generated}", t.name)
            }
        };
        if taken.iter().any(|n| n.eq_ignore_ascii_case(&name))
            || t.checks.iter().any(|c| c.name.eq_ignore_ascii_case(&name))
        {
            return Err(SqlError::new(
                3822,
                format!("Duplicate check constraint name '{name}'."),
            ));
        }
        let mut expr = s.expr;
        validate(t, &name, &mut expr, s.column.as_deref())?;
        let clause = format!("({expr})");
        // It compiles against the table (types, functions, arity), and
        // calls only functions of its arguments.
        let compiled = compile(t, &clause)?;
        let mut bad = None;
        compiled.walk(&mut |e| {
            if let CExpr::Func(f, args) = e {
                if bad.is_none() && (!is_deterministic(f) || datetime::reads_clock(f, args.len())) {
                    bad = Some(f.clone());
                }
            }
        });
        if let Some(f) = bad {
            return Err(SqlError::new(
                3814,
                format!("An expression of a check constraint '{name}' contains disallowed function: {f}."),
            ));
        }
        t.checks.push(CheckDef {
            name,
            clause,
            enforced: s.enforced,
        });
    }
    Ok(())
}

/// MySQL's definition-time rules over one clause; backquotes its column
/// names (the stored form).
fn validate(t: &TableDef, name: &str, e: &mut Expr, column: Option<&str>) -> SqlResult<()> {
    let mut err = None;
    let _ = ast::visit_expressions_mut(e, |x: &mut Expr| {
        let r = match x {
            Expr::Subquery(_)
            | Expr::Exists { .. }
            | Expr::In {
                target: ast::InTarget::Subquery(_),
                ..
            } => Err(SqlError::new(
                3815,
                format!(
                    "An expression of a check constraint '{name}' contains disallowed function."
                ),
            )),
            Expr::Function(f) => {
                let fname = f.name.to_string().to_ascii_lowercase();
                if DISALLOWED.contains(&fname.as_str()) {
                    Err(SqlError::new(
                        3814,
                        format!(
                            "An expression of a check constraint '{name}' contains disallowed function: {fname}."
                        ),
                    ))
                } else {
                    Ok(())
                }
            }
            Expr::Identifier(id) => column_ref(t, name, id, column),
            Expr::CompoundIdentifier(_) => Err(SqlError::unsupported(
                "a qualified column name in a CHECK constraint",
            )),
            _ => Ok(()),
        };
        match r {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                err = Some(e);
                ControlFlow::Break(())
            }
        }
    });
    match err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// One column name in a clause: it exists, is not AUTO_INCREMENT, is the
/// column a column check is written on; quoted with backquotes.
fn column_ref(
    t: &TableDef,
    name: &str,
    id: &mut ast::Ident,
    column: Option<&str>,
) -> SqlResult<()> {
    if id.quote_style.is_none() && id.value.starts_with('@') {
        return Err(SqlError::new(
            3816,
            format!("An expression of a check constraint '{name}' cannot refer to a user or system variable."),
        ));
    }
    let col = ident_name(id);
    let Some(i) = t.column_index(&col) else {
        return Err(SqlError::new(
            3820,
            format!("Check constraint '{name}' refers to non-existing column '{col}'."),
        ));
    };
    let cd = &t.columns[i];
    if column.is_some_and(|c| !c.eq_ignore_ascii_case(&cd.name)) {
        return Err(SqlError::new(
            3813,
            format!("Column check constraint '{name}' references other column."),
        ));
    }
    if cd.auto_increment {
        return Err(SqlError::new(
            3818,
            format!("Check constraint '{name}' cannot refer to an auto-increment column."),
        ));
    }
    *id = ast::Ident::with_quote('`', cd.name.clone());
    Ok(())
}

/// The column names a stored clause reads (as written in it).
pub fn columns_of(clause: &str) -> SqlResult<Vec<String>> {
    let mut e = parse(clause)?;
    let mut out: Vec<String> = Vec::new();
    let _ = ast::visit_expressions_mut(&mut e, |x: &mut Expr| {
        if let Expr::Identifier(id) = x {
            let n = ident_name(id);
            if !out.iter().any(|o| o.eq_ignore_ascii_case(&n)) {
                out.push(n);
            }
        }
        ControlFlow::<()>::Continue(())
    });
    Ok(out)
}

/// 3823 when a foreign key of `t` whose referential action writes the
/// child's columns (CASCADE, SET NULL) has a column a check reads.
pub fn check_fk_actions(t: &TableDef) -> SqlResult<()> {
    for c in &t.checks {
        let cols = columns_of(&c.clause)?;
        for fk in &t.foreign_keys {
            let writes = |a: FkAction| matches!(a, FkAction::Cascade | FkAction::SetNull);
            if !writes(fk.on_delete) && !writes(fk.on_update) {
                continue;
            }
            if let Some(col) = fk
                .columns
                .iter()
                .find(|k| cols.iter().any(|n| n.eq_ignore_ascii_case(k)))
            {
                return Err(SqlError::new(
                    3823,
                    format!(
                        "Column '{col}' cannot be used in a check constraint '{}': needed in a foreign key constraint '{}' referential action.",
                        c.name, fk.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn parse(clause: &str) -> SqlResult<Expr> {
    let mut p = Parser::new(&MySqlDialect {})
        .try_with_sql(clause)
        .map_err(|e| SqlError::internal(format!("stored CHECK clause {clause}: {e}")))?;
    p.parse_expr()
        .map_err(|e| SqlError::internal(format!("stored CHECK clause {clause}: {e}")))
}

/// A clause compiled against the table's current columns.
fn compile(t: &TableDef, clause: &str) -> SqlResult<CExpr> {
    let e = parse(clause)?;
    let scope = Scope::of_table(t, &t.name);
    let mut c = Compiler::new(&scope, false);
    c.compile(&e)
}

/// Compiled clauses, by table id, column names and clause: a statement
/// writing many rows compiles each once.
type Cache = HashMap<(u64, String, String), Rc<CExpr>>;

thread_local! {
    static COMPILED: RefCell<Cache> = RefCell::new(HashMap::new());
}

/// At most this many compiled clauses are kept per thread.
const CACHE_MAX: usize = 256;

fn compiled(t: &TableDef, clause: &str) -> SqlResult<Rc<CExpr>> {
    let cols: String = t
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join("\u{1}");
    let key = (t.id, cols, clause.to_string());
    if let Some(e) = COMPILED.with(|c| c.borrow().get(&key).cloned()) {
        return Ok(e);
    }
    let e = Rc::new(compile(t, clause)?);
    COMPILED.with(|c| {
        let mut c = c.borrow_mut();
        if c.len() >= CACHE_MAX {
            c.clear();
        }
        c.insert(key, e.clone());
    });
    Ok(e)
}

/// Refuse `row` (in `t`'s column order, coerced) when an enforced check is
/// FALSE for it (3819).
pub fn enforce(cx: &Ctx<'_>, t: &TableDef, row: &[Value]) -> SqlResult<()> {
    if t.checks.is_empty() {
        return Ok(());
    }
    debug_assert_eq!(row.len(), t.columns.len(), "a row of another shape");
    let host = SessionHost::new(cx.session, cx.engine);
    for c in t.checks.iter().filter(|c| c.enforced) {
        let e = compiled(t, &c.clause)?;
        let v = e.eval(&EvalCtx {
            row,
            outer: &[],
            aggs: &[],
            matches: &[],
            funcs: &host,
        })?;
        if truth(&v) == Some(false) {
            return Err(SqlError::new(
                VIOLATED,
                format!("Check constraint '{}' is violated.", c.name),
            ));
        }
    }
    Ok(())
}

/// `CONSTRAINT `n` CHECK (…)` as SHOW CREATE TABLE prints it (with
/// MySQL's version comment for NOT ENFORCED).
pub fn show_line(c: &CheckDef) -> String {
    let mut s = format!("CONSTRAINT `{}` CHECK ({})", c.name, c.clause);
    if !c.enforced {
        s.push_str(" /*!80016 NOT ENFORCED */");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_of_reads_each_name_once() {
        let cols = columns_of("((`a` > 0) AND (`b` < `a`))").unwrap();
        assert_eq!(cols, vec!["a".to_string(), "b".to_string()]);
    }

    #[test]
    fn show_line_marks_not_enforced() {
        let c = CheckDef {
            name: "t_chk_1".into(),
            clause: "(`a` > 0)".into(),
            enforced: false,
        };
        assert_eq!(
            show_line(&c),
            "CONSTRAINT `t_chk_1` CHECK ((`a` > 0)) /*!80016 NOT ENFORCED */"
        );
    }
}
