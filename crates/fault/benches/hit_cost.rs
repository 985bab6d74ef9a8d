//! Cost of a fault-point hit: disarmed (the production case) and with some other point
//! armed (the lookup path). Run with `cargo bench -p tributary-fault`; set
//! `HIT_COST_ITERS` to change the iteration count (default 100M for the disarmed case,
//! a tenth of that for the armed-other case).

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

use std::future::Future;
use std::hint::black_box;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use std::time::Instant;

use tributary_fault::{CancellationToken, FaultRegistry};

const POINT: &str = "fj/iscp/cancel/long/before-send";

fn measure(label: &str, iters: u64, mut f: impl FnMut()) {
    // Warm-up.
    for _ in 0..iters.min(1_000_000) {
        f();
    }
    let t0 = Instant::now();
    for _ in 0..iters {
        f();
    }
    let ns = t0.elapsed().as_nanos() as f64 / iters as f64;
    println!("{label:<40} {ns:>8.3} ns/hit  ({iters} iterations)");
}

fn main() {
    let iters: u64 = std::env::var("HIT_COST_ITERS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000_000);
    let reg = FaultRegistry::new();
    let cancel = CancellationToken::new();

    measure("hit_blocking, disabled", iters, || {
        let r = reg.hit_blocking(black_box(POINT), black_box(Some("idx01")), None);
        black_box(r).ok();
    });

    let mut cx = Context::from_waker(Waker::noop());
    measure("hit (async, polled once), disabled", iters, || {
        let fut = pin!(reg.hit(black_box(POINT), black_box(Some("idx01")), &cancel));
        if let Poll::Ready(r) = fut.poll(&mut cx) {
            black_box(r).ok();
        }
    });

    reg.enable();
    measure("hit_blocking, enabled, nothing armed", iters, || {
        let r = reg.hit_blocking(black_box(POINT), black_box(None), None);
        black_box(r).ok();
    });

    if reg
        .add("fj/iscp/cancel/after-submit", ":::", "echo", 0, "", false)
        .is_err()
    {
        eprintln!("could not arm the other point");
        return;
    }
    measure("hit_blocking, other point armed", iters / 10, || {
        let r = reg.hit_blocking(black_box(POINT), black_box(Some("idx01")), None);
        black_box(r).ok();
    });
    reg.disable();
}
