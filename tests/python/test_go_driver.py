"""Go's database/sql + go-sql-driver/mysql: runs `go test` on tests/go/
against the server (GOPATH mode: the driver is Debian's
golang-github-go-sql-driver-mysql-dev, nothing is downloaded)."""

import os
import shutil
import subprocess
import tempfile

import pytest

GO_DIR = os.path.join(os.path.dirname(__file__), "..", "go")
GOPATH_DEB = "/usr/share/gocode"
DEADLINE_S = 300  # the first run compiles the driver


def test_go_database_sql(server, dbname):
    go = shutil.which("go")
    if go is None:
        pytest.fail("go not installed (scripts/test-deps.sh installs it)")
    if not os.path.isdir(os.path.join(GOPATH_DEB, "src/github.com/go-sql-driver/mysql")):
        pytest.fail("golang-github-go-sql-driver-mysql-dev missing (scripts/test-deps.sh)")
    cache = os.environ.get("GOCACHE") or os.path.join(
        os.environ.get("CARGO_TARGET_DIR", tempfile.gettempdir()), "go-build")
    env = dict(os.environ, TRIBUTARY_PORT=str(server.port), TRIBUTARY_DB=dbname,
               GO111MODULE="off", GOPATH=GOPATH_DEB, GOCACHE=cache)
    try:
        r = subprocess.run([go, "test", "-count=1", "-v", "."], cwd=GO_DIR, env=env,
                           capture_output=True, text=True, timeout=DEADLINE_S)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f"go test did not finish within {DEADLINE_S}s\n{e.stdout}")
    assert r.returncode == 0, f"go test failed:\n{r.stdout}\n{r.stderr}"
    assert "--- FAIL" not in r.stdout and "PASS" in r.stdout, r.stdout
