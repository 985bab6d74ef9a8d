//! Binary strings on both storage backends: rows with every byte value,
//! written on one compute node, read back on another (the embedded store
//! and PostgreSQL hold the same row and key bytes), keyed in memcmp order.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic fails the test

mod common;

use std::time::Duration;

use common::{Backend, Shared};
use tributary::{Config, Database, Value};

fn cfg(node: &str) -> Config {
    Config {
        node_name: node.into(),
        iscp_interval: Duration::from_millis(20),
        ..Config::default()
    }
}

fn rows(db: &Database, sql: &[&str]) -> Vec<Vec<Value>> {
    let mut s = db.session();
    let mut last = None;
    for q in sql {
        last = Some(s.execute(q).unwrap_or_else(|e| panic!("{q}: {e}")));
    }
    last.unwrap().rows
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02X}")).collect()
}

#[test]
fn binary_rows_cross_nodes_embedded() {
    binary_rows_cross_nodes(Backend::Embedded);
}

#[test]
fn binary_rows_cross_nodes_over_postgres() {
    binary_rows_cross_nodes(Backend::Postgres);
}

fn binary_rows_cross_nodes(backend: Backend) {
    let shared = Shared::new(backend);
    let a = Database::open_shared(shared.for_node("cn-a"), cfg("cn-a")).unwrap();
    let b = Database::open_shared(shared.for_node("cn-b"), cfg("cn-b")).unwrap();
    let all: Vec<u8> = (0..=255u8).collect();
    let keys: Vec<Vec<u8>> = vec![vec![0xFF; 16], vec![0; 16], vec![0x80; 16], {
        let mut k = vec![0; 16];
        k[15] = 1;
        k
    }];
    let mut sql = vec![
        "CREATE DATABASE d".to_string(),
        "USE d".to_string(),
        "CREATE TABLE t (id BINARY(16) PRIMARY KEY, b LONGBLOB, vb VARBINARY(300))".to_string(),
        "CREATE INDEX by_vb ON t (vb)".to_string(),
    ];
    for (i, k) in keys.iter().enumerate() {
        let mut v = all.clone();
        v.rotate_left(i * 64);
        sql.push(format!(
            "INSERT INTO t VALUES (X'{}', X'{}', X'{}')",
            hex(k),
            hex(&v),
            hex(&v[..=i])
        ));
    }
    let refs: Vec<&str> = sql.iter().map(String::as_str).collect();
    rows(&a, &refs);
    let got = rows(&b, &["USE d", "SELECT id, b, vb FROM t ORDER BY id"]);
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(
        got.iter().map(|r| r[0].clone()).collect::<Vec<_>>(),
        sorted.iter().cloned().map(Value::Bytes).collect::<Vec<_>>()
    );
    for r in &got {
        let Value::Bytes(k) = &r[0] else {
            panic!("not bytes: {:?}", r[0])
        };
        let i = keys.iter().position(|x| x == k).unwrap();
        let mut v = all.clone();
        v.rotate_left(i * 64);
        assert_eq!(r[1], Value::Bytes(v.clone()));
        assert_eq!(r[2], Value::Bytes(v[..=i].to_vec()));
    }
    // Point and range lookups on the other node, through both keys.
    let hit = rows(
        &b,
        &[
            "USE d",
            &format!("SELECT vb FROM t WHERE id = X'{}'", hex(&keys[2])),
        ],
    );
    assert_eq!(hit.len(), 1);
    let hit = rows(
        &b,
        &[
            "USE d",
            "SELECT HEX(id) FROM t WHERE vb >= X'80' ORDER BY vb",
        ],
    );
    assert_eq!(
        hit,
        vec![
            vec![Value::Text(hex(&keys[2]))],
            vec![Value::Text(hex(&keys[3]))]
        ]
    );
}
