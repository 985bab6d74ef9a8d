//! Memory is bounded by the page cache, not by the data (issue 11): a child
//! process (this test binary re-executed, so the measure is its own) opens
//! the storage with a 32 MiB cache, loads a table several times larger than
//! that, scans it whole at a snapshot, reopens it and answers a point read.
//! Its peak resident set (`VmHWM`) must stay under the cache plus a fixed
//! overhead, and reopening must not read the table.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::ops::Bound;
use std::process::Command;

use tributary_storage::{EmbeddedOptions, EmbeddedStorage, Storage, TxnOptions};

const CHILD_ENV: &str = "TRIBUTARY_STORAGE_MEMORY_CHILD_DIR";
const T: u64 = 41;
const CACHE: usize = 32 << 20;
/// What the process needs besides the page cache: the test binary and its
/// allocator, one 10,000-row transaction's write set and change-log
/// entries (~4 MiB), redb's dirty pages of that transaction, the scan's
/// batches. Measured: see the test's output.
const OVERHEAD: usize = 48 << 20;
/// 1M rows of 8-byte keys and 110-byte values: ~120 MB of row data, ~4×
/// the cache, ~180 MB on disk.
const ROWS: u64 = 1_000_000;
const PER_TXN: u64 = 10_000;

fn status(field: &str) -> usize {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = s.lines().find(|l| l.starts_with(field)).unwrap();
    let kb: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb * 1024
}

fn open(dir: &std::path::Path) -> std::sync::Arc<EmbeddedStorage> {
    EmbeddedStorage::open_with(
        dir,
        EmbeddedOptions {
            cache_bytes: CACHE,
            ..Default::default()
        },
    )
    .unwrap()
}

/// The child: load, scan, reopen; prints `peak <bytes>` after each phase
/// and `reopened <bytes>` (RSS right after reopening and one read).
#[test]
fn memory_child() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let dir = std::path::Path::new(&dir);
    let s = open(dir);
    let value = |i: u64| {
        let mut v = format!("{i:0>20}").into_bytes();
        v.resize(110, b'x');
        v
    };
    for chunk in 0..ROWS / PER_TXN {
        let mut t = s.begin(TxnOptions::default()).unwrap();
        for i in chunk * PER_TXN..(chunk + 1) * PER_TXN {
            t.put(T, &i.to_be_bytes(), value(i)).unwrap();
        }
        t.commit().unwrap();
    }
    println!("loaded peak {}", status("VmHWM:"));
    let mut t = s.begin(TxnOptions::default()).unwrap();
    let mut n = 0u64;
    let mut sum = 0u64;
    t.scan_visit(T, Bound::Unbounded, Bound::Unbounded, &mut |k, v| {
        n += 1;
        sum += u64::from(v[19] - b'0') + u64::from(k[7] & 1);
        true
    })
    .unwrap();
    assert_eq!(n, ROWS);
    assert!(sum > 0);
    drop(t);
    println!("scanned peak {}", status("VmHWM:"));
    drop(s);
    let before = status("VmRSS:");
    let s = open(dir);
    let mut t = s.begin(TxnOptions::default()).unwrap();
    let k = (ROWS / 2).to_be_bytes();
    assert_eq!(t.get(T, &k, false).unwrap(), Some(value(ROWS / 2)));
    assert_eq!(t.approx_rows(T), ROWS);
    println!("reopened grew {}", status("VmRSS:").saturating_sub(before));
    println!("final peak {}", status("VmHWM:"));
}

#[test]
fn a_table_four_times_the_cache_loads_scans_and_reopens_within_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["memory_child", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, dir.path())
        // One malloc arena: glibc gives each thread that allocates (the
        // commit applier is one) an arena of its own, whose freed memory
        // stays resident (~25 MiB here); this measures the storage's own
        // memory, not that policy.
        .env("MALLOC_ARENA_MAX", "1")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let num = |prefix: &str| -> usize {
        text.lines()
            .find_map(|l| l.find(prefix).map(|i| &l[i + prefix.len()..]))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {prefix:?} in {text}"))
    };
    let disk: u64 = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    eprintln!(
        "peak RSS: loaded {:.1} MiB, scanned {:.1} MiB, final {:.1} MiB; reopen grew {:.1} MiB; \
         file {:.1} MiB ({:.0} bytes/row); bound {:.0} MiB",
        mib(num("loaded peak ")),
        mib(num("scanned peak ")),
        mib(num("final peak ")),
        mib(num("reopened grew ")),
        disk as f64 / (1 << 20) as f64,
        disk as f64 / ROWS as f64,
        mib(CACHE + OVERHEAD),
    );
    assert!(num("final peak ") <= CACHE + OVERHEAD, "{text}");
    // Reopening reads no rows: far less than the table's ~120 MB.
    assert!(num("reopened grew ") <= 16 << 20, "{text}");
}
