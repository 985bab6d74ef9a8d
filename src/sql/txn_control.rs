//! Transaction control inside an open transaction: the named savepoints of
//! `SAVEPOINT n` / `ROLLBACK TO [SAVEPOINT] n` / `RELEASE SAVEPOINT n`,
//! and when the transaction's snapshot moves (its isolation level).
//!
//! Snapshots as InnoDB's: under REPEATABLE READ a transaction reads the
//! snapshot of its first statement that reads a table (START TRANSACTION
//! WITH CONSISTENT SNAPSHOT: of the START itself), under READ COMMITTED
//! each statement reads a snapshot of its own. Writes and locking reads
//! read the newest committed rows under their locks at either level.
//!
//! A savepoint is a position in the storage transaction's write log
//! ([`Transaction::savepoint`]); rolling back to it undoes the writes made
//! since and keeps every row lock, as InnoDB does. Savepoints belong to one
//! transaction: the list remembers which, so a COMMIT, ROLLBACK, implicit
//! commit or deadlock that ends it leaves no savepoint behind without every
//! such path having to clear it. Owns no storage and never commits.

use crate::error::{code, SqlError, SqlResult};
use tributary_storage::{LockWait, Savepoint, Transaction, TxnId};

/// Whom `SET … TRANSACTION` sets the characteristics of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnScope {
    /// No keyword: the session's next transaction only.
    Next,
    /// SESSION: the session's transactions from the next one on.
    Session,
    /// GLOBAL: the sessions that connect later.
    Global,
}

/// The isolation levels a transaction runs at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    ReadCommitted,
    #[default]
    RepeatableRead,
}

impl Isolation {
    /// The level a `transaction_isolation` value names (as stored:
    /// `READ-COMMITTED`, `REPEATABLE-READ`); `None` for one not run here.
    pub fn from_var(v: &str) -> Option<Isolation> {
        match v.to_ascii_uppercase().replace(' ', "-").as_str() {
            "READ-COMMITTED" => Some(Isolation::ReadCommitted),
            "REPEATABLE-READ" => Some(Isolation::RepeatableRead),
            _ => None,
        }
    }
}

/// `SET TRANSACTION …` without a scope: what the next transaction the
/// session starts runs with (then forgotten).
#[derive(Debug, Default, Clone)]
pub struct NextTxn {
    pub isolation: Option<Isolation>,
    pub read_only: Option<bool>,
}

/// When the open transaction's snapshot moves before a statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Snapshot {
    /// Kept as it is (REPEATABLE READ once taken).
    #[default]
    Fixed,
    /// REPEATABLE READ begun by START TRANSACTION: taken by the first
    /// statement that reads a table, then fixed.
    AtFirstRead,
    /// READ COMMITTED: taken anew by every statement.
    PerStatement,
}

impl Snapshot {
    /// How a transaction of `level` begun just now moves its snapshot;
    /// `consistent`: begun WITH CONSISTENT SNAPSHOT (or right before its
    /// first statement), so a REPEATABLE READ one keeps the one it has.
    pub fn begun(level: Isolation, consistent: bool) -> Snapshot {
        match level {
            Isolation::ReadCommitted => Snapshot::PerStatement,
            Isolation::RepeatableRead if consistent => Snapshot::Fixed,
            Isolation::RepeatableRead => Snapshot::AtFirstRead,
        }
    }

    /// Before a statement that reads tables in `txn`: move the snapshot
    /// as the level says.
    pub fn before_statement(&mut self, txn: &mut dyn Transaction) -> SqlResult<()> {
        match *self {
            Snapshot::Fixed => {}
            Snapshot::AtFirstRead => {
                txn.refresh_snapshot()?;
                *self = Snapshot::Fixed;
            }
            Snapshot::PerStatement => txn.refresh_snapshot()?,
        }
        Ok(())
    }
}

/// What a SELECT's locking reads do about a row another transaction has
/// locked: `FOR UPDATE` / `FOR SHARE` with `NOWAIT` or `SKIP LOCKED` (on
/// the statement's outermost query; `OF t` is refused by the binder).
pub fn lock_wait_of(q: &sqlparser::ast::Query) -> LockWait {
    use sqlparser::ast::NonBlock;
    match q.locks.iter().find_map(|l| l.nonblock.as_ref()) {
        Some(NonBlock::Nowait) => LockWait::NoWait,
        Some(NonBlock::SkipLocked) => LockWait::SkipLocked,
        None => LockWait::Wait,
    }
}

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
