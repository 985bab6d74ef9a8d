//! The WAIT handshake: waiter registration, per-waiter wake-ups, removal.
//!
//! Owns [`WaitState`] (a pure state machine: who waits, who was woken and why, whether
//! the point was removed) and [`WaitCell`], which drives it under a lock + condition
//! variable supplied by a [`Monitor`]. Production uses [`ParkingMonitor`]
//! (`parking_lot`); the model test swaps in a `shuttle` monitor to explore schedules.
//!
//! Invariants this module guarantees (and must never break):
//! - **No lost removal.** `removed` is set under the same lock that registers waiters,
//!   so a waiter either registers before removal (and is woken by it) or sees
//!   `removed == true` and never blocks. This closes the MatrixOne race in which a
//!   REMOVE ran after a hit was dispatched but before its waiter registered.
//! - **Per-waiter wake tokens.** A NOTIFY marks exactly one registered waiter as woken;
//!   a later cancellation of some other waiter cannot release anybody else.
//! - **A notify is never swallowed by a cancel.** A waiter that was already chosen by a
//!   NOTIFY and is then cancelled reports the notification, not the cancellation.
//!
//! It must never look up points by name, run other actions, or block without a bound
//! other than the point's removal (removal is guaranteed on `disable()`).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;

/// A lock plus a condition variable around a value: the only sync primitives the waiter
/// core needs, abstracted so a model checker can substitute its own.
pub(crate) trait Monitor<T>: Send + Sync {
    /// Wraps `value`.
    fn new(value: T) -> Self
    where
        Self: Sized;
    /// Runs `f` with the lock held.
    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R;
    /// Runs `poll` under the lock until it returns `Some`, blocking on the condition
    /// variable in between. With `slice = Some(d)` it gives up after one wait of about
    /// `d` and returns `None` (so the caller can check its cancellation token).
    fn wait_until<R>(
        &self,
        slice: Option<Duration>,
        poll: impl FnMut(&mut T) -> Option<R>,
    ) -> Option<R>;
    /// Wakes every thread blocked in [`Monitor::wait_until`].
    fn notify_all(&self);
}

/// Production monitor: `parking_lot::Mutex` + `parking_lot::Condvar`.
pub(crate) struct ParkingMonitor<T> {
    lock: parking_lot::Mutex<T>,
    cond: parking_lot::Condvar,
}

impl<T: Send> Monitor<T> for ParkingMonitor<T> {
    fn new(value: T) -> Self {
        ParkingMonitor {
            lock: parking_lot::Mutex::new(value),
            cond: parking_lot::Condvar::new(),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        f(&mut self.lock.lock())
    }

    fn wait_until<R>(
        &self,
        slice: Option<Duration>,
        mut poll: impl FnMut(&mut T) -> Option<R>,
    ) -> Option<R> {
        let mut guard = self.lock.lock();
        loop {
            if let Some(r) = poll(&mut guard) {
                return Some(r);
            }
            match slice {
                None => self.cond.wait(&mut guard),
                Some(d) => {
                    if self.cond.wait_for(&mut guard, d).timed_out() {
                        return poll(&mut guard);
                    }
                }
            }
        }
    }

    fn notify_all(&self) {
        self.cond.notify_all();
    }
}

/// Identifies one registered waiter of one point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WaiterId(u64);

/// Why a waiter was released.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitEnd {
    /// A NOTIFY / NOTIFYALL picked this waiter.
    Notified,
    /// The point was removed (or replaced, or injection disabled).
    Removed,
}

/// Outcome of a blocking wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WaitOutcome {
    /// Released by notify or removal.
    Released(WaitEnd),
    /// The caller's token was cancelled first; the waiter deregistered itself.
    Canceled,
}

/// Result of trying to register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Registration {
    /// Registered; the caller must wait on this id (or cancel it).
    Waiting(WaiterId),
    /// The point was removed before the waiter could register: do not block.
    AlreadyRemoved,
}

struct Slot {
    id: WaiterId,
    woken: Option<WaitEnd>,
    /// Set for async waiters, which await this instead of the condition variable.
    signal: Option<Arc<Notify>>,
}

/// The pure WAIT state of one armed point.
#[derive(Default)]
pub(crate) struct WaitState {
    removed: bool,
    next_id: u64,
    slots: VecDeque<Slot>,
}

impl WaitState {
    /// Registers a waiter unless the point was already removed.
    pub(crate) fn register(&mut self, signal: Option<Arc<Notify>>) -> Registration {
        if self.removed {
            return Registration::AlreadyRemoved;
        }
        self.register_unchecked(signal)
    }

    fn register_unchecked(&mut self, signal: Option<Arc<Notify>>) -> Registration {
        let id = WaiterId(self.next_id);
        self.next_id += 1;
        self.slots.push_back(Slot {
            id,
            woken: None,
            signal,
        });
        Registration::Waiting(id)
    }

    /// If waiter `id` was released, deregisters it and says why.
    pub(crate) fn poll(&mut self, id: WaiterId) -> Option<WaitEnd> {
        match self.slots.iter().position(|s| s.id == id) {
            Some(i) => match self.slots[i].woken {
                Some(end) => {
                    self.slots.remove(i);
                    Some(end)
                }
                None => None,
            },
            // Not registered (cannot happen for a live id): never block on it.
            None => Some(WaitEnd::Removed),
        }
    }

    /// Deregisters waiter `id` because its caller was cancelled. Returns the release
    /// reason instead when a notify/removal already picked it (a wake is never lost).
    pub(crate) fn cancel(&mut self, id: WaiterId) -> Option<WaitEnd> {
        let i = self.slots.iter().position(|s| s.id == id)?;
        self.slots.remove(i).and_then(|s| s.woken)
    }

    /// Wakes the oldest waiting waiter. Returns the async signal to fire, if any, and
    /// whether someone was woken.
    fn notify_one(&mut self, fire: &mut Vec<Arc<Notify>>) -> usize {
        match self.slots.iter_mut().find(|s| s.woken.is_none()) {
            Some(slot) => {
                slot.woken = Some(WaitEnd::Notified);
                fire.extend(slot.signal.clone());
                1
            }
            None => 0,
        }
    }

    fn wake_all(&mut self, end: WaitEnd, fire: &mut Vec<Arc<Notify>>) -> usize {
        let mut n = 0;
        for slot in self.slots.iter_mut().filter(|s| s.woken.is_none()) {
            slot.woken = Some(end);
            fire.extend(slot.signal.clone());
            n += 1;
        }
        n
    }

    /// Number of registered waiters not yet woken.
    pub(crate) fn waiting(&self) -> usize {
        self.slots.iter().filter(|s| s.woken.is_none()).count()
    }

    /// Number of registered slots, woken or not (0 once everybody left).
    #[cfg(test)]
    pub(crate) fn registered(&self) -> usize {
        self.slots.len()
    }
}

/// A [`WaitState`] behind a [`Monitor`]: the operations the registry performs.
pub(crate) struct WaitCell<M: Monitor<WaitState>> {
    mon: M,
}

impl<M: Monitor<WaitState>> WaitCell<M> {
    /// A fresh, not-removed cell without waiters.
    pub(crate) fn new() -> Self {
        WaitCell {
            mon: M::new(WaitState::default()),
        }
    }

    /// Registers a waiter (see [`WaitState::register`]).
    pub(crate) fn register(&self, signal: Option<Arc<Notify>>) -> Registration {
        self.mon.with(|s| s.register(signal))
    }

    /// Test-only: registration WITHOUT the removed check (the MatrixOne bug), used to
    /// show that the model test detects the race.
    #[cfg(test)]
    pub(crate) fn register_without_removed_check(&self) -> Registration {
        self.mon.with(|s| s.register_unchecked(None))
    }

    /// See [`WaitState::poll`].
    pub(crate) fn poll(&self, id: WaiterId) -> Option<WaitEnd> {
        self.mon.with(|s| s.poll(id))
    }

    /// See [`WaitState::cancel`].
    pub(crate) fn cancel(&self, id: WaiterId) -> Option<WaitEnd> {
        self.mon.with(|s| s.cancel(id))
    }

    fn deliver(&self, woken: usize, fire: Vec<Arc<Notify>>) -> usize {
        if woken > 0 {
            self.mon.notify_all();
        }
        for signal in fire {
            // `notify_one` stores a permit, so an async waiter that is between its
            // poll and its await still sees the wake-up.
            signal.notify_one();
        }
        woken
    }

    /// Wakes one waiter; returns how many were woken (0 or 1).
    pub(crate) fn notify_one(&self) -> usize {
        let mut fire = Vec::new();
        let n = self.mon.with(|s| s.notify_one(&mut fire));
        self.deliver(n, fire)
    }

    /// Wakes every waiter; returns how many were woken.
    pub(crate) fn notify_all(&self) -> usize {
        let mut fire = Vec::new();
        let n = self.mon.with(|s| s.wake_all(WaitEnd::Notified, &mut fire));
        self.deliver(n, fire)
    }

    /// Marks the point removed and wakes every waiter; later registrations do not block.
    pub(crate) fn remove(&self) -> usize {
        let mut fire = Vec::new();
        let n = self.mon.with(|s| {
            s.removed = true;
            s.wake_all(WaitEnd::Removed, &mut fire)
        });
        self.deliver(n, fire)
    }

    /// Number of waiters not yet woken.
    pub(crate) fn waiting(&self) -> usize {
        self.mon.with(|s| s.waiting())
    }

    /// Number of registered slots (woken waiters that have not left yet included).
    #[cfg(test)]
    pub(crate) fn registered(&self) -> usize {
        self.mon.with(|s| s.registered())
    }

    /// Blocks the calling thread until waiter `id` is released or `is_cancelled()`
    /// turns true. With `cancellable`, the condition variable is waited on in slices of
    /// `slice` so the token is checked at least that often; otherwise the wait is
    /// untimed and ends only on notify/removal.
    pub(crate) fn wait_blocking(
        &self,
        id: WaiterId,
        cancellable: bool,
        slice: Duration,
        is_cancelled: impl Fn() -> bool,
    ) -> WaitOutcome {
        if !cancellable {
            return match self.mon.wait_until(None, |s| s.poll(id)) {
                Some(end) => WaitOutcome::Released(end),
                // `wait_until(None, ..)` only returns with a result.
                None => WaitOutcome::Released(WaitEnd::Removed),
            };
        }
        loop {
            if let Some(end) = self.poll(id) {
                return WaitOutcome::Released(end);
            }
            if is_cancelled() {
                return match self.cancel(id) {
                    Some(end) => WaitOutcome::Released(end),
                    None => WaitOutcome::Canceled,
                };
            }
            if let Some(end) = self.mon.wait_until(Some(slice), |s| s.poll(id)) {
                return WaitOutcome::Released(end);
            }
        }
    }
}

/// The production cell.
pub(crate) type ParkingWaitCell = WaitCell<ParkingMonitor<WaitState>>;

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::time::Instant;

    fn wait_for(deadline: Duration, mut cond: impl FnMut() -> bool) {
        let end = Instant::now() + deadline;
        while !cond() {
            assert!(
                Instant::now() < end,
                "condition not reached within {deadline:?}"
            );
            std::thread::yield_now();
        }
    }

    #[test]
    fn removed_cell_refuses_registration() {
        let cell = ParkingWaitCell::new();
        cell.remove();
        assert_eq!(cell.register(None), Registration::AlreadyRemoved);
    }

    #[test]
    fn notify_then_cancel_keeps_the_notification() {
        let cell = ParkingWaitCell::new();
        let Registration::Waiting(a) = cell.register(None) else {
            panic!("registration failed")
        };
        let Registration::Waiting(b) = cell.register(None) else {
            panic!("registration failed")
        };
        assert_eq!(cell.notify_one(), 1);
        // `a` (oldest) was picked; cancelling `b` must not release anyone else and
        // cancelling `a` must report the notification.
        assert_eq!(cell.cancel(b), None);
        assert_eq!(cell.cancel(a), Some(WaitEnd::Notified));
        assert_eq!(cell.registered(), 0);
    }

    #[test]
    fn blocking_wait_is_released_by_remove_and_cancel() {
        let cell = Arc::new(ParkingWaitCell::new());
        let Registration::Waiting(id) = cell.register(None) else {
            panic!("registration failed")
        };
        let c = cell.clone();
        let t = std::thread::spawn(move || c.wait_blocking(id, false, Duration::ZERO, || false));
        cell.remove();
        assert_eq!(t.join().unwrap(), WaitOutcome::Released(WaitEnd::Removed));

        let cell = Arc::new(ParkingWaitCell::new());
        let Registration::Waiting(id) = cell.register(None) else {
            panic!("registration failed")
        };
        let flag = Arc::new(AtomicBool::new(false));
        let (c, f) = (cell.clone(), flag.clone());
        let t = std::thread::spawn(move || {
            c.wait_blocking(id, true, Duration::from_millis(2), || {
                f.load(Ordering::SeqCst)
            })
        });
        wait_for(Duration::from_secs(5), || cell.waiting() == 1);
        flag.store(true, Ordering::SeqCst);
        assert_eq!(t.join().unwrap(), WaitOutcome::Canceled);
        assert_eq!(cell.registered(), 0);
    }
}

/// Model test of the wait/remove/notify handshake under `shuttle`, which explores
/// thread interleavings (including "REMOVE between dispatch and registration") and
/// reports a deadlock if any waiter could stay blocked.
#[cfg(test)]
mod model {
    use super::*;
    use shuttle::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use shuttle::sync::{Condvar, Mutex};

    struct ShuttleMonitor<T> {
        lock: Mutex<T>,
        cond: Condvar,
    }

    impl<T: Send> Monitor<T> for ShuttleMonitor<T> {
        fn new(value: T) -> Self {
            ShuttleMonitor {
                lock: Mutex::new(value),
                cond: Condvar::new(),
            }
        }

        fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
            f(&mut self.lock.lock().unwrap())
        }

        fn wait_until<R>(
            &self,
            slice: Option<Duration>,
            mut poll: impl FnMut(&mut T) -> Option<R>,
        ) -> Option<R> {
            let mut guard = self.lock.lock().unwrap();
            loop {
                if let Some(r) = poll(&mut guard) {
                    return Some(r);
                }
                match slice {
                    None => guard = self.cond.wait(guard).unwrap(),
                    Some(_) => {
                        // shuttle's Condvar never times out; model a timed slice as
                        // "release the lock, let others run, report a timeout".
                        drop(guard);
                        shuttle::thread::yield_now();
                        return None;
                    }
                }
            }
        }

        fn notify_all(&self) {
            self.cond.notify_all();
        }
    }

    type Cell = WaitCell<ShuttleMonitor<WaitState>>;
    /// The registry's point table reduced to one name: `None` = not armed.
    type Table = Mutex<Option<Arc<Cell>>>;

    fn dispatch(table: &Table) -> Option<Arc<Cell>> {
        table.lock().unwrap().clone()
    }

    fn retire(table: &Table, replacement: Option<Arc<Cell>>) {
        let old = std::mem::replace(&mut *table.lock().unwrap(), replacement);
        if let Some(old) = old {
            old.remove();
        }
    }

    /// One schedule: 3 plain waiters, 1 cancellable waiter, a notifier (notify then
    /// notifyall), a replacer (re-arm = remove old + insert new), a remover and a
    /// canceller; finally "disable" removes whatever is armed. Every waiter must return.
    fn scenario(buggy_registration: bool) {
        let table: Arc<Table> = Arc::new(Mutex::new(Some(Arc::new(Cell::new()))));
        let released = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let mut waiters = Vec::new();
        for i in 0..4 {
            let (table, released, cancel) = (table.clone(), released.clone(), cancel.clone());
            waiters.push(shuttle::thread::spawn(move || {
                let Some(cell) = dispatch(&table) else {
                    released.fetch_add(1, Ordering::SeqCst);
                    return;
                };
                // <- a REMOVE may run exactly here (after dispatch, before registration)
                let reg = if buggy_registration {
                    cell.register_without_removed_check()
                } else {
                    cell.register(None)
                };
                if let Registration::Waiting(id) = reg {
                    let cancellable = i == 3;
                    let c = cancel.clone();
                    let _ =
                        cell.wait_blocking(id, cancellable, Duration::from_millis(1), move || {
                            c.load(Ordering::SeqCst)
                        });
                }
                released.fetch_add(1, Ordering::SeqCst);
            }));
        }
        let notifier = {
            let table = table.clone();
            shuttle::thread::spawn(move || {
                if let Some(cell) = dispatch(&table) {
                    cell.notify_one();
                }
                if let Some(cell) = dispatch(&table) {
                    cell.notify_all();
                }
            })
        };
        let replacer = {
            let table = table.clone();
            shuttle::thread::spawn(move || retire(&table, Some(Arc::new(Cell::new()))))
        };
        let remover = {
            let table = table.clone();
            shuttle::thread::spawn(move || retire(&table, None))
        };
        let canceller = {
            let cancel = cancel.clone();
            shuttle::thread::spawn(move || cancel.store(true, Ordering::SeqCst))
        };
        notifier.join().unwrap();
        replacer.join().unwrap();
        remover.join().unwrap();
        canceller.join().unwrap();
        // disable(): removes whatever is still armed.
        retire(&table, None);
        for w in waiters {
            w.join().unwrap();
        }
        assert_eq!(released.load(Ordering::SeqCst), 4);
    }

    #[test]
    fn wait_remove_notify_handshake_never_strands_a_waiter() {
        shuttle::check_random(|| scenario(false), 2000);
    }

    #[test]
    fn model_detects_the_matrixone_registration_race() {
        // Without the `removed` check the model must find a schedule in which a waiter
        // registers on a retired cell and blocks forever (shuttle reports a deadlock).
        let found = std::panic::catch_unwind(|| shuttle::check_random(|| scenario(true), 2000));
        assert!(
            found.is_err(),
            "shuttle should have found the stranded waiter"
        );
    }
}
