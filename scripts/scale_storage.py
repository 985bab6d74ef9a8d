#!/usr/bin/env python3
"""Storage at scale (issue 11): a table of --rows rows (default 10M)

    t (id BIGINT PRIMARY KEY, txt VARCHAR(100), n INT)

with a 100-byte `txt`, loaded into one Tributary server started with
`--cache-size` (default 256MB), then served: point SELECTs, 100-row range
scans and full scans with a filter. The server's RSS is sampled every 0.2 s
(VmRSS from /proc) through every phase; the script reports the peak per
phase against the bound `cache size + 300 MB`, the data directory's size on
disk per row, and the time from starting the server again on the loaded
directory to its first answered query (target < 2 s).

Every answer is checked: the row count after the load, each point SELECT's
row (its txt starts with the zero-padded id), each range scan's 100 rows,
each full scan's count (--rows / 1000 rows have n = 7 when --rows is a
multiple of 1000).

Reproduce (PyMySQL is pip-installed when missing):

    cargo build --release --bin tributary
    python3 scripts/scale_storage.py [--rows 10000000] [--cache-size 256MB]
        [--loaders 2] [--json out.json]

--rows 200000 makes a smoke run of a few seconds. The data directory is a
temporary directory (removed at the end) on the file system of $TMPDIR.
Exits non-zero when an answer is wrong or a bound is exceeded.
"""
import argparse
import datetime
import json
import multiprocessing
import os
import platform
import random
import shutil
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serverproc  # noqa: E402
from bench_storage import DDL, pymysql, row_sql, txt_of  # noqa: E402

BATCH = 1000
RSS_SLACK_MB = 300
RESTART_TARGET_S = 2.0


def connect(port, db="b"):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                           database=db, autocommit=True)


def parse_size(s):
    s = s.strip().upper()
    for unit, mult in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if s.endswith(unit):
            return int(float(s[:-len(unit)]) * mult)
    return int(s)


class RssSampler:
    """Samples VmRSS of `pid` every 0.2 s; `phase(name)` starts a new phase."""

    def __init__(self, pid):
        self.pid = pid
        self.peaks = {}
        self.name = "start"
        self.stop_ev = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def rss_mb(self):
        try:
            with open(f"/proc/{self.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def sample(self):
        r = self.rss_mb()
        if r is not None:
            self.peaks[self.name] = max(self.peaks.get(self.name, 0.0), r)

    def run(self):
        while not self.stop_ev.wait(0.2):
            self.sample()

    def phase(self, name):
        self.sample()
        self.name = name
        self.sample()

    def stop(self):
        self.sample()
        self.stop_ev.set()
        self.thread.join()
        return self.peaks


def load_part(port, first, last, out):
    conn = connect(port)
    with conn.cursor() as c:
        for lo in range(first, last, BATCH):
            hi = min(last, lo + BATCH)
            c.execute("INSERT INTO t VALUES " + ",".join(row_sql(i) for i in range(lo, hi)))
    conn.close()
    out.put(last - first)


def load(port, rows, loaders):
    q = multiprocessing.Queue()
    step = -(-rows // loaders)
    step = -(-step // BATCH) * BATCH
    procs = []
    for k in range(loaders):
        lo, hi = k * step, min(rows, (k + 1) * step)
        if lo >= hi:
            continue
        p = multiprocessing.Process(target=load_part, args=(port, lo, hi, q))
        p.start()
        procs.append(p)
    done = 0
    for _ in procs:
        done += q.get(timeout=7200)
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit(f"a loader failed (exit code {p.exitcode})")
    return done


def disk_bytes(path):
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            try:
                total += os.stat(os.path.join(root, f)).st_blocks * 512
            except OSError:
                pass
    return total


def check(cond, what):
    if not cond:
        sys.exit(f"WRONG ANSWER: {what}")


def serve(port, rows, args, rnd, out):
    conn = connect(port)
    with conn.cursor() as c:
        t0 = time.monotonic()
        for _ in range(args.point):
            i = rnd.randrange(rows)
            c.execute(f"SELECT txt, n FROM t WHERE id = {i}")
            r = c.fetchall()
            check(len(r) == 1 and r[0][0] == txt_of(i) and r[0][1] == i % 1000, f"point {i}: {r}")
        out["point_qps"] = args.point / (time.monotonic() - t0)
        t0 = time.monotonic()
        for _ in range(args.range):
            a = rnd.randrange(max(1, rows - 100))
            c.execute(f"SELECT id, n FROM t WHERE id BETWEEN {a} AND {a + 99}")
            r = c.fetchall()
            check(len(r) == min(100, rows - a) and r[0][0] == a, f"range {a}: {len(r)} rows")
        out["range_qps"] = args.range / (time.monotonic() - t0)
        t0 = time.monotonic()
        for _ in range(args.full_scans):
            c.execute("SELECT COUNT(*) FROM t WHERE n = 7")
            (n,) = c.fetchone()
            check(n == sum(1 for _ in range(7, rows, 1000)), f"full scan count {n}")
        out["full_scan_rows_per_s"] = args.full_scans * rows / (time.monotonic() - t0)
    conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=10_000_000)
    ap.add_argument("--cache-size", default="256MB")
    ap.add_argument("--loaders", type=int, default=2, help="loading client processes")
    ap.add_argument("--point", type=int, default=5000)
    ap.add_argument("--range", type=int, default=1000)
    ap.add_argument("--full-scans", type=int, default=2)
    ap.add_argument("--json", help="write the results here")
    args = ap.parse_args()
    binary = serverproc.default_binary()
    if not os.path.exists(binary):
        sys.exit(f"tributary binary not found at {binary} (set TRIBUTARY_BIN or CARGO_TARGET_DIR)")
    cache_mb = parse_size(args.cache_size) / (1 << 20)
    bound_mb = cache_mb + RSS_SLACK_MB
    root = tempfile.mkdtemp(prefix="scale-tributary-")
    data = os.path.join(root, "data")
    log = os.path.join(root, "server.log")
    extra = ["--cache-size", args.cache_size]
    res = {"rows": args.rows, "cache_size": args.cache_size, "rss_bound_mb": bound_mb,
           "machine": f"{platform.node()} {os.cpu_count()} cpus {platform.platform()}",
           "date": datetime.datetime.now().isoformat(timespec="seconds")}
    rnd = random.Random(7)
    try:
        proc, port = serverproc.start_server(binary, data, extra, log_path=log)
        rss = RssSampler(proc.pid)
        c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                            autocommit=True)
        with c.cursor() as cur:
            cur.execute("CREATE DATABASE b")
            cur.execute("USE b")
            cur.execute(DDL)
        c.close()
        rss.phase("load")
        t0 = time.monotonic()
        loaded = load(port, args.rows, args.loaders)
        res["load_s"] = time.monotonic() - t0
        res["load_rows_per_s"] = loaded / res["load_s"]
        print(f"loaded {loaded} rows in {res['load_s']:.0f} s", file=sys.stderr)
        rss.phase("serve")
        conn = connect(port)
        with conn.cursor() as cur:
            cur.execute("SELECT COUNT(*) FROM t")
            (n,) = cur.fetchone()
            check(n == args.rows, f"count after load {n}")
        conn.close()
        serve(port, args.rows, args, rnd, res)
        res["disk_bytes_after_load"] = disk_bytes(data)
        peaks = rss.stop()
        serverproc.stop_server(proc)
        res["disk_bytes_after_close"] = disk_bytes(data)

        # Restart: spawn to the first answered query.
        t0 = time.monotonic()
        proc, port = serverproc.start_server(binary, data, extra, log_path=log + ".2")
        conn = connect(port)
        with conn.cursor() as cur:
            i = args.rows // 2
            cur.execute(f"SELECT txt FROM t WHERE id = {i}")
            r = cur.fetchall()
        res["restart_to_first_answer_s"] = time.monotonic() - t0
        check(r and r[0][0] == txt_of(i), f"first answer after restart: {r}")
        rss = RssSampler(proc.pid)
        rss.phase("serve after restart")
        conn.close()
        serve(port, args.rows, args, rnd, {})
        peaks.update(rss.stop())
        serverproc.stop_server(proc)
        res["rss_peak_mb"] = peaks
    finally:
        shutil.rmtree(root, ignore_errors=True)

    res["disk_bytes_per_row_after_load"] = res["disk_bytes_after_load"] / args.rows
    res["disk_bytes_per_row_after_close"] = res["disk_bytes_after_close"] / args.rows
    worst = max(res["rss_peak_mb"].values())
    print(f"# storage at scale: {args.rows:,} rows, --cache-size {args.cache_size}")
    print(f"machine: {res['machine']}; {res['date']}")
    print(f"load: {res['load_s']:.0f} s ({res['load_rows_per_s']:,.0f} rows/s, "
          f"{args.loaders} clients, {BATCH}-row INSERTs)")
    for ph, mb in res["rss_peak_mb"].items():
        print(f"peak RSS during {ph}: {mb:,.0f} MB (bound {bound_mb:,.0f} MB)")
    print(f"disk: {res['disk_bytes_after_load'] / 1e9:.2f} GB after load "
          f"({res['disk_bytes_per_row_after_load']:.0f} B/row), "
          f"{res['disk_bytes_after_close'] / 1e9:.2f} GB after close "
          f"({res['disk_bytes_per_row_after_close']:.0f} B/row)")
    print(f"restart to first answered query: {res['restart_to_first_answer_s']:.2f} s "
          f"(target < {RESTART_TARGET_S:.0f} s)")
    print(f"point SELECT {res['point_qps']:,.0f}/s, range scan {res['range_qps']:,.0f}/s, "
          f"full scan {res['full_scan_rows_per_s'] / 1e6:.2f} M rows/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    ok = worst <= bound_mb and res["restart_to_first_answer_s"] < RESTART_TARGET_S
    print("bounds: " + ("met" if ok else "NOT met"))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
