//! Every action, targeting, frequency windows, probability repeatability, the disabled
//! fast path and `trigger`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::time::{Duration, Instant};

use tributary_fault::{CancellationToken, FaultError, FaultHit, FaultRegistry};

fn enabled() -> FaultRegistry {
    let r = FaultRegistry::new();
    assert!(r.enable());
    r
}

fn fired(r: &FaultRegistry, name: &str, target: Option<&str>) -> bool {
    r.hit_blocking(name, target, None).unwrap().is_some()
}

#[test]
fn disabled_and_unarmed_hits_return_none() {
    let r = FaultRegistry::new();
    assert_eq!(r.hit_blocking("fj/a", None, None), Ok(None));
    r.enable();
    assert_eq!(r.hit_blocking("fj/a", Some("idx"), None), Ok(None));
    r.add("fj/other", ":::", "return", 0, "", false).unwrap();
    assert_eq!(r.hit_blocking("fj/a", None, None), Ok(None));
    r.disable();
    assert_eq!(r.hit_blocking("fj/other", None, None), Ok(None));
}

#[tokio::test]
async fn disabled_async_hit_returns_none() {
    let r = FaultRegistry::new();
    let t = CancellationToken::new();
    assert_eq!(r.hit("fj/a", None, &t).await, Ok(None));
}

#[tokio::test]
async fn echo_returns_args_sync_and_async() {
    let r = enabled();
    r.add("fj/echo", ":::", "ECHO", 42, "hello", false).unwrap();
    let want = Some(FaultHit {
        iarg: 42,
        sarg: "hello".into(),
    });
    assert_eq!(r.hit_blocking("fj/echo", None, None), Ok(want.clone()));
    assert_eq!(
        r.hit("fj/echo", None, &CancellationToken::new()).await,
        Ok(want)
    );
}

#[tokio::test]
async fn return_injects_a_typed_error() {
    let r = enabled();
    r.add("fj/ret", ":::", "return", 0, "boom", false).unwrap();
    let err = r.hit_blocking("fj/ret", None, None).unwrap_err();
    assert_eq!(
        err,
        FaultError::Injected {
            point: "fj/ret".into(),
            message: "boom".into()
        }
    );
    let text = err.to_string();
    assert!(
        text.contains("injected") && text.contains("fj/ret"),
        "{text}"
    );

    r.add("fj/ret2:idx01", ":::", "Return", 0, "", false)
        .unwrap();
    let err = r
        .hit("fj/ret2", Some("idx01"), &CancellationToken::new())
        .await
        .unwrap_err();
    assert_eq!(
        err,
        FaultError::Injected {
            point: "fj/ret2:idx01".into(),
            message: "injected fault at fj/ret2:idx01".into()
        }
    );
}

#[test]
fn panic_panics_with_sarg() {
    let r = enabled();
    r.add("fj/panic", ":::", "panic", 0, "kaboom", false)
        .unwrap();
    let res = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        r.hit_blocking("fj/panic", None, None)
    }));
    let payload = res.unwrap_err();
    let msg = payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap();
    assert_eq!(msg, "kaboom");
    // The registry is still usable after the panic.
    assert_eq!(r.list()[0].hits, 1);
}

/// Child half of `abort_kills_the_process`: does nothing unless the parent set the env.
#[test]
fn abort_child_process() {
    if std::env::var("TRIBUTARY_FAULT_ABORT_CHILD").is_err() {
        return;
    }
    let r = enabled();
    r.add("fj/abort", ":::", "abort", 0, "", false).unwrap();
    let _ = r.hit_blocking("fj/abort", None, None);
    // Reaching this line means abort did not abort: exit with a distinctive code.
    std::process::exit(17);
}

#[test]
fn abort_kills_the_process() {
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "abort_child_process", "--test-threads=1"])
        .env("TRIBUTARY_FAULT_ABORT_CHILD", "1")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert_ne!(out.status.code(), Some(17), "abort action returned");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(6), "expected SIGABRT: {out:?}");
    }
}

#[test]
fn getcount_own_and_named() {
    let r = enabled();
    r.add("fj/counted", ":::", "echo", 0, "", false).unwrap();
    r.add("fj/count-own", ":::", "getcount", 0, "", false)
        .unwrap();
    r.add("fj/count-other", ":::", "getcount", 0, "fj/counted", false)
        .unwrap();
    for _ in 0..3 {
        fired(&r, "fj/counted", None);
    }
    let own = |r: &FaultRegistry| {
        r.hit_blocking("fj/count-own", None, None)
            .unwrap()
            .unwrap()
            .iarg
    };
    assert_eq!(own(&r), 1);
    assert_eq!(own(&r), 2);
    let other = r
        .hit_blocking("fj/count-other", None, None)
        .unwrap()
        .unwrap();
    assert_eq!(other.iarg, 3);
    assert_eq!(other.sarg, "fj/counted");
    // Hits are counted even when the window does not fire.
    r.add("fj/late", "5:::", "echo", 0, "", false).unwrap();
    r.add("fj/count-late", ":::", "getcount", 0, "fj/late", false)
        .unwrap();
    assert!(!fired(&r, "fj/late", None));
    assert!(!fired(&r, "fj/late", None));
    assert_eq!(
        r.hit_blocking("fj/count-late", None, None)
            .unwrap()
            .unwrap()
            .iarg,
        2
    );
    // Unknown point counts as 0.
    r.add("fj/count-none", ":::", "getcount", 0, "fj/nope", false)
        .unwrap();
    assert_eq!(
        r.hit_blocking("fj/count-none", None, None)
            .unwrap()
            .unwrap()
            .iarg,
        0
    );
}

#[test]
fn sleep_sleeps_iarg_seconds() {
    let r = enabled();
    r.add("fj/sleep", ":::", "sleep", 1, "", false).unwrap();
    let t0 = Instant::now();
    let hit = r.hit_blocking("fj/sleep", None, None).unwrap().unwrap();
    assert!(t0.elapsed() >= Duration::from_secs(1));
    assert_eq!(hit.iarg, 1);
    r.add("fj/sleep0", ":::", "sleep", 0, "", false).unwrap();
    assert!(fired(&r, "fj/sleep0", None));
}

#[tokio::test]
async fn async_sleep_sleeps_iarg_seconds() {
    let r = enabled();
    r.add("fj/sleep", ":::", "sleep", 1, "", false).unwrap();
    let t0 = Instant::now();
    let hit = r.hit("fj/sleep", None, &CancellationToken::new()).await;
    assert!(hit.unwrap().is_some());
    assert!(t0.elapsed() >= Duration::from_secs(1));
}

#[test]
fn targeting() {
    let r = enabled();
    r.add("fj/p:idx01", ":::", "echo", 1, "targeted", false)
        .unwrap();
    assert!(fired(&r, "fj/p", Some("idx01")));
    assert!(!fired(&r, "fj/p", Some("idx02")));
    assert!(!fired(&r, "fj/p", None));

    r.add("fj/q", ":::", "echo", 2, "any", false).unwrap();
    assert!(fired(&r, "fj/q", Some("idx01")));
    assert!(fired(&r, "fj/q", Some("idx02")));
    assert!(fired(&r, "fj/q", None));

    // Both armed: the targeted point takes the hit for its target, the untargeted
    // point takes every other hit.
    r.add("fj/p", ":::", "echo", 3, "any", false).unwrap();
    let got = |t| r.hit_blocking("fj/p", t, None).unwrap().unwrap().sarg;
    assert_eq!(got(Some("idx01")), "targeted");
    assert_eq!(got(Some("idx02")), "any");
    assert_eq!(got(None), "any");
    let infos = r.list();
    let p = infos.iter().find(|i| i.key() == "fj/p").unwrap();
    let p1 = infos.iter().find(|i| i.key() == "fj/p:idx01").unwrap();
    assert_eq!((p.hits, p1.hits), (2, 2));
}

#[test]
fn frequency_windows() {
    let r = enabled();
    let window = |freq: &str, hits: u64| -> Vec<u64> {
        r.add("fj/w", freq, "echo", 0, "", false).unwrap();
        let mut which = Vec::new();
        for n in 1..=hits {
            if fired(&r, "fj/w", None) {
                which.push(n);
            }
        }
        which
    };
    assert_eq!(window("3:8:2:", 10), vec![3, 5, 7]);
    assert_eq!(window("1:1::", 4), vec![1]);
    assert_eq!(window("1:1:1:", 4), vec![1]);
    assert_eq!(window(":::", 4), vec![1, 2, 3, 4]);
    assert_eq!(window("", 3), vec![1, 2, 3]);
    assert_eq!(window(":3::", 6), vec![1, 2, 3]);
    assert_eq!(window("5:::", 7), vec![5, 6, 7]);
}

fn fire_indices(seed: u64) -> Vec<u64> {
    let r = FaultRegistry::new();
    r.enable();
    r.set_seed(seed);
    r.add("fj/prob", ":::0.3", "echo", 0, "", false).unwrap();
    let mut out = Vec::new();
    for n in 1..=200 {
        if r.hit_blocking("fj/prob", None, None).unwrap().is_some() {
            out.push(n);
        }
    }
    out
}

#[test]
fn probability_is_repeatable_with_a_seed() {
    let a = fire_indices(7);
    assert_eq!(a, fire_indices(7));
    assert_ne!(a, fire_indices(8));
    assert!(a.len() > 30 && a.len() < 100, "{} of 200 fired", a.len());
}

#[test]
fn trigger_counts_and_runs_the_action() {
    let r = enabled();
    r.add("fj/t", "2:::", "return", 0, "no", false).unwrap();
    assert_eq!(r.trigger("fj/t"), Ok(1));
    assert!(matches!(
        r.trigger("fj/t"),
        Err(FaultError::Injected { .. })
    ));
    assert_eq!(r.list()[0].hits, 2);
    r.add("fj/t2:idx01", ":::", "echo", 0, "", false).unwrap();
    assert_eq!(r.trigger("fj/t2:idx01"), Ok(1));
    assert_eq!(
        r.trigger("fj/t2"),
        Err(FaultError::NotFound("fj/t2".into()))
    );
}

#[test]
fn notify_and_getwaiters_on_unknown_points_are_harmless() {
    let r = enabled();
    r.add("fj/n", ":::", "notify", 0, "fj/none", false).unwrap();
    r.add("fj/na", ":::", "notifyall", 0, "fj/none", false)
        .unwrap();
    r.add("fj/gw", ":::", "getwaiters", 0, "fj/none", false)
        .unwrap();
    for p in ["fj/n", "fj/na", "fj/gw"] {
        assert_eq!(r.hit_blocking(p, None, None).unwrap().unwrap().iarg, 0);
    }
}
