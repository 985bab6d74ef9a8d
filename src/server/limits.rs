//! Server-wide and per-connection resource budgets of prepared statements:
//! how many statements exist (MySQL's `max_prepared_stmt_count`) and how
//! many bytes they hold (statement text plus COM_STMT_SEND_LONG_DATA
//! buffers).
//!
//! This module owns the counters and their release: every statement slot
//! (`StmtSlot`) and every charged byte (`Charge`) gives itself back when
//! dropped, so closing a statement, resetting it, executing it (long data
//! is consumed), resetting or changing the user of the connection, or the
//! connection ending for any reason all return what they held. It never
//! decides which error a refusal deserves (see `super::conn`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The caps, and what is in use server-wide.
#[derive(Debug)]
pub struct Limits {
    /// Prepared statements server-wide (`max_prepared_stmt_count`).
    pub(crate) max_prepared: usize,
    /// Prepared statements of one connection.
    pub(crate) max_prepared_per_conn: usize,
    /// Bytes held by one connection's prepared statements.
    pub(crate) max_bytes_per_conn: usize,
    /// Bytes held by all prepared statements.
    pub(crate) max_bytes_total: usize,
    prepared: AtomicUsize,
    bytes: AtomicUsize,
}

/// Which budget refused a charge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Over {
    Connection,
    Server,
}

/// Add `n` to `counter` unless that passes `cap`.
fn reserve(counter: &AtomicUsize, n: usize, cap: usize) -> bool {
    counter
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |cur| {
            cur.checked_add(n).filter(|&v| v <= cap)
        })
        .is_ok()
}

impl Limits {
    pub fn new(
        max_prepared: usize,
        max_prepared_per_conn: usize,
        max_bytes_per_conn: usize,
        max_bytes_total: usize,
    ) -> Self {
        Limits {
            max_prepared,
            max_prepared_per_conn,
            max_bytes_per_conn,
            max_bytes_total,
            prepared: AtomicUsize::new(0),
            bytes: AtomicUsize::new(0),
        }
    }

    /// Prepared statements open server-wide.
    pub fn prepared_statements(&self) -> usize {
        self.prepared.load(Ordering::Acquire)
    }

    /// Bytes held by prepared statements server-wide (text and long data).
    pub fn statement_bytes(&self) -> usize {
        self.bytes.load(Ordering::Acquire)
    }

    /// One server-wide statement slot, or `None` at the global cap.
    pub(crate) fn stmt_slot(self: &Arc<Self>) -> Option<StmtSlot> {
        reserve(&self.prepared, 1, self.max_prepared).then(|| StmtSlot(self.clone()))
    }
}

/// One prepared statement counted server-wide; released on drop.
#[derive(Debug)]
pub(crate) struct StmtSlot(Arc<Limits>);

impl Drop for StmtSlot {
    fn drop(&mut self) {
        self.0.prepared.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Bytes charged to a connection's budget and to the server's; released
/// on drop.
#[derive(Debug)]
pub(crate) struct Charge {
    limits: Arc<Limits>,
    conn: Arc<AtomicUsize>,
    bytes: usize,
}

impl Charge {
    /// An empty charge against `limits` and the connection counter `conn`.
    pub(crate) fn new(limits: Arc<Limits>, conn: Arc<AtomicUsize>) -> Self {
        Charge {
            limits,
            conn,
            bytes: 0,
        }
    }

    pub(crate) fn bytes(&self) -> usize {
        self.bytes
    }

    /// Charge `n` more bytes, or refuse (charging nothing).
    pub(crate) fn grow(&mut self, n: usize) -> Result<(), Over> {
        if !reserve(&self.conn, n, self.limits.max_bytes_per_conn) {
            return Err(Over::Connection);
        }
        if !reserve(&self.limits.bytes, n, self.limits.max_bytes_total) {
            self.conn.fetch_sub(n, Ordering::AcqRel);
            return Err(Over::Server);
        }
        self.bytes += n;
        Ok(())
    }

    /// Give everything back.
    pub(crate) fn clear(&mut self) {
        let n = std::mem::take(&mut self.bytes);
        if n > 0 {
            self.conn.fetch_sub(n, Ordering::AcqRel);
            self.limits.bytes.fetch_sub(n, Ordering::AcqRel);
        }
    }

    /// Move the whole charge into a new one, leaving this one empty.
    pub(crate) fn take(&mut self) -> Charge {
        Charge {
            limits: self.limits.clone(),
            conn: self.conn.clone(),
            bytes: std::mem::take(&mut self.bytes),
        }
    }
}

impl Drop for Charge {
    fn drop(&mut self) {
        self.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_and_charges_are_capped_and_released() {
        let l = Arc::new(Limits::new(2, 2, 10, 15));
        let a = l.stmt_slot().unwrap();
        let b = l.stmt_slot().unwrap();
        assert!(l.stmt_slot().is_none());
        drop(a);
        assert_eq!(l.prepared_statements(), 1);
        let c = l.stmt_slot().unwrap();
        drop((b, c));
        assert_eq!(l.prepared_statements(), 0);

        let conn1 = Arc::new(AtomicUsize::new(0));
        let conn2 = Arc::new(AtomicUsize::new(0));
        let mut x = Charge::new(l.clone(), conn1.clone());
        x.grow(8).unwrap();
        assert_eq!(x.grow(3), Err(Over::Connection));
        let mut y = Charge::new(l.clone(), conn2.clone());
        y.grow(7).unwrap();
        assert_eq!(y.grow(1), Err(Over::Server));
        assert_eq!(
            (l.statement_bytes(), conn2.load(Ordering::Relaxed)),
            (15, 7)
        );
        let moved = x.take();
        assert_eq!((x.bytes(), moved.bytes()), (0, 8));
        drop(moved);
        assert_eq!(l.statement_bytes(), 7);
        y.clear();
        drop(x);
        assert_eq!(l.statement_bytes(), 0);
        assert_eq!(conn1.load(Ordering::Relaxed), 0);
        assert_eq!(
            Charge::new(l.clone(), conn1).grow(usize::MAX),
            Err(Over::Connection)
        );
    }
}
