//! Row lock manager: shared (S), intention-exclusive (IX) and exclusive
//! (X) locks per `(table, key)`, the wait-for graph, deadlock detection and
//! lock-wait timeouts.
//!
//! Owns who holds which row lock in which mode and who waits for which row
//! in which mode. S is compatible with S, IX with IX; every other pair
//! conflicts (X with everything). IX exists for table-level locks on a
//! catalog record: writers of a table take IX (they do not exclude each
//! other), `LOCK TABLES` takes S (excluding writers, not other readers),
//! DDL takes X. A transaction holding X covers every request; S covers S,
//! IX covers IX; a transaction asking for a mode its lock does not cover
//! asks for the combination ([`LockMode::combine`]: S with IX is X) and
//! upgrades in place once no other holder conflicts. Per row, the holders
//! are therefore any number of S holders, or any number of IX holders, or
//! exactly one X holder.
//!
//! A request already covered by a lock its transaction holds is granted at
//! once. Otherwise it is granted as soon as no *other* holder of the row
//! conflicts with it — and no other transaction is waiting on the row for
//! a mode it yields to: S and IX requests yield to a queued X, IX requests
//! to a queued S (so a stream of writers cannot starve a DDL or a `LOCK
//! TABLES`). A waiter waits for
//! exactly that set, computed from the current state each time. Each
//! waiting transaction waits for one row, so the wait-for graph is
//! `waiter -> each conflicting holder of the row it waits for -> ...` (plus
//! the queued exclusive requests a shared waiter yields to), walked
//! depth-first with a visited set; a request whose wait would close a
//! cycle back to the requester fails at once with
//! [`StorageError::Deadlock`] for that requester only. Only a transaction
//! that is not waiting can gain locks (one thread per transaction), and a
//! non-waiting transaction has no outgoing edges, so every cycle is closed —
//! and detected — by a request that is about to wait (registered as waiting
//! before the walk, so the edges its queued exclusive request gives the
//! row's shared waiters are seen): detection is exact.
//! Releasing locks wakes every waiter (one condition variable), which then
//! re-checks its request, so an X request is granted once all conflicting
//! holders have released; so does an exclusive request that gives up
//! (timeout, deadlock), since shared requests may have been yielding to it.
//!
//! This module must never read or write rows, never grant a lock that
//! conflicts with another holder's, and never wait without a deadline
//! (timeouts too large to represent are waited out in bounded slices).

use std::collections::HashSet;
use std::time::{Duration, Instant};

use foldhash::HashMap;
use parking_lot::{Condvar, Mutex};
use smallvec::SmallVec;

use crate::api::{Interrupt, Result, StorageError, TableId, TxnId};

/// Longest a lock wait sleeps before re-checking its statement's
/// [`Interrupt`] (a KILL does not signal the lock table).
const INTERRUPT_POLL: Duration = Duration::from_millis(20);

/// A row: `(table, key)`.
pub(super) type RowId = (TableId, Vec<u8>);

/// Lock mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum LockMode {
    /// Compatible with other shared locks (`SELECT … FOR SHARE`, `LOCK
    /// TABLES` on a catalog record).
    Shared,
    /// Compatible with other intention-exclusive locks (a table's writers
    /// on its catalog record).
    IntentExclusive,
    /// Conflicts with every other lock (writes, `FOR UPDATE`, DDL).
    Exclusive,
}

impl LockMode {
    /// Whether a lock already held in mode `self` satisfies a request for
    /// `wanted`.
    pub(super) fn covers(self, wanted: LockMode) -> bool {
        self == LockMode::Exclusive || self == wanted
    }

    /// The mode that covers both `self` and `wanted`.
    pub(super) fn combine(self, wanted: LockMode) -> LockMode {
        if self.covers(wanted) {
            self
        } else {
            LockMode::Exclusive
        }
    }

    fn compatible(self, other: LockMode) -> bool {
        matches!(
            (self, other),
            (LockMode::Shared, LockMode::Shared)
                | (LockMode::IntentExclusive, LockMode::IntentExclusive)
        )
    }

    /// Whether a request for `self` waits behind a queued request for
    /// `queued` on the same row (see the module doc).
    fn yields_to(self, queued: LockMode) -> bool {
        match (self, queued) {
            (LockMode::Exclusive, _) => false,
            (_, LockMode::Exclusive) => true,
            (LockMode::IntentExclusive, LockMode::Shared) => true,
            _ => false,
        }
    }
}

/// The holders of one row: one for a row lock, the writers in flight for a
/// table's intention lock — few, so kept inline (no allocation for up to
/// two) and searched linearly.
#[derive(Debug, Default)]
struct Holders(SmallVec<[(TxnId, LockMode); 2]>);

impl Holders {
    fn get(&self, txn: &TxnId) -> Option<&LockMode> {
        self.0.iter().find(|(t, _)| t == txn).map(|(_, m)| m)
    }

    /// Set `txn`'s mode.
    fn insert(&mut self, txn: TxnId, mode: LockMode) {
        match self.0.iter_mut().find(|(t, _)| *t == txn) {
            Some(e) => e.1 = mode,
            None => self.0.push((txn, mode)),
        }
    }

    /// Drop `txn`'s lock; whether it held one.
    fn remove(&mut self, txn: &TxnId) -> bool {
        match self.0.iter().position(|(t, _)| t == txn) {
            Some(i) => {
                self.0.swap_remove(i);
                true
            }
            None => false,
        }
    }

    fn iter(&self) -> impl Iterator<Item = (&TxnId, &LockMode)> {
        self.0.iter().map(|(t, m)| (t, m))
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.0.len()
    }

    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl FromIterator<(TxnId, LockMode)> for Holders {
    fn from_iter<I: IntoIterator<Item = (TxnId, LockMode)>>(iter: I) -> Self {
        let mut h = Holders::default();
        for (t, m) in iter {
            h.insert(t, m);
        }
        h
    }
}

#[derive(Debug, Default)]
struct State {
    /// Holders per row. Invariant: a row present here has at least one
    /// holder, and an `Exclusive` holder is the only holder of its row.
    holders: HashMap<RowId, Holders>,
    /// What each blocked transaction waits for.
    waiting: HashMap<TxnId, (RowId, LockMode)>,
}

impl State {
    /// Transactions other than `txn` that a request by `txn` for `mode` on
    /// `row` must wait for: holders whose lock conflicts, and transactions
    /// already waiting on the row for a mode the request yields to (a
    /// stream of writers' metadata locks must not starve a waiting DDL or
    /// LOCK TABLES).
    fn conflicting<'a>(
        &'a self,
        txn: TxnId,
        row: &'a RowId,
        mode: LockMode,
    ) -> impl Iterator<Item = TxnId> + 'a {
        let holders = self
            .holders
            .get(row)
            .into_iter()
            .flat_map(|h| h.iter())
            .filter(move |(t, m)| **t != txn && !m.compatible(mode))
            .map(|(t, _)| *t);
        let queued_exclusive = self
            .waiting
            .iter()
            .filter(move |(t, (r, m))| **t != txn && r == row && mode.yields_to(*m))
            .map(|(t, _)| *t);
        holders.chain(queued_exclusive)
    }

    /// Grant `(row, mode)` to `txn` unless it must wait. Returns
    /// `Some(false)` when an already held lock covers the request (granted
    /// whatever is queued: a holder never waits for its own row),
    /// `Some(true)` when the lock was newly taken or upgraded, `None` when it
    /// must wait.
    fn try_grant(&mut self, txn: TxnId, row: &RowId, mode: LockMode) -> Option<bool> {
        if self
            .holders
            .get(row)
            .and_then(|h| h.get(&txn))
            .is_some_and(|m| m.covers(mode))
        {
            return Some(false);
        }
        if self.conflicting(txn, row, mode).next().is_some() {
            return None;
        }
        self.holders
            .entry(row.clone())
            .or_default()
            .insert(txn, mode);
        Some(true)
    }

    /// Would `txn` waiting for `(row, mode)` close a cycle in the wait-for
    /// graph? Depth-first over conflicting holders, each transaction visited
    /// once.
    fn closes_cycle(&self, txn: TxnId, row: &RowId, mode: LockMode) -> bool {
        let mut stack: Vec<TxnId> = self.conflicting(txn, row, mode).collect();
        let mut seen: HashSet<TxnId> = HashSet::new();
        while let Some(cur) = stack.pop() {
            if cur == txn {
                return true;
            }
            if !seen.insert(cur) {
                continue;
            }
            if let Some((next_row, next_mode)) = self.waiting.get(&cur) {
                stack.extend(self.conflicting(cur, next_row, *next_mode));
            }
        }
        false
    }

    /// Drop `txn`'s lock on `row`. Returns whether it held one.
    fn release(&mut self, txn: TxnId, row: &RowId) -> bool {
        let Some(held) = self.holders.get_mut(row) else {
            return false;
        };
        let had = held.remove(&txn);
        if held.is_empty() {
            self.holders.remove(row);
        }
        had
    }
}

/// The lock table.
#[derive(Debug, Default)]
pub(super) struct LockManager {
    state: Mutex<State>,
    released: Condvar,
}

impl LockManager {
    /// Acquire the lock on `(table, key)` in `mode` for `txn`, waiting at
    /// most `timeout` for conflicting holders to release. Returns `Ok(true)`
    /// when newly acquired or upgraded (S to X), `Ok(false)` when a lock
    /// already held covers the request.
    pub fn acquire(
        &self,
        txn: TxnId,
        table: TableId,
        key: &[u8],
        mode: LockMode,
        timeout: Duration,
        interrupt: &Interrupt,
    ) -> Result<bool> {
        let row: RowId = (table, key.to_vec());
        let deadline = Instant::now().checked_add(timeout);
        let mut st = self.state.lock();
        let mut timed_out = false;
        let mut waited = false;
        loop {
            if let Some(newly) = st.try_grant(txn, &row, mode) {
                st.waiting.remove(&txn);
                return Ok(newly);
            }
            if !waited {
                waited = true;
                metrics::counter!("tributary_lock_waits_total").increment(1);
            }
            if let Err(e) = interrupt.check() {
                self.give_up(&mut st, txn, mode);
                return Err(e);
            }
            if timed_out {
                self.give_up(&mut st, txn, mode);
                metrics::counter!("tributary_lock_wait_timeouts_total").increment(1);
                return Err(StorageError::LockWaitTimeout);
            }
            // Registered before the check: a queued exclusive request adds
            // edges from the row's shared waiters to itself, which the
            // walk must see.
            st.waiting.insert(txn, (row.clone(), mode));
            if st.closes_cycle(txn, &row, mode) {
                self.give_up(&mut st, txn, mode);
                tracing::debug!(txn, table, ?mode, "deadlock detected");
                metrics::counter!("tributary_deadlocks_total").increment(1);
                return Err(StorageError::Deadlock);
            }
            // A KILL does not signal this condvar: wait in slices of at most
            // INTERRUPT_POLL so it is seen promptly; the statement's own
            // deadline ends a slice too.
            let slice_end = Instant::now() + INTERRUPT_POLL;
            let slice_end = interrupt.deadline().map_or(slice_end, |d| d.min(slice_end));
            match deadline {
                Some(d) if d <= slice_end => {
                    timed_out = self.released.wait_until(&mut st, d).timed_out();
                }
                _ => {
                    self.released.wait_until(&mut st, slice_end);
                }
            }
        }
    }

    /// [`Self::acquire`] without waiting (NOWAIT / SKIP LOCKED): whether
    /// the lock was granted now; a request that would wait — for a holder
    /// or behind a queued request — is not queued and fails.
    pub fn try_acquire(&self, txn: TxnId, table: TableId, key: &[u8], mode: LockMode) -> bool {
        let row: RowId = (table, key.to_vec());
        self.state.lock().try_grant(txn, &row, mode).is_some()
    }

    /// `txn` stops waiting without the lock; requests that yielded to it
    /// are woken to re-check.
    fn give_up(&self, st: &mut State, txn: TxnId, mode: LockMode) {
        let yielded_to = mode != LockMode::IntentExclusive;
        if st.waiting.remove(&txn).is_some() && yielded_to {
            self.released.notify_all();
        }
    }

    /// Transactions currently waiting for a lock, in id order.
    pub fn waiters(&self) -> Vec<TxnId> {
        let mut w: Vec<TxnId> = self.state.lock().waiting.keys().copied().collect();
        w.sort_unstable();
        w
    }

    /// Release the given locks of `txn` (whatever their mode) and wake
    /// waiters.
    pub fn release_all<'a>(&self, txn: TxnId, rows: impl IntoIterator<Item = &'a RowId>) {
        let mut st = self.state.lock();
        let mut any = false;
        for row in rows {
            let held = st.release(txn, row);
            // The caller's lock set names exactly the rows it holds.
            debug_assert!(held, "txn {txn:?} released a lock it did not hold");
            any |= held;
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
    use std::sync::mpsc;
    use std::sync::Arc;
    use std::thread;

    use super::LockMode::{Exclusive as X, IntentExclusive as IX, Shared as S};
    use super::*;

    /// An interrupt that never fires.
    static NEVER: std::sync::LazyLock<Interrupt> = std::sync::LazyLock::new(Interrupt::default);
    const SHORT: Duration = Duration::from_millis(50);
    /// Bound for anything expected to happen.
    const LONG: Duration = Duration::from_secs(10);
    /// Lock-wait timeout of requests that must be woken by a release: longer
    /// than [`LONG`], so a lost wake-up fails the test instead of being
    /// rescued by the waiter's own timeout.
    const WAIT: Duration = Duration::from_secs(30);

    fn row(k: &[u8]) -> RowId {
        (1, k.to_vec())
    }

    #[test]
    fn reentrant_and_exclusive() {
        let m = LockManager::default();
        assert!(m.acquire(1, 1, b"k", X, SHORT, &NEVER).unwrap());
        assert!(!m.acquire(1, 1, b"k", X, SHORT, &NEVER).unwrap());
        // X covers S.
        assert!(!m.acquire(1, 1, b"k", S, SHORT, &NEVER).unwrap());
        assert_eq!(
            m.acquire(2, 1, b"k", X, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        m.release_all(1, [&row(b"k")]);
        assert!(m.acquire(2, 1, b"k", X, SHORT, &NEVER).unwrap());
    }

    #[test]
    fn shared_locks_coexist() {
        let m = LockManager::default();
        assert!(m.acquire(1, 1, b"k", S, SHORT, &NEVER).unwrap());
        assert!(m.acquire(2, 1, b"k", S, SHORT, &NEVER).unwrap());
        // S again is a no-op.
        assert!(!m.acquire(1, 1, b"k", S, SHORT, &NEVER).unwrap());
        let st = m.state.lock();
        assert_eq!(st.holders[&row(b"k")].len(), 2);
    }

    #[test]
    fn shared_conflicts_with_exclusive_both_ways() {
        let m = LockManager::default();
        m.acquire(1, 1, b"k", S, SHORT, &NEVER).unwrap();
        assert_eq!(
            m.acquire(2, 1, b"k", X, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        m.release_all(1, [&row(b"k")]);
        m.acquire(2, 1, b"k", X, SHORT, &NEVER).unwrap();
        assert_eq!(
            m.acquire(3, 1, b"k", S, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        // The failed requests left nothing behind.
        let st = m.state.lock();
        assert!(st.waiting.is_empty());
        assert_eq!(st.holders[&row(b"k")].len(), 1);
    }

    #[test]
    fn cancelled_waiter_gives_up_promptly_and_leaves_nothing() {
        let m = Arc::new(LockManager::default());
        m.acquire(1, 1, b"k", X, SHORT, &NEVER).unwrap();
        let token = tokio_util::sync::CancellationToken::new();
        let interrupt = Interrupt::new(token.clone(), None);
        let (tx, rx) = mpsc::channel();
        let waiter = {
            let m = m.clone();
            thread::spawn(move || {
                tx.send(()).unwrap();
                m.acquire(2, 1, b"k", X, WAIT, &interrupt)
            })
        };
        rx.recv().unwrap();
        // Wait (bounded) until the request is queued, then cancel it.
        let until = Instant::now() + LONG;
        while m.waiters() != vec![2] {
            assert!(Instant::now() < until, "the request never queued");
            thread::yield_now();
        }
        let cancelled_at = Instant::now();
        token.cancel();
        assert_eq!(waiter.join().unwrap(), Err(StorageError::Interrupted));
        // Far sooner than the lock-wait timeout (WAIT).
        assert!(cancelled_at.elapsed() < LONG);
        assert!(m.waiters().is_empty());
        assert_eq!(m.state.lock().holders[&row(b"k")].len(), 1);
    }

    #[test]
    fn statement_deadline_ends_a_lock_wait() {
        let m = LockManager::default();
        m.acquire(1, 1, b"k", X, SHORT, &NEVER).unwrap();
        let deadline = Instant::now() + SHORT;
        let interrupt = Interrupt::new(tokio_util::sync::CancellationToken::new(), Some(deadline));
        assert_eq!(
            m.acquire(2, 1, b"k", X, WAIT, &interrupt),
            Err(StorageError::Interrupted)
        );
        assert!(Instant::now() >= deadline);
        assert!(m.waiters().is_empty());
    }

    #[test]
    fn intention_locks_share_with_each_other_only() {
        let m = LockManager::default();
        m.acquire(1, 1, b"k", IX, SHORT, &NEVER).unwrap();
        m.acquire(2, 1, b"k", IX, SHORT, &NEVER).unwrap();
        // A shared (LOCK TABLES) or exclusive (DDL) request waits for them.
        assert_eq!(
            m.acquire(3, 1, b"k", S, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        assert_eq!(
            m.acquire(3, 1, b"k", X, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        m.release_all(1, [&row(b"k")]);
        m.release_all(2, [&row(b"k")]);
        m.acquire(3, 1, b"k", S, SHORT, &NEVER).unwrap();
        // …and an IX request waits for the shared holder.
        assert_eq!(
            m.acquire(4, 1, b"k", IX, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        assert!(m.state.lock().waiting.is_empty());
    }

    #[test]
    fn modes_cover_and_combine() {
        assert!(X.covers(S) && X.covers(IX) && S.covers(S) && IX.covers(IX));
        assert!(!S.covers(IX) && !IX.covers(S) && !S.covers(X));
        assert_eq!(S.combine(IX), X);
        assert_eq!(IX.combine(S), X);
        assert_eq!(IX.combine(IX), IX);
        assert_eq!(X.combine(S), X);
    }

    #[test]
    fn intention_requests_yield_to_a_queued_shared_one() {
        let m = Arc::new(LockManager::default());
        m.acquire(1, 1, b"k", IX, SHORT, &NEVER).unwrap();
        let (tx, rx) = mpsc::channel();
        let reader = {
            let m = m.clone();
            thread::spawn(move || {
                tx.send(()).unwrap();
                m.acquire(2, 1, b"k", S, WAIT, &NEVER)
            })
        };
        rx.recv().unwrap();
        let until = Instant::now() + LONG;
        while m.waiters() != vec![2] {
            assert!(Instant::now() < until, "the shared request never queued");
            thread::yield_now();
        }
        // A new writer queues behind the shared request instead of
        // starving it.
        assert_eq!(
            m.acquire(3, 1, b"k", IX, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        m.release_all(1, [&row(b"k")]);
        assert_eq!(reader.join().unwrap(), Ok(true));
    }

    #[test]
    fn sole_shared_holder_upgrades() {
        let m = LockManager::default();
        assert!(m.acquire(1, 1, b"k", S, SHORT, &NEVER).unwrap());
        assert!(m.acquire(1, 1, b"k", X, SHORT, &NEVER).unwrap());
        assert_eq!(
            m.acquire(2, 1, b"k", S, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
    }

    #[test]
    fn exclusive_waiter_wakes_when_last_shared_holder_releases() {
        let m = Arc::new(LockManager::default());
        m.acquire(1, 1, b"k", S, SHORT, &NEVER).unwrap();
        m.acquire(2, 1, b"k", S, SHORT, &NEVER).unwrap();
        let (tx, rx) = mpsc::channel();
        let m2 = m.clone();
        let h = thread::spawn(move || {
            let r = m2.acquire(3, 1, b"k", X, WAIT, &NEVER);
            tx.send(r).unwrap();
        });
        let deadline = Instant::now() + LONG;
        while !m.waiters().contains(&3) {
            assert!(rx.try_recv().is_err(), "X granted over S holders");
            assert!(Instant::now() < deadline, "txn 3 never waited");
            thread::yield_now();
        }
        m.release_all(1, [&row(b"k")]);
        assert!(
            rx.recv_timeout(SHORT).is_err(),
            "X granted over one S holder"
        );
        m.release_all(2, [&row(b"k")]);
        assert_eq!(rx.recv_timeout(LONG).unwrap(), Ok(true));
        h.join().unwrap();
    }

    #[test]
    fn double_upgrade_is_a_deadlock_for_the_second() {
        let m = Arc::new(LockManager::default());
        m.acquire(1, 1, b"k", S, SHORT, &NEVER).unwrap();
        m.acquire(2, 1, b"k", S, SHORT, &NEVER).unwrap();
        let (tx, rx) = mpsc::channel();
        let m2 = m.clone();
        let h = thread::spawn(move || {
            let r = m2.acquire(1, 1, b"k", X, WAIT, &NEVER);
            tx.send(r).unwrap();
        });
        // Wait (bounded) until txn 1 is registered as waiting.
        let deadline = Instant::now() + LONG;
        while !m.waiters().contains(&1) {
            assert!(Instant::now() < deadline, "txn 1 never waited");
            thread::yield_now();
        }
        let started = Instant::now();
        assert_eq!(
            m.acquire(2, 1, b"k", X, WAIT, &NEVER),
            Err(StorageError::Deadlock)
        );
        assert!(started.elapsed() < LONG, "deadlock was not immediate");
        m.release_all(2, [&row(b"k")]);
        assert_eq!(rx.recv_timeout(LONG).unwrap(), Ok(true));
        h.join().unwrap();
    }

    #[test]
    fn cycle_detection_follows_every_holder() {
        let mut st = State::default();
        // a: S by 1 and 3; b: X by 2; 1 waits for X(b).
        st.holders
            .insert(row(b"a"), [(1, S), (3, S)].into_iter().collect());
        st.holders.insert(row(b"b"), [(2, X)].into_iter().collect());
        st.waiting.insert(1, (row(b"b"), X));
        // 2 wanting X(a) waits for 1 and 3; 1 waits for 2.
        assert!(st.closes_cycle(2, &row(b"a"), X));
        // 2 wanting S(a) conflicts with nobody.
        assert!(!st.closes_cycle(2, &row(b"a"), S));
        // 4 is not part of any cycle.
        assert!(!st.closes_cycle(4, &row(b"a"), X));
        // A cycle not through the requester is not the requester's deadlock:
        // 5 and 6 wait for each other; 7 waits for 5.
        st.holders.insert(row(b"c"), [(5, X)].into_iter().collect());
        st.holders.insert(row(b"d"), [(6, X)].into_iter().collect());
        st.waiting.insert(5, (row(b"d"), X));
        st.waiting.insert(6, (row(b"c"), X));
        assert!(!st.closes_cycle(7, &row(b"c"), S));
    }

    #[test]
    fn cycle_detection_follows_each_of_many_holders() {
        // Eight S holders of `a`; exactly one of them (`w`) waits for X(b),
        // held by 100. 100 asking X(a) waits for all eight: a cycle through
        // `w`, whichever holder that is.
        for w in 1..=8 {
            let mut st = State::default();
            st.holders
                .insert(row(b"a"), (1..=8).map(|t| (t, S)).collect());
            st.holders
                .insert(row(b"b"), [(100, X)].into_iter().collect());
            st.waiting.insert(w, (row(b"b"), X));
            assert!(st.closes_cycle(100, &row(b"a"), X), "cycle via {w}");
            assert!(!st.closes_cycle(200, &row(b"a"), X));
        }
        // A longer chain: 100 waits for {1..8}; 5 waits for X(c) held by 300;
        // 300 waits for X(d), held in S by 400 (not waiting): no cycle ...
        let mut st = State::default();
        st.holders
            .insert(row(b"a"), (1..=8).map(|t| (t, S)).collect());
        st.holders
            .insert(row(b"c"), [(300, X)].into_iter().collect());
        st.waiting.insert(5, (row(b"c"), X));
        st.holders
            .insert(row(b"d"), [(400, S)].into_iter().collect());
        st.waiting.insert(300, (row(b"d"), X));
        assert!(!st.closes_cycle(100, &row(b"a"), X));
        // ... until 100 also holds S(d).
        if let Some(h) = st.holders.get_mut(&row(b"d")) {
            h.insert(100, S);
        }
        assert!(st.closes_cycle(100, &row(b"a"), X));
    }

    #[test]
    fn release_frees_both_modes() {
        let m = LockManager::default();
        m.acquire(1, 1, b"s", S, SHORT, &NEVER).unwrap();
        m.acquire(1, 1, b"x", X, SHORT, &NEVER).unwrap();
        m.acquire(2, 1, b"s", S, SHORT, &NEVER).unwrap();
        m.release_all(1, [&row(b"s"), &row(b"x")]);
        assert!(m.acquire(3, 1, b"x", X, SHORT, &NEVER).unwrap());
        // 2 still holds S(s).
        assert_eq!(
            m.acquire(3, 1, b"s", X, SHORT, &NEVER),
            Err(StorageError::LockWaitTimeout)
        );
        m.release_all(2, [&row(b"s")]);
        assert!(m.acquire(3, 1, b"s", X, SHORT, &NEVER).unwrap());
        let st = m.state.lock();
        assert_eq!(st.holders.len(), 2);
    }
}
