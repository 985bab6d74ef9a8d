//! The `tributary` command line: `serve` (MySQL server + admin HTTP) and
//! `sql` (embedded, no server).
//!
//! This module owns argument parsing, logging set-up, signal handling and
//! the client-style output formats (`mysql` tables and `mysql -B` TSV). It
//! never implements SQL; it only drives [`Database`] / [`crate::db::Session`].

use std::io::{self, Read, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::config::Config;
use crate::db::{split_statements, Database};
use crate::server::auth::UserSpec;
use crate::server::http::{AdminServer, AdminToken};
use crate::server::{MysqlServer, ServerOptions};
use crate::types::QueryResult;

/// How often the metrics recorder drains its histogram buffers between
/// scrapes (bounds their memory; a scrape drains them too).
const METRICS_UPKEEP: Duration = Duration::from_secs(5);
/// Slack after the shutdown grace before the runtime stops waiting for
/// statements still holding blocking threads.
const RUNTIME_STOP_SLACK: Duration = Duration::from_secs(1);
/// How often `--wait-index` re-reads the jobs' progress (a progress bar:
/// twenty updates a second is smooth).
const WAIT_INDEX_POLL: Duration = Duration::from_millis(50);

/// Tributary: an embedded-first SQL database with asynchronous indexes.
#[derive(Debug, Parser)]
#[command(name = "tributary", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Log lines on stderr as human-readable text or one JSON object per
    /// line (for log collectors).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// `--log-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    Text,
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the MySQL-protocol server.
    Serve(ServeArgs),
    /// Run SQL statements against a data directory (no server).
    Sql(SqlArgs),
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Data directory.
    #[arg(long, default_value = "./tributary-data")]
    pub data: PathBuf,
    /// MySQL listen address `host:port` (host names are resolved; port 0
    /// picks a free port).
    #[arg(long, default_value = "127.0.0.1:6001")]
    pub listen: String,
    /// Extra user as NAME:PASSWORD (repeatable); `root:PW` sets root's password.
    #[arg(long = "user", value_name = "NAME:PASSWORD")]
    pub users: Vec<UserSpec>,
    /// Concurrent connection limit (more get error 1040).
    #[arg(long, default_value_t = 151)]
    pub max_connections: usize,
    /// Concurrent connections of one account (more get error 1203); 0:
    /// no per-account limit.
    #[arg(long, default_value_t = 0)]
    pub max_user_connections: usize,
    /// Seconds a client has to authenticate before it is closed and its
    /// connection slot freed (error 1159 first).
    #[arg(long, value_name = "SECS", default_value_t = 10)]
    pub connect_timeout: u64,
    /// Largest client packet in bytes (larger gets error 1153).
    #[arg(long, default_value_t = 64 << 20)]
    pub max_allowed_packet: usize,
    /// Admin HTTP address (`host:port`; port 0 picks a free one), or `off`
    /// (the default: several servers on one machine need no port flag but
    /// `--listen`; ask for the endpoint where you scrape or control it).
    #[arg(long, default_value = "off")]
    pub admin_listen: String,
    /// Allow the admin endpoint on a non-loopback address.
    #[arg(long)]
    pub admin_allow_remote: bool,
    /// Bearer token of mutating admin requests (default: a random token
    /// written to `<data dir>/admin.token`, mode 0600, at every start).
    #[arg(long, value_name = "TOKEN")]
    pub admin_token: Option<String>,
    /// Seconds shutdown waits for in-flight statements.
    #[arg(long, default_value_t = 5)]
    pub shutdown_grace_secs: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Engine settings shared by `serve` and `sql` (defaults: [`Config`]).
#[derive(Debug, Args, Clone, Default)]
pub struct EngineArgs {
    /// Row-lock wait timeout in seconds (error 1205 after it).
    #[arg(long, value_name = "SECS")]
    pub lock_wait_timeout: Option<f64>,
    /// ISCP runner tick interval in milliseconds.
    #[arg(long, value_name = "MS")]
    pub iscp_interval_ms: Option<u64>,
    /// Max changes per ISCP work unit.
    #[arg(long, value_name = "N")]
    pub iscp_max_batch: Option<usize>,
    /// ISCP worker pool size.
    #[arg(long, value_name = "N")]
    pub iscp_workers: Option<usize>,
    /// Threads indexing documents in a full-text index's initial build
    /// (default: the machine's cores, at most 8).
    #[arg(long, value_name = "N")]
    pub iscp_build_threads: Option<usize>,
    /// Max not-yet-indexed rows a fresh index search evaluates exactly.
    #[arg(long, value_name = "N")]
    pub fresh_tail_cap: Option<usize>,
    /// How long DROP waits for Canceled before returning with a warning (ms).
    #[arg(long, value_name = "MS")]
    pub drop_wait_ms: Option<u64>,
    /// Node name for the ISCP runner lease.
    #[arg(long)]
    pub node_name: Option<String>,
    /// Commit durability of the embedded storage: `immediate` (default:
    /// every acknowledged commit is fsynced; concurrent commits share one
    /// fsync) or `periodic:<ms>` (fsync every `<ms>`; a crash can lose the
    /// commits of the last period, never part of one).
    #[arg(long, value_name = "MODE")]
    pub durability: Option<tributary_storage::Durability>,
    /// Page cache of the embedded storage, e.g. `256MB`, `1GB`, `65536`
    /// (bytes; KB/MB/GB are powers of 1024). Default: an eighth of the
    /// machine's memory, at least 32 MB, at most 4 GB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub cache_size: Option<usize>,
    /// Size of the embedded storage's commit log, preallocated (written
    /// with zeros) in the data directory at the first start, e.g. `16MB`:
    /// how much committed data may wait for the data file, and so how long
    /// writes go on when the data file cannot grow (a full disk). Default:
    /// a sixteenth of `--cache-size`, at least 4 MB, at most 64 MB. A
    /// larger existing log is kept.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub commit_log_size: Option<usize>,
    /// How long the ISCP runner lease lasts without renewal: after a runner
    /// dies, another node takes over within about this long (ms).
    #[arg(long, value_name = "MS")]
    pub lease_ttl_ms: Option<u64>,
    /// How often the ISCP runner collects old row versions and change-log
    /// entries (ms).
    #[arg(long, value_name = "MS")]
    pub gc_interval_ms: Option<u64>,
    /// Most memory one asynchronous vector or full-text index may hold
    /// (e.g. `512MB`); past it the index's job fails (state Error) instead
    /// of the process. Default: no limit.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub index_memory_budget: Option<usize>,
    /// Most memory all running statements' rows may hold at once (e.g.
    /// `4GB`); past it a statement fails with error 1114, never the
    /// process. Default: a quarter of the machine's memory.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub statement_memory_total: Option<usize>,
    /// One statement's memory budget when its session sets no
    /// `tributary_statement_memory_limit` (e.g. `512MB`). Default: an
    /// eighth of `--statement-memory-total`, 64 MB to 2 GB.
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub statement_memory: Option<usize>,
    /// Where statements' spill files go (`@@tmpdir`, decision 027).
    /// Default: `tmp` in the data directory (swept of leftover spill files
    /// at start), or the OS temp dir with `--storage`. A directory given
    /// here is not swept: it may be shared.
    #[arg(long, value_name = "DIR")]
    pub tmpdir: Option<std::path::PathBuf>,
    /// The directory server-side `LOAD DATA INFILE` may read files from
    /// (MySQL's `secure_file_priv`). Default: none, server-side files
    /// refused (LOCAL loads are not affected).
    #[arg(long, value_name = "DIR")]
    pub secure_file_priv: Option<std::path::PathBuf>,
    /// Log statements that take at least this many ms (WARN, target
    /// `tributary::slow`); 0 turns the log off. Default 10000.
    #[arg(long, value_name = "MS")]
    pub slow_statement_ms: Option<u64>,
    /// Most PostgreSQL connections this node opens (with `--storage`).
    #[arg(long, value_name = "N")]
    pub pg_pool_size: Option<usize>,
    /// Where the data lives: a PostgreSQL database
    /// (`postgres://user@host:port/db`, shared by every node given the same
    /// URL, each with its own `--node-name`), or, when absent, the embedded
    /// engine in `--data`.
    #[arg(long, value_name = "URL")]
    pub storage: Option<String>,
    /// Never run the ISCP runner on this node.
    #[arg(long)]
    pub no_iscp: bool,
    /// Arm the fault points of `TRIBUTARY_FAULTS` (testing only; without
    /// this flag a set `TRIBUTARY_FAULTS` refuses to start, exit code 2).
    #[arg(long)]
    pub allow_fault_injection: bool,
}

impl EngineArgs {
    /// The configuration these flags describe.
    pub fn config(&self) -> Config {
        let mut c = Config::default();
        if let Some(s) = self
            .lock_wait_timeout
            .filter(|s| s.is_finite() && *s >= 0.0)
        {
            c.lock_wait_timeout = Duration::from_secs_f64(s);
        }
        if let Some(ms) = self.iscp_interval_ms {
            c.iscp_interval = Duration::from_millis(ms.max(1));
        }
        if let Some(n) = self.iscp_max_batch {
            c.iscp_max_batch = n.max(1);
        }
        if let Some(n) = self.iscp_workers {
            c.iscp_workers = n.max(1);
        }
        if let Some(n) = self.iscp_build_threads {
            c.iscp_build_threads = n.clamp(1, 8);
        }
        if let Some(n) = self.fresh_tail_cap {
            c.fresh_tail_cap = n;
        }
        if let Some(ms) = self.drop_wait_ms {
            c.drop_wait = Duration::from_millis(ms);
        }
        if let Some(n) = &self.node_name {
            c.node_name = n.clone();
        }
        if let Some(ms) = self.lease_ttl_ms {
            c.lease_ttl = Duration::from_millis(ms.max(100));
        }
        if let Some(ms) = self.slow_statement_ms {
            c.slow_statement = (ms > 0).then(|| Duration::from_millis(ms));
        }
        if let Some(n) = self.index_memory_budget {
            c.index_memory_budget = Some(n);
        }
        if let Some(n) = self.statement_memory_total {
            c.statement_memory_total = n as u64;
            c.statement_memory = crate::sql::budget::default_statement(n as u64);
        }
        if let Some(n) = self.statement_memory {
            c.statement_memory = n as u64;
        }
        if let Some(n) = self.pg_pool_size {
            c.pg_pool_size = n.max(2);
        }
        c.tmpdir.clone_from(&self.tmpdir);
        c.secure_file_priv.clone_from(&self.secure_file_priv);
        if let Some(ms) = self.gc_interval_ms {
            c.gc_interval = Duration::from_millis(ms.max(10));
        }
        if let Some(d) = self.durability {
            c.storage.durability = d;
        }
        if let Some(n) = self.cache_size {
            c.storage.cache_bytes = n;
        }
        if let Some(n) = self.commit_log_size {
            c.storage.log_bytes = Some(n as u64);
        }
        c.iscp_enabled = !self.no_iscp;
        c
    }
}

/// A size in bytes: a number with an optional KB, MB or GB suffix (powers
/// of 1024), at least 1 MB.
fn parse_size(s: &str) -> Result<usize, String> {
    let t = s.trim().to_ascii_uppercase();
    let (num, unit) = match t.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => t.split_at(i),
        None => (t.as_str(), ""),
    };
    let mult: usize = match unit.trim() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        other => return Err(format!("unknown size unit {other:?} (use KB, MB or GB)")),
    };
    let n: usize = num
        .parse()
        .map_err(|_| format!("bad size {s:?}: a number with KB, MB or GB"))?;
    let bytes = n
        .checked_mul(mult)
        .ok_or_else(|| format!("size {s:?} is too large"))?;
    if bytes < 1 << 20 {
        return Err(format!("size {s:?} is below the 1 MB minimum"));
    }
    Ok(bytes)
}

#[derive(Debug, Args)]
pub struct SqlArgs {
    /// Data directory.
    #[arg(long, default_value = "./tributary-data")]
    pub data: PathBuf,
    /// Tab-separated output like `mysql -B`.
    #[arg(long, short = 'B')]
    pub batch: bool,
    /// Statements to run (`;`-separated).
    #[arg(
        long = "execute",
        short = 'e',
        value_name = "SQL",
        conflicts_with = "file"
    )]
    pub execute: Option<String>,
    /// SQL script to run (default: standard input).
    pub file: Option<PathBuf>,
    /// Before exiting, wait until every index job has finished its initial
    /// build and caught up, showing a progress bar on stderr (an embedded
    /// process only propagates while it runs).
    #[arg(long)]
    pub wait_index: bool,
    /// Upper bound of `--wait-index`, in seconds.
    #[arg(long, default_value_t = 600)]
    pub wait_timeout: u64,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Parse the process arguments, run, and return the exit code.
pub fn main_with_args() -> i32 {
    let cli = Cli::parse();
    run(cli)
}

/// Run a parsed command line; returns the process exit code.
pub fn run(cli: Cli) -> i32 {
    let default_level = match cli.command {
        Command::Serve(_) => "info",
        Command::Sql(_) => "warn",
    };
    init_logging(default_level, cli.log_format);
    let allow_faults = match &cli.command {
        Command::Serve(a) => a.engine.allow_fault_injection,
        Command::Sql(a) => a.engine.allow_fault_injection,
    };
    if std::env::var_os(tributary_fault::ENV_VAR).is_some_and(|v| !v.is_empty()) && !allow_faults {
        eprintln!(
            "tributary: {} is set but fault injection from the environment is off; \
             pass --allow-fault-injection to arm it (testing only, never in production) \
             or unset the variable",
            tributary_fault::ENV_VAR
        );
        return 2;
    }
    match tributary_fault::load_from_env() {
        Ok(0) => {}
        Ok(n) => tracing::info!(points = n, "fault points armed from TRIBUTARY_FAULTS"),
        Err(e) => {
            eprintln!("tributary: invalid TRIBUTARY_FAULTS: {e}");
            return 2;
        }
    }
    match cli.command {
        Command::Serve(a) => serve(a),
        Command::Sql(a) => sql(a),
    }
}

fn init_logging(default_level: &str, format: LogFormat) {
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(io::stderr);
    let _ = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().flatten_event(true).try_init(),
    };
}

fn print_flushed(line: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn serve(a: ServeArgs) -> i32 {
    let admin: Option<SocketAddr> = if a.admin_listen.eq_ignore_ascii_case("off") {
        None
    } else {
        match a.admin_listen.parse() {
            Ok(addr) => Some(addr),
            Err(e) => {
                eprintln!(
                    "tributary: invalid --admin-listen {:?}: {e}",
                    a.admin_listen
                );
                return 2;
            }
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("tributary: cannot start runtime: {e}");
            return 1;
        }
    };
    let grace = Duration::from_secs(a.shutdown_grace_secs);
    let code = rt.block_on(async move {
        let data = a.data.clone();
        let config = a.engine.config();
        let location = a.engine.storage.clone();
        if location.is_some() && a.engine.node_name.is_none() {
            eprintln!("tributary: --storage needs --node-name (unique per node)");
            return 2;
        }
        let db = match tokio::task::spawn_blocking(move || {
            Database::open_location(location.as_deref(), &data, config)
        })
        .await
        {
            Ok(Ok(db)) => db,
            Ok(Err(e)) => {
                eprintln!("tributary: cannot open {}: {e}", a.data.display());
                return 1;
            }
            Err(e) => {
                eprintln!("tributary: cannot open {}: {e}", a.data.display());
                return 1;
            }
        };
        let opts = ServerOptions {
            listen: a.listen,
            users: a.users,
            max_connections: a.max_connections,
            max_allowed_packet: a.max_allowed_packet,
            max_user_connections: a.max_user_connections,
            connect_timeout: Duration::from_secs(a.connect_timeout.max(1)),
            shutdown_grace: grace,
            ..Default::default()
        };
        let server = match MysqlServer::bind(db.clone(), opts).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("tributary: {e}");
                return 1;
            }
        };
        let mut metrics_upkeep = None;
        let mut status_sampler = None;
        let admin = match admin {
            Some(addr) => {
                let token = match admin_token(&a.data, a.admin_token.as_deref()) {
                    Ok(t) => t,
                    Err(e) => {
                        eprintln!("tributary: cannot write the admin token: {e}");
                        return 1;
                    }
                };
                let metrics = match crate::server::metrics::Metrics::install(db.clone()) {
                    Ok(m) => Some(m),
                    Err(e) => {
                        tracing::warn!(error = %e, "metrics recorder not installed");
                        None
                    }
                };
                metrics_upkeep = metrics.clone();
                let status = crate::server::status::Status::new(db.clone());
                status_sampler = Some(status.clone());
                match AdminServer::bind(addr, a.admin_allow_remote, token, metrics, Some(status))
                    .await
                {
                    Ok(s) => Some(s),
                    Err(e) => {
                        eprintln!("tributary: {e}");
                        return 1;
                    }
                }
            }
            None => None,
        };
        let token = CancellationToken::new();
        let tracker = TaskTracker::new();
        match server.local_addr() {
            Ok(addr) => print_flushed(&format!("listening on {addr}")),
            Err(e) => {
                eprintln!("tributary: {e}");
                return 1;
            }
        }
        tracker.spawn(server.run(token.clone()));
        if let Some(admin) = admin {
            if let Ok(addr) = admin.local_addr() {
                print_flushed(&format!("admin listening on {addr}"));
            }
            let t = token.clone();
            tracker.spawn(async move {
                if let Err(e) = admin.run(t).await {
                    tracing::error!(error = %e, "admin endpoint stopped");
                }
            });
        }
        if let Some(m) = metrics_upkeep {
            // Histograms buffer samples until drained: drain them between
            // scrapes too.
            let t = token.clone();
            tracker.spawn(async move {
                loop {
                    tokio::select! {
                        _ = t.cancelled() => return,
                        _ = tokio::time::sleep(METRICS_UPKEEP) => m.upkeep(),
                    }
                }
            });
        }
        if let Some(s) = status_sampler {
            tracker.spawn(s.run(token.clone()));
        }
        tracing::info!("ready");
        wait_for_signal().await;
        tracing::info!("shutting down");
        token.cancel();
        tracker.close();
        tracker.wait().await;
        if let Err(e) = tokio::task::spawn_blocking(move || db.shutdown()).await {
            tracing::error!(error = %e, "database shutdown failed");
            return 1;
        }
        tracing::info!("stopped");
        0
    });
    // Statements still running past the grace period hold blocking threads;
    // do not wait for them forever.
    rt.shutdown_timeout(grace + RUNTIME_STOP_SLACK);
    code
}

/// The admin token: `--admin-token`, or a fresh random one written to
/// `<data>/admin.token` (mode 0600).
fn admin_token(data: &std::path::Path, given: Option<&str>) -> io::Result<AdminToken> {
    if let Some(t) = given.filter(|t| !t.is_empty()) {
        return Ok(AdminToken::new(t));
    }
    let t = AdminToken::generate()?;
    AdminToken::write_file(&data.join("admin.token"), &t)?;
    Ok(AdminToken::new(&t))
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot install SIGTERM handler");
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

fn sql(a: SqlArgs) -> i32 {
    let script = match (&a.execute, &a.file) {
        (Some(s), _) => s.clone(),
        (None, Some(path)) => match std::fs::read_to_string(path) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("tributary: cannot read {}: {e}", path.display());
                return 1;
            }
        },
        (None, None) => {
            let mut s = String::new();
            if let Err(e) = io::stdin().read_to_string(&mut s) {
                eprintln!("tributary: cannot read standard input: {e}");
                return 1;
            }
            s
        }
    };
    let db = match Database::open_location(a.engine.storage.as_deref(), &a.data, a.engine.config())
    {
        Ok(db) => db,
        Err(e) => {
            eprintln!("tributary: cannot open {}: {e}", a.data.display());
            return 1;
        }
    };
    let mut session = db.session();
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let mut code = 0;
    for stmt in split_statements(&script) {
        match session.execute(&stmt) {
            Ok(r) => {
                let text = if a.batch {
                    format_batch(&r)
                } else {
                    format_table(&r)
                };
                if out.write_all(text.as_bytes()).is_err() {
                    code = 1;
                    break;
                }
            }
            Err(e) => {
                let _ = out.flush();
                eprintln!("{}", e.client_line());
                code = 1;
                break;
            }
        }
    }
    let _ = out.flush();
    drop(out);
    if code == 0 && a.wait_index {
        if let Err(msg) = wait_for_indexes(&db, Duration::from_secs(a.wait_timeout)) {
            eprintln!("tributary: {msg}");
            code = 1;
        }
    }
    db.shutdown();
    code
}

/// Build progress of all live jobs: (rows done, rows total, all caught up).
fn index_progress(db: &Database) -> Result<(u64, u64, bool), String> {
    let jobs = db
        .engine()
        .iscp
        .job_statuses(0)
        .map_err(|e| e.to_string())?;
    let (mut done, mut total, mut level) = (0u64, 0u64, true);
    for j in jobs {
        // A synchronous index is complete from its CREATE on.
        if j.dropped || j.state.is_protected() || j.sync {
            continue;
        }
        match j.progress.total {
            Some(n) => {
                level = false;
                done += j.progress.done;
                total += n.max(j.progress.done);
            }
            None if j.lag_ts > 0 => level = false,
            None => {}
        }
    }
    Ok((done, total, level))
}

/// `--wait-index`: wait with a progress bar until every job is level.
fn wait_for_indexes(db: &Database, timeout: Duration) -> Result<(), String> {
    let bar =
        indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "building indexes {bar:40} {pos}/{len} rows ({elapsed})",
        )
        .map_err(|e| e.to_string())?,
    );
    let deadline = std::time::Instant::now() + timeout;
    loop {
        let (done, total, level) = index_progress(db)?;
        bar.set_length(total.max(1));
        bar.set_position(done);
        if level {
            bar.finish_and_clear();
            return Ok(());
        }
        if std::time::Instant::now() >= deadline {
            bar.abandon();
            return Err(format!("indexes still building after {timeout:?}"));
        }
        db.engine().iscp.wake();
        std::thread::park_timeout(WAIT_INDEX_POLL);
    }
}

/// `mysql -B` escaping: NUL, tab, newline and backslash.
fn batch_escape(s: &str, out: &mut String) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\0' => out.push_str("\\0"),
            c => out.push(c),
        }
    }
}

/// Tab-separated output: a header line, then one line per row; nothing for
/// statements without a result set.
pub fn format_batch(r: &QueryResult) -> String {
    let mut s = String::new();
    if !r.has_result_set() {
        return s;
    }
    for (i, c) in r.columns.iter().enumerate() {
        if i > 0 {
            s.push('\t');
        }
        batch_escape(&c.name, &mut s);
    }
    s.push('\n');
    for row in &r.rows {
        for i in 0..r.columns.len() {
            if i > 0 {
                s.push('\t');
            }
            match row
                .get(i)
                .and_then(|v| crate::types::format_value(v, r.columns[i].kind))
            {
                Some(t) => batch_escape(&t, &mut s),
                None => s.push_str("NULL"),
            }
        }
        s.push('\n');
    }
    s
}

fn plural(n: u64, word: &str) -> String {
    if n == 1 {
        format!("1 {word}")
    } else {
        format!("{n} {word}s")
    }
}

/// The interactive `mysql` client's format: boxed table and
/// "N rows in set", or "Query OK, N rows affected".
pub fn format_table(r: &QueryResult) -> String {
    let warnings = r.warnings.len() as u64;
    let warn = if warnings > 0 {
        format!(", {}", plural(warnings, "warning"))
    } else {
        String::new()
    };
    if !r.has_result_set() {
        return format!(
            "Query OK, {} affected{warn}\n\n",
            plural(r.affected_rows, "row")
        );
    }
    if r.rows.is_empty() {
        return format!("Empty set{warn}\n\n");
    }
    let cells: Vec<Vec<String>> = r
        .rows
        .iter()
        .map(|row| {
            (0..r.columns.len())
                .map(|i| {
                    row.get(i)
                        .and_then(|v| crate::types::format_value(v, r.columns[i].kind))
                        .unwrap_or_else(|| "NULL".into())
                })
                .collect()
        })
        .collect();
    let widths: Vec<usize> = r
        .columns
        .iter()
        .enumerate()
        .map(|(i, c)| {
            cells
                .iter()
                .map(|row| row[i].chars().count())
                .chain(std::iter::once(c.name.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut sep = String::from("+");
    for w in &widths {
        sep.push_str(&"-".repeat(w + 2));
        sep.push('+');
    }
    sep.push('\n');
    let pad = |s: &str, w: usize, right: bool| {
        let n = w.saturating_sub(s.chars().count());
        if right {
            format!("{}{s}", " ".repeat(n))
        } else {
            format!("{s}{}", " ".repeat(n))
        }
    };
    let mut s = sep.clone();
    s.push('|');
    for (c, w) in r.columns.iter().zip(&widths) {
        s.push(' ');
        s.push_str(&pad(&c.name, *w, false));
        s.push_str(" |");
    }
    s.push('\n');
    s.push_str(&sep);
    for row in &cells {
        s.push('|');
        for ((cell, w), c) in row.iter().zip(&widths).zip(&r.columns) {
            let right = c.kind.is_numeric();
            s.push(' ');
            s.push_str(&pad(cell, *w, right));
            s.push_str(" |");
        }
        s.push('\n');
    }
    s.push_str(&sep);
    s.push_str(&format!(
        "{} in set{warn}\n\n",
        plural(r.rows.len() as u64, "row")
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Column, ColumnKind, Value};

    #[test]
    fn sizes_parse_with_units_and_refuse_nonsense() {
        assert_eq!(parse_size("32MB"), Ok(32 << 20));
        assert_eq!(parse_size("1gb"), Ok(1 << 30));
        assert_eq!(parse_size("2048 KB"), Ok(2 << 20));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        for bad in ["", "MB", "12XB", "1KB", "-5MB", "99999999999999999999GB"] {
            assert!(parse_size(bad).is_err(), "{bad}");
        }
    }

    fn sample() -> QueryResult {
        QueryResult {
            columns: vec![
                Column {
                    name: "id".into(),
                    kind: ColumnKind::Int,
                },
                Column {
                    name: "name".into(),
                    kind: ColumnKind::Text,
                },
            ],
            rows: vec![
                vec![Value::Int(1), Value::Text("a\tb\\c\nd".into())],
                vec![Value::Int(22), Value::Null],
            ],
            ..Default::default()
        }
    }

    #[test]
    fn batch_format_escapes() {
        assert_eq!(
            format_batch(&sample()),
            "id\tname\n1\ta\\tb\\\\c\\nd\n22\tNULL\n"
        );
        assert_eq!(format_batch(&QueryResult::default()), "");
    }

    #[test]
    fn table_format() {
        let mut r = sample();
        r.rows[0][1] = Value::Text("a".into());
        assert_eq!(
            format_table(&r),
            "+----+------+\n| id | name |\n+----+------+\n|  1 | a    |\n| 22 | NULL |\n+----+------+\n2 rows in set\n\n"
        );
        let ok = QueryResult {
            affected_rows: 1,
            ..Default::default()
        };
        assert_eq!(format_table(&ok), "Query OK, 1 row affected\n\n");
    }
}
