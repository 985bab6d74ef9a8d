"""KILL over the wire: `KILL QUERY` stops a running statement with 1317 and
the connection goes on; `KILL CONNECTION` (and COM_PROCESS_KILL, which
PyMySQL's `Connection.kill` sends) closes the victim's connection, idle or
busy; `SHOW PROCESSLIST` shows the running statement. Waits are polls with
deadlines, never fixed sleeps."""

import threading
import time

import pymysql
import pytest

WAIT_S = 30
# A killed statement must stop far sooner than it would on its own (60 s).
STOP_S = 10


def connect(server, db=None):
    return pymysql.connect(
        host=server.host, port=server.port, user="root", password="",
        database=db, autocommit=True,
    )


def run_in_thread(conn, sql):
    out = {}

    def go():
        t0 = time.monotonic()
        try:
            with conn.cursor() as c:
                c.execute(sql)
                out["rows"] = c.fetchall()
        except Exception as e:  # noqa: BLE001 - the test inspects it
            out["error"] = e
        out["ran"] = time.monotonic() - t0

    th = threading.Thread(target=go)
    th.start()
    return th, out


def wait_running(admin, conn_id, sql):
    deadline = time.monotonic() + WAIT_S
    with admin.cursor() as c:
        while True:
            c.execute("SHOW FULL PROCESSLIST")
            cols = [d[0] for d in c.description]
            assert cols == ["Id", "User", "Host", "db", "Command", "Time", "State", "Info"]
            rows = {r[0]: r for r in c.fetchall()}
            row = rows.get(conn_id)
            if row and row[4] == "Query" and row[7] == sql:
                return row
            assert time.monotonic() < deadline, f"{sql} never showed up running"
            time.sleep(0.01)


def test_kill_query_then_connection(server, dbname):
    admin = connect(server, dbname)
    victim = connect(server, dbname)
    vid = victim.thread_id()
    sql = "SELECT SLEEP(60)"
    th, out = run_in_thread(victim, sql)
    wait_running(admin, vid, sql)
    t0 = time.monotonic()
    with admin.cursor() as c:
        c.execute(f"KILL QUERY {vid}")
    th.join(WAIT_S)
    assert not th.is_alive()
    assert time.monotonic() - t0 < STOP_S
    assert isinstance(out.get("error"), pymysql.err.OperationalError), out
    assert out["error"].args[0] == 1317
    # The victim's connection is still usable.
    with victim.cursor() as c:
        c.execute("SELECT 1")
        assert c.fetchone() == (1,)
    # KILL CONNECTION of a busy connection: the statement stops and the
    # connection is closed.
    th, out = run_in_thread(victim, sql)
    wait_running(admin, vid, sql)
    with admin.cursor() as c:
        c.execute(f"KILL CONNECTION {vid}")
    th.join(WAIT_S)
    assert not th.is_alive()
    assert "error" in out, out
    with pytest.raises(pymysql.err.Error):
        with victim.cursor() as c:
            c.execute("SELECT 1")
    admin.close()


def test_com_process_kill_closes_an_idle_connection(server, dbname):
    admin = connect(server, dbname)
    idle = connect(server, dbname)
    iid = idle.thread_id()
    admin.kill(iid)  # COM_PROCESS_KILL
    deadline = time.monotonic() + WAIT_S
    with admin.cursor() as c:
        while True:
            c.execute("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID = %s", (iid,))
            if c.fetchone()[0] == 0:
                break
            assert time.monotonic() < deadline, "the killed connection is still listed"
            time.sleep(0.01)
    with pytest.raises(pymysql.err.Error):
        with idle.cursor() as c:
            c.execute("SELECT 1")
    with pytest.raises(pymysql.err.OperationalError) as e:
        admin.kill(999_999_999)
    assert e.value.args[0] == 1094
    admin.close()


def test_max_execution_time_over_the_wire(server, dbname):
    conn = connect(server, dbname)
    with conn.cursor() as c:
        with pytest.raises(pymysql.err.OperationalError) as e:
            c.execute("SELECT /*+ MAX_EXECUTION_TIME(100) */ SLEEP(60)")
        assert e.value.args[0] == 3024
        c.execute("SELECT 1")
        assert c.fetchone() == (1,)
    conn.close()
