//! `LOAD DATA [LOCAL] INFILE` in process: files in a temporary
//! `secure_file_priv` directory, answers and warnings as MariaDB 10.11
//! gives them for the same files (checked by hand against a throwaway
//! server; MySQL 8's messages name the column without its table).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::rc::Rc;

use tributary::{Config, Database, Session};

struct Env {
    _dir: tempfile::TempDir,
    files: std::path::PathBuf,
    db: Database,
}

fn env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    let cfg = Config {
        secure_file_priv: Some(files.clone()),
        ..Config::default()
    };
    let db = Database::open_with(dir.path().join("data"), cfg).unwrap();
    Env {
        _dir: dir,
        files,
        db,
    }
}

impl Env {
    fn file(&self, name: &str, body: &[u8]) -> String {
        let p = self.files.join(name);
        std::fs::write(&p, body).unwrap();
        p.display().to_string()
    }
    fn session(&self) -> Session {
        let mut s = self.db.session();
        s.execute("CREATE DATABASE IF NOT EXISTS d").unwrap();
        s.execute("USE d").unwrap();
        s
    }
}

fn rows(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    s.execute(sql)
        .unwrap()
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_text().unwrap_or_else(|| "NULL".into()))
                .collect()
        })
        .collect()
}

fn warnings(s: &mut Session) -> Vec<(u16, String)> {
    rows(s, "SHOW WARNINGS")
        .into_iter()
        .map(|r| (r[1].parse().unwrap(), r[2].clone()))
        .collect()
}

const T1: &[u8] = b"1\ta\n2\n3\tc\textra\n\\N\t\\N\nx\tb\n";

#[test]
fn tab_separated_defaults_and_strict_errors() {
    let e = env();
    let mut s = e.session();
    let f = e.file("t1.txt", T1);
    s.execute("CREATE TABLE a (x INT, y VARCHAR(10))").unwrap();
    // Strict mode (the default): the short line 2 fails the statement,
    // nothing is written.
    let err = s
        .execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE a"))
        .unwrap_err();
    assert_eq!(err.code, 1261);
    assert_eq!(err.message, "Row 2 doesn't contain data for all columns");
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM a"), vec![vec!["0"]]);
    // IGNORE: warnings, the bad row skipped (MySQL would store 0).
    let r = s
        .execute(&format!("LOAD DATA INFILE '{f}' IGNORE INTO TABLE a"))
        .unwrap();
    assert_eq!(r.affected_rows, 4);
    assert_eq!(
        r.info.as_deref(),
        Some("Records: 5  Deleted: 0  Skipped: 1  Warnings: 3")
    );
    let w = warnings(&mut s);
    assert_eq!(
        w[0],
        (1261, "Row 2 doesn't contain data for all columns".into())
    );
    assert_eq!(
        w[1],
        (
            1262,
            "Row 3 was truncated; it contained more data than there were input columns".into()
        )
    );
    // The INSERT path's code for a bad integer (1292; MySQL's is 1366).
    assert_eq!(w[2].0, 1292, "{w:?}");
    assert!(w[2].1.ends_with("for column 'x' at row 5"), "{w:?}");
    assert_eq!(
        rows(&mut s, "SELECT x, y FROM a ORDER BY x"),
        vec![
            vec!["NULL", "NULL"],
            vec!["1", "a"],
            vec!["2", "NULL"],
            vec!["3", "c"]
        ]
    );
}

#[test]
fn bad_value_names_the_line_after_ignored_lines() {
    let e = env();
    let mut s = e.session();
    let f = e.file("t.txt", b"header\n1\n2\nzz\n");
    s.execute("CREATE TABLE n (x INT)").unwrap();
    let err = s
        .execute(&format!(
            "LOAD DATA INFILE '{f}' INTO TABLE n IGNORE 1 LINES"
        ))
        .unwrap_err();
    assert!(err.message.ends_with("at row 3"), "{}", err.message);
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM n"), vec![vec!["0"]]);
}

#[test]
fn csv_enclosed_escapes_and_null() {
    let e = env();
    let mut s = e.session();
    let f = e.file(
        "t2.csv",
        b"\"1\",\"a,b\"\n\"2\",\"q\"\"uote\"\n3,NULL\n\"4\",\"NULL\"\n5,\\N\n\"6\",\"line\nbreak\"\n",
    );
    s.execute("CREATE TABLE b (x INT, y VARCHAR(20))").unwrap();
    let r = s
        .execute(&format!(
            "LOAD DATA INFILE '{f}' INTO TABLE b FIELDS TERMINATED BY ',' ENCLOSED BY '\"'"
        ))
        .unwrap();
    assert_eq!(
        r.info.as_deref(),
        Some("Records: 6  Deleted: 0  Skipped: 0  Warnings: 0")
    );
    assert_eq!(
        rows(&mut s, "SELECT x, y, y IS NULL FROM b ORDER BY x"),
        vec![
            vec!["1", "a,b", "0"],
            vec!["2", "q\"uote", "0"],
            vec!["3", "NULL", "1"],
            vec!["4", "NULL", "0"],
            vec!["5", "NULL", "1"],
            vec!["6", "line\nbreak", "0"],
        ]
    );
}

#[test]
fn duplicates_error_ignore_replace_and_set() {
    let e = env();
    let mut s = e.session();
    let f = e.file("k.txt", b"1\tnew\n2\ttwo\n");
    s.execute("CREATE TABLE k (id INT PRIMARY KEY, v VARCHAR(8))")
        .unwrap();
    s.execute("INSERT INTO k VALUES (1, 'old')").unwrap();
    let err = s
        .execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE k"))
        .unwrap_err();
    assert_eq!(err.code, 1062);
    assert_eq!(rows(&mut s, "SELECT COUNT(*) FROM k"), vec![vec!["1"]]);
    let r = s
        .execute(&format!("LOAD DATA INFILE '{f}' IGNORE INTO TABLE k"))
        .unwrap();
    assert_eq!(r.affected_rows, 1);
    assert_eq!(
        r.info.as_deref(),
        Some("Records: 2  Deleted: 0  Skipped: 1  Warnings: 1")
    );
    assert_eq!(
        warnings(&mut s),
        vec![(1062, "Duplicate entry '1' for key 'PRIMARY'".into())]
    );
    let r = s
        .execute(&format!(
            "LOAD DATA INFILE '{f}' REPLACE INTO TABLE k (id, @v) SET v = CONCAT('r', @v)"
        ))
        .unwrap();
    assert_eq!(r.affected_rows, 4);
    assert_eq!(
        r.info.as_deref(),
        Some("Records: 2  Deleted: 2  Skipped: 0  Warnings: 0")
    );
    assert_eq!(
        rows(&mut s, "SELECT id, v FROM k ORDER BY id"),
        vec![vec!["1", "rnew"], vec!["2", "rtwo"]]
    );
    // The variable keeps the last line's value, as in MySQL.
    assert_eq!(rows(&mut s, "SELECT @v"), vec![vec!["two"]]);
}

#[test]
fn secure_file_priv_and_file_errors() {
    let e = env();
    let mut s = e.session();
    s.execute("CREATE TABLE t (x INT)").unwrap();
    let err = s
        .execute("LOAD DATA INFILE '/etc/passwd' INTO TABLE t")
        .unwrap_err();
    assert_eq!(err.code, 1290);
    // `..` out of the directory is outside it too.
    let err = s
        .execute("LOAD DATA INFILE '../data/x' INTO TABLE t")
        .unwrap_err();
    assert!(err.code == 1290 || err.code == 29, "{err:?}");
    let err = s
        .execute("LOAD DATA INFILE 'missing.txt' INTO TABLE t")
        .unwrap_err();
    assert_eq!(err.code, 29);
    // A relative name is in the directory.
    e.file("rel.txt", b"7\n");
    s.execute("LOAD DATA INFILE 'rel.txt' INTO TABLE t")
        .unwrap();
    assert_eq!(rows(&mut s, "SELECT x FROM t"), vec![vec!["7"]]);
    // Without secure_file_priv: no server-side file at all.
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut s2 = db.session();
    s2.execute("CREATE DATABASE d").unwrap();
    s2.execute("USE d").unwrap();
    s2.execute("CREATE TABLE t (x INT)").unwrap();
    let err = s2
        .execute(&format!(
            "LOAD DATA INFILE '{}' INTO TABLE t",
            e.files.join("rel.txt").display()
        ))
        .unwrap_err();
    assert_eq!(err.code, 1290);
    assert_eq!(
        rows(&mut s2, "SELECT @@secure_file_priv IS NULL"),
        vec![vec!["1"]]
    );
}

#[test]
fn file_privilege() {
    let e = env();
    let mut root = e.session();
    let f = e.file("p.txt", b"1\n");
    root.execute("CREATE TABLE t (x INT)").unwrap();
    root.execute("CREATE USER u IDENTIFIED BY 'pw'").unwrap();
    root.execute("GRANT INSERT ON d.t TO u").unwrap();
    let mut u = e.db.session();
    u.set_user("u", false);
    u.execute("USE d").unwrap();
    let err = u
        .execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE t"))
        .unwrap_err();
    assert_eq!(err.code, 1045);
    root.execute("GRANT FILE ON *.* TO u").unwrap();
    u.execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE t"))
        .unwrap();
    assert_eq!(rows(&mut root, "SELECT x FROM t"), vec![vec!["1"]]);
}

/// A client that sends `body` for any file name, counting requests.
struct Client {
    body: Vec<u8>,
    asked: std::cell::RefCell<Vec<String>>,
}

impl tributary::testing::LocalFiles for Client {
    fn open(&self, name: &str) -> tributary::SqlResult<Box<dyn std::io::Read>> {
        self.asked.borrow_mut().push(name.to_string());
        Ok(Box::new(std::io::Cursor::new(self.body.clone())))
    }
}

#[test]
fn local_infile_goes_through_the_client() {
    let e = env();
    let mut s = e.session();
    s.execute("CREATE TABLE l (id INT PRIMARY KEY, v TEXT)")
        .unwrap();
    s.execute("INSERT INTO l VALUES (1, 'kept')").unwrap();
    let client = Rc::new(Client {
        body: b"1,dup\n2,two\n3,three\n".to_vec(),
        asked: Default::default(),
    });
    let sql = "LOAD DATA LOCAL INFILE 'c.csv' INTO TABLE l FIELDS TERMINATED BY ','";
    // OFF by default (MySQL 8): 3948, the client not asked.
    let err = tributary::testing::with_local_files(client.clone(), || s.execute(sql)).unwrap_err();
    assert_eq!(err.code, 3948);
    assert!(client.asked.borrow().is_empty());
    s.execute("SET GLOBAL local_infile = ON").unwrap();
    assert_eq!(s.execute("SET local_infile = ON").unwrap_err().code, 1229);
    // No client able to send files: 1148.
    assert_eq!(s.execute(sql).unwrap_err().code, 1148);
    // LOCAL implies IGNORE: the duplicate is a warning.
    let r = tributary::testing::with_local_files(client.clone(), || s.execute(sql)).unwrap();
    assert_eq!(
        r.info.as_deref(),
        Some("Records: 3  Deleted: 0  Skipped: 1  Warnings: 1")
    );
    assert_eq!(*client.asked.borrow(), vec!["c.csv".to_string()]);
    assert_eq!(
        rows(&mut s, "SELECT id, v FROM l ORDER BY id"),
        vec![vec!["1", "kept"], vec!["2", "two"], vec!["3", "three"]]
    );
}

#[test]
fn refused_forms() {
    let e = env();
    let mut s = e.session();
    s.execute("CREATE TABLE t (x INT)").unwrap();
    for sql in [
        "LOAD DATA INFILE {'filepath'='/x.gz', 'compression'='gzip'} INTO TABLE t",
        "LOAD XML INFILE 'x' INTO TABLE t",
        "LOAD DATA INFILE 'x' INTO TABLE t PARTITION (p)",
        "LOAD DATA INFILE 'x' INTO TABLE t CHARACTER SET sjis",
    ] {
        assert_eq!(s.execute(sql).unwrap_err().code, 1235, "{sql}");
    }
    // MatrixOne's form without compression loads.
    let f = e.file("mo.csv", b"5\n6\n");
    let r = s
        .execute(&format!(
            "LOAD DATA INFILE {{'filepath'='{f}', 'compression'='none'}} INTO TABLE t"
        ))
        .unwrap();
    assert_eq!(r.affected_rows, 2);
}

#[test]
fn vectors_auto_increment_and_latin1() {
    let e = env();
    let mut s = e.session();
    s.execute("CREATE TABLE v (id INT AUTO_INCREMENT PRIMARY KEY, name VARCHAR(10), e VECF32(3))")
        .unwrap();
    let f = e.file("v.txt", b"caf\xe9\t[1,2,3]\nb\t[4,5,6]\n");
    let r = s
        .execute(&format!(
            "LOAD DATA INFILE '{f}' INTO TABLE v CHARACTER SET latin1 (name, e)"
        ))
        .unwrap();
    assert_eq!(r.affected_rows, 2);
    assert_eq!(
        rows(&mut s, "SELECT id, name, e FROM v ORDER BY id"),
        vec![vec!["1", "café", "[1, 2, 3]"], vec!["2", "b", "[4, 5, 6]"]]
    );
    // The same bytes as UTF-8: 1366 naming the line.
    let err = s
        .execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE v (name, e)"))
        .unwrap_err();
    assert_eq!(err.code, 1366, "{err:?}");
    assert!(err.message.ends_with("at row 1"), "{}", err.message);
}

#[test]
fn loaded_rows_reach_async_indexes() {
    let e = env();
    let mut s = e.session();
    s.execute("CREATE TABLE f (id INT PRIMARY KEY, body TEXT)")
        .unwrap();
    s.execute("CREATE FULLTEXT INDEX ft ON f (body) ASYNC")
        .unwrap();
    let body: String = (1..=500)
        .map(|i| {
            format!(
                "{i}\t{} word{i}\n",
                if i % 5 == 0 { "river" } else { "stone" }
            )
        })
        .collect();
    let f = e.file("ft.txt", body.as_bytes());
    let r = s
        .execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE f"))
        .unwrap();
    assert_eq!(r.affected_rows, 500);
    // Index only (the consumers' view): the loaded rows arrive through
    // the change log.
    s.execute("SET fast_search = 1, iscp_wait_fresh = 0")
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let n = rows(
            &mut s,
            "SELECT COUNT(*) FROM f WHERE MATCH(body) AGAINST('river')",
        );
        if n == vec![vec!["100"]] {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "ft never saw the loaded rows: {n:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let r = rows(&mut s, "CHECK INDEX ft ON f");
    assert_eq!(r[0].last().map(String::as_str), Some("OK"), "{r:?}");
}

#[test]
fn commit_rows_loads_in_batches() {
    let e = env();
    let mut s = e.session();
    s.execute("CREATE TABLE c (id INT PRIMARY KEY, v VARCHAR(4))")
        .unwrap();
    s.execute("SET tributary_load_commit_rows = 2").unwrap();
    let f = e.file("c.txt", b"1\ta\n2\tb\n3\tc\n4\td\n5\te\n");
    let r = s
        .execute(&format!(
            "LOAD DATA INFILE '{f}' INTO TABLE c (id, @x) SET v = UPPER(@x)"
        ))
        .unwrap();
    assert_eq!(r.affected_rows, 5);
    assert_eq!(
        r.info.as_deref(),
        Some("Records: 5  Deleted: 0  Skipped: 0  Warnings: 0")
    );
    assert_eq!(
        rows(&mut s, "SELECT v FROM c ORDER BY id"),
        vec![vec!["A"], vec!["B"], vec!["C"], vec!["D"], vec!["E"]]
    );
    assert_eq!(rows(&mut s, "SELECT @x"), vec![vec!["e"]]);
    // A failing line rolls back its batch only: the batches before it
    // were committed.
    let f = e.file("bad.txt", b"10\ta\n11\tb\n12\tc\n13\ttoolong\n14\te\n");
    let err = s
        .execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE c"))
        .unwrap_err();
    assert_eq!(err.code, 1406, "{err:?}");
    assert!(err.message.ends_with("at row 4"), "{}", err.message);
    assert_eq!(
        rows(&mut s, "SELECT id FROM c WHERE id >= 10 ORDER BY id"),
        vec![vec!["10"], vec!["11"]]
    );
    // Inside a transaction the load is one statement of it, as without
    // the variable.
    s.execute("BEGIN").unwrap();
    let f = e.file("t.txt", b"20\tx\n21\ty\n22\tz\n");
    s.execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE c"))
        .unwrap();
    s.execute("ROLLBACK").unwrap();
    assert_eq!(
        rows(&mut s, "SELECT COUNT(*) FROM c WHERE id >= 20"),
        vec![vec!["0"]]
    );
}

/// A CHECK constraint holds for loaded rows: a violating line fails the
/// load (3819, nothing written); under IGNORE it is skipped with 3819 as a
/// warning, as INSERT IGNORE does.
#[test]
fn check_constraints_hold_for_loaded_rows() {
    let e = env();
    let mut s = e.session();
    let f = e.file("chk.txt", b"1\t5\n2\t-1\n3\t7\n");
    s.execute("CREATE TABLE c (id INT PRIMARY KEY, n INT CHECK (n >= 0))")
        .unwrap();
    let err = s
        .execute(&format!("LOAD DATA INFILE '{f}' INTO TABLE c"))
        .unwrap_err();
    assert_eq!(err.code, 3819, "{err:?}");
    assert!(rows(&mut s, "SELECT id FROM c").is_empty());
    s.execute(&format!("LOAD DATA INFILE '{f}' IGNORE INTO TABLE c"))
        .unwrap();
    let w = warnings(&mut s);
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!(w[0].0, 3819, "{w:?}");
    assert_eq!(
        rows(&mut s, "SELECT id, n FROM c ORDER BY id"),
        vec![vec!["1", "5"], vec!["3", "7"]]
    );
}
