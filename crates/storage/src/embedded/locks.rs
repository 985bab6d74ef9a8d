//! Row lock manager: exclusive locks per `(table, key)`, wait-for graph,
//! deadlock detection and lock-wait timeouts.
//!
//! Owns who holds which row lock and who waits for which row. Each waiting
//! transaction waits for exactly one row, so the wait-for graph is followed
//! as `waiter -> owner of the row it waits for -> ...`; a request whose wait
//! would close a cycle back to the requester fails at once with
//! [`StorageError::Deadlock`]. Waits are bounded by the caller's timeout.
//!
//! This module must never read or write rows, and never wait without a
//! deadline.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::api::{Result, StorageError, TableId, TxnId};

type RowId = (TableId, Vec<u8>);

#[derive(Debug, Default)]
struct State {
    owners: HashMap<RowId, TxnId>,
    waiting: HashMap<TxnId, RowId>,
}

impl State {
    /// Would `txn` waiting for `row` close a cycle?
    fn closes_cycle(&self, txn: TxnId, row: &RowId) -> bool {
        let mut cur = match self.owners.get(row) {
            Some(o) => *o,
            None => return false,
        };
        // Each step visits a distinct waiting transaction unless there is a
        // cycle; bound the walk by the number of waiters anyway.
        for _ in 0..=self.waiting.len() {
            if cur == txn {
                return true;
            }
            let Some(next_row) = self.waiting.get(&cur) else {
                return false;
            };
            match self.owners.get(next_row) {
                Some(o) => cur = *o,
                None => return false,
            }
        }
        false
    }
}

/// The lock table.
#[derive(Debug, Default)]
pub(super) struct LockManager {
    state: Mutex<State>,
    released: Condvar,
}

impl LockManager {
    /// Acquire the exclusive lock on `(table, key)` for `txn`. Returns
    /// `Ok(true)` when newly acquired, `Ok(false)` when already held.
    pub fn acquire(
        &self,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        timeout: Duration,
    ) -> Result<bool> {
        let row: RowId = (table, key.to_vec());
        let deadline = Instant::now().checked_add(timeout);
        let mut st = self.state.lock();
        loop {
            match st.owners.get(&row) {
                None => {
                    st.waiting.remove(&txn);
                    st.owners.insert(row, txn);
                    return Ok(true);
                }
                Some(o) if *o == txn => {
                    st.waiting.remove(&txn);
                    return Ok(false);
                }
                Some(_) => {}
            }
            if st.closes_cycle(txn, &row) {
                st.waiting.remove(&txn);
                tracing::debug!(txn, table, "deadlock detected");
                return Err(StorageError::Deadlock);
            }
            st.waiting.insert(txn, row.clone());
            let timed_out = match deadline {
                Some(d) => self.released.wait_until(&mut st, d).timed_out(),
                // A timeout too large to represent: wait in bounded slices.
                None => {
                    self.released.wait_for(&mut st, Duration::from_secs(3600));
                    false
                }
            };
            if timed_out && st.owners.get(&row).is_some_and(|o| *o != txn) {
                st.waiting.remove(&txn);
                return Err(StorageError::LockWaitTimeout);
            }
        }
    }

    /// Release the given locks of `txn` and wake waiters.
    pub fn release_all<'a>(&self, txn: TxnId, rows: impl IntoIterator<Item = &'a RowId>) {
        let mut st = self.state.lock();
        let mut any = false;
        for row in rows {
            if st.owners.get(row) == Some(&txn) {
                st.owners.remove(row);
                any = true;
            }
        }
        st.waiting.remove(&txn);
        drop(st);
        if any {
            self.released.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reentrant_and_exclusive() {
        let m = LockManager::default();
        assert!(m.acquire(1, 1, b"k", Duration::from_millis(10)).unwrap());
        assert!(!m.acquire(1, 1, b"k", Duration::from_millis(10)).unwrap());
        assert_eq!(
            m.acquire(2, 1, b"k", Duration::from_millis(50)),
            Err(StorageError::LockWaitTimeout)
        );
        m.release_all(1, [&(1, b"k".to_vec())]);
        assert!(m.acquire(2, 1, b"k", Duration::from_millis(10)).unwrap());
    }

    #[test]
    fn cycle_detection_follows_owners() {
        let mut st = State::default();
        st.owners.insert((1, b"a".to_vec()), 1);
        st.owners.insert((1, b"b".to_vec()), 2);
        st.waiting.insert(1, (1, b"b".to_vec()));
        assert!(st.closes_cycle(2, &(1, b"a".to_vec())));
        assert!(!st.closes_cycle(3, &(1, b"a".to_vec())));
    }
}
