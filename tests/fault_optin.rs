//! `TRIBUTARY_FAULTS` arms fault points only with `--allow-fault-injection`
//! (issue 17, item 5): without the flag `tributary sql` and `tributary
//! serve` refuse to start with exit code 2 and say why.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tributary"));
    c.env_remove("TRIBUTARY_FAULTS").env_remove("RUST_LOG");
    c
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn run(args: &[&str], faults: Option<&str>) -> Output {
    let mut c = bin();
    if let Some(f) = faults {
        c.env("TRIBUTARY_FAULTS", f);
    }
    c.args(args).output().unwrap()
}

#[test]
fn environment_faults_need_the_flag() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_str().unwrap();
    let spec = Some("fj/optin/test=echo(1)");
    // `sql` without the flag: refused before opening anything.
    let o = run(&["sql", "--data", data, "-e", "SELECT 1"], spec);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("TRIBUTARY_FAULTS") && err.contains("--allow-fault-injection"),
        "{err}"
    );
    assert!(o.stdout.is_empty());
    // `serve` likewise (it would otherwise listen until signalled).
    let o = run(
        &[
            "serve",
            "--data",
            data,
            "--listen",
            "127.0.0.1:0",
            "--admin-listen",
            "off",
        ],
        spec,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("--allow-fault-injection"));
    // With the flag the points are armed and the statement runs.
    let o = run(
        &[
            "sql",
            "--allow-fault-injection",
            "--data",
            data,
            "-B",
            "-e",
            "SELECT 1 AS x",
        ],
        spec,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stdout), "x\n1\n");
    // Unset (or empty): no flag needed.
    let o = run(
        &["sql", "--data", data, "-B", "-e", "SELECT 1 AS x"],
        Some(""),
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run(&["sql", "--data", data, "-B", "-e", "SELECT 1 AS x"], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
}
