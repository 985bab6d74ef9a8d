//! Bounded memory per statement by spilling (issue 41 item 4; decision
//! 027): a GROUP BY, an ORDER BY, a DISTINCT and hash joins whose state is
//! many times their budget (`sort_buffer_size`, `tmp_table_size` /
//! `max_heap_table_size` set to 1 MiB, ~20 MB of rows) answer what they
//! answer in memory (and, for the GROUP BY, what SQLite answers), go
//! through temporary files (the status counters move) that are gone
//! afterwards, and hold a bounded peak — the statement's account, and
//! the process's VmHWM measured in a child process. KILL during a
//! spilling sort ends it promptly and leaves no file behind.
//!
//! Waits are polls with deadlines, never sleeps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::path::Path;
use std::thread;
use std::time::{Duration, Instant};

use tributary::{Config, Database, Session, Value};

use common::{cfg, err, q, wait_until};

const MIB: u64 = 1 << 20;
/// The small budget: every operator's state below is ≥ 10× it.
const SMALL: u64 = MIB;
/// A budget no operator here reaches.
const LARGE: u64 = 1 << 30;
/// Rows of the table: ~200 bytes each as the engine holds them (20 MB).
const ROWS: i64 = 100_000;
/// Distinct values of `g` (two or three rows each).
const GROUPS: i64 = 40_000;

/// One generated row: `(id, g, s)`.
fn row(id: i64) -> (i64, i64, String) {
    let g = (id * 7919) % GROUPS;
    let s = format!(
        "{:06}-{}",
        (id * 31_337) % 100_000,
        "x".repeat(40 + (id % 20) as usize)
    );
    (id, g, s)
}

/// A database (statements may hold 512 MiB) with `t` loaded in batches
/// (so that loading charges little).
fn open() -> (tempfile::TempDir, Database, Session) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        statement_memory: 512 * MIB,
        statement_memory_total: 2048 * MIB,
        ..cfg()
    };
    let db = Database::open_with(dir.path(), config).unwrap();
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(
        &mut s,
        "CREATE TABLE t (id BIGINT PRIMARY KEY, g INT, s VARCHAR(100))",
    );
    for lo in (1..=ROWS).step_by(2000) {
        let values: Vec<String> = (lo..(lo + 2000).min(ROWS + 1))
            .map(|i| {
                let (id, g, s) = row(i);
                format!("({id}, {g}, '{s}')")
            })
            .collect();
        q(
            &mut s,
            &format!("INSERT INTO t VALUES {}", values.join(",")),
        );
    }
    (dir, db, s)
}

fn budget(s: &mut Session, bytes: u64) {
    for v in ["sort_buffer_size", "tmp_table_size", "max_heap_table_size"] {
        q(s, &format!("SET {v} = {bytes}"));
    }
}

fn status(s: &mut Session, name: &str) -> u64 {
    let r = q(s, &format!("SHOW STATUS LIKE '{name}'"));
    match r.first().map(|r| &r[1]) {
        Some(Value::Text(v)) => v.parse().unwrap(),
        other => panic!("{name}: {other:?}"),
    }
}

/// Spill files in the database's tmpdir now.
fn spill_files(dir: &Path) -> usize {
    std::fs::read_dir(dir.join("tmp")).map_or(0, |d| d.count())
}

fn sorted(mut rows: Vec<Vec<Value>>) -> Vec<Vec<Value>> {
    rows.sort_by(|a, b| {
        a.iter()
            .zip(b)
            .map(|(x, y)| x.total_cmp(y))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    rows
}

/// The shapes: (what, query, whether its order is its answer, the
/// counter its spill moves).
const SHAPES: &[(&str, &str, bool, &str)] = &[
    (
        "GROUP BY",
        "SELECT g, COUNT(*), SUM(id), MIN(s), MAX(LENGTH(s)) FROM t GROUP BY g",
        false,
        "Created_tmp_disk_tables",
    ),
    (
        "GROUP BY of a joined input",
        "SELECT a.g, COUNT(*), MAX(b.id) FROM t a JOIN t b ON a.id = b.id + 1 GROUP BY a.g",
        false,
        "Created_tmp_disk_tables",
    ),
    (
        "ORDER BY",
        "SELECT id, s FROM t ORDER BY s DESC, g",
        true,
        "Sort_merge_passes",
    ),
    (
        "ORDER BY with LIMIT and OFFSET",
        "SELECT id, g FROM t ORDER BY g, s LIMIT 20 OFFSET 50000",
        true,
        "Sort_merge_passes",
    ),
    (
        "DISTINCT",
        "SELECT DISTINCT g, s FROM t",
        false,
        "Created_tmp_disk_tables",
    ),
    (
        "UNION DISTINCT",
        "SELECT g, s FROM t UNION SELECT g, s FROM t WHERE id % 2 = 0",
        false,
        "Created_tmp_disk_tables",
    ),
    (
        "hash join",
        "SELECT a.id, b.id, b.s FROM t a JOIN t b ON a.g = b.g WHERE a.id % 4 = 0",
        false,
        "Created_tmp_disk_tables",
    ),
    (
        "LEFT JOIN",
        "SELECT a.id, b.id FROM t a LEFT JOIN t b ON a.id = b.g * 3 AND b.id % 2 = a.id % 2",
        false,
        "Created_tmp_disk_tables",
    ),
];

/// (a) + (b): each shape answers under a 1 MiB budget what it answers in
/// memory, through temporary files that are gone afterwards.
#[test]
fn spilled_answers_equal_in_memory_answers() {
    let (dir, _db, mut s) = open();
    for &(what, sql, ordered, counter) in SHAPES {
        budget(&mut s, LARGE);
        let files = status(&mut s, "Created_tmp_files");
        let t = Instant::now();
        let want = q(&mut s, sql);
        let in_memory = t.elapsed();
        assert_eq!(
            status(&mut s, "Created_tmp_files"),
            files,
            "{what}: spilled with a large budget"
        );
        budget(&mut s, SMALL);
        let (files, moved, written) = (
            status(&mut s, "Created_tmp_files"),
            status(&mut s, counter),
            status(&mut s, "Tributary_spill_bytes_written"),
        );
        let t = Instant::now();
        let got = q(&mut s, sql);
        let took = t.elapsed();
        let written = status(&mut s, "Tributary_spill_bytes_written") - written;
        eprintln!(
            "{what}: {} rows, {} files, {written} bytes spilled, {took:?} (in memory {in_memory:?})",
            got.len(),
            status(&mut s, "Created_tmp_files") - files
        );
        assert!(
            status(&mut s, "Created_tmp_files") > files,
            "{what}: no file"
        );
        assert!(
            status(&mut s, counter) > moved,
            "{what}: {counter} did not move"
        );
        // The state that went to disk is many budgets' worth (rows are
        // smaller encoded than held: 4× the budget in file bytes is well
        // over 10× in memory).
        assert!(written >= 4 * SMALL, "{what}: {written} bytes spilled");
        assert_eq!(spill_files(dir.path()), 0, "{what}: files left");
        assert!(!got.is_empty());
        if ordered {
            assert_eq!(got, want, "{what}");
        } else {
            assert_eq!(sorted(got), sorted(want), "{what}");
        }
    }
}

/// The spilled GROUP BY answers what SQLite answers.
#[test]
fn a_spilled_group_by_answers_what_sqlite_answers() {
    let (dir, _db, mut s) = open();
    let lite = rusqlite::Connection::open_in_memory().unwrap();
    lite.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, g INT, s TEXT)", [])
        .unwrap();
    {
        let mut ins = lite.prepare("INSERT INTO t VALUES (?1, ?2, ?3)").unwrap();
        for i in 1..=ROWS {
            let (id, g, txt) = row(i);
            ins.execute(rusqlite::params![id, g, txt]).unwrap();
        }
    }
    let sql = "SELECT g, COUNT(*), SUM(id), MIN(s) FROM t GROUP BY g HAVING COUNT(*) > 2";
    let mut st = lite.prepare(&format!("{sql} ORDER BY g")).unwrap();
    let want: Vec<String> = st
        .query_map([], |r| {
            Ok(format!(
                "{}|{}|{}|{}",
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?
            ))
        })
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    budget(&mut s, SMALL);
    let before = status(&mut s, "Created_tmp_disk_tables");
    let got: Vec<String> = sorted(q(&mut s, sql))
        .into_iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string())
                .collect::<Vec<_>>()
                .join("|")
        })
        .collect();
    assert!(status(&mut s, "Created_tmp_disk_tables") > before);
    assert_eq!(got.len(), want.len());
    assert_eq!(got, want);
    assert_eq!(spill_files(dir.path()), 0);
}

/// The aggregate whose answer is small (a HAVING keeps few groups): held
/// in memory its groups take ≥ 10× the budget; spilled, the statement's
/// peak stays within a few budgets.
const FEW_GROUPS: &str =
    "SELECT g, COUNT(*), MIN(s) FROM t GROUP BY g HAVING COUNT(*) > 2 AND g < 100";

/// (c): the statement's peak account.
#[test]
fn a_spilling_aggregate_holds_a_bounded_peak() {
    let (_dir, db, mut s) = open();
    let loaded = db.engine().budget.peak();
    budget(&mut s, SMALL);
    let spilled = q(&mut s, FEW_GROUPS);
    let spilled_peak = db.engine().budget.peak();
    budget(&mut s, LARGE);
    let in_memory = q(&mut s, FEW_GROUPS);
    let in_memory_peak = db.engine().budget.peak();
    eprintln!(
        "peak account: loading {loaded}, spilled {spilled_peak}, in memory {in_memory_peak} bytes"
    );
    assert_eq!(sorted(spilled), sorted(in_memory));
    // In memory the groups take ≥ 10× the budget …
    assert!(in_memory_peak >= 10 * SMALL, "{in_memory_peak}");
    // … spilled, the budget, the files' buffers and slack.
    assert!(
        spilled_peak <= loaded.max(4 * SMALL),
        "spilled peak {spilled_peak} (loading {loaded})"
    );
}

/// VmHWM of this process, in bytes.
fn vm_hwm() -> u64 {
    let st = std::fs::read_to_string("/proc/self/status").unwrap();
    let kb: u64 = st
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kb * 1024
}

/// The child of [`the_process_peak_stays_bounded`]: loads the table, then
/// runs the aggregate under the budget `SPILL_CHILD_BUDGET` and prints
/// how far it raised the process's VmHWM.
#[test]
#[ignore = "run by the_process_peak_stays_bounded in a child process"]
fn child_measures_vm_hwm() {
    let Ok(bytes) = std::env::var("SPILL_CHILD_BUDGET") else {
        return;
    };
    let (_dir, _db, mut s) = open();
    budget(&mut s, bytes.parse().unwrap());
    let before = vm_hwm();
    let rows = q(&mut s, FEW_GROUPS);
    assert!(!rows.is_empty());
    println!("VMHWM_GROWTH={}", vm_hwm().saturating_sub(before));
}

fn child_growth(budget: u64) -> u64 {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "child_measures_vm_hwm",
            "--ignored",
            "--nocapture",
        ])
        .env("SPILL_CHILD_BUDGET", budget.to_string())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child failed: {text}");
    text.lines()
        .find_map(|l| l.strip_prefix("VMHWM_GROWTH="))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no measurement in: {text}"))
}

/// (c): the process's peak (VmHWM, in a child process) grows by a bounded
/// amount while the spilling aggregate runs; held in memory it grows by
/// its groups.
#[test]
fn the_process_peak_stays_bounded() {
    let spilled = child_growth(SMALL);
    let in_memory = child_growth(LARGE);
    eprintln!("VmHWM growth: spilled {spilled} bytes, in memory {in_memory} bytes");
    // Generous: the budget, file buffers, the storage's page cache, the
    // allocator's slack (measured: 18 MB spilled, 81 MB in memory).
    assert!(spilled < 48 * MIB, "spilled: VmHWM grew {spilled} bytes");
}

/// KILL QUERY during a spilling sort ends it within the usual bound and
/// leaves no file behind.
#[test]
fn kill_during_a_spilling_sort_leaves_no_file() {
    let (dir, db, mut admin) = open();
    let mut victim = db.session();
    q(&mut victim, "USE d");
    budget(&mut victim, 64 << 10);
    let id = victim.connection_id();
    let sql = "SELECT a.id, a.s, b.result FROM t a, generate_series(1, 4) b ORDER BY a.s, b.result";
    let h = thread::spawn(move || {
        let r = victim.execute(sql).map(|r| r.rows.len());
        (r, victim)
    });
    let tmp = dir.path().join("tmp");
    wait_until("the sort writes runs", Duration::from_secs(60), || {
        std::fs::read_dir(&tmp).is_ok_and(|d| d.count() > 2)
    });
    let killed_at = Instant::now();
    q(&mut admin, &format!("KILL QUERY {id}"));
    let (r, mut victim) = h.join().unwrap();
    let took = killed_at.elapsed();
    eprintln!("KILL stopped the spilling sort in {took:?}");
    assert_eq!(r.expect_err("killed").code, 1317);
    assert!(took < Duration::from_secs(2), "{took:?}");
    assert_eq!(spill_files(dir.path()), 0, "files left after KILL");
    assert_eq!(db.engine().budget.used(), 0);
    assert_eq!(q(&mut victim, "SELECT 1"), vec![vec![Value::Int(1)]]);
}

/// `@@tmpdir` names the data directory's `tmp`; the budgets are session
/// variables with MySQL's names, refused below MySQL's minimums.
#[test]
fn the_variables() {
    let (dir, _db, mut s) = open();
    let tmp = dir.path().join("tmp").display().to_string();
    assert_eq!(q(&mut s, "SELECT @@tmpdir"), vec![vec![Value::Text(tmp)]]);
    assert_eq!(err(&mut s, "SET tmpdir = '/x'").code, 1238, "read-only");
    assert_eq!(
        q(
            &mut s,
            "SELECT @@sort_buffer_size, @@tmp_table_size, @@max_heap_table_size"
        ),
        vec![vec![Value::Int(16 * MIB as i64); 3]]
    );
    assert_eq!(err(&mut s, "SET sort_buffer_size = 100").code, 1231);
    q(&mut s, "SET tmp_table_size = 2097152");
    assert_eq!(
        q(&mut s, "SELECT @@tmp_table_size"),
        vec![vec![Value::Int(2 * MIB as i64)]]
    );
}

/// Spill files a crash left in `<datadir>/tmp` are removed when the
/// database opens; other files there are not.
#[test]
fn leftover_spill_files_are_swept_at_open() {
    let dir = tempfile::tempdir().unwrap();
    drop(Database::open_with(dir.path(), cfg()).unwrap());
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::write(tmp.join("#sql-spill-999999-7"), b"left by a crash").unwrap();
    std::fs::write(tmp.join("operator-notes.txt"), b"kept").unwrap();
    let _db = Database::open_with(dir.path(), cfg()).unwrap();
    assert!(!tmp.join("#sql-spill-999999-7").exists());
    assert!(tmp.join("operator-notes.txt").exists());
}
