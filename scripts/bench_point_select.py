#!/usr/bin/env python3
"""Primary-key point SELECT latency through the server, two binaries side by
side (issue 9: "point SELECTs no slower than before").

    python3 scripts/bench_point_select.py --new NEW_BINARY --old OLD_BINARY

Both servers run at once (throwaway data dirs, ephemeral ports) with the
same 15,000-row table; six rounds of --queries point SELECTs alternate which
binary goes first; prints each round's p50 and the median of them. Needs
PyMySQL (any venv that has it).
"""
import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serverproc  # noqa: E402

import pymysql  # noqa: E402

ROWS = 15_000


def setup(binary):
    data = tempfile.mkdtemp(prefix="tributary-point-")
    proc, port = serverproc.start_server(binary, data)
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE d")
    cur.execute("USE d")
    cur.execute("CREATE TABLE o (k BIGINT PRIMARY KEY, c BIGINT, s VARCHAR(20), "
                "p DECIMAL(12,2), dt DATE)")
    for i in range(0, ROWS, 500):
        vals = ",".join(f"({j},{j % 100},'status{j % 7}',{j}.25,'1995-01-01')"
                        for j in range(i, i + 500))
        cur.execute("INSERT INTO o VALUES " + vals)
    return proc, data, cur


def round_p50(cur, rnd, n):
    lat = []
    for _ in range(n):
        k = rnd.randrange(ROWS)
        t = time.perf_counter()
        cur.execute(f"SELECT k, c, s, p, dt FROM o WHERE k = {k}")
        cur.fetchall()
        lat.append(time.perf_counter() - t)
    lat.sort()
    return lat[len(lat) // 2] * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--new", required=True)
    ap.add_argument("--old", required=True)
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=6)
    args = ap.parse_args()
    print(f"command: {' '.join(sys.argv)}")
    print(f"machine: nproc {os.cpu_count()}")
    servers = {name: setup(b) for name, b in (("old", args.old), ("new", args.new))}
    res = {"old": [], "new": []}
    rnd = random.Random(1)
    try:
        for r in range(args.rounds):
            order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
            for name in order:
                res[name].append(round_p50(servers[name][2], rnd, args.queries))
    finally:
        for proc, data, _ in servers.values():
            proc.terminate()
            proc.wait()
            shutil.rmtree(data, ignore_errors=True)
    for name in ("old", "new"):
        rounds = ", ".join(f"{x:.0f}" for x in res[name])
        print(f"{name}: p50 per round (us): {rounds}; median {statistics.median(res[name]):.0f}")


if __name__ == "__main__":
    main()
