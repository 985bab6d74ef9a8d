#!/usr/bin/env python3
"""Point-SELECT latency of two Tributary binaries side by side, in one run:
does a change slow the statement path down? (issue 41: "point SELECT
latency through the server must not regress (± 5 %, same run, old binary
vs new)").

What it does:
  1. starts `old serve` and `new serve` (scripts/serverproc.py: temporary
     data directories, ephemeral loopback ports) and loads the same table
     into both: `orders`-shaped rows (--rows, default 100,000), multi-row
     INSERTs;
  2. warms both up, then runs --rounds rounds; in each round both binaries
     answer the same --per-round primary-key point SELECTs (random keys),
     the order of the two alternating from round to round, so that noise
     from the machine lands on both alike;
  3. reports per binary: p50 and p99 latency, queries per second, and the
     ratio new/old of p50 and of total time (> 1: new is slower). With
     --max-regress P it exits 1 when the new binary's total time is more
     than P % above the old one's.

Run (release builds; PyMySQL from the project venv):
  $CARGO_TARGET_DIR/venv/bin/python scripts/bench_point_regress.py \\
      --old /path/to/old/tributary --new $CARGO_TARGET_DIR/release/tributary
"""
import argparse
import os
import random
import shlex
import statistics
import sys
import tempfile
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from serverproc import start_server, stop_server  # noqa: E402

SQL = ("SELECT o_orderkey, o_custkey, o_orderstatus, o_totalprice, o_orderdate, "
       "o_orderpriority FROM orders WHERE o_orderkey = {}")
DDL = ("CREATE TABLE orders (o_orderkey BIGINT NOT NULL PRIMARY KEY, o_custkey BIGINT, "
       "o_orderstatus VARCHAR(1), o_totalprice DECIMAL(12,2), o_orderdate DATE, "
       "o_orderpriority VARCHAR(15), o_comment VARCHAR(79))")
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]


def rows(n, seed):
    rnd = random.Random(seed)
    for k in range(1, n + 1):
        yield (f"({k}, {rnd.randint(1, n // 10 + 1)}, '{rnd.choice('FOP')}', "
               f"{rnd.randint(100, 50_000_000) / 100:.2f}, "
               f"'{1992 + rnd.randrange(7)}-{1 + rnd.randrange(12):02d}-{1 + rnd.randrange(28):02d}', "
               f"'{rnd.choice(PRIORITIES)}', 'comment {rnd.getrandbits(40):x}')")


def connect(port):
    conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    cur = conn.cursor()
    cur.execute("CREATE DATABASE bench")
    cur.execute("USE bench")
    return conn, cur


def load(cur, n, seed, batch=1000):
    cur.execute(DDL)
    pending = []
    for r in rows(n, seed):
        pending.append(r)
        if len(pending) == batch:
            cur.execute("INSERT INTO orders VALUES " + ", ".join(pending))
            pending = []
    if pending:
        cur.execute("INSERT INTO orders VALUES " + ", ".join(pending))


def run(cur, keys, lat):
    t0 = time.perf_counter()
    for k in keys:
        t = time.perf_counter()
        cur.execute(SQL.format(k))
        if len(cur.fetchall()) != 1:
            sys.exit(f"key {k}: expected one row")
        lat.append(time.perf_counter() - t)
    return time.perf_counter() - t0


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the baseline binary")
    ap.add_argument("--new", required=True, help="the binary under test")
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--per-round", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--max-regress", type=float, metavar="P",
                    help="exit 1 if new's total time is more than P %% above old's")
    args = ap.parse_args()
    print("command: " + " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv))
    print(f"machine: nproc {os.cpu_count()}; {args.rows:,} rows, {args.rounds} rounds × "
          f"{args.per_round} point SELECTs per binary, order alternating per round")
    names = ("old", "new")
    with tempfile.TemporaryDirectory(prefix="tributary-point-regress-") as d:
        procs, curs = {}, {}
        try:
            for name in names:
                binary = getattr(args, name)
                st = os.stat(binary)
                print(f"{name}: {binary} ({st.st_size:,} bytes, mtime "
                      f"{time.strftime('%Y-%m-%dT%H:%M:%S', time.localtime(st.st_mtime))})")
                proc, port = start_server(binary, os.path.join(d, name))
                procs[name] = proc
                _, curs[name] = connect(port)
                t = time.perf_counter()
                load(curs[name], args.rows, args.seed)
                print(f"  loaded in {time.perf_counter() - t:.2f} s", flush=True)
            rnd = random.Random(args.seed + 1)
            warm = [rnd.randint(1, args.rows) for _ in range(args.per_round)]
            for name in names:
                run(curs[name], warm, [])
            lat = {n: [] for n in names}
            total = {n: 0.0 for n in names}
            for r in range(args.rounds):
                keys = [rnd.randint(1, args.rows) for _ in range(args.per_round)]
                order = names if r % 2 == 0 else names[::-1]
                for name in order:
                    total[name] += run(curs[name], keys, lat[name])
        finally:
            for proc in procs.values():
                stop_server(proc)
    n = args.rounds * args.per_round
    print()
    print("| binary | p50 ms | p99 ms | q/s |")
    print("|---|---:|---:|---:|")
    for name in names:
        print(f"| {name} | {statistics.median(lat[name]) * 1e3:.4f} | "
              f"{pct(lat[name], 0.99) * 1e3:.4f} | {n / total[name]:,.0f} |")
    p50 = statistics.median(lat["new"]) / statistics.median(lat["old"])
    tot = total["new"] / total["old"]
    print(f"new/old: p50 {p50:.3f}, total time {tot:.3f} (> 1: new is slower)")
    if args.max_regress is not None and (tot - 1) * 100 > args.max_regress:
        print(f"REGRESSION: new is {(tot - 1) * 100:.1f} % slower than old "
              f"(allowed {args.max_regress} %)")
        sys.exit(1)


if __name__ == "__main__":
    main()
