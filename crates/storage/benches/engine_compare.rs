//! Raw engine comparison behind docs/decisions/001-storage-engine.md and
//! 016-storage-v2: the same workloads directly on redb and on fjall, each
//! with its fsync-on-commit setting — single-key and 100-key commits, 8
//! threads committing single keys at once, point gets and full scans, then
//! a bulk load of LOAD keys, the bytes on disk per key (100-byte values,
//! 8-byte keys) and the time to reopen the database and answer a get.
//! Run with
//! `cargo bench -p tributary-storage --features compare --bench engine_compare`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::time::{Duration, Instant};

const SINGLE: u64 = 2_000;
const BATCHES: u64 = 200;
const BATCH: u64 = 100;
const GETS: u64 = 200_000;
const SCANS: u64 = 20;
const WRITERS: u64 = 8;
const PER_WRITER: u64 = 250;
/// Keys bulk-loaded (in 2,000-key commits) before space and reopen time.
const LOAD: u64 = 500_000;
const LOAD_BATCH: u64 = 2_000;
/// First key of the concurrent writers' ranges, of the bulk load.
const WRITERS_BASE: u64 = 1 << 32;
const LOAD_BASE: u64 = 1 << 40;

fn disk_bytes(path: &std::path::Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if meta.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.flatten().map(|e| e.path()));
            }
        } else {
            total += meta.blocks() * 512;
        }
    }
    total
}

fn report_space(engine: &str, path: &std::path::Path, keys: u64) {
    let bytes = disk_bytes(path);
    println!(
        "{engine:<6} {:<22} {:>12.0} bytes/key ({:.1} MB for {keys} keys of 108 bytes)",
        "space",
        bytes as f64 / keys as f64,
        bytes as f64 / 1e6
    );
}

fn report(engine: &str, metric: &str, n: u64, elapsed: Duration, unit: &str) {
    let rate = n as f64 / elapsed.as_secs_f64();
    println!("{engine:<6} {metric:<22} {rate:>12.0} {unit}/s");
}

fn value() -> Vec<u8> {
    vec![0xAB_u8; 100]
}

fn bench_redb(dir: &std::path::Path) {
    use redb::{Database, Durability, ReadableTable, TableDefinition};
    const TAB: TableDefinition<&[u8], &[u8]> = TableDefinition::new("t");
    let db = Database::create(dir.join("bench.redb")).expect("create");
    let v = value();
    let start = Instant::now();
    for i in 0..SINGLE {
        let mut w = db.begin_write().expect("write");
        w.set_durability(Durability::Immediate);
        w.open_table(TAB)
            .expect("table")
            .insert(&i.to_be_bytes()[..], v.as_slice())
            .expect("insert");
        w.commit().expect("commit");
    }
    report("redb", "commit_single_key", SINGLE, start.elapsed(), "txn");
    let start = Instant::now();
    for b in 0..BATCHES {
        let mut w = db.begin_write().expect("write");
        w.set_durability(Durability::Immediate);
        {
            let mut t = w.open_table(TAB).expect("table");
            for j in 0..BATCH {
                let k = SINGLE + b * BATCH + j;
                t.insert(&k.to_be_bytes()[..], v.as_slice())
                    .expect("insert");
            }
        }
        w.commit().expect("commit");
    }
    report("redb", "commit_batch_100", BATCHES, start.elapsed(), "txn");
    let total = SINGLE + BATCHES * BATCH;
    let r = db.begin_read().expect("read");
    let t = r.open_table(TAB).expect("table");
    let start = Instant::now();
    for i in 0..GETS {
        let k = (i * 7919) % total;
        assert!(t.get(&k.to_be_bytes()[..]).expect("get").is_some());
    }
    report("redb", "point_get", GETS, start.elapsed(), "get");
    let start = Instant::now();
    let mut rows = 0u64;
    for _ in 0..SCANS {
        for item in t.iter().expect("iter") {
            let (k, v) = item.expect("row");
            rows += u64::from(!k.value().is_empty() && !v.value().is_empty());
        }
    }
    report("redb", "scan", rows, start.elapsed(), "row");
    drop(t);
    drop(r);
    let start = Instant::now();
    std::thread::scope(|sc| {
        for w in 0..WRITERS {
            let db = &db;
            let v = &v;
            sc.spawn(move || {
                for i in 0..PER_WRITER {
                    let k = WRITERS_BASE + w * PER_WRITER + i;
                    let mut tx = db.begin_write().expect("write");
                    tx.set_durability(Durability::Immediate);
                    tx.open_table(TAB)
                        .expect("table")
                        .insert(&k.to_be_bytes()[..], v.as_slice())
                        .expect("insert");
                    tx.commit().expect("commit");
                }
            });
        }
    });
    report(
        "redb",
        "commit_8_writers",
        WRITERS * PER_WRITER,
        start.elapsed(),
        "txn",
    );
    for b in 0..LOAD / LOAD_BATCH {
        let mut w = db.begin_write().expect("write");
        w.set_durability(Durability::Immediate);
        {
            let mut t = w.open_table(TAB).expect("table");
            for j in 0..LOAD_BATCH {
                let k = LOAD_BASE + b * LOAD_BATCH + j;
                t.insert(&k.to_be_bytes()[..], v.as_slice())
                    .expect("insert");
            }
        }
        w.commit().expect("commit");
    }
    drop(db);
    report_space(
        "redb",
        &dir.join("bench.redb"),
        total + WRITERS * PER_WRITER + LOAD,
    );
    let start = Instant::now();
    let db = Database::create(dir.join("bench.redb")).expect("reopen");
    let r = db.begin_read().expect("read");
    let got = r
        .open_table(TAB)
        .expect("table")
        .get(&LOAD_BASE.to_be_bytes()[..])
        .expect("get")
        .is_some();
    assert!(got);
    println!(
        "redb   {:<22} {:>12.1} ms",
        "reopen_to_first_get",
        start.elapsed().as_secs_f64() * 1e3
    );
}

fn bench_fjall(dir: &std::path::Path) {
    use fjall::{Database, KeyspaceCreateOptions, PersistMode};
    let db = Database::builder(dir.join("fjall")).open().expect("open");
    let ks = db
        .keyspace("t", KeyspaceCreateOptions::default)
        .expect("keyspace");
    let v = value();
    let start = Instant::now();
    for i in 0..SINGLE {
        let mut b = db.batch().durability(Some(PersistMode::SyncAll));
        b.insert(&ks, i.to_be_bytes().to_vec(), v.clone());
        b.commit().expect("commit");
    }
    report("fjall", "commit_single_key", SINGLE, start.elapsed(), "txn");
    let start = Instant::now();
    for bi in 0..BATCHES {
        let mut b = db.batch().durability(Some(PersistMode::SyncAll));
        for j in 0..BATCH {
            let k = SINGLE + bi * BATCH + j;
            b.insert(&ks, k.to_be_bytes().to_vec(), v.clone());
        }
        b.commit().expect("commit");
    }
    report("fjall", "commit_batch_100", BATCHES, start.elapsed(), "txn");
    let total = SINGLE + BATCHES * BATCH;
    let start = Instant::now();
    for i in 0..GETS {
        let k = (i * 7919) % total;
        assert!(ks.get(k.to_be_bytes()).expect("get").is_some());
    }
    report("fjall", "point_get", GETS, start.elapsed(), "get");
    let start = Instant::now();
    let mut rows = 0u64;
    for _ in 0..SCANS {
        for item in ks.range::<&[u8], _>(..) {
            let (k, v) = item.into_inner().expect("row");
            rows += u64::from(!k.is_empty() && !v.is_empty());
        }
    }
    report("fjall", "scan", rows, start.elapsed(), "row");
    let start = Instant::now();
    std::thread::scope(|sc| {
        for w in 0..WRITERS {
            let db = &db;
            let ks = &ks;
            let v = &v;
            sc.spawn(move || {
                for i in 0..PER_WRITER {
                    let k = WRITERS_BASE + w * PER_WRITER + i;
                    let mut b = db.batch().durability(Some(PersistMode::SyncAll));
                    b.insert(ks, k.to_be_bytes().to_vec(), v.clone());
                    b.commit().expect("commit");
                }
            });
        }
    });
    report(
        "fjall",
        "commit_8_writers",
        WRITERS * PER_WRITER,
        start.elapsed(),
        "txn",
    );
    for bi in 0..LOAD / LOAD_BATCH {
        let mut b = db.batch().durability(Some(PersistMode::SyncAll));
        for j in 0..LOAD_BATCH {
            let k = LOAD_BASE + bi * LOAD_BATCH + j;
            b.insert(&ks, k.to_be_bytes().to_vec(), v.clone());
        }
        b.commit().expect("commit");
    }
    drop(ks);
    drop(db);
    report_space(
        "fjall",
        &dir.join("fjall"),
        total + WRITERS * PER_WRITER + LOAD,
    );
    let start = Instant::now();
    let db = Database::builder(dir.join("fjall")).open().expect("reopen");
    let ks = db
        .keyspace("t", KeyspaceCreateOptions::default)
        .expect("keyspace");
    assert!(ks.get(LOAD_BASE.to_be_bytes()).expect("get").is_some());
    println!(
        "fjall  {:<22} {:>12.1} ms",
        "reopen_to_first_get",
        start.elapsed().as_secs_f64() * 1e3
    );
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    bench_redb(dir.path());
    bench_fjall(dir.path());
}
