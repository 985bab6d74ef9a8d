"""Shared fixtures: one `tributary serve` process per test session.

The server is started on free ports (`127.0.0.1:0`) with an extra user
alice:secret; the fixture waits (with a deadline) for the "listening on"
lines on stdout and, at the end, stops it with SIGTERM and asserts exit 0.
"""

import os
import queue
import re
import signal
import subprocess
import tempfile
import threading
import time
from types import SimpleNamespace

import pytest

BIN = os.environ.get("TRIBUTARY_BIN", "/var/tmp/tributary-target/debug/tributary")
START_DEADLINE_S = 30.0
STOP_DEADLINE_S = 20.0


class Server:
    def __init__(self, proc, port, admin_port, data_dir):
        self.proc = proc
        self.port = port
        self.admin_port = admin_port
        self.data_dir = data_dir
        self.host = "127.0.0.1"

    @property
    def admin_url(self):
        return f"http://127.0.0.1:{self.admin_port}"


def _reader(stream, q):
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


def start_server(data_dir, extra_args=(), admin=True, stderr=None):
    """Start `tributary serve`; returns (Popen, port, admin_port or None).

    With admin=False the admin endpoint keeps its default: off. `stderr`: a
    file the server's log goes to (default: this process's stderr)."""
    if not os.path.exists(BIN):
        pytest.fail(f"tributary binary not found at {BIN} (set TRIBUTARY_BIN)")
    args = [
        BIN,
        "serve",
        "--data",
        data_dir,
        "--listen",
        "127.0.0.1:0",
        "--user",
        "alice:secret",
        *extra_args,
    ]
    if admin and "--admin-listen" not in extra_args:
        args += ["--admin-listen", "127.0.0.1:0"]
    env = dict(os.environ)
    env.pop("TRIBUTARY_FAULTS", None)
    proc = subprocess.Popen(
        args,
        stdout=subprocess.PIPE,
        stderr=stderr or (subprocess.DEVNULL if os.environ.get("TRIBUTARY_QUIET") else None),
        text=True,
        env=env,
    )
    q = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
    port = admin_port = None
    want_admin = admin
    deadline = time.monotonic() + START_DEADLINE_S
    while port is None or (want_admin and admin_port is None):
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            pytest.fail("server did not print its listening lines in time")
        try:
            line = q.get(timeout=left)
        except queue.Empty:
            continue
        if line is None:
            pytest.fail(f"server exited early with {proc.wait()}")
        m = re.match(r"admin listening on [\d.]+:(\d+)", line)
        if m:
            admin_port = int(m.group(1))
            continue
        m = re.match(r"listening on [\d.]+:(\d+)", line)
        if m:
            port = int(m.group(1))
    return proc, port, admin_port


def stop_server(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail("server did not stop within the deadline after SIGTERM")


@pytest.fixture(scope="session")
def server():
    with tempfile.TemporaryDirectory(prefix="tributary-pytest-") as d:
        proc, port, admin_port = start_server(os.path.join(d, "data"))
        srv = Server(proc, port, admin_port, d)
        yield srv
        assert stop_server(proc) == 0


_counter = [0]


@pytest.fixture
def dbname(server):
    """A fresh database name per test (the server is shared)."""
    import pymysql

    _counter[0] += 1
    name = f"t{os.getpid()}_{_counter[0]}"
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           autocommit=True)
    try:
        with conn.cursor() as c:
            c.execute(f"CREATE DATABASE {name}")
    finally:
        conn.close()
    return name


@pytest.fixture(scope="module")
def target(request):
    """The server under test: $TRIBUTARY_TARGET (host:port, set by
    test_frameworks_cluster.py for a compute node of the PostgreSQL
    cluster), else this session's embedded `tributary serve`."""
    where = os.environ.get("TRIBUTARY_TARGET")
    if where:
        host, port = where.rsplit(":", 1)
        return SimpleNamespace(host=host, port=int(port))
    return request.getfixturevalue("server")
