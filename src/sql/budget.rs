//! Statement budgets: how long (KILL QUERY, `max_execution_time`) and how
//! much memory a running statement may take (decision 023).
//!
//! Owns the running statement's control block on its thread ([`Scope`]):
//! its interrupt and its memory account, charged against the statement's
//! limit (`tributary_statement_memory_limit`) and the node's global limit
//! for all statements at once ([`Global`], `--statement-memory-total`).
//! Owns the one check every loop over rows goes through ([`tick`]: cheap,
//! it looks at the interrupt every [`TICK_EVERY`] calls) and the RAII
//! [`Reservation`] that holds charged bytes and gives them back when
//! dropped — so a failed or killed statement returns everything. A
//! charge past a limit fails the statement with ER_RECORD_FILE_FULL
//! (1114, "The table '…' is full"), as MySQL's in-memory temporary table
//! does at its cap; never the process.
//!
//! Sizes are estimates ([`approx_size`]): what a row of values holds on
//! the heap, allocator slack aside. Never allocates rows itself, never
//! decides where rows are kept (the operators do), never reads a table.

use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::error::{SqlError, SqlResult};
use crate::types::Value;

/// ER_RECORD_FILE_FULL: a statement's rows passed a memory budget.
pub const TABLE_FULL: u16 = 1114;

/// Calls of [`tick`] between two looks at the interrupt (a look costs a
/// lock and a clock read; a row costs far more than 1/1024 of that).
pub const TICK_EVERY: u32 = 1024;

/// Bytes a [`Reservation`] gathers before it charges the shared counters
/// (and looks at the interrupt).
const FLUSH_BYTES: u64 = 256 << 10;

/// The memory all statements of a node may hold at once.
#[derive(Debug)]
pub struct Global {
    limit: u64,
    used: AtomicU64,
    /// Highest `used` seen (for tests and `SHOW STATUS`).
    peak: AtomicU64,
    /// Default limit of one statement (`tributary_statement_memory_limit`
    /// = 0).
    statement_default: u64,
    /// SQL-level prepared statements on the node.
    prepared: std::sync::atomic::AtomicUsize,
}

impl Global {
    /// A global budget of `limit` bytes; statements default to
    /// `statement_default` bytes each.
    pub fn new(limit: u64, statement_default: u64) -> Self {
        Global {
            limit,
            used: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            statement_default,
            prepared: Default::default(),
        }
    }

    /// Bytes charged now by all statements (and SQL prepared statements).
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// The highest [`Global::used`] since start.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Acquire)
    }

    /// The global limit in bytes.
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// SQL-level prepared statements on the node now.
    pub fn prepared_statements(&self) -> usize {
        self.prepared.load(Ordering::Acquire)
    }

    /// A statement's limit when its session set none.
    pub fn statement_default(&self) -> u64 {
        self.statement_default
    }

    fn charge(&self, n: u64) -> SqlResult<()> {
        let now = self.used.fetch_add(n, Ordering::AcqRel) + n;
        self.peak.fetch_max(now, Ordering::AcqRel);
        if now > self.limit {
            return Err(full(
                "all statements",
                "--statement-memory-total",
                self.limit,
            ));
        }
        Ok(())
    }

    fn release(&self, n: u64) {
        let before = self.used.fetch_sub(n, Ordering::AcqRel);
        debug_assert!(before >= n, "released more than charged");
    }
}

/// Physical memory in bytes (`None` when it cannot be read).
fn physical_memory() -> Option<u64> {
    let m = std::fs::read_to_string("/proc/meminfo").ok()?;
    m.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb.saturating_mul(1024))
}

/// The default global budget: a quarter of physical memory, at least
/// 256 MiB (1 GiB where the memory cannot be read).
pub fn default_total() -> u64 {
    physical_memory().map_or(1 << 30, |b| (b / 4).max(256 << 20))
}

/// The default statement budget for global budget `total`: an eighth of
/// it, 64 MiB to 2 GiB.
pub fn default_statement(total: u64) -> u64 {
    (total / 8).clamp(64 << 20, 2 << 30).min(total)
}

/// The default limit of one transaction's write set for global budget
/// `total` (`tributary_transaction_memory_limit` = 0): a quarter of it.
/// The commit of a transaction at its limit takes a few times the limit
/// for a moment (decision 032: its versions, its commit-log record, the
/// applier's file transaction), so the default leaves room for that.
pub fn default_transaction(total: u64) -> u64 {
    total / 4
}

/// Transactions charge their write sets to the global budget too
/// (decision 032): what they hold between statements is not there for
/// statements to use.
impl tributary_storage::write_budget::MemoryBudget for Global {
    fn try_charge(&self, n: u64) -> bool {
        let now = self.used.fetch_add(n, Ordering::AcqRel) + n;
        if now > self.limit {
            self.used.fetch_sub(n, Ordering::AcqRel);
            return false;
        }
        self.peak.fetch_max(now, Ordering::AcqRel);
        true
    }

    fn release(&self, n: u64) {
        Global::release(self, n);
    }

    fn setting(&self) -> &str {
        "--statement-memory-total"
    }
}

fn full(what: &str, setting: &str, limit: u64) -> SqlError {
    SqlError::new(
        TABLE_FULL,
        format!(
            "The table '#sql-rows' is full: the rows of {what} passed the memory budget \
             ({setting} = {limit} bytes)"
        ),
    )
}

/// Bytes a statement must have held for [`release_memory`] to run after
/// it.
pub const RELEASE_AFTER: u64 = 16 << 20;

/// What gives freed memory back to the operating system (the binary's
/// allocator: mimalloc keeps freed pages of an idle thread's heap until
/// it is collected). Set once by the binary; the library has none.
static RELEASE: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Install the allocator's collect function (the binary does, at start).
pub fn set_release_hook(f: fn()) {
    let _ = RELEASE.set(f);
}

/// Give memory this thread freed back to the operating system, if the
/// binary installed a way to (after a statement that held at least
/// [`RELEASE_AFTER`] bytes, so resident memory returns to its baseline).
pub fn release_memory() {
    if let Some(f) = RELEASE.get() {
        f();
    }
}

/// A statement that held at least [`RELEASE_AFTER`] bytes ended on this
/// thread: release its memory now, or — on a thread that defers its
/// teardown — after the reply ([`take_release_due`]).
pub fn statement_ended(peak: u64) {
    if peak < RELEASE_AFTER {
        return;
    }
    if DEFER.with(Cell::get) {
        RELEASE_DUE.with(|d| d.set(true));
    } else {
        release_memory();
    }
}

/// Whether a statement asked for [`release_memory`] after the reply
/// (cleared).
pub fn take_release_due() -> bool {
    RELEASE_DUE.with(|d| d.replace(false))
}

/// One running statement: its interrupt and its memory account.
pub struct Statement {
    limit: u64,
    used: AtomicU64,
    /// Highest `used` of the statement.
    peak: AtomicU64,
    /// Set once the statement was interrupted or passed a budget: what it
    /// still holds is torn down after the reply ([`Grave`]).
    failed: std::sync::atomic::AtomicBool,
    global: Arc<Global>,
    interrupt: Mutex<tributary_storage::Interrupt>,
}

impl Statement {
    /// A statement under `interrupt` that may hold `limit` bytes (and
    /// whatever is left of `global`).
    pub fn new(limit: u64, global: Arc<Global>, interrupt: tributary_storage::Interrupt) -> Self {
        Statement {
            limit,
            used: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            failed: Default::default(),
            global,
            interrupt: Mutex::new(interrupt),
        }
    }

    /// Bytes the statement holds now.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Acquire)
    }

    /// Bytes the statement may still charge before its own limit.
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used())
    }

    /// The most bytes the statement held at once.
    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Acquire)
    }

    /// `Err` (1317; the statement runner reports 3024 for a deadline)
    /// once the statement is killed or past its deadline.
    pub fn check(&self) -> SqlResult<()> {
        let r = self.interrupt.lock().check().map_err(SqlError::from);
        if r.is_err() {
            self.failed.store(true, Ordering::Release);
        }
        r
    }

    fn charge(&self, n: u64) -> SqlResult<()> {
        let now = self.used.fetch_add(n, Ordering::AcqRel) + n;
        self.peak.fetch_max(now, Ordering::AcqRel);
        let r = self.global.charge(n);
        // Charged either way: the reservation releases what it charged.
        if r.is_err() || now > self.limit {
            self.failed.store(true, Ordering::Release);
        }
        r?;
        if now > self.limit {
            return Err(full(
                "this statement",
                "tributary_statement_memory_limit",
                self.limit,
            ));
        }
        Ok(())
    }

    fn release(&self, n: u64) {
        let before = self.used.fetch_sub(n, Ordering::AcqRel);
        debug_assert!(before >= n, "released more than charged");
        self.global.release(n);
    }
}

thread_local! {
    static CURRENT: crate::sql::thread_slot::Slot<Statement> = const { RefCell::new(None) };
    static TICKS: Cell<u32> = const { Cell::new(0) };
    /// Whether a failing statement's rows are kept until [`teardown`]
    /// (a server connection's own thread: after the reply).
    static DEFER: Cell<bool> = const { Cell::new(false) };
    /// A large statement ended: release memory after the reply.
    static RELEASE_DUE: Cell<bool> = const { Cell::new(false) };
    /// What failing statements left to free on this thread.
    static GRAVE: RefCell<Vec<Box<dyn std::any::Any>>> = const { RefCell::new(Vec::new()) };
}

/// On this thread, free what a killed or over-budget statement held only
/// at [`teardown`] — after its error has been answered — instead of
/// before answering (freeing millions of rows takes longer than the
/// 100 ms a KILL may take). The memory stays charged until then.
pub fn defer_teardown(on: bool) {
    DEFER.with(|d| d.set(on));
}

/// Free what failing statements left on this thread; whether there was
/// anything.
pub fn teardown() -> bool {
    let dead = GRAVE.with(|g| std::mem::take(&mut *g.borrow_mut()));
    let any = !dead.is_empty();
    drop(dead);
    any
}

/// Whether the statement running on this thread has failed (interrupted
/// or past a budget).
pub fn failing() -> bool {
    // `try_with`: drops may run while the thread's locals are destroyed.
    CURRENT
        .try_with(|c| {
            c.borrow()
                .as_ref()
                .is_some_and(|s| s.failed.load(Ordering::Acquire))
        })
        .unwrap_or(false)
}

/// Whether this thread defers a failing statement's teardown.
fn deferring() -> bool {
    DEFER.try_with(Cell::get).unwrap_or(false)
}

/// Drop `x` now, or — while a failing statement unwinds on a thread that
/// defers its teardown — at [`teardown`].
pub fn bury<T: 'static>(x: T) {
    if deferring() && failing() {
        // Dropped here instead if the grave is gone (thread exit).
        let _ = GRAVE.try_with(|g| g.borrow_mut().push(Box::new(x)));
    }
}

/// End a failed statement's own transaction: rolled back now, or — when
/// the statement was interrupted (or passed a budget) on a thread that
/// defers its teardown — dropped (so rolled back) at [`teardown`], after
/// the error is answered. Freeing a large transaction's staged writes and
/// releasing its row locks takes longer than a KILL may (a CREATE INDEX
/// over 1,000,000 rows stages an entry and holds a lock per row); nothing
/// of it is visible to anyone meanwhile, and its locks go right after the
/// reply.
pub fn roll_back(txn: Box<dyn tributary_storage::Transaction>) {
    // Marks an interrupted statement failing (its error may have come
    // from a check of the transaction's interrupt, not of the budget's).
    let _ = check();
    if deferring() && failing() {
        bury(txn);
    } else {
        txn.rollback();
    }
}

/// Drop the items of `v` one at a time with a [`tick`] each, so that a
/// KILL is seen while millions of rows are freed (a second at 10,000,000
/// rows); once it fires the rest is left to the statement's teardown
/// ([`bury`]).
pub fn drop_ticking<T: 'static>(v: Vec<T>) -> SqlResult<()> {
    let mut rest = v.into_iter();
    loop {
        match rest.next() {
            Some(x) => drop(x),
            None => return Ok(()),
        }
        if let Err(e) = tick() {
            bury(rest);
            return Err(e);
        }
    }
}

/// A value an operator keeps (rows, keys) that a failing statement does
/// not free before answering: see [`defer_teardown`]. Derefs to the value.
#[derive(Default)]
pub struct Grave<T: Default + 'static>(pub T);

impl<T: Default + 'static> std::ops::Deref for Grave<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T: Default + 'static> std::ops::DerefMut for Grave<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

impl<T: Default + 'static> Grave<T> {
    /// The value (the guard keeps an empty one).
    pub fn take(&mut self) -> T {
        std::mem::take(&mut self.0)
    }
}

impl<T: Default + 'static> Drop for Grave<T> {
    fn drop(&mut self) {
        bury(std::mem::take(&mut self.0));
    }
}

/// The statement running on this thread, while the guard lives (the
/// previous one, if any, comes back on drop).
pub type Scope = crate::sql::thread_slot::Guard<Statement>;

/// Run the statement `s` on this thread until the guard is dropped.
pub fn enter(s: Arc<Statement>) -> Scope {
    crate::sql::thread_slot::enter(&CURRENT, s)
}

/// The statement running on this thread (to hand to worker threads).
pub fn current() -> Option<Arc<Statement>> {
    crate::sql::thread_slot::get(&CURRENT)
}

/// The running statement's interrupt is now `i` (a deadline was added).
pub fn set_interrupt(i: tributary_storage::Interrupt) {
    CURRENT.with(|c| {
        if let Some(s) = c.borrow().as_ref() {
            *s.interrupt.lock() = i;
        }
    });
}

/// Look at the running statement's interrupt now: `Err` once it was
/// killed or passed its deadline. Ok on a thread running no statement.
pub fn check() -> SqlResult<()> {
    CURRENT.with(|c| match c.borrow().as_ref() {
        Some(s) => s.check(),
        None => Ok(()),
    })
}

/// The check every loop over rows calls once per row (or per unit of
/// work): every [`TICK_EVERY`] calls it looks at the interrupt.
#[inline]
pub fn tick() -> SqlResult<()> {
    let n = TICKS.with(|t| {
        let n = t.get().wrapping_add(1);
        t.set(n);
        n
    });
    if n.is_multiple_of(TICK_EVERY) {
        check()
    } else {
        Ok(())
    }
}

/// Rows one run of [`sort_by`] sorts at once (between two looks at the
/// interrupt).
const SORT_RUN: usize = 4096;

/// How many rows of about `row_bytes` each a row set about to grow to
/// `want` rows may reserve at once: all of them while the running
/// statement's budget can hold them, else what it can (one more, so that
/// the row past it fails on its charge, not on a growth). Reserving once
/// keeps a large row set from doubling its buffer — each doubling copies
/// the whole buffer and faults in fresh pages, hundreds of milliseconds at
/// millions of rows that no KILL can interrupt; pages of a reservation
/// are touched only as rows arrive, between ticks.
pub fn affordable_rows(want: usize, row_bytes: usize) -> usize {
    match current() {
        Some(s) => {
            let fits = s.remaining() / row_bytes.max(1) as u64;
            want.min(usize::try_from(fits.saturating_add(1)).unwrap_or(usize::MAX))
        }
        None => want,
    }
}

/// A stable sort of `v` by `cmp` that KILL stops between any two steps:
/// runs of `SORT_RUN` rows are cut off and sorted (a look at the
/// interrupt per run), then neighbouring runs are merged pass by pass with
/// a [`tick`] per row moved — no step copies more than one run at once
/// (the last pass, too, moves its rows one at a time). On an interrupt the
/// rows are left to the statement's teardown ([`bury`]) and `v` is empty.
pub fn sort_by<T: 'static>(
    v: &mut Vec<T>,
    mut cmp: impl FnMut(&T, &T) -> std::cmp::Ordering,
) -> SqlResult<()> {
    if v.len() <= SORT_RUN {
        v.sort_by(&mut cmp);
        return Ok(());
    }
    // The merge's second buffer (the rows themselves are not copied).
    let mut buffer = Reservation::new();
    buffer.add(v.len().saturating_mul(std::mem::size_of::<T>()))?;
    buffer.flush()?;
    let mut runs: Vec<Vec<T>> = Vec::with_capacity(v.len().div_ceil(SORT_RUN));
    let mut rest = std::mem::take(v).into_iter();
    while rest.len() > 0 {
        if let Err(e) = check() {
            bury((runs, rest));
            return Err(e);
        }
        let mut run: Vec<T> = rest.by_ref().take(SORT_RUN).collect();
        run.sort_by(&mut cmp);
        runs.push(run);
    }
    drop(rest);
    while runs.len() > 1 {
        let mut merged: Vec<Vec<T>> = Vec::with_capacity(runs.len().div_ceil(2));
        let mut level = std::mem::take(&mut runs).into_iter();
        while let Some(left) = level.next() {
            let Some(right) = level.next() else {
                merged.push(left);
                break;
            };
            let mut dst = Vec::with_capacity(left.len() + right.len());
            let mut l = left.into_iter().peekable();
            let mut r = right.into_iter().peekable();
            loop {
                if let Err(e) = tick() {
                    bury((merged, level, dst, l, r));
                    return Err(e);
                }
                // Ties take the left run's row first: stable.
                let next = match (l.peek(), r.peek()) {
                    (Some(a), Some(b)) if cmp(b, a) == std::cmp::Ordering::Less => r.next(),
                    (Some(_), _) => l.next(),
                    (None, Some(_)) => r.next(),
                    (None, None) => break,
                };
                dst.extend(next);
            }
            merged.push(dst);
        }
        runs = merged;
    }
    *v = runs.pop().unwrap_or_default();
    Ok(())
}

/// Bytes charged to the running statement (and the global budget), given
/// back when dropped. A reservation made on a thread running no statement
/// charges nothing.
#[derive(Default)]
pub struct Reservation {
    stmt: Option<Arc<Statement>>,
    /// Charged to the statement (and the global budget).
    charged: u64,
    /// Counted but not yet charged (below [`FLUSH_BYTES`]).
    pending: u64,
}

impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Reservation({} bytes)", self.charged + self.pending)
    }
}

impl Reservation {
    /// A reservation of the statement running on this thread.
    pub fn new() -> Self {
        Reservation {
            stmt: current(),
            charged: 0,
            pending: 0,
        }
    }

    /// A reservation of statement `s` (on a worker thread).
    pub fn of(s: Option<Arc<Statement>>) -> Self {
        Reservation {
            stmt: s,
            charged: 0,
            pending: 0,
        }
    }

    /// Count `n` more bytes; past `FLUSH_BYTES` they are charged (and
    /// the interrupt looked at). `Err` past a budget or after a KILL.
    #[inline]
    pub fn add(&mut self, n: usize) -> SqlResult<()> {
        self.pending += n as u64;
        if self.pending >= FLUSH_BYTES {
            self.flush()
        } else {
            Ok(())
        }
    }

    /// Count one row of values.
    #[inline]
    pub fn add_row(&mut self, row: &[Value]) -> SqlResult<()> {
        self.add(row_size(row))
    }

    /// Count rows that already exist (an operator's input).
    pub fn add_rows(&mut self, rows: &[Vec<Value>]) -> SqlResult<()> {
        for r in rows {
            self.add_row(r)?;
        }
        Ok(())
    }

    /// Charge what was counted, then look at the interrupt.
    pub fn flush(&mut self) -> SqlResult<()> {
        let n = std::mem::take(&mut self.pending);
        self.charged += n;
        let Some(s) = &self.stmt else { return Ok(()) };
        if n > 0 {
            s.charge(n)?;
        }
        s.check()
    }

    /// Take over `other`'s charge (a worker thread's, of the same
    /// statement): it is given back when `self` is dropped.
    pub fn absorb(&mut self, mut other: Reservation) {
        debug_assert_eq!(
            self.stmt.as_ref().map(Arc::as_ptr),
            other.stmt.as_ref().map(Arc::as_ptr),
            "a charge moves only within its statement"
        );
        self.charged += std::mem::take(&mut other.charged);
        self.pending += std::mem::take(&mut other.pending);
    }

    /// Bytes counted so far.
    pub fn bytes(&self) -> u64 {
        self.charged + self.pending
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.stmt.is_some() && deferring() && failing() {
            // The rows it charges wait for `teardown`: so does the charge.
            bury(Reservation {
                stmt: self.stmt.take(),
                charged: self.charged,
                pending: 0,
            });
            return;
        }
        if let Some(s) = &self.stmt {
            if self.charged > 0 {
                s.release(self.charged);
            }
        }
    }
}

/// One SQL-level prepared statement (`PREPARE`): counted against the
/// node's `max_prepared_stmt_count` and its text charged to the global
/// budget while it exists.
#[derive(Debug)]
pub struct PreparedCharge {
    global: Arc<Global>,
    bytes: u64,
}

impl PreparedCharge {
    /// Count one more prepared statement of `bytes` bytes: error 1461 past
    /// `max_count` statements on the node, 1114 past the global budget
    /// (nothing stays charged then).
    pub fn new(global: &Arc<Global>, bytes: usize, max_count: usize) -> SqlResult<Self> {
        let counted = global
            .prepared
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < max_count).then_some(n + 1)
            });
        if counted.is_err() {
            return Err(SqlError::new(
                1461,
                format!(
                    "Can't create more than max_prepared_stmt_count statements (current value: {max_count})"
                ),
            ));
        }
        let c = PreparedCharge {
            global: global.clone(),
            bytes: bytes as u64,
        };
        global.charge(c.bytes)?;
        Ok(c)
    }
}

impl Drop for PreparedCharge {
    fn drop(&mut self) {
        self.global.release(self.bytes);
        self.global.prepared.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Estimated heap bytes of one value held in a row: its slot plus what
/// it owns.
#[inline]
pub fn approx_size(v: &Value) -> usize {
    std::mem::size_of::<Value>()
        + match v {
            Value::Text(s) => s.capacity(),
            Value::Vector(x) => x.capacity() * std::mem::size_of::<f64>(),
            Value::Decimal(_) => 16,
            _ => 0,
        }
}

/// Estimated heap bytes of one row kept in a `Vec<Vec<Value>>`: the row's
/// own header, its values and the allocator's rounding.
#[inline]
pub fn row_size(row: &[Value]) -> usize {
    ROW_OVERHEAD + row.iter().map(approx_size).sum::<usize>()
}

/// A row's `Vec` header plus typical allocator rounding per allocation.
pub const ROW_OVERHEAD: usize = std::mem::size_of::<Vec<Value>>() + 16;

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(
        limit: u64,
        global: u64,
    ) -> (
        Arc<Global>,
        Arc<Statement>,
        tokio_util::sync::CancellationToken,
    ) {
        let g = Arc::new(Global::new(global, limit));
        let token = tokio_util::sync::CancellationToken::new();
        let s = Arc::new(Statement::new(
            limit,
            g.clone(),
            tributary_storage::Interrupt::new(token.clone(), None),
        ));
        (g, s, token)
    }

    #[test]
    fn a_reservation_fails_past_the_statement_limit_and_gives_everything_back() {
        let (g, s, _t) = statement(1 << 20, 1 << 30);
        let _scope = enter(s.clone());
        let mut r = Reservation::new();
        let row = vec![Value::Int(1); 4];
        let mut err = None;
        for _ in 0..1_000_000 {
            if let Err(e) = r.add_row(&row) {
                err = Some(e);
                break;
            }
        }
        let e = err.expect("the budget stops the rows");
        assert_eq!(e.code, TABLE_FULL);
        assert!(
            e.message.contains("tributary_statement_memory_limit"),
            "{e:?}"
        );
        assert!(s.used() > 1 << 20 && g.used() == s.used());
        drop(r);
        assert_eq!((s.used(), g.used()), (0, 0));
        assert!(g.peak() > 1 << 20);
    }

    #[test]
    fn the_global_budget_is_shared_by_statements() {
        let g = Arc::new(Global::new(1 << 20, 1 << 30));
        let a = Arc::new(Statement::new(1 << 30, g.clone(), Default::default()));
        let b = Arc::new(Statement::new(1 << 30, g.clone(), Default::default()));
        let mut ra = Reservation::of(Some(a));
        ra.add(700 << 10).unwrap();
        let mut rb = Reservation::of(Some(b));
        let e = rb.add(700 << 10).unwrap_err();
        assert!(e.message.contains("--statement-memory-total"), "{e:?}");
        drop(rb);
        drop(ra);
        assert_eq!(g.used(), 0);
        // Prepared statements' text is charged globally too, and counted.
        let c = PreparedCharge::new(&g, 512 << 10, 2).unwrap();
        assert_eq!(
            PreparedCharge::new(&g, 600 << 10, 2).unwrap_err().code,
            TABLE_FULL
        );
        assert_eq!((g.used(), g.prepared_statements()), (512 << 10, 1));
        let d = PreparedCharge::new(&g, 1, 2).unwrap();
        assert_eq!(PreparedCharge::new(&g, 1, 2).unwrap_err().code, 1461);
        drop((c, d));
        assert_eq!((g.used(), g.prepared_statements()), (0, 0));
    }

    #[test]
    fn tick_sees_a_kill_within_tick_every_calls() {
        let (_g, s, token) = statement(1 << 30, 1 << 30);
        let _scope = enter(s);
        for _ in 0..2 * TICK_EVERY {
            tick().unwrap();
        }
        token.cancel();
        let stopped = (0..=TICK_EVERY).position(|_| tick().is_err());
        assert!(stopped.is_some_and(|n| n < TICK_EVERY as usize));
        assert_eq!(
            check().unwrap_err().code,
            crate::error::code::QUERY_INTERRUPTED
        );
    }

    #[test]
    fn without_a_statement_nothing_is_charged_or_checked() {
        let mut r = Reservation::new();
        r.add(1 << 30).unwrap();
        for _ in 0..2 * TICK_EVERY {
            tick().unwrap();
        }
        assert_eq!(r.bytes(), 1 << 30);
    }

    #[test]
    fn sort_by_is_a_stable_sort_and_stops_on_kill() {
        let mut x: u64 = 11;
        for n in [0, 5, SORT_RUN, SORT_RUN + 1, 3 * SORT_RUN + 17, 40_000] {
            let items: Vec<(u64, usize)> = (0..n)
                .map(|i| {
                    x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
                    ((x >> 58) % 7, i)
                })
                .collect();
            let mut want = items.clone();
            want.sort_by_key(|a| a.0);
            let mut got = items;
            sort_by(&mut got, |a, b| a.0.cmp(&b.0)).unwrap();
            assert_eq!(got, want, "n = {n}");
        }
        let (_g, s, token) = statement(1 << 30, 1 << 30);
        let _scope = enter(s);
        token.cancel();
        let mut v: Vec<u64> = (0..100_000).rev().collect();
        assert_eq!(
            sort_by(&mut v, |a, b| a.cmp(b)).unwrap_err().code,
            crate::error::code::QUERY_INTERRUPTED
        );
    }

    #[test]
    fn a_failing_statement_is_torn_down_after_the_reply_where_deferred() {
        let (g, s, token) = statement(1 << 30, 1 << 30);
        defer_teardown(true);
        let scope = enter(s);
        let mut r = Reservation::new();
        r.add(1 << 20).unwrap();
        let rows = Grave(vec![vec![Value::Int(1)]; 1000]);
        token.cancel();
        assert!(check().is_err() && failing());
        drop((rows, r));
        drop(scope);
        // Still held (and charged) until the reply is out.
        assert_eq!(g.used(), 1 << 20);
        assert!(teardown());
        assert_eq!(g.used(), 0);
        assert!(!teardown());
        // Not deferred, or not failing: freed at once.
        defer_teardown(false);
        let (g, s, _t) = statement(1 << 30, 1 << 30);
        let _scope = enter(s);
        let mut r = Reservation::new();
        r.add(1 << 20).unwrap();
        drop(r);
        assert_eq!(g.used(), 0);
        assert!(!teardown());
    }

    #[test]
    fn drop_ticking_stops_on_kill_and_leaves_the_rest_to_the_teardown() {
        let (_g, s, token) = statement(1 << 30, 1 << 30);
        defer_teardown(true);
        let scope = enter(s);
        drop_ticking(vec![vec![1u8]; 3 * TICK_EVERY as usize]).unwrap();
        assert!(!teardown());
        token.cancel();
        let e = drop_ticking(vec![vec![1u8]; 3 * TICK_EVERY as usize]).unwrap_err();
        assert_eq!(e.code, crate::error::code::QUERY_INTERRUPTED);
        drop(scope);
        // What was not dropped by the time it saw the KILL is buried.
        assert!(teardown());
        defer_teardown(false);
    }

    #[test]
    fn sizes_count_what_values_own() {
        let small = approx_size(&Value::Int(7));
        assert_eq!(small, std::mem::size_of::<Value>());
        assert!(approx_size(&Value::Text("x".repeat(1000))) >= 1000 + small);
        assert!(approx_size(&Value::Vector(vec![0.0; 100])) >= 800);
        assert_eq!(row_size(&[]), ROW_OVERHEAD);
    }

    #[test]
    fn defaults_are_fractions_of_memory() {
        assert_eq!(default_statement(8 << 30), 1 << 30);
        assert_eq!(default_statement(64 << 30), 2 << 30);
        assert_eq!(default_statement(100 << 20), 64 << 20);
        assert!(default_total() >= 256 << 20);
    }
}
