"""Node's mysql2 driver: runs `node --test tests/node/` against the server.

The node process must exit by itself once its tests are done (every socket
closed); a run that does not finish within the deadline fails."""

import os
import shutil
import subprocess

import pytest

NODE_DIR = os.path.join(os.path.dirname(__file__), "..", "node")
DEADLINE_S = 60


def test_node_mysql2(server, dbname):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node not installed (scripts/test-deps.sh installs it)")
    if not os.path.isdir(os.path.join(NODE_DIR, "node_modules", "mysql2")):
        pytest.fail("tests/node/node_modules/mysql2 missing: run scripts/test-deps.sh")
    env = dict(os.environ, TRIBUTARY_PORT=str(server.port), TRIBUTARY_DB=dbname)
    try:
        r = subprocess.run([node, "--test", "--test-reporter=spec", "mysql2.test.js"],
                           cwd=NODE_DIR, env=env, capture_output=True, text=True,
                           timeout=DEADLINE_S)
    except subprocess.TimeoutExpired as e:
        out = e.stdout or ""
        if isinstance(out, bytes):  # TimeoutExpired keeps bytes even with text=True
            out = out.decode(errors="replace")
        pytest.fail(f"node --test did not exit within {DEADLINE_S}s (a socket left open?)\n{out}")
    assert r.returncode == 0, f"node --test failed:\n{r.stdout}\n{r.stderr}"
    assert "# fail 0" in r.stdout or "ℹ fail 0" in r.stdout, r.stdout
