//! The layering rule of `docs/ARCHITECTURE.md`: data flows server → sql →
//! iscp → catalog → storage, so no file of a lower layer names a higher
//! one. A grep over the sources, so that a new import that would bring the
//! sql ↔ iscp cycle back fails CI with the file that did it. Inside
//! `src/sql` the rule is finer (issue 41): its files' import graph has no
//! cycle and follows declared levels (`SQL_LEVELS`, read by
//! `layering/graph.rs`), with no exception.

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

// ---------------------------------------------------------------------------
// Inside `src/sql` (issue 41): the files' import graph has no cycle, and no
// file names a file of a higher level. The graph is read by `graph.rs`
// (a node per file; an edge per `crate::sql::…` / `super::…` / `self::…` /
// child-module path, re-exports followed to the defining file).

#[path = "layering/graph.rs"]
mod graph;

/// The levels of `src/sql`, lowest first. A file may name files of its own
/// level and of lower ones, never of a higher one; within a level the
/// cycle check keeps the order. A new file goes in the lowest level above
/// every file it names (and below every file that names it).
const SQL_LEVELS: &[&[&str]] = &[
    // leaves: budget, spilling, process list, stack guard, LOCK TABLES, INSERT fast path, thread slots,
    // savepoints
    &[
        "budget",
        "fast_insert",
        "load_format",
        "load_spec",
        "process",
        "spill",
        "spill/hash",
        "spill/sort",
        "stack",
        "table_locks",
        "thread_slot",
        "txn_control",
        "user_locks",
    ],
    // the state every statement runs with: Engine, SessionState, Ctx
    &["session"],
    // system and user variables, and what they mean for a session
    &["vars"],
    // statement recognition (the AST) and placeholders
    &["parse", "params"],
    // value semantics (coercion, comparison, three-valued logic, keys), the
    // aggregate statistics, the date/time and REGEXP function families, and
    // the window clause's parts: leaves of the expression code
    &[
        "agg_stats",
        "expr/datetime",
        "expr/regexp",
        "expr/value",
        "expr/window_spec",
    ],
    // the compiled expression tree's types and walks, arithmetic, and
    // collations (resolution and the collation-aware comparisons)
    &["expr/tree", "expr/arith", "expr/collate"],
    // the registry of SQL functions: declarations, lookup, dispatch and the
    // evaluators (below the compiler and evaluator that call it)
    &[
        "functions",
        "functions/control",
        "functions/def",
        "functions/digest",
        "functions/docs",
        "functions/registry",
        "functions/scalar",
        "functions/table",
        "functions/uuid",
    ],
    // expressions: compiling them and evaluating them (a call through the
    // registry); the registry's tests, which compile expressions
    &["expr", "functions/tests"],
    // what expressions call back into the session for: grants, session functions
    &["privileges", "host"],
    // one row change and its synchronous index entries (DML and cascades)
    &["write", "check_constraint"],
    // the DDL helpers CREATE / DROP, ALTER / RENAME and TRUNCATE share
    &["schema"],
    // access paths: key ranges, index and full-text top-k scans
    &["access", "search"],
    // planning: the plan tree's types (plan/mod.rs), the rules binding
    // applies, binding a block and a query, EXPLAIN (issue 41: imports
    // inside run one way, no plan file names the executor)
    &[
        "plan",
        "plan/window",
        "plan/series",
        "plan/recursive",
        "plan/rewrite",
        "plan/prune",
        "plan/block",
        "plan/bind",
        "plan/explain_expr",
        "plan/explain_tree",
        "plan/explain",
    ],
    // the aggregate fold (states, update, final value): below the operators
    &["exec/agg", "exec/agg_args"],
    // the statement's memo of subquery answers (below the operators)
    &["exec/memo"],
    // execution of a plan
    &[
        "exec",
        "exec/build",
        "exec/op",
        "exec/keys",
        "exec/series",
        "exec/set_op",
        "exec/unit",
        "exec/apply",
        "exec/block",
        "exec/block/chain",
        "exec/block/fold",
        "exec/block/input",
        "exec/block/output",
        "exec/block/stage",
        "exec/block/stream",
        "exec/join",
        "exec/parallel",
        "exec/recursive",
        "exec/recursive_join",
        "exec/window",
        "exec/window_slide",
        "exec/window_stream",
    ],
    // foreign keys: enforcement in the writing transaction, then their DDL
    &["fk_enforce"],
    &["fk"],
    // queries and writes, which other statements run (CREATE TABLE … SELECT)
    &["dml"],
    // CREATE / DROP: below ALTER and TRUNCATE, so it cannot dispatch them (mod.rs does)
    &["ddl"],
    // ALTER / RENAME, TRUNCATE, SHOW / EXPLAIN, CHECK INDEX
    &["alter", "truncate", "show", "check", "load"],
    // ANALYZE / CHECK / OPTIMIZE TABLE (CHECK runs the index checker)
    &["maintenance"],
    // statement dispatch, transactions and sessions' entry point
    &["mod"],
];

fn sql_sources() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sql");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    let mut out: Vec<(String, String)> = files
        .iter()
        .map(|f| {
            let rel = f.strip_prefix(&root).expect("below src/sql");
            let name = rel.with_extension("").to_string_lossy().replace('\\', "/");
            (name, std::fs::read_to_string(f).expect("read source"))
        })
        .collect();
    out.sort();
    out
}

/// The name a file goes by in `SQL_LEVELS`: its path
/// below `src/sql` without `.rs`, a directory's `x/mod.rs` as `x` (so a
/// file that becomes a directory keeps its place).
fn level_name(file: &str) -> &str {
    file.strip_suffix("/mod").unwrap_or(file)
}

fn sql_graph() -> graph::Graph {
    let g = graph::build("sql", &sql_sources());
    assert!(g.files.len() > 10 && g.edges.len() > 50, "src/sql not read");
    g
}

fn show_edge(e: &graph::Edge) -> String {
    format!(
        "  {} -> {}   src/sql/{}.rs:{}: {}",
        e.from, e.to, e.from, e.line, e.text
    )
}

#[test]
fn sql_files_form_no_import_cycle() {
    let g = sql_graph();
    let mut bad = Vec::new();
    for knot in g.knots() {
        let Some(first) = knot.first() else {
            continue;
        };
        let cycle = g.cycle_through(first).expect("a knot member is on a cycle");
        bad.push(format!(
            "files {knot:?} are in an import cycle; one cycle:\n{}",
            cycle
                .iter()
                .map(|e| show_edge(e))
                .collect::<Vec<_>>()
                .join("\n")
        ));
    }
    assert!(
        bad.is_empty(),
        "src/sql must have no import cycle: move the shared item down a level \
         (or the dispatch up into mod.rs)\n{}",
        bad.join("\n")
    );
}

/// Where a file in no level fits: at or above the highest level it names,
/// at or below the lowest level that names it.
fn suggest_level(g: &graph::Graph, f: &str, level: impl Fn(&str) -> Option<usize>) -> String {
    let of = |x: &String| level_name(x) == f;
    let floor = g
        .edges
        .values()
        .filter(|e| of(&e.from))
        .filter_map(|e| level(&e.to))
        .max()
        .unwrap_or(0);
    let ceiling = g
        .edges
        .values()
        .filter(|e| of(&e.to))
        .filter_map(|e| level(&e.from))
        .min()
        .unwrap_or(SQL_LEVELS.len() - 1);
    if floor <= ceiling {
        format!("level {floor}, the one holding {:?}", SQL_LEVELS[floor])
    } else {
        format!(
            "no level fits: it names level {floor} ({:?}) but is named from level {ceiling} ({:?})",
            SQL_LEVELS[floor], SQL_LEVELS[ceiling]
        )
    }
}

#[test]
fn every_sql_file_has_a_level() {
    let g = sql_graph();
    let listed: Vec<&str> = SQL_LEVELS.iter().flat_map(|l| l.iter().copied()).collect();
    let mut bad = Vec::new();
    let names: std::collections::BTreeSet<&str> = g.files.iter().map(|f| level_name(f)).collect();
    let level = |f: &str| SQL_LEVELS.iter().position(|l| l.contains(&level_name(f)));
    for f in &names {
        match listed.iter().filter(|l| *l == f).count() {
            1 => {}
            0 => bad.push(format!(
                "src/sql/{f} (.rs or /mod.rs) is in no level: add \"{f}\" to SQL_LEVELS in \
                 tests/layering.rs, in the lowest level above every file it names ({})",
                suggest_level(&g, f, level)
            )),
            _ => bad.push(format!("\"{f}\" is in more than one level of SQL_LEVELS")),
        }
    }
    for l in &listed {
        if !names.contains(l) {
            bad.push(format!(
                "SQL_LEVELS names \"{l}\" but src/sql/{l} (.rs or /mod.rs) does not exist: remove it"
            ));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn no_sql_file_names_a_higher_level() {
    let g = sql_graph();
    let level = |f: &str| SQL_LEVELS.iter().position(|l| l.contains(&level_name(f)));
    let bad: Vec<String> = g
        .edges
        .values()
        .filter(|e| match (level(&e.from), level(&e.to)) {
            (Some(a), Some(b)) => b > a,
            _ => false, // every_sql_file_has_a_level reports it
        })
        .map(show_edge)
        .collect();
    assert!(
        bad.is_empty(),
        "a file of src/sql names a file of a higher level (SQL_LEVELS in \
         tests/layering.rs): move the item it needs down\n{}",
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
