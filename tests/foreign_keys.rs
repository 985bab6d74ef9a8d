//! FOREIGN KEY constraints beyond one session's statements (the golden
//! files `tests/sql/foreign_keys*.sql` hold those): the definitions
//! survive a restart and are enforced after it; a cascade reaches the
//! child's ASYNC indexes like any write (checked once the consumers have
//! caught up); cascades and parent checks take the row locks a writer
//! would (another transaction's lock makes them wait); and the global
//! `foreign_key_checks` is what new sessions start with.
//!
//! Waits are on conditions with deadlines, never on sleeps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::time::Duration;

use tributary::testing::{JobState, Stage};
use tributary::{Database, Value};

use common::{cfg, err, job, q, wait_until};

const WAIT: Duration = Duration::from_secs(30);

fn ints(rows: &[Vec<Value>]) -> Vec<i64> {
    rows.iter()
        .map(|r| match r.first() {
            Some(Value::Int(i)) => *i,
            other => panic!("expected an int, got {other:?}"),
        })
        .collect()
}

fn show_create(s: &mut tributary::Session, t: &str) -> String {
    match &q(s, &format!("SHOW CREATE TABLE {t}"))[0][1] {
        Value::Text(t) => t.clone(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn keys_survive_a_restart_and_are_enforced_after_it() {
    let dir = tempfile::tempdir().unwrap();
    let (child_sql, self_sql);
    {
        let db = Database::open_with(dir.path(), cfg()).unwrap();
        let mut s = db.session();
        q(&mut s, "CREATE DATABASE d");
        q(&mut s, "USE d");
        q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY, u INT UNIQUE)");
        q(
            &mut s,
            "CREATE TABLE c (id INT PRIMARY KEY, pid INT, pu INT, \
             CONSTRAINT to_p FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE, \
             FOREIGN KEY (pu) REFERENCES p (u) ON DELETE SET NULL ON UPDATE SET NULL)",
        );
        q(
            &mut s,
            "CREATE TABLE t (id INT PRIMARY KEY, up INT REFERENCES t (id))",
        );
        q(&mut s, "INSERT INTO p VALUES (1, 10), (2, 20)");
        q(&mut s, "INSERT INTO c VALUES (1, 1, 10), (2, 2, 20)");
        q(&mut s, "INSERT INTO t VALUES (1, NULL), (2, 1)");
        child_sql = show_create(&mut s, "c");
        self_sql = show_create(&mut s, "t");
        assert!(
            child_sql.contains(
                "CONSTRAINT `to_p` FOREIGN KEY (`pid`) REFERENCES `p` (`id`) ON DELETE CASCADE"
            ),
            "{child_sql}"
        );
        assert!(
            child_sql.contains(
                "CONSTRAINT `c_ibfk_1` FOREIGN KEY (`pu`) REFERENCES `p` (`u`) ON DELETE SET NULL ON UPDATE SET NULL"
            ),
            "{child_sql}"
        );
        drop(s);
        db.shutdown();
    }
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    q(&mut s, "USE d");
    assert_eq!(show_create(&mut s, "c"), child_sql);
    assert_eq!(show_create(&mut s, "t"), self_sql);
    // Child side: 1452; parent side: the cascade, SET NULL and 1451.
    assert_eq!(err(&mut s, "INSERT INTO c VALUES (3, 9, NULL)").code, 1452);
    assert_eq!(err(&mut s, "INSERT INTO t VALUES (3, 7)").code, 1452);
    assert_eq!(err(&mut s, "DELETE FROM t WHERE id = 1").code, 1451);
    assert_eq!(err(&mut s, "DROP TABLE p").code, 3730);
    q(&mut s, "UPDATE p SET u = 21 WHERE id = 2");
    q(&mut s, "DELETE FROM p WHERE id = 1");
    let rows = q(&mut s, "SELECT id, pid, pu FROM c ORDER BY id");
    assert_eq!(
        rows,
        vec![vec![Value::Int(2), Value::Int(2), Value::Null]],
        "row 1 cascaded away, row 2's pu set to NULL"
    );
    // A new key after the restart numbers after the kept ones.
    q(
        &mut s,
        "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES p (id)",
    );
    assert!(show_create(&mut s, "c").contains("CONSTRAINT `c_ibfk_2`"));
    drop(s);
    db.shutdown();
}

/// Whether index `name`'s newest job is live, incremental and has applied
/// every change of its table.
fn caught_up(db: &Database, name: &str) -> bool {
    let j = job(db, name);
    j.state == JobState::Completed
        && j.status.stage == Stage::Incremental
        && common::applied_up_to(db, &j, db.engine().storage.latest_ts())
}

#[test]
fn cascades_reach_the_async_indexes_of_the_child() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    q(&mut s, "CREATE DATABASE d");
    q(&mut s, "USE d");
    q(&mut s, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut s,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, body TEXT, \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE ON UPDATE CASCADE)",
    );
    q(&mut s, "CREATE FULLTEXT INDEX ft ON c (body) ASYNC");
    q(&mut s, "CREATE INDEX cp ON c (pid) ASYNC");
    let parents: Vec<String> = (1..=20).map(|i| format!("({i})")).collect();
    q(
        &mut s,
        &format!("INSERT INTO p VALUES {}", parents.join(",")),
    );
    let children: Vec<String> = (1..=200)
        .map(|i| format!("({i}, {}, 'word{} common')", i % 20 + 1, i % 20 + 1))
        .collect();
    q(
        &mut s,
        &format!("INSERT INTO c VALUES {}", children.join(",")),
    );
    wait_until("ft and cp caught up", WAIT, || {
        caught_up(&db, "ft") && caught_up(&db, "cp")
    });
    // Index only: the consumers' view.
    q(&mut s, "SET fast_search = 1, iscp_wait_fresh = 0");
    let hits = |s: &mut tributary::Session, w: &str| {
        ints(&q(
            s,
            &format!("SELECT id FROM c WHERE MATCH(body) AGAINST('{w}')"),
        ))
        .len()
    };
    assert_eq!(hits(&mut s, "word3"), 10);
    // Cascaded deletes (parent 3's ten children) and updates (parent 5's
    // children move to 50).
    q(&mut s, "DELETE FROM p WHERE id = 3");
    q(&mut s, "UPDATE p SET id = 50 WHERE id = 5");
    assert_eq!(
        ints(&q(&mut s, "SELECT COUNT(*) FROM c WHERE pid = 50"))[0],
        10
    );
    wait_until("ft and cp caught up with the cascades", WAIT, || {
        caught_up(&db, "ft") && caught_up(&db, "cp")
    });
    assert_eq!(hits(&mut s, "word3"), 0, "the cascaded deletes reached ft");
    assert_eq!(hits(&mut s, "common"), 190);
    for ix in ["ft", "cp"] {
        let r = q(&mut s, &format!("CHECK INDEX {ix} ON c"));
        assert_eq!(r[0].last(), Some(&Value::Text("OK".into())), "{ix}: {r:?}");
    }
    drop(s);
    db.shutdown();
}

#[test]
fn cascades_and_parent_checks_take_row_locks() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut a = db.session();
    let mut b = db.session();
    q(&mut a, "CREATE DATABASE d");
    for s in [&mut a, &mut b] {
        q(s, "USE d");
        q(s, "SET innodb_lock_wait_timeout = 1");
    }
    q(&mut a, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut a,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
    );
    q(&mut a, "INSERT INTO p VALUES (1), (2)");
    q(&mut a, "INSERT INTO c VALUES (1, 1)");
    // A holds child row 1: B's cascade from parent 1 must wait for it.
    q(&mut a, "BEGIN");
    q(&mut a, "SELECT * FROM c WHERE id = 1 FOR UPDATE");
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 1").code, 1205);
    q(&mut a, "COMMIT");
    // A's new child of parent 2 share-locks it: B cannot delete parent 2
    // until A ends (and then finds the child and cascades).
    q(&mut a, "BEGIN");
    q(&mut a, "INSERT INTO c VALUES (2, 2)");
    assert_eq!(err(&mut b, "DELETE FROM p WHERE id = 2").code, 1205);
    q(&mut a, "COMMIT");
    q(&mut b, "DELETE FROM p WHERE id = 2");
    assert_eq!(ints(&q(&mut b, "SELECT id FROM c ORDER BY id")), vec![1]);
    // The same through a UNIQUE key: A's child of code 'x' share-locks
    // its parent row, so B's change of that code waits.
    q(
        &mut a,
        "CREATE TABLE pu (id INT PRIMARY KEY, code VARCHAR(5) UNIQUE)",
    );
    q(
        &mut a,
        "CREATE TABLE cu (id INT PRIMARY KEY, code VARCHAR(5),          FOREIGN KEY (code) REFERENCES pu (code) ON UPDATE CASCADE)",
    );
    q(&mut a, "INSERT INTO pu VALUES (1, 'x')");
    q(&mut a, "BEGIN");
    q(&mut a, "INSERT INTO cu VALUES (1, 'x')");
    assert_eq!(
        err(&mut b, "UPDATE pu SET code = 'y' WHERE id = 1").code,
        1205
    );
    q(&mut a, "COMMIT");
    q(&mut b, "UPDATE pu SET code = 'y' WHERE id = 1");
    assert_eq!(
        q(&mut b, "SELECT code FROM cu"),
        vec![vec![Value::Text("y".into())]]
    );
    drop((a, b));
    db.shutdown();
}

#[test]
fn global_foreign_key_checks_is_what_new_sessions_start_with() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut a = db.session();
    q(&mut a, "CREATE DATABASE d");
    q(&mut a, "USE d");
    q(&mut a, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut a,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES p (id))",
    );
    q(&mut a, "SET GLOBAL foreign_key_checks = 0");
    // This session keeps its own value.
    assert_eq!(err(&mut a, "INSERT INTO c VALUES (1, 9)").code, 1452);
    let mut b = db.session();
    q(&mut b, "USE d");
    assert_eq!(
        q(&mut b, "SELECT @@foreign_key_checks"),
        vec![vec![Value::Int(0)]]
    );
    q(&mut b, "INSERT INTO c VALUES (1, 9)");
    q(&mut a, "SET GLOBAL foreign_key_checks = 1");
    let mut c = db.session();
    q(&mut c, "USE d");
    assert_eq!(err(&mut c, "INSERT INTO c VALUES (2, 9)").code, 1452);
    drop((a, b, c));
    db.shutdown();
}

/// Two compute nodes on one store: a key made on one is enforced on the
/// other, and a cascade run on one is what the other reads. Over the
/// PostgreSQL backend too (the write path above storage is the same).
fn keys_hold_across_compute_nodes(backend: common::Backend) {
    use tributary::Config;
    let shared = common::Shared::new(backend);
    let a_db = Database::open_shared(
        shared.for_node("cn-a"),
        Config {
            node_name: "cn-a".into(),
            ..cfg()
        },
    )
    .unwrap();
    let b_db = Database::open_shared(
        shared.for_node("cn-b"),
        Config {
            node_name: "cn-b".into(),
            iscp_enabled: false,
            ..cfg()
        },
    )
    .unwrap();
    let mut a = a_db.session();
    q(&mut a, "CREATE DATABASE d");
    q(&mut a, "USE d");
    q(&mut a, "CREATE TABLE p (id INT PRIMARY KEY)");
    q(
        &mut a,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, \
         FOREIGN KEY (pid) REFERENCES p (id) ON DELETE CASCADE)",
    );
    q(&mut a, "INSERT INTO p VALUES (1), (2)");
    let mut b = b_db.session();
    q(&mut b, "USE d");
    assert_eq!(err(&mut b, "INSERT INTO c VALUES (1, 9)").code, 1452);
    q(&mut b, "INSERT INTO c VALUES (1, 1), (2, 2)");
    q(&mut a, "DELETE FROM p WHERE id = 1");
    assert_eq!(ints(&q(&mut b, "SELECT id FROM c ORDER BY id")), vec![2]);
    assert_eq!(err(&mut b, "DROP TABLE p").code, 3730);
    drop((a, b));
    b_db.shutdown();
    a_db.shutdown();
}

#[test]
fn keys_hold_across_compute_nodes_embedded() {
    keys_hold_across_compute_nodes(common::Backend::Embedded);
}

#[test]
fn keys_hold_across_compute_nodes_over_postgres() {
    keys_hold_across_compute_nodes(common::Backend::Postgres);
}

/// A key to a table the user cannot read is refused (1142, REFERENCES):
/// its errors would tell which parent values exist.
#[test]
fn a_key_needs_a_grant_on_its_parent() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut root = db.session();
    for sql in [
        "CREATE DATABASE d",
        "CREATE DATABASE secret",
        "CREATE TABLE secret.p (id INT PRIMARY KEY)",
        "CREATE USER 'u'@'%' IDENTIFIED BY 'pw'",
        "GRANT ALL ON d.* TO 'u'@'%'",
    ] {
        q(&mut root, sql);
    }
    let mut u = db.session();
    u.set_user("u", false);
    q(&mut u, "USE d");
    let e = err(
        &mut u,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT, FOREIGN KEY (pid) REFERENCES secret.p (id))",
    );
    assert_eq!(e.code, 1142, "{e:?}");
    assert!(e.message.starts_with("REFERENCES command denied"), "{e:?}");
    let e = err(
        &mut u,
        "CREATE TABLE c (id INT PRIMARY KEY, pid INT REFERENCES secret.p (id))",
    );
    assert_eq!(e.code, 1142, "{e:?}");
    q(&mut u, "CREATE TABLE c (id INT PRIMARY KEY, pid INT)");
    let e = err(
        &mut u,
        "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES secret.p (id)",
    );
    assert_eq!(e.code, 1142, "{e:?}");
    q(&mut root, "GRANT SELECT ON secret.p TO 'u'@'%'");
    q(
        &mut u,
        "ALTER TABLE c ADD FOREIGN KEY (pid) REFERENCES secret.p (id)",
    );
    drop((root, u));
    db.shutdown();
}
