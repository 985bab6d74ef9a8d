//! Control API: enable/disable, add/remove/replace, constant points, bad input, list,
//! MatrixOne `fault_inject` round trip, env spec loading.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::sync::Arc;

use common::{recv, spawn, wait_until};
use tributary_fault::{Action, CancellationToken, FaultError, FaultRegistry};

#[test]
fn enable_disable_report_state_changes() {
    let r = FaultRegistry::new();
    assert!(!r.is_enabled());
    assert!(r.enable());
    assert!(!r.enable());
    assert!(r.is_enabled());
    assert!(r.disable());
    assert!(!r.disable());
    assert!(!r.is_enabled());
}

#[test]
fn disable_removes_points_and_wakes_waiters() {
    let r = Arc::new(FaultRegistry::new());
    r.enable();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    r.add("fj/e", ":::", "echo", 0, "", true).unwrap();
    let r2 = r.clone();
    let rx = spawn(move || r2.hit_blocking("fj/w", None, None));
    wait_until("waiter registered", || {
        r.list().iter().any(|i| i.waiters == 1)
    });
    assert!(r.disable());
    assert!(recv(&rx, "waiter released by disable").unwrap().is_some());
    assert_eq!(r.armed_count(), 0);
    assert!(r.list().is_empty());
    assert_eq!(
        r.add("fj/w", ":::", "wait", 0, "", false),
        Err(FaultError::Disabled)
    );
}

#[test]
fn bad_input_is_rejected_and_arms_nothing() {
    let r = FaultRegistry::new();
    r.enable();
    let cases: &[(&str, &str, &str, i64, &str)] = &[
        ("fj/a", ":::", "explode", 0, ""),
        ("fj/a", "x:::", "echo", 0, ""),
        ("fj/a", "5:2::", "echo", 0, ""),
        ("fj/a", "::0:", "echo", 0, ""),
        ("fj/a", ":::0", "echo", 0, ""),
        ("fj/a", ":::1.01", "echo", 0, ""),
        ("fj/a", "-1:::", "echo", 0, ""),
        ("fj/a", ":-3::", "echo", 0, ""),
        ("fj/a", ":::", "sleep", -1, ""),
        ("fj/a", ":::", "notify", 0, ""),
        ("fj/a", ":::", "getwaiters", 0, ""),
        ("", ":::", "echo", 0, ""),
        ("fj/a:", ":::", "echo", 0, ""),
    ];
    for (name, freq, action, iarg, sarg) in cases {
        let res = r.add(name, freq, action, *iarg, sarg, false);
        assert!(
            matches!(res, Err(FaultError::InvalidArgument(_))),
            "{name} {freq} {action} {iarg}: {res:?}"
        );
    }
    assert_eq!(r.armed_count(), 0);
    assert!(r.list().is_empty());
}

#[test]
fn constant_points_cannot_be_replaced() {
    let r = FaultRegistry::new();
    r.enable();
    r.add("fj/c", ":::", "echo", 1, "first", true).unwrap();
    assert_eq!(
        r.add("fj/c", ":::", "echo", 2, "second", false),
        Err(FaultError::Constant("fj/c".into()))
    );
    assert_eq!(r.list()[0].sarg, "first");
    // Removal still works.
    assert_eq!(r.remove("fj/c"), Ok(true));
    assert_eq!(r.remove("fj/c"), Ok(false));
}

#[test]
fn replacing_a_point_wakes_its_waiters_and_resets_counts() {
    let r = Arc::new(FaultRegistry::new());
    r.enable();
    r.add("fj/w", ":::", "wait", 0, "", false).unwrap();
    let r2 = r.clone();
    let token = CancellationToken::new();
    let t2 = token.clone();
    let rx = spawn(move || r2.hit_blocking("fj/w", None, Some(&t2)));
    wait_until("waiter registered", || r.list()[0].waiters == 1);
    r.add("fj/w", ":::", "echo", 5, "new", false).unwrap();
    assert!(recv(&rx, "waiter released by replacement")
        .unwrap()
        .is_some());
    let info = &r.list()[0];
    assert_eq!((info.action, info.hits, info.iarg), (Action::Echo, 0, 5));
}

#[test]
fn remove_all_and_targeted_removal() {
    let r = FaultRegistry::new();
    r.enable();
    r.add("fj/a", ":::", "echo", 0, "", false).unwrap();
    r.add("fj/a:idx01", ":::", "echo", 0, "", false).unwrap();
    r.add("fj/b", ":::", "echo", 0, "", false).unwrap();
    assert_eq!(r.armed_count(), 3);
    assert_eq!(r.remove("fj/a:idx01"), Ok(true));
    assert_eq!(r.remove("fj/a:idx02"), Ok(false));
    assert_eq!(r.armed_count(), 2);
    assert_eq!(r.remove("ALL"), Ok(true));
    assert_eq!(r.armed_count(), 0);
    assert_eq!(r.remove("all"), Ok(false));
}

#[test]
fn list_and_json() {
    let r = FaultRegistry::new();
    r.enable();
    r.add(
        "fj/iscp/cancel/long/before-send:idx01",
        ":::",
        "sleep",
        30,
        "",
        false,
    )
    .unwrap();
    r.add("fj/x", "1:1::", "return", 0, "say \"hi\"", true)
        .unwrap();
    let l = r.list();
    assert_eq!(l.len(), 2);
    assert_eq!(l[0].name, "fj/iscp/cancel/long/before-send");
    assert_eq!(l[0].target.as_deref(), Some("idx01"));
    assert_eq!((l[0].action, l[0].iarg), (Action::Sleep, 30));
    assert_eq!(l[1].freq, "1:1::");
    assert!(l[1].constant);
    let json = r.list_json();
    assert!(json.starts_with('[') && json.ends_with(']'), "{json}");
    assert!(
        json.contains(r#""name":"fj/iscp/cancel/long/before-send","target":"idx01","freq":":::","action":"sleep","iarg":30"#),
        "{json}"
    );
    assert!(
        json.contains(r#""sarg":"say \"hi\"","constant":true"#),
        "{json}"
    );
    assert!(json.contains(r#""target":null"#), "{json}");
    assert_eq!(FaultRegistry::new().list_json(), "[]");
}

#[test]
fn fault_inject_round_trip() {
    let r = FaultRegistry::new();
    let fi = |m: &str, p: &str| r.handle_fault_inject("all.", m, p);
    assert_eq!(
        fi("ENABLE_FAULT_INJECTION", "").unwrap(),
        "Fault injection enabled. Previous status: disabled"
    );
    assert_eq!(
        fi("enable_fault_injection", "").unwrap(),
        "Fault injection enabled. Previous status: enabled"
    );
    assert_eq!(
        fi(
            "ADD_FAULT_POINT",
            "fj/iscp/cancel/long/before-send:idx01#:::#sleep#30##false"
        )
        .unwrap(),
        "OK"
    );
    assert_eq!(
        fi("add_fault_point", "fj/r#1:1::#return#0#a#b#true").unwrap(),
        "OK"
    );
    let list = fi("LIST_FAULT_POINT", "").unwrap();
    assert!(list.contains(r#""target":"idx01""#), "{list}");
    assert!(list.contains(r#""sarg":"a#b","constant":true"#), "{list}");
    let status = fi("STATUS_FAULT_POINT", "fj/r").unwrap();
    assert!(
        status.starts_with('{') && status.contains(r#""action":"return""#),
        "{status}"
    );
    assert_eq!(
        fi("STATUS_FAULT_POINT", "").unwrap(),
        "Fault injection is enabled"
    );
    assert_eq!(
        fi("STATUS_FAULT_POINT", "fj/none"),
        Err(FaultError::NotFound("fj/none".into()))
    );
    assert_eq!(
        fi("REMOVE_FAULT_POINT", "fj/r").unwrap(),
        "Fault point 'fj/r' successfully removed. Previously existed: true"
    );
    assert!(matches!(
        fi("ADD_FAULT_POINT", "fj/bad#:::#nope#0##false"),
        Err(FaultError::InvalidArgument(_))
    ));
    assert!(matches!(
        fi("ADD_FAULT_POINT", "fj/bad#:::"),
        Err(FaultError::InvalidArgument(_))
    ));
    assert!(matches!(
        fi("FROB", ""),
        Err(FaultError::InvalidArgument(_))
    ));
    assert_eq!(r.armed_count(), 1);
    assert_eq!(
        fi("DISABLE_FAULT_INJECTION", "").unwrap(),
        "Fault injection disabled. Previous status: enabled"
    );
    assert_eq!(r.armed_count(), 0);
    assert_eq!(
        fi("ADD_FAULT_POINT", "fj/a#:::#echo#0##false"),
        Err(FaultError::Disabled)
    );
}

#[test]
fn env_spec_arms_points() {
    let r = FaultRegistry::new();
    let n = r
        .load_env_spec("fj/x=echo(hi);fj/y:idx01=sleep(0);fj/z=wait;fj/w=return(boom)@1:1::")
        .unwrap();
    assert_eq!(n, 4);
    assert!(r.is_enabled());
    assert_eq!(
        r.hit_blocking("fj/x", None, None).unwrap().unwrap().sarg,
        "hi"
    );
    assert!(r
        .hit_blocking("fj/y", Some("idx01"), None)
        .unwrap()
        .is_some());
    assert_eq!(r.hit_blocking("fj/y", Some("idx02"), None), Ok(None));
    assert_eq!(
        r.hit_blocking("fj/w", None, None),
        Err(FaultError::Injected {
            point: "fj/w".into(),
            message: "boom".into()
        })
    );
    assert_eq!(r.hit_blocking("fj/w", None, None), Ok(None));
    let z = r.status("fj/z").unwrap();
    assert_eq!(z.action, Action::Wait);

    let r = FaultRegistry::new();
    assert!(matches!(
        r.load_env_spec("fj/x=echo(hi);fj/y=sleep(-2)"),
        Err(FaultError::InvalidArgument(_))
    ));
    assert_eq!(r.armed_count(), 0);
}
