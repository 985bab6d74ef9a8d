//! FOREIGN KEY enforcement in the writing transaction, as InnoDB does it
//! row by row: a child row's new values need a parent row (1452, checked
//! after the row is written, so a row may reference itself); a parent
//! row that is deleted or whose referenced columns change takes its
//! children along by the key's rule — RESTRICT / NO ACTION refuse (1451),
//! CASCADE deletes them or gives them the new values, SET NULL clears
//! their key columns — recursively, at most 15 levels deep (3008).
//!
//! Owns: finding the rows that match a key (through the primary key or a
//! synchronous B-tree index whose leading columns are the key's, a scan
//! when there is none), the locks those reads take (a parent row found
//! for a child is share-locked until commit, every child row touched is
//! locked exclusively), and the cascade chain. Cascaded writes are
//! ordinary writes ([`crate::sql::write`]): they reach the child's
//! synchronous indexes here and its ASYNC indexes through the change log.
//!
//! Never: runs when `foreign_key_checks` is off (mysqldump's loads), reads
//! a key through an ASYNC index (its entries lag the transaction), or
//! changes a catalog record (the definitions are [`crate::sql::fk`]'s).

use std::ops::Bound;
use std::sync::Arc;

use crate::catalog::codec::{decode_row, encode_key_in, prefix_end};
use crate::catalog::schema::{FkAction, ForeignKeyDef};
use crate::catalog::{self, IndexKind, TableDef};
use crate::error::{code, SqlError, SqlResult};
use crate::sql::write;
use crate::sql::Ctx;
use crate::types::Value;

/// InnoDB's cascade depth limit (`FK_MAX_CASCADE_DEL`).
pub const MAX_CASCADE_DEPTH: usize = 15;

/// Whether `foreign_key_checks` is on for the session (the default).
pub fn checks_on(cx: &Ctx<'_>) -> bool {
    cx.session
        .vars
        .get("foreign_key_checks")
        .is_none_or(|v| v != "OFF")
}

/// The row stored under `key` now, for a statement whose matched row
/// `old` may have been changed or deleted by a cascade of an earlier row
/// of the same statement (only a table some key references can be).
pub fn current(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    key: &[u8],
    old: Vec<Value>,
) -> SqlResult<Option<Vec<Value>>> {
    if t.referenced_by.is_empty() {
        return Ok(Some(old));
    }
    match cx.txn.get(t.id, key, true)? {
        None => Ok(None),
        Some(b) => decode_row(&b)
            .map(Some)
            .map_err(|e| SqlError::internal(e.to_string())),
    }
}

/// Error 1452 for key `fk` of `child`.
fn no_parent(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::new(
        code::NO_REFERENCED_ROW,
        format!(
            "Cannot add or update a child row: a foreign key constraint fails (`{}`.`{}`, CONSTRAINT `{}` {})",
            child.db,
            child.name,
            fk.name,
            fk.clause(&child.db)
        ),
    )
}

/// Error 1451 for key `fk` of `child`.
fn referenced(child: &TableDef, fk: &ForeignKeyDef) -> SqlError {
    SqlError::new(
        code::ROW_IS_REFERENCED,
        format!(
            "Cannot delete or update a parent row: a foreign key constraint fails (`{}`.`{}`, CONSTRAINT `{}` {})",
            child.db,
            child.name,
            fk.name,
            fk.clause(&child.db)
        ),
    )
}

/// Positions of `names` in `t` (`None` if one is missing: a definition
/// left dangling while `foreign_key_checks` was off).
fn positions(t: &TableDef, names: &[String]) -> Option<Vec<usize>> {
    names.iter().map(|n| t.column_index(n)).collect()
}

fn values(row: &[Value], cols: &[usize]) -> Vec<Value> {
    cols.iter()
        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
        .collect()
}

/// A table some key names, read as a writer reads it (an
/// intention-exclusive lock on its catalog record, so no DDL changes it
/// under the statement); `None` when it does not exist.
fn table(cx: &mut Ctx<'_>, db: &str, name: &str) -> SqlResult<Option<Arc<TableDef>>> {
    match catalog::require_table_for_write(cx.txn, db, name, true) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.code == code::NO_SUCH_TABLE => Ok(None),
        Err(e) => Err(e),
    }
}

/// How a row is locked when a key finds it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Lock {
    /// A parent row a child needs: shared (deletes of it wait).
    Share,
    /// A child row the cascade writes or a refusal depends on.
    Exclusive,
}

/// The rows of `t` whose columns `cols` equal `vals` (no NULL among
/// them), locked, latest committed versions plus own writes: through the
/// primary key or a synchronous B-tree index whose leading columns are
/// `cols`, else a scan. `stop_at_first` for an existence test.
fn find_rows(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    cols: &[usize],
    vals: &[Value],
    lock: Lock,
    stop_at_first: bool,
) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    debug_assert!(vals.iter().all(|v| !v.is_null()), "NULL keys match nothing");
    let colls = t.key_collations(cols);
    let want = encode_key_in(vals, &colls);
    // Candidate storage keys.
    let keys: Vec<Vec<u8>> = if !t.pk.is_empty() && t.pk == cols {
        vec![t.pk_key(vals)]
    } else if !t.pk.is_empty() && t.pk.starts_with(cols) {
        prefix_keys(cx, t.id, &want, false)?
    } else if let Some(ix) = t.indexes.iter().find(|ix| {
        !ix.is_async && matches!(ix.kind, IndexKind::BTree { .. }) && ix.columns.starts_with(cols)
    }) {
        if matches!(ix.kind, IndexKind::BTree { unique: true }) && ix.columns == cols {
            // One entry at most, keyed by the values alone: read (and
            // locked) as the latest committed, like the primary key.
            let entry = match lock {
                Lock::Share => cx.txn.get_for_share(ix.storage_id, &want)?,
                Lock::Exclusive => cx.txn.get(ix.storage_id, &want, true)?,
            };
            entry.into_iter().collect()
        } else {
            prefix_keys(cx, ix.storage_id, &want, true)?
        }
    } else {
        prefix_keys(cx, t.id, &[], false)?
    };
    let mut out = Vec::new();
    for k in keys {
        crate::sql::budget::tick()?;
        let got = match lock {
            Lock::Share => cx.txn.get_for_share(t.id, &k)?,
            Lock::Exclusive => cx.txn.get(t.id, &k, true)?,
        };
        let Some(bytes) = got else {
            continue;
        };
        let row = decode_row(&bytes).map_err(|e| SqlError::internal(e.to_string()))?;
        // Equal under the columns' collations (what the key compares).
        if encode_key_in(&values(&row, cols), &colls) != want {
            continue;
        }
        out.push((k, row));
        if stop_at_first {
            break;
        }
    }
    Ok(out)
}

/// Storage keys under `prefix` of a table (`entries`: the values of an
/// index's entries, which are the rows' storage keys).
fn prefix_keys(
    cx: &mut Ctx<'_>,
    storage: u64,
    prefix: &[u8],
    entries: bool,
) -> SqlResult<Vec<Vec<u8>>> {
    let end = match prefix_end(prefix) {
        Some(e) if !prefix.is_empty() => Bound::Excluded(e),
        _ => Bound::Unbounded,
    };
    let mut out = Vec::new();
    cx.txn.scan_visit(
        storage,
        Bound::Included(prefix),
        end.as_ref().map(Vec::as_slice),
        &mut |k, v| {
            out.push(if entries { v.to_vec() } else { k.to_vec() });
            true
        },
    )?;
    Ok(out)
}

/// Check the foreign keys of child table `t` for a row written as `new`
/// (replacing `old` for an update): every key whose columns changed and
/// hold no NULL must find its parent row, which stays share-locked.
pub fn check_parents(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    old: Option<&[Value]>,
    new: &[Value],
) -> SqlResult<()> {
    if t.foreign_keys.is_empty() || !checks_on(cx) {
        return Ok(());
    }
    for fk in &t.foreign_keys {
        if let Some(o) = old {
            let cols = positions(t, &fk.columns).unwrap_or_default();
            if values(o, &cols) == values(new, &cols) {
                continue;
            }
        }
        check_key(cx, t, fk, new)?;
    }
    Ok(())
}

/// Key `fk` of child table `t` for its row `row`: no NULL in the key's
/// columns means a parent row must exist (1452); it stays share-locked.
pub fn check_key(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    fk: &ForeignKeyDef,
    row: &[Value],
) -> SqlResult<()> {
    let Some(cols) = positions(t, &fk.columns) else {
        return Err(no_parent(t, fk));
    };
    let vals = values(row, &cols);
    if vals.iter().any(Value::is_null) {
        return Ok(());
    }
    let parent = if fk.references(&t.db, &t.name) {
        None
    } else {
        match table(cx, &fk.parent_db, &fk.parent_table)? {
            Some(p) => Some(p),
            None => return Err(no_parent(t, fk)),
        }
    };
    let p: &TableDef = parent.as_deref().unwrap_or(t);
    let Some(pcols) = positions(p, &fk.parent_columns) else {
        return Err(no_parent(t, fk));
    };
    if find_rows(cx, p, &pcols, &vals, Lock::Share, true)?.is_empty() {
        return Err(no_parent(t, fk));
    }
    Ok(())
}

/// The cascade under way: how deep, and which tables its update steps
/// (a parent UPDATE, ON UPDATE CASCADE, SET NULL) write — InnoDB refuses
/// a cascaded update of a table an update step above it writes (1451),
/// so a self-referencing ON UPDATE CASCADE cannot loop.
#[derive(Default)]
struct Chain {
    depth: usize,
    updating: Vec<u64>,
}

impl Chain {
    fn deeper(&mut self) -> SqlResult<()> {
        self.depth += 1;
        if self.depth >= MAX_CASCADE_DEPTH {
            return Err(SqlError::new(
                code::FK_DEPTH_EXCEEDED,
                format!(
                    "Foreign key cascade delete/update exceeds max depth of {MAX_CASCADE_DEPTH}."
                ),
            ));
        }
        Ok(())
    }
}

/// Before parent row `old` (stored under `key`) of `t` is deleted: its
/// children follow each key's ON DELETE rule.
pub fn parent_deleted(cx: &mut Ctx<'_>, t: &TableDef, key: &[u8], old: &[Value]) -> SqlResult<()> {
    if t.referenced_by.is_empty() || !checks_on(cx) {
        return Ok(());
    }
    deleted(cx, t, key, old, &mut Chain::default())
}

/// Before row `old` (under `key`) of `t` becomes `new`: the children of
/// its old referenced values follow each key's ON UPDATE rule.
pub fn parent_updated(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    key: &[u8],
    old: &[Value],
    new: &[Value],
) -> SqlResult<()> {
    if t.referenced_by.is_empty() || !checks_on(cx) {
        return Ok(());
    }
    let mut chain = Chain {
        depth: 0,
        updating: vec![t.id],
    };
    updated(cx, t, key, old, new, &mut chain)
}

/// The keys referencing `t`, with their child tables (`t` itself for a
/// self-referencing key).
fn child_keys(cx: &mut Ctx<'_>, t: &TableDef) -> SqlResult<Vec<(Arc<TableDef>, ForeignKeyDef)>> {
    let mut out = Vec::new();
    for (db, name) in &t.referenced_by {
        let child = if *db == t.db && *name == t.name {
            Arc::new(t.clone())
        } else {
            match table(cx, db, name)? {
                Some(c) => c,
                None => continue,
            }
        };
        for fk in &child.foreign_keys {
            if fk.references(&t.db, &t.name) {
                out.push((child.clone(), fk.clone()));
            }
        }
    }
    // InnoDB visits a parent's keys in the order of their ids
    // (`db/name`): which key refuses first decides the error's text.
    out.sort_by(|(a, x), (b, y)| (&a.db, &x.name).cmp(&(&b.db, &y.name)));
    Ok(out)
}

/// The child rows of `child` that key `fk` finds for parent row `row` of
/// `t` (none when a referenced value is NULL), locked exclusively.
fn children(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    row: &[Value],
    child: &TableDef,
    fk: &ForeignKeyDef,
    stop_at_first: bool,
) -> SqlResult<Vec<(Vec<u8>, Vec<Value>)>> {
    let (Some(pcols), Some(ccols)) = (
        positions(t, &fk.parent_columns),
        positions(child, &fk.columns),
    ) else {
        return Ok(Vec::new());
    };
    let vals = values(row, &pcols);
    if vals.iter().any(Value::is_null) {
        return Ok(Vec::new());
    }
    find_rows(cx, child, &ccols, &vals, Lock::Exclusive, stop_at_first)
}

fn deleted(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    key: &[u8],
    old: &[Value],
    chain: &mut Chain,
) -> SqlResult<()> {
    if t.referenced_by.is_empty() {
        return Ok(());
    }
    for (child, fk) in child_keys(cx, t)? {
        let restrict = matches!(fk.on_delete, FkAction::NoAction | FkAction::Restrict);
        let rows = children(cx, t, old, &child, &fk, restrict)?;
        for (ck, crow) in rows {
            // A row referencing itself goes with its own delete (InnoDB
            // skips the record it is deleting); only RESTRICT refuses it.
            let itself = child.id == t.id && ck == key;
            match fk.on_delete {
                FkAction::NoAction | FkAction::Restrict => return Err(referenced(&child, &fk)),
                _ if itself => {}
                FkAction::Cascade => {
                    chain.deeper()?;
                    deleted(cx, &child, &ck, &crow, chain)?;
                    write::delete_row(cx, &child, &ck, &crow)?;
                    chain.depth -= 1;
                }
                FkAction::SetNull => set_null(cx, &child, &fk, &ck, &crow, chain)?,
            }
        }
    }
    Ok(())
}

fn updated(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    key: &[u8],
    old: &[Value],
    new: &[Value],
    chain: &mut Chain,
) -> SqlResult<()> {
    if t.referenced_by.is_empty() {
        return Ok(());
    }
    for (child, fk) in child_keys(cx, t)? {
        let Some(pcols) = positions(t, &fk.parent_columns) else {
            continue;
        };
        let new_vals = values(new, &pcols);
        if values(old, &pcols) == new_vals {
            continue;
        }
        let restrict = matches!(fk.on_update, FkAction::NoAction | FkAction::Restrict);
        let rows = children(cx, t, old, &child, &fk, restrict)?;
        for (ck, crow) in rows {
            if child.id == t.id && ck == key && !restrict {
                continue;
            }
            match fk.on_update {
                FkAction::NoAction | FkAction::Restrict => return Err(referenced(&child, &fk)),
                FkAction::Cascade => {
                    let Some(ccols) = positions(&child, &fk.columns) else {
                        continue;
                    };
                    let mut cnew = crow.clone();
                    for (&c, v) in ccols.iter().zip(&new_vals) {
                        cnew[c] = v.clone();
                    }
                    update_child(cx, &child, &fk, &ck, &crow, &cnew, chain)?;
                }
                FkAction::SetNull => set_null(cx, &child, &fk, &ck, &crow, chain)?,
            }
        }
    }
    Ok(())
}

/// SET NULL: the child row's key columns become NULL.
fn set_null(
    cx: &mut Ctx<'_>,
    child: &TableDef,
    fk: &ForeignKeyDef,
    key: &[u8],
    row: &[Value],
    chain: &mut Chain,
) -> SqlResult<()> {
    let Some(ccols) = positions(child, &fk.columns) else {
        return Ok(());
    };
    let mut new = row.to_vec();
    for &c in &ccols {
        debug_assert!(
            child.columns.get(c).is_some_and(|c| c.nullable),
            "SET NULL on a NOT NULL column is refused at CREATE"
        );
        new[c] = Value::Null;
    }
    update_child(cx, child, fk, key, row, &new, chain)
}

/// A cascaded update of a child row (ON UPDATE CASCADE, SET NULL): one
/// level deeper, refused where an update above already writes the table,
/// its own children following in turn.
fn update_child(
    cx: &mut Ctx<'_>,
    child: &TableDef,
    fk: &ForeignKeyDef,
    key: &[u8],
    old: &[Value],
    new: &[Value],
    chain: &mut Chain,
) -> SqlResult<()> {
    if chain.updating.contains(&child.id) {
        return Err(referenced(child, fk));
    }
    chain.deeper()?;
    chain.updating.push(child.id);
    updated(cx, child, key, old, new, chain)?;
    write::rewrite_row(cx, child, key, old, new)?;
    chain.updating.pop();
    chain.depth -= 1;
    Ok(())
}
