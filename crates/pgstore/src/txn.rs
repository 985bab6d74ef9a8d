//! [`PgTxn`]: one transaction over PostgreSQL.
//!
//! Owns a transaction's pinned connection, its snapshot (our own MVCC: the
//! clock value read at begin; PostgreSQL runs READ COMMITTED and every read
//! filters versions by that ts), its buffered writes with their undo log,
//! their memory account (`WriteAccount`: past the transaction's limit or
//! the shared budget a write fails with 1197 before it is buffered,
//! decision 032), and the row locks it holds (PostgreSQL tuple locks plus, for
//! metadata-lock keys, relation locks on a gate relation, so S / IX / X
//! conflict as the contract says and DDL queues ahead of later readers).
//!
//! The PostgreSQL transaction opens at the first lock; a PostgreSQL
//! savepoint is taken lazily before each statement's first lock, so a
//! failed lock wait (1213, 1205, KILL) leaves the transaction usable. Such
//! a failure releases the locks the failed statement had taken (PostgreSQL
//! rolls them back with the savepoint) and undoes its writes: a documented
//! deviation from the contract, which keeps locks across a statement
//! rollback. Writes reach PostgreSQL only at commit, in one call of
//! `tsr_commit` pipelined with `COMMIT`, so the clock row (taken last) is
//! never held across a round trip to this process.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::Bound;
use std::sync::Arc;
use std::time::Instant;

use deadpool_postgres::{ClientWrapper, Object};
use tokio_postgres::NoTls;
use tributary_storage::{
    Interrupt, LockWait, Result, Savepoint, StorageError, TableId, Transaction, Ts, TxnId,
    TxnOptions,
};

use tributary_storage::write_budget::{lock_bytes, write_bytes, WriteAccount};

use crate::storage::{refs, Inner, Param};
use crate::{error, sql};

const X: i32 = 0;
const S: i32 = 1;
const IX: i32 = 2;
const MODE_BITS: [u8; 3] = [0b001, 0b010, 0b100];

/// A lock held: modes (bit per mode), the latest committed value when it
/// was taken (stable while held), and the PostgreSQL savepoint it was
/// taken in (a failed statement's rollback forgets those).
struct Held {
    modes: u8,
    committed: Option<Vec<u8>>,
    sp: u32,
}

/// One page of a scan at a snapshot.
pub(crate) struct ScanPage {
    table: TableId,
    lower: Bound<Vec<u8>>,
    upper: Bound<Vec<u8>>,
    ts: Ts,
    limit: usize,
}

impl ScanPage {
    pub fn new(
        table: TableId,
        lower: Bound<Vec<u8>>,
        upper: Bound<Vec<u8>>,
        ts: Ts,
        limit: usize,
    ) -> ScanPage {
        ScanPage {
            table,
            lower,
            upper,
            ts,
            limit,
        }
    }

    /// The page's rows, in key order.
    pub async fn fetch(
        &self,
        c: &ClientWrapper,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>, tokio_postgres::Error> {
        let text = sql::scan(
            self.lower.as_ref().map(|_| ()),
            self.upper.as_ref().map(|_| ()),
        );
        let lower = match &self.lower {
            Bound::Included(k) | Bound::Excluded(k) => k.clone(),
            Bound::Unbounded => Vec::new(),
        };
        let mut params: Vec<Param> = vec![Box::new(self.table as i64), Box::new(lower)];
        if let Bound::Included(k) | Bound::Excluded(k) = &self.upper {
            params.push(Box::new(k.clone()));
        }
        params.push(Box::new(i64::try_from(self.ts).unwrap_or(i64::MAX)));
        params.push(Box::new(i64::try_from(self.limit).unwrap_or(i64::MAX)));
        let st = c.prepare_cached(text).await?;
        let rows = c.query(&st, &refs(&params)).await?;
        Ok(rows.into_iter().map(|r| (r.get(0), r.get(1))).collect())
    }
}

/// One write's undo: table, key, the own state before (`None`: no own
/// write; `Some(None)`: an own delete).
type Undo = (TableId, Vec<u8>, Option<Option<Vec<u8>>>);

/// A transaction.
pub(crate) struct PgTxn {
    inner: Arc<Inner>,
    id: TxnId,
    start: Ts,
    opts: TxnOptions,
    conn: Option<Arc<Object>>,
    /// The PostgreSQL transaction is open (BEGIN sent).
    pg_open: bool,
    /// The connection failed: the transaction can only end.
    broken: Option<String>,
    /// A savepoint was asked for since the last PostgreSQL savepoint.
    sp_wanted: bool,
    sp_seq: u32,
    /// The current PostgreSQL savepoint: its number and the undo position
    /// when it was taken.
    sp_cur: Option<(u32, usize)>,
    writes: BTreeMap<TableId, BTreeMap<Vec<u8>, Option<Vec<u8>>>>,
    /// Per write, for savepoints.
    undo: Vec<Undo>,
    held: HashMap<(TableId, Vec<u8>), Held>,
    /// Estimated bytes of `writes`, `undo` and `held`, checked and
    /// charged.
    account: WriteAccount,
    interrupt: Interrupt,
    /// How an exclusive row lock another transaction holds is met (NOWAIT
    /// / SKIP LOCKED); shared and intention locks always wait.
    lock_wait: LockWait,
    done: bool,
}

/// The gate relation of a metadata-lock key.
fn gate_name(table: TableId, key: &[u8]) -> String {
    // FNV-1a, 64 bits: stable across processes and versions.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in table.to_le_bytes().iter().chain(key) {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("tsr_mdl_{h:016x}")
}

/// Whether `(start, end)` is a non-empty key range (BTreeMap::range
/// panics on the others).
fn valid_range(start: Bound<&[u8]>, end: Bound<&[u8]>) -> bool {
    match (start, end) {
        (Bound::Included(a), Bound::Included(b)) => a <= b,
        (Bound::Included(a), Bound::Excluded(b))
        | (Bound::Excluded(a), Bound::Included(b))
        | (Bound::Excluded(a), Bound::Excluded(b)) => a < b,
        _ => true,
    }
}

/// Run `q`; if `interrupt` fires first, cancel the query on the server and
/// return what it then returns (57014 → `Interrupted`).
async fn interruptible<T>(
    q: impl std::future::Future<Output = Result<T, tokio_postgres::Error>>,
    interrupt: Option<Interrupt>,
    cancel: tokio_postgres::CancelToken,
) -> Result<T, tokio_postgres::Error> {
    let Some(i) = interrupt else {
        return q.await;
    };
    tokio::pin!(q);
    let token = async {
        match i.token() {
            Some(t) => t.cancelled().await,
            None => std::future::pending().await,
        }
    };
    let deadline = async {
        match i.deadline() {
            Some(d) => tokio::time::sleep_until(d.into()).await,
            None => std::future::pending().await,
        }
    };
    tokio::select! {
        r = &mut q => return r,
        _ = token => {}
        _ = deadline => {}
    }
    if let Err(e) = cancel.cancel_query(NoTls).await {
        tracing::warn!(error = %e, "cancelling a PostgreSQL query failed");
    }
    q.await
}

impl PgTxn {
    pub fn begin(inner: Arc<Inner>, opts: TxnOptions) -> Result<PgTxn> {
        inner.check_fence()?;
        let id = inner.txn_id()?;
        let provisional = inner.register_provisional();
        let pool = inner.pool.clone();
        let got = inner
            .bridge
            .call(async move {
                let c = pool.get().await.map_err(error::pool)?;
                let st = c.prepare_cached(sql::CLOCK).await.map_err(error::map)?;
                let ts: i64 = c.query_one(&st, &[]).await.map_err(error::map)?.get(0);
                Ok::<_, StorageError>((c, ts as u64))
            })
            .and_then(|r| r);
        let (conn, start) = match got {
            Ok(x) => x,
            Err(e) => {
                inner.reregister(provisional, None);
                return Err(e);
            }
        };
        inner.saw(start);
        inner.reregister(provisional, Some(start));
        let account = WriteAccount::new(opts.write_limit.clone());
        Ok(PgTxn {
            inner,
            id,
            start,
            opts,
            conn: Some(Arc::new(conn)),
            pg_open: false,
            broken: None,
            sp_wanted: true,
            sp_seq: 0,
            sp_cur: None,
            writes: BTreeMap::new(),
            undo: Vec::new(),
            held: HashMap::new(),
            account,
            interrupt: Interrupt::default(),
            lock_wait: LockWait::Wait,
            done: false,
        })
    }

    fn usable(&self) -> Result<Arc<Object>> {
        if self.done {
            return Err(StorageError::TxnClosed("transaction ended".into()));
        }
        if let Some(b) = &self.broken {
            return Err(StorageError::Unavailable(format!(
                "the transaction's PostgreSQL connection failed: {b}"
            )));
        }
        self.conn
            .clone()
            .ok_or_else(|| StorageError::TxnClosed("no connection".into()))
    }

    /// One statement on the transaction's connection, after `prefix`
    /// (pipelined, same round trip). A failure inside the PostgreSQL
    /// transaction rolls back to the statement's savepoint.
    fn call(
        &mut self,
        prefix: Option<String>,
        text: &'static str,
        params: Vec<Param>,
        interruptible_: bool,
    ) -> Result<Vec<tokio_postgres::Row>> {
        let conn = self.usable()?;
        let interrupt = interruptible_.then(|| self.interrupt.clone());
        let r = self.inner.bridge.call(async move {
            let st = conn.prepare_cached(text).await?;
            let q = async {
                match &prefix {
                    Some(p) => {
                        let r = refs(&params);
                        let (a, b) = tokio::join!(conn.batch_execute(p), conn.query(&st, &r));
                        a?;
                        b
                    }
                    None => conn.query(&st, &refs(&params)).await,
                }
            };
            interruptible(q, interrupt, conn.cancel_token()).await
        })?;
        r.map_err(|e| self.failed(e))
    }

    /// Note a failure: a broken connection ends the transaction; any other
    /// error inside the PostgreSQL transaction rolls back to the statement's
    /// savepoint (undoing its writes and forgetting its locks).
    fn failed(&mut self, e: tokio_postgres::Error) -> StorageError {
        let broken = error::is_broken(&e);
        let detail = error::describe(&e);
        let mapped = error::map(e);
        match mapped {
            StorageError::Deadlock => {
                self.inner
                    .deadlocks
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                metrics::counter!("tributary_deadlocks_total").increment(1);
            }
            StorageError::LockWaitTimeout => {
                self.inner
                    .lock_timeouts
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                metrics::counter!("tributary_lock_wait_timeouts_total").increment(1);
            }
            _ => {}
        }
        if broken {
            self.broken = Some(detail);
            return mapped;
        }
        if self.pg_open {
            self.recover();
        }
        mapped
    }

    fn recover(&mut self) {
        let Some((n, pos)) = self.sp_cur else {
            self.broken = Some("the PostgreSQL transaction failed outside a savepoint".into());
            return;
        };
        let Ok(conn) = self.usable() else { return };
        let text = format!("ROLLBACK TO SAVEPOINT s{n}");
        match self
            .inner
            .bridge
            .call(async move { conn.batch_execute(&text).await })
        {
            Ok(Ok(())) => {
                self.undo_to(pos);
                self.held.retain(|_, h| h.sp != n);
                self.recount();
            }
            Ok(Err(e)) => self.broken = Some(error::describe(&e)),
            Err(e) => self.broken = Some(e.to_string()),
        }
    }

    /// Take a lock in `mode` on `(table, key)`; the latest committed value.
    /// `may_skip`: a locking read (`get` with `lock`), the one request
    /// NOWAIT (`LockNotAvailable`) and SKIP LOCKED (read as absent, nothing
    /// locked) apply to, as in the embedded store.
    fn take(
        &mut self,
        table: TableId,
        key: &[u8],
        mode: i32,
        may_skip: bool,
    ) -> Result<Option<Vec<u8>>> {
        if self.opts.read_only {
            return Err(StorageError::ReadOnly);
        }
        let bit = MODE_BITS[mode as usize];
        if let Some(h) = self.held.get(&(table, key.to_vec())) {
            // X covers every mode; S + IX is X.
            if h.modes & (bit | MODE_BITS[X as usize]) != 0 {
                return Ok(h.committed.clone());
            }
        }
        self.interrupt.check()?;
        let gate = gate_name(table, key);
        if mode != X {
            self.inner.ensure_gate(&gate)?;
        }
        let mut prefix = String::new();
        if !self.pg_open {
            let ms = self
                .opts
                .lock_wait_timeout
                .as_millis()
                .clamp(1, i32::MAX as u128);
            let _ = write!(
                prefix,
                "BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '{ms}ms'; "
            );
        }
        if self.sp_wanted || self.sp_cur.is_none() {
            if let Some((n, _)) = self.sp_cur {
                let _ = write!(prefix, "RELEASE SAVEPOINT s{n}; ");
            }
            self.sp_seq += 1;
            let _ = write!(prefix, "SAVEPOINT s{}; ", self.sp_seq);
            self.sp_cur = Some((self.sp_seq, self.undo.len()));
            self.sp_wanted = false;
        }
        self.pg_open = true;
        let params: Vec<Param> = vec![
            Box::new(table as i64),
            Box::new(key.to_vec()),
            Box::new(mode),
            Box::new(gate),
        ];
        // An exclusive lock under NOWAIT / SKIP LOCKED does not wait for
        // another transaction's row lock: it reports whether it got it.
        let try_only = may_skip && mode == X && self.lock_wait != LockWait::Wait;
        let rows = self.call(
            (!prefix.is_empty()).then_some(prefix),
            if try_only { sql::LOCK_TRY } else { sql::LOCK },
            params,
            true,
        )?;
        let row = rows
            .first()
            .ok_or_else(|| StorageError::Corrupt("tsr_lock returned nothing".into()))?;
        let committed: Option<Vec<u8>> = row.get(0);
        if try_only && !row.get::<_, bool>(1) {
            return match self.lock_wait {
                LockWait::SkipLocked => Ok(None),
                _ => Err(StorageError::LockNotAvailable),
            };
        }
        let sp = self.sp_cur.map_or(0, |s| s.0);
        if !self.held.contains_key(&(table, key.to_vec())) {
            // Refused: the lock stays with the PostgreSQL transaction
            // (released at its end), untracked here.
            let size = committed.as_ref().map_or(0, Vec::len) as u64;
            self.account
                .add(lock_bytes(key.len()).saturating_add(size))?;
        }
        let h = self.held.entry((table, key.to_vec())).or_insert(Held {
            modes: 0,
            committed: None,
            sp,
        });
        h.modes |= bit;
        h.committed = committed.clone();
        h.sp = sp;
        Ok(committed)
    }

    fn own(&self, table: TableId, key: &[u8]) -> Option<&Option<Vec<u8>>> {
        self.writes.get(&table).and_then(|m| m.get(key))
    }

    /// Buffer a write, once the account takes its bytes (its entry and
    /// its undo entry; the value it replaces moves to the undo entry).
    fn write(&mut self, table: TableId, key: &[u8], value: Option<Vec<u8>>) -> Result<()> {
        let len = value.as_ref().map_or(0, Vec::len);
        self.account
            .add(write_bytes(key.len(), len).saturating_add(write_bytes(key.len(), 0)))?;
        let m = self.writes.entry(table).or_default();
        let before = m.insert(key.to_vec(), value);
        self.undo.push((table, key.to_vec(), before));
        Ok(())
    }

    /// Count the account again after a rollback to a savepoint.
    fn recount(&mut self) {
        let len = |v: &Option<Vec<u8>>| v.as_ref().map_or(0, Vec::len);
        let writes: u64 = self
            .writes
            .values()
            .flat_map(|m| m.iter())
            .map(|(k, v)| write_bytes(k.len(), len(v)))
            .sum();
        let undo: u64 = self
            .undo
            .iter()
            .map(|(_, k, b)| write_bytes(k.len(), b.as_ref().map_or(0, len)))
            .sum();
        let held: u64 = self
            .held
            .iter()
            .map(|((_, k), h)| lock_bytes(k.len()).saturating_add(len(&h.committed) as u64))
            .sum();
        self.account.set(writes + undo + held);
    }

    fn undo_to(&mut self, pos: usize) {
        while self.undo.len() > pos {
            let Some((t, k, before)) = self.undo.pop() else {
                break;
            };
            let m = self.writes.entry(t).or_default();
            match before {
                Some(v) => {
                    m.insert(k, v);
                }
                None => {
                    m.remove(&k);
                    if m.is_empty() {
                        self.writes.remove(&t);
                    }
                }
            }
        }
    }

    /// A locked write: the value it replaces.
    fn locked_write(
        &mut self,
        table: TableId,
        key: &[u8],
        value: Option<Vec<u8>>,
    ) -> Result<Option<Vec<u8>>> {
        if self.opts.read_only {
            return Err(StorageError::ReadOnly);
        }
        let committed = self.take(table, key, X, false)?;
        let prev = match self.own(table, key) {
            Some(v) => v.clone(),
            None => committed,
        };
        self.write(table, key, value)?;
        Ok(prev)
    }

    /// Read at the snapshot (no own writes).
    fn snapshot_get(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let params: Vec<Param> = vec![
            Box::new(table as i64),
            Box::new(key.to_vec()),
            Box::new(i64::try_from(self.start).unwrap_or(i64::MAX)),
        ];
        self.inner.check_fence()?;
        let rows = self.call(None, sql::GET, params, false)?;
        // Fenced meanwhile: another node's GC may have run under the read.
        self.inner.check_fence()?;
        Ok(rows.first().and_then(|r| r.get::<_, Option<Vec<u8>>>(0)))
    }

    fn fetch_page(&mut self, page: ScanPage) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.check_fence()?;
        let conn = self.usable()?;
        let interrupt = Some(self.interrupt.clone());
        let r = self.inner.bridge.call(async move {
            let cancel = conn.cancel_token();
            interruptible(page.fetch(&conn), interrupt, cancel).await
        })?;
        let rows = r.map_err(|e| self.failed(e))?;
        self.inner.check_fence()?;
        Ok(rows)
    }

    /// End the PostgreSQL side: roll back if open, return the connection
    /// (or discard it when broken), drop the snapshot registration.
    fn finish(&mut self) {
        if self.done {
            return;
        }
        self.done = true;
        self.account.clear();
        if let Some(conn) = self.conn.take() {
            let mut broken = self.broken.is_some();
            if self.pg_open && !broken {
                let c = conn.clone();
                let ok = matches!(
                    self.inner
                        .bridge
                        .call(async move { c.batch_execute("ROLLBACK").await }),
                    Ok(Ok(()))
                );
                broken = !ok;
            }
            if broken {
                if let Ok(obj) = Arc::try_unwrap(conn) {
                    drop(Object::take(obj));
                }
            }
        }
        self.inner.reregister(self.start, None);
    }
}

impl Transaction for PgTxn {
    fn id(&self) -> TxnId {
        self.id
    }

    fn start_ts(&self) -> Ts {
        self.start
    }

    fn get(&mut self, table: TableId, key: &[u8], lock: bool) -> Result<Option<Vec<u8>>> {
        self.usable()?;
        if lock && !self.opts.read_only {
            let committed = self.take(table, key, X, true)?;
            return Ok(match self.own(table, key) {
                Some(v) => v.clone(),
                None => committed,
            });
        }
        if let Some(v) = self.own(table, key) {
            return Ok(v.clone());
        }
        self.snapshot_get(table, key)
    }

    fn approx_rows(&self, table: TableId) -> u64 {
        if let Some((n, at)) = self.inner.row_counts.lock().get(&table) {
            if at.elapsed().as_millis() < 1000 {
                return *n;
            }
        }
        let n = match self.inner.query(sql::STATS, vec![Box::new(table as i64)]) {
            Ok(rows) => rows.first().map_or(0, |r| r.get::<_, i64>(0).max(0) as u64),
            Err(e) => {
                tracing::warn!(error = %e, "reading a row count failed");
                return self.inner.row_counts.lock().get(&table).map_or(0, |c| c.0);
            }
        };
        self.inner
            .row_counts
            .lock()
            .insert(table, (n, Instant::now()));
        n
    }

    fn scan_visit(
        &mut self,
        table: TableId,
        start: Bound<&[u8]>,
        end: Bound<&[u8]>,
        f: &mut dyn FnMut(&[u8], &[u8]) -> bool,
    ) -> Result<()> {
        self.usable()?;
        self.interrupt.check()?;
        if !valid_range(start, end) {
            return Ok(());
        }
        let own: Vec<(Vec<u8>, Option<Vec<u8>>)> = match self.writes.get(&table) {
            Some(m) => m
                .range::<[u8], _>((start, end))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
            None => Vec::new(),
        };
        let mut lower = start.map(|k| k.to_vec());
        let upper = end.map(|k| k.to_vec());
        let mut page_size = 256usize;
        let mut oi = 0;
        loop {
            let page = ScanPage::new(table, lower.clone(), upper.clone(), self.start, page_size);
            let rows = self.fetch_page(page)?;
            let full = rows.len() == page_size;
            for (k, v) in &rows {
                while oi < own.len() && own[oi].0 < *k {
                    if let Some(ov) = &own[oi].1 {
                        if !f(&own[oi].0, ov) {
                            return Ok(());
                        }
                    }
                    oi += 1;
                }
                if oi < own.len() && own[oi].0 == *k {
                    if let Some(ov) = &own[oi].1 {
                        if !f(k, ov) {
                            return Ok(());
                        }
                    }
                    oi += 1;
                    continue;
                }
                if !f(k, v) {
                    return Ok(());
                }
            }
            if !full {
                break;
            }
            match rows.last() {
                Some((k, _)) => lower = Bound::Excluded(k.clone()),
                None => break,
            }
            page_size = (page_size * 4).min(16_384);
            self.interrupt.check()?;
        }
        for (k, v) in &own[oi..] {
            if let Some(v) = v {
                if !f(k, v) {
                    return Ok(());
                }
            }
        }
        Ok(())
    }

    fn get_for_share(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.usable()?;
        let committed = self.take(table, key, S, false)?;
        Ok(match self.own(table, key) {
            Some(v) => v.clone(),
            None => committed,
        })
    }

    fn get_for_intent(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.usable()?;
        let committed = self.take(table, key, IX, false)?;
        Ok(match self.own(table, key) {
            Some(v) => v.clone(),
            None => committed,
        })
    }

    fn lock(&mut self, table: TableId, key: &[u8]) -> Result<()> {
        self.usable()?;
        self.take(table, key, X, false).map(|_| ())
    }

    fn put(&mut self, table: TableId, key: &[u8], value: Vec<u8>) -> Result<Option<Vec<u8>>> {
        self.usable()?;
        self.locked_write(table, key, Some(value))
    }

    fn delete(&mut self, table: TableId, key: &[u8]) -> Result<Option<Vec<u8>>> {
        self.usable()?;
        self.locked_write(table, key, None)
    }

    fn set_interrupt(&mut self, interrupt: Interrupt) {
        self.interrupt = interrupt;
    }

    fn check_interrupt(&self) -> Result<()> {
        self.interrupt.check()
    }

    fn set_lock_wait(&mut self, wait: LockWait) -> Result<()> {
        // Row locks are taken by tsr_lock(), which waits up to lock_timeout;
        // under NOWAIT / SKIP LOCKED exclusive ones by tsr_lock_try().
        self.lock_wait = wait;
        Ok(())
    }

    fn refresh_snapshot(&mut self) -> Result<()> {
        // The clock read on the transaction's own connection (PostgreSQL's
        // READ COMMITTED: it sees the newest commit); the old snapshot stays
        // registered until the new one is, so GC never passes either.
        let rows = self.call(None, sql::CLOCK, Vec::new(), true)?;
        let ts: i64 = rows
            .first()
            .ok_or_else(|| StorageError::Unavailable("the clock row is missing".into()))?
            .try_get(0)
            .map_err(error::map)?;
        let ts = u64::try_from(ts).unwrap_or(0).max(self.start);
        self.inner.saw(ts);
        self.inner.reregister(self.start, Some(ts));
        self.start = ts;
        Ok(())
    }

    fn savepoint(&mut self) -> Savepoint {
        self.sp_wanted = true;
        Savepoint(self.undo.len())
    }

    fn rollback_to(&mut self, sp: Savepoint) {
        self.undo_to(sp.0);
        self.recount();
    }

    fn has_writes(&self) -> bool {
        self.writes.values().any(|m| !m.is_empty())
    }

    fn commit(mut self: Box<Self>) -> Result<Ts> {
        let conn = match self.usable() {
            Ok(c) => c,
            Err(e) => {
                self.finish();
                return Err(e);
            }
        };
        if !self.has_writes() {
            let start = self.start;
            self.finish();
            return Ok(start);
        }
        let started = std::time::Instant::now();
        let mut tables: Vec<i64> = Vec::new();
        let mut keys: Vec<Vec<u8>> = Vec::new();
        let mut values: Vec<Option<Vec<u8>>> = Vec::new();
        for (t, m) in std::mem::take(&mut self.writes) {
            for (k, v) in m {
                tables.push(t as i64);
                keys.push(k);
                values.push(v);
            }
        }
        let r = self.inner.bridge.call(async move {
            let st = match conn.prepare_cached(sql::COMMIT).await {
                Ok(st) => st,
                Err(e) => return (Ok(()), Err(e), Ok(())),
            };
            // One pipeline: the clock row is taken inside tsr_commit and
            // released by COMMIT without waiting for this process.
            let p: [&(dyn tokio_postgres::types::ToSql + Sync); 3] = [&tables, &keys, &values];
            tokio::join!(
                conn.batch_execute("SET LOCAL lock_timeout = 0"),
                conn.query_one(&st, &p),
                conn.batch_execute("COMMIT"),
            )
        });
        self.pg_open = false;
        let out = match r {
            Err(e) => Err(e),
            Ok((Ok(()), Ok(row), Ok(()))) => {
                let ts = row.get::<_, i64>(0) as u64;
                tributary_storage::record_commit(started.elapsed());
                self.inner.saw(ts);
                self.inner
                    .commits
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                Ok(ts)
            }
            Ok((_, _, Err(e))) if error::is_broken(&e) => {
                self.broken = Some(error::describe(&e));
                Err(StorageError::Unavailable(format!(
                    "commit outcome unknown (the PostgreSQL connection failed while \
                     committing): {}",
                    error::describe(&e)
                )))
            }
            Ok((Err(e), _, _)) | Ok((_, Err(e), _)) | Ok((_, _, Err(e))) => {
                if error::is_broken(&e) {
                    self.broken = Some(error::describe(&e));
                }
                Err(error::map(e))
            }
        };
        self.finish();
        out
    }

    fn rollback(mut self: Box<Self>) {
        self.finish();
    }
}

impl Drop for PgTxn {
    fn drop(&mut self) {
        self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_names_are_stable_short_identifiers() {
        let a = gate_name(3, b"users");
        assert_eq!(a, gate_name(3, b"users"));
        assert_ne!(a, gate_name(4, b"users"));
        assert_ne!(a, gate_name(3, b"user"));
        assert!(a.len() <= 63 && a.starts_with("tsr_mdl_"));
    }

    #[test]
    fn empty_ranges_are_recognised() {
        use Bound::*;
        assert!(valid_range(Included(b"a"), Included(b"a")));
        assert!(!valid_range(Excluded(b"a"), Included(b"a")));
        assert!(!valid_range(Included(b"b"), Excluded(b"a")));
        assert!(valid_range(Unbounded, Excluded(b"a")));
    }
}
