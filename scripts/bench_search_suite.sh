#!/usr/bin/env bash
# Issue 14's benchmarks in one run, on a fresh machine:
#   1. full text: Tributary vs SQLite FTS5 vs PostgreSQL 15 GIN (Debian
#      package, installed when missing) — scripts/bench_search.py;
#   2. vectors: Tributary vs PostgreSQL 16 + pgvector 0.6 (PyPI `pgserver`
#      wheel; Debian 12 packages no pgvector) — scripts/bench_vector.py.
# Builds the release binary and a venv with what both scripts need, then
# runs them one after the other; each alternates its engines and reports
# medians of 3. JSON results go to the directory given as $1 (default: a
# new temporary directory, printed at the end).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-/var/tmp/tributary-target}"
venv="${BENCH_VENV:-/var/tmp/tributary-bench-venv}"
out="${1:-$(mktemp -d)}"
mkdir -p "$out"
cargo build --release --bin tributary
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q pymysql 'psycopg[binary]' numpy pgserver
"$venv/bin/python" scripts/bench_search.py --json "$out/search.json"
"$venv/bin/python" scripts/bench_vector.py --json "$out/vector.json"
echo "results: $out"
