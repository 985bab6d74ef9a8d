"""A really full disk (issue 39, item 5), on a small tmpfs of the test's
own: the data file cannot grow, the commit log fills, the server keeps
serving reads (rows, secondary index, a fresh asynchronous full-text
search), fails writes with MySQL 1021, takes writes again by itself once
space returns, never panics, and a restart onto the full disk either
serves reads or refuses with a line naming the full disk — and loses no
acknowledged commit.

Mounting needs root (CI runs as root); elsewhere the test is skipped."""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pymysql
import pytest

from conftest import BIN, start_server, stop_server

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from adversarial import fill_disk  # noqa: E402


@pytest.fixture
def tmpfs():
    d = tempfile.mkdtemp(prefix="tributary-fulldisk-")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", d],
                       capture_output=True)
    if r.returncode != 0:
        os.rmdir(d)
        assert not os.environ.get("CI"), "CI must be able to mount a tmpfs"
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.decode().strip()}")
    try:
        yield d
    finally:
        subprocess.run(["umount", "-l", d])
        shutil.rmtree(d, ignore_errors=True)


def fill(path):
    """Fill the file system of `path`; returns the filler's path."""
    filler = fill_disk(path)
    assert shutil.disk_usage(path).free < (1 << 20)
    return filler


def connect(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database="d", autocommit=True)


def wait_for(what, cond, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        try:
            got = cond()
        except pymysql.err.MySQLError:
            got = None
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_a_full_disk_keeps_reads_fails_writes_and_loses_nothing(tmpfs, tmp_path):
    data = os.path.join(tmpfs, "data")
    log_path = os.path.join(tmp_path, "server.log")
    args = ["--commit-log-size", "4MB"]
    with open(log_path, "w") as log:
        proc, port, _ = start_server(data, args, admin=False, stderr=log)
    try:
        c = connect_root(port)
        cur = c.cursor()
        cur.execute("CREATE DATABASE d")
        cur.execute("USE d")
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, k INT, body TEXT, KEY (k))")
        cur.execute("CREATE FULLTEXT INDEX ft ON t(body) ASYNC")
        cur.executemany("INSERT INTO t VALUES (%s, %s, %s)",
                        [(i, i % 10, f"base word{i % 7}") for i in range(200)])
        acked = set(range(200))
        filler = fill(tmpfs)
        # Writes go on into the commit log, then fail with 1021.
        code = None
        for i in range(200, 20200):
            try:
                cur.execute("INSERT INTO t VALUES (%s, %s, %s)",
                            (i, i % 10, "during " + "x" * 2000))
                acked.add(i)
            except pymysql.err.OperationalError as e:
                code = e.args[0]
                break
        assert code == 1021, code
        # Reads: rows, the secondary index, a fresh full-text search over the
        # rows the data file has not got.
        cur.execute("SELECT COUNT(*) FROM t")
        assert cur.fetchone()[0] == len(acked)
        cur.execute("SELECT COUNT(*) FROM t WHERE k = 3")
        assert cur.fetchone()[0] == sum(1 for i in acked if i % 10 == 3)
        cur.execute("SELECT COUNT(*) FROM t WHERE MATCH(body) AGAINST('during')")
        assert cur.fetchone()[0] == len(acked) - 200
        # Still full: a row the commit log has no room left for is refused.
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("INSERT INTO t VALUES (-1, 0, %s)", ("refused " + "x" * 2000,))
        assert e.value.args[0] == 1021
        # Space back: writes work again without a restart.
        os.remove(filler)
        wait_for("a write after space returned",
                 lambda: cur.execute("INSERT INTO t VALUES (-2, 0, 'after')") == 1)
        acked.add(-2)
        # Full again, then a restart onto the full disk.
        filler = fill(tmpfs)
        for i in range(30000, 30050):
            try:
                cur.execute("INSERT INTO t VALUES (%s, 0, 'last')", (i,))
                acked.add(i)
            except pymysql.err.OperationalError as e:
                assert e.args[0] == 1021
                break
        c.close()
        assert stop_server(proc) == 0
        with open(log_path, "a") as log:
            proc2 = subprocess.Popen([BIN, "serve", "--data", data, "--listen", "127.0.0.1:0",
                                      *args], stdout=subprocess.PIPE, stderr=log, text=True)
        # It either refuses at once with a clear line or starts and serves
        # reads. (readline returns "" at the end of its output.)
        port2 = None
        for line in iter(proc2.stdout.readline, ""):
            if line.startswith("listening on"):
                port2 = int(line.rsplit(":", 1)[1])
                break
        if port2 is None:
            assert proc2.wait(timeout=30) != 0
            with open(log_path) as f:
                assert "disk is full" in f.read()
        else:
            c2 = connect(port2)
            cur2 = c2.cursor()
            cur2.execute("SELECT COUNT(*) FROM t")
            assert cur2.fetchone()[0] == len(acked)
            c2.close()
            assert stop_server(proc2) == 0
        # Space back: every acknowledged row is there.
        os.remove(filler)
        with open(log_path, "a") as log:
            proc, port, _ = start_server(data, args, admin=False, stderr=log)
        c = connect(port)
        cur = c.cursor()
        cur.execute("SELECT id FROM t")
        assert {r[0] for r in cur.fetchall()} == acked
        c.close()
        assert stop_server(proc) == 0
        proc = None
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()
    with open(log_path) as f:
        log_text = f.read()
    assert "panicked" not in log_text, log_text[-4000:]


def connect_root(port):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           autocommit=True)
