//! Golden SQL scenarios: every `tests/sql/*.sql` file is run statement by
//! statement against a fresh database and its transcript is compared with
//! `tests/sql/<name>.expected`. Add a case without Rust: write the `.sql`
//! file, run `UPDATE_GOLDENFILES=1 cargo test --test golden`, review the
//! generated `.expected`, commit both.
//!
//! Transcript format: `> <statement>` then either the result set (header
//! and tab-separated rows, as `mysql -B` prints), `OK <affected rows>`, or
//! `ERROR <code> (<sqlstate>): <message>`; warnings as `WARNING <code>: …`.
//! In the result of an `EXPLAIN ANALYZE`, times vary from run to run:
//! every `time=<number>[..<number>]` shows as `time=…` (rows, loops,
//! batches and peak memory stay, they are deterministic).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::fmt::Write as _;
use std::path::Path;

use tributary::{Config, Database};

/// `text` with every `time=<number>[..<number>]` as `time=…`.
fn mask_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("time=") {
        out.push_str(&rest[..at + 5]);
        rest = &rest[at + 5..];
        let number = |s: &str| {
            s.find(|c: char| !(c.is_ascii_digit() || c == '.'))
                .unwrap_or(s.len())
        };
        let n = number(rest);
        if n == 0 {
            continue;
        }
        out.push('…');
        // `first..all`: the number eats the `..` and the second number.
        rest = &rest[n..];
    }
    out.push_str(rest);
    out
}

#[test]
fn times_are_masked() {
    assert_eq!(
        mask_times("x (actual time=0.012..3.5 rows=1) (time=12.000 ms) time=a"),
        "x (actual time=… rows=1) (time=… ms) time=a"
    );
}

fn render(sql: &str, db: &mut tributary::Session) -> String {
    let mut out = String::new();
    for stmt in tributary::split_statements(sql) {
        let _ = writeln!(out, "> {}", stmt.replace('\n', " "));
        let analyze = stmt
            .trim_start()
            .get(..15)
            .is_some_and(|h| h.eq_ignore_ascii_case("explain analyze"));
        match db.execute(&stmt) {
            Ok(r) => {
                if r.has_result_set() {
                    let names: Vec<&str> = r.columns.iter().map(|c| c.name.as_str()).collect();
                    let _ = writeln!(out, "{}", names.join("\t"));
                    for row in &r.rows {
                        let cells: Vec<String> = row
                            .iter()
                            .zip(&r.columns)
                            .map(|(v, c)| {
                                tributary::format_value(v, c.kind).unwrap_or_else(|| "NULL".into())
                            })
                            .collect();
                        let line = cells.join("\t");
                        let line = if analyze { mask_times(&line) } else { line };
                        let _ = writeln!(out, "{line}");
                    }
                } else {
                    let _ = writeln!(out, "OK {}", r.affected_rows);
                }
                for w in &r.warnings {
                    let _ = writeln!(out, "WARNING {}: {}", w.code, w.message);
                }
            }
            Err(e) => {
                let _ = writeln!(out, "{}", e.client_line());
            }
        }
    }
    out
}

#[test]
fn golden_sql_files() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/sql exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no golden files found");
    let update = std::env::var_os("UPDATE_GOLDENFILES").is_some();
    let mut failures = Vec::new();
    for f in &files {
        let tmp = tempfile::tempdir().expect("tempdir");
        let cfg = Config {
            iscp_interval: std::time::Duration::from_millis(20),
            ..Config::default()
        };
        let db = Database::open_with(tmp.path(), cfg).expect("open");
        let mut s = db.session();
        let sql = std::fs::read_to_string(f).expect("read sql");
        let got = render(&sql, &mut s);
        drop(s);
        db.shutdown();
        let exp_path = f.with_extension("expected");
        if update {
            std::fs::write(&exp_path, &got).expect("write expected");
            continue;
        }
        let exp = std::fs::read_to_string(&exp_path).unwrap_or_default();
        if exp != got {
            failures.push(format!(
                "{}:\n--- expected\n{exp}\n--- got\n{got}",
                f.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "golden mismatches:\n{}",
        failures.join("\n")
    );
}
