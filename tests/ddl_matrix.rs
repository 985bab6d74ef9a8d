//! Atomic DDL (issue 39 item 3): the fault-point matrix of the DROP
//! protocol extended to ALTER TABLE (a column under a synchronous
//! full-text index converted: the index is dropped and rebuilt), CREATE
//! INDEX, RENAME TABLE and TRUNCATE TABLE, with a KILL QUERY and a crash
//! (`abort`) at each step. Up to the commit a KILL answers 1317 and a
//! crash loses the statement, and the old table with its indexes is whole;
//! from the commit on the statement stands (a KILL there is answered with
//! success) and survives a crash.
//!
//! Every test holds a [`FaultGuard`] (fault points are process-global), so
//! the rows run one at a time; tests never sleep to synchronise: they wait
//! on a condition with a deadline.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::process::Command;
use std::thread;
use std::time::Duration;

use tributary::{Database, Session, Value};
use tributary_fault::{global, FaultGuard};

use common::{cfg, remove_all_points, wait_until, wait_waiters};

const WAIT: Duration = Duration::from_secs(30);
/// Rows of the table: more than one interrupt/fault interval (1,024) of
/// the rewrite and of the index builds.
const ROWS: i64 = 1_500;

fn q(s: &mut Session, sql: &str) -> Vec<Vec<Value>> {
    match s.execute(sql) {
        Ok(r) => r.rows,
        Err(e) => panic!("{sql}: {} {}", e.code, e.message),
    }
}

fn int(rows: &[Vec<Value>]) -> i64 {
    match rows.first().and_then(|r| r.first()) {
        Some(Value::Int(v)) => *v,
        other => panic!("expected an integer, got {other:?}"),
    }
}

/// The table `k.t`: a synchronous FULLTEXT index `ft` on `body` (TEXT)
/// and a B-tree `bn` on `n`; every third row says "apple".
fn setup(s: &mut Session) {
    q(s, "CREATE DATABASE k");
    q(s, "USE k");
    q(
        s,
        "CREATE TABLE t (id INT PRIMARY KEY, body TEXT, n INT, FULLTEXT ft (body), INDEX bn (n))",
    );
    for chunk in (1..=ROWS).collect::<Vec<_>>().chunks(500) {
        let vals: Vec<String> = chunk
            .iter()
            .map(|i| {
                let w = if i % 3 == 0 { "apple" } else { "pear" };
                format!("({i}, '{w} number {i}', {i})")
            })
            .collect();
        q(s, &format!("INSERT INTO t VALUES {}", vals.join(", ")));
    }
}

/// A DDL statement of the matrix and how to tell its before and after.
#[derive(Clone, Copy, Debug)]
enum Ddl {
    /// `ALTER TABLE t MODIFY body VARCHAR(200)`: the column converted, its
    /// synchronous full-text index dropped and rebuilt from the new rows.
    AlterModify,
    /// `CREATE FULLTEXT INDEX ft2 ON t (body)`.
    CreateIndex,
    /// `RENAME TABLE t TO t2`.
    Rename,
    /// `TRUNCATE TABLE t`: new empty storage for the rows and every index
    /// (the full-text index a new job generation), the old dropped.
    Truncate,
}

impl Ddl {
    fn sql(self) -> &'static str {
        match self {
            Ddl::AlterModify => "ALTER TABLE t MODIFY body VARCHAR(200)",
            Ddl::CreateIndex => "CREATE FULLTEXT INDEX ft2 ON t (body)",
            Ddl::Rename => "RENAME TABLE t TO t2",
            Ddl::Truncate => "TRUNCATE TABLE t",
        }
    }

    /// Points of this statement's steps, in order, with their targets; the
    /// last is after the commit.
    fn steps(self) -> Vec<String> {
        let mut v = Vec::new();
        match self {
            Ddl::AlterModify => {
                v.push("fj/ddl/alter-rewrite:t".to_string());
                v.push("fj/ddl/index-build:ft".to_string());
            }
            Ddl::CreateIndex => v.push("fj/ddl/index-build:ft2".to_string()),
            Ddl::Rename => {}
            Ddl::Truncate => v.push("fj/ddl/truncate-swap:t".to_string()),
        }
        v.push("fj/ddl/before-commit:t".to_string());
        v.push("fj/ddl/after-commit:t".to_string());
        v
    }

    /// Check `s` sees the state before (`applied` false) or after the
    /// statement, whole: schema, indexes, and the full-text index answering
    /// as the table says (CHECK INDEX: equal to the table).
    fn check(self, s: &mut Session, applied: bool) {
        q(s, "USE k");
        let table = if matches!(self, Ddl::Rename) && applied {
            "t2"
        } else {
            "t"
        };
        let ty = q(
            s,
            &format!("SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = 'k' AND TABLE_NAME = '{table}' AND COLUMN_NAME = 'body'"),
        );
        let want_ty = if matches!(self, Ddl::AlterModify) && applied {
            "varchar"
        } else {
            "text"
        };
        assert_eq!(
            ty,
            vec![vec![Value::Text(want_ty.into())]],
            "{self:?} applied={applied}"
        );
        let mut indexes: Vec<String> = q(s, &format!("SHOW INDEX FROM {table}"))
            .into_iter()
            .map(|r| match &r[2] {
                Value::Text(n) => n.clone(),
                o => panic!("{o:?}"),
            })
            .collect();
        indexes.sort();
        indexes.dedup();
        let mut want = vec!["PRIMARY", "bn", "ft"];
        if matches!(self, Ddl::CreateIndex) && applied {
            want.push("ft2");
        }
        assert_eq!(indexes, want, "{self:?} applied={applied}");
        let other = if table == "t" { "t2" } else { "t" };
        assert!(
            s.execute(&format!("SELECT 1 FROM {other}")).is_err(),
            "{self:?}: {other} exists"
        );
        let rows = if matches!(self, Ddl::Truncate) && applied {
            0
        } else {
            ROWS
        };
        let hits = int(&q(
            s,
            &format!("SELECT COUNT(*) FROM {table} WHERE MATCH(body) AGAINST('apple')"),
        ));
        assert_eq!(hits, rows / 3, "{self:?} applied={applied}: MATCH");
        for ix in &want[1..] {
            let r = q(s, &format!("CHECK INDEX {ix} ON {table}"));
            let status = r[0].last().cloned();
            assert_eq!(
                status,
                Some(Value::Text("OK".into())),
                "{self:?} applied={applied}: CHECK INDEX {ix}: {r:?}"
            );
        }
        assert_eq!(
            int(&q(s, &format!("SELECT COUNT(*) FROM {table} WHERE n > 0"))),
            rows
        );
    }

    /// After the statement was interrupted at a step: the state it left
    /// (`applied`: the step was after the commit) is whole, and the
    /// statement then runs (again) to the end.
    fn settle(self, s: &mut Session, applied: bool) {
        self.check(s, applied);
        if !applied {
            q(s, self.sql());
            self.check(s, true);
        }
        if matches!(self, Ddl::Truncate) {
            // The new, empty indexes take new rows.
            q(s, "INSERT INTO t VALUES (7, 'apple again', 7)");
            let hit = q(s, "SELECT id FROM t WHERE MATCH(body) AGAINST('apple')");
            assert_eq!(hit, vec![vec![Value::Int(7)]]);
            assert_eq!(int(&q(s, "SELECT COUNT(*) FROM t WHERE n = 7")), 1);
            for ix in ["bn", "ft"] {
                let r = q(s, &format!("CHECK INDEX {ix} ON t"));
                assert_eq!(r[0].last(), Some(&Value::Text("OK".into())), "{r:?}");
            }
        }
    }
}

/// How a step of the matrix is interrupted.
#[derive(Clone, Copy)]
enum Interrupt {
    /// `KILL QUERY` while the statement waits at the step.
    Kill,
    /// The process aborts at the step; the data directory is reopened.
    Crash,
}

/// KILL QUERY the statement while it waits at `point`: 1317 and nothing
/// changed before the commit; success and everything changed after it.
fn kill_at(ddl: Ddl, point: &str, after_commit: bool) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut admin = db.session();
    setup(&mut admin);
    global().add(point, ":::", "wait", 0, "", false).unwrap();
    let mut s = db.session();
    q(&mut s, "USE k");
    let id = s.connection_id();
    let h = thread::spawn(move || {
        let r = s.execute(ddl.sql()).map(|_| ());
        (r, s)
    });
    wait_waiters(point, WAIT);
    q(&mut admin, &format!("KILL QUERY {id}"));
    let (r, _s) = h.join().unwrap();
    remove_all_points();
    match (after_commit, r) {
        (false, Err(e)) => assert_eq!(e.code, 1317, "{ddl:?} at {point}: {e:?}"),
        (true, Ok(())) => {}
        (a, r) => panic!("{ddl:?} killed at {point} (after commit: {a}): {r:?}"),
    }
    ddl.settle(&mut admin, after_commit);
    db.shutdown();
}

/// Crash (`abort`) the process running the statement at `point`, then
/// open the data directory again: the old state before the commit, the
/// new one after it.
fn crash_at(ddl: Ddl, point: &str, after_commit: bool) {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open_with(dir.path(), cfg()).unwrap();
        setup(&mut db.session());
        db.shutdown();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_tributary"))
        .env("TRIBUTARY_FAULTS", format!("{point}=abort"))
        .env_remove("RUST_LOG")
        .args(["sql", "--allow-fault-injection", "--data"])
        .arg(dir.path())
        .args(["-e", &format!("USE k; {}", ddl.sql())])
        .output()
        .unwrap();
    assert!(
        !out.status.success() && out.status.code().is_none(),
        "{ddl:?}: the process was to abort at {point}: {:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    ddl.settle(&mut db.session(), after_commit);
    // Every dropped job generation reaches Canceled after the restart.
    wait_until("dropped jobs finalized", WAIT, || {
        db.engine()
            .iscp
            .read_jobs()
            .unwrap()
            .iter()
            .all(|j| j.drop_at.is_none() || j.state == tributary::testing::JobState::Canceled)
    });
    db.shutdown();
}

/// Interrupt `ddl` at each of its steps in turn, each on a new database.
fn matrix(ddl: Ddl, how: Interrupt) {
    let _g = FaultGuard::enable();
    let steps = ddl.steps();
    let last = steps.len() - 1;
    for (i, point) in steps.iter().enumerate() {
        match how {
            Interrupt::Kill => kill_at(ddl, point, i == last),
            Interrupt::Crash => crash_at(ddl, point, i == last),
        }
    }
}

/// One test per statement and interrupt: `killed, crashed: statement;`.
macro_rules! matrix_rows {
    ($($killed:ident, $crashed:ident: $ddl:expr;)*) => {$(
        #[test]
        fn $killed() {
            matrix($ddl, Interrupt::Kill);
        }

        #[test]
        fn $crashed() {
            matrix($ddl, Interrupt::Crash);
        }
    )*};
}

matrix_rows! {
    alter_modify_under_a_fulltext_index_killed_at_each_step,
    alter_modify_under_a_fulltext_index_crashed_at_each_step: Ddl::AlterModify;
    create_index_killed_at_each_step, create_index_crashed_at_each_step: Ddl::CreateIndex;
    rename_killed_at_each_step, rename_crashed_at_each_step: Ddl::Rename;
    truncate_killed_at_each_step, truncate_crashed_at_each_step: Ddl::Truncate;
}

/// An ALTER whose rebuilt index cannot exist in the new form (a full-text
/// column converted to INT) fails whole: before, it committed the column
/// change and then reported the index failure.
#[test]
fn alter_that_cannot_rebuild_its_index_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    setup(&mut s);
    q(&mut s, "UPDATE t SET body = CAST(id AS CHAR)");
    let e = s
        .execute("ALTER TABLE t MODIFY body INT")
        .expect_err("a FULLTEXT index cannot cover an INT column");
    assert_ne!(e.code, 1317);
    let ty = q(
        &mut s,
        "SELECT DATA_TYPE FROM information_schema.COLUMNS WHERE TABLE_NAME = 't' AND COLUMN_NAME = 'body'",
    );
    assert_eq!(ty, vec![vec![Value::Text("text".into())]]);
    assert_eq!(
        int(&q(
            &mut s,
            "SELECT COUNT(*) FROM t WHERE MATCH(body) AGAINST('1500')"
        )),
        1
    );
    db.shutdown();
}

/// An ALTER that converts the indexed column and renames the table in one
/// statement: the rebuilt index's job records the new name, and the index
/// answers under it (also after a restart).
#[test]
fn alter_modify_and_rename_rebuilds_under_the_new_name() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Database::open_with(dir.path(), cfg()).unwrap();
        let mut s = db.session();
        setup(&mut s);
        q(
            &mut s,
            "ALTER TABLE t MODIFY body VARCHAR(200), RENAME TO t3",
        );
        assert_eq!(
            int(&q(
                &mut s,
                "SELECT COUNT(*) FROM t3 WHERE MATCH(body) AGAINST('apple')"
            )),
            ROWS / 3
        );
        db.shutdown();
    }
    let db = Database::open_with(dir.path(), cfg()).unwrap();
    let mut s = db.session();
    q(&mut s, "USE k");
    assert_eq!(
        int(&q(
            &mut s,
            "SELECT COUNT(*) FROM t3 WHERE MATCH(body) AGAINST('apple')"
        )),
        ROWS / 3
    );
    let r = q(&mut s, "CHECK INDEX ft ON t3");
    assert_eq!(r[0].last(), Some(&Value::Text("OK".into())), "{r:?}");
    let live: Vec<_> = db
        .engine()
        .iscp
        .read_jobs()
        .unwrap()
        .into_iter()
        .filter(|j| j.drop_at.is_none())
        .collect();
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(live[0].spec.table, "t3");
    db.shutdown();
}
