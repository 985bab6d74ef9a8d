//! [`PgStorage`]: the [`Storage`] trait over one PostgreSQL database.
//!
//! Owns the connection pool, the node's identity and heartbeat (its oldest
//! open snapshot, published for every node's GC), the metadata-lock gate
//! relations it knows exist, and every storage-level call (clock, change
//! log, snapshot scans, consumers, leases, sequences, purge, GC).
//! Transactions live in [`crate::txn`].
//!
//! It must never read a snapshot older than what its own heartbeat
//! protects: once the heartbeat has failed for longer than
//! [`PgOptions::fence_after`], `begin` and snapshot reads are refused (other
//! nodes' GC may have removed what they would need).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use parking_lot::Mutex;
use tokio_postgres::types::ToSql;
use tokio_postgres::NoTls;
use tokio_util::sync::CancellationToken;
use tributary_storage::{
    Change, ChangeBatch, ChangeKind, GcStats, Result, Storage, StorageError, TableId, Transaction,
    Ts, TxnOptions,
};

use crate::bridge::Bridge;
use crate::{error, sql};

/// How to reach PostgreSQL and how this node behaves there.
#[derive(Debug, Clone)]
pub struct PgOptions {
    /// `postgres://user@host:port/db` (tokio-postgres syntax).
    pub url: String,
    /// This node's name (unique among the nodes on one database).
    pub node: String,
    /// Most connections this node opens.
    pub pool_size: usize,
    /// How often the node publishes its oldest open snapshot.
    pub heartbeat: Duration,
    /// Other nodes treat a node whose heartbeat is older than this as gone
    /// (its snapshots no longer hold GC back).
    pub dead_after: Duration,
    /// A node whose own heartbeat has failed for this long refuses new
    /// transactions and snapshot reads (well below `dead_after`).
    pub fence_after: Duration,
}

impl PgOptions {
    /// Defaults for `url` and `node`: 64 connections, a heartbeat every
    /// second, dead after 30 s, fenced after 10 s.
    pub fn new(url: impl Into<String>, node: impl Into<String>) -> PgOptions {
        PgOptions {
            url: url.into(),
            node: node.into(),
            pool_size: 64,
            heartbeat: Duration::from_secs(1),
            dead_after: Duration::from_secs(30),
            fence_after: Duration::from_secs(10),
        }
    }
}

/// Opening one PostgreSQL connection: a server that takes longer is
/// treated as unreachable (the statement fails rather than hangs).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Waiting for a free pooled connection: as long as InnoDB's default lock
/// wait would be, after which the statement fails with an error.
const POOL_WAIT: Duration = Duration::from_secs(30);

/// A boxed query parameter.
pub(crate) type Param = Box<dyn ToSql + Sync + Send>;

/// Parameters as the client wants them.
pub(crate) fn refs(params: &[Param]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| p.as_ref() as &(dyn ToSql + Sync))
        .collect()
}

/// What transactions and the storage share.
pub(crate) struct Inner {
    pub bridge: Bridge,
    pub pool: Pool,
    /// This process's entry in `tsr_cn_snapshots` (node name + open id).
    pub cn: String,
    pub opts: PgOptions,
    /// Newest clock value seen (`latest_ts`'s answer when PostgreSQL is away).
    pub latest: AtomicU64,
    /// Open snapshots of this node: start ts → count.
    pub open: Mutex<BTreeMap<Ts, usize>>,
    /// When the heartbeat last succeeded.
    pub beat_ok: Mutex<Instant>,
    /// Tests only: the heartbeat skips its beats (a node cut off).
    pub beat_paused: std::sync::atomic::AtomicBool,
    /// Gate relations known to exist.
    pub gates: Mutex<HashSet<String>>,
    /// Transaction ids: (next, end of the block).
    pub txn_ids: Mutex<(u64, u64)>,
    /// approx_rows cache: table → (rows, when read).
    pub row_counts: Mutex<HashMap<TableId, (u64, Instant)>>,
    pub commits: AtomicU64,
    pub deadlocks: AtomicU64,
    pub lock_timeouts: AtomicU64,
}

impl Inner {
    /// One statement on a pooled connection (autocommit).
    pub fn query(
        &self,
        text: &'static str,
        params: Vec<Param>,
    ) -> Result<Vec<tokio_postgres::Row>> {
        let pool = self.pool.clone();
        self.bridge.call(async move {
            let c = pool.get().await.map_err(error::pool)?;
            let st = c.prepare_cached(text).await.map_err(error::map)?;
            c.query(&st, &refs(&params)).await.map_err(error::map)
        })?
    }

    /// Err while this node is fenced (its heartbeat failed too long).
    pub fn check_fence(&self) -> Result<()> {
        let since = self.beat_ok.lock().elapsed();
        if since > self.opts.fence_after {
            return Err(StorageError::Unavailable(format!(
                "this node lost PostgreSQL for {} s: it refuses snapshots until its heartbeat \
                 succeeds again",
                since.as_secs()
            )));
        }
        Ok(())
    }

    /// Note a clock value seen.
    pub fn saw(&self, ts: Ts) {
        self.latest.fetch_max(ts, Ordering::AcqRel);
    }

    /// A fresh transaction id, unique across nodes: blocks of 2^32 from the
    /// durable `txn` sequence.
    pub fn txn_id(&self) -> Result<u64> {
        let mut ids = self.txn_ids.lock();
        if ids.0 >= ids.1 {
            drop(ids);
            let block = next_id(self, "txn_block")?;
            let mut again = self.txn_ids.lock();
            if again.0 >= again.1 {
                *again = (block << 32, (block + 1) << 32);
            }
            let id = again.0;
            again.0 += 1;
            return Ok(id);
        }
        let id = ids.0;
        ids.0 += 1;
        Ok(id)
    }

    /// Register a snapshot about to be read (provisionally at the newest
    /// clock value seen, which is ≤ the one the caller will read).
    pub fn register_provisional(&self) -> Ts {
        let ts = self.latest.load(Ordering::Acquire);
        *self.open.lock().entry(ts).or_default() += 1;
        ts
    }

    /// Move a registration from `from` to `to` (≥ from), or drop it (`None`).
    pub fn reregister(&self, from: Ts, to: Option<Ts>) {
        let mut open = self.open.lock();
        if let Some(n) = open.get_mut(&from) {
            *n -= 1;
            if *n == 0 {
                open.remove(&from);
            }
        }
        if let Some(to) = to {
            *open.entry(to).or_default() += 1;
        }
    }

    /// Make sure the gate relation `name` exists (created on a pooled
    /// connection, committed, before any transaction locks it).
    pub fn ensure_gate(&self, name: &str) -> Result<()> {
        if self.gates.lock().contains(name) {
            return Ok(());
        }
        let pool = self.pool.clone();
        let create = format!("CREATE TABLE IF NOT EXISTS {name} ()");
        let check = format!("SELECT to_regclass('{name}') IS NOT NULL");
        self.bridge.call(async move {
            let c = pool.get().await.map_err(error::pool)?;
            // Two nodes creating it at once: one may fail on the catalog's
            // unique index; the relation then exists all the same.
            let created = c.batch_execute(&create).await;
            let row = c.query_one(&check, &[]).await.map_err(error::map)?;
            match (created, row.get::<_, bool>(0)) {
                (_, true) => Ok(()),
                (Err(e), false) => Err(error::map(e)),
                (Ok(()), false) => Err(StorageError::Io(format!("gate {create} not created"))),
            }
        })??;
        self.gates.lock().insert(name.to_string());
        Ok(())
    }
}

fn next_id(inner: &Inner, seq: &str) -> Result<u64> {
    let pool = inner.pool.clone();
    let seq = seq.to_string();
    inner
        .bridge
        .call(async move { next_id_on(&pool, &seq).await })?
}

async fn next_id_on(pool: &Pool, seq: &str) -> Result<u64> {
    let c = pool.get().await.map_err(error::pool)?;
    let st = c.prepare_cached(sql::NEXT_ID).await.map_err(error::map)?;
    let v: i64 = c.query_one(&st, &[&seq]).await.map_err(error::map)?.get(0);
    Ok(v as u64)
}

/// The PostgreSQL backend. Dropping it stops its heartbeat and removes the
/// node's snapshot entry.
pub struct PgStorage {
    pub(crate) inner: Arc<Inner>,
    stop: CancellationToken,
    heartbeat: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl PgStorage {
    /// Connect, create the schema if missing, publish this node's first
    /// heartbeat and start the next ones.
    pub fn open(opts: PgOptions) -> Result<Arc<PgStorage>> {
        let bridge = Bridge::new(2)?;
        let cfg: tokio_postgres::Config = opts
            .url
            .parse()
            .map_err(|e| StorageError::Io(format!("bad PostgreSQL URL {}: {e}", opts.url)))?;
        let mgr = Manager::from_config(
            cfg.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = {
            let _rt = bridge.handle().enter();
            Pool::builder(mgr)
                .max_size(opts.pool_size.max(2))
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .create_timeout(Some(CONNECT_TIMEOUT))
                .wait_timeout(Some(POOL_WAIT))
                .build()
                .map_err(|e| StorageError::Io(format!("PostgreSQL pool: {e}")))?
        };
        {
            let pool = pool.clone();
            let setup = format!(
                "BEGIN; SELECT pg_advisory_xact_lock({}); {} COMMIT;",
                sql::SCHEMA_LOCK,
                sql::SCHEMA
            );
            bridge.call(async move {
                let c = pool.get().await.map_err(error::pool)?;
                c.batch_execute(&setup).await.map_err(error::map)
            })??;
        }
        // The node's entry: its name and this open's id, so a restarted
        // node never shares an entry with its previous run.
        let run = {
            let pool = pool.clone();
            bridge.call(async move { next_id_on(&pool, "cn_run").await })??
        };
        let cn = format!("{}#{run}", opts.node);
        let inner = Arc::new(Inner {
            bridge,
            pool,
            cn,
            opts,
            latest: AtomicU64::new(0),
            open: Mutex::new(BTreeMap::new()),
            beat_ok: Mutex::new(Instant::now()),
            beat_paused: std::sync::atomic::AtomicBool::new(false),
            gates: Mutex::new(HashSet::new()),
            txn_ids: Mutex::new((0, 0)),
            row_counts: Mutex::new(HashMap::new()),
            commits: AtomicU64::new(0),
            deadlocks: AtomicU64::new(0),
            lock_timeouts: AtomicU64::new(0),
        });
        beat(&inner)?;
        let stop = CancellationToken::new();
        let task = {
            let every = inner.opts.heartbeat;
            let handle = inner.bridge.handle().clone();
            let inner = Arc::downgrade(&inner);
            let stop = stop.clone();
            let pg = cfg.clone();
            handle.spawn(async move {
                // A connection of its own: a pool busy with lock waits must
                // not starve the heartbeat into self-fencing.
                let mut own: Option<(tokio_postgres::Client, tokio::task::JoinHandle<()>)> = None;
                let mut failing = false;
                loop {
                    tokio::select! {
                        _ = stop.cancelled() => break,
                        _ = tokio::time::sleep(every) => {}
                    }
                    let Some(i) = inner.upgrade() else { break };
                    if i.beat_paused.load(Ordering::Acquire) {
                        continue;
                    }
                    if own.as_ref().is_none_or(|(c, _)| c.is_closed()) {
                        if let Some((c, driver)) = own.take() {
                            drop(c);
                            let _ = driver.await;
                        }
                        own = match pg.connect(NoTls).await {
                            Ok((c, conn)) => Some((c, tokio::spawn(async move {
                                let _ = conn.await;
                            }))),
                            Err(_) => None,
                        };
                    }
                    let beat = match &own {
                        Some((c, _)) => beat_on(&i, c).await,
                        None => Err(StorageError::Unavailable("PostgreSQL: cannot connect".into())),
                    };
                    match beat {
                        Ok(()) if std::mem::take(&mut failing) => {
                            tracing::info!(node = %i.cn, "PostgreSQL heartbeat works again");
                        }
                        Ok(()) => {}
                        Err(e) => {
                            if !failing {
                                tracing::warn!(error = %e, node = %i.cn, "PostgreSQL heartbeat failed; retrying every beat");
                            }
                            failing = true;
                        }
                    }
                }
                if let Some((c, driver)) = own.take() {
                    drop(c);
                    let _ = driver.await;
                }
            })
        };
        Ok(Arc::new(PgStorage {
            inner,
            stop,
            heartbeat: Mutex::new(Some(task)),
        }))
    }

    /// Tests only: stop (or restart) the heartbeat, as if this node were
    /// cut off from PostgreSQL while the others still reach it.
    #[doc(hidden)]
    pub fn pause_heartbeat_for_tests(&self, paused: bool) {
        self.inner.beat_paused.store(paused, Ordering::Release);
    }

    /// This node's entry name in `tsr_cn_snapshots`.
    pub fn node_entry(&self) -> &str {
        &self.inner.cn
    }
}

/// Publish this node's oldest snapshot: the clock is read *before* the
/// open set, so a transaction registering after the open set was read
/// starts at or above the value published.
fn beat(inner: &Arc<Inner>) -> Result<()> {
    let i = inner.clone();
    inner.bridge.call(async move { beat_async(&i).await })?
}

/// One beat on a pooled connection (at open, and before a GC pass).
pub(crate) async fn beat_async(i: &Inner) -> Result<()> {
    let c = i.pool.get().await.map_err(error::pool)?;
    beat_on(i, &c).await
}

async fn beat_on(i: &Inner, c: &tokio_postgres::Client) -> Result<()> {
    let row = c.query_one(sql::CLOCK, &[]).await.map_err(error::map)?;
    let clock: i64 = row.get(0);
    i.saw(clock as u64);
    let oldest = i.open.lock().keys().next().copied();
    let min = oldest.map_or(clock as u64, |o| o.min(clock as u64));
    c.execute(sql::HEARTBEAT, &[&i.cn, &(min as i64)])
        .await
        .map_err(error::map)?;
    *i.beat_ok.lock() = Instant::now();
    Ok(())
}

impl Drop for PgStorage {
    fn drop(&mut self) {
        self.stop.cancel();
        if let Some(task) = self.heartbeat.lock().take() {
            let _ = self.inner.bridge.call(async move {
                let _ = task.await;
            });
        }
        if let Err(e) = self
            .inner
            .query(sql::LEAVE, vec![Box::new(self.inner.cn.clone())])
        {
            tracing::warn!(error = %e, "removing the node's snapshot entry failed");
        }
    }
}

fn ts_param(ts: Ts) -> Param {
    Box::new(i64::try_from(ts).unwrap_or(i64::MAX))
}

fn kind_of(k: i16) -> Result<ChangeKind> {
    match k {
        0 => Ok(ChangeKind::Insert),
        1 => Ok(ChangeKind::Update),
        2 => Ok(ChangeKind::Delete),
        other => Err(StorageError::Corrupt(format!("change kind {other}"))),
    }
}

impl Storage for PgStorage {
    fn begin(&self, opts: TxnOptions) -> Result<Box<dyn Transaction>> {
        crate::txn::PgTxn::begin(self.inner.clone(), opts)
            .map(|t| Box::new(t) as Box<dyn Transaction>)
    }

    fn latest_ts(&self) -> Ts {
        match self.inner.query(sql::CLOCK, vec![]) {
            Ok(rows) => {
                let ts = rows.first().map_or(0, |r| r.get::<_, i64>(0) as u64);
                self.inner.saw(ts);
            }
            Err(e) => tracing::debug!(error = %e, "reading the PostgreSQL clock failed"),
        }
        self.inner.latest.load(Ordering::Acquire)
    }

    fn changes(
        &self,
        table: TableId,
        from: Ts,
        to: Ts,
        resume: Option<(Ts, u32)>,
        limit: usize,
    ) -> Result<ChangeBatch> {
        if limit == 0 {
            return Ok(ChangeBatch::default());
        }
        let (ts, seq) = match resume {
            Some((ts, seq)) => (ts, seq as i32),
            None => (from, i32::MAX),
        };
        let want = limit.min(1 << 20);
        let pool = self.inner.pool.clone();
        let params: Vec<Param> = vec![
            Box::new(table as i64),
            ts_param(ts),
            Box::new(seq),
            ts_param(to),
            Box::new((want + 1) as i64),
        ];
        // Rows first, then the horizon: a GC between the two shows as a
        // raised horizon, never as missing entries.
        let (rows, horizon) = self.inner.bridge.call(async move {
            let c = pool.get().await.map_err(error::pool)?;
            let st = c.prepare_cached(sql::CHANGES).await.map_err(error::map)?;
            let hz = c.prepare_cached(sql::HORIZON).await.map_err(error::map)?;
            let t = table as i64;
            let p = refs(&params);
            let hp: [&(dyn tokio_postgres::types::ToSql + Sync); 1] = [&t];
            let (rows, h) = tokio::join!(c.query(&st, &p), c.query_one(&hz, &hp));
            let rows = rows.map_err(error::map)?;
            let h: i64 = h.map_err(error::map)?.get(0);
            Ok::<_, StorageError>((rows, h as u64))
        })??;
        if from < horizon {
            return Err(StorageError::ChangesGone {
                table,
                gc_ts: horizon,
            });
        }
        let mut out = ChangeBatch::default();
        for r in rows.iter().take(want) {
            out.changes.push(Change {
                commit_ts: r.get::<_, i64>(0) as u64,
                seq: r.get::<_, i32>(1) as u32,
                kind: kind_of(r.get(2))?,
                key: r.get(3),
                old: r.get(4),
                new: r.get(5),
            });
        }
        if rows.len() > want {
            out.resume = out.changes.last().map(|c| (c.commit_ts, c.seq));
        }
        Ok(out)
    }

    fn snapshot_scan(
        &self,
        table: TableId,
        ts: Ts,
        after: Option<&[u8]>,
        limit: usize,
    ) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
        self.inner.check_fence()?;
        if limit == 0 {
            return Ok(Vec::new());
        }
        let lower = match after {
            Some(k) => std::ops::Bound::Excluded(k.to_vec()),
            None => std::ops::Bound::Unbounded,
        };
        let pool = self.inner.pool.clone();
        let page = crate::txn::ScanPage::new(table, lower, std::ops::Bound::Unbounded, ts, limit);
        let (rows, horizon) = self.inner.bridge.call(async move {
            let c = pool.get().await.map_err(error::pool)?;
            let rows = page.fetch(&c).await.map_err(error::map)?;
            let hz = c.prepare_cached(sql::HORIZON).await.map_err(error::map)?;
            let h: i64 = c
                .query_one(&hz, &[&(table as i64)])
                .await
                .map_err(error::map)?
                .get(0);
            Ok::<_, StorageError>((rows, h as u64))
        })??;
        if ts < horizon {
            return Err(StorageError::ChangesGone {
                table,
                gc_ts: horizon,
            });
        }
        self.inner.check_fence()?;
        Ok(rows)
    }

    fn set_consumer_watermark(&self, consumer: &str, table: TableId, low_watermark: Ts) {
        let params: Vec<Param> = vec![
            Box::new(consumer.to_string()),
            Box::new(table as i64),
            ts_param(low_watermark),
        ];
        if let Err(e) = self.inner.query(sql::SET_WATERMARK, params) {
            tracing::error!(consumer, table, error = %e, "registering a consumer watermark failed");
        }
    }

    fn remove_consumer(&self, consumer: &str) {
        if let Err(e) = self
            .inner
            .query(sql::REMOVE_CONSUMER, vec![Box::new(consumer.to_string())])
        {
            tracing::error!(consumer, error = %e, "removing a consumer failed");
        }
    }

    fn purge_table(&self, table: TableId) -> Result<()> {
        self.inner
            .query(sql::PURGE, vec![Box::new(table as i64)])
            .map(|_| ())
    }

    fn try_lease(&self, name: &str, holder: &str, ttl: Duration) -> Result<bool> {
        let ttl_ms = i64::try_from(ttl.as_millis()).unwrap_or(i64::MAX);
        let rows = self.inner.query(
            sql::LEASE_READ,
            vec![Box::new(name.to_string()), Box::new(ttl_ms)],
        )?;
        if let Some(r) = rows.first() {
            let (who, live, fresh): (String, bool, bool) = (r.get(0), r.get(1), r.get(2));
            if who != holder && live {
                return Ok(false);
            }
            if who == holder && fresh {
                return Ok(true);
            }
        }
        let rows = self.inner.query(
            sql::LEASE_TAKE,
            vec![
                Box::new(name.to_string()),
                Box::new(holder.to_string()),
                Box::new(ttl_ms),
            ],
        )?;
        Ok(!rows.is_empty())
    }

    fn release_lease(&self, name: &str, holder: &str) {
        if let Err(e) = self.inner.query(
            sql::LEASE_RELEASE,
            vec![Box::new(name.to_string()), Box::new(holder.to_string())],
        ) {
            tracing::warn!(name, holder, error = %e, "releasing a lease failed");
        }
    }

    fn gc(&self) -> Result<GcStats> {
        crate::gc::run(&self.inner)
    }

    fn next_id(&self, sequence: &str) -> Result<u64> {
        next_id(&self.inner, sequence)
    }

    fn status(&self) -> Vec<(&'static str, u64)> {
        let i = &self.inner;
        let st = i.pool.status();
        vec![
            ("Tributary_pg_commits", i.commits.load(Ordering::Relaxed)),
            (
                "Tributary_pg_deadlocks",
                i.deadlocks.load(Ordering::Relaxed),
            ),
            (
                "Tributary_pg_lock_wait_timeouts",
                i.lock_timeouts.load(Ordering::Relaxed),
            ),
            ("Tributary_pg_pool_size", st.size as u64),
            ("Tributary_pg_pool_available", st.available as u64),
            ("Tributary_latest_ts", i.latest.load(Ordering::Acquire)),
        ]
    }
}
