//! Shared helpers for the integration tests: bounded condition waits, no sleeps as
//! synchronisation.
#![allow(dead_code)]

use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Generous bound for "this must happen": failing tests fail, passing ones are fast.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// Polls `cond` until it holds, panicking after `DEADLINE`.
pub fn wait_until(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for: {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Async variant of [`wait_until`].
pub async fn wait_until_async(what: &str, mut cond: impl FnMut() -> bool) {
    let end = Instant::now() + DEADLINE;
    while !cond() {
        assert!(Instant::now() < end, "timed out waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
}

/// Runs `f` on a thread and returns a receiver for its result.
pub fn spawn<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> mpsc::Receiver<T> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx
}

/// Receives within `DEADLINE` or panics with `what`.
pub fn recv<T>(rx: &mpsc::Receiver<T>, what: &str) -> T {
    match rx.recv_timeout(DEADLINE) {
        Ok(v) => v,
        Err(e) => panic!("{what}: {e}"),
    }
}

/// Asserts that nothing arrives for a short while (used to check a waiter is still
/// blocked; a wrong release would show up here).
pub fn assert_pending<T: std::fmt::Debug>(rx: &mpsc::Receiver<T>, what: &str) {
    if let Ok(v) = rx.recv_timeout(Duration::from_millis(50)) {
        panic!("{what}: expected still blocked, got {v:?}");
    }
}
