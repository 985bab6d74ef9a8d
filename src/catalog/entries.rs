//! B-tree index entries: the one writer of them.
//!
//! Owns how a row becomes an entry of a secondary B-tree index — its
//! values ([`entry_values`]: the index's columns, NULL for a column a short
//! row lacks), its key ([`super::codec::btree_entry_key`]) and the UNIQUE
//! rule ([`put`]: in a UNIQUE index another row's entry with the same
//! non-NULL values is error 1062, checked under the entry's lock). Text
//! under a non-binary collation keys by its weight string, so "the same
//! values" means equal under the column's collation (`'a'` and `'A '` under
//! `utf8mb4_general_ci`), as in MySQL. DML,
//! the synchronous build of CREATE INDEX / ALTER TABLE and the ISCP
//! consumer of an asynchronous index all write through it.
//!
//! It must never decide *whether* an index is maintained (that is the
//! caller's: synchronous indexes by the writing statement, asynchronous
//! ones by their ISCP job) and never touches vector or full-text entries.

use tributary_storage::{TableId, Transaction};

use super::codec::btree_entry_key;
use crate::collation::Collation;
use crate::error::{code, SqlError, SqlResult};
use crate::types::Value;

/// Where entries go and the rule they follow.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The index's storage table.
    pub storage_id: TableId,
    /// The index's name (for error 1062).
    pub name: &'a str,
    /// A UNIQUE index: one entry per non-NULL value tuple.
    pub unique: bool,
    /// The collation of each key part (its column's).
    pub collations: Vec<Collation>,
}

impl<'a> Target<'a> {
    /// The target of B-tree index `ix` of table `t` (`None` for another
    /// kind).
    pub fn of(t: &super::TableDef, ix: &'a super::IndexDef) -> Option<Target<'a>> {
        match ix.kind {
            super::IndexKind::BTree { unique } => Some(Target {
                storage_id: ix.storage_id,
                name: &ix.name,
                unique,
                collations: t.key_collations(&ix.columns),
            }),
            _ => None,
        }
    }

    /// The entry key of index values `vals` of the row stored under `pk`.
    pub fn entry_key(&self, vals: &[Value], pk: &[u8]) -> Vec<u8> {
        debug_assert_eq!(vals.len(), self.collations.len(), "index {}", self.name);
        btree_entry_key(vals, &self.collations, pk, self.unique)
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
pub fn put(txn: &mut dyn Transaction, to: &Target<'_>, vals: &[Value], pk: &[u8]) -> SqlResult<()> {
    let ek = to.entry_key(vals, pk);
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
    to: &Target<'_>,
    vals: &[Value],
    pk: &[u8],
) -> SqlResult<()> {
    txn.delete(to.storage_id, &to.entry_key(vals, pk))?;
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

    fn storage() -> (
        tempfile::TempDir,
        std::sync::Arc<tributary_storage::EmbeddedStorage>,
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let s = tributary_storage::EmbeddedStorage::open(dir.path()).expect("open");
        (dir, s)
    }

    fn text(s: &str) -> Vec<Value> {
        vec![Value::Text(s.into())]
    }

    /// A UNIQUE entry over a case-insensitive column: values equal under
    /// the collation collide (1062, the new value shown), a row may
    /// rewrite its own entry, NULLs never collide, and a deleted entry
    /// frees the value. Under a binary collation the same values do not
    /// collide.
    #[test]
    fn unique_entries_collide_under_the_collation() {
        use tributary_storage::Storage;
        let (_dir, st) = storage();
        let ci = Target {
            storage_id: 20,
            name: "u",
            unique: true,
            collations: vec![Collation::Utf8mb4GeneralCi],
        };
        let bin = Target {
            storage_id: 21,
            collations: vec![Collation::Utf8mb4Bin],
            ..ci.clone()
        };
        let mut txn = st.begin(Default::default()).expect("begin");
        let t = txn.as_mut();
        put(t, &ci, &text("a"), b"k1").expect("first");
        for other in ["A", "á", "a   ", "Ä"] {
            let e = put(t, &ci, &text(other), b"k2").expect_err(other);
            assert_eq!(e.code, code::DUP_ENTRY);
            assert_eq!(e.message, format!("Duplicate entry '{other}' for key 'u'"));
        }
        // The same row rewriting its entry, and another value, are fine.
        put(t, &ci, &text("A"), b"k1").expect("own row");
        put(t, &ci, &text("b"), b"k2").expect("other value");
        put(t, &ci, &[Value::Null], b"k3").expect("null");
        put(t, &ci, &[Value::Null], b"k4").expect("second null");
        // Deleting by an equal value removes the one entry.
        delete(t, &ci, &text("A "), b"k1").expect("delete");
        put(t, &ci, &text("á"), b"k5").expect("freed");
        for v in ["a", "A", "á", "a "] {
            put(t, &bin, &text(v), v.as_bytes()).expect("binary: distinct");
        }
        // Four distinct binary entries; the ci index holds b, á and 2 NULLs.
        use std::ops::Bound::Unbounded;
        assert_eq!(
            t.scan(21, Unbounded, Unbounded, usize::MAX)
                .expect("scan")
                .len(),
            4
        );
        assert_eq!(
            t.scan(20, Unbounded, Unbounded, usize::MAX)
                .expect("scan")
                .len(),
            4
        );
    }
}
