//! FOREIGN KEY definitions: what CREATE TABLE, ALTER TABLE ADD / DROP
//! FOREIGN KEY, DROP TABLE / INDEX / DATABASE, RENAME and column changes
//! do to them, with MySQL 8's (InnoDB's) rules and error codes.
//!
//! Owns: reading a key from the AST (table constraint or column
//! `REFERENCES`), its name (`<table>_ibfk_<n>` unless named), the index
//! the child gets when none of its indexes starts with the key's columns,
//! the checks against the parent (table 1824, columns 3734, an index
//! whose leading columns are the referenced ones 1822, compatible types
//! 3780, SET NULL on a NOT NULL column 1830, SET DEFAULT 1215), and the
//! parent's `referenced_by` list, kept in step with every DDL that moves
//! a key's ends. With `foreign_key_checks` off a key may name a parent
//! that does not exist yet (mysqldump creates tables in name order); a
//! table created later adopts the keys that name it.
//!
//! Never: checks or writes rows of a DML statement (that is
//! [`crate::sql::fk_enforce`]), or counts an ASYNC index as supporting a
//! key (its entries lag the writing transaction).

use sqlparser::ast;

use crate::catalog::codec::decode_row;
use crate::catalog::schema::{ColumnDef, FkAction, ForeignKeyDef};
use crate::catalog::{self, IndexKind, TableDef};
use crate::error::{code, SqlError, SqlResult};
use crate::sql::expr::{ident_name, object_parts};
use crate::sql::fk_enforce::{self, checks_on};
use crate::sql::parse::{IndexSpec, Name};
use crate::sql::Ctx;
use crate::types::DataType;

/// A key as declared, before it is checked against its parent.
#[derive(Debug, Clone)]
pub struct FkSpec {
    /// `CONSTRAINT name`.
    name: Option<String>,
    /// `FOREIGN KEY index_name (…)`.
    index_name: Option<String>,
    columns: Vec<String>,
    parent_db: Option<String>,
    parent_table: String,
    parent_columns: Vec<String>,
    on_delete: FkAction,
    on_update: FkAction,
}

fn action(a: Option<&ast::ReferentialAction>) -> SqlResult<FkAction> {
    use ast::ReferentialAction as R;
    Ok(match a {
        None | Some(R::NoAction) => FkAction::NoAction,
        Some(R::Restrict) => FkAction::Restrict,
        Some(R::Cascade) => FkAction::Cascade,
        Some(R::SetNull) => FkAction::SetNull,
        // InnoDB refuses SET DEFAULT.
        Some(R::SetDefault) => {
            return Err(SqlError::new(
                code::FK_CANNOT_ADD,
                "Cannot add foreign key constraint",
            ))
        }
    })
}

/// The key a FOREIGN KEY table constraint declares, or (`column`) the
/// key of a column's `REFERENCES p (c)` (a constraint of its own, as in
/// MariaDB and MySQL 9; MySQL 8 parsed and ignored it).
pub fn spec(c: &ast::ForeignKeyConstraint, column: Option<&str>) -> SqlResult<FkSpec> {
    if c.match_kind.is_some() || c.characteristics.is_some() {
        return Err(SqlError::unsupported(
            "FOREIGN KEY … MATCH / DEFERRABLE (InnoDB matches SIMPLE, checks at once)",
        ));
    }
    let columns: Vec<String> = match column {
        Some(col) => vec![col.to_string()],
        None => c.columns.iter().map(ident_name).collect(),
    };
    let parts = object_parts(&c.foreign_table);
    let (parent_db, parent_table) = match parts.as_slice() {
        [t] => (None, t.clone()),
        [d, t] => (Some(d.clone()), t.clone()),
        _ => {
            return Err(SqlError::parse(format!(
                "bad referenced table {}",
                c.foreign_table
            )))
        }
    };
    let parent_columns: Vec<String> = c.referred_columns.iter().map(ident_name).collect();
    let name = c.name.as_ref().map(ident_name);
    if parent_columns.len() != columns.len() || columns.is_empty() {
        return Err(SqlError::new(
            code::WRONG_FK_DEF,
            format!(
                "Incorrect foreign key definition for '{}': Key reference and table reference don't match",
                name.clone().unwrap_or_else(|| "foreign key without name".into())
            ),
        ));
    }
    Ok(FkSpec {
        name,
        index_name: c.index_name.as_ref().map(ident_name),
        columns,
        parent_db,
        parent_table,
        parent_columns,
        on_delete: action(c.on_delete.as_ref())?,
        on_update: action(c.on_update.as_ref())?,
    })
}

/// Whether an index spec makes a synchronous B-tree (what can support a
/// key).
fn sync_btree_spec(s: &IndexSpec) -> bool {
    !s.fulltext && !s.is_async && s.using.as_deref().is_none_or(|u| u == "btree")
}

fn starts_with(cols: &[String], key: &[String]) -> bool {
    cols.len() >= key.len() && cols.iter().zip(key).all(|(a, b)| a.eq_ignore_ascii_case(b))
}

/// The indexes a child table needs for `specs` (InnoDB creates one for a
/// key none of the table's indexes starts with): named after the
/// constraint, else the key's index name, else its first column, made
/// unique with `_2`, `_3`, … `pk` and `indexes` are the column names of
/// the primary key and of the table's (or statement's) indexes.
pub fn needed_indexes(
    table: &Name,
    pk: &[String],
    indexes: &[IndexSpec],
    specs: &[FkSpec],
) -> Vec<IndexSpec> {
    let mut out: Vec<IndexSpec> = Vec::new();
    for s in specs {
        let supported = (!pk.is_empty() && starts_with(pk, &s.columns))
            || indexes
                .iter()
                .chain(&out)
                .any(|ix| sync_btree_spec(ix) && starts_with(&ix.columns, &s.columns));
        if supported {
            continue;
        }
        let base = s
            .name
            .clone()
            .or_else(|| s.index_name.clone())
            .unwrap_or_else(|| s.columns[0].clone());
        let taken = |n: &str| {
            n.eq_ignore_ascii_case("primary")
                || indexes
                    .iter()
                    .chain(&out)
                    .any(|ix| ix.name.eq_ignore_ascii_case(n))
        };
        let mut name = base.clone();
        let mut k = 2;
        while taken(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        out.push(IndexSpec {
            name,
            table: table.clone(),
            columns: s.columns.clone(),
            ..Default::default()
        });
    }
    out
}

/// The specs of the synchronous B-tree indexes of `t` (by column name).
pub fn index_specs(t: &TableDef) -> Vec<IndexSpec> {
    t.indexes
        .iter()
        .map(|ix| IndexSpec {
            name: ix.name.clone(),
            columns: ix
                .columns
                .iter()
                .filter_map(|&c| t.columns.get(c).map(|c| c.name.clone()))
                .collect(),
            is_async: ix.is_async,
            fulltext: !matches!(ix.kind, IndexKind::BTree { .. }),
            ..Default::default()
        })
        .collect()
}

/// Column names of `t`'s primary key.
pub fn pk_names(t: &TableDef) -> Vec<String> {
    t.pk.iter()
        .filter_map(|&c| t.columns.get(c).map(|c| c.name.clone()))
        .collect()
}

/// Whether two columns can be a key's two ends (MySQL: the same type,
/// except that string lengths may differ; text in one collation).
fn compatible(a: &ColumnDef, b: &ColumnDef) -> bool {
    match (&a.ty, &b.ty) {
        (DataType::Varchar(_), DataType::Varchar(_)) | (DataType::Text, DataType::Text) => {
            a.collation == b.collation
        }
        (x, y) => x == y,
    }
}

/// Check key `fk` of `child` against `parent` (columns, index, types).
fn check_against_parent(child: &TableDef, fk: &ForeignKeyDef, parent: &TableDef) -> SqlResult<()> {
    for (c, p) in fk.columns.iter().zip(&fk.parent_columns) {
        let Some(pc) = parent.column_index(p) else {
            return Err(SqlError::new(
                code::FK_NO_COLUMN_PARENT,
                format!(
                    "Failed to add the foreign key constraint. Missing column '{p}' for constraint '{}' in the referenced table '{}'",
                    fk.name, parent.name
                ),
            ));
        };
        if let Some(cc) = child.column_index(c) {
            if !compatible(&child.columns[cc], &parent.columns[pc]) {
                return Err(incompatible(c, p, &fk.name));
            }
        }
    }
    if parent.key_index_for(&fk.parent_columns).is_none() {
        return Err(SqlError::new(
            code::FK_NO_INDEX_PARENT,
            format!(
                "Failed to add the foreign key constraint. Missing index for constraint '{}' in the referenced table '{}'",
                fk.name, parent.name
            ),
        ));
    }
    Ok(())
}

fn incompatible(c: &str, p: &str, name: &str) -> SqlError {
    SqlError::new(
        code::FK_INCOMPATIBLE_COLUMNS,
        format!(
            "Referencing column '{c}' and referenced column '{p}' in foreign key constraint '{name}' are incompatible."
        ),
    )
}

/// Every foreign-key name of database `db` (they are unique per
/// database, as InnoDB's).
fn names_in_db(cx: &mut Ctx<'_>, db: &str) -> SqlResult<Vec<String>> {
    Ok(catalog::list_tables(cx.txn, db)?
        .into_iter()
        .flat_map(|t| {
            t.foreign_keys
                .into_iter()
                .map(|f| f.name.to_ascii_lowercase())
        })
        .collect())
}

/// Add the keys of `specs` to child table `t` (whose indexes already
/// include [`needed_indexes`]'s): named, checked against their parents,
/// and entered in each parent's `referenced_by` (the parent's record is
/// written here; `t`'s is the caller's to write). Returns how many keys
/// `t` had before.
pub fn add(cx: &mut Ctx<'_>, t: &mut TableDef, specs: &[FkSpec]) -> SqlResult<usize> {
    let before = t.foreign_keys.len();
    if specs.is_empty() {
        return Ok(before);
    }
    let checks = checks_on(cx);
    let mut taken = names_in_db(cx, &t.db)?;
    // InnoDB numbers unnamed keys after the highest `<table>_ibfk_<n>`.
    let prefix = format!("{}_ibfk_", t.name.to_ascii_lowercase());
    let mut next = t
        .foreign_keys
        .iter()
        .filter_map(|f| {
            f.name
                .to_ascii_lowercase()
                .strip_prefix(&prefix)
                .and_then(|n| n.parse::<usize>().ok())
        })
        .max()
        .unwrap_or(0);
    for s in specs {
        let name = match &s.name {
            Some(n) => n.clone(),
            None => {
                next += 1;
                format!("{}_ibfk_{next}", t.name)
            }
        };
        if taken.contains(&name.to_ascii_lowercase()) {
            return Err(SqlError::new(
                code::FK_DUP_NAME,
                format!("Duplicate foreign key constraint name '{name}'"),
            ));
        }
        taken.push(name.to_ascii_lowercase());
        let fk = ForeignKeyDef {
            name,
            columns: s.columns.clone(),
            parent_db: s.parent_db.clone().unwrap_or_else(|| t.db.clone()),
            parent_table: s.parent_table.clone(),
            parent_columns: s.parent_columns.clone(),
            on_delete: s.on_delete,
            on_update: s.on_update,
        };
        for c in &fk.columns {
            let Some(i) = t.column_index(c) else {
                return Err(SqlError::new(
                    code::KEY_COLUMN_DOES_NOT_EXIST,
                    format!("Key column '{c}' doesn't exist in table"),
                ));
            };
            let set_null = fk.on_delete == FkAction::SetNull || fk.on_update == FkAction::SetNull;
            if set_null && !t.columns[i].nullable {
                return Err(SqlError::new(
                    code::FK_COLUMN_NOT_NULL,
                    format!(
                        "Column '{}' cannot be NOT NULL: needed in a foreign key constraint '{}' SET NULL",
                        t.columns[i].name, fk.name
                    ),
                ));
            }
        }
        if fk.references(&t.db, &t.name) {
            check_against_parent(t, &fk, t)?;
            if !t.referenced_by.contains(&(t.db.clone(), t.name.clone())) {
                t.referenced_by.push((t.db.clone(), t.name.clone()));
            }
        } else {
            match catalog::get_table(cx.txn, &fk.parent_db, &fk.parent_table, true)? {
                Some(mut p) if p.view.is_none() => {
                    check_against_parent(t, &fk, &p)?;
                    let me = (t.db.clone(), t.name.clone());
                    if !p.referenced_by.contains(&me) {
                        p.referenced_by.push(me);
                        catalog::put_table(cx.txn, &p)?;
                    }
                }
                // mysqldump: the parent comes later (adopted then).
                None if !checks => {}
                _ => {
                    return Err(SqlError::new(
                        code::FK_CANNOT_OPEN_PARENT,
                        format!("Failed to open the referenced table '{}'", fk.parent_table),
                    ))
                }
            }
        }
        t.foreign_keys.push(fk);
    }
    Ok(before)
}

/// A table just created: the keys of other tables that already name it
/// (made while `foreign_key_checks` was off) now reference it.
pub fn adopt(cx: &mut Ctx<'_>, t: &mut TableDef) -> SqlResult<()> {
    for other in catalog::list_all_tables(cx.txn)? {
        if (other.db == t.db && other.name == t.name) || other.view.is_some() {
            continue;
        }
        if other
            .foreign_keys
            .iter()
            .any(|f| f.references(&t.db, &t.name))
        {
            let me = (other.db.clone(), other.name.clone());
            if !t.referenced_by.contains(&me) {
                t.referenced_by.push(me);
            }
        }
    }
    Ok(())
}

/// ALTER TABLE … ADD FOREIGN KEY with checks on: every existing row of
/// `t` must find its parent for the keys added (from `from` on).
pub fn check_rows(cx: &mut Ctx<'_>, t: &TableDef, from: usize, committed: bool) -> SqlResult<()> {
    if !checks_on(cx) || from >= t.foreign_keys.len() {
        return Ok(());
    }
    let rows = if committed {
        crate::sql::schema::current_rows(cx, t)?
    } else {
        cx.txn.scan(
            t.id,
            std::ops::Bound::Unbounded,
            std::ops::Bound::Unbounded,
            usize::MAX,
        )?
    };
    for (_, bytes) in rows {
        crate::sql::budget::tick()?;
        let row = decode_row(&bytes).map_err(|e| SqlError::internal(e.to_string()))?;
        for fk in &t.foreign_keys[from..] {
            fk_enforce::check_key(cx, t, fk, &row)?;
        }
    }
    Ok(())
}

/// Remove `(db, name)` from the `referenced_by` of table `parent`
/// (unless it is `t` itself, whose record the caller writes).
fn detach(cx: &mut Ctx<'_>, t: &mut TableDef, parent_db: &str, parent: &str) -> SqlResult<()> {
    let me = (t.db.clone(), t.name.clone());
    if parent_db == t.db && parent == t.name {
        t.referenced_by.retain(|r| *r != me);
        return Ok(());
    }
    if let Some(mut p) = catalog::get_table(cx.txn, parent_db, parent, true)? {
        if p.referenced_by.contains(&me) {
            p.referenced_by.retain(|r| *r != me);
            catalog::put_table(cx.txn, &p)?;
        }
    }
    Ok(())
}

/// `ALTER TABLE t DROP FOREIGN KEY name` (1091 when `t` has no such key;
/// the key's index stays, as in MySQL).
pub fn drop_key(cx: &mut Ctx<'_>, t: &mut TableDef, name: &str) -> SqlResult<()> {
    let Some(i) = t
        .foreign_keys
        .iter()
        .position(|f| f.name.eq_ignore_ascii_case(name))
    else {
        return Err(SqlError::new(
            code::CANT_DROP_FIELD_OR_KEY,
            format!("Can't DROP '{name}'; check that column/key exists"),
        ));
    };
    let fk = t.foreign_keys.remove(i);
    if !t
        .foreign_keys
        .iter()
        .any(|f| f.references(&fk.parent_db, &fk.parent_table))
    {
        detach(cx, t, &fk.parent_db, &fk.parent_table)?;
    }
    Ok(())
}

/// Before table `t` is dropped along with `dropping` (the statement's
/// other tables): with checks on, a key of another table referencing it
/// is error 3730 (MySQL 8's; MariaDB answers 1451); its own keys leave
/// their parents' `referenced_by`.
pub fn before_drop(cx: &mut Ctx<'_>, t: &TableDef, dropping: &[(String, String)]) -> SqlResult<()> {
    if checks_on(cx) {
        if let Some((child, fk)) = referencing_key(cx, t, dropping)? {
            return Err(SqlError::new(
                code::FK_DROP_TABLE,
                format!(
                    "Cannot drop table '{}' referenced by a foreign key constraint '{fk}' on table '{}'.",
                    t.name, child.name
                ),
            ));
        }
    }
    let mut t = t.clone();
    let parents: Vec<(String, String)> = t
        .foreign_keys
        .iter()
        .map(|f| (f.parent_db.clone(), f.parent_table.clone()))
        .collect();
    for (db, name) in parents {
        if !(db == t.db && name == t.name) {
            detach(cx, &mut t, &db, &name)?;
        }
    }
    Ok(())
}

/// TRUNCATE of a table another table's key references (with checks on):
/// error 1701, as InnoDB.
pub fn before_truncate(cx: &mut Ctx<'_>, t: &TableDef) -> SqlResult<()> {
    if !checks_on(cx) {
        return Ok(());
    }
    if let Some((child, fk)) = referencing_key(cx, t, &[])? {
        return Err(SqlError::new(
            code::TRUNCATE_ILLEGAL_FK,
            format!(
                "Cannot truncate a table referenced in a foreign key constraint (`{}`.`{}`, CONSTRAINT `{fk}`)",
                child.db, child.name
            ),
        ));
    }
    Ok(())
}

/// The first key of another table that references `t` — a child in
/// `t.referenced_by` other than `t` itself and the tables of `except` —
/// with that child, in `referenced_by`'s order.
fn referencing_key(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    except: &[(String, String)],
) -> SqlResult<Option<(TableDef, String)>> {
    for (db, name) in &t.referenced_by {
        if (*db == t.db && *name == t.name) || except.contains(&(db.clone(), name.clone())) {
            continue;
        }
        let Some(child) = catalog::get_table(cx.txn, db, name, false)? else {
            continue;
        };
        let found = child
            .foreign_keys
            .iter()
            .find(|f| f.references(&t.db, &t.name))
            .map(|f| f.name.clone());
        if let Some(fk) = found {
            return Ok(Some((child, fk)));
        }
    }
    Ok(None)
}

/// Table `t` (already renamed from `old_db`.`old_name`, its record not yet
/// written): its keys' parents and its children follow the new name.
pub fn renamed(cx: &mut Ctx<'_>, t: &mut TableDef, old_db: &str, old_name: &str) -> SqlResult<()> {
    let old = (old_db.to_string(), old_name.to_string());
    let new = (t.db.clone(), t.name.clone());
    // Self-references first.
    for fk in &mut t.foreign_keys {
        if fk.references(old_db, old_name) {
            fk.parent_db = new.0.clone();
            fk.parent_table = new.1.clone();
        }
    }
    for r in &mut t.referenced_by {
        if *r == old {
            *r = new.clone();
        }
    }
    let parents: Vec<(String, String)> = t
        .foreign_keys
        .iter()
        .map(|f| (f.parent_db.clone(), f.parent_table.clone()))
        .filter(|p| *p != new)
        .collect();
    for (db, name) in parents {
        if let Some(mut p) = catalog::get_table(cx.txn, &db, &name, true)? {
            if p.referenced_by.contains(&old) {
                p.referenced_by.retain(|r| *r != old);
                if !p.referenced_by.contains(&new) {
                    p.referenced_by.push(new.clone());
                }
                catalog::put_table(cx.txn, &p)?;
            }
        }
    }
    for (db, name) in t.referenced_by.clone() {
        if (db.clone(), name.clone()) == new {
            continue;
        }
        if let Some(mut c) = catalog::get_table(cx.txn, &db, &name, true)? {
            for fk in &mut c.foreign_keys {
                if fk.references(old_db, old_name) {
                    fk.parent_db = new.0.clone();
                    fk.parent_table = new.1.clone();
                }
            }
            catalog::put_table(cx.txn, &c)?;
        }
    }
    Ok(())
}

/// `t` as it will be after DROP INDEX: every key of its own and every key
/// referencing it still needs an index (1553 otherwise).
pub fn check_index_drop(cx: &mut Ctx<'_>, t: &TableDef, index: &str) -> SqlResult<()> {
    let needed = || {
        SqlError::new(
            code::DROP_INDEX_FK,
            format!("Cannot drop index '{index}': needed in a foreign key constraint"),
        )
    };
    for fk in &t.foreign_keys {
        if t.key_index_for(&fk.columns).is_none() {
            return Err(needed());
        }
    }
    for (db, name) in &t.referenced_by {
        let child = if *db == t.db && *name == t.name {
            t.clone()
        } else {
            match catalog::get_table(cx.txn, db, name, false)? {
                Some(c) => c,
                None => continue,
            }
        };
        for fk in child
            .foreign_keys
            .iter()
            .filter(|f| f.references(&t.db, &t.name))
        {
            if t.key_index_for(&fk.parent_columns).is_none() {
                return Err(needed());
            }
        }
    }
    Ok(())
}

/// ALTER TABLE's column changes against the keys: a dropped column a key
/// uses is refused (1828 for the table's own key, 1829 for a child's); a
/// renamed one is renamed in the keys (the children's records written
/// here); a retyped one must stay compatible with the other end (3780).
/// `origin[i]`: the old column new column `i` comes from.
pub fn check_alter(
    cx: &mut Ctx<'_>,
    old: &TableDef,
    new: &mut TableDef,
    origin: &[Option<usize>],
) -> SqlResult<()> {
    if new.foreign_keys.is_empty() && old.referenced_by.is_empty() {
        return Ok(());
    }
    // Old column name → new column name (None: dropped).
    let map: Vec<Option<String>> = (0..old.columns.len())
        .map(|o| {
            let i = origin.iter().position(|x| *x == Some(o))?;
            new.columns.get(i).map(|c| c.name.clone())
        })
        .collect();
    let renamed = |n: &str| -> Option<String> { map.get(old.column_index(n)?).cloned().flatten() };
    for fk in &mut new.foreign_keys {
        for c in &mut fk.columns {
            match renamed(c) {
                Some(n) => *c = n,
                None => {
                    return Err(SqlError::new(
                        code::FK_COLUMN_CANNOT_DROP,
                        format!(
                            "Cannot drop column '{c}': needed in a foreign key constraint '{}'",
                            fk.name
                        ),
                    ))
                }
            }
        }
        if fk.references(&old.db, &old.name) {
            for c in &mut fk.parent_columns {
                if let Some(n) = renamed(c) {
                    *c = n;
                }
            }
        }
    }
    for (db, name) in old.referenced_by.clone() {
        if db == old.db && name == old.name {
            continue;
        }
        let Some(mut child) = catalog::get_table(cx.txn, &db, &name, true)? else {
            continue;
        };
        let mut changed = false;
        for fk in child
            .foreign_keys
            .iter_mut()
            .filter(|f| f.references(&old.db, &old.name))
        {
            for c in &mut fk.parent_columns {
                match renamed(c) {
                    Some(n) if n == *c => {}
                    Some(n) => {
                        *c = n;
                        changed = true;
                    }
                    None => {
                        return Err(SqlError::new(
                            code::FK_COLUMN_CANNOT_DROP_CHILD,
                            format!(
                                "Cannot drop column '{c}': needed in a foreign key constraint '{}' of table '{}'",
                                fk.name, child.name
                            ),
                        ))
                    }
                }
            }
        }
        for fk in child
            .foreign_keys
            .iter()
            .filter(|f| f.references(&old.db, &old.name))
        {
            check_types(&child, fk, new)?;
        }
        if changed {
            catalog::put_table(cx.txn, &child)?;
        }
    }
    for fk in &new.foreign_keys {
        if fk.references(&new.db, &new.name) {
            check_types(new, fk, new)?;
        } else if let Some(p) = catalog::get_table(cx.txn, &fk.parent_db, &fk.parent_table, false)?
        {
            check_types(new, fk, &p)?;
        }
    }
    Ok(())
}

fn check_types(child: &TableDef, fk: &ForeignKeyDef, parent: &TableDef) -> SqlResult<()> {
    for (c, p) in fk.columns.iter().zip(&fk.parent_columns) {
        if let (Some(ci), Some(pi)) = (child.column_index(c), parent.column_index(p)) {
            if !compatible(&child.columns[ci], &parent.columns[pi]) {
                return Err(incompatible(c, p, &fk.name));
            }
        }
    }
    Ok(())
}
