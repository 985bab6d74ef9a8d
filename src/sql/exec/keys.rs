//! The key that decides whether two rows are one GROUP BY group, one
//! DISTINCT row or one set-operation row: shared by the operators below
//! them (block, set operations, recursive union).
//!
//! Owns only that encoding. Never evaluates, charges or runs anything.

use crate::types::Value;

/// The key that decides whether two rows fall in one GROUP BY group or
/// are one DISTINCT row: numbers that are equal in SQL (3 and 3.0, -0.0
/// and 0) get one key.
pub fn group_key(vals: &[Value]) -> Vec<u8> {
    let norm: Vec<Value> = vals.iter().map(crate::sql::expr::key_form).collect();
    crate::catalog::codec::encode_key(&norm)
}

/// [`group_key`] with text compared under each column's collation
/// (`colls[i]`, when not binary): rows equal under it get one key.
pub fn group_key_under(vals: &[Value], colls: &[Option<crate::collation::Collation>]) -> Vec<u8> {
    if colls.iter().all(Option::is_none) {
        return group_key(vals);
    }
    let keyed: Vec<Value> = vals
        .iter()
        .enumerate()
        .map(|(i, v)| match (colls.get(i).copied().flatten(), v) {
            (Some(c), Value::Text(s)) => {
                Value::Text(c.sort_key(s).into_iter().map(char::from).collect())
            }
            _ => v.clone(),
        })
        .collect();
    group_key(&keyed)
}
