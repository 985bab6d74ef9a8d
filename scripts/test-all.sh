#!/usr/bin/env bash
# Runs every test: the Rust workspace (unit, integration, golden SQL files,
# crash and concurrency tests) and the real-client tests (PyMySQL,
# mysqlclient, mysql-connector pure + C, SQLAlchemy, Node mysql2, the mariadb
# CLI interactively and mysqldump, admin HTTP). Installs what those need by
# itself first (scripts/test-deps.sh: apt as root, a venv, npm ci).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/tributary-target}"
PYTHON_VENV="$(bash scripts/test-deps.sh)"
cargo build --bin tributary
# The sqlx client check (tests/python/test_sqlx.py): a crate of its own,
# outside the workspace (its dependencies cost one build, ~1.5 CPU-min).
cargo build --quiet --locked --manifest-path tests/sqlx/Cargo.toml
cargo test --workspace
export TRIBUTARY_BIN="$CARGO_TARGET_DIR/debug/tributary"
# Last, so the run ends with pytest's summary line.
"$PYTHON_VENV" -m pytest -q -p no:cacheprovider tests/python
