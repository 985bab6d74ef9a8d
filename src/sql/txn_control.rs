//! Transaction control inside an open transaction: the named savepoints of
//! `SAVEPOINT n` / `ROLLBACK TO [SAVEPOINT] n` / `RELEASE SAVEPOINT n`.
//!
//! A savepoint is a position in the storage transaction's write log
//! ([`Transaction::savepoint`]); rolling back to it undoes the writes made
//! since and keeps every row lock, as InnoDB does. Savepoints belong to one
//! transaction: the list remembers which, so a COMMIT, ROLLBACK, implicit
//! commit or deadlock that ends it leaves no savepoint behind without every
//! such path having to clear it. Owns no storage and never commits.

use crate::error::{code, SqlError, SqlResult};
use tributary_storage::{Savepoint, Transaction, TxnId};

/// What a savepoint statement does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SavepointOp {
    Set,
    RollbackTo,
    Release,
}

/// The savepoints of the session's open transaction, oldest first.
#[derive(Debug, Default)]
pub struct Savepoints {
    /// The transaction they were set in.
    txn: Option<TxnId>,
    /// Name (compared case-insensitively, as MySQL) and write position.
    list: Vec<(String, Savepoint)>,
}

impl Savepoints {
    /// The list of `txn`, emptied first when it was set in another.
    fn of(&mut self, txn: TxnId) -> &mut Vec<(String, Savepoint)> {
        if self.txn != Some(txn) {
            self.txn = Some(txn);
            self.list.clear();
        }
        &mut self.list
    }

    fn position(list: &[(String, Savepoint)], name: &str) -> Option<usize> {
        list.iter().position(|(n, _)| n.eq_ignore_ascii_case(name))
    }
}

/// Run a savepoint statement on the session's transaction `txn` (`None`
/// in autocommit mode with no transaction open) and its savepoints.
pub fn run(
    savepoints: &mut Savepoints,
    txn: Option<&mut dyn Transaction>,
    op: SavepointOp,
    name: &str,
) -> SqlResult<()> {
    let Some(txn) = txn else {
        // MySQL: SAVEPOINT outside a transaction sets a savepoint in the
        // statement's own transaction, gone when it ends; the others find
        // none.
        return match op {
            SavepointOp::Set => Ok(()),
            SavepointOp::RollbackTo | SavepointOp::Release => Err(missing(name)),
        };
    };
    let list = savepoints.of(txn.id());
    let found = Savepoints::position(list, name);
    match op {
        SavepointOp::Set => {
            // A savepoint of the same name is replaced (and moves last).
            if let Some(i) = found {
                list.remove(i);
            }
            list.push((name.to_string(), txn.savepoint()));
        }
        SavepointOp::RollbackTo => {
            let i = found.ok_or_else(|| missing(name))?;
            // Later savepoints go; this one stays.
            list.truncate(i + 1);
            txn.rollback_to(list[i].1);
        }
        SavepointOp::Release => {
            let i = found.ok_or_else(|| missing(name))?;
            list.truncate(i);
        }
    }
    debug_assert!(
        list.windows(2).all(|w| w[0].1 .0 <= w[1].1 .0),
        "savepoints out of write order"
    );
    Ok(())
}

/// ER_SP_DOES_NOT_EXIST as MySQL words it for a savepoint.
fn missing(name: &str) -> SqlError {
    SqlError::new(
        code::UNKNOWN_FUNCTION,
        format!("SAVEPOINT {name} does not exist"),
    )
}
