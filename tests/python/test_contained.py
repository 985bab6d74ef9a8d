"""Contained failures (issue 13, item 5): the disk filling up during
writes, simulated by the `fj/storage/log-write` fault point (a `return`
action with ENOSPC's message, since CI cannot mount a small file system):
statements that write get MySQL 1021, reads go on, the ISCP runner backs
off instead of retrying at every tick, and once space is back writes work
again and nothing acknowledged is lost."""

import json
import os
import tempfile
import time

import pymysql
import pytest

from conftest import start_server, stop_server

FULL = "fj/storage/log-write"


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="tributary-full-") as d:
        proc, port, _ = start_server(os.path.join(d, "data"), admin=False)
        yield port, proc
        assert stop_server(proc) == 0


def hits(cur, name, target=""):
    cur.execute("SELECT list_fault_points()")
    for p in json.loads(cur.fetchone()[0]):
        if p["name"] == name and (p["target"] or "") == target:
            return p["hits"]
    return 0


def wait_for(what, cond, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not (got := cond()):
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)
    return got


def test_a_full_disk_fails_writes_clearly_keeps_reads_and_backs_off(srv):
    port, proc = srv
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    cur = c.cursor()
    cur.execute("CREATE DATABASE full_disk")
    cur.execute("USE full_disk")
    cur.execute("CREATE TABLE t (id INT PRIMARY KEY, body TEXT)")
    cur.execute("INSERT INTO t VALUES " + ",".join(f"({i}, 'w{i} common')" for i in range(1, 11)))
    cur.execute("CREATE FULLTEXT INDEX ft ON t(body) ASYNC")
    acked = list(range(1, 11))
    wait_for("the index", lambda: index_current(cur))
    cur.execute("SELECT enable_fault_injection()")
    # The consumer's next unit stalls 2 s before its commit: its changes are
    # pending when the disk fills.
    cur.execute("SELECT add_fault_point('fj/iscp/cancel/long/before-watermark:ft', "
                "'1:1::', 'sleep', 2, '', false)")
    for i in range(11, 16):
        cur.execute(f"INSERT INTO t VALUES ({i}, 'w{i} common')")
        acked.append(i)
    wait_for("the unit to stall", lambda: hits(cur, "fj/iscp/cancel/long/before-watermark", "ft") >= 1)
    cur.execute(f"SELECT add_fault_point('{FULL}', ':::', 'return', 0, "
                "'No space left on device (os error 28)', false)")
    # Writes fail clearly, and write nothing.
    for i in range(100, 103):
        with pytest.raises(pymysql.err.MySQLError) as e:
            cur.execute(f"INSERT INTO t VALUES ({i}, 'lost {i}')")
        assert e.value.args[0] == 1021, e.value
        assert "No space left on device" in e.value.args[1]
    # Reads go on.
    cur.execute("SELECT COUNT(*) FROM t")
    assert cur.fetchone()[0] == len(acked)
    # The stalled unit wakes, fails to commit; the runner backs off: over 3 s
    # its retries (units, job-row error records, lease renewals) stay few,
    # where retrying at every 100 ms tick would make ~30 or more.
    wait_for("the unit's commit to fail", lambda: hits(cur, FULL) >= 4)
    before = hits(cur, FULL)
    time.sleep(3.0)  # the measured window, not a synchronisation
    during = hits(cur, FULL) - before
    assert during <= 12, f"{during} durable-write attempts in 3 s while the disk was full"
    assert proc.poll() is None, "the server died"
    # Space is back: writes work again, nothing acknowledged is lost, and
    # the index catches up.
    cur.execute(f"SELECT remove_fault_point('{FULL}')")
    cur.execute("SELECT remove_fault_point('fj/iscp/cancel/long/before-watermark:ft')")
    cur.execute("INSERT INTO t VALUES (200, 'w200 common')")
    acked.append(200)
    cur.execute("SELECT id FROM t ORDER BY id")
    ids = [r[0] for r in cur.fetchall()]
    assert ids == sorted(acked)
    cur.execute("SET fast_search = 1")
    wait_for("the index to catch up", lambda: fts(cur) == sorted(acked), timeout=60)
    cur.execute("SELECT list_fault_points()")
    assert json.loads(cur.fetchone()[0]) == []
    c.close()


def index_current(cur):
    cur.execute("SHOW ISCP STATUS")
    for r in cur.fetchall():
        if r[3] == "index_ft" and r[13] == "incremental" and r[9] == 0:
            return True
    return False


def fts(cur):
    cur.execute("SELECT id FROM t WHERE MATCH(body) AGAINST('common')")
    return sorted(r[0] for r in cur.fetchall())


def test_an_index_over_its_memory_budget_fails_its_job_not_the_process():
    with tempfile.TemporaryDirectory(prefix="tributary-budget-") as d:
        proc, port, _ = start_server(os.path.join(d, "data"), admin=False,
                                     extra_args=["--index-memory-budget", "1MB"])
        try:
            c = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
            cur = c.cursor()
            cur.execute("CREATE DATABASE budget")
            cur.execute("USE budget")
            cur.execute("CREATE TABLE big (id INT PRIMARY KEY, v VECF32(64))")
            vec = "[" + ",".join(["0.5"] * 63) + ",{}]"
            for lo in range(0, 6000, 500):
                cur.execute("INSERT INTO big VALUES " + ",".join(
                    f"({i}, '{vec.format(i)}')" for i in range(lo, lo + 500)))
            cur.execute("CREATE TABLE small (id INT PRIMARY KEY, body TEXT)")
            cur.execute("INSERT INTO small VALUES (1, 'fits easily'), (2, 'also fits')")
            # 6000 × 64-d vectors are ~1.5 MB before the graph: over budget.
            cur.execute("CREATE INDEX hv USING HNSW ON big(v) OP_TYPE 'vector_l2_ops' ASYNC")
            cur.execute("CREATE FULLTEXT INDEX ft ON small(body) ASYNC")

            def state(name):
                cur.execute("SELECT job_state, job_status FROM mo_catalog.mo_iscp_log "
                            f"WHERE job_name = 'index_{name}'")
                s, status = cur.fetchone()
                return s, json.loads(status)

            err = wait_for("the over-budget job to fail", lambda: state("hv")[0] == 4 and state("hv"),
                           timeout=60)
            assert err[1]["error_code"] >= 10000, err
            assert "memory budget" in err[1]["error_msg"], err
            wait_for("the small index", lambda: (s := state("ft"))[0] == 3
                     and s[1]["stage"] == "incremental")
            cur.execute("SELECT id FROM small WHERE MATCH(body) AGAINST('fits') ORDER BY id")
            assert [r[0] for r in cur.fetchall()] == [1, 2]
            # The process is fine and the table still answers (exactly,
            # without the failed index).
            assert proc.poll() is None
            cur.execute(f"SELECT id FROM big ORDER BY l2_distance(v, '{vec.format(17)}') LIMIT 1")
            assert cur.fetchone()[0] == 17
            c.close()
        finally:
            assert stop_server(proc) == 0
