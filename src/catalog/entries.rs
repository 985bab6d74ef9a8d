//! B-tree index entries: the one writer of them.
//!
//! Owns how a row becomes an entry of a secondary B-tree index — its
//! values ([`entry_values`]: the index's columns, NULL for a column a short
//! row lacks), its key ([`super::codec::btree_entry_key`]) and the UNIQUE
//! rule ([`put`]: in a UNIQUE index another row's entry with the same
//! non-NULL values is error 1062, checked under the entry's lock). DML,
//! the synchronous build of CREATE INDEX / ALTER TABLE and the ISCP
//! consumer of an asynchronous index all write through it.
//!
//! It must never decide *whether* an index is maintained (that is the
//! caller's: synchronous indexes by the writing statement, asynchronous
//! ones by their ISCP job) and never touches vector or full-text entries.

use tributary_storage::{TableId, Transaction};

use super::codec::btree_entry_key;
use crate::error::{code, SqlError, SqlResult};
use crate::types::Value;

/// Where entries go and the rule they follow.
#[derive(Debug, Clone, Copy)]
pub struct Target<'a> {
    /// The index's storage table.
    pub storage_id: TableId,
    /// The index's name (for error 1062).
    pub name: &'a str,
    /// A UNIQUE index: one entry per non-NULL value tuple.
    pub unique: bool,
}

impl<'a> Target<'a> {
    /// The target of B-tree index `ix` (`None` for another kind).
    pub fn of(ix: &'a super::IndexDef) -> Option<Target<'a>> {
        match ix.kind {
            super::IndexKind::BTree { unique } => Some(Target {
                storage_id: ix.storage_id,
                name: &ix.name,
                unique,
            }),
            _ => None,
        }
    }
}

/// The index values of `row`: its `columns`, NULL where the row is shorter
/// (a row stored before a column was added).
pub fn entry_values(row: &[Value], columns: &[usize]) -> Vec<Value> {
    columns
        .iter()
        .map(|&c| row.get(c).cloned().unwrap_or(Value::Null))
        .collect()
}

/// Write the entry of the row stored under `pk` with index values `vals`.
pub fn put(txn: &mut dyn Transaction, to: Target<'_>, vals: &[Value], pk: &[u8]) -> SqlResult<()> {
    let ek = btree_entry_key(vals, pk, to.unique);
    if to.unique && vals.iter().all(|v| !v.is_null()) {
        if let Some(existing) = txn.get(to.storage_id, &ek, true)? {
            if existing != pk {
                return Err(dup_entry(vals, to.name));
            }
        }
    }
    txn.put(to.storage_id, &ek, pk.to_vec())?;
    Ok(())
}

/// Delete the entry of the row stored under `pk` with index values `vals`.
pub fn delete(
    txn: &mut dyn Transaction,
    to: Target<'_>,
    vals: &[Value],
    pk: &[u8],
) -> SqlResult<()> {
    txn.delete(to.storage_id, &btree_entry_key(vals, pk, to.unique))?;
    Ok(())
}

/// MySQL's 1062 for a UNIQUE key.
pub fn dup_entry(vals: &[Value], key_name: &str) -> SqlError {
    let shown: Vec<String> = vals.iter().map(|v| v.to_string()).collect();
    SqlError::new(
        code::DUP_ENTRY,
        format!("Duplicate entry '{}' for key '{key_name}'", shown.join("-")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_rows_have_null_index_values() {
        let row = vec![Value::Int(1), Value::Text("a".into())];
        assert_eq!(
            entry_values(&row, &[1, 0, 5]),
            vec![Value::Text("a".into()), Value::Int(1), Value::Null]
        );
    }

    #[test]
    fn duplicate_entry_names_values_and_key() {
        let e = dup_entry(&[Value::Int(7), Value::Text("x".into())], "uk");
        assert_eq!(e.code, code::DUP_ENTRY);
        assert_eq!(e.message, "Duplicate entry '7-x' for key 'uk'");
    }
}
