//! Raw engine comparison behind docs/decisions/001-storage-engine.md:
//! the same workloads directly on redb and on fjall, each with its
//! fsync-on-commit setting. Run with
//! `cargo bench -p tributary-storage --features compare --bench engine_compare`.

use std::time::{Duration, Instant};

const SINGLE: u64 = 2_000;
const BATCHES: u64 = 200;
const BATCH: u64 = 100;
const GETS: u64 = 200_000;
const SCANS: u64 = 20;

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
}

fn main() {
    let dir = tempfile::tempdir().expect("tempdir");
    bench_redb(dir.path());
    bench_fjall(dir.path());
}
