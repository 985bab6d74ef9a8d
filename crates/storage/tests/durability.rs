//! Durability: reopen, SIGKILL crash of a writer process, leases and
//! durable sequences.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tributary_storage::{EmbeddedStorage, Storage, StorageError, TxnOptions};

const T: u64 = 11;
const CHILD_ENV: &str = "TRIBUTARY_STORAGE_CRASH_CHILD_DIR";

fn open(dir: &std::path::Path) -> Arc<EmbeddedStorage> {
    EmbeddedStorage::open(dir).unwrap()
}

#[test]
fn reopen_keeps_data_and_timestamps_continue() {
    let dir = tempfile::tempdir().unwrap();
    let last;
    {
        let s = open(dir.path());
        for i in 0..10u32 {
            let mut t = s.begin(TxnOptions::default()).unwrap();
            t.put(T, &i.to_be_bytes(), format!("v{i}").into_bytes())
                .unwrap();
            t.commit().unwrap();
        }
        let mut t = s.begin(TxnOptions::default()).unwrap();
        t.delete(T, &3u32.to_be_bytes()).unwrap();
        last = t.commit().unwrap();
    }
    let s = open(dir.path());
    assert_eq!(s.latest_ts(), last);
    let rows = s.snapshot_scan(T, last, None, usize::MAX).unwrap();
    assert_eq!(rows.len(), 9);
    assert!(rows.iter().all(|(k, _)| k.as_slice() != 3u32.to_be_bytes()));
    // Only the latest versions survive: older snapshots are refused.
    assert!(matches!(
        s.snapshot_scan(T, last - 1, None, 1),
        Err(StorageError::ChangesGone { .. })
    ));
    let mut t = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(
        t.get(T, &5u32.to_be_bytes(), false).unwrap(),
        Some(b"v5".to_vec())
    );
    t.put(T, b"new", b"x".to_vec()).unwrap();
    assert!(t.commit().unwrap() > last);
    assert_eq!(
        s.changes(T, 0, u64::MAX, None, 100).unwrap().changes.len(),
        12
    );
}

fn key(i: u64, half: u8) -> Vec<u8> {
    let mut k = i.to_be_bytes().to_vec();
    k.push(half);
    k
}

/// Child side of the crash test: runs only when re-executed by
/// `crash_after_commit_loses_nothing`; a no-op in a normal test run.
#[test]
fn crash_child_writer() {
    let Ok(dir) = std::env::var(CHILD_ENV) else {
        return;
    };
    let s = open(std::path::Path::new(&dir));
    let mut out = std::io::stdout().lock();
    for i in 0u64.. {
        // A rolled-back transaction must leave nothing behind.
        let mut rb = s.begin(TxnOptions::default()).unwrap();
        rb.put(T, &key(i, b'r'), b"rolled back".to_vec()).unwrap();
        rb.rollback();
        let mut t = s.begin(TxnOptions::default()).unwrap();
        t.put(T, &key(i, b'a'), i.to_be_bytes().to_vec()).unwrap();
        t.put(T, &key(i, b'b'), i.to_be_bytes().to_vec()).unwrap();
        t.commit().unwrap();
        writeln!(out, "committed {i}").unwrap();
        out.flush().unwrap();
    }
}

#[test]
fn crash_after_commit_loses_nothing() {
    const N: u64 = 60;
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "crash_child_writer",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut printed = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    for line in BufReader::new(stdout).lines() {
        let line = line.unwrap();
        if let Some(n) = line.strip_prefix("committed ") {
            printed.push(n.parse::<u64>().unwrap());
            if printed.len() as u64 >= N {
                break;
            }
        }
        assert!(Instant::now() < deadline, "child too slow");
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    assert_eq!(printed.len() as u64, N, "child exited early");

    let s = open(dir.path());
    let rows = s.snapshot_scan(T, s.latest_ts(), None, usize::MAX).unwrap();
    let mut a = std::collections::BTreeSet::new();
    let mut b = std::collections::BTreeSet::new();
    for (k, v) in &rows {
        let (id, half) = k.split_at(8);
        let id = u64::from_be_bytes(id.try_into().unwrap());
        assert_eq!(v.as_slice(), id.to_be_bytes(), "wrong value for {id}");
        match half {
            [b'a'] => a.insert(id),
            [b'b'] => b.insert(id),
            other => panic!("uncommitted or unknown key {other:?} for {id}"),
        };
    }
    assert_eq!(a, b, "torn transaction");
    for n in &printed {
        assert!(a.contains(n), "committed txn {n} lost");
    }
    // Commits happen in order, so the surviving ones are a prefix (the
    // child may have committed more than we read before the kill).
    let expected: Vec<u64> = (0..a.len() as u64).collect();
    assert_eq!(
        a.into_iter().collect::<Vec<_>>(),
        expected,
        "gap in commits"
    );
    // The change log agrees with the rows.
    let changes = s.changes(T, 0, u64::MAX, None, usize::MAX).unwrap().changes;
    assert_eq!(changes.len(), rows.len());
}

#[test]
fn lease_refuses_second_holder_until_release_or_expiry() {
    let dir = tempfile::tempdir().unwrap();
    let s = open(dir.path());
    let long = Duration::from_secs(60);
    assert!(s.try_lease("runner", "cn1", long).unwrap());
    assert!(!s.try_lease("runner", "cn2", long).unwrap());
    assert!(s.try_lease("runner", "cn1", long).unwrap()); // renew
    s.release_lease("runner", "cn2"); // not the holder: no effect
    assert!(!s.try_lease("runner", "cn2", long).unwrap());
    s.release_lease("runner", "cn1");
    assert!(s
        .try_lease("runner", "cn2", Duration::from_millis(50))
        .unwrap());
    // Expiry: poll with a deadline instead of sleeping a fixed time.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if s.try_lease("runner", "cn1", long).unwrap() {
            break;
        }
        assert!(Instant::now() < deadline, "lease never expired");
        std::thread::yield_now();
    }
    drop(s);
    // Durable: still held by cn1 after reopening.
    let s = open(dir.path());
    assert!(!s.try_lease("runner", "cn2", long).unwrap());
}

#[test]
fn sequences_are_durable_and_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..3 {
        let s = open(dir.path());
        for _ in 0..5 {
            assert!(seen.insert(s.next_id("table_id").unwrap()));
        }
        assert_eq!(s.next_id("job_id").unwrap() as usize, seen.len() / 5);
    }
    assert_eq!(seen.len(), 15);
    assert!(!seen.contains(&0));
}

/// A small tmpfs of our own (root only; CI runs as root). `None` where
/// mounting is not allowed, outside CI.
struct Tmpfs(std::path::PathBuf);

impl Tmpfs {
    fn mount(size: &str) -> Option<Tmpfs> {
        let dir = std::env::temp_dir().join(format!("tributary-tmpfs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok()?;
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&dir)
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            Some(Tmpfs(dir))
        } else {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must be able to mount a tmpfs for the disk-full test"
            );
            eprintln!("skipping: cannot mount a tmpfs here (not root?)");
            None
        }
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).status();
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// Disk full: writes fail with an I/O error, reads keep working, and once
/// space is free again the next write succeeds without a restart; nothing
/// acknowledged is lost (issue 17: every statement failed until a restart).
#[test]
fn disk_full_fails_writes_keeps_reads_and_recovers_by_itself() {
    let Some(fs) = Tmpfs::mount("6m") else {
        return;
    };
    let data = fs.0.join("db");
    // Ballast that is deleted later to free space.
    let ballast = fs.0.join("ballast");
    std::fs::write(&ballast, vec![7u8; 2 << 20]).unwrap();
    let s = open(&data);
    let mut acked = Vec::new();
    let mut failed = None;
    for i in 0..100_000u32 {
        let mut t = s.begin(TxnOptions::default()).unwrap();
        t.put(T, &i.to_be_bytes(), vec![i as u8; 4096]).unwrap();
        match t.commit() {
            Ok(_) => acked.push(i),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    let err = failed.expect("the tmpfs filled up");
    assert!(matches!(err, StorageError::Io(_)), "{err:?}");
    // Reads keep working while the disk is full.
    let mut r = s.begin(TxnOptions::default()).unwrap();
    assert_eq!(
        r.get(T, &acked[0].to_be_bytes(), false).unwrap(),
        Some(vec![acked[0] as u8; 4096])
    );
    r.rollback();
    // Still full: writes keep failing, clearly.
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, b"still-full", vec![0u8; 1 << 20]).unwrap();
    assert!(matches!(t.commit(), Err(StorageError::Io(_))));
    // Free space: the next write succeeds, no restart.
    std::fs::remove_file(&ballast).unwrap();
    let mut t = s.begin(TxnOptions::default()).unwrap();
    t.put(T, b"after", b"ok".to_vec()).unwrap();
    let ts = t.commit().expect("write after space was freed");
    assert_eq!(s.latest_ts(), ts);
    drop(s);
    // Everything acknowledged is there after a restart.
    let s = open(&data);
    let rows = s.snapshot_scan(T, s.latest_ts(), None, usize::MAX).unwrap();
    assert_eq!(rows.len(), acked.len() + 1);
    drop(s);
    drop(fs);
}

/// The data directory and its file are private to the owner (issue 17).
#[cfg(unix)]
#[test]
fn data_directory_and_file_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    drop(open(&data));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&data), 0o700);
    for e in std::fs::read_dir(&data).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            assert_eq!(mode(&p), 0o600, "{}", p.display());
        }
    }
}
