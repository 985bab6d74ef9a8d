#!/usr/bin/env bash
# Runs every test: the Rust workspace (unit, integration, golden SQL files,
# crash and concurrency tests) and the real-client tests (PyMySQL,
# mysql-connector binary protocol, the mariadb CLI, admin HTTP).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/tributary-target}"
cargo build --bin tributary
cargo test --workspace
export TRIBUTARY_BIN="$CARGO_TARGET_DIR/debug/tributary"
python3 -m pytest -q tests/python
