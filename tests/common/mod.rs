//! Helpers shared by the integration tests: the fast test configuration,
//! running a statement that must succeed (`q`) or fail (`err`), and a
//! condition wait with a deadline (never a fixed sleep).

#![allow(dead_code)] // each test binary uses a subset

pub mod oracle;

use std::time::{Duration, Instant};

use tributary::testing::JobRow;
use tributary::{Config, Database};

/// Milliseconds.
pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// The default test configuration: fast ticks, bounded DROP wait, short
/// retry backoff.
pub fn cfg() -> Config {
    Config {
        iscp_interval: ms(20),
        drop_wait: Duration::from_secs(5),
        iscp_retry_base: ms(50),
        iscp_retry_cap: ms(500),
        ..Default::default()
    }
}

/// A database on the test configuration whose statements may hold
/// `statement` bytes each (and all of them four times that): for the
/// memory-budget tests of an operator.
pub fn open_budgeted(statement: u64) -> (tempfile::TempDir, Database) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        statement_memory: statement,
        statement_memory_total: 4 * statement,
        ..cfg()
    };
    let db = Database::open_with(dir.path(), config).unwrap();
    (dir, db)
}

/// Poll `cond` every few ms until it holds; panics after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return;
        }
        let now = Instant::now();
        assert!(
            now < deadline,
            "timed out after {timeout:?} waiting for: {what}"
        );
        std::thread::park_timeout((deadline - now).min(ms(5)));
    }
}

/// The armed fault point `key` (`name` or `name:target`), if any.
pub fn point(key: &str) -> Option<tributary_fault::PointInfo> {
    tributary_fault::global()
        .list()
        .into_iter()
        .find(|p| p.key() == key)
}

/// Wait until fault point `key` has been hit at least `n` times.
pub fn wait_hits(key: &str, n: u64, timeout: Duration) {
    wait_until(&format!("{key} hit {n} times"), timeout, || {
        point(key).is_some_and(|p| p.hits >= n)
    });
}

/// Wait until something blocks in fault point `key`.
pub fn wait_waiters(key: &str, timeout: Duration) {
    wait_until(&format!("a waiter on {key}"), timeout, || {
        point(key).is_some_and(|p| p.waiters >= 1)
    });
}

/// Remove every fault point and check none is left armed.
pub fn remove_all_points() {
    tributary_fault::global()
        .remove("all")
        .expect("remove all fault points");
    tributary_fault::testing::assert_no_armed_points(tributary_fault::global());
}

/// The newest generation of index `name`'s job (typed, fresh read).
pub fn job(db: &Database, name: &str) -> JobRow {
    let jn = tributary::testing::job_name(name);
    db.engine()
        .iscp
        .read_jobs()
        .unwrap()
        .into_iter()
        .filter(|j| j.key.job_name == jn)
        .max_by_key(|j| j.key.job_id)
        .unwrap_or_else(|| panic!("no job for index {name}"))
}

/// Number of entries in a job's hidden table at the latest ts.
pub fn hidden_count(db: &Database, storage_id: u64) -> usize {
    let st = &db.engine().storage;
    st.snapshot_scan(storage_id, st.latest_ts(), None, usize::MAX)
        .unwrap()
        .len()
}

/// Whether job `j` has applied every change of its table up to `ts`: no
/// change of the table after its watermark (`iscp::log::newest_change_ts`,
/// the lag SHOW ISCP STATUS reports). Not `watermark >= ts`: a watermark
/// follows its own table's changes only, while background commits — other
/// units, bases — move `latest_ts` on.
pub fn applied_up_to(db: &Database, j: &JobRow, ts: u64) -> bool {
    tributary::testing::newest_change_ts(
        db.engine().storage.as_ref(),
        j.key.table_id,
        j.watermark,
        ts,
    )
    .is_ok_and(|newest| newest == j.watermark)
}

/// Which storage several in-process compute nodes share.
#[derive(Debug, Clone, Copy)]
pub enum Backend {
    /// One embedded engine in a temporary directory, shared by `Arc`.
    Embedded,
    /// One database in the test process's throwaway PostgreSQL cluster;
    /// each node opens its own backend on it (its own pool, heartbeat
    /// and gate cache), as separate processes would.
    Postgres,
}

/// Storage shared by the compute nodes of one test.
pub struct Shared {
    embedded: Option<std::sync::Arc<dyn tributary_storage::Storage>>,
    url: Option<String>,
    _dir: Option<tempfile::TempDir>,
}

impl Shared {
    pub fn new(backend: Backend) -> Shared {
        match backend {
            Backend::Embedded => {
                let dir = tempfile::tempdir().unwrap();
                let s: std::sync::Arc<dyn tributary_storage::Storage> =
                    tributary_storage::EmbeddedStorage::open(dir.path()).unwrap();
                Shared {
                    embedded: Some(s),
                    url: None,
                    _dir: Some(dir),
                }
            }
            Backend::Postgres => Shared {
                embedded: None,
                url: Some(tributary_pgstore::testing::cluster().fresh_db()),
                _dir: None,
            },
        }
    }

    /// The storage node `node` opens.
    pub fn for_node(&self, node: &str) -> std::sync::Arc<dyn tributary_storage::Storage> {
        match (&self.embedded, &self.url) {
            (Some(s), _) => s.clone(),
            (None, Some(url)) => {
                tributary_pgstore::PgStorage::open(tributary_pgstore::PgOptions::new(url, node))
                    .unwrap()
            }
            (None, None) => unreachable!("a backend"),
        }
    }
}

/// The stack of tokio's blocking threads, where the server runs statements.
pub const SERVER_STATEMENT_STACK: usize = 2 << 20;

/// Run `f` on a thread with the server's statement stack (a deep statement
/// must answer or fail there, never overflow it).
pub fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(SERVER_STATEMENT_STACK)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("the statement thread did not overflow its stack")
}

/// The rows `sql` returns; panics (naming the statement) if it fails.
pub fn q(s: &mut tributary::Session, sql: &str) -> Vec<Vec<tributary::Value>> {
    match s.execute(sql) {
        Ok(r) => r.rows,
        Err(e) => panic!("{sql}: {e:?}"),
    }
}

/// The error `sql` fails with; panics if it succeeds.
pub fn err(s: &mut tributary::Session, sql: &str) -> tributary::SqlError {
    match s.execute(sql) {
        Ok(r) => panic!("{sql} should fail, got {} rows", r.rows.len()),
        Err(e) => e,
    }
}

/// A tiny deterministic generator (Knuth's MMIX LCG): reproducible test
/// data with no crate and no seed file.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next 31 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// One of `steps` values `0, 1/div, 2/div, …` (a float that prints
    /// exactly as it is stored when `div` is a power of ten).
    pub fn grid(&mut self, steps: u64, div: f32) -> f32 {
        (self.next() % steps) as f32 / div
    }
}
