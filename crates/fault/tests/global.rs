//! The process-global registry, the free call-site functions and the test helpers.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::time::Duration;

use common::{recv, spawn, wait_until};
use tributary_fault::{
    armed_count, assert_no_armed_points, global, points, CancellationToken, FaultError, FaultGuard,
    FaultHit,
};

#[tokio::test]
async fn free_functions_use_the_global_registry() {
    let guard = FaultGuard::enable();
    assert!(guard.registry().is_enabled());
    global()
        .add(points::ISCP_LONG_BEFORE_SEND, ":::", "echo", 7, "x", false)
        .unwrap();
    let cancel = CancellationToken::new();
    assert_eq!(
        tributary_fault::hit(points::ISCP_LONG_BEFORE_SEND, Some("idx01"), &cancel).await,
        Ok(Some(FaultHit {
            iarg: 7,
            sarg: "x".into()
        }))
    );
    assert_eq!(
        tributary_fault::hit_blocking(points::ISCP_AFTER_SUBMIT, None, None),
        Ok(None)
    );
    assert_eq!(armed_count(), 1);
}

#[test]
fn guard_drop_disables_and_releases_waiters() {
    let rx = {
        let _guard = FaultGuard::enable();
        global()
            .add(
                points::ISCP_BEFORE_MARK_CANCELED,
                ":::",
                "wait",
                0,
                "",
                false,
            )
            .unwrap();
        let rx =
            spawn(|| tributary_fault::hit_blocking(points::ISCP_BEFORE_MARK_CANCELED, None, None));
        wait_until("global waiter registered", || {
            global().list().iter().any(|i| i.waiters == 1)
        });
        rx
    };
    assert!(recv(&rx, "guard drop released the waiter")
        .unwrap()
        .is_some());
    // Other tests in this binary may take the guard (and arm their own
    // points) as soon as ours is dropped; only the point armed above is
    // known to be ours, and the drop must have removed it.
    assert!(
        !global()
            .list()
            .iter()
            .any(|p| p.name == points::ISCP_BEFORE_MARK_CANCELED),
        "guard drop left its point armed: {}",
        global().list_json()
    );
}

#[test]
fn guard_starts_clean_even_after_a_panicking_test() {
    let res = std::panic::catch_unwind(|| {
        let _guard = FaultGuard::enable();
        global()
            .add(
                points::ISCP_MARK_CANCELED_ERROR,
                "1:1::",
                "return",
                0,
                "",
                false,
            )
            .unwrap();
        panic!("test body failed");
    });
    assert!(res.is_err());
    // Other tests in this binary may take the guard (and arm their own points)
    // as soon as the panicking body dropped it, so only the point armed above
    // is known to be ours: the unwinding guard must have removed it.
    assert!(
        !global()
            .list()
            .iter()
            .any(|p| p.name == points::ISCP_MARK_CANCELED_ERROR),
        "the guard dropped by a panic left its point armed: {}",
        global().list_json()
    );
    let _guard = FaultGuard::enable();
    assert_eq!(armed_count(), 0);
    global()
        .add(
            points::ISCP_MARK_CANCELED_ERROR,
            "1:1::",
            "return",
            0,
            "",
            false,
        )
        .unwrap();
    assert!(matches!(
        tributary_fault::hit_blocking(points::ISCP_MARK_CANCELED_ERROR, None, None),
        Err(FaultError::Injected { .. })
    ));
}

#[test]
fn assert_no_armed_points_fails_when_points_are_armed() {
    let _guard = FaultGuard::enable();
    global()
        .add("fj/left-over", ":::", "echo", 0, "", false)
        .unwrap();
    let res = std::panic::catch_unwind(|| assert_no_armed_points(global()));
    let msg = res
        .unwrap_err()
        .downcast_ref::<String>()
        .cloned()
        .unwrap_or_default();
    assert!(msg.contains("fj/left-over"), "{msg}");
}

#[test]
fn load_from_env_arms_the_global_registry() {
    let _guard = FaultGuard::enable();
    global().disable();
    // Only this test touches these variables, and it holds the global guard.
    std::env::set_var(tributary_fault::SEED_ENV_VAR, "42");
    std::env::set_var(
        tributary_fault::ENV_VAR,
        "fj/iscp/cancel/long/before-send:idx01=sleep(30);fj/e=echo(hello)@:2::",
    );
    let res = tributary_fault::load_from_env();
    std::env::remove_var(tributary_fault::ENV_VAR);
    std::env::remove_var(tributary_fault::SEED_ENV_VAR);
    assert_eq!(res, Ok(2));
    assert!(global().is_enabled());
    assert_eq!(global().seed(), 42);
    global().set_seed(0);
    // The 30 s sleep is cancellable.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let t0 = std::time::Instant::now();
    assert!(matches!(
        tributary_fault::hit_blocking(points::ISCP_LONG_BEFORE_SEND, Some("idx01"), Some(&cancel)),
        Err(FaultError::Canceled { .. })
    ));
    assert!(t0.elapsed() < Duration::from_secs(2));
    assert_eq!(tributary_fault::load_from_env(), Ok(0));
}

#[test]
fn catalogue_is_complete() {
    assert_eq!(points::ALL.len(), 18);
    assert!(points::ALL.contains(&"fj/iscp/cancel/after-register-consumer"));
    assert_eq!(
        points::ISCP_AFTER_REGISTER_CONSUMER,
        "fj/iscp/cancel/after-register-consumer"
    );
    let docs =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/FAULTS.md"))
            .unwrap();
    for p in points::ALL {
        assert!(
            docs.contains(&format!("`{p}`")),
            "{p} missing from docs/FAULTS.md"
        );
    }
}
