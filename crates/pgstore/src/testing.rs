//! A throwaway PostgreSQL cluster for tests (this crate's and the server's
//! process-level ones): `initdb` in a temporary directory, trust auth,
//! listening on 127.0.0.1 and a free port only, started once per test
//! process and stopped (and deleted) by a watchdog when that process ends.
//! Never touches a system-wide instance.
//!
//! Binaries: `$TRIBUTARY_PG_BIN`, else the newest
//! `/usr/lib/postgresql/*/bin` (Debian's `postgresql` package, which
//! `.ci/run` installs). As root the cluster runs as the `postgres` user.
//!
//! Test support only: a cluster that cannot start fails the test that
//! asked for it, so this module may `expect`.
#![allow(clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// A running cluster.
pub struct Cluster {
    pub port: u16,
    bin: PathBuf,
    data: PathBuf,
    as_postgres: bool,
}

fn bin_dir() -> PathBuf {
    if let Ok(dir) = std::env::var("TRIBUTARY_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.path().join("bin"))
                .filter(|p| p.join("initdb").exists())
                .collect()
        })
        .unwrap_or_default();
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name())
            .and_then(|v| v.to_str())
            .and_then(|v| v.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop().expect(
        "PostgreSQL is not installed: the PostgreSQL backend's tests need Debian's \
         `postgresql` package (.ci/run and scripts/test-deps.sh install it) or \
         TRIBUTARY_PG_BIN pointing at a PostgreSQL bin directory",
    )
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

impl Cluster {
    fn tool(&self, name: &str) -> Command {
        let path = self.bin.join(name);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn run(&self, mut c: Command, what: &str) {
        let out = c.output().unwrap_or_else(|e| panic!("{what}: {e}"));
        assert!(
            out.status.success(),
            "{what} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn start_new() -> Cluster {
        let root = std::env::temp_dir().join(format!(
            "tributary-pg-{}-{}",
            std::process::id(),
            free_port()
        ));
        let data = root.join("data");
        std::fs::create_dir_all(&data).expect("cluster directory");
        // SAFETY-free check: geteuid through the environment of `id`.
        let as_postgres = Command::new("id")
            .arg("-u")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
            .unwrap_or(false);
        let c = Cluster {
            port: free_port(),
            bin: bin_dir(),
            data: data.clone(),
            as_postgres,
        };
        if as_postgres {
            let mut chown = Command::new("chown");
            chown.args(["-R", "postgres"]).arg(&root);
            c.run(chown, "chown the cluster directory to postgres");
        }
        let mut initdb = c.tool("initdb");
        initdb.arg("-D").arg(&data).args([
            "-A",
            "trust",
            "-U",
            "postgres",
            "--no-sync",
            "-E",
            "UTF8",
        ]);
        c.run(initdb, "initdb");
        let opts = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c deadlock_timeout=100ms \
             -c max_connections=300 -c shared_buffers=64MB",
            c.port,
            data.display()
        );
        let mut start = c.tool("pg_ctl");
        start
            .arg("-D")
            .arg(&data)
            .args(["-w", "-l"])
            .arg(data.join("log"))
            .args(["-o", &opts, "start"]);
        c.run(start, "pg_ctl start");
        c.watchdog(&root);
        c
    }

    /// Stop the cluster and delete it once this process has exited.
    fn watchdog(&self, root: &Path) {
        let stop = format!(
            "{}{} -D {} -m immediate stop",
            if self.as_postgres {
                "runuser -u postgres -- "
            } else {
                ""
            },
            self.bin.join("pg_ctl").display(),
            self.data.display()
        );
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; {stop} >/dev/null 2>&1; rm -rf {root}",
            pid = std::process::id(),
            root = root.display()
        );
        // `setsid -f` forks the watchdog off and returns at once.
        let status = Command::new("setsid")
            .args(["-f", "sh", "-c", &script])
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .expect("the cluster's watchdog");
        assert!(status.success(), "starting the cluster's watchdog");
    }

    /// `postgres://` URL of database `db`.
    pub fn url(&self, db: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{db}", self.port)
    }

    /// A new, empty database; its URL.
    pub fn fresh_db(&self) -> String {
        static N: AtomicU32 = AtomicU32::new(0);
        let name = format!("t{}", N.fetch_add(1, Ordering::Relaxed));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Run one SQL command with psql against `db` (as the superuser).
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let mut psql = self.tool("psql");
        psql.args([
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "postgres",
        ])
        .args(["-d", db, "-v", "ON_ERROR_STOP=1", "-qAtc", sql]);
        let out = psql.output().expect("psql");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }
}

/// The test process's cluster, started on first use.
pub fn cluster() -> &'static Cluster {
    static C: OnceLock<Cluster> = OnceLock::new();
    C.get_or_init(Cluster::start_new)
}

/// The database name in a URL made by [`Cluster::fresh_db`].
pub fn db_of(url: &str) -> &str {
    url.rsplit('/').next().unwrap_or("postgres")
}
