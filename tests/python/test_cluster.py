"""Several compute-node processes over one PostgreSQL (issue 12): the seed's
multi-CN scenarios with real processes.

One throwaway PostgreSQL cluster (initdb in a temporary directory, trust
auth, 127.0.0.1 and a free port; scripts/pgproc.py) and three `tributary
serve --storage postgres://… --node-name cnN` processes per module. Exactly
one CN holds the ISCP runner lease (`SHOW STATUS LIKE
'Tributary_iscp_runner'`). Fault points are armed on the runner through SQL
(`add_fault_point`), which reaches only that process's registry.

Every scenario asserts DROP's outcome, the final `mo_iscp_log` state, that
the hidden tables are purged (PostgreSQL's `tsr_purged`, then deleted by
GC) and that no armed fault point is left on any CN. Waits poll a condition
with a deadline; no sleep stands in for synchronisation.
"""

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

import pymysql
import pytest

from conftest import start_server, stop_server

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
import pgproc  # noqa: E402

CANCELED = 5
CANCELING = 6
LEASE_TTL_MS = 2000
DEADLINE_S = 60.0


def wait_for(what, cond, timeout=DEADLINE_S, every=0.05):
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(every)


class Node:
    """One `tributary serve` process on the shared PostgreSQL database."""

    def __init__(self, name, url, root):
        self.name = name
        self.url = url
        self.data = os.path.join(root, name)
        self.proc = None
        self.port = None

    def start(self):
        self.proc, self.port, _ = start_server(
            self.data,
            extra_args=[
                "--storage", self.url, "--node-name", self.name,
                "--iscp-interval-ms", "50", "--lease-ttl-ms", str(LEASE_TTL_MS),
                "--gc-interval-ms", "300", "--drop-wait-ms", "5000",
                "--admin-listen", "off",
            ],
            admin=False,
        )

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=20)

    def stop(self):
        assert stop_server(self.proc) == 0, f"{self.name} exited non-zero"

    def connect(self, db=None, **kw):
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                               database=db, autocommit=True, **kw)

    def q(self, sql, db=None):
        with self.connect(db) as c, c.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()

    def is_runner(self):
        rows = self.q("SHOW STATUS LIKE 'Tributary_iscp_runner'")
        return rows and rows[0][1] == "1"

    def points(self):
        return json.loads(self.q("SELECT list_fault_points()")[0][0])

    def arm(self, key, action, iarg):
        self.q("SELECT enable_fault_injection()")
        self.q(f"SELECT add_fault_point('{key}', ':::', '{action}', {iarg}, '', false)")

    def hits(self, name, target):
        for p in self.points():
            if p["name"] == name and (p["target"] or "") == target:
                return p["hits"]
        return 0


class Cluster:
    def __init__(self):
        self.pg = pgproc.PgCluster(pgproc.debian_bin(), fsync=False, connect=False,
                                   settings=["deadlock_timeout=100ms", "max_connections=400"])
        self.pg.psql("postgres", "CREATE DATABASE tributary")
        self.url = self.pg.url("tributary")
        self.root = tempfile.mkdtemp(prefix="tributary-cluster-")
        self.nodes = [Node(f"cn{i}", self.url, self.root) for i in (1, 2, 3)]
        for n in self.nodes:
            n.start()

    def runner(self):
        """The one live node holding the runner lease (waits for one)."""
        def one():
            live = [n for n in self.nodes if n.alive()]
            holders = [n for n in live if n.is_runner()]
            return holders[0] if len(holders) == 1 else None
        return wait_for("exactly one ISCP runner", one)

    def others(self, node):
        return [n for n in self.nodes if n is not node and n.alive()]

    def pgq(self, sql):
        return self.pg.psql("tributary", sql)

    def close(self):
        for n in self.nodes:
            if n.alive():
                n.stop()
        self.pg.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    yield c
    c.close()


def job(node, db, index):
    """(job_id, state, watermark, storage_id, status) of the newest job of `index`."""
    rows = node.q(
        "SELECT job_id, job_state, watermark, job_spec, job_status FROM mo_catalog.mo_iscp_log "
        f"WHERE job_name = 'index_{index}' ORDER BY job_id DESC")
    for job_id, state, wm, spec, status in rows:
        spec = json.loads(spec)
        if spec["db"] == db:
            return job_id, state, wm, spec["storage_id"], json.loads(status)
    return None


def wait_incremental(node, db, index):
    return wait_for(f"{index} built", lambda: (
        (j := job(node, db, index)) and j[4]["stage"] == "incremental" and j[2] > 0 and j))


def wait_state(node, db, index, state, timeout=DEADLINE_S):
    return wait_for(f"{index} in state {state}",
                    lambda: (j := job(node, db, index)) and j[1] == state and j, timeout)


def assert_hidden_purged(cluster, storage_id):
    assert cluster.pgq(f"SELECT count(*) FROM tsr_purged WHERE table_id = {storage_id}") == "1"
    wait_for(f"hidden table {storage_id} deleted by GC",
             lambda: cluster.pgq(
                 f"SELECT count(*) FROM tsr_rows WHERE table_id = {storage_id}") == "0")


def assert_no_points(cluster):
    for n in cluster.nodes:
        if n.alive():
            assert n.points() == [], f"armed fault point left on {n.name}"


def disarm(cluster):
    for n in cluster.nodes:
        if n.alive():
            for p in n.points():
                key = p["name"] + (":" + p["target"] if p["target"] else "")
                n.q(f"SELECT remove_fault_point('{key}')")


def make_table(node, db, rows, fulltext=False):
    node.q(f"CREATE DATABASE {db}")
    node.q("CREATE TABLE t (id INT PRIMARY KEY, body TEXT, v VECF32(3))", db)
    insert(node, db, range(1, rows + 1))


def insert(node, db, ids):
    values = ",".join(f"({i}, 'w{i} common', '[{i},{i % 7},{i % 3}]')" for i in ids)
    node.q(f"INSERT INTO t VALUES {values}", db)


def warnings_of(conn):
    with conn.cursor() as cur:
        cur.execute("SHOW WARNINGS")
        return cur.fetchall()


@pytest.mark.parametrize("what", ["index", "table"])
def test_drop_from_a_non_runner_while_the_runners_consumer_is_stalled(cluster, what):
    runner = cluster.runner()
    a, b = cluster.others(runner)
    db = f"stall_{what}"
    make_table(a, db, 20)
    a.q("CREATE INDEX hv USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC", db)
    job_id, _, _, storage_id, _ = wait_incremental(a, db, "hv")
    # The runner's consumer stalls after it has written the hidden table,
    # before its job-row update.
    key = "fj/iscp/cancel/long/before-watermark"
    runner.arm(f"{key}:hv", "sleep", 30)
    insert(a, db, range(100, 110))
    wait_for("the consumer to reach the stall", lambda: runner.hits(key, "hv") >= 1)
    with b.connect(db) as c:
        t0 = time.monotonic()
        with c.cursor() as cur:
            cur.execute("DROP INDEX hv ON t" if what == "index" else "DROP TABLE t")
        took = time.monotonic() - t0
        assert warnings_of(c) == ()
    assert took < 1.0, f"DROP from {b.name} took {took:.3f} s"
    got = wait_state(b, db, "hv", CANCELED)
    assert got[0] == job_id
    disarm(cluster)
    assert_no_points(cluster)
    assert_hidden_purged(cluster, storage_id)
    if what == "table":
        with pytest.raises(pymysql.err.ProgrammingError):
            a.q("SELECT * FROM t", db)


def knn_all(node, db, n):
    with node.connect(db) as c, c.cursor() as cur:
        cur.execute("SET fast_search = 1")
        cur.execute(f"SELECT id FROM t ORDER BY l2_distance(v, '[0,0,0]') LIMIT {n}")
        return [r[0] for r in cur.fetchall()]


def fts_all(node, db):
    with node.connect(db) as c, c.cursor() as cur:
        cur.execute("SET fast_search = 1")
        cur.execute("SELECT id FROM t WHERE MATCH(body) AGAINST('common')")
        return [r[0] for r in cur.fetchall()]


def test_runner_failover_resumes_every_job_and_converges_a_drop(cluster):
    runner = cluster.runner()
    a, b = cluster.others(runner)
    db = "failover"
    make_table(a, db, 50)
    a.q("CREATE INDEX hv USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC", db)
    a.q("CREATE FULLTEXT INDEX ft ON t(body) ASYNC", db)
    a.q("CREATE FULLTEXT INDEX ft2 ON t(body) ASYNC", db)
    for ix in ("hv", "ft", "ft2"):
        wait_incremental(a, db, ix)
    # Consumers mid-unit: each stalls after writing its hidden table.
    key = "fj/iscp/cancel/long/before-watermark"
    for ix in ("hv", "ft", "ft2"):
        runner.arm(f"{key}:{ix}", "sleep", 30)
    insert(a, db, range(100, 140))
    for ix in ("hv", "ft", "ft2"):
        wait_for(f"{ix} mid-unit", lambda ix=ix: runner.hits(key, ix) >= 1)
    # Writers keep going on another CN through the failover.
    stop = threading.Event()
    acked = []
    errors = []

    def writer():
        i = 1000
        with a.connect(db) as c, c.cursor() as cur:
            while not stop.is_set():
                try:
                    cur.execute(f"INSERT INTO t VALUES ({i}, 'w{i} common', '[{i},1,2]')")
                    acked.append(i)
                except pymysql.err.MySQLError as e:
                    errors.append(e)
                i += 1

    w = threading.Thread(target=writer)
    w.start()
    try:
        killed_at = time.monotonic()
        runner.kill()
        # A DROP issued during the failover.
        with b.connect(db) as c, c.cursor() as cur:
            cur.execute("DROP INDEX ft2 ON t")
        new = wait_for("a new runner", lambda: next(
            (n for n in cluster.others(runner) if n.is_runner()), None))
        # The lease expires at most a TTL after the runner's last renewal;
        # the next tick of another CN (50 ms) takes it.
        took = time.monotonic() - killed_at
        assert took < LEASE_TTL_MS / 1000 + 1.5, f"failover took {took:.2f} s"
        wait_for("more acknowledged writes", lambda: len(acked) >= 20)
    finally:
        stop.set()
        w.join(timeout=30)
    assert errors == [], errors[:3]
    wait_state(new, db, "ft2", CANCELED)
    # Every index equals its table: resumed from the durable watermark,
    # nothing lost, nothing applied twice.
    ids = sorted(r[0] for r in a.q("SELECT id FROM t", db))
    assert len(ids) == 50 + 40 + len(acked)
    for n in cluster.others(runner):
        wait_for(f"ft caught up on {n.name}", lambda n=n: sorted(fts_all(n, db)) == ids)
        got = wait_for(f"hv caught up on {n.name}",
                       lambda n=n: (k := knn_all(n, db, len(ids))) and sorted(k) == ids and k)
        assert len(got) == len(set(got)), "duplicated index entries"
    # The killed node comes back as a follower.
    runner.start()
    cluster.runner()
    disarm(cluster)
    assert_no_points(cluster)
    ft2 = job(new, db, "ft2")
    assert_hidden_purged(cluster, ft2[3])


def test_restart_recovery_of_a_job_left_canceling(cluster):
    runner = cluster.runner()
    a, _ = cluster.others(runner)
    db = "restart"
    make_table(a, db, 10)
    a.q("CREATE INDEX hv USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC", db)
    job_id, _, _, storage_id, _ = wait_incremental(a, db, "hv")
    key = "fj/iscp/cancel/before-mark-canceled"
    runner.arm(key, "sleep", 30)
    with a.connect(db) as c, c.cursor() as cur:
        cur.execute("DROP INDEX hv ON t")  # returns after drop_wait with a warning
    wait_for("the cancel queue to stall", lambda: runner.hits(key, "") >= 1)
    assert job(a, db, "hv")[1] == CANCELING
    runner.kill()
    # Every CN restarted on the same database.
    for n in cluster.nodes:
        if n.alive():
            n.stop()
    for n in cluster.nodes:
        n.start()
    got = wait_state(cluster.nodes[0], db, "hv", CANCELED)
    assert got[0] == job_id
    cluster.runner()
    assert_no_points(cluster)
    assert_hidden_purged(cluster, storage_id)


def test_postgres_away_for_five_seconds(cluster):
    runner = cluster.runner()
    a, b = cluster.others(runner)
    db = "outage"
    make_table(a, db, 10)
    a.q("CREATE FULLTEXT INDEX ft ON t(body) ASYNC", db)
    wait_incremental(a, db, "ft")
    acked = list(range(1, 11))
    failures = []
    next_id = [100]
    sessions = {}

    def try_insert(node, fresh=False):
        i = next_id[0]
        next_id[0] += 1
        try:
            if fresh:
                node.q(f"INSERT INTO t VALUES ({i}, 'w{i} common', '[1,2,3]')", db)
            else:
                if node.name not in sessions:
                    sessions[node.name] = node.connect(db)
                with sessions[node.name].cursor() as cur:
                    cur.execute(f"INSERT INTO t VALUES ({i}, 'w{i} common', '[1,2,3]')")
            acked.append(i)
            return True
        except pymysql.err.MySQLError as e:
            failures.append(e)
            return False

    assert try_insert(b)
    cluster.pg.pause()
    t0 = time.monotonic()
    try:
        # Statements fail with a clear error while PostgreSQL is away.
        while time.monotonic() - t0 < 5.0:
            assert not try_insert(b)
            # A new connection cannot read its account: the same error,
            # not "access denied".
            with pytest.raises(pymysql.err.MySQLError) as refused:
                b.connect(db).close()
            assert refused.value.args[0] == 1030, refused.value
            time.sleep(0.2)
    finally:
        cluster.pg.start()
    assert failures, "no statement failed while PostgreSQL was away"
    codes = {f.args[0] for f in failures}
    assert codes <= {1030}, f"unexpected error codes {codes}: {failures[:3]}"
    assert "unavailable" in str(failures[0].args[1]).lower()
    for n in cluster.nodes:
        assert n.alive(), f"{n.name} died during the outage"
    # Everything resumes; nothing acknowledged is lost.
    wait_for("writes to succeed again", lambda: try_insert(b))
    wait_for("writes to succeed on every CN",
             lambda: all(try_insert(n, fresh=True) for n in cluster.nodes))
    for c in sessions.values():
        c.close()
    ids = sorted(r[0] for r in a.q("SELECT id FROM t", db))
    assert set(acked) <= set(ids)
    wait_for("the index to catch up", lambda: sorted(fts_all(a, db)) == ids)
    cluster.runner()
    assert_no_points(cluster)
