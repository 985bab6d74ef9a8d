//! The layering rule of `docs/ARCHITECTURE.md`: data flows server → sql →
//! iscp → catalog → storage, so no file of a lower layer names a higher
//! one. A grep over the sources, so that a new import that would bring the
//! sql ↔ iscp cycle back fails CI with the file that did it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::path::Path;

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read source dir") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Files under `dir` that mention any of `forbidden`.
fn offenders(dir: &str, forbidden: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(!files.is_empty(), "no sources under {dir}");
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).expect("read source");
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for word in forbidden {
                if code.contains(word) {
                    bad.push(format!("{}:{}: {}", f.display(), n + 1, line.trim()));
                }
            }
        }
    }
    bad
}

#[test]
fn iscp_does_not_use_sql_or_server() {
    let bad = offenders("src/iscp", &["crate::sql", "crate::server", "crate::cli"]);
    assert!(
        bad.is_empty(),
        "iscp reaches up a layer:\n{}",
        bad.join("\n")
    );
}

#[test]
fn catalog_uses_no_layer_above_it() {
    let bad = offenders(
        "src/catalog",
        &["crate::sql", "crate::iscp", "crate::server", "crate::cli"],
    );
    assert!(
        bad.is_empty(),
        "catalog reaches up a layer:\n{}",
        bad.join("\n")
    );
}

#[test]
fn sql_does_not_use_the_server() {
    let bad = offenders("src/sql", &["crate::server", "crate::cli"]);
    assert!(
        bad.is_empty(),
        "sql reaches up a layer:\n{}",
        bad.join("\n")
    );
}

/// Issue 40: the metrics, the status page and the CLI read job status as a
/// typed value (`iscp::status::JobStatus`), never by running SQL and reading
/// its cells by position — so a column added to SHOW ISCP STATUS cannot
/// break them.
#[test]
fn nothing_reads_iscp_status_by_running_sql() {
    for dir in ["src/server", "src/cli.rs"] {
        let bad = if dir.ends_with(".rs") {
            let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(dir))
                .expect("read source");
            text.lines()
                .filter(|l| l.contains("SHOW ISCP STATUS") && l.contains("execute"))
                .map(str::to_string)
                .collect()
        } else {
            offenders(dir, &["\"SHOW ISCP STATUS\""])
        };
        assert!(
            bad.is_empty(),
            "reads job status through SQL text:\n{}",
            bad.join("\n")
        );
    }
}

#[test]
fn collation_uses_no_layer_above_it() {
    let bad = offenders(
        "src/collation",
        &[
            "crate::sql",
            "crate::iscp",
            "crate::catalog",
            "crate::server",
            "crate::cli",
        ],
    );
    assert!(
        bad.is_empty(),
        "collation reaches up a layer:\n{}",
        bad.join("\n")
    );
}

/// The suite runs with the product's `debug_assert!`s on (issue #40: the
/// invariants are asserted, and CI must exercise them). A release-profile
/// test run would skip them silently; this makes it fail instead.
#[test]
fn the_suite_runs_with_debug_assertions() {
    let mut checked = false;
    debug_assert!({
        checked = true;
        checked
    });
    assert!(
        checked,
        "run the tests in the dev profile: the invariants are debug_assert!s"
    );
}

/// Issue 41: expressions know nothing of planning or execution (a
/// subquery is an id into the statement's table), and planning never
/// names the executor (execution reads the plan, never the reverse).
#[test]
fn expressions_and_plans_name_no_later_stage() {
    let later = [
        "crate::sql::plan",
        "crate::sql::exec",
        "crate::sql::select",
        "crate::sql::window",
        "crate::sql::recursive",
    ];
    let mut bad = offenders("src/sql/expr", &later);
    let expr_rs = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sql/expr.rs");
    let text = std::fs::read_to_string(&expr_rs).expect("read expr.rs");
    for (n, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or("");
        if later.iter().any(|w| code.contains(w)) {
            bad.push(format!("src/sql/expr.rs:{}: {}", n + 1, line.trim()));
        }
    }
    bad.extend(offenders("src/sql/plan", &["crate::sql::exec"]));
    assert!(
        bad.is_empty(),
        "a stage names a later one:\n{}",
        bad.join("\n")
    );
}
