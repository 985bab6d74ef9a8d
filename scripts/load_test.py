#!/usr/bin/env python3
"""Mixed-load latency test through the MySQL server (issue 17, item 3).

A table of `--rows` rows (id, 8-word body, VECF32(`--dims`) vector) with an
HNSW index (`--mode async`: `... ASYNC`; `--mode sync`: maintained by the
writing transaction) and a full-text index (same mode). Then `--clients`
connections, for `--seconds`, run a mix of

    vector   SELECT id FROM t ORDER BY l2_distance(v, '[..]') LIMIT 10
    point    SELECT body FROM t WHERE id = ?
    fulltext SELECT id FROM t WHERE MATCH(body) AGAINST('wN') LIMIT 10
    insert   INSERT INTO t VALUES (new id, body, vector)
    update   UPDATE t SET body = .., v = .. WHERE id = ?
    delete   DELETE FROM t WHERE id = ?

and the script prints count, errors, p50, p99 and max latency per kind, plus
the machine (nproc, CPU model). Latency is measured in the client around
execute + fetch. Clients are spread over `--procs` processes (threads in
each) so the Python GIL adds as little queueing as possible.

Bounded: every client stops at the deadline (a statement in flight may
finish later; PyMySQL's read timeout is 120 s), loopback only, and the
server this script starts (on a free port, in a temporary directory) is
stopped with SIGTERM at the end. `--port` uses a running server instead.

    cargo build --release --bin tributary
    $CARGO_TARGET_DIR/venv/bin/python scripts/load_test.py --mode async
    $CARGO_TARGET_DIR/venv/bin/python scripts/load_test.py --mode sync

`--max-search-ms X` exits 1 when a vector search took longer than X ms.
`tests/python/test_load.py` runs a small version of this in CI.
"""
import argparse
import json
import multiprocessing as mp
import os
import platform
import random
import sys
import tempfile
import threading
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverproc import start_server, stop_server  # noqa: E402

DEFAULT_BIN = os.path.join(
    os.environ.get("CARGO_TARGET_DIR", "/var/tmp/tributary-target"), "release", "tributary"
)
READY_DEADLINE_S = 600.0
VOCAB = [f"w{i}" for i in range(200)]
# Statement mix (weights).
MIX = [
    ("vector", 30),
    ("point", 25),
    ("fulltext", 10),
    ("insert", 10),
    ("update", 20),
    ("delete", 5),
]
KINDS = [k for k, _ in MIX]


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "os": platform.platform()}


def connect(host, port, db=None):
    return pymysql.connect(host=host, port=port, user="root", password="", database=db,
                           autocommit=True, connect_timeout=30, read_timeout=120,
                           write_timeout=120)


def vec(rnd, dims):
    return "[" + ",".join(f"{rnd.random():.4f}" for _ in range(dims)) + "]"


def body(rnd):
    return " ".join(rnd.choice(VOCAB) for _ in range(8))


def setup(host, port, rows, dims, mode, seed=1):
    """Create database `load` with table t (rows rows) and its indexes;
    returns once every index has caught up (bounded)."""
    rnd = random.Random(seed)
    c = connect(host, port)
    cur = c.cursor()
    cur.execute("DROP DATABASE IF EXISTS load")
    cur.execute("CREATE DATABASE load")
    cur.execute("USE load")
    cur.execute(f"CREATE TABLE t (id BIGINT PRIMARY KEY, body TEXT, v VECF32({dims}))")
    suffix = " ASYNC" if mode == "async" else ""
    cur.execute("CREATE INDEX vx USING HNSW ON t(v) OP_TYPE 'vector_l2_ops'" + suffix)
    cur.execute("CREATE FULLTEXT INDEX ft ON t(body)" + suffix)
    for lo in range(0, rows, 200):
        vals = ",".join(f"({i}, '{body(rnd)}', '{vec(rnd, dims)}')"
                        for i in range(lo, min(rows, lo + 200)))
        cur.execute("INSERT INTO t VALUES " + vals)
    deadline = time.monotonic() + READY_DEADLINE_S
    while True:
        cur.execute("SHOW ISCP STATUS")
        cols = [d[0] for d in cur.description]
        jobs = [dict(zip(cols, r)) for r in cur.fetchall()]
        pending = [j for j in jobs
                   if j["stage"] not in ("incremental", "sync") or j["lag_ts"] != 0]
        if not pending:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"indexes not ready: {pending}")
        time.sleep(0.2)
    c.close()


def percentile(sorted_ms, p):
    if not sorted_ms:
        return 0.0
    i = min(len(sorted_ms) - 1, max(0, int(round(p / 100.0 * len(sorted_ms) + 0.5)) - 1))
    return sorted_ms[i]


def _client(host, port, cid, rows, dims, until, out, max_ops):
    rnd = random.Random(1000 + cid)
    lat = {k: [] for k in KINDS}
    errors = {k: 0 for k in KINDS}
    samples = []
    next_id = 10_000_000 + cid * 1_000_000
    kinds, weights = zip(*MIX)
    try:
        c = connect(host, port, "load")
    except Exception as e:  # noqa: BLE001 - reported, not raised
        out.append((lat, {"connect": 1}, [repr(e)]))
        return
    cur = c.cursor()
    n = 0
    while time.monotonic() < until and n < max_ops:
        n += 1
        kind = rnd.choices(kinds, weights)[0]
        if kind == "vector":
            sql = f"SELECT id FROM t ORDER BY l2_distance(v, '{vec(rnd, dims)}') LIMIT 10"
        elif kind == "point":
            sql = f"SELECT body FROM t WHERE id = {rnd.randrange(rows)}"
        elif kind == "fulltext":
            sql = f"SELECT id FROM t WHERE MATCH(body) AGAINST('{rnd.choice(VOCAB)}') LIMIT 10"
        elif kind == "insert":
            next_id += 1
            sql = f"INSERT INTO t VALUES ({next_id}, '{body(rnd)}', '{vec(rnd, dims)}')"
        elif kind == "update":
            sql = (f"UPDATE t SET body = '{body(rnd)}', v = '{vec(rnd, dims)}' "
                   f"WHERE id = {rnd.randrange(rows)}")
        else:
            sql = f"DELETE FROM t WHERE id = {rnd.randrange(rows)}"
        t0 = time.perf_counter()
        try:
            cur.execute(sql)
            cur.fetchall()
        except pymysql.err.OperationalError as e:
            errors[kind] += 1
            if len(samples) < 3:
                samples.append(f"{kind}: {e}")
            if e.args and e.args[0] in (2006, 2013):  # connection lost
                break
            continue
        except pymysql.err.MySQLError as e:
            errors[kind] += 1
            if len(samples) < 3:
                samples.append(f"{kind}: {e}")
            continue
        lat[kind].append((time.perf_counter() - t0) * 1000.0)
    c.close()
    out.append((lat, errors, samples))


def _proc(host, port, cids, rows, dims, until, max_ops, q):
    out = []
    threads = [threading.Thread(target=_client,
                                args=(host, port, cid, rows, dims, until, out, max_ops))
               for cid in cids]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    q.put(out)


def run_load(host, port, clients, seconds, rows, dims, procs=4, max_ops=1_000_000):
    """Run the mix; returns {kind: {n, errors, p50, p99, max}} (ms) and
    error samples."""
    sys.setswitchinterval(0.001)
    procs = max(1, min(procs, clients))
    until = time.monotonic() + seconds
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    workers = []
    for p in range(procs):
        cids = list(range(p, clients, procs))
        w = ctx.Process(target=_proc, args=(host, port, cids, rows, dims, until, max_ops, q))
        w.start()
        workers.append(w)
    lat = {k: [] for k in KINDS}
    errors = {k: 0 for k in KINDS}
    samples = []
    # Every statement has a 120 s read timeout: bounded.
    for _ in workers:
        for l, e, s in q.get(timeout=seconds + 300):
            for k, v in l.items():
                lat[k].extend(v)
            for k, v in e.items():
                errors[k] = errors.get(k, 0) + v
            samples.extend(s)
    for w in workers:
        w.join(timeout=30)
    report = {}
    for k in KINDS:
        s = sorted(lat[k])
        report[k] = {
            "n": len(s),
            "errors": errors.get(k, 0),
            "p50": percentile(s, 50),
            "p99": percentile(s, 99),
            "max": s[-1] if s else 0.0,
            "over_1s": sum(1 for x in s if x > 1000.0),
        }
    if errors.get("connect"):
        report["connect_errors"] = errors["connect"]
    return report, samples[:10]


def print_report(report, args, m):
    print(f"machine: nproc={m['nproc']} cpu={m['cpu']}")
    print(f"load: mode={args.mode} clients={args.clients} seconds={args.seconds} "
          f"rows={args.rows} dims={args.dims}")
    print(f"{'kind':<9} {'n':>7} {'err':>5} {'p50 ms':>9} {'p99 ms':>9} {'max ms':>9} {'>1s':>5}")
    for k in KINDS:
        r = report[k]
        print(f"{k:<9} {r['n']:>7} {r['errors']:>5} {r['p50']:>9.1f} {r['p99']:>9.1f} "
              f"{r['max']:>9.1f} {r['over_1s']:>5}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("TRIBUTARY_BIN", DEFAULT_BIN))
    ap.add_argument("--port", type=int, help="use a running server on 127.0.0.1")
    ap.add_argument("--mode", choices=["async", "sync"], default="async")
    ap.add_argument("--clients", type=int, default=64)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--rows", type=int, default=10_000)
    ap.add_argument("--dims", type=int, default=64)
    ap.add_argument("--procs", type=int, default=4)
    ap.add_argument("--json", help="also write the report here")
    ap.add_argument("--max-search-ms", type=float)
    args = ap.parse_args()
    m = machine()
    proc = None
    tmp = None
    if args.port:
        port = args.port
    else:
        if not os.path.exists(args.bin):
            sys.exit(f"tributary binary not found at {args.bin} (set TRIBUTARY_BIN)")
        tmp = tempfile.TemporaryDirectory(prefix="tributary-load-")
        proc, port = start_server(args.bin, os.path.join(tmp.name, "data"),
                                  extra_args=("--max-connections", "512"),
                                  show_log=bool(os.environ.get("LOAD_SERVER_LOG")))
    try:
        t0 = time.monotonic()
        setup("127.0.0.1", port, args.rows, args.dims, args.mode)
        print(f"setup: {time.monotonic() - t0:.1f} s", flush=True)
        report, samples = run_load("127.0.0.1", port, args.clients, args.seconds, args.rows,
                                   args.dims, args.procs)
    finally:
        if proc is not None:
            rc = stop_server(proc)
            if rc != 0:
                print(f"warning: server exit code {rc} after SIGTERM", file=sys.stderr)
        if tmp is not None:
            tmp.cleanup()
    print_report(report, args, m)
    for s in samples:
        print("error sample:", s)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": m, "args": vars(args), "report": report}, f, indent=1)
    if args.max_search_ms is not None and report["vector"]["max"] > args.max_search_ms:
        print(f"FAIL: vector search max {report['vector']['max']:.1f} ms > "
              f"{args.max_search_ms} ms")
        sys.exit(1)


if __name__ == "__main__":
    main()
