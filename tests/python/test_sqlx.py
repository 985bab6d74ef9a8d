"""Rust's sqlx (MySQL driver): runs tests/sqlx's checks (built by
scripts/test-all.sh into $CARGO_TARGET_DIR) against the server: migrations,
transactions and a nested one, typed query_as over every column type, a
foreign key, error codes. The binary exits non-zero with a message on the
first failure."""

import os
import subprocess

import pytest

DEADLINE_S = 120


def run_checks(server, dbname, *args):
    target = os.environ.get("CARGO_TARGET_DIR", "/var/tmp/tributary-target")
    binary = os.path.join(target, "debug", "tributary-sqlx-check")
    if not os.path.exists(binary):
        pytest.fail(f"{binary} missing: scripts/test-all.sh builds tests/sqlx")
    env = dict(os.environ, TRIBUTARY_PORT=str(server.port), TRIBUTARY_DB=dbname)
    return subprocess.run([binary, *args], env=env, capture_output=True, text=True,
                          timeout=DEADLINE_S,
                          cwd=os.path.join(os.path.dirname(__file__), "..", "sqlx"))


def test_sqlx(server, dbname):
    r = run_checks(server, dbname)
    assert r.returncode == 0, f"sqlx checks failed:\n{r.stdout}\n{r.stderr}"
    assert "sqlx checks passed" in r.stdout, r.stdout


@pytest.mark.xfail(strict=True, reason="sqlx keeps migration checksums in a BLOB column; "
                   "binary strings are not stored (refused with 1366, never mangled)")
def test_sqlx_migrate(server, dbname):
    r = run_checks(server, dbname, "migrate")
    assert r.returncode == 0, f"sqlx migrate failed:\n{r.stdout}\n{r.stderr}"
    assert "sqlx migrate passed" in r.stdout, r.stdout
