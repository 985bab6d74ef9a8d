"""Graceful shutdown: SIGTERM stops the server with exit code 0, a statement
in flight at SIGTERM gets its answer, and data written before it is still
there after a restart."""

import os
import tempfile
import threading
import time

import pymysql

from conftest import STOP_DEADLINE_S, start_server, stop_server


def test_sigterm_exits_zero_and_keeps_data():
    with tempfile.TemporaryDirectory(prefix="tributary-pytest-stop-") as d:
        data = os.path.join(d, "data")
        proc, port, _ = start_server(data, admin=False)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                   autocommit=True)
            with conn.cursor() as c:
                c.execute("CREATE DATABASE s")
                c.execute("CREATE TABLE s.t (id INT PRIMARY KEY)")
                c.execute("INSERT INTO s.t VALUES (1), (2)")
            # Leave the connection open: shutdown must close idle connections.
        finally:
            assert stop_server(proc) == 0
        proc, port, _ = start_server(data, admin=False)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
            with conn.cursor() as c:
                c.execute("SELECT COUNT(*) FROM s.t")
                assert c.fetchone() == (2,)
            conn.close()
        finally:
            assert stop_server(proc) == 0


# --- An in-flight statement completes across SIGTERM ------------------------
#
# There is no fault point on the plain statement path, so the statement is
# made to stay in flight by a row lock, and "it is running inside the server"
# is proven with the lock manager's deadlock detector instead of a sleep:
#
#   rows 1, 2, 3 of s.t;  `holder` holds row 2, `blocker` holds row 3
#   (both in open transactions, both idle);  `victim` (in flight) runs
#   UPDATE t SET n = n + 10 WHERE n < 1000, a full scan that locks rows in
#   key order: it takes row 1 and waits for row 2.
#
# A throwaway autocommit connection first polls (lock-wait timeout 0) until
# row 1 is locked, i.e. the victim's statement has started. Then `holder`
# (lock-wait timeout 0) probes with SELECT ... WHERE id = 1 FOR UPDATE.
# Error 1213 means holder -> row 1 -> victim -> row 2 -> holder is a cycle,
# i.e. the victim's statement is waiting inside the server right now; the
# deadlock also rolls back holder's transaction, so the victim moves on to
# row 3 and waits for `blocker`. 1205 means "victim has not reached row 2
# yet": probe again. If the probe gets row 1 the victim's statement failed:
# the attempt is unwound and repeated (bounded).
#
# SIGTERM then closes the idle connections; closing `blocker` rolls back its
# transaction, which frees row 3, so the victim's statement finishes during
# the shutdown grace period. Its OK must arrive, the server must exit 0 and
# the update must be there after a restart (and blocker's must not).

PROBE_DEADLINE_S = 20.0
ATTEMPTS = 5


def _connect(port, database="s", **kw):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database=database, autocommit=True, **kw)


def _run_in_thread(conn, sql):
    """Run `sql` on `conn` in a thread; returns (thread, result dict)."""
    res = {"sent": threading.Event()}

    def run():
        try:
            with conn.cursor() as c:
                res["sent"].set()
                res["rows"] = c.execute(sql)
        except Exception as e:  # noqa: BLE001 - reported by the test
            res["error"] = e
        finally:
            res["sent"].set()

    th = threading.Thread(target=run, daemon=True)
    th.start()
    return th, res


def _probe_until_victim_waits(holder, th):
    """True when the victim's statement is proven to wait in the server,
    False when the attempt must be repeated."""
    deadline = time.monotonic() + PROBE_DEADLINE_S
    # First, harmlessly (autocommit, no other locks held, no wait): wait
    # until row 1 is locked, which only the victim's statement does.
    with _connect(holder.port) as p, p.cursor() as c:
        c.execute("SET innodb_lock_wait_timeout = 0")
        while True:
            if time.monotonic() >= deadline:
                raise AssertionError("victim statement never took row 1")
            if not th.is_alive():
                return False
            try:
                c.execute("SELECT n FROM t WHERE id = 1 FOR UPDATE")
            except pymysql.err.OperationalError as e:
                if e.args[0] != 1205:
                    raise
                break
    # Then the cycle probe: 1213 only once the victim waits for row 2.
    with holder.cursor() as c:
        while time.monotonic() < deadline:
            if not th.is_alive():
                return False  # the victim failed (e.g. chosen as a victim)
            try:
                c.execute("SELECT n FROM t WHERE id = 1 FOR UPDATE")
                return False  # got row 1: the victim was not there yet
            except pymysql.err.OperationalError as e:
                if e.args[0] == 1213:
                    return True
                if e.args[0] != 1205:
                    raise
    raise AssertionError("victim statement never seen waiting in the server")


def _setup_attempt(port):
    """Reset the rows and the lock holders; start the victim statement."""
    with _connect(port) as c0, c0.cursor() as c:
        c.execute("UPDATE t SET n = 0")
    holder = _connect(port)
    blocker = _connect(port)
    victim = _connect(port, read_timeout=STOP_DEADLINE_S + 10)
    with holder.cursor() as c:
        c.execute("SET innodb_lock_wait_timeout = 0")
        c.execute("BEGIN")
        c.execute("UPDATE t SET n = 50 WHERE id = 2")
    with blocker.cursor() as c:
        c.execute("BEGIN")
        c.execute("UPDATE t SET n = 99 WHERE id = 3")
    th, res = _run_in_thread(victim, "UPDATE t SET n = n + 10 WHERE n < 1000")
    assert res["sent"].wait(PROBE_DEADLINE_S)
    return holder, blocker, victim, th, res


def _unwind(holder, blocker, victim, th):
    for conn in (holder, blocker):
        try:
            conn.rollback()
        finally:
            conn.close()
    th.join(PROBE_DEADLINE_S)
    assert not th.is_alive(), "victim statement did not finish after unwinding"
    victim.close()


def test_inflight_statement_completes_on_sigterm():
    with tempfile.TemporaryDirectory(prefix="tributary-pytest-inflight-") as d:
        data = os.path.join(d, "data")
        proc, port, _ = start_server(data, admin=False)
        stopped = False
        try:
            with _connect(port, database=None) as c0, c0.cursor() as c:
                c.execute("CREATE DATABASE s")
                c.execute("CREATE TABLE s.t (id INT PRIMARY KEY, n INT)")
                c.execute("INSERT INTO s.t VALUES (1, 0), (2, 0), (3, 0)")
            for _ in range(ATTEMPTS):
                holder, blocker, victim, th, res = _setup_attempt(port)
                if _probe_until_victim_waits(holder, th):
                    break
                _unwind(holder, blocker, victim, th)
            else:
                raise AssertionError(f"could not catch the statement in flight in {ATTEMPTS} tries")
            # The victim now waits for row 3, held by the idle `blocker`.
            assert th.is_alive()
            rc = stop_server(proc)
            stopped = True
            th.join(STOP_DEADLINE_S)
            assert not th.is_alive(), "in-flight statement got no answer"
            assert "error" not in res, f"in-flight statement failed: {res.get('error')!r}"
            assert res["rows"] == 3
            assert rc == 0
        finally:
            if not stopped:
                stop_server(proc)
        proc, port, _ = start_server(data, admin=False)
        try:
            with _connect(port) as conn, conn.cursor() as c:
                c.execute("SELECT id, n FROM t ORDER BY id")
                assert c.fetchall() == ((1, 10), (2, 10), (3, 10))
        finally:
            assert stop_server(proc) == 0
