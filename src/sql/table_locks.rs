//! `LOCK TABLES` / `UNLOCK TABLES`: table locks a session holds across
//! statements, as MySQL's.
//!
//! Owns: the session's list of locked tables and the rules for what the
//! session may do while it holds them — only the tables it locked (1100),
//! writes only to WRITE-locked ones (1099), system databases readable —
//! and taking / releasing them. The locks themselves are storage locks on
//! the tables' catalog records, held by a transaction of their own that
//! writes nothing and lives until UNLOCK TABLES (see
//! [`crate::catalog::lock_table`]): a lock waits for other sessions'
//! transactions that are writing the table and then keeps every writer
//! (intention-exclusive) and DDL out; WRITE locks also exclude each other
//! and READ locks. Waits are bounded by the lock-wait timeout (1205),
//! ended by KILL (1317), and deadlocks are detected (1213).
//!
//! The statements themselves (commit the open transaction, resolve the
//! names, begin the holder) are run by [`crate::sql`]'s dispatch: this
//! module is the state the session holds, below everything that reads it.
//!
//! Never: blocks another session's plain reads — they read committed
//! snapshots and cannot see the holder's uncommitted work (MySQL's WRITE
//! lock also blocks them: documented as a difference).

use tributary_storage::Transaction;

use crate::error::{SqlError, SqlResult};

/// A lock mode of `LOCK TABLES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    Write,
}

/// One table the session locked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Locked {
    pub db: String,
    pub table: String,
    pub mode: Mode,
}

/// The session's LOCK TABLES state: what it locked and the transaction
/// holding the locks.
#[derive(Default)]
pub struct SessionLocks {
    pub tables: Vec<Locked>,
    holder: Option<Box<dyn Transaction>>,
}

impl SessionLocks {
    /// Whether the session holds LOCK TABLES.
    pub fn active(&self) -> bool {
        self.holder.is_some()
    }

    /// Give the locks up (the holding transaction wrote nothing).
    pub fn release(&mut self) {
        self.tables.clear();
        if let Some(t) = self.holder.take() {
            t.rollback();
        }
    }

    /// Whether `db.table` is WRITE-locked by this session (its writes then
    /// take no metadata lock of their own: the holder's excludes others).
    pub fn writes_under_lock(&self, db: &str, table: &str) -> bool {
        self.find(db, table).is_some_and(|l| l.mode == Mode::Write)
    }

    fn find(&self, db: &str, table: &str) -> Option<&Locked> {
        self.tables
            .iter()
            .find(|l| l.db.eq_ignore_ascii_case(db) && l.table.eq_ignore_ascii_case(table))
    }

    /// What a session holding locks may do with `db.table`: `Ok` if it is
    /// locked in a mode that allows the access (or no locks are held),
    /// else 1100 / 1099. System databases are always readable.
    pub fn check(&self, db: &str, table: &str, write: bool) -> SqlResult<()> {
        if !self.active() || (!write && crate::catalog::is_system_db(db)) {
            return Ok(());
        }
        match self.find(db, table) {
            None => Err(SqlError::new(
                1100,
                format!("Table '{table}' was not locked with LOCK TABLES"),
            )),
            Some(l) if write && l.mode == Mode::Read => Err(SqlError::new(
                1099,
                format!("Table '{table}' was locked with a READ lock and can't be updated"),
            )),
            Some(_) => Ok(()),
        }
    }
}

impl SessionLocks {
    /// Take every lock of `wanted` in `holder`, a transaction of their own
    /// that writes nothing — all or none: on a failure the holder is
    /// rolled back and nothing is held.
    pub fn take(wanted: Vec<Locked>, mut holder: Box<dyn Transaction>) -> SqlResult<Self> {
        for l in &wanted {
            if let Err(e) =
                crate::catalog::lock_table(holder.as_mut(), &l.db, &l.table, l.mode == Mode::Write)
            {
                holder.rollback();
                return Err(e);
            }
        }
        Ok(SessionLocks {
            tables: wanted,
            holder: Some(holder),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tributary_storage::Storage;

    #[test]
    fn own_locks_allow_only_what_they_say() {
        let none = SessionLocks::default();
        none.check("d", "anything", true).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let storage = tributary_storage::EmbeddedStorage::open(dir.path()).unwrap();
        let mine = SessionLocks {
            tables: vec![
                Locked {
                    db: "d".into(),
                    table: "r".into(),
                    mode: Mode::Read,
                },
                Locked {
                    db: "d".into(),
                    table: "w".into(),
                    mode: Mode::Write,
                },
            ],
            holder: Some(storage.begin(Default::default()).unwrap()),
        };
        mine.check("d", "R", false).unwrap();
        assert_eq!(mine.check("d", "r", true).unwrap_err().code, 1099);
        mine.check("D", "w", true).unwrap();
        assert_eq!(mine.check("d", "x", false).unwrap_err().code, 1100);
        mine.check("information_schema", "TABLES", false).unwrap();
        assert!(mine.writes_under_lock("d", "W") && !mine.writes_under_lock("d", "r"));
    }
}
