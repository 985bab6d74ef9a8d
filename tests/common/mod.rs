//! Helpers shared by the integration tests: the fast test configuration and
//! a condition wait with a deadline (never a fixed sleep).

#![allow(dead_code)] // each test binary uses a subset

use std::time::{Duration, Instant};

use tributary::Config;

/// Milliseconds.
pub fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// The default test configuration: fast ticks, bounded DROP wait, short
/// retry backoff.
pub fn cfg() -> Config {
    Config {
        iscp_interval: ms(20),
        drop_wait: Duration::from_secs(5),
        iscp_retry_base: ms(50),
        iscp_retry_cap: ms(500),
        ..Default::default()
    }
}

/// Poll `cond` every few ms until it holds; panics after `timeout`.
pub fn wait_until(what: &str, timeout: Duration, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    loop {
        if cond() {
            return;
        }
        let now = Instant::now();
        assert!(
            now < deadline,
            "timed out after {timeout:?} waiting for: {what}"
        );
        std::thread::park_timeout((deadline - now).min(ms(5)));
    }
}
