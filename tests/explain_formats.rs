//! Issue 41 item 5: `EXPLAIN FORMAT=TREE` and `EXPLAIN ANALYZE FORMAT=TREE`
//! over every query of the golden corpus (`tests/sql/*.sql`): each SELECT /
//! WITH that runs also explains, as one row of one column `EXPLAIN` whose
//! lines are MySQL's tree (`-> ` after 4 spaces per level, a child one
//! level below its parent at most); and under ANALYZE the top operator's
//! rows are the rows the query returned (in Tributary's own lines of
//! `EXPLAIN ANALYZE` too).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::path::Path;

use tributary::{Config, Database, Value};

/// The tree's one cell, checked for shape; its lines.
fn tree_lines(r: &tributary::QueryResult, what: &str) -> Vec<String> {
    assert_eq!(r.columns.len(), 1, "{what}");
    assert_eq!(r.columns[0].name, "EXPLAIN", "{what}");
    assert_eq!(r.rows.len(), 1, "{what}");
    let Value::Text(text) = &r.rows[0][0] else {
        panic!("{what}: {:?}", r.rows[0][0]);
    };
    let lines: Vec<String> = text.lines().map(str::to_string).collect();
    let mut prev: Option<usize> = None;
    for l in &lines {
        let spaces = l.len() - l.trim_start_matches(' ').len();
        assert!(
            spaces % 4 == 0 && l[spaces..].starts_with("-> "),
            "{what}: bad line {l:?} in\n{text}"
        );
        let depth = spaces / 4;
        match prev {
            None => assert_eq!(depth, 0, "{what}: first line\n{text}"),
            Some(p) => assert!(depth <= p + 1, "{what}: skips a level\n{text}"),
        }
        prev = Some(depth);
    }
    assert!(!lines.is_empty(), "{what}");
    lines
}

/// `rows=n loops=1` of a line's `(actual …)`, when it shows them.
fn top_rows(line: &str) -> Option<u64> {
    let at = line.find("(actual time=")?;
    let rest = &line[at..];
    if !rest.contains(" loops=1)") {
        return None;
    }
    let r = rest.split(" rows=").nth(1)?;
    r.split(' ').next()?.parse().ok()
}

#[test]
fn every_golden_query_explains_as_a_well_formed_tree() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/sql");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "sql"))
        .collect();
    files.sort();
    let (mut explained, mut checked_rows) = (0, 0);
    for f in &files {
        let tmp = tempfile::tempdir().unwrap();
        let cfg = Config {
            iscp_interval: std::time::Duration::from_millis(20),
            ..Config::default()
        };
        let db = Database::open_with(tmp.path(), cfg).unwrap();
        let mut s = db.session();
        let sql = std::fs::read_to_string(f).unwrap();
        for stmt in tributary::split_statements(&sql) {
            let head = stmt.trim_start().to_ascii_lowercase();
            let query = (head.starts_with("select") || head.starts_with("with"))
                && !head.contains("for update")
                && !head.contains("sleep(")
                && !head.contains("lock")
                && !head.contains(":=");
            let Ok(r) = s.execute(&stmt) else {
                continue;
            };
            if !query || !r.has_result_set() {
                continue;
            }
            let what = format!("{}: {stmt}", f.display());
            let plain = s
                .execute(&format!("EXPLAIN FORMAT=TREE {stmt}"))
                .unwrap_or_else(|e| panic!("{what}: {e:?}"));
            tree_lines(&plain, &what);
            let analyzed = s
                .execute(&format!("EXPLAIN ANALYZE FORMAT=TREE {stmt}"))
                .unwrap_or_else(|e| panic!("{what}: {e:?}"));
            let lines = tree_lines(&analyzed, &what);
            explained += 1;
            // Rows are deterministic; a query whose answer varies
            // between runs (RAND(), NOW() …) has the same row count.
            if let Some(n) = top_rows(&lines[0]) {
                assert_eq!(n, r.rows.len() as u64, "{what}\n{}", lines.join("\n"));
                checked_rows += 1;
            }
            // Tributary's own lines: the first shows the query's rows too.
            let own = s
                .execute(&format!("EXPLAIN ANALYZE {stmt}"))
                .unwrap_or_else(|e| panic!("{what}: {e:?}"));
            let Value::Text(first) = &own.rows[0][0] else {
                panic!("{what}: {:?}", own.rows[0][0]);
            };
            let want = format!("(actual rows={} loops=1 ", r.rows.len());
            assert!(first.contains(&want), "{what}: {first} lacks {want}");
        }
        drop(s);
        db.shutdown();
    }
    eprintln!("{explained} queries explained, {checked_rows} row counts checked");
    assert!(explained > 200, "only {explained} queries explained");
    assert!(checked_rows > 100, "only {checked_rows} row counts checked");
}
