//! What one small durable commit costs on this machine, three ways — the
//! measurement behind the next step of issue 11 (decision 016, "Open"):
//!
//! 1. `redb-immediate`: what the embedded store does today — one redb
//!    transaction touching a rows tree, a change-log tree and a table-ts
//!    tree, committed with `Durability::Immediate` (copy-on-write pages,
//!    then one fsync);
//! 2. `redb-none+log`: the same redb transaction with `Durability::None`
//!    (no fsync) plus one ~200-byte record appended to a log file and
//!    `fdatasync`ed — a redo log beside redb;
//! 3. `log-only`: the append and `fdatasync` alone;
//! 4. `log-prealloc`: the record written in place into a log file
//!    preallocated (and fsynced) beforehand, then `fdatasync` — no file-size
//!    change to make durable, as InnoDB's redo log does (the floor);
//! 5. `redb-none+prealloc`: 2 with the record written in place into a
//!    preallocated log as in 4 — a redo log that never changes the file
//!    system's metadata, so its `fdatasync` needs no journal commit (which
//!    would also write out redb's newly allocated pages).
//!
//! Run: `cargo run --release -p tributary-storage --example commit_cost
//! [commits] [dir]` (default 2,000 commits in a temporary directory on the
//! data file system, /var/tmp).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::io::Write;
use std::time::Instant;

use redb::{Database, Durability, TableDefinition};

const ROWS: TableDefinition<&[u8], &[u8]> = TableDefinition::new("rows");
const CHANGES: TableDefinition<(u64, u64, u32), &[u8]> = TableDefinition::new("changes");
const TABLE_TS: TableDefinition<u64, u64> = TableDefinition::new("table_ts");

fn redb_commit(db: &Database, i: u64, durability: Durability) {
    let mut w = db.begin_write().expect("begin");
    w.set_durability(durability);
    {
        let value = vec![b'x'; 120];
        let mut key = 7u64.to_be_bytes().to_vec();
        key.extend_from_slice(&i.to_be_bytes());
        w.open_table(ROWS)
            .expect("rows")
            .insert(key.as_slice(), value.as_slice())
            .expect("insert");
        w.open_table(CHANGES)
            .expect("changes")
            .insert((7, i, 0), value.as_slice())
            .expect("insert");
        w.open_table(TABLE_TS)
            .expect("table_ts")
            .insert(7, i)
            .expect("insert");
    }
    w.commit().expect("commit");
}

fn main() {
    let mut args = std::env::args().skip(1);
    let n: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(2_000);
    let base = args.next().unwrap_or_else(|| "/var/tmp".into());
    let dir = tempfile::Builder::new()
        .prefix("commit-cost-")
        .tempdir_in(&base)
        .expect("tempdir");
    let record = vec![b'r'; 200];
    for round in 0..2 {
        for way in [
            "redb-immediate",
            "redb-none+log",
            "log-only",
            "log-prealloc",
            "redb-none+prealloc",
        ] {
            let db = Database::create(dir.path().join(format!("{way}-{round}.redb"))).expect("db");
            let mut log = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.path().join(format!("{way}-{round}.log")))
                .expect("log");
            let pre = std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(dir.path().join(format!("{way}-{round}.pre")))
                .expect("prealloc");
            if way.ends_with("prealloc") {
                pre.set_len(n * record.len() as u64).expect("set_len");
                // Real blocks, not a hole: write zeros, then fsync once.
                use std::os::unix::fs::FileExt;
                pre.write_all_at(&vec![0u8; (n as usize) * record.len()], 0)
                    .expect("zero");
                pre.sync_all().expect("sync");
            }
            let start = Instant::now();
            for i in 0..n {
                match way {
                    "redb-immediate" => redb_commit(&db, i, Durability::Immediate),
                    "redb-none+log" => {
                        redb_commit(&db, i, Durability::None);
                        log.write_all(&record).expect("append");
                        log.sync_data().expect("fdatasync");
                    }
                    "log-only" => {
                        log.write_all(&record).expect("append");
                        log.sync_data().expect("fdatasync");
                    }
                    "redb-none+prealloc" => {
                        use std::os::unix::fs::FileExt;
                        redb_commit(&db, i, Durability::None);
                        pre.write_all_at(&record, i * record.len() as u64)
                            .expect("write");
                        pre.sync_data().expect("fdatasync");
                    }
                    _ => {
                        use std::os::unix::fs::FileExt;
                        pre.write_all_at(&record, i * record.len() as u64)
                            .expect("write");
                        pre.sync_data().expect("fdatasync");
                    }
                }
            }
            let e = start.elapsed();
            println!(
                "round {round} {way:<15} {:>8.0} commits/s  {:>6.0} µs/commit",
                n as f64 / e.as_secs_f64(),
                e.as_secs_f64() * 1e6 / n as f64
            );
        }
    }
}
