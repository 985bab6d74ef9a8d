//! MySQL's user-level locks: `GET_LOCK(name, timeout)`,
//! `RELEASE_LOCK(name)`, `IS_FREE_LOCK(name)`, `RELEASE_ALL_LOCKS()` — the
//! named advisory locks migration tools take (sqlx, Rails, Flyway).
//!
//! Owns: the locks one session holds and how they are taken. Each name is a
//! storage row lock on a key no catalog record has (`SYS_TABLES`, `\0` +
//! the lower-cased name: names are case-insensitive, as MySQL 8's), held by
//! a transaction of its own that writes nothing and lives until the lock is
//! released (RELEASE_LOCK to a count of zero, RELEASE_ALL_LOCKS, or the
//! session's end) — so the lock holds across every node sharing the
//! storage, and COMMIT / ROLLBACK of the session's own transaction leave it
//! alone, as in MySQL. A session takes a name again by counting (MySQL
//! 5.7+). Waiting tries the lock without waiting every [`RETRY`] until the
//! timeout, and ends at once on KILL.
//!
//! Never: detects a deadlock between user-level locks (MySQL's 3058): two
//! sessions each waiting for the other's lock wait until their timeouts.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tributary_storage::{Interrupt, LockWait, Storage, StorageError, Transaction, TxnOptions};

use crate::error::{SqlError, SqlResult};

/// How often a waiting GET_LOCK tries again.
const RETRY: Duration = Duration::from_millis(20);

/// Longest name (MySQL's 64 characters).
const MAX_NAME: usize = 64;

/// MySQL's ER_USER_LOCK_WRONG_NAME.
const WRONG_NAME: u16 = 3057;

/// The user-level locks one session holds, by lower-cased name: the
/// holder transaction and how many times the session took it. Shared by
/// the session and the function host of its running statement.
#[derive(Clone, Default)]
pub struct UserLocks(Arc<Mutex<HashMap<String, Held>>>);

/// A held lock: its holder transaction and how many times it was taken.
type Held = (Box<dyn Transaction>, u32);

/// The key a lock `name` is taken on.
fn lock_key(name: &str) -> Vec<u8> {
    let mut k = Vec::with_capacity(name.len() + 1);
    // No catalog record's key starts with NUL (it starts with a name).
    k.push(0);
    k.extend_from_slice(name.as_bytes());
    k
}

/// The lock name of a call: lower-cased; error 3057 for an empty one or
/// one longer than 64 characters.
pub fn check_name(name: &str) -> SqlResult<String> {
    if name.is_empty() || name.chars().count() > MAX_NAME {
        return Err(SqlError::new(
            WRONG_NAME,
            format!("Incorrect user-level lock name '{name}'."),
        ));
    }
    Ok(name.to_lowercase())
}

/// One try at `name`'s lock in a fresh transaction: the transaction holding
/// it, or `None` when another holds it.
fn try_take(
    storage: &dyn Storage,
    name: &str,
    interrupt: &Interrupt,
) -> SqlResult<Option<Box<dyn Transaction>>> {
    let mut txn = storage.begin(TxnOptions::default())?;
    txn.set_interrupt(interrupt.clone());
    txn.set_lock_wait(LockWait::NoWait)?;
    // A locking read (NOWAIT applies to those): the key holds no row.
    match txn.get(crate::catalog::SYS_TABLES, &lock_key(name), true) {
        Ok(_) => Ok(Some(txn)),
        Err(StorageError::LockNotAvailable) => {
            txn.rollback();
            Ok(None)
        }
        Err(e) => {
            txn.rollback();
            Err(e.into())
        }
    }
}

impl UserLocks {
    /// `GET_LOCK(name, timeout)`: 1 when the session holds it (again), 0
    /// when `timeout` seconds passed first (a negative one waits without
    /// end); KILL ends the wait with the statement's error.
    pub fn get(
        &self,
        storage: &dyn Storage,
        name: &str,
        timeout: f64,
        interrupt: &Interrupt,
    ) -> SqlResult<bool> {
        let name = check_name(name)?;
        if let Some((_, count)) = self.0.lock().get_mut(&name) {
            *count += 1;
            return Ok(true);
        }
        let deadline = (timeout >= 0.0 && timeout.is_finite())
            .then(|| Instant::now() + Duration::from_secs_f64(timeout.min(31_536_000.0)));
        loop {
            interrupt.check()?;
            if let Some(txn) = try_take(storage, &name, interrupt)? {
                self.0.lock().insert(name, (txn, 1));
                return Ok(true);
            }
            let now = Instant::now();
            match deadline {
                Some(d) if now >= d => return Ok(false),
                Some(d) => std::thread::park_timeout((d - now).min(RETRY)),
                None => std::thread::park_timeout(RETRY),
            }
        }
    }

    /// `RELEASE_LOCK(name)`: `Some(true)` when this session held it (one
    /// count given back), `Some(false)` when another session holds it,
    /// `None` when nobody does.
    pub fn release(
        &self,
        storage: &dyn Storage,
        name: &str,
        interrupt: &Interrupt,
    ) -> SqlResult<Option<bool>> {
        let name = check_name(name)?;
        {
            let mut held = self.0.lock();
            if let Some((_, count)) = held.get_mut(&name) {
                *count -= 1;
                if *count == 0 {
                    if let Some((txn, _)) = held.remove(&name) {
                        txn.rollback();
                    }
                }
                return Ok(Some(true));
            }
        }
        Ok(match try_take(storage, &name, interrupt)? {
            Some(txn) => {
                txn.rollback();
                None
            }
            None => Some(false),
        })
    }

    /// `IS_FREE_LOCK(name)`: whether nobody (this session included) holds it.
    pub fn is_free(
        &self,
        storage: &dyn Storage,
        name: &str,
        interrupt: &Interrupt,
    ) -> SqlResult<bool> {
        let name = check_name(name)?;
        if self.0.lock().contains_key(&name) {
            return Ok(false);
        }
        Ok(match try_take(storage, &name, interrupt)? {
            Some(txn) => {
                txn.rollback();
                true
            }
            None => false,
        })
    }

    /// `RELEASE_ALL_LOCKS()` and the session's end: every lock given back;
    /// how many counts were held.
    pub fn release_all(&self) -> u64 {
        let held: Vec<_> = self.0.lock().drain().collect();
        let mut n = 0;
        for (_, (txn, count)) in held {
            n += u64::from(count);
            txn.rollback();
        }
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_folded() {
        assert_eq!(check_name("MyLock").unwrap(), "mylock");
        assert_eq!(check_name("").unwrap_err().code, WRONG_NAME);
        assert_eq!(check_name(&"x".repeat(65)).unwrap_err().code, WRONG_NAME);
        assert!(check_name(&"é".repeat(64)).is_ok());
    }
}
