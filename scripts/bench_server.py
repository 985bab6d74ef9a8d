#!/usr/bin/env python3
"""Server benchmark for docs/BENCHMARKS.md: the same SQL workload as
`cargo bench --bench sql` (single-row autocommit inserts, 100-row batched
inserts, point selects by primary key, filtered full scan), but through the
MySQL wire protocol with PyMySQL against a `tributary serve` process this
script starts itself (on a free port, in a temporary data directory) and
stops with SIGTERM at the end. Prints one line per metric.

Environment: TRIBUTARY_BIN (default
/var/tmp/tributary-target/release/tributary), BENCH_SINGLE (default 2000).
"""
import os
import random
import sys
import tempfile
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverproc import start_server, stop_server  # noqa: E402

BIN = os.environ.get("TRIBUTARY_BIN", "/var/tmp/tributary-target/release/tributary")
N_SINGLE = int(os.environ.get("BENCH_SINGLE", "2000"))
N_BATCH = 20000
N_POINT = 20000


def main():
    if not os.path.exists(BIN):
        sys.exit(f"tributary binary not found at {BIN} (set TRIBUTARY_BIN)")
    with tempfile.TemporaryDirectory(prefix="tributary-bench-") as d:
        proc, port = start_server(BIN, os.path.join(d, "data"))
        try:
            run(port)
        finally:
            rc = stop_server(proc)
            if rc != 0:
                print(f"warning: server exit code {rc} after SIGTERM", file=sys.stderr)


def run(port):
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           autocommit=True)
    c = conn.cursor()
    c.execute("CREATE DATABASE b")
    c.execute("USE b")
    c.execute("CREATE TABLE kv (id BIGINT PRIMARY KEY, v VARCHAR(64))")

    t = time.perf_counter()
    for i in range(N_SINGLE):
        c.execute(f"INSERT INTO kv VALUES ({i}, 'value-{i}')")
    e = time.perf_counter() - t
    print(f"server single-row autocommit insert: {N_SINGLE / e:.0f} rows/s ({N_SINGLE} rows)")

    t = time.perf_counter()
    i = N_SINGLE
    for _ in range(N_BATCH // 100):
        vals = []
        for _ in range(100):
            i += 1
            vals.append(f"({i}, 'value-{i}')")
        c.execute("INSERT INTO kv VALUES " + ",".join(vals))
    e = time.perf_counter() - t
    print(f"server batched insert (100 rows/stmt): {N_BATCH / e:.0f} rows/s ({N_BATCH} rows)")

    total = i
    rnd = random.Random(7)
    t = time.perf_counter()
    for _ in range(N_POINT):
        c.execute(f"SELECT v FROM kv WHERE id = {rnd.randrange(total)}")
        rows = c.fetchall()
        assert len(rows) <= 1
    e = time.perf_counter() - t
    print(f"server point select: {N_POINT / e:.0f} queries/s")

    t = time.perf_counter()
    c.execute("SELECT count(*) FROM kv WHERE v LIKE 'value-%'")
    (cnt,) = c.fetchone()
    e = time.perf_counter() - t
    print(f"server full scan with filter: {cnt / e:.0f} rows/s ({cnt} rows)")
    conn.close()


if __name__ == "__main__":
    main()
