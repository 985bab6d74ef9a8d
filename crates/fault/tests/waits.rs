//! WAIT / SLEEP semantics: cancellation, removal, notify vs notifyall, per-waiter wake
//! tokens, the remove-before-registration race (sync and async) and concurrency.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use common::{assert_pending, recv, spawn, wait_until, wait_until_async, DEADLINE};
use tributary_fault::{CancellationToken, FaultError, FaultRegistry};

fn enabled() -> Arc<FaultRegistry> {
    let r = Arc::new(FaultRegistry::new());
    r.enable();
    r
}

fn waiters(r: &FaultRegistry, key: &str) -> usize {
    r.list()
        .iter()
        .find(|i| i.key() == key)
        .map_or(0, |i| i.waiters)
}

fn spawn_waiter(
    r: &Arc<FaultRegistry>,
    name: &'static str,
    target: Option<&'static str>,
    cancel: Option<CancellationToken>,
) -> std::sync::mpsc::Receiver<Result<bool, FaultError>> {
    let r = r.clone();
    spawn(move || {
        r.hit_blocking(name, target, cancel.as_ref())
            .map(|h| h.is_some())
    })
}

#[test]
fn cancel_during_sync_sleep_returns_quickly() {
    let r = enabled();
    r.add("fj/s", ":::", "sleep", 30, "", false).unwrap();
    let token = CancellationToken::new();
    let rx = spawn_waiter(&r, "fj/s", None, Some(token.clone()));
    wait_until("sleeper counted", || r.list()[0].hits == 1);
    let t0 = Instant::now();
    token.cancel();
    let res = recv(&rx, "sleeper returned");
    assert!(t0.elapsed() < Duration::from_secs(2), "{:?}", t0.elapsed());
    assert_eq!(
        res,
        Err(FaultError::Canceled {
            point: "fj/s".into()
        })
    );
}

#[tokio::test]
async fn cancel_during_async_sleep_returns_quickly() {
    let r = enabled();
    r.add("fj/s:idx01", ":::", "sleep", 30, "", false).unwrap();
    let token = CancellationToken::new();
    let (r2, t2) = (r.clone(), token.clone());
    let task = tokio::spawn(async move { r2.hit("fj/s", Some("idx01"), &t2).await });
    wait_until_async("sleeper counted", || r.list()[0].hits == 1).await;
    let t0 = Instant::now();
    token.cancel();
    let res = tokio::time::timeout(DEADLINE, task).await.unwrap().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert!(matches!(res, Err(FaultError::Canceled { point }) if point == "fj/s:idx01"));
}

#[test]
fn removing_a_sleep_point_ends_the_sleep() {
    let r = enabled();
    r.add("fj/s", ":::", "sleep", 30, "", false).unwrap();
    let rx = spawn_waiter(&r, "fj/s", None, None);
    wait_until("sleeper counted", || r.list()[0].hits == 1);
    assert!(r.remove("fj/s").unwrap());
    assert_eq!(recv(&rx, "sleeper released"), Ok(true));
}

#[test]
fn already_cancelled_token_skips_the_stall() {
    let r = enabled();
    r.add("fj/s", ":::", "sleep", 30, "", false).unwrap();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    let t = CancellationToken::new();
    t.cancel();
    assert!(matches!(
        r.hit_blocking("fj/s", None, Some(&t)),
        Err(FaultError::Canceled { .. })
    ));
    assert!(matches!(
        r.hit_blocking("fj/w", None, Some(&t)),
        Err(FaultError::Canceled { .. })
    ));
    assert_eq!(waiters(&r, "fj/w"), 0);
}

#[test]
fn cancel_during_sync_wait() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    let token = CancellationToken::new();
    let rx = spawn_waiter(&r, "fj/w", None, Some(token.clone()));
    wait_until("waiter registered", || waiters(&r, "fj/w") == 1);
    assert_pending(&rx, "waiter");
    token.cancel();
    assert!(matches!(
        recv(&rx, "waiter returned"),
        Err(FaultError::Canceled { .. })
    ));
    assert_eq!(waiters(&r, "fj/w"), 0);
}

#[tokio::test]
async fn cancel_during_async_wait() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    let token = CancellationToken::new();
    let (r2, t2) = (r.clone(), token.clone());
    let task = tokio::spawn(async move { r2.hit("fj/w", None, &t2).await });
    wait_until_async("waiter registered", || waiters(&r, "fj/w") == 1).await;
    token.cancel();
    let res = tokio::time::timeout(DEADLINE, task).await.unwrap().unwrap();
    assert!(matches!(res, Err(FaultError::Canceled { .. })));
    assert_eq!(waiters(&r, "fj/w"), 0);
}

#[tokio::test]
async fn dropped_async_waiter_deregisters() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    let (r2, t2) = (r.clone(), CancellationToken::new());
    let task = tokio::spawn(async move { r2.hit("fj/w", None, &t2).await });
    wait_until_async("waiter registered", || waiters(&r, "fj/w") == 1).await;
    task.abort();
    let _ = task.await;
    assert_eq!(waiters(&r, "fj/w"), 0);
}

#[tokio::test]
async fn remove_wakes_sync_and_async_waiters() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    let sync_rx: Vec<_> = (0..2)
        .map(|_| spawn_waiter(&r, "fj/w", None, Some(CancellationToken::new())))
        .collect();
    let plain_rx = spawn_waiter(&r, "fj/w", None, None);
    let mut tasks = Vec::new();
    for _ in 0..2 {
        let r2 = r.clone();
        tasks.push(tokio::spawn(async move {
            r2.hit("fj/w", None, &CancellationToken::new()).await
        }));
    }
    wait_until_async("5 waiters", || waiters(&r, "fj/w") == 5).await;
    assert!(r.remove("fj/w").unwrap());
    for rx in sync_rx.iter().chain([&plain_rx]) {
        assert_eq!(recv(rx, "sync waiter released"), Ok(true));
    }
    for t in tasks {
        let res = tokio::time::timeout(DEADLINE, t).await.unwrap().unwrap();
        assert!(res.unwrap().is_some());
    }
}

#[test]
fn notify_wakes_one_notifyall_wakes_all() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    r.add("fj/n", ":::", "notify", 0, "fj/w", false).unwrap();
    r.add("fj/na", ":::", "NOTIFYALL", 0, "fj/w", false)
        .unwrap();
    r.add("fj/gw", ":::", "getwaiters", 0, "fj/w", false)
        .unwrap();
    let gw = |r: &FaultRegistry| r.hit_blocking("fj/gw", None, None).unwrap().unwrap().iarg;
    let rxs: Vec<_> = (0..3)
        .map(|i| {
            let cancel = (i % 2 == 0).then(CancellationToken::new);
            spawn_waiter(&r, "fj/w", None, cancel)
        })
        .collect();
    wait_until("3 waiters", || gw(&r) == 3);
    assert_eq!(r.hit_blocking("fj/n", None, None).unwrap().unwrap().iarg, 1);
    assert_eq!(gw(&r), 2);
    // Exactly one waiter returns.
    let mut released = 0;
    let deadline = Instant::now() + DEADLINE;
    while released == 0 {
        assert!(Instant::now() < deadline, "nobody was released by notify");
        released += rxs.iter().filter(|rx| rx.try_recv().is_ok()).count();
        std::thread::yield_now();
    }
    assert_eq!(released, 1);
    for rx in &rxs {
        let _ = rx; // the other two must still block
    }
    assert_eq!(gw(&r), 2);
    assert_eq!(
        r.hit_blocking("fj/na", None, None).unwrap().unwrap().iarg,
        2
    );
    let mut rest = 0;
    for rx in &rxs {
        if rx.recv_timeout(DEADLINE).is_ok() {
            rest += 1;
        }
        if rest == 2 {
            break;
        }
    }
    assert_eq!(rest, 2);
    assert_eq!(gw(&r), 0);
    // The point itself stays armed after notifications.
    assert_eq!(r.armed_count(), 4);
}

#[test]
fn cancelling_one_waiter_does_not_release_the_others() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    r.add("fj/gw", ":::", "getwaiters", 0, "fj/w", false)
        .unwrap();
    let gw = |r: &FaultRegistry| r.hit_blocking("fj/gw", None, None).unwrap().unwrap().iarg;
    let (ta, tb) = (CancellationToken::new(), CancellationToken::new());
    let a = spawn_waiter(&r, "fj/w", None, Some(ta.clone()));
    wait_until("a registered", || gw(&r) == 1);
    let b = spawn_waiter(&r, "fj/w", None, Some(tb.clone()));
    wait_until("2 waiters", || gw(&r) == 2);
    ta.cancel();
    assert!(matches!(recv(&a, "a"), Err(FaultError::Canceled { .. })));
    assert_eq!(gw(&r), 1);
    assert_pending(&b, "b after a's cancel");
    r.remove("fj/w").unwrap();
    assert_eq!(recv(&b, "b"), Ok(true));
}

/// Reviewer P2 in the seed: a NOTIFY followed by a cancellation must not release
/// unrelated waiters (wake tokens are per waiter, not a shared sequence number).
#[test]
fn notify_then_cancel_releases_nobody_else() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    r.add("fj/n", ":::", "notify", 0, "fj/w", false).unwrap();
    let tokens: Vec<_> = (0..3).map(|_| CancellationToken::new()).collect();
    let mut rxs = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        rxs.push(spawn_waiter(&r, "fj/w", None, Some(t.clone())));
        wait_until("waiter registered", || waiters(&r, "fj/w") == i + 1);
    }
    // The oldest waiter is notified.
    assert_eq!(r.hit_blocking("fj/n", None, None).unwrap().unwrap().iarg, 1);
    assert_eq!(recv(&rxs[0], "first waiter notified"), Ok(true));
    // Cancelling the second must release only the second.
    tokens[1].cancel();
    assert!(matches!(
        recv(&rxs[1], "second"),
        Err(FaultError::Canceled { .. })
    ));
    assert_pending(&rxs[2], "third waiter");
    assert_eq!(waiters(&r, "fj/w"), 1);
    r.remove("fj/w").unwrap();
    assert_eq!(recv(&rxs[2], "third"), Ok(true));
}

#[tokio::test]
async fn notifyall_releases_async_waiters() {
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    r.add("fj/na", ":::", "notifyall", 0, "fj/w", false)
        .unwrap();
    let mut tasks = Vec::new();
    for _ in 0..3 {
        let r2 = r.clone();
        tasks.push(tokio::spawn(async move {
            r2.hit("fj/w", None, &CancellationToken::new()).await
        }));
    }
    wait_until_async("3 waiters", || waiters(&r, "fj/w") == 3).await;
    let woken = r
        .hit("fj/na", None, &CancellationToken::new())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(woken.iarg, 3);
    for t in tasks {
        assert!(tokio::time::timeout(DEADLINE, t)
            .await
            .unwrap()
            .unwrap()
            .unwrap()
            .is_some());
    }
}

#[test]
fn waits_work_from_spawn_blocking() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let r = enabled();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    let r2 = r.clone();
    let h = rt.spawn_blocking(move || r2.hit_blocking("fj/w", None, None));
    wait_until("blocking waiter registered", || waiters(&r, "fj/w") == 1);
    r.remove("fj/w").unwrap();
    let res = rt.block_on(async { tokio::time::timeout(DEADLINE, h).await });
    assert!(res.unwrap().unwrap().unwrap().is_some());
}

/// Arms `wait` on `key` and installs a hook that runs `act` between dispatch (point
/// looked up, hit counted) and waiter registration — the seed's race window.
fn arm_race(r: &Arc<FaultRegistry>, key: &str, act: fn(&FaultRegistry, &str)) {
    r.add(key, ":::", "wait", 0, "", false).unwrap();
    let weak: Weak<FaultRegistry> = Arc::downgrade(r);
    r.set_dispatch_hook(Some(Arc::new(move |point: &str| {
        if let Some(r) = weak.upgrade() {
            act(&r, point);
        }
    })));
}

fn remove_point(r: &FaultRegistry, point: &str) {
    assert!(r.remove(point).unwrap());
}

fn replace_point(r: &FaultRegistry, point: &str) {
    r.add(point, ":::", "echo", 0, "", false).unwrap();
}

fn disable_all(r: &FaultRegistry, _point: &str) {
    assert!(r.disable());
}

#[test]
fn remove_between_dispatch_and_registration_does_not_hang_sync() {
    for (act, name) in [
        (remove_point as fn(&FaultRegistry, &str), "remove"),
        (replace_point, "replace"),
        (disable_all, "disable"),
    ] {
        for cancellable in [false, true] {
            let r = enabled();
            arm_race(&r, "fj/race", act);
            let cancel = cancellable.then(CancellationToken::new);
            let rx = spawn_waiter(&r, "fj/race", None, cancel);
            assert_eq!(
                recv(
                    &rx,
                    &format!("{name} (cancellable={cancellable}) left the waiter blocked")
                ),
                Ok(true)
            );
            r.set_dispatch_hook(None);
        }
    }
}

#[tokio::test]
async fn remove_between_dispatch_and_registration_does_not_hang_async() {
    for act in [
        remove_point as fn(&FaultRegistry, &str),
        replace_point,
        disable_all,
    ] {
        let r = enabled();
        arm_race(&r, "fj/race:idx01", act);
        let res = tokio::time::timeout(
            DEADLINE,
            r.hit("fj/race", Some("idx01"), &CancellationToken::new()),
        )
        .await
        .expect("async waiter hung after REMOVE between dispatch and registration");
        assert!(res.unwrap().is_some());
        r.set_dispatch_hook(None);
    }
}

#[test]
fn concurrent_arm_remove_notify_and_hits() {
    let r = enabled();
    let stop = CancellationToken::new();
    let mut handles = Vec::new();
    // Hitters: wait (cancellable and not), echo, return.
    for i in 0..6 {
        let (r, stop) = (r.clone(), stop.clone());
        handles.push(std::thread::spawn(move || {
            let token = CancellationToken::new();
            let mut n = 0u64;
            while !stop.is_cancelled() {
                let cancel = (i % 2 == 0).then_some(&token);
                let _ = r.hit_blocking("fj/c/wait", Some("idx01"), cancel);
                let _ = r.hit_blocking("fj/c/echo", None, None);
                n += 1;
            }
            n
        }));
    }
    // Armers / removers / notifiers.
    for i in 0..4 {
        let (r, stop) = (r.clone(), stop.clone());
        handles.push(std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.is_cancelled() {
                match (n + i) % 5 {
                    0 => {
                        let _ = r.add("fj/c/wait", ":::", "wait", 0, "", false);
                    }
                    1 => {
                        let _ = r.add("fj/c/wait:idx01", "::2:", "wait", 0, "", false);
                    }
                    2 => {
                        let _ = r.remove("fj/c/wait");
                        let _ = r.add("fj/c/n", ":::", "notifyall", 0, "fj/c/wait:idx01", false);
                        let _ = r.hit_blocking("fj/c/n", None, None);
                    }
                    3 => {
                        let _ = r.remove("fj/c/wait:idx01");
                        let _ = r.add("fj/c/echo", ":::", "echo", 1, "x", false);
                    }
                    _ => {
                        let _ = r.remove("all");
                    }
                }
                n += 1;
            }
            n
        }));
    }
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(300) {
        std::thread::yield_now();
        // Sample the table under load; it must always be self-consistent.
        let l = r.list();
        assert!(l.len() <= 4, "{l:?}");
    }
    stop.cancel();
    // Releases anybody still waiting; afterwards no hit can block.
    r.disable();
    let joined = spawn(move || {
        // Join every thread (no short-circuit), then report whether all were fine.
        let results: Vec<bool> = handles.into_iter().map(|h| h.join().is_ok()).collect();
        results.iter().all(|ok| *ok)
    });
    assert!(
        recv(&joined, "threads stuck after disable()"),
        "a thread panicked"
    );
    assert_eq!(r.armed_count(), 0);
    assert!(r.list().is_empty());
}
