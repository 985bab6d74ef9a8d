"""Rust's sqlx (MySQL driver): runs tests/sqlx's checks (built by
scripts/test-all.sh into $CARGO_TARGET_DIR) against a server of its own:
migrations, transactions and a nested one, typed query_as over every column
type, a foreign key, error codes. The binary exits non-zero with a message
on the first failure.

A server of its own, so the checks see no other test's databases. (The
checks once hung now and then: the program closed its pool while still
holding a connection, and `Pool::close` waits for every connection.)"""

import os
import subprocess
import tempfile

import pymysql
import pytest
from conftest import start_server, stop_server

DEADLINE_S = 120


@pytest.fixture(scope="module")
def port():
    with tempfile.TemporaryDirectory(prefix="tributary-sqlx-") as d:
        proc, p, _ = start_server(os.path.join(d, "data"), admin=False)
        yield p
        assert stop_server(proc) == 0


_n = [0]


def run_checks(port, *args):
    target = os.environ.get("CARGO_TARGET_DIR", "/var/tmp/tributary-target")
    binary = os.path.join(target, "debug", "tributary-sqlx-check")
    if not os.path.exists(binary):
        pytest.fail(f"{binary} missing: scripts/test-all.sh builds tests/sqlx")
    _n[0] += 1
    db = f"sqlx{_n[0]}"
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="", autocommit=True)
    with c.cursor() as cur:
        cur.execute(f"CREATE DATABASE {db}")
    c.close()
    env = dict(os.environ, TRIBUTARY_PORT=str(port), TRIBUTARY_DB=db)
    return subprocess.run([binary, *args], env=env, capture_output=True, text=True,
                          timeout=DEADLINE_S,
                          cwd=os.path.join(os.path.dirname(__file__), "..", "sqlx"))


def test_sqlx(port):
    r = run_checks(port)
    assert r.returncode == 0, f"sqlx checks failed:\n{r.stdout}\n{r.stderr}"
    assert "sqlx checks passed" in r.stdout, r.stdout


def test_sqlx_migrate(port):
    """sqlx::migrate! twice: its checksums are a BLOB (binary strings)."""
    r = run_checks(port, "migrate")
    assert r.returncode == 0, f"sqlx migrate failed:\n{r.stdout}\n{r.stderr}"
    assert "sqlx migrate passed" in r.stdout, r.stdout
