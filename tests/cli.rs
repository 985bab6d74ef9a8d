//! End-to-end tests of `tributary sql` (embedded mode): input sources,
//! `--batch` TSV output, table output and the error path.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::io::Write;
use std::process::{Command, Output, Stdio};

const SETUP: &str = "CREATE DATABASE d; USE d; \
    CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20)); \
    INSERT INTO t VALUES (1,'a'),(2,NULL);";
const QUERY: &str = "SELECT id, name FROM t ORDER BY id;";
const EXPECTED_BATCH: &str = "id\tname\n1\ta\n2\tNULL\n";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tributary"));
    c.env_remove("TRIBUTARY_FAULTS").env_remove("RUST_LOG");
    c
}

fn run_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = bin()
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn assert_ok(o: &Output) {
    assert!(
        o.status.success(),
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        text(&o.stdout),
        text(&o.stderr)
    );
}

#[test]
fn execute_two_statements_then_query_in_batch() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let o = bin()
        .args(["sql", "--data", data, "--batch", "-e", SETUP])
        .output()
        .unwrap();
    assert_ok(&o);
    assert_eq!(text(&o.stdout), "", "no output for statements without rows");
    // A second process sees the committed data; two statements in one -e.
    let o = bin()
        .args([
            "sql",
            "--data",
            data,
            "--batch",
            "-e",
            &format!("USE d; {QUERY}"),
        ])
        .output()
        .unwrap();
    assert_ok(&o);
    assert_eq!(text(&o.stdout), EXPECTED_BATCH);
}

#[test]
fn stdin_input() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let o = run_with_stdin(
        &["sql", "--data", data, "--batch"],
        &format!("{SETUP}\n{QUERY}\n"),
    );
    assert_ok(&o);
    assert_eq!(text(&o.stdout), EXPECTED_BATCH);
}

#[test]
fn file_input_and_table_format() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let script = dir.path().join("script.sql");
    std::fs::write(&script, format!("-- setup\n{SETUP}\n{QUERY}\n")).unwrap();
    let o = bin()
        .args(["sql", "--data"])
        .arg(&data)
        .arg(&script)
        .output()
        .unwrap();
    assert_ok(&o);
    let out = text(&o.stdout);
    assert!(out.contains("Query OK, 2 rows affected"), "{out}");
    let table = "+----+------+\n\
                 | id | name |\n\
                 +----+------+\n\
                 |  1 | a    |\n\
                 |  2 | NULL |\n\
                 +----+------+\n\
                 2 rows in set\n";
    assert!(out.contains(table), "{out}");
}

#[test]
fn batch_escapes_special_characters() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let o = bin()
        .args([
            "sql",
            "--data",
            data,
            "--batch",
            "-e",
            "CREATE DATABASE d; USE d; CREATE TABLE t (id INT PRIMARY KEY, s VARCHAR(20)); \
             INSERT INTO t VALUES (1, 'a\\tb\\\\c'); SELECT s FROM t;",
        ])
        .output()
        .unwrap();
    assert_ok(&o);
    assert_eq!(text(&o.stdout), "s\na\\tb\\\\c\n");
}

#[test]
fn error_stops_and_keeps_earlier_statements() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let o = bin()
        .args([
            "sql",
            "--data",
            data,
            "--batch",
            "-e",
            &format!("{SETUP} SELECT * FROM nope; INSERT INTO t VALUES (3,'c');"),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "stderr: {}", text(&o.stderr));
    let err = text(&o.stderr);
    let line = err
        .lines()
        .find(|l| l.starts_with("ERROR "))
        .unwrap_or_else(|| panic!("no ERROR line in stderr: {err}"));
    assert!(
        line.starts_with("ERROR 1146 (42S02): "),
        "unexpected error line: {line}"
    );
    // Statements before the error kept their effect; the one after did not run.
    let o = bin()
        .args([
            "sql",
            "--data",
            data,
            "--batch",
            "-e",
            &format!("USE d; {QUERY}"),
        ])
        .output()
        .unwrap();
    assert_ok(&o);
    assert_eq!(text(&o.stdout), EXPECTED_BATCH);
}

#[test]
fn malformed_fault_spec_is_reported() {
    let dir = tempfile::tempdir().unwrap();
    let o = bin()
        .env("TRIBUTARY_FAULTS", "this is not a fault spec")
        .args([
            "sql",
            "--allow-fault-injection",
            "--data",
            dir.path().to_str().unwrap(),
            "-e",
            "SELECT 1",
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("TRIBUTARY_FAULTS"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn wait_index_finishes_initial_build_before_exit() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let mut rows = Vec::new();
    for i in 0..500 {
        rows.push(format!("({i}, '[{i},1]')"));
    }
    let script = format!(
        "CREATE DATABASE d; USE d; CREATE TABLE t (id INT PRIMARY KEY, v VECF32(2)); \
         INSERT INTO t VALUES {}; \
         CREATE INDEX i USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC; \
         CREATE INDEX s USING HNSW ON t(v) OP_TYPE 'vector_cosine_ops';",
        rows.join(",")
    );
    let o = bin()
        .args([
            "sql",
            "--data",
            data,
            "--batch",
            "--wait-index",
            "-e",
            &script,
        ])
        .output()
        .unwrap();
    assert_ok(&o);
    // Read the job state with ISCP disabled, so nothing can finish the
    // build after the CLI exited: it must already be complete.
    let db = tributary::Database::open_with(
        dir.path(),
        tributary::Config {
            iscp_enabled: false,
            ..Default::default()
        },
    )
    .unwrap();
    let r = db
        .session()
        .execute("SELECT job_status FROM mo_catalog.mo_iscp_log WHERE job_name = 'index_i'")
        .unwrap();
    let status = r.rows[0][0].to_string();
    assert!(status.contains("\"stage\":\"incremental\""), "{status}");
    assert!(status.contains("\"build_done\":500"), "{status}");
}

#[test]
fn engine_flags_reach_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let o = bin()
        .args([
            "sql",
            "--data",
            data,
            "--batch",
            "--lock-wait-timeout",
            "7",
            "--no-iscp",
            "-e",
            "SHOW VARIABLES LIKE 'innodb_lock_wait_timeout'",
        ])
        .output()
        .unwrap();
    assert_ok(&o);
    assert_eq!(
        text(&o.stdout),
        "Variable_name\tValue\ninnodb_lock_wait_timeout\t7\n"
    );
}
