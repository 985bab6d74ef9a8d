//! `SET GLOBAL`: the value new sessions start with, not the running
//! ones' (MySQL's rule), readable as `@@global.x` everywhere; SUPER only.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use tributary::{Database, Session, Value};

fn one(s: &mut Session, sql: &str) -> Value {
    match s.execute(sql) {
        Ok(r) => r.rows[0][0].clone(),
        Err(e) => panic!("{sql}: {e:?}"),
    }
}

#[test]
fn set_global_reaches_new_sessions_only() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut a = db.session();
    let mut b = db.session();
    a.execute("SET GLOBAL max_execution_time = 1500").unwrap();
    a.execute("SET GLOBAL autocommit = 0").unwrap();
    a.execute("SET GLOBAL transaction_isolation = 'REPEATABLE-READ'")
        .unwrap();
    // Running sessions keep their values; @@global shows the new one.
    assert_eq!(one(&mut b, "SELECT @@max_execution_time"), Value::Int(0));
    assert_eq!(
        one(&mut b, "SELECT @@global.max_execution_time"),
        Value::Int(1500)
    );
    assert!(b.autocommit());
    // A new session starts with them.
    let mut c = db.session();
    assert_eq!(one(&mut c, "SELECT @@max_execution_time"), Value::Int(1500));
    assert!(!c.autocommit());
    // Back to the defaults.
    a.execute("SET GLOBAL max_execution_time = DEFAULT")
        .unwrap();
    a.execute("SET GLOBAL autocommit = DEFAULT").unwrap();
    let mut d = db.session();
    assert_eq!(one(&mut d, "SELECT @@max_execution_time"), Value::Int(0));
    assert!(d.autocommit());
    // Without SUPER: 1227.
    a.execute("CREATE USER plain IDENTIFIED BY 'pw'").unwrap();
    let mut p = db.session();
    p.set_user("plain", false);
    assert_eq!(
        p.execute("SET GLOBAL max_execution_time = 1")
            .unwrap_err()
            .code,
        1227
    );
}
