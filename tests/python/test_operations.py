"""Operating the server (issue 13): idle sessions closed after
wait_timeout / interactive_timeout, a per-account connection limit,
--connect-timeout, and several servers on one machine with no port flag but
--listen (the admin endpoint is off unless asked for).

Each test starts its own server(s) on free ports. Waits are bounded reads of
a socket or polls with a deadline; the idle timeouts are the behaviour under
test, so the tests wait for the server to act on them (never a fixed sleep).
"""

import os
import select
import socket
import struct
import tempfile
import time

import pymysql
import pytest

from conftest import start_server, stop_server


def read_until_eof(sock, timeout):
    """Everything the server sends until it closes, within `timeout` s."""
    sock.setblocking(False)
    data = b""
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            pytest.fail(f"the server did not close the connection (got {data!r})")
        ready, _, _ = select.select([sock], [], [], left)
        if not ready:
            continue
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, BlockingIOError):
            return data
        if not chunk:
            return data
        data += chunk


def error_code(packet_bytes):
    """The error code of the MySQL error packet at the start of the bytes."""
    assert len(packet_bytes) >= 7, packet_bytes
    length = packet_bytes[0] | packet_bytes[1] << 8 | packet_bytes[2] << 16
    payload = packet_bytes[4:4 + length]
    assert payload[0] == 0xFF, f"not an error packet: {packet_bytes!r}"
    return struct.unpack("<H", payload[1:3])[0]


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="tributary-ops-") as d:
        proc, port, _ = start_server(os.path.join(d, "data"), admin=False,
                                     extra_args=["--max-user-connections", "2",
                                                 "--connect-timeout", "1"])
        yield port
        assert stop_server(proc) == 0


def connect(port, user="root", password="", **kw):
    return pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                           autocommit=True, **kw)


@pytest.mark.parametrize("interactive", [False, True])
def test_an_idle_session_is_closed_with_error_4031(srv, interactive):
    flag = pymysql.constants.CLIENT.INTERACTIVE if interactive else 0
    c = connect(srv, client_flag=flag)
    with c.cursor() as cur:
        # Only the variable that applies to this kind of client is short.
        if interactive:
            cur.execute("SET SESSION interactive_timeout = 1, wait_timeout = 3600")
        else:
            cur.execute("SET SESSION wait_timeout = 1, interactive_timeout = 3600")
    t0 = time.monotonic()
    data = read_until_eof(c._sock, timeout=30)
    took = time.monotonic() - t0
    assert error_code(data) == 4031
    assert b"inactivity" in data
    assert 0.9 <= took < 10, took
    c._sock.close()


def test_a_busy_session_is_not_closed(srv):
    c = connect(srv)
    with c.cursor() as cur:
        cur.execute("SET SESSION wait_timeout = 2")
        # Commands keep coming faster than the timeout: never idle for long.
        deadline = time.monotonic() + 4
        while time.monotonic() < deadline:
            cur.execute("SELECT 1")
            assert cur.fetchall() == ((1,),)
            time.sleep(0.5)
    c.close()


def test_max_user_connections_limits_one_account(srv):
    with connect(srv) as root, root.cursor() as cur:
        cur.execute("CREATE USER IF NOT EXISTS bob IDENTIFIED BY 'pw'")
    a = connect(srv, "bob", "pw")
    b = connect(srv, "bob", "pw")
    with pytest.raises(pymysql.err.OperationalError) as refused:
        connect(srv, "bob", "pw")
    assert refused.value.args[0] == 1203, refused.value
    # Another account is not affected.
    connect(srv).close()
    a.close()
    # The slot comes back once the server has seen the close.
    deadline = time.monotonic() + 10
    while True:
        try:
            connect(srv, "bob", "pw").close()
            break
        except pymysql.err.OperationalError as e:
            assert e.args[0] == 1203
            assert time.monotonic() < deadline, "the slot never came back"
            time.sleep(0.05)
    b.close()


def test_connect_timeout_closes_a_silent_client(srv):
    s = socket.create_connection(("127.0.0.1", srv))
    t0 = time.monotonic()
    data = read_until_eof(s, timeout=15)
    took = time.monotonic() - t0
    s.close()
    # The greeting, then error 1159 after the 1 s --connect-timeout.
    length = data[0] | data[1] << 8 | data[2] << 16
    rest = data[4 + length:]
    assert error_code(rest) == 1159, data
    assert 0.9 <= took < 10, took


def test_two_servers_on_one_machine_need_only_listen():
    with tempfile.TemporaryDirectory(prefix="tributary-two-") as d:
        a = b = None
        try:
            a, pa, admin_a = start_server(os.path.join(d, "a"), admin=False)
            b, pb, admin_b = start_server(os.path.join(d, "b"), admin=False)
            assert admin_a is None and admin_b is None
            for port in (pa, pb):
                with connect(port) as c, c.cursor() as cur:
                    cur.execute("SELECT 1")
                    assert cur.fetchall() == ((1,),)
            assert not os.path.exists(os.path.join(d, "a", "admin.token"))
        finally:
            for p in (a, b):
                if p is not None:
                    assert stop_server(p) == 0


def test_json_logs_and_the_slow_statement_log():
    import json
    import queue
    import re
    import subprocess
    import threading

    from conftest import BIN
    with tempfile.TemporaryDirectory(prefix="tributary-logs-") as d:
        log_path = os.path.join(d, "stderr.log")
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                [BIN, "serve", "--data", os.path.join(d, "data"), "--listen", "127.0.0.1:0",
                 "--log-format", "json", "--slow-statement-ms", "150"],
                stdout=subprocess.PIPE, stderr=log, text=True)
            q = queue.Queue()
            threading.Thread(target=lambda: [q.put(line) for line in proc.stdout],
                             daemon=True).start()
            port = None
            deadline = time.monotonic() + 30
            while port is None:
                line = q.get(timeout=max(0.1, deadline - time.monotonic()))
                m = re.match(r"listening on [\d.]+:(\d+)", line)
                if m:
                    port = int(m.group(1))
            with connect(port) as c, c.cursor() as cur:
                cur.execute("SELECT 1")  # fast: not logged
                cur.execute("SELECT SLEEP(0.3) /* IDENTIFIED BY 'topsecret' */")
                # An ISCP job's life: created, built, dropped, finalized.
                cur.execute("CREATE DATABASE lg")
                cur.execute("CREATE TABLE lg.t (id INT PRIMARY KEY, body TEXT)")
                cur.execute("INSERT INTO lg.t VALUES (1, 'a'), (2, 'b')")
                cur.execute("CREATE FULLTEXT INDEX ft ON lg.t(body) ASYNC")

                def job():
                    cur.execute("SELECT job_state, job_status FROM mo_catalog.mo_iscp_log "
                                "WHERE job_name = 'index_ft'")
                    return cur.fetchone()
                deadline = time.monotonic() + 30
                while '"stage":"incremental"' not in job()[1]:
                    assert time.monotonic() < deadline, "the index was never built"
                    time.sleep(0.05)
                cur.execute("DROP INDEX ft ON lg.t")
                while job()[0] != 5:
                    assert time.monotonic() < deadline, "the drop never finished"
                    time.sleep(0.05)
            # The runner logs the Canceled row at its next tick.
            while '"to":"Canceled"' not in open(log_path).read():
                assert time.monotonic() < deadline, "the final state change was never logged"
                time.sleep(0.05)
            assert stop_server(proc) == 0
        lines = [ln for ln in open(log_path).read().splitlines() if ln.strip()]
        events = [json.loads(ln) for ln in lines]  # every line is one JSON object
        assert any(e.get("message") == "ready" for e in events), lines[:5]
        slow = [e for e in events if e.get("target") == "tributary::slow"]
        assert len(slow) == 1, slow
        assert slow[0]["ms"] >= 300 and slow[0]["user"] == "root"
        assert "SLEEP(0.3)" in slow[0]["statement"]
        assert "topsecret" not in json.dumps(slow[0])
        # Every ISCP change logged once, by the runner, with job id and table.
        iscp = [e for e in events if e.get("index") == "ft" and "job_id" in e]
        created = [e for e in iscp if e["message"] == "ISCP job created"]
        built = [e for e in iscp if e["message"].startswith("ISCP job stage changed")]
        states = [(e["from"], e["to"]) for e in iscp if e["message"] == "ISCP job state changed"]
        assert len(created) == 1 and created[0]["db"] == "lg" and created[0]["table"] > 0, iscp
        assert len(built) == 1, iscp
        assert states == [("Completed", "Canceling"), ("Canceling", "Canceled")], states
        assert all(e["reason"] for e in iscp if e["message"] == "ISCP job state changed")
