//! Writing one row change of a user table in the writing transaction:
//! its storage key and its synchronous index entries (B-tree entries,
//! and the entries of non-ASYNC HNSW / full-text indexes). DML and the
//! foreign-key cascades ([`crate::sql::fk_enforce`]) write through it.
//!
//! Never decides whether a change is allowed (constraints are the
//! caller's) and never touches an ASYNC index: ISCP reads those changes
//! from the change log.

use crate::catalog::codec::{encode_key, encode_row};
use crate::catalog::entries::{self, dup_entry};
use crate::catalog::TableDef;
use crate::error::{SqlError, SqlResult};
use crate::iscp::live;
use crate::iscp::log::{JobKey, JobSpec};
use crate::sql::Ctx;
use crate::types::Value;

/// Storage key of a row.
pub fn row_key(cx: &Ctx<'_>, t: &TableDef, row: &[Value]) -> SqlResult<Vec<u8>> {
    if t.has_hidden_pk() {
        let id = cx.engine.ids.next_rowid(cx.engine.storage.as_ref())?;
        Ok(encode_key(&[Value::Int(id as i64)]))
    } else {
        Ok(t.pk_key(&t.pk_values(row)))
    }
}

/// Maintain the synchronous indexes of one row change in the writing
/// transaction: B-tree entries (UNIQUE enforced with locking reads), and
/// the entries of synchronous vector/full-text indexes (`e` ++ pk → the
/// indexed values), which this CN's in-memory index applies right after
/// the commit (see `Engine::catch_up_sync`). Asynchronous indexes are left
/// to ISCP.
pub fn maintain_indexes(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    key: &[u8],
    old: Option<&[Value]>,
    new: Option<&[Value]>,
) -> SqlResult<()> {
    for ix in &t.indexes {
        if ix.is_async {
            continue;
        }
        let old_vals = old.map(|r| entries::entry_values(r, &ix.columns));
        let new_vals = new.map(|r| entries::entry_values(r, &ix.columns));
        if old_vals.is_some() && old_vals == new_vals {
            continue;
        }
        let Some(target) = entries::Target::of(t, ix) else {
            sync_live_entry(cx, t, ix, key, new_vals.as_deref())?;
            continue;
        };
        if let Some(ov) = &old_vals {
            entries::delete(cx.txn, &target, ov, key)?;
        }
        if let Some(nv) = &new_vals {
            entries::put(cx.txn, &target, nv, key)?;
        }
    }
    Ok(())
}

/// Write (or delete) a synchronous vector/full-text index entry and note
/// the index for the post-commit catch-up.
fn sync_live_entry(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    ix: &crate::catalog::IndexDef,
    key: &[u8],
    new_vals: Option<&[Value]>,
) -> SqlResult<()> {
    let Some(job) = JobKey::of(t, ix) else {
        return Err(SqlError::internal(format!(
            "index {} has no ISCP job",
            ix.name
        )));
    };
    let ek = live::entry_key(key);
    match new_vals {
        Some(v) => cx.txn.put(ix.storage_id, &ek, live::encode_entry(v))?,
        None => cx.txn.delete(ix.storage_id, &ek)?,
    };
    if !cx.session.sync_jobs.iter().any(|(k, _)| *k == job) {
        cx.session.sync_jobs.push((job, JobSpec::of(t, ix)));
    }
    Ok(())
}

/// Replace row `old` stored under `key` by `new` (its key may change):
/// indexes maintained, a new key that is taken is error 1062.
pub fn rewrite_row(
    cx: &mut Ctx<'_>,
    t: &TableDef,
    key: &[u8],
    old: &[Value],
    new: &[Value],
) -> SqlResult<()> {
    let new_key = if t.has_hidden_pk() {
        key.to_vec()
    } else {
        t.pk_key(&t.pk_values(new))
    };
    if new_key != key {
        if cx.txn.get(t.id, &new_key, true)?.is_some() {
            return Err(dup_entry(&t.pk_values(new), "PRIMARY"));
        }
        maintain_indexes(cx, t, key, Some(old), None)?;
        cx.txn.delete(t.id, key)?;
        maintain_indexes(cx, t, &new_key, None, Some(new))?;
        cx.txn.put(t.id, &new_key, encode_row(new))?;
    } else {
        maintain_indexes(cx, t, key, Some(old), Some(new))?;
        cx.txn.put(t.id, key, encode_row(new))?;
    }
    Ok(())
}

/// Delete row `old` stored under `key`, with its synchronous index
/// entries.
pub fn delete_row(cx: &mut Ctx<'_>, t: &TableDef, key: &[u8], old: &[Value]) -> SqlResult<()> {
    maintain_indexes(cx, t, key, Some(old), None)?;
    cx.txn.delete(t.id, key)?;
    Ok(())
}
