//! PostgreSQL errors → [`StorageError`].
//!
//! Owns the mapping of SQLSTATEs to the contract's errors: deadlock 40P01 →
//! `Deadlock` (MySQL 1213), lock_timeout 55P03 → `LockWaitTimeout` (1205),
//! a cancelled query 57014 → `Interrupted`; the server unreachable or a
//! connection lost → `Unavailable` (MySQL 1030); anything else `Io` with
//! PostgreSQL's text.

use tokio_postgres::error::SqlState;
use tributary_storage::StorageError;

/// Map one PostgreSQL client error.
pub(crate) fn map(e: tokio_postgres::Error) -> StorageError {
    match e.code() {
        Some(c) if *c == SqlState::T_R_DEADLOCK_DETECTED => StorageError::Deadlock,
        Some(c) if *c == SqlState::LOCK_NOT_AVAILABLE => StorageError::LockWaitTimeout,
        Some(c) if *c == SqlState::QUERY_CANCELED => StorageError::Interrupted,
        Some(c) if is_shutdown(c) => {
            StorageError::Unavailable(format!("PostgreSQL: {}", describe(&e)))
        }
        _ if is_broken(&e) => StorageError::Unavailable(format!("PostgreSQL: {}", describe(&e))),
        _ => StorageError::Io(format!("postgres: {}", describe(&e))),
    }
}

/// A pool error (no connection could be had).
pub(crate) fn pool(e: deadpool_postgres::PoolError) -> StorageError {
    match e {
        deadpool_postgres::PoolError::Backend(e) => map(e),
        other => StorageError::Unavailable(format!("PostgreSQL connection pool: {other}")),
    }
}

/// The error with its server-side detail, when there is one.
pub(crate) fn describe(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// Whether the error means the connection is unusable (closed, I/O, or
/// the server going down).
pub(crate) fn is_broken(e: &tokio_postgres::Error) -> bool {
    e.is_closed() || e.as_db_error().is_none() || e.code().is_some_and(is_shutdown)
}

/// The server is shutting down or restarting (class 57P: admin shutdown,
/// crash shutdown, cannot connect now).
fn is_shutdown(c: &SqlState) -> bool {
    c.code().starts_with("57P")
}

#[cfg(test)]
mod tests {
    #[test]
    fn sqlstates_are_the_documented_ones() {
        use tokio_postgres::error::SqlState;
        assert_eq!(SqlState::T_R_DEADLOCK_DETECTED.code(), "40P01");
        assert_eq!(SqlState::LOCK_NOT_AVAILABLE.code(), "55P03");
        assert_eq!(SqlState::QUERY_CANCELED.code(), "57014");
    }
}
