//! The answers of repeatable subqueries a statement has run, by subquery id
//! and the outer values they read (see `exec::apply`, which decides what is
//! repeatable and asks here first). Bounded: past [`MEMO_BYTES`] of keys no
//! more answers are kept. Never runs anything.

use std::collections::HashMap;

use crate::types::Value;

/// Most bytes of keys a statement's [`Memo`] holds; past it, answers are
/// no longer kept (the subqueries still run, each for its row).
const MEMO_BYTES: usize = 8 << 20;

/// What a key and its answer cost beside the key's text.
const MEMO_ENTRY_BYTES: usize = 64;

/// The answers of repeatable subqueries run so far in one statement, by
/// subquery id and the outer values they read.
#[derive(Default)]
pub struct Memo {
    /// By subquery id, then by the outer values' key.
    answers: HashMap<usize, HashMap<String, Value>>,
    bytes: usize,
}

impl Memo {
    /// The answer kept for subquery `id` run with outer values `key`.
    pub fn get(&self, id: usize, key: &str) -> Option<Value> {
        self.answers.get(&id)?.get(key).cloned()
    }

    /// Keep `v` as subquery `id`'s answer for `key`, while within bounds.
    pub fn put(&mut self, id: usize, key: String, v: &Value) {
        let cost = key.len() + MEMO_ENTRY_BYTES;
        if self.bytes + cost <= MEMO_BYTES {
            self.bytes += cost;
            self.answers.entry(id).or_default().insert(key, v.clone());
        }
    }
}
