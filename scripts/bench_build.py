#!/usr/bin/env python3
"""HNSW build time against pgvector, and what a build costs foreground
queries (issue 16, item 3).

Same data and peer as `bench_vector.py` (its `generate`, `Trib` and `Pg`):
--n vectors (default 100,000) of 128 dimensions around 64 Gaussian
centres, PostgreSQL 16 + pgvector from PyPI's `pgserver` wheel in a
throwaway cluster with default settings (2 parallel maintenance workers,
`maintenance_work_mem` 64 MB). HNSW M 16, EF_CONSTRUCTION --efc (default
64, pgvector's default) and L2 in every build.

Tributary runs at defaults. Its HNSW adds run on one thread: parallel
usearch adds were measured and withdrawn (decision 014).

Measured, engines alternating, --runs runs (median; each run drops and
re-creates the index):
  * synchronous CREATE INDEX, s (Tributary's returns with the graph built,
    like pgvector's);
  * Tributary only: an ASYNC CREATE INDEX until SHOW ISCP STATUS says
    `current` (the initial build through the ISCP runner), s;
  * point SELECT by primary key from a second connection, 200 a second,
    during the synchronous build and, as the baseline, for as long with no
    build: p50 / p99 / max latency in ms and count.

Prints the machine and the command, then a table with ratios (build:
pgvector s / Tributary s, > 1 = Tributary faster). `--json out.json` writes
everything.

Run (release build):
  cargo build --release --bin tributary
  /var/tmp/pgs-venv/bin/python scripts/bench_build.py      # any venv; deps are pip-installed
"""
import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_vector import Pg, Trib, generate  # noqa: E402
from serverproc import default_binary, start_server, stop_server, wait_iscp_current  # noqa: E402,E501

# Point SELECTs per second from the second connection.
POINT_RATE = 200


class Poller:
    """Point SELECTs by primary key on a connection of its own, in a loop,
    recording each latency, until stopped."""

    def __init__(self, query, n):
        self.query, self.n = query, n
        self.lat = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run)

    def run(self):
        i = 0
        start = time.perf_counter()
        while not self.stop.is_set():
            # Paced, not closed-loop: the poller is a client, not a CPU hog.
            due = start + i / POINT_RATE
            if due > time.perf_counter():
                self.stop.wait(due - time.perf_counter())
            t = time.perf_counter()
            self.query(f"SELECT id FROM v WHERE id = {(i * 7919) % self.n}")
            self.lat.append((time.perf_counter() - t) * 1000.0)
            i += 1

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def summary(lat):
    s = sorted(lat)
    if not s:
        return {"n": 0}
    return {"n": len(s), "p50": s[len(s) // 2], "p99": s[min(len(s) - 1, int(len(s) * 0.99))],
            "max": s[-1]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=64)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--pg-maintenance-mem", default="",
                    help="SET maintenance_work_mem for pgvector's builds (default: the "
                         "server's, 64 MB; pgvector builds in memory while the graph fits)")
    ap.add_argument("--json")
    ap.add_argument("--bin", default=default_binary())
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    data, _, texts = generate(args.n, args.dim, 1, args.seed)
    rows = [(i, texts[i], data[i]) for i in range(args.n)]
    hnsw = (f"USING HNSW ON v(x) OP_TYPE 'vector_l2_ops' M {args.m} "
            f"EF_CONSTRUCTION {args.efc}")
    res = {"n": args.n, "dim": args.dim, "m": args.m, "efc": args.efc,
           "cpus": os.cpu_count(), "runs": {}}
    with tempfile.TemporaryDirectory(prefix="bench-build-") as d:
        servers, engines, pg = [], [], None
        try:
            proc, port = start_server(args.bin, os.path.join(d, "trib"))
            servers.append(proc)
            e = Trib(port)
            e.port = port
            engines.append(e)
            pg = Pg()
            engines.append(pg)
            if args.pg_maintenance_mem:
                pg.q(f"SET maintenance_work_mem = '{args.pg_maintenance_mem}'")
            mem = pg.q("SHOW maintenance_work_mem")[0][0]
            workers = pg.q("SHOW max_parallel_maintenance_workers")[0][0]
            print(f"PostgreSQL {pg.version}, pgvector {pg.vector_version}, "
                  f"maintenance_work_mem {mem}, max_parallel_maintenance_workers {workers}")
            res["pgvector_version"] = pg.vector_version
            res["pg_settings"] = {"maintenance_work_mem": mem,
                                  "max_parallel_maintenance_workers": workers}
            for e in engines:
                e.create(args.dim)
                for j in range(0, args.n, 500):
                    e.insert(rows[j:j + 500])

            def second(e):
                """A query function on a connection of its own."""
                if isinstance(e, Pg):
                    import psycopg
                    conn = psycopg.connect(host="127.0.0.1", port=pg.port, user="postgres",
                                           autocommit=True)
                    return lambda q: conn.execute(q).fetchall()
                other = Trib.__new__(Trib)
                import pymysql
                other.c = pymysql.connect(host="127.0.0.1", port=e.port, user="root",
                                          password="", database="b", autocommit=True).cursor()
                return other.q

            runs = {e.name: {"build_s": [], "during": [], "idle": []} for e in engines}
            runs["Tributary"]["async_s"] = []
            for r in range(args.runs):
                for e in engines:
                    poll = second(e)
                    with Poller(poll, args.n) as p:
                        t = time.perf_counter()
                        if isinstance(e, Pg):
                            e.build_hnsw(args.m, args.efc)
                        else:
                            e.q(f"CREATE INDEX h {hnsw}")
                        dt = time.perf_counter() - t
                    during = p.lat
                    with Poller(poll, args.n) as p:
                        time.sleep(dt)
                    runs[e.name]["build_s"].append(dt)
                    runs[e.name]["during"].extend(during)
                    runs[e.name]["idle"].extend(p.lat)
                    e.q("DROP INDEX h" if isinstance(e, Pg) else "DROP INDEX h ON v")
                    print(f"run {r + 1}: {e.name} build {dt:.2f} s; point SELECT during "
                          f"{summary(during)}, idle {summary(p.lat)}", flush=True)
                e = engines[0]
                t = time.perf_counter()
                e.q(f"CREATE INDEX h {hnsw} ASYNC")
                wait_iscp_current(e.c)
                dt = time.perf_counter() - t
                e.q("DROP INDEX h ON v")
                runs["Tributary"]["async_s"].append(dt)
                print(f"run {r + 1}: Tributary ASYNC build until current {dt:.2f} s", flush=True)
            for name, v in runs.items():
                res["runs"][name] = v
                res[name] = {"build_s": statistics.median(v["build_s"]),
                             "during": summary(v["during"]), "idle": summary(v["idle"])}
                if "async_s" in v:
                    res[name]["async_s"] = statistics.median(v["async_s"])
        finally:
            if pg is not None:
                pg.stop()
            for proc in servers:
                stop_server(proc)
    report(res)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2, default=str)


def report(res):
    p = res["pgvector_version"]
    print(f"\n{res['n']:,} × {res['dim']}-d, HNSW M {res['m']}, EF_CONSTRUCTION {res['efc']}; "
          f"pgvector {p} {res['pg_settings']}; {res['cpus']} cpus; "
          f"medians of {len(res['runs']['pgvector']['build_s'])}")
    pg_s = res["pgvector"]["build_s"]
    for name in ("Tributary", "pgvector"):
        r = res[name]
        print(f"{name:<20} CREATE INDEX {r['build_s']:7.2f} s  (pgvector / it: "
              f"{pg_s / r['build_s']:.2f})")
    print(f"{'Tributary':<20} ASYNC until current {res['Tributary']['async_s']:7.2f} s  "
          f"(pgvector / it: {pg_s / res['Tributary']['async_s']:.2f})")
    print("point SELECT latency, ms (p50 / p99 / max, n): during the build | idle")
    for name in ("Tributary", "pgvector"):
        a, b = res[name]["during"], res[name]["idle"]
        fmt = lambda s: (f"{s['p50']:.2f} / {s['p99']:.2f} / {s['max']:.1f}, {s['n']}"  # noqa: E731
                         if s["n"] else "none")
        print(f"  {name:<20} {fmt(a)} | {fmt(b)}")


if __name__ == "__main__":
    main()
