//! Configuration: one struct with documented defaults, loadable from flags.
//!
//! Every interval, bound and timeout the database uses is a field here; no
//! other module hard-codes one.

use std::time::Duration;

/// Database-wide settings.
#[derive(Debug, Clone)]
pub struct Config {
    /// Lock-wait timeout for row locks (MySQL `innodb_lock_wait_timeout`).
    /// Default 50 s, as MySQL.
    pub lock_wait_timeout: Duration,
    /// ISCP runner tick interval. Default 100 ms (issue 16: lag p99 under
    /// 250 ms at default settings; 200 ms put the tick alone at ~235 ms).
    pub iscp_interval: Duration,
    /// Max changes read per ISCP work unit (bounded iteration). Default 16384.
    pub iscp_max_batch: usize,
    /// Worker pool size for ISCP consumers. Default 4.
    pub iscp_workers: usize,
    /// Threads that index documents at once in a full-text index's
    /// initial build (tantivy's writer; units use one). HNSW adds stay on
    /// one thread (decision 014). Default: the machine's cores, at most 8.
    pub iscp_build_threads: usize,
    /// Max rows of not-yet-indexed tail a fresh index search evaluates
    /// exactly before it falls back to waiting. Default 100 000.
    pub fresh_tail_cap: usize,
    /// How long DROP waits for the job to reach Canceled before returning
    /// with a warning. Default 10 s.
    pub drop_wait: Duration,
    /// Temporary-error retry backoff start / cap for ISCP jobs.
    pub iscp_retry_base: Duration,
    pub iscp_retry_cap: Duration,
    /// Whether this node may run the ISCP runner (a CN in a multi-CN test
    /// can be made a pure SQL node).
    pub iscp_enabled: bool,
    /// Node name used for the runner lease. Default "cn0".
    pub node_name: String,
    /// Runner lease time-to-live. Default 5 s (renewed every tick).
    pub lease_ttl: Duration,
    /// How often the runner reclaims old row versions and change-log
    /// entries (storage GC). Default 30 s.
    pub gc_interval: Duration,
    /// Canceled rows stay in `mo_iscp_log` this long after their drop
    /// (then the runner's GC deletes them). Default 1 h, as MatrixOne.
    pub iscp_log_retention: Duration,
    /// A vector/full-text index writes a new base (serialized index) after
    /// this many changes — or half its size, whichever is more. Between
    /// bases its changes are replayed from the change log on load. Default
    /// 20 000.
    pub index_checkpoint_changes: u64,
    /// … or when anything changed and its base is older than this (bounds
    /// replay and change-log retention under a slow trickle). Default 60 s.
    pub index_checkpoint_age: Duration,
    /// Statements that take at least this long are logged (WARN, target
    /// `tributary::slow`) with their time, user, database and text
    /// (passwords masked). `None`: off. Default 10 s (MySQL's
    /// `long_query_time`).
    pub slow_statement: Option<Duration>,
    /// Most bytes one asynchronous vector or full-text index may hold in
    /// memory; an index that grows past it fails its job with a permanent
    /// error (state Error) instead of taking the process down. `None`
    /// (the default): no limit.
    pub index_memory_budget: Option<usize>,
    /// Most bytes of rows all running statements may hold at once
    /// (materialized rows, hash tables, sort and result buffers, SQL
    /// prepared statements' text); past it the statement that asks for
    /// more fails with 1114 (decision 023). Default: a quarter of the
    /// machine's memory, at least 256 MiB.
    pub statement_memory_total: u64,
    /// One statement's budget when its session sets none
    /// (`tributary_statement_memory_limit` = 0). Default: an eighth of
    /// `statement_memory_total`, 64 MiB to 2 GiB.
    pub statement_memory: u64,
    /// Most PostgreSQL connections this node opens with `--storage
    /// postgres://…` (a transaction holds one while it runs; with N nodes,
    /// PostgreSQL's `max_connections` must cover N × this). Default 64.
    pub pg_pool_size: usize,
    /// The embedded storage: commit durability — every acknowledged commit
    /// fsynced (`immediate`, the default; concurrent commits share one
    /// fsync) or flushed every period (`periodic:<ms>`, which can lose the
    /// last period's commits in a crash) — and the page cache's size
    /// (default: an eighth of the machine's memory, 32 MiB to 4 GiB).
    pub storage: tributary_storage::EmbeddedOptions,
    /// Where statements' spill files go (`@@tmpdir`; decision 027).
    /// `None` (the default): `<datadir>/tmp` for an embedded database
    /// (swept of leftover spill files when it opens), the OS temp dir for
    /// one over PostgreSQL.
    pub tmpdir: Option<std::path::PathBuf>,
    /// The one directory server-side `LOAD DATA INFILE` reads files from
    /// (MySQL's `secure_file_priv`). `None` (the default, MySQL's NULL):
    /// server-side files are refused (1290); `LOAD DATA LOCAL` is not
    /// affected.
    pub secure_file_priv: Option<std::path::PathBuf>,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            lock_wait_timeout: Duration::from_secs(50),
            iscp_interval: Duration::from_millis(100),
            iscp_max_batch: 16_384,
            iscp_workers: 4,
            iscp_build_threads: std::thread::available_parallelism().map_or(1, |n| n.get().min(8)),
            fresh_tail_cap: 100_000,
            drop_wait: Duration::from_secs(10),
            iscp_retry_base: Duration::from_millis(200),
            iscp_retry_cap: Duration::from_secs(30),
            iscp_enabled: true,
            node_name: "cn0".into(),
            lease_ttl: Duration::from_secs(5),
            gc_interval: Duration::from_secs(30),
            iscp_log_retention: Duration::from_secs(3600),
            index_checkpoint_changes: 20_000,
            index_checkpoint_age: Duration::from_secs(60),
            storage: tributary_storage::EmbeddedOptions::default(),
            pg_pool_size: 64,
            index_memory_budget: None,
            statement_memory_total: crate::sql::budget::default_total(),
            statement_memory: crate::sql::budget::default_statement(
                crate::sql::budget::default_total(),
            ),
            slow_statement: Some(Duration::from_secs(10)),
            tmpdir: None,
            secure_file_priv: None,
        }
    }
}
