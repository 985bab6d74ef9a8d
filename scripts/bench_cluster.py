#!/usr/bin/env python3
"""Cluster benchmark (issue 12): Tributary compute nodes on one PostgreSQL
database against one Tributary on its embedded store, in the same run.

Configurations, each on a fresh store (the embedded one in a temporary
directory; a fresh database in one throwaway PostgreSQL cluster started by
this script, scripts/pgproc.py, fsync and synchronous_commit on):

  embedded   one `tributary serve --data DIR`
  pg-1cn     one `tributary serve --storage postgres://… --node-name cn1`
  pg-2cn     two such processes on the same database
  pg-3cn     three

Workloads per configuration (every client is its own process with one
PyMySQL connection; clients are spread round-robin over the configuration's
CNs; each rate is total rows or queries per second over the window from
a shared barrier to the last client's end):

  insert 1 row      --clients clients, single-row autocommit INSERTs
  insert 100 rows   --clients clients, 100-row multi-VALUES INSERTs
  point select      --clients clients, SELECT … WHERE id = <random>
  vector search     --clients clients, ORDER BY l2_distance(v, q) LIMIT 10
                    over an HNSW ASYNC index of --vectors 16-d vectors,
                    after the index caught up (fresh search: the default)

Then, on pg-3cn only:

  DROP latency      --drops times: an HNSW ASYNC index on a small table,
                    the runner's consumer stalled by a 30 s `sleep` fault
                    point after it wrote the hidden table, DROP INDEX from
                    a non-runner CN; p50 / p99 of DROP's wall time
  failover          --failovers times: writers on a non-runner CN, SIGKILL
                    the runner; time from the kill to the first unit a new
                    runner applies (the job's watermark moves past its
                    value at the kill, read from mo_iscp_log); the killed
                    CN is restarted before the next round

The report gives the machine, versions, settings and every median.
Reproduce:

    cargo build --release --bin tributary
    python3 scripts/bench_cluster.py [--clients 6] [--seconds 8] [--json out.json]

Tributary binary: $TRIBUTARY_BIN, else $CARGO_TARGET_DIR/release/tributary.
"""
import argparse
import datetime
import json
import multiprocessing
import os
import platform
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pgproc  # noqa: E402

try:
    import pymysql
except ImportError:
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "PyMySQL"], check=True)
    import pymysql

TARGET = os.environ.get("CARGO_TARGET_DIR", "target")
BIN = os.environ.get("TRIBUTARY_BIN", os.path.join(TARGET, "release", "tributary"))
DIM = 16


def log(*a):
    print(*a, file=sys.stderr, flush=True)


class Node:
    def __init__(self, name, args, root):
        self.name = name
        self.args = args
        self.data = os.path.join(root, name)
        self.proc = None
        self.port = None

    def start(self):
        self.proc = subprocess.Popen(
            [BIN, "serve", "--data", self.data, "--listen", "127.0.0.1:0",
             "--admin-listen", "off", *self.args],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        deadline = time.monotonic() + 60
        for line in self.proc.stdout:
            m = re.match(r"listening on [\d.]+:(\d+)", line)
            if m:
                self.port = int(m.group(1))
                break
            if time.monotonic() > deadline:
                break
        if self.port is None:
            raise RuntimeError(f"{self.name} did not start")
        threading.Thread(target=lambda: [None for _ in self.proc.stdout], daemon=True).start()

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(timeout=60)

    def conn(self, db=None):
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", database=db,
                               autocommit=True)

    def q(self, sql, db=None):
        with self.conn(db) as c, c.cursor() as cur:
            cur.execute(sql)
            return cur.fetchall()

    def is_runner(self):
        return self.q("SHOW STATUS LIKE 'Tributary_iscp_runner'")[0][1] == "1"


def wait_for(what, cond, timeout=120.0, every=0.01):
    deadline = time.monotonic() + timeout
    while True:
        got = cond()
        if got:
            return got
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(every)


# ---- client processes ----------------------------------------------------

def vec(i):
    r = random.Random(i)
    return "[" + ",".join(f"{r.random():.4f}" for _ in range(DIM)) + "]"


def client(kind, port, db, idx, n, barrier, out):
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", database=db, autocommit=True)
    cur = c.cursor()
    rnd = random.Random(idx)
    base = 10_000_000 * (idx + 1)
    barrier.wait()
    t0 = time.monotonic()
    done = 0
    for i in range(n):
        if kind == "insert1":
            k = base + i
            cur.execute(f"INSERT INTO t VALUES ({k}, 'row {k}', '{vec(k)}')")
            done += 1
        elif kind == "insert100":
            k = base + i * 100
            cur.execute("INSERT INTO t VALUES " + ",".join(
                f"({k + j}, 'row {k + j}', '{vec(k + j)}')" for j in range(100)))
            done += 100
        elif kind == "point":
            cur.execute(f"SELECT body FROM t WHERE id = {rnd.randrange(1, out['rows'] + 1)}")
            assert len(cur.fetchall()) == 1
            done += 1
        elif kind == "knn":
            cur.execute(f"SELECT id FROM t ORDER BY l2_distance(v, '{vec(-rnd.randrange(1 << 30))}')"
                        " LIMIT 10")
            assert len(cur.fetchall()) == 10
            done += 1
    out[idx] = (t0, time.monotonic(), done)
    c.close()


def run_clients(kind, nodes, db, clients, per_client, rows=0):
    mgr = multiprocessing.Manager()
    out = mgr.dict()
    out["rows"] = rows
    barrier = multiprocessing.Barrier(clients)
    procs = [multiprocessing.Process(
        target=client, args=(kind, nodes[i % len(nodes)].port, db, i, per_client, barrier, out))
        for i in range(clients)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
        if p.exitcode != 0:
            raise RuntimeError(f"{kind} client failed")
    res = [out[i] for i in range(clients)]
    start = min(r[0] for r in res)
    end = max(r[1] for r in res)
    return sum(r[2] for r in res) / (end - start)


# ---- configurations ------------------------------------------------------

def common_args():
    return ["--iscp-interval-ms", "100"]


def start_config(name, pg, root):
    if name == "embedded":
        nodes = [Node("embedded", common_args(), root)]
    else:
        n = int(name.split("-")[1][0])
        db = name.replace("-", "_")
        pg.psql("postgres", f"CREATE DATABASE {db}")
        nodes = [Node(f"cn{i}", ["--storage", pg.url(db), "--node-name", f"cn{i}",
                                 "--lease-ttl-ms", "2000", "--drop-wait-ms", "5000",
                                 *common_args()], root)
                 for i in range(1, n + 1)]
    for node in nodes:
        node.start()
    return nodes


def workloads(nodes, args):
    first = nodes[0]
    first.q("CREATE DATABASE b")
    first.q(f"CREATE TABLE t (id BIGINT PRIMARY KEY, body VARCHAR(100), v VECF32({DIM}))", "b")
    res = {}
    res["insert 1 row"] = run_clients("insert1", nodes, "b", args.clients, args.single)
    first.q("DELETE FROM t", "b")
    res["insert 100 rows"] = run_clients("insert100", nodes, "b", args.clients, args.batch)
    first.q("DELETE FROM t", "b")
    for lo in range(1, args.vectors + 1, 500):
        first.q("INSERT INTO t VALUES " + ",".join(
            f"({i}, 'row {i}', '{vec(i)}')" for i in range(lo, min(lo + 500, args.vectors + 1))),
            "b")
    res["point select"] = run_clients("point", nodes, "b", args.clients, args.point,
                                      rows=args.vectors)
    first.q("CREATE INDEX hv USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC", "b")
    wait_for("the HNSW build", lambda: index_ready(first), timeout=600)
    res["vector search"] = run_clients("knn", nodes, "b", args.clients, args.knn)
    return res


def index_ready(node):
    for r in node.q("SHOW ISCP STATUS"):
        if r[3] == "index_hv" and r[6] == "Completed" and r[13] == "incremental" and r[9] == 0:
            return True
    return False


def job_row(node, db, index):
    for job_id, state, wm, spec in node.q(
            "SELECT job_id, job_state, watermark, job_spec FROM mo_catalog.mo_iscp_log "
            f"WHERE job_name = 'index_{index}' ORDER BY job_id DESC"):
        if json.loads(spec)["db"] == db:
            return job_id, state, wm
    return None


def runner_of(nodes):
    return wait_for("one runner", lambda: (
        (r := [n for n in nodes if n.alive() and n.is_runner()]) and len(r) == 1 and r[0]))


def drop_latency(nodes, reps):
    out = []
    runner = runner_of(nodes)
    other = [n for n in nodes if n is not runner]
    a = other[0]
    b = other[-1]
    runner.q("SELECT enable_fault_injection()")
    for i in range(reps):
        db = f"drop{i}"
        a.q(f"CREATE DATABASE {db}")
        a.q(f"CREATE TABLE t (id INT PRIMARY KEY, v VECF32({DIM}))", db)
        a.q("INSERT INTO t VALUES " + ",".join(f"({k}, '{vec(k)}')" for k in range(1, 51)), db)
        a.q("CREATE INDEX hv USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC", db)
        wait_for("the build", lambda: (j := job_row(a, db, "hv")) and j[2] > 0)
        key = "fj/iscp/cancel/long/before-watermark:hv"
        runner.q(f"SELECT add_fault_point('{key}', ':::', 'sleep', 30, '', false)")
        a.q("INSERT INTO t VALUES " + ",".join(f"({k}, '{vec(k)}')" for k in range(100, 110)), db)
        wait_for("the stall", lambda: any(
            p["hits"] >= 1 for p in json.loads(runner.q("SELECT list_fault_points()")[0][0])))
        t0 = time.monotonic()
        b.q("DROP INDEX hv ON t", db)
        out.append(time.monotonic() - t0)
        runner.q(f"SELECT remove_fault_point('{key}')")
        wait_for("Canceled", lambda: job_row(b, db, "hv")[1] == 5)
    return out


def failover(nodes, reps):
    out = []
    for i in range(reps):
        runner = runner_of(nodes)
        a = next(n for n in nodes if n is not runner)
        db = f"fo{i}"
        a.q(f"CREATE DATABASE {db}")
        a.q("CREATE TABLE t (id INT PRIMARY KEY, body TEXT)", db)
        a.q("CREATE FULLTEXT INDEX ft ON t(body) ASYNC", db)
        wait_for("the build", lambda: (j := job_row(a, db, "ft")) and j[2] > 0)
        stop = threading.Event()

        def writer():
            k = 0
            with a.conn(db) as c, c.cursor() as cur:
                while not stop.is_set():
                    k += 1
                    cur.execute(f"INSERT INTO t VALUES ({k}, 'w{k}')")
                    time.sleep(0.005)

        w = threading.Thread(target=writer)
        w.start()
        try:
            wait_for("units applied", lambda: job_row(a, db, "ft")[2] > 0)
            wm = job_row(a, db, "ft")[2]
            t0 = time.monotonic()
            runner.kill()
            wait_for("a new runner's first unit", lambda: job_row(a, db, "ft")[2] > wm,
                     every=0.005)
            out.append(time.monotonic() - t0)
        finally:
            stop.set()
            w.join()
        runner.start()
    return out


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--clients", type=int, default=6)
    ap.add_argument("--single", type=int, default=600, help="single-row INSERTs per client")
    ap.add_argument("--batch", type=int, default=40, help="100-row INSERTs per client")
    ap.add_argument("--point", type=int, default=1500, help="point SELECTs per client")
    ap.add_argument("--knn", type=int, default=300, help="vector searches per client")
    ap.add_argument("--vectors", type=int, default=10000)
    ap.add_argument("--drops", type=int, default=20)
    ap.add_argument("--failovers", type=int, default=5)
    ap.add_argument("--configs", default="embedded,pg-1cn,pg-2cn,pg-3cn")
    ap.add_argument("--json")
    args = ap.parse_args()
    pg = pgproc.PgCluster(pgproc.debian_bin(), connect=False,
                          settings=["deadlock_timeout=100ms", "max_connections=400"])
    root = tempfile.mkdtemp(prefix="bench-cluster-")
    report = {"machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores",
              "date": datetime.datetime.now().isoformat(timespec="seconds"),
              "postgres": pg.version, "args": vars(args), "rates": {}}
    try:
        for name in args.configs.split(","):
            log(f"== {name}")
            nodes = start_config(name, pg, root)
            try:
                report["rates"][name] = workloads(nodes, args)
                log(json.dumps(report["rates"][name]))
                if name == "pg-3cn":
                    d = drop_latency(nodes, args.drops)
                    report["drop_s"] = d
                    log(f"DROP p50 {pct(d, 50) * 1000:.1f} ms p99 {pct(d, 99) * 1000:.1f} ms")
                    f = failover(nodes, args.failovers)
                    report["failover_s"] = f
                    log(f"failover median {statistics.median(f):.2f} s max {max(f):.2f} s")
            finally:
                for n in nodes:
                    if n.alive():
                        n.stop()
    finally:
        pg.stop()
    print(f"# bench_cluster {report['date']} on {report['machine']}, PostgreSQL {pg.version}, "
          f"{args.clients} clients")
    names = list(report["rates"])
    print("| workload | " + " | ".join(names) + " | " +
          " | ".join(f"{n} / embedded" for n in names if n != "embedded") + " |")
    print("|---" * (1 + 2 * len(names) - 1) + "|")
    for w in next(iter(report["rates"].values())):
        vals = [report["rates"][n][w] for n in names]
        emb = report["rates"].get("embedded", {}).get(w)
        ratios = [f"{report['rates'][n][w] / emb:.2f}" for n in names if n != "embedded" and emb]
        print(f"| {w} | " + " | ".join(f"{v:,.0f}" for v in vals) + " | " +
              " | ".join(ratios) + " |")
    if "drop_s" in report:
        d = report["drop_s"]
        print(f"\nDROP INDEX from a non-runner CN, consumer stalled (n={len(d)}): "
              f"p50 {pct(d, 50) * 1000:.1f} ms, p99 {pct(d, 99) * 1000:.1f} ms, "
              f"max {max(d) * 1000:.1f} ms")
    if "failover_s" in report:
        f = report["failover_s"]
        print(f"Failover, runner SIGKILLed → first unit by the new runner (n={len(f)}, lease TTL "
              f"2 s): median {statistics.median(f):.2f} s, max {max(f):.2f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)


if __name__ == "__main__":
    main()
