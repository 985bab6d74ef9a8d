#!/usr/bin/env python3
"""HNSW recall/speed trade-off of `SET hnsw_ef_search` (issue 14, item 3):
Tributary through its MySQL server (PyMySQL, loopback) on --n random
--dim-dimensional vectors (deterministic, --seed) with a synchronous HNSW
index (default M / EF_CONSTRUCTION / EF_SEARCH), --queries top-10 queries
per setting, recall@10 against brute force (numpy, exact L2).

`hnsw_ef_search = 0` is the default beam (20·k = 200 for k = 10); other
values replace it; the index's own EF_SEARCH (64) stays the floor.

Run: cargo build --release --bin tributary
     $CARGO_TARGET_DIR/venv/bin/python scripts/bench_ef_search.py
"""
import argparse
import os
import platform
import shlex
import sys
import tempfile
import time

import numpy as np
import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverproc import start_server, stop_server  # noqa: E402


def lit(v):
    return "[" + ",".join(f"{x:.6f}" for x in v) + "]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--efs", default="0,10,32,64,128,400,1000")
    ap.add_argument("--bin", default=os.environ.get(
        "TRIBUTARY_BIN", "/var/tmp/tributary-target/release/tributary"))
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    rng = np.random.default_rng(args.seed)
    data = rng.random((args.n, args.dim), dtype=np.float32)
    queries = rng.random((args.queries, args.dim), dtype=np.float32)
    truth = [set(np.argsort(((data - q) ** 2).sum(axis=1))[:10].tolist()) for q in queries]
    with tempfile.TemporaryDirectory(prefix="bench-ef-") as d:
        proc, port = start_server(args.bin, os.path.join(d, "trib"))
        try:
            c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                autocommit=True, read_timeout=600).cursor()
            c.execute("CREATE DATABASE e")
            c.execute("USE e")
            c.execute(f"CREATE TABLE v (id INT PRIMARY KEY, x VECF32({args.dim}))")
            for j in range(0, args.n, 500):
                c.execute("INSERT INTO v VALUES " + ",".join(
                    f"({i},'{lit(data[i])}')" for i in range(j, min(j + 500, args.n))))
            t = time.perf_counter()
            c.execute("CREATE INDEX h USING HNSW ON v(x) OP_TYPE 'vector_l2_ops'")
            print(f"index build: {time.perf_counter() - t:.1f} s")
            print(f"\n{'hnsw_ef_search':>15}{'recall@10':>11}{'q/s':>9}")
            for ef in [int(x) for x in args.efs.split(",")]:
                c.execute(f"SET hnsw_ef_search = {ef}")
                hits = 0
                t = time.perf_counter()
                for q, want in zip(queries, truth):
                    c.execute(f"SELECT id FROM v ORDER BY l2_distance(x, '{lit(q)}') LIMIT 10")
                    hits += len(want & {r[0] for r in c.fetchall()})
                dt = time.perf_counter() - t
                print(f"{ef:>15}{hits / (10 * len(queries)):>11.3f}{len(queries) / dt:>9.0f}")
        finally:
            stop_server(proc)


if __name__ == "__main__":
    main()
