//! User-level locks between sessions (issue 42: migration tools take them):
//! a lock one session holds is busy for the others, a waiting GET_LOCK
//! takes it as soon as it is released or its holder's session ends, times
//! out with 0, and ends at once on KILL QUERY (1317). Waits are observed
//! through the process list, never by sleeping.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::thread;
use std::time::Duration;

use common::{err, q, wait_until};
use tributary::{Database, Value};

const WAIT: Duration = Duration::from_secs(30);

fn one(s: &mut tributary::Session, sql: &str) -> Value {
    q(s, sql).remove(0).remove(0)
}

/// Wait until connection `id` runs `sql`.
fn wait_running(admin: &mut tributary::Session, id: u32, sql: &str) {
    let probe = format!("SELECT INFO FROM information_schema.PROCESSLIST WHERE ID = {id}");
    wait_until(&format!("connection {id} running `{sql}`"), WAIT, || {
        q(admin, &probe) == vec![vec![Value::Text(sql.to_string())]]
    });
}

#[test]
fn a_lock_is_one_sessions_until_released_or_its_session_ends() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut a = db.session();
    let mut b = db.session();
    let mut admin = db.session();
    assert_eq!(one(&mut a, "SELECT GET_LOCK('mig', 0)"), Value::Int(1));
    assert_eq!(one(&mut b, "SELECT GET_LOCK('MIG', 0)"), Value::Int(0));
    assert_eq!(one(&mut b, "SELECT IS_FREE_LOCK('mig')"), Value::Int(0));
    // Held by another session: 0, and it stays held.
    assert_eq!(one(&mut b, "SELECT RELEASE_LOCK('mig')"), Value::Int(0));
    assert_eq!(one(&mut b, "SELECT GET_LOCK('mig', 0.05)"), Value::Int(0));

    // B waits; A releases; B has it.
    let b_id = b.connection_id();
    let sql = "SELECT GET_LOCK('mig', 20)";
    let waiter = thread::spawn(move || {
        let v = one(&mut b, sql);
        (v, b)
    });
    wait_running(&mut admin, b_id, sql);
    assert_eq!(one(&mut a, "SELECT RELEASE_LOCK('mig')"), Value::Int(1));
    let (v, b) = waiter.join().unwrap();
    assert_eq!(v, Value::Int(1));
    assert_eq!(one(&mut a, "SELECT IS_FREE_LOCK('mig')"), Value::Int(0));
    // The holder's session ends: the lock is free.
    drop(b);
    assert_eq!(one(&mut a, "SELECT IS_FREE_LOCK('mig')"), Value::Int(1));
    assert_eq!(one(&mut a, "SELECT GET_LOCK('mig', 0)"), Value::Int(1));
}

#[test]
fn a_waiting_get_lock_ends_on_kill() {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path()).unwrap();
    let mut a = db.session();
    let mut b = db.session();
    let mut admin = db.session();
    assert_eq!(one(&mut a, "SELECT GET_LOCK('k', 0)"), Value::Int(1));
    let b_id = b.connection_id();
    // A negative timeout waits without end.
    let sql = "SELECT GET_LOCK('k', -1)";
    let waiter = thread::spawn(move || {
        let e = err(&mut b, sql);
        (e, b)
    });
    wait_running(&mut admin, b_id, sql);
    q(&mut admin, &format!("KILL QUERY {b_id}"));
    let (e, mut b) = waiter.join().unwrap();
    assert_eq!(e.code, 1317, "{e:?}");
    // Still A's; B's session goes on.
    assert_eq!(one(&mut b, "SELECT IS_FREE_LOCK('k')"), Value::Int(0));
}
