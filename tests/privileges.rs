//! Authorization (issue 17, item 5): every privilege and every error code
//! (1142, 1044, 1045, 1227), GRANT/REVOKE reaching an existing session at
//! its next statement, and accounts and grants surviving a restart.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use tributary::testing::{random_salt, scramble_native, UserTable};
use tributary::Value;
use tributary::{Database, Session};

fn ok(s: &mut Session, sql: &str) -> Vec<Vec<String>> {
    let r = s
        .execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {} {}", e.code, e.message));
    r.rows
        .iter()
        .map(|row| {
            row.iter()
                .map(|v| match v {
                    Value::Null => "NULL".to_string(),
                    v => v.to_text().unwrap_or_default(),
                })
                .collect()
        })
        .collect()
}

fn err(s: &mut Session, sql: &str) -> (u16, String) {
    match s.execute(sql) {
        Ok(_) => panic!("{sql}: succeeded, expected an error"),
        Err(e) => (e.code, e.message),
    }
}

fn denied(s: &mut Session, sql: &str, command: &str, table: &str) {
    assert_eq!(
        err(s, sql),
        (
            1142,
            format!("{command} command denied to user 'u'@'localhost' for table '{table}'")
        ),
        "{sql}"
    );
}

fn db_denied(s: &mut Session, sql: &str, db: &str) {
    assert_eq!(
        err(s, sql),
        (
            1044,
            format!("Access denied for user 'u'@'localhost' to database '{db}'")
        ),
        "{sql}"
    );
}

fn super_denied(s: &mut Session, sql: &str) {
    assert_eq!(
        err(s, sql),
        (
            1227,
            "Access denied; you need (at least one of) the SUPER privilege(s) for this operation"
                .to_string()
        ),
        "{sql}"
    );
}

fn login(t: &UserTable, user: &str, host: &str, pw: &str) -> Option<bool> {
    let salt = random_salt();
    t.verify(user, host, &salt, &scramble_native(pw, &salt))
}

fn as_user(db: &Database, user: &str) -> Session {
    let mut s = db.session();
    s.set_user(user, false);
    s
}

#[test]
fn each_privilege_and_error_code() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut root = db.session();
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY, x INT)",
        "INSERT INTO t VALUES (1, 10), (2, 20)",
        "CREATE TABLE hidden (id INT PRIMARY KEY)",
        "CREATE DATABASE other",
        "CREATE TABLE other.o (id INT PRIMARY KEY)",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
    ] {
        ok(&mut root, sql);
    }
    let mut u = as_user(&db, "u");

    // No privilege at all.
    db_denied(&mut u, "USE d", "d");
    db_denied(&mut u, "USE nosuchdb", "nosuchdb");
    assert!(ok(&mut u, "SHOW DATABASES").is_empty());
    denied(&mut u, "SELECT * FROM d.t", "SELECT", "t");
    denied(&mut u, "DESCRIBE d.t", "SELECT", "t");
    denied(&mut u, "SHOW CREATE TABLE d.t", "SELECT", "t");
    denied(&mut u, "SHOW INDEX FROM d.t", "SELECT", "t");
    denied(&mut u, "EXPLAIN SELECT * FROM d.t", "SELECT", "t");
    denied(&mut u, "CHECK INDEX ix ON d.t", "SELECT", "t");
    denied(
        &mut u,
        "SELECT * FROM mo_catalog.mo_tables",
        "SELECT",
        "mo_tables",
    );
    denied(&mut u, "SHOW ISCP STATUS", "SELECT", "mo_iscp_log");
    db_denied(&mut u, "SHOW TABLES FROM d", "d");
    ok(&mut u, "SELECT 1");

    // SELECT (granted to the existing session: next statement).
    ok(&mut root, "GRANT SELECT ON d.t TO 'u'@'%'");
    ok(&mut u, "USE d");
    assert_eq!(ok(&mut u, "SHOW DATABASES"), vec![vec!["d".to_string()]]);
    assert_eq!(ok(&mut u, "SHOW TABLES"), vec![vec!["t".to_string()]]);
    assert_eq!(ok(&mut u, "SELECT x FROM t ORDER BY id").len(), 2);
    ok(&mut u, "DESCRIBE t");
    ok(&mut u, "EXPLAIN SELECT * FROM t");
    denied(&mut u, "SELECT * FROM hidden", "SELECT", "hidden");
    denied(&mut u, "SELECT * FROM other.o", "SELECT", "o");
    // A table read anywhere in a query needs SELECT: joins, derived
    // tables, CTE bodies, subqueries in any clause (issue 9).
    for sql in [
        "SELECT t.id FROM t JOIN hidden h ON h.id = t.id",
        "SELECT * FROM (SELECT id FROM hidden) x",
        "WITH c AS (SELECT id FROM hidden) SELECT * FROM c",
        "SELECT id FROM t WHERE id IN (SELECT id FROM hidden)",
        "SELECT id FROM t WHERE EXISTS (SELECT 1 FROM hidden WHERE hidden.id = t.id)",
        "SELECT (SELECT COUNT(*) FROM hidden) FROM t",
        "SELECT id FROM t UNION SELECT id FROM hidden",
        "SELECT x, COUNT(*) FROM t GROUP BY x HAVING COUNT(*) > (SELECT COUNT(*) FROM hidden)",
    ] {
        denied(&mut u, sql, "SELECT", "hidden");
    }
    // A CTE's name is not a table.
    assert_eq!(
        ok(
            &mut u,
            "WITH c AS (SELECT id FROM t) SELECT COUNT(*) FROM c"
        ),
        vec![vec!["2".to_string()]]
    );

    // INSERT.
    denied(&mut u, "INSERT INTO t VALUES (3, 30)", "INSERT", "t");
    ok(&mut root, "GRANT INSERT ON d.t TO u");
    ok(&mut u, "INSERT INTO t VALUES (3, 30)");
    // Rows of literals read nothing; a row with a subquery reads its table.
    for sql in [
        "INSERT INTO t VALUES (5, (SELECT COUNT(*) FROM hidden))",
        "INSERT INTO t VALUES (5, 1), (6, -(SELECT MAX(id) FROM hidden))",
        "INSERT INTO t SELECT id, id FROM hidden",
        "INSERT INTO t WITH c AS (SELECT id FROM hidden) SELECT id, id FROM c",
    ] {
        denied(&mut u, sql, "SELECT", "hidden");
    }

    // UPDATE (with a WHERE clause it also reads, so it needs SELECT too).
    denied(&mut u, "UPDATE t SET x = 31 WHERE id = 3", "UPDATE", "t");
    ok(&mut root, "GRANT UPDATE ON d.t TO u");
    ok(&mut u, "UPDATE t SET x = 31 WHERE id = 3");
    denied(
        &mut u,
        "UPDATE t SET x = 32 WHERE id IN (SELECT id FROM hidden)",
        "SELECT",
        "hidden",
    );

    // DELETE.
    denied(&mut u, "DELETE FROM t WHERE id = 3", "DELETE", "t");
    denied(
        &mut u,
        "DELETE FROM t WHERE id IN (SELECT id FROM hidden)",
        "DELETE",
        "t",
    );
    // REPLACE deletes what it replaces: INSERT and DELETE (MySQL's rule).
    denied(&mut u, "REPLACE INTO t VALUES (3, 33)", "DELETE", "t");
    ok(&mut root, "GRANT DELETE ON d.* TO u");
    ok(&mut u, "DELETE FROM t WHERE id = 3");
    ok(&mut u, "REPLACE INTO t VALUES (3, 33)");
    ok(&mut u, "DELETE FROM t WHERE id = 3");

    // CREATE (table: 1142; database: 1044).
    denied(
        &mut u,
        "CREATE TABLE t2 (id INT PRIMARY KEY)",
        "CREATE",
        "t2",
    );
    db_denied(&mut u, "CREATE DATABASE mine", "mine");
    ok(&mut root, "GRANT CREATE ON d.* TO u");
    ok(&mut u, "CREATE TABLE t2 (id INT PRIMARY KEY, v INT)");
    ok(&mut root, "GRANT CREATE ON mine.* TO u");
    ok(&mut u, "CREATE DATABASE mine");

    // DROP (table: 1142; database: 1044).
    denied(&mut u, "DROP TABLE t2", "DROP", "t2");
    db_denied(&mut u, "DROP DATABASE other", "other");
    db_denied(&mut u, "DROP DATABASE mine", "mine");
    ok(&mut root, "GRANT DROP ON mine.* TO u");
    ok(&mut u, "DROP DATABASE mine");
    ok(&mut root, "GRANT DROP ON d.t2 TO u");
    ok(&mut u, "DROP TABLE t2");
    denied(&mut u, "DROP TABLE other.o", "DROP", "o");

    // TRUNCATE TABLE needs DROP on the table (MySQL's rule; DELETE is not
    // enough), checked before the table's existence.
    ok(&mut root, "INSERT INTO other.o VALUES (1)");
    ok(&mut root, "GRANT DELETE ON other.o TO u");
    denied(&mut u, "TRUNCATE TABLE other.o", "DROP", "o");
    denied(&mut u, "TRUNCATE other.nosuch", "DROP", "nosuch");
    ok(&mut root, "GRANT DROP ON other.o TO u");
    ok(&mut u, "TRUNCATE TABLE other.o");
    ok(&mut root, "REVOKE DROP, DELETE ON other.o FROM u");
    assert_eq!(
        ok(&mut root, "SELECT COUNT(*) FROM other.o"),
        vec![vec!["0"]]
    );

    // INDEX (CREATE/DROP INDEX, REINDEX).
    denied(&mut u, "CREATE INDEX ix ON t(x)", "INDEX", "t");
    ok(&mut root, "GRANT INDEX ON d.t TO u");
    ok(&mut u, "CREATE INDEX ix ON t(x)");
    // CHECK INDEX needs SELECT on the table, which u has.
    ok(&mut u, "CHECK INDEX ix ON t");
    ok(&mut u, "ALTER TABLE t ALTER REINDEX ix");
    ok(&mut u, "DROP INDEX ix ON t");
    ok(&mut root, "REVOKE INDEX ON d.t FROM u");
    denied(&mut u, "ALTER TABLE t ADD INDEX ix2 (x)", "INDEX", "t");

    // ALTER (index DDL through ALTER TABLE).
    ok(&mut root, "GRANT ALTER ON d.t TO u");
    ok(&mut u, "ALTER TABLE t ADD INDEX ix2 (x)");
    ok(&mut u, "ALTER TABLE t DROP INDEX ix2");

    // SUPER: fault injection, SET GLOBAL, account statements.
    super_denied(&mut u, "SELECT list_fault_points()");
    super_denied(&mut u, "SET GLOBAL max_connections = 10");
    super_denied(&mut u, "CREATE USER v");
    super_denied(&mut u, "GRANT SELECT ON d.* TO u");
    super_denied(&mut u, "SHOW GRANTS FOR root");
    ok(&mut root, "GRANT SUPER ON *.* TO u");
    ok(&mut u, "SELECT list_fault_points()");
    ok(&mut u, "SHOW GRANTS FOR root");
    ok(&mut root, "REVOKE SUPER ON *.* FROM u");
    super_denied(&mut u, "SELECT list_fault_points()");

    // SHOW GRANTS: MySQL's shape.
    assert_eq!(
        ok(&mut u, "SHOW GRANTS"),
        vec![
            vec!["GRANT USAGE ON *.* TO `u`@`%`".to_string()],
            vec!["GRANT DELETE, CREATE ON `d`.* TO `u`@`%`".to_string()],
            // Grants outlive the objects they name, as in MySQL.
            vec!["GRANT CREATE, DROP ON `mine`.* TO `u`@`%`".to_string()],
            vec!["GRANT SELECT, INSERT, UPDATE, ALTER ON `d`.`t` TO `u`@`%`".to_string()],
            vec!["GRANT DROP ON `d`.`t2` TO `u`@`%`".to_string()],
        ]
    );
    assert_eq!(
        ok(&mut root, "SHOW GRANTS FOR 'root'"),
        vec![vec![
            "GRANT ALL PRIVILEGES ON *.* TO `root`@`%` WITH GRANT OPTION".to_string()
        ]]
    );

    // REVOKE reaches the existing session at its next statement, inside
    // an open transaction too.
    ok(&mut u, "BEGIN");
    ok(&mut u, "SELECT * FROM t");
    ok(&mut root, "REVOKE SELECT ON d.t FROM u");
    denied(&mut u, "SELECT * FROM t", "SELECT", "t");
    ok(&mut u, "ROLLBACK");

    // ALL PRIVILEGES on a database.
    ok(&mut root, "GRANT ALL PRIVILEGES ON other.* TO u");
    ok(&mut u, "SELECT * FROM other.o");
    ok(&mut u, "DROP TABLE other.o");

    // Errors of the account statements themselves.
    assert_eq!(err(&mut root, "CREATE USER u").0, 1396);
    assert_eq!(ok(&mut root, "CREATE USER IF NOT EXISTS u").len(), 0);
    assert_eq!(err(&mut root, "DROP USER nobody").0, 1396);
    ok(&mut root, "DROP USER IF EXISTS nobody");
    assert_eq!(err(&mut root, "GRANT SELECT ON d.* TO nobody").0, 1410);
    assert_eq!(err(&mut root, "GRANT SELECT ON d.nosuch TO u").0, 1146);
    assert_eq!(err(&mut root, "REVOKE SELECT ON zz.* FROM u").0, 1141);
    assert_eq!(err(&mut root, "CREATE USER 'w'@'10.0.0.%'").0, 1235);
    assert_eq!(err(&mut root, "REVOKE ALL ON *.* FROM root").0, 1235);
    assert_eq!(err(&mut root, "DROP USER root").0, 1235);
    db.shutdown();
}

#[test]
fn logins_hosts_and_restart() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open(dir.path()).unwrap();
        let t = UserTable::open(db.clone(), &["alice:secret".parse().unwrap()]).unwrap();
        let mut root = db.session();
        for sql in [
            "CREATE DATABASE d",
            "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
            "CREATE USER 'l'@'localhost' IDENTIFIED BY 'lpw'",
            "GRANT SELECT, INSERT ON d.* TO 'u'@'%'",
        ] {
            ok(&mut root, sql);
        }
        // 1045 cases: wrong password, unknown user, host not admitted.
        assert_eq!(login(&t, "u", "192.0.2.7", "pw"), Some(false));
        assert_eq!(login(&t, "u", "127.0.0.1", "bad"), None);
        assert_eq!(login(&t, "nobody", "127.0.0.1", "pw"), None);
        assert_eq!(login(&t, "l", "127.0.0.1", "lpw"), Some(false));
        assert_eq!(login(&t, "l", "192.0.2.7", "lpw"), None);
        assert_eq!(login(&t, "root", "127.0.0.1", ""), Some(true));
        // `--user` accounts hold every privilege but SUPER on *.*.
        let mut a = as_user(&db, "alice");
        ok(&mut a, "USE d");
        super_denied(&mut a, "SELECT list_fault_points()");
        // ALTER USER of oneself needs no SUPER.
        let mut u = as_user(&db, "u");
        ok(&mut u, "ALTER USER CURRENT_USER() IDENTIFIED BY 'pw2'");
        assert_eq!(login(&t, "u", "127.0.0.1", "pw"), None);
        assert_eq!(login(&t, "u", "127.0.0.1", "pw2"), Some(false));
        ok(&mut root, "ALTER USER root IDENTIFIED BY 'rootpw'");
        assert_eq!(login(&t, "root", "127.0.0.1", ""), None);
        ok(&mut root, "DROP USER l@localhost");
        assert_eq!(login(&t, "l", "127.0.0.1", "lpw"), None);
        drop((u, a, root, t));
        db.shutdown();
    }
    // Reopen the same directory: accounts, hashes and grants are there.
    let db = Database::open(dir.path()).unwrap();
    let t = UserTable::open(db.clone(), &[]).unwrap();
    assert_eq!(login(&t, "u", "127.0.0.1", "pw2"), Some(false));
    assert_eq!(login(&t, "root", "127.0.0.1", "rootpw"), Some(true));
    assert_eq!(login(&t, "alice", "127.0.0.1", "secret"), Some(false));
    let mut u = as_user(&db, "u");
    assert_eq!(
        ok(&mut u, "SHOW GRANTS"),
        vec![
            vec!["GRANT USAGE ON *.* TO `u`@`%`".to_string()],
            vec!["GRANT SELECT, INSERT ON `d`.* TO `u`@`%`".to_string()],
        ]
    );
    ok(&mut u, "USE d");
    // The stored hash is SHA1(SHA1(pw)), never the password.
    let mut txn = db.engine().storage.begin(Default::default()).unwrap();
    let rec = tributary::testing::get_user(txn.as_mut(), "u", false)
        .unwrap()
        .unwrap();
    txn.rollback();
    assert_eq!(rec.auth, tributary::testing::native_password_hash("pw2"));
    assert!(rec.auth.starts_with('*') && rec.auth.len() == 41);
    db.shutdown();
}

/// LOCK TABLES needs the LOCK TABLES privilege on the table's database
/// (1044) and SELECT on the table (1142), as in MySQL (issue 39 item 4):
/// a SELECT-only account can no longer hold writers off — nor with
/// `SELECT … FOR UPDATE`, which also wants DELETE, UPDATE or LOCK TABLES.
#[test]
fn lock_tables_needs_its_privilege() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut root = db.session();
    for sql in [
        "CREATE DATABASE d",
        "USE d",
        "CREATE TABLE t (id INT PRIMARY KEY)",
        "CREATE TABLE hidden (id INT PRIMARY KEY)",
        "CREATE USER 'u'@'%'",
        "GRANT SELECT ON d.t TO u",
    ] {
        ok(&mut root, sql);
    }
    let mut u = as_user(&db, "u");
    ok(&mut u, "USE d");
    db_denied(&mut u, "LOCK TABLES t READ", "d");
    db_denied(&mut u, "LOCK TABLES d.t WRITE", "d");
    // Nothing was locked: root writes at once.
    ok(&mut root, "INSERT INTO t VALUES (1)");
    // The privilege on one table does not exist (1144); on *.* it does.
    assert_eq!(err(&mut root, "GRANT LOCK TABLES ON d.t TO u").0, 1144);
    ok(&mut root, "GRANT LOCK TABLES ON d.* TO u");
    ok(&mut u, "LOCK TABLES t READ");
    ok(&mut u, "UNLOCK TABLES");
    // SELECT is still needed on every table locked.
    denied(
        &mut u,
        "LOCK TABLES t READ, hidden WRITE",
        "SELECT",
        "hidden",
    );
    assert!(!ok(&mut u, "SHOW GRANTS")
        .iter()
        .any(|r| r[0].contains("hidden")));
    assert_eq!(
        ok(&mut u, "SHOW GRANTS"),
        vec![
            vec!["GRANT USAGE ON *.* TO `u`@`%`".to_string()],
            vec!["GRANT LOCK TABLES ON `d`.* TO `u`@`%`".to_string()],
            vec!["GRANT SELECT ON `d`.`t` TO `u`@`%`".to_string()],
        ]
    );
    // REVOKE takes it away at the next statement.
    ok(&mut root, "REVOKE LOCK TABLES ON d.* FROM u");
    db_denied(&mut u, "LOCK TABLES t READ", "d");
    ok(&mut root, "GRANT LOCK TABLES ON *.* TO u");
    ok(&mut u, "LOCK TABLES t WRITE");
    ok(&mut u, "UNLOCK TABLES");
    // SELECT … FOR UPDATE locks rows against writers: besides SELECT it
    // needs DELETE, UPDATE or LOCK TABLES (MySQL 8); FOR SHARE SELECT only.
    ok(&mut u, "BEGIN");
    ok(&mut u, "SELECT id FROM t FOR UPDATE");
    ok(&mut u, "ROLLBACK");
    ok(&mut root, "REVOKE LOCK TABLES ON *.* FROM u");
    ok(&mut u, "BEGIN");
    ok(&mut u, "SELECT id FROM t FOR SHARE");
    denied(
        &mut u,
        "SELECT id FROM t FOR UPDATE",
        "SELECT with locking clause",
        "t",
    );
    denied(
        &mut u,
        "SELECT 1 FROM (SELECT id FROM t FOR UPDATE) x",
        "SELECT with locking clause",
        "t",
    );
    ok(&mut u, "ROLLBACK");
    ok(&mut root, "GRANT UPDATE ON d.t TO u");
    ok(&mut u, "BEGIN");
    ok(&mut u, "SELECT id FROM t FOR UPDATE");
    ok(&mut u, "ROLLBACK");
    ok(&mut root, "REVOKE UPDATE ON d.t FROM u");
    // ALL on a database includes LOCK TABLES (and prints as ALL).
    ok(&mut root, "GRANT ALL ON d.* TO u");
    ok(&mut u, "LOCK TABLES hidden READ");
    ok(&mut u, "UNLOCK TABLES");
    assert!(ok(&mut u, "SHOW GRANTS")
        .iter()
        .any(|r| r[0] == "GRANT ALL PRIVILEGES ON `d`.* TO `u`@`%`"));
    db.shutdown();
}

/// SHOW PROCESSLIST / information_schema.PROCESSLIST show other users'
/// sessions only with PROCESS (MySQL's rule); KILL of another user's
/// session needs SUPER (MySQL 8: CONNECTION_ADMIN or SUPER), PROCESS is
/// not enough.
#[test]
fn process_privilege_shows_other_sessions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut root = db.session();
    ok(&mut root, "CREATE USER 'u'@'%'");
    let root_id = ok(&mut root, "SELECT CONNECTION_ID()")[0][0].clone();
    let mut u = as_user(&db, "u");
    let users = |s: &mut Session, sql: &str| -> Vec<String> {
        let mut v: Vec<String> = ok(s, sql).into_iter().map(|r| r[1].clone()).collect();
        v.sort();
        v
    };
    for sql in [
        "SHOW PROCESSLIST",
        "SELECT * FROM information_schema.PROCESSLIST",
    ] {
        assert_eq!(users(&mut u, sql), vec!["u"], "{sql}");
    }
    assert_eq!(err(&mut root, "GRANT PROCESS ON d.* TO u").0, 1221);
    ok(&mut root, "GRANT PROCESS ON *.* TO u");
    assert_eq!(
        ok(&mut u, "SHOW GRANTS"),
        vec![vec!["GRANT PROCESS ON *.* TO `u`@`%`".to_string()]]
    );
    for sql in [
        "SHOW PROCESSLIST",
        "SELECT * FROM information_schema.PROCESSLIST",
    ] {
        assert_eq!(users(&mut u, sql), vec!["root", "u"], "{sql}");
    }
    assert_eq!(err(&mut u, &format!("KILL QUERY {root_id}")).0, 1095);
    ok(&mut root, "REVOKE PROCESS ON *.* FROM u");
    assert_eq!(users(&mut u, "SHOW PROCESSLIST"), vec!["u"]);
    db.shutdown();
}
