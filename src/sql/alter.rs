//! `ALTER TABLE` that changes columns or the table's name, and `RENAME
//! TABLE`: ADD / DROP / MODIFY / CHANGE / RENAME COLUMN, ALTER COLUMN SET /
//! DROP DEFAULT, ADD UNIQUE / INDEX / FULLTEXT constraints, RENAME TO.
//!
//! Owns: the new layout of a table (which old column each new column comes
//! from, which are converted), the row rewrite, and what happens to each
//! index. An ALTER runs in one transaction holding the table's catalog
//! record exclusively (so no writer of the table is in flight, and none
//! starts): it rewrites every row in the new layout through ordinary
//! writes, so every index consumer sees the rewrite as ordinary changes.
//!
//! Indexes (MySQL's rules: dropping a column removes it from its indexes;
//! an index left with no column is dropped):
//! * An ISCP-maintained index (vector, full-text, ASYNC) whose column is
//!   dropped, converted or moved is dropped by the ISCP DROP protocol in
//!   the ALTER's transaction (its consumer is fenced, cancelled and
//!   drained after commit exactly as for DROP INDEX) and, unless it lost
//!   all its columns, created again **in the same transaction** in a new
//!   generation: a synchronous one with its entries written from the new
//!   rows, an ASYNC one registered to build from them after commit. The
//!   ALTER is atomic (issue 39): the column change and every index it
//!   rebuilds commit together or not at all (a KILL, an error or a crash
//!   before the commit leaves the old table and its indexes whole; after
//!   the commit the statement succeeds whatever happens to it).
//! * A synchronous B-tree whose column is dropped or converted is rebuilt
//!   inside the ALTER's transaction from the new rows; a moved one only
//!   has its column positions renumbered.
//!
//! Never: changes a primary-key column's type, drops a primary-key column
//! or adds AUTO_INCREMENT to existing rows (refused, 1235); converts a
//! value silently (a value the new type cannot hold fails the ALTER, which
//! then changes nothing).

use sqlparser::ast::{self, AlterColumnOperation, AlterTableOperation as Op, MySQLColumnPosition};

use crate::catalog::codec::{decode_row, encode_row};
use crate::catalog::schema::{coerce_value, IndexKind};
use crate::catalog::{self, IndexDef, TableDef};
use crate::error::{code, SqlError, SqlResult};
use crate::sql::check_constraint;
use crate::sql::expr::{eval_const, ident_name, object_parts, Compiler, Scope};
use crate::sql::fk;
use crate::sql::host::SessionHost;
use crate::sql::parse::{IndexSpec, Name};
use crate::sql::schema::{self, column_decl, Dropped};
use crate::sql::{Ctx, Engine, SessionState};
use crate::types::{DataType, QueryResult, Value};

/// Rows rewritten between two checks of the statement's interrupt.
const INTERRUPT_EVERY: usize = 1024;

/// The table as it will be, and how to get there from the old rows.
struct Layout {
    def: TableDef,
    /// Per new column: the old column it takes its values from (`None`:
    /// added, filled with its default).
    origin: Vec<Option<usize>>,
    /// Per new column: its values are converted (type or nullability
    /// changed).
    converted: Vec<bool>,
    /// New name (`RENAME TO`), as (database, table).
    rename: Option<(String, String)>,
    /// Indexes the ALTER adds (ADD UNIQUE / INDEX / FULLTEXT, column
    /// UNIQUE, the index a new foreign key needs).
    add_indexes: Vec<IndexSpec>,
    /// ADD FOREIGN KEY.
    add_fks: Vec<fk::FkSpec>,
    /// DROP FOREIGN KEY names.
    drop_fks: Vec<String>,
    /// ADD [CONSTRAINT n] CHECK (…).
    add_checks: Vec<check_constraint::CheckSpec>,
    /// DROP CHECK / DROP CONSTRAINT names of CHECK constraints.
    drop_checks: Vec<String>,
}

/// `ALTER TABLE t op, op, …` (the column and rename forms; the index forms
/// are [`crate::sql::parse::Stmt::CreateIndex`] /
/// [`crate::sql::parse::Stmt::DropIndex`]).
pub fn alter_table(
    engine: &Engine,
    st: &mut SessionState,
    at: &ast::AlterTable,
) -> SqlResult<QueryResult> {
    let (db, name) = qualified(st, &at.name)?;
    let mut dropped = Vec::new();
    let mut created = Vec::new();
    let r = engine.in_txn(st, |cx| {
        let Some(old) = catalog::get_table(cx.txn, &db, &name, true)? else {
            if at.if_exists {
                return Ok(QueryResult::default());
            }
            return Err(SqlError::new(
                code::NO_SUCH_TABLE,
                format!("Table '{db}.{name}' doesn't exist"),
            ));
        };
        if old.view.is_some() {
            return Err(SqlError::new(
                1347,
                format!("'{db}.{name}' is not BASE TABLE"),
            ));
        }
        let layout = plan(cx, &old, &at.operations)?;
        let r = apply(cx, &old, layout, &mut dropped, &mut created)?;
        schema::before_commit(cx, &name)?;
        Ok(r)
    })?;
    schema::commit_and_finish(engine, st, &name, r, dropped, created)
}

/// `RENAME TABLE a TO b [, c TO d …]`: one transaction, pairs applied in
/// order (so `a TO tmp, b TO a, tmp TO b` swaps). Rows, indexes and ISCP
/// jobs stay with the table (they are keyed by its id, not its name).
pub fn rename_tables(
    engine: &Engine,
    st: &mut SessionState,
    renames: &[ast::RenameTable],
) -> SqlResult<QueryResult> {
    let pairs = renames
        .iter()
        .map(|r| Ok((qualified(st, &r.old_name)?, qualified(st, &r.new_name)?)))
        .collect::<SqlResult<Vec<_>>>()?;
    let first = pairs
        .first()
        .map(|((_, n), _)| n.clone())
        .unwrap_or_default();
    let r = engine.in_txn(st, |cx| {
        for ((db, name), to) in &pairs {
            let t = catalog::require_table(cx.txn, db, name, true)?;
            rename(cx, t, to)?;
        }
        schema::before_commit(cx, &first)?;
        Ok(QueryResult::default())
    })?;
    engine.commit_open(st)?;
    schema::after_commit(st, &first);
    Ok(r)
}

/// `db.table` of an object name, the session's database by default.
fn qualified(st: &SessionState, name: &ast::ObjectName) -> SqlResult<(String, String)> {
    match object_parts(name).as_slice() {
        [t] => Ok((st.require_db()?.to_string(), t.clone())),
        [d, t] => Ok((d.clone(), t.clone())),
        _ => Err(SqlError::parse(format!("invalid table name {name}"))),
    }
}

/// Move `t` to `(db, name)`: 1050 if that name is taken, 1049 if the
/// database does not exist.
fn rename(cx: &mut Ctx<'_>, mut t: TableDef, to: &(String, String)) -> SqlResult<()> {
    let (db, name) = to;
    if catalog::is_system_db(db) || catalog::is_system_db(&t.db) {
        return Err(SqlError::new(
            code::SPECIFIC_ACCESS_DENIED,
            format!(
                "Access denied: cannot rename {}.{} to {db}.{name}",
                t.db, t.name
            ),
        ));
    }
    if catalog::get_database(cx.txn, db)?.is_none() {
        return Err(SqlError::new(
            code::BAD_DB,
            format!("Unknown database '{db}'"),
        ));
    }
    if catalog::get_table(cx.txn, db, name, true)?.is_some() {
        return Err(SqlError::new(
            code::TABLE_EXISTS,
            format!("Table '{name}' already exists"),
        ));
    }
    catalog::delete_table(cx.txn, &t.db, &t.name)?;
    let (old_db, old_name) = (t.db.clone(), t.name.clone());
    t.db = db.clone();
    t.name = name.clone();
    // As MySQL: the generated CHECK names follow the table's.
    let generated = format!("{old_name}_chk_");
    for c in &mut t.checks {
        if let Some(n) = c.name.strip_prefix(&generated) {
            c.name = format!("{name}_chk_{n}");
        }
    }
    fk::renamed(cx, &mut t, &old_db, &old_name)?;
    catalog::put_table(cx.txn, &t)
}

/// Work out the new layout from the operations, in order.
fn plan(cx: &mut Ctx<'_>, old: &TableDef, ops: &[Op]) -> SqlResult<Layout> {
    let host = SessionHost::new(cx.session, cx.engine);
    let mut l = Layout {
        def: old.clone(),
        origin: (0..old.columns.len()).map(Some).collect(),
        converted: vec![false; old.columns.len()],
        rename: None,
        add_indexes: Vec::new(),
        add_fks: Vec::new(),
        drop_fks: Vec::new(),
        add_checks: Vec::new(),
        drop_checks: Vec::new(),
    };
    for op in ops {
        match op {
            Op::AddColumn {
                if_not_exists,
                column_def,
                column_position,
                ..
            } => {
                let name = ident_name(&column_def.name);
                if l.def.column_index(&name).is_some() {
                    if *if_not_exists {
                        continue;
                    }
                    return Err(duplicate_column(&name));
                }
                let decl = column_decl(
                    &host,
                    name.clone(),
                    &column_def.data_type,
                    column_def.options.iter().map(|o| &o.option),
                )?;
                if decl.primary {
                    return Err(SqlError::unsupported("ADD COLUMN … PRIMARY KEY"));
                }
                if decl.col.auto_increment {
                    return Err(SqlError::unsupported("ADD COLUMN … AUTO_INCREMENT"));
                }
                let mut col = decl.col;
                if decl.collation.is_none() && schema::has_collation(&col.ty) {
                    col.collation = l.def.collation;
                }
                let at = position(&l, column_position.as_ref(), l.def.columns.len())?;
                l.def.columns.insert(at, col);
                l.origin.insert(at, None);
                l.converted.insert(at, false);
                if decl.unique {
                    l.add_indexes.push(unique_column(&name));
                }
            }
            Op::DropColumn {
                column_names,
                if_exists,
                ..
            } => {
                for c in column_names {
                    let name = ident_name(c);
                    let Some(i) = l.def.column_index(&name) else {
                        if *if_exists {
                            continue;
                        }
                        return Err(SqlError::new(
                            code::CANT_DROP_FIELD_OR_KEY,
                            format!("Can't DROP '{name}'; check that column/key exists"),
                        ));
                    };
                    if l.origin[i].is_some_and(|o| old.pk.contains(&o)) {
                        return Err(SqlError::unsupported(format!(
                            "dropping primary key column '{name}'"
                        )));
                    }
                    if l.def.columns.len() == 1 {
                        return Err(SqlError::new(
                            1090,
                            "You can't delete all columns with ALTER TABLE; use DROP TABLE instead",
                        ));
                    }
                    l.def.columns.remove(i);
                    l.origin.remove(i);
                    l.converted.remove(i);
                }
            }
            Op::ModifyColumn {
                col_name,
                data_type,
                options,
                column_position,
            } => redefine(
                &host,
                &mut l,
                old,
                col_name,
                col_name,
                data_type,
                options,
                column_position.as_ref(),
            )?,
            Op::ChangeColumn {
                old_name,
                new_name,
                data_type,
                options,
                column_position,
            } => redefine(
                &host,
                &mut l,
                old,
                old_name,
                new_name,
                data_type,
                options,
                column_position.as_ref(),
            )?,
            Op::RenameColumn {
                old_column_name,
                new_column_name,
            } => {
                let i = existing(&l, &ident_name(old_column_name))?;
                let to = ident_name(new_column_name);
                if l.def.column_index(&to).is_some_and(|j| j != i) {
                    return Err(duplicate_column(&to));
                }
                l.def.columns[i].name = to;
            }
            Op::AlterColumn { column_name, op } => {
                let i = existing(&l, &ident_name(column_name))?;
                match op {
                    AlterColumnOperation::SetDefault { value } => {
                        let scope = Scope::default();
                        let v = eval_const(&Compiler::new(&scope, false).compile(value)?, &host)?;
                        let col = &mut l.def.columns[i];
                        col.default = if v.is_null() {
                            None
                        } else {
                            Some(coerce_value(&col.ty, v, &col.name)?)
                        };
                    }
                    AlterColumnOperation::DropDefault => l.def.columns[i].default = None,
                    other => return Err(SqlError::unsupported(format!("ALTER COLUMN … {other}"))),
                }
            }
            Op::RenameTable { table_name } => {
                let (ast::RenameTableNameKind::As(to) | ast::RenameTableNameKind::To(to)) =
                    table_name;
                l.rename = Some(qualified(cx.session, to)?);
            }
            Op::AddConstraint {
                constraint: ast::TableConstraint::ForeignKey(f),
                ..
            } => l.add_fks.push(fk::spec(f, None)?),
            Op::AddConstraint {
                constraint: ast::TableConstraint::Check(c),
                ..
            } => l.add_checks.push(check_constraint::spec(c, None, None)?),
            Op::DropConstraint {
                if_exists,
                name,
                drop_behavior,
            } => drop_constraint(
                &mut l,
                &ident_name(name),
                *if_exists,
                drop_behavior.is_some(),
            )?,
            Op::AddConstraint { constraint, .. } => {
                l.add_indexes.push(constraint_spec(&l.def, constraint)?)
            }
            Op::DropForeignKey { name, .. } => l.drop_fks.push(ident_name(name)),
            other => {
                return Err(SqlError::unsupported(format!(
                    "ALTER TABLE … {}",
                    other.to_string().chars().take(60).collect::<String>()
                )))
            }
        }
    }
    check_columns_kept(old, &l)?;
    // The index InnoDB gives each new key none of the indexes starts with.
    let me = Name {
        db: Some(old.db.clone()),
        name: old.name.clone(),
    };
    let mut existing = fk::index_specs(old);
    existing.extend(l.add_indexes.iter().cloned());
    let needed = fk::needed_indexes(&me, &fk::pk_names(old), &existing, &l.add_fks);
    l.add_indexes.extend(needed);
    Ok(l)
}

/// Refuse (3819, naming the first violated check) when a committed row of
/// `t` — or, with `in_txn`, a row as this transaction sees it (an ALTER
/// that rewrote them) — is FALSE for an enforced check in `names`. Reads
/// the committed rows a page at a time.
fn check_rows(cx: &mut Ctx<'_>, t: &TableDef, names: &[String], in_txn: bool) -> SqlResult<()> {
    let mut only = t.clone();
    only.checks
        .retain(|c| c.enforced && names.iter().any(|n| n.eq_ignore_ascii_case(&c.name)));
    if only.checks.is_empty() {
        return Ok(());
    }
    let one = |cx: &mut Ctx<'_>, bytes: &[u8]| -> SqlResult<()> {
        crate::sql::budget::tick()?;
        let row = decode_row(bytes).map_err(|e| SqlError::internal(e.to_string()))?;
        check_constraint::enforce(cx, &only, &row)
    };
    if in_txn {
        let rows = cx.txn.scan(
            only.id,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            usize::MAX,
        )?;
        for (_, bytes) in rows {
            one(cx, &bytes)?;
        }
        return Ok(());
    }
    schema::for_each_current_page(cx, t, |cx, page| {
        for (_, bytes) in page.iter() {
            one(cx, bytes)?;
        }
        Ok(())
    })
}

/// `DROP CONSTRAINT name` (MySQL 8.0.19): the CHECK constraint or foreign
/// key of that name; `DROP CHECK name` (`check_only`, read by the parser
/// as a DROP CONSTRAINT marked RESTRICT): only a CHECK constraint. 3940
/// when there is none (unless IF EXISTS), 3939 when the name is both a
/// check and a foreign key; a UNIQUE key is dropped with DROP INDEX.
fn drop_constraint(l: &mut Layout, name: &str, if_exists: bool, check_only: bool) -> SqlResult<()> {
    let check = l
        .def
        .checks
        .iter()
        .any(|c| c.name.eq_ignore_ascii_case(name))
        && !l.drop_checks.iter().any(|d| d.eq_ignore_ascii_case(name));
    let fk = !check_only
        && l.def
            .foreign_keys
            .iter()
            .any(|f| f.name.eq_ignore_ascii_case(name))
        && !l.drop_fks.iter().any(|d| d.eq_ignore_ascii_case(name));
    let unique = !check_only
        && l.def.indexes.iter().any(|ix| {
            matches!(ix.kind, IndexKind::BTree { unique: true })
                && ix.name.eq_ignore_ascii_case(name)
        });
    match (check, fk, unique) {
        (true, false, false) => l.drop_checks.push(name.to_string()),
        (false, true, false) => l.drop_fks.push(name.to_string()),
        (false, false, true) => {
            return Err(SqlError::unsupported(format!(
                "DROP CONSTRAINT of the UNIQUE key '{name}'"
            )))
        }
        (false, false, false) if if_exists => {}
        (false, false, false) if check_only => {
            return Err(SqlError::new(
                3821,
                format!("Check constraint '{name}' is not found in the table."),
            ))
        }
        (false, false, false) => {
            return Err(SqlError::new(
                3940,
                format!("Constraint '{name}' does not exist."),
            ))
        }
        _ => {
            return Err(SqlError::new(
                3939,
                format!(
                    "Table has multiple constraints with the name '{name}'. Please use constraint specific 'DROP' clause."
                ),
            ))
        }
    }
    Ok(())
}

/// The columns a CHECK constraint reads stay as they were: dropping or
/// renaming one is MySQL's 3959; retyping one (MySQL re-checks every row)
/// is not implemented (1235).
fn check_columns_kept(old: &TableDef, l: &Layout) -> SqlResult<()> {
    for c in &l.def.checks {
        for name in check_constraint::columns_of(&c.clause)? {
            let kept = l.def.column_index(&name).filter(|&i| {
                l.origin[i].is_some_and(|o| old.columns[o].name.eq_ignore_ascii_case(&name))
            });
            let Some(i) = kept else {
                return Err(SqlError::new(
                    3959,
                    format!(
                        "Check constraint '{}' uses column '{name}', hence column cannot be dropped or renamed.",
                        c.name
                    ),
                ));
            };
            if l.converted[i] {
                return Err(SqlError::unsupported(format!(
                    "changing column '{name}', which CHECK constraint '{}' uses",
                    c.name
                )));
            }
        }
    }
    Ok(())
}

/// MODIFY / CHANGE: a new definition (and maybe name and position) for an
/// existing column.
#[allow(clippy::too_many_arguments)]
fn redefine(
    host: &SessionHost<'_>,
    l: &mut Layout,
    old: &TableDef,
    from: &ast::Ident,
    to: &ast::Ident,
    data_type: &ast::DataType,
    options: &[ast::ColumnOption],
    position_of: Option<&MySQLColumnPosition>,
) -> SqlResult<()> {
    let i = existing(l, &ident_name(from))?;
    let name = ident_name(to);
    if l.def.column_index(&name).is_some_and(|j| j != i) {
        return Err(duplicate_column(&name));
    }
    let mut decl = column_decl(host, name.clone(), data_type, options)?;
    if decl.primary {
        return Err(SqlError::unsupported("MODIFY / CHANGE … PRIMARY KEY"));
    }
    let before = l.def.columns[i].clone();
    if decl.collation.is_none() && schema::has_collation(&decl.col.ty) {
        // As in MySQL: a column redefined without COLLATE takes the
        // table's default.
        decl.col.collation = l.def.collation;
    }
    let in_pk = l.origin[i].is_some_and(|o| old.pk.contains(&o));
    if in_pk && decl.col.collation != before.collation {
        // Every row's storage key (and every index entry's copy of it)
        // would change: not implemented.
        return Err(SqlError::unsupported(format!(
            "changing the collation of primary key column '{}' ({} to {})",
            before.name, before.collation, decl.col.collation
        )));
    }
    if in_pk {
        if decl.col.ty != before.ty {
            return Err(SqlError::unsupported(format!(
                "changing the type of primary key column '{}'",
                before.name
            )));
        }
        decl.col.nullable = false;
    }
    if decl.col.auto_increment && !before.auto_increment {
        return Err(SqlError::unsupported(format!(
            "adding AUTO_INCREMENT to existing column '{}'",
            before.name
        )));
    }
    // A new collation changes no stored value but every key over the
    // column: its indexes are rebuilt with the new key encoding.
    let converted = l.converted[i]
        || decl.col.ty != before.ty
        || decl.col.collation != before.collation
        || (before.nullable && !decl.col.nullable);
    let origin = l.origin[i];
    l.def.columns.remove(i);
    l.origin.remove(i);
    l.converted.remove(i);
    let at = match position_of {
        None => i,
        Some(p) => position(l, Some(p), i)?,
    };
    l.def.columns.insert(at, decl.col);
    l.origin.insert(at, origin);
    l.converted.insert(at, converted);
    if decl.unique {
        l.add_indexes.push(unique_column(&name));
    }
    Ok(())
}

/// Where `FIRST` / `AFTER c` puts a column (`default` without one).
fn position(l: &Layout, p: Option<&MySQLColumnPosition>, default: usize) -> SqlResult<usize> {
    match p {
        None => Ok(default),
        Some(MySQLColumnPosition::First) => Ok(0),
        Some(MySQLColumnPosition::After(c)) => Ok(existing(l, &ident_name(c))? + 1),
    }
}

/// Position of column `name` in the new layout, or 1054.
fn existing(l: &Layout, name: &str) -> SqlResult<usize> {
    l.def.column_index(name).ok_or_else(|| {
        SqlError::new(
            code::BAD_FIELD,
            format!("Unknown column '{name}' in '{}'", l.def.name),
        )
    })
}

fn duplicate_column(name: &str) -> SqlError {
    SqlError::new(1060, format!("Duplicate column name '{name}'"))
}

/// The UNIQUE index a column option asks for (named after the column).
fn unique_column(name: &str) -> IndexSpec {
    IndexSpec {
        name: name.to_string(),
        columns: vec![name.to_string()],
        unique: true,
        ..Default::default()
    }
}

/// ADD UNIQUE / INDEX / FULLTEXT as an index to create.
fn constraint_spec(t: &TableDef, c: &ast::TableConstraint) -> SqlResult<IndexSpec> {
    let names = crate::sql::schema::key_parts;
    let ((name, (columns, prefixes)), unique, fulltext) = match c {
        ast::TableConstraint::Unique(u) => (
            (
                u.index_name.as_ref().or(u.name.as_ref()).map(ident_name),
                names(&u.columns),
            ),
            true,
            false,
        ),
        ast::TableConstraint::Index(ix) => (
            (ix.name.as_ref().map(ident_name), names(&ix.columns)),
            false,
            false,
        ),
        ast::TableConstraint::FulltextOrSpatial(ft) if ft.fulltext => (
            (
                ft.opt_index_name.as_ref().map(ident_name),
                names(&ft.columns),
            ),
            false,
            true,
        ),
        other => return Err(SqlError::unsupported(format!("ALTER TABLE … ADD {other}"))),
    };
    let first = columns.first().cloned().unwrap_or_else(|| "idx".into());
    Ok(IndexSpec {
        name: name.unwrap_or(first),
        columns,
        unique,
        fulltext,
        prefixes,
        table: Name {
            db: Some(t.db.clone()),
            name: t.name.clone(),
        },
        ..Default::default()
    })
}

/// Make the new layout real in the ALTER's transaction: indexes, rows,
/// catalog record. `recreate` gets the ISCP indexes to create after commit.
fn apply(
    cx: &mut Ctx<'_>,
    old: &TableDef,
    mut l: Layout,
    dropped: &mut Vec<Dropped>,
    created: &mut Vec<(crate::iscp::JobKey, crate::iscp::log::JobSpec)>,
) -> SqlResult<QueryResult> {
    let mut recreate: Vec<IndexSpec> = Vec::new();
    let identity = l.origin.len() == old.columns.len()
        && l.origin.iter().enumerate().all(|(i, o)| *o == Some(i))
        && !l.converted.iter().any(|c| *c);
    let new_pos = |p: usize| l.origin.iter().position(|o| *o == Some(p));
    l.def.pk = old.pk.iter().filter_map(|&p| new_pos(p)).collect();
    // Each index: kept (renumbered), rebuilt, or dropped.
    let mut kept: Vec<IndexDef> = Vec::new();
    let mut rebuild_btrees: Vec<IndexSpec> = Vec::new();
    for ix in &old.indexes {
        let cols: Vec<usize> = ix.columns.iter().filter_map(|&p| new_pos(p)).collect();
        let lost = cols.len() < ix.columns.len();
        let converted = cols.iter().any(|&c| l.converted[c]);
        let moved = cols != ix.columns;
        let mut renumbered = ix.clone();
        renumbered.columns = cols.clone();
        let iscp = ix.job_id.is_some();
        if cols.is_empty() || lost || converted || (iscp && moved) {
            schema::drop_index_parts(cx, old, ix, dropped)?;
            if !cols.is_empty() {
                let mut spec = schema::spec_of(&l.def, &renumbered);
                spec.table = Name {
                    db: Some(l.def.db.clone()),
                    name: l.def.name.clone(),
                };
                if iscp {
                    recreate.push(spec);
                } else {
                    rebuild_btrees.push(spec);
                }
            }
        } else {
            kept.push(renumbered);
        }
    }
    l.def.indexes = kept;
    let mut new_btrees = Vec::new();
    let mut new_iscp: Vec<IndexDef> = Vec::new();
    for (spec, recreated) in rebuild_btrees
        .into_iter()
        .chain(std::mem::take(&mut l.add_indexes))
        .map(|s| (s, false))
        .chain(recreate.into_iter().map(|s| (s, true)))
    {
        if l.def.index(&spec.name).is_some()
            || new_btrees
                .iter()
                .chain(&new_iscp)
                .any(|i: &IndexDef| i.name.eq_ignore_ascii_case(&spec.name))
        {
            return Err(SqlError::new(
                code::DUP_KEYNAME,
                format!("Duplicate key name '{}'", spec.name),
            ));
        }
        let ix = schema::index_def(cx, &l.def, &spec)?;
        debug_assert!(
            !recreated || ix.job_id.is_some(),
            "only ISCP indexes are recreated"
        );
        if ix.job_id.is_some() {
            new_iscp.push(ix);
        } else {
            new_btrees.push(ix);
        }
    }
    // The table as it will be named once committed: what the new jobs
    // record.
    let mut target = l.def.clone();
    if let Some((db, name)) = &l.rename {
        target.db = db.clone();
        target.name = name.clone();
    }
    let sync: Vec<&IndexDef> = new_iscp
        .iter()
        .filter(|ix| crate::iscp::log::JobSpec::of(&target, ix).is_sync_live())
        .collect();
    if !identity || !new_btrees.is_empty() || !sync.is_empty() {
        rewrite_rows(cx, old, &l, identity, &new_btrees, &sync)?;
    }
    for ix in &new_iscp {
        // Its job and searches read the table's change log from now on.
        cx.engine
            .storage
            .set_change_log_on_demand(target.id, false)?;
        let key = crate::iscp::log::register_job(cx.txn, &target, ix)?;
        created.push((key, crate::iscp::log::JobSpec::of(&target, ix)));
    }
    l.def.indexes.extend(new_btrees);
    l.def.indexes.extend(new_iscp);
    // Foreign keys: the dropped ones first (`DROP FOREIGN KEY k, DROP
    // COLUMN c` is allowed), column changes checked against the rest, then
    // the new ones added (their rows must find their parents).
    for name in std::mem::take(&mut l.drop_fks) {
        fk::drop_key(cx, &mut l.def, &name)?;
    }
    fk::check_alter(cx, old, &mut l.def, &l.origin)?;
    let from = fk::add(cx, &mut l.def, &std::mem::take(&mut l.add_fks))?;
    // CHECK constraints: the dropped ones first (`DROP CHECK c, ADD
    // CONSTRAINT c CHECK …` renews one), then the new ones, which every
    // row must pass.
    for name in std::mem::take(&mut l.drop_checks) {
        l.def.checks.retain(|c| !c.name.eq_ignore_ascii_case(&name));
    }
    let adding = std::mem::take(&mut l.add_checks);
    if !adding.is_empty() {
        let taken = check_constraint::names_in(cx, &old.db, Some(&old.name))?;
        let before = l.def.checks.len();
        check_constraint::add(&mut l.def, adding, &taken)?;
        let names: Vec<String> = l.def.checks[before..]
            .iter()
            .map(|c| c.name.clone())
            .collect();
        check_rows(cx, &l.def, &names, !identity)?;
    }
    check_constraint::check_fk_actions(&l.def)?;
    fk::check_rows(cx, &l.def, from, identity)?;
    match l.rename.take() {
        Some(to) => {
            catalog::put_table(cx.txn, &l.def)?;
            rename(cx, l.def, &to)?;
        }
        None => catalog::put_table(cx.txn, &l.def)?,
    }
    Ok(QueryResult::default())
}

/// Rewrite every row of `old` in the new layout (unless `identity`) and
/// fill the new B-tree indexes and the entries of the new synchronous
/// vector / full-text indexes (`sync`) from the new rows, all in the
/// ALTER's transaction.
fn rewrite_rows(
    cx: &mut Ctx<'_>,
    old: &TableDef,
    l: &Layout,
    identity: bool,
    new_btrees: &[IndexDef],
    sync: &[&IndexDef],
) -> SqlResult<()> {
    let rows = schema::current_rows(cx, old)?;
    let keep = !new_btrees.is_empty() || !sync.is_empty();
    let mut out: Vec<(Vec<u8>, Vec<Value>)> = Vec::with_capacity(if keep { rows.len() } else { 0 });
    let mut count = 0u64;
    for (i, (k, v)) in rows.into_iter().enumerate() {
        if i.is_multiple_of(INTERRUPT_EVERY) {
            let fault = tributary_fault::hit_blocking(
                tributary_fault::points::DDL_ALTER_REWRITE,
                Some(&old.name),
                cx.session.interrupt.token(),
            );
            cx.txn.check_interrupt()?;
            fault.map_err(SqlError::from)?;
        }
        count += 1;
        let before =
            decode_row(&v).map_err(|e| SqlError::internal(format!("{}: {e}", old.qualified())))?;
        let row = if identity {
            before
        } else {
            let row = new_row(l, before, count)?;
            cx.txn.put(old.id, &k, encode_row(&row))?;
            row
        };
        if keep {
            out.push((k, row));
        }
    }
    for ix in new_btrees {
        schema::fill_btree(
            cx,
            &l.def,
            ix,
            out.iter().map(|(k, r)| Ok((k.as_slice(), r))),
        )?;
    }
    for ix in sync {
        schema::fill_entries(
            cx,
            ix,
            out.iter().map(|(k, r)| (k.as_slice(), r.as_slice())),
        )?;
    }
    Ok(())
}

/// One row in the new layout: kept values (converted where the type
/// changed) and defaults for added columns. Row `n` (1-based) names the
/// row in errors, as MySQL does.
fn new_row(l: &Layout, mut before: Vec<Value>, n: u64) -> SqlResult<Vec<Value>> {
    let mut row = Vec::with_capacity(l.def.columns.len());
    for (i, col) in l.def.columns.iter().enumerate() {
        let v = match l.origin[i] {
            Some(p) => before
                .get_mut(p)
                .map_or(Value::Null, |v| std::mem::replace(v, Value::Null)),
            None => col
                .default
                .clone()
                .or_else(|| (!col.nullable).then(|| implicit_default(&col.ty)).flatten())
                .unwrap_or(Value::Null),
        };
        let v = if l.converted[i] && !v.is_null() {
            coerce_value(&col.ty, v, &col.name)
                .map_err(|e| SqlError::new(e.code, format!("{} at row {n}", e.message)))?
        } else {
            v
        };
        if v.is_null() && !col.nullable {
            return Err(SqlError::new(
                1138,
                format!("Invalid use of NULL value (column '{}', row {n})", col.name),
            ));
        }
        row.push(v);
    }
    Ok(row)
}

/// What MySQL puts in a NOT NULL column added without a DEFAULT: zero for
/// numbers, the empty string for text; none for other types (the ALTER
/// then fails with 1138 on a table that has rows).
fn implicit_default(ty: &DataType) -> Option<Value> {
    match ty {
        DataType::Bool | DataType::Int | DataType::BigInt | DataType::Integer { .. } => {
            Some(Value::Int(0))
        }
        DataType::Float | DataType::Double => Some(Value::Float(0.0)),
        DataType::Decimal(_, s) => Some(Value::Decimal(
            crate::decimal::Decimal::from_i64(0).rescale(*s),
        )),
        DataType::Varchar(_) | DataType::Text => Some(Value::Text(String::new())),
        DataType::Json => Some(Value::Text("null".into())),
        // MySQL's empty binary string (BINARY(n): n zero bytes).
        DataType::Binary(n) => Some(Value::Bytes(vec![0; *n as usize])),
        DataType::VarBinary(_) | DataType::Blob(_) => Some(Value::Bytes(Vec::new())),
        DataType::DateTime
        | DataType::DateTimeFsp(_)
        | DataType::Date
        | DataType::VecF32(_)
        | DataType::VecF64(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn implicit_defaults_cover_numbers_and_text_only() {
        assert_eq!(implicit_default(&DataType::Int), Some(Value::Int(0)));
        assert_eq!(
            implicit_default(&DataType::Text),
            Some(Value::Text(String::new()))
        );
        assert_eq!(implicit_default(&DataType::VecF32(3)), None);
        assert_eq!(implicit_default(&DataType::DateTime), None);
    }
}
