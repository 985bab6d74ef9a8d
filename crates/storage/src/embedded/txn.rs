//! [`EmbeddedTxn`]: one transaction of the embedded backend.
//!
//! Owns the transaction's write set — one copy of each write: per table,
//! the latest own write per key with its position (the count of writes
//! before it); savepoints are positions, and an undo entry keeps a value
//! an overwrite replaced only while a savepoint could bring it back — the
//! row locks it holds and their modes (shared from
//! [`Transaction::get_for_share`], exclusive from writes and locking reads),
//! the memory account of both ([`WriteAccount`], decision 032), its
//! snapshot registration, and the commit path.
//!
//! This module must never let a transaction write a row it has not locked
//! exclusively, never let a read-only transaction take a lock, never release
//! locks before its commit is durable and visible, never leave a snapshot
//! registered after the transaction ends (drop included), and never record
//! a write or take a lock its memory account refused.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use foldhash::{HashMap, HashMapExt};

use super::commit::{OwnWrite, OwnWrites};
use super::engine::Inner;
use super::locks::{LockMode, RowId};
use super::mvcc::{range_is_valid, Rows};
use crate::api::{
    Interrupt, KeyRange, LockWait, PartVisitor, RangesPart, Result, Savepoint, StorageError,
    TableId, Transaction, Ts, TxnId, TxnOptions,
};
use crate::write_budget::{lock_bytes, write_bytes, WriteAccount};

/// Rows a scan visits between two interrupt checks.
const INTERRUPT_EVERY: u32 = 1024;

type BeforeImages = super::commit::FinalWrites;

/// What an overwrite replaced, kept while a savepoint could restore it.
struct Undo {
    /// Position of the overwrite: undone by a rollback to a savepoint at
    /// or below it.
    pos: u64,
    table: TableId,
    key: Vec<u8>,
    prev: OwnWrite,
}

/// Estimated bytes of one undo entry (its key and the value it keeps).
fn undo_bytes(u: &Undo) -> u64 {
    write_bytes(u.key.len(), u.prev.value.as_ref().map_or(0, Vec::len))
}

/// How many bytes of before images a transaction keeps for its commit.
const BEFORE_IMAGES_BYTES: usize = 64 << 10;

/// Run the scan `run` with a visitor that checks `interrupt` every
/// [`INTERRUPT_EVERY`] rows (cheap, and a KILL stops a long scan within
/// microseconds) before handing each row to `f`.
/// A borrowed view of an owned bound.
fn as_ref(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
    match b {
        Bound::Included(k) => Bound::Included(k),
        Bound::Excluded(k) => Bound::Excluded(k),
        Bound::Unbounded => Bound::Unbounded,
    }
}

fn checked(
    interrupt: &Interrupt,
    f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    run: impl FnOnce(&mut dyn FnMut(&[u8], &[u8]) -> bool) -> Result<()>,
) -> Result<()> {
    let mut seen = 0u32;
    let mut fired = false;
    run(&mut |k, v| {
        seen = seen.wrapping_add(1);
        if seen.is_multiple_of(INTERRUPT_EVERY) && interrupt.check().is_err() {
            fired = true;
            return false;
        }
        f(k, v)
    })?;
    if fired {
        return Err(StorageError::Interrupted);
    }
    Ok(())
}

/// A transaction on [`super::EmbeddedStorage`].
pub struct EmbeddedTxn {
    inner: Arc<Inner>,
    id: TxnId,
    start_ts: Ts,
    opts: TxnOptions,
    /// Latest own write per key (new value or tombstone) with its
    /// position: the only copy of the transaction's writes.
    own: OwnWrites,
    /// Writes made so far (the position of the next one; a savepoint is
    /// such a position).
    writes: u64,
    /// The highest savepoint handed out: an overwrite of a write made
    /// below it keeps the replaced value in `undo`; any other overwrite
    /// can drop it (every rollback that would restore it removes the key
    /// altogether).
    max_savepoint: u64,
    /// Values overwrites replaced, in position order.
    undo: Vec<Undo>,
    /// Estimated bytes of `own`, `undo` and `locks`, checked and charged.
    account: WriteAccount,
    /// The part of `account` that `locks` holds (kept until the end).
    lock_bytes: u64,
    /// Latest committed version of keys read under this transaction's
    /// exclusive lock before its first own write of them: their "before"
    /// images at commit, since no other transaction can commit them while
    /// the lock is held (locks are kept until the end, also across
    /// `rollback_to`). The commit's leader then need not look them up.
    before: BeforeImages,
    /// Bytes of keys and values in `before` (at most
    /// [`BEFORE_IMAGES_BYTES`]: a large transaction's leader looks the rest
    /// up rather than the transaction holding a second copy of its rows).
    before_bytes: usize,
    /// Row locks held, with the strongest mode held on each.
    locks: HashMap<RowId, LockMode>,
    /// What the running statement's locking reads do about a locked row.
    lock_wait: LockWait,
    open: bool,
    /// What interrupts the running statement (lock waits, scans).
    interrupt: Interrupt,
    /// The statement's redb reader (see [`EmbeddedTxn::with_reader`]).
    /// Dropped at each statement start and at the end, so no reader pins
    /// old pages of the file for longer than a statement.
    reader: RefCell<Option<Arc<super::engine::SharedRows>>>,
}

impl std::fmt::Debug for EmbeddedTxn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EmbeddedTxn")
            .field("id", &self.id)
            .field("start_ts", &self.start_ts)
            .field("writes", &self.writes)
            .field("bytes", &self.account.bytes())
            .field("locks", &self.locks.len())
            .field("open", &self.open)
            .finish()
    }
}

impl EmbeddedTxn {
    pub(super) fn new(inner: Arc<Inner>, opts: TxnOptions) -> Self {
        let id = inner.next_txn.fetch_add(1, Ordering::Relaxed);
        let start_ts = inner.register_snapshot();
        let account = WriteAccount::new(opts.write_limit.clone());
        Self {
            inner,
            id,
            start_ts,
            opts,
            own: BTreeMap::new(),
            writes: 0,
            max_savepoint: 0,
            undo: Vec::new(),
            account,
            lock_bytes: 0,
            before: BTreeMap::new(),
            before_bytes: 0,
            locks: HashMap::new(),
            lock_wait: LockWait::Wait,
            open: true,
            interrupt: Interrupt::default(),
            reader: RefCell::new(None),
        }
    }

    /// Run `f` on the statement's redb reader, opened (or taken from the
    /// shared one, [`Inner::rows_reader`]) by its first read. Any
    /// registered reader serves every read of the transaction — a
    /// snapshot read at `start_ts` and a read of the latest committed row
    /// under a row lock alike — however long ago it was opened: a row its
    /// file lacks was committed after the reader's applied ts, and GC
    /// keeps that row's chain in memory while the reader is registered
    /// (see `mvcc`).
    fn with_reader<T>(&self, f: impl FnOnce(&Rows) -> Result<T>) -> Result<T> {
        let Ok(mut slot) = self.reader.try_borrow_mut() else {
            // Only a re-entrant call lands here; give it its own handle.
            let r = self.inner.rows_reader()?;
            return f(&r);
        };
        if let Some(r) = slot.as_ref() {
            return f(r);
        }
        let r = self.inner.rows_reader()?;
        f(slot.insert(r))
    }

    /// Forget the statement's reader.
    fn drop_reader(&mut self) {
        *self.reader.get_mut() = None;
    }

    fn ensure_open(&self) -> Result<()> {
        if self.open {
            Ok(())
        } else {
            Err(StorageError::TxnClosed(format!(
                "txn {} has ended",
                self.id
            )))
        }
    }

    fn ensure_writable(&self) -> Result<()> {
        self.ensure_open()?;
        if self.opts.read_only {
            return Err(StorageError::ReadOnly);
        }
        Ok(())
    }

    fn own_write(&self, table: TableId, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.own
            .get(&table)
            .and_then(|m| m.get(key))
            .map(|w| &w.value)
    }

    /// Take the row lock on `(table, key)` in `mode` (a lock already held
    /// that covers the request is enough; one that does not is upgraded to
    /// the combination).
    fn take_lock(&mut self, table: TableId, key: &[u8], mode: LockMode) -> Result<()> {
        let row: RowId = (table, key.to_vec());
        let held = self.locks.get(&row).copied();
        if held.is_some_and(|m| m.covers(mode)) {
            return Ok(());
        }
        let target = held.map_or(mode, |h| h.combine(mode));
        let charge = self.charge_lock(held.is_none(), key)?;
        let r = self.inner.locks.acquire(
            self.id,
            table,
            key,
            target,
            self.opts.lock_wait_timeout,
            &self.interrupt,
        );
        if let Err(e) = r {
            self.uncharge(charge);
            return Err(e);
        }
        self.lock_bytes += charge;
        self.locks.insert(row, target);
        Ok(())
    }

    /// Charge a new lock on `key` to the account (nothing when the lock
    /// is `held` already, in a weaker mode): the bytes charged.
    fn charge_lock(&mut self, new: bool, key: &[u8]) -> Result<u64> {
        if !new {
            return Ok(0);
        }
        let n = lock_bytes(key.len());
        self.account.add(n)?;
        Ok(n)
    }

    /// Give back `n` bytes charged for a lock not taken after all.
    fn uncharge(&mut self, n: u64) {
        if n > 0 {
            self.account.set(self.account.bytes().saturating_sub(n));
        }
    }

    /// [`Self::take_lock`] without waiting: false when another transaction
    /// holds (or is queued for) a conflicting lock.
    fn try_take_lock(&mut self, table: TableId, key: &[u8], mode: LockMode) -> Result<bool> {
        let row: RowId = (table, key.to_vec());
        let held = self.locks.get(&row).copied();
        if held.is_some_and(|m| m.covers(mode)) {
            return Ok(true);
        }
        let target = held.map_or(mode, |h| h.combine(mode));
        let charge = self.charge_lock(held.is_none(), key)?;
        if !self.inner.locks.try_acquire(self.id, table, key, target) {
            self.uncharge(charge);
            return Ok(false);
        }
        self.lock_bytes += charge;
        self.locks.insert(row, target);
        Ok(true)
    }

    /// Current read: own write, else the latest committed version.
    fn current(&self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        match self.own_write(table, key) {
            Some(v) => Ok(v.clone()),
            None => self.latest_committed(table, key),
        }
    }

    fn latest_committed(&self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        // Above every key the table holds (an auto-increment id): absent,
        // and no reader needs opening.
        if self.inner.versions.above_all_keys(table, key) {
            return Ok(None);
        }
        self.with_reader(|r| self.inner.versions.latest(r, table, key))
    }

    /// [`Self::current`] of a key this transaction holds exclusively
    /// locked; a committed version read is kept as the key's before image
    /// (and answers the next such read: it cannot change under the lock).
    fn current_locked(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let known = self
            .own_write(table, key)
            .or_else(|| self.before.get(&table).and_then(|m| m.get(key)));
        if let Some(v) = known {
            return Ok(v.clone());
        }
        let v = self.latest_committed(table, key)?;
        let size = key.len() + v.as_ref().map_or(0, Vec::len);
        if self.before_bytes + size <= BEFORE_IMAGES_BYTES {
            self.before_bytes += size;
            self.before
                .entry(table)
                .or_default()
                .insert(key.to_vec(), v.clone());
        }
        Ok(v)
    }

    fn write(
        &mut self,
        table: TableId,
        key: &[u8],
        value: Option<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>> {
        self.ensure_writable()?;
        self.take_lock(table, key, LockMode::Exclusive)?;
        let prev = self.current_locked(table, key)?;
        self.record(table, key, value)?;
        Ok(prev)
    }

    /// Add a write (its lock taken) to the transaction's own writes, once
    /// its account takes the bytes (else nothing is recorded).
    fn record(&mut self, table: TableId, key: &[u8], value: Option<Vec<u8>>) -> Result<()> {
        let pos = self.writes;
        let len = value.as_ref().map_or(0, Vec::len) as u64;
        let map = self.own.entry(table).or_default();
        match map.get_mut(key) {
            None => {
                self.account.add(write_bytes(key.len(), len as usize))?;
                map.insert(key.to_vec(), OwnWrite { value, pos });
            }
            Some(w) if self.max_savepoint > w.pos => {
                // A savepoint lies between the two writes: keep the
                // replaced one for a rollback to it.
                self.account.add(write_bytes(key.len(), len as usize))?;
                let prev = std::mem::replace(w, OwnWrite { value, pos });
                self.undo.push(Undo {
                    pos,
                    table,
                    key: key.to_vec(),
                    prev,
                });
            }
            Some(w) => {
                let old = w.value.as_ref().map_or(0, Vec::len) as u64;
                if len > old {
                    self.account.add(len - old)?;
                } else {
                    self.account
                        .set(self.account.bytes().saturating_sub(old - len));
                }
                *w = OwnWrite { value, pos };
            }
        }
        self.writes += 1;
        Ok(())
    }

    /// End the transaction: release locks and the snapshot.
    fn finish(&mut self) {
        if !self.open {
            return;
        }
        self.open = false;
        self.drop_reader();
        self.inner.locks.release_all(self.id, self.locks.keys());
        self.locks.clear();
        self.own.clear();
        self.undo.clear();
        self.lock_bytes = 0;
        self.account.clear();
        self.inner.unregister_snapshot(self.start_ts);
    }

    fn commit_inner(&mut self) -> Result<Ts> {
        self.ensure_open()?;
        if self.writes == 0 {
            return Ok(self.start_ts);
        }
        self.drop_reader();
        // Nothing is rolled back to a savepoint any more.
        self.undo = Vec::new();
        let writes = std::mem::take(&mut self.own);
        let before = std::mem::take(&mut self.before);
        self.before_bytes = 0;
        let r = super::commit::commit(&self.inner, self.start_ts, writes, before);
        if let Ok(ts) = &r {
            tracing::trace!(txn = self.id, ts, "committed");
        }
        r
    }

    /// The snapshot merged with own writes, in key order (see
    /// [`Transaction::scan_visit`], which adds the interrupt checks).
    fn visit(
        &self,
        table: TableId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.ensure_open()?;

        let empty = BTreeMap::new();
        let own_map = self.own.get(&table).unwrap_or(&empty);
        let mut own = if range_is_valid(start, end) && !own_map.is_empty() {
            Some(own_map.range::<[u8], _>((start, end)).peekable())
        } else {
            None
        };
        // Whether `f` asked to stop; own writes past the snapshot's last
        // key are visited after it.
        let mut stopped = false;
        self.with_reader(|r| {
            self.inner
                .versions
                .visit_at(r, table, self.start_ts, start, end, |k, v| {
                    if let Some(own) = own.as_mut() {
                        // Own writes before `k` come first.
                        while let Some((ok, ow)) = own.peek() {
                            if ok.as_slice() >= k {
                                break;
                            }
                            if let Some(ov) = &ow.value {
                                if !f(ok, ov) {
                                    stopped = true;
                                    return false;
                                }
                            }
                            own.next();
                        }
                        // An own write of `k` replaces the snapshot's version.
                        if let Some((ok, ow)) = own.peek() {
                            if ok.as_slice() == k {
                                let go_on = match &ow.value {
                                    Some(ov) => f(ok, ov),
                                    None => true,
                                };
                                own.next();
                                stopped = !go_on;
                                return go_on;
                            }
                        }
                    }
                    if !f(k, v) {
                        stopped = true;
                        return false;
                    }
                    true
                })
        })?;
        if stopped {
            return Ok(());
        }
        // What is left of the own writes lies after every visited key (each
        // own key up to a visited one was consumed above).
        if let Some(own) = own {
            for (ok, ow) in own {
                if let Some(ov) = &ow.value {
                    if !f(ok, ov) {
                        break;
                    }
                }
            }
        }
        Ok(())
    }
}

impl Transaction for EmbeddedTxn {
    fn id(&self) -> TxnId {
        self.id
    }

    fn start_ts(&self) -> Ts {
        self.start_ts
    }

    fn get(&mut self, table: TableId, key: &[u8], lock: bool) -> Result<Option<Vec<u8>>> {
        self.ensure_open()?;
        if lock && !self.opts.read_only {
            if self.lock_wait == LockWait::Wait {
                self.take_lock(table, key, LockMode::Exclusive)?;
            } else if !self.try_take_lock(table, key, LockMode::Exclusive)? {
                return match self.lock_wait {
                    LockWait::SkipLocked => Ok(None),
                    _ => Err(StorageError::LockNotAvailable),
                };
            }
            return self.current_locked(table, key);
        }
        match self.own_write(table, key) {
            Some(v) => Ok(v.clone()),
            None => self.with_reader(|r| self.inner.versions.get_at(r, table, key, self.start_ts)),
        }
    }

    fn approx_rows(&self, table: TableId) -> u64 {
        self.inner.versions.key_count(table)
    }

    fn scan_visit(
        &mut self,
        table: TableId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.interrupt.check()?;
        let interrupt = self.interrupt.clone();
        checked(&interrupt, f, |g| self.visit(table, start, end, g))
    }

    fn scan_visit_parts(&mut self, table: TableId, parts: &mut [&mut PartVisitor]) -> Result<()> {
        let own_writes = self.own.get(&table).is_some_and(|m| !m.is_empty());
        if parts.len() < 2 || own_writes {
            return match parts.first_mut() {
                Some(first) => self.scan_visit(table, Bound::Unbounded, Bound::Unbounded, *first),
                None => Ok(()),
            };
        }
        self.interrupt.check()?;
        self.ensure_open()?;
        let interrupt = &self.interrupt;
        let (versions, ts) = (&self.inner.versions, self.start_ts);
        self.with_reader(|r| {
            let splits = versions.split_keys(r, table, parts.len())?;
            let mut bounds = Vec::with_capacity(splits.len() + 1);
            let mut lo: Bound<&[u8]> = Bound::Unbounded;
            for k in &splits {
                bounds.push((lo, Bound::Excluded(k.as_slice())));
                lo = Bound::Included(k.as_slice());
            }
            bounds.push((lo, Bound::Unbounded));
            // One range per part; part 0 runs on this thread.
            let visit =
                |f: &mut PartVisitor, (lo, hi): (Bound<&[u8]>, Bound<&[u8]>)| -> Result<()> {
                    checked(interrupt, f, |g| versions.visit_at(r, table, ts, lo, hi, g))
                };
            std::thread::scope(|scope| {
                let mut work = parts.iter_mut().zip(bounds);
                let Some((first, first_range)) = work.next() else {
                    return Ok(());
                };
                let others: Vec<_> = work
                    .map(|(f, range)| scope.spawn(move || visit(f, range)))
                    .collect();
                let mut result = visit(first, first_range);
                for h in others {
                    let r = h.join().unwrap_or_else(|_| {
                        Err(StorageError::Io("a parallel scan's thread panicked".into()))
                    });
                    if result.is_ok() {
                        result = r;
                    }
                }
                result
            })
        })
    }

    fn scan_visit_ranges_parts(
        &mut self,
        table: TableId,
        parts: &mut [RangesPart<'_, '_>],
    ) -> Result<()> {
        let own_writes = self.own.get(&table).is_some_and(|m| !m.is_empty());
        if parts.len() < 2 || own_writes {
            for (ranges, f) in parts.iter_mut() {
                for (s, e) in ranges.iter() {
                    let mut go = true;
                    self.scan_visit(table, as_ref(s), as_ref(e), &mut |k, v| {
                        go = f(k, v);
                        go
                    })?;
                    if !go {
                        break;
                    }
                }
            }
            return Ok(());
        }
        self.interrupt.check()?;
        self.ensure_open()?;
        let interrupt = &self.interrupt;
        let (versions, ts) = (&self.inner.versions, self.start_ts);
        self.with_reader(|r| {
            // One part's ranges, in order, until its visitor stops.
            let visit = |ranges: &[KeyRange], f: &mut PartVisitor| -> Result<()> {
                let mut go = true;
                for (s, e) in ranges {
                    checked(interrupt, &mut |k, v| f(k, v), |g| {
                        versions.visit_at(r, table, ts, as_ref(s), as_ref(e), |k, v| {
                            go = g(k, v);
                            go
                        })
                    })?;
                    if !go {
                        break;
                    }
                }
                Ok(())
            };
            // Part 0 runs on this thread.
            std::thread::scope(|scope| {
                let mut work = parts.iter_mut();
                let Some((first_ranges, first)) = work.next() else {
                    return Ok(());
                };
                let others: Vec<_> = work
                    .map(|(ranges, f)| {
                        let ranges: &[KeyRange] = ranges;
                        scope.spawn(move || visit(ranges, &mut **f))
                    })
                    .collect();
                let mut result = visit(first_ranges, &mut **first);
                for h in others {
                    let r = h.join().unwrap_or_else(|_| {
                        Err(StorageError::Io("a parallel scan's thread panicked".into()))
                    });
                    if result.is_ok() {
                        result = r;
                    }
                }
                result
            })
        })
    }

    fn set_interrupt(&mut self, interrupt: Interrupt) {
        // A new statement: a reader of the last one may be old by now.
        self.drop_reader();
        self.interrupt = interrupt;
    }

    fn check_interrupt(&self) -> Result<()> {
        self.interrupt.check()
    }

    fn get_for_share(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.ensure_writable()?;
        self.take_lock(table, key, LockMode::Shared)?;
        self.current(table, key)
    }

    fn get_for_intent(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.ensure_writable()?;
        self.take_lock(table, key, LockMode::IntentExclusive)?;
        self.current(table, key)
    }

    fn lock(&mut self, table: TableId, key: &[u8]) -> Result<()> {
        self.ensure_writable()?;
        self.take_lock(table, key, LockMode::Exclusive)
    }

    fn put(&mut self, table: TableId, key: &[u8], value: Vec<u8>) -> Result<Option<Vec<u8>>> {
        self.write(table, key, Some(value))
    }

    fn put_unread(&mut self, table: TableId, key: &[u8], value: Vec<u8>) -> Result<()> {
        self.ensure_writable()?;
        self.take_lock(table, key, LockMode::Exclusive)?;
        self.record(table, key, Some(value))
    }

    fn delete(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.write(table, key, None)
    }

    fn set_lock_wait(&mut self, wait: LockWait) -> Result<()> {
        self.lock_wait = wait;
        Ok(())
    }

    fn refresh_snapshot(&mut self) -> Result<()> {
        // Register the new snapshot before letting go of the old one, so
        // GC never passes either (versions the new one reads are kept).
        let ts = self.inner.register_snapshot();
        debug_assert!(ts >= self.start_ts, "the snapshot moved back");
        self.inner.unregister_snapshot(self.start_ts);
        self.start_ts = ts;
        Ok(())
    }

    fn savepoint(&mut self) -> Savepoint {
        self.max_savepoint = self.max_savepoint.max(self.writes);
        Savepoint(self.writes as usize)
    }

    fn rollback_to(&mut self, sp: Savepoint) {
        let sp = sp.0 as u64;
        if sp >= self.writes {
            return;
        }
        // Overwrites at or after `sp`, newest first: what they replaced
        // comes back (and is removed below if it was written after `sp`
        // too).
        while self.undo.last().is_some_and(|u| u.pos >= sp) {
            let Some(u) = self.undo.pop() else { break };
            self.own.entry(u.table).or_default().insert(u.key, u.prev);
        }
        // What is left from at or after `sp` was the key's first write.
        let mut bytes = self.lock_bytes;
        self.own.retain(|_, m| {
            m.retain(|k, w| {
                let keep = w.pos < sp;
                if keep {
                    bytes += write_bytes(k.len(), w.value.as_ref().map_or(0, Vec::len));
                }
                keep
            });
            !m.is_empty()
        });
        bytes += self.undo.iter().map(undo_bytes).sum::<u64>();
        self.account.set(bytes);
        self.writes = sp;
    }

    fn has_writes(&self) -> bool {
        self.writes > 0
    }

    fn commit(mut self: Box<Self>) -> Result<Ts> {
        let writes = self.has_writes();
        let t = std::time::Instant::now();
        let r = self.commit_inner();
        self.finish();
        if writes && r.is_ok() {
            crate::api::record_commit(t.elapsed());
        }
        r
    }

    fn rollback(mut self: Box<Self>) {
        self.finish();
    }
}

impl Drop for EmbeddedTxn {
    fn drop(&mut self) {
        self.finish();
    }
}
