#!/usr/bin/env python3
"""Full-text initial build with one and with several tantivy writer threads
(issue 16, item 3), and what it costs foreground queries.

A Tributary server at defaults except `--iscp-build-threads` (1, then the
machine's cores, alternating, --runs times each). Each run: --n rows of
`bench_vector.py`'s text (4–10 words from a Zipf-like 200-word vocabulary;
4-d vectors so that loading is quick) in table v; then `CREATE FULLTEXT
INDEX f ON v(body) ASYNC`, timed until SHOW ISCP STATUS says `current`,
while a second connection runs point SELECTs by primary key, 200 a second
(p50 / p99 / max ms); then the same SELECTs for as long with no build.

Run (release build):
  cargo build --release --bin tributary
  $CARGO_TARGET_DIR/venv/bin/python scripts/bench_fulltext_build.py
"""
import argparse
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_build import Poller, summary  # noqa: E402
from bench_vector import Trib, generate  # noqa: E402
from pydeps import ensure  # noqa: E402
from serverproc import default_binary, start_server, stop_server, wait_iscp_current  # noqa: E402,E501


pymysql = ensure("pymysql", "pymysql")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=300_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--bin", default=default_binary())
    args = ap.parse_args()
    cores = os.cpu_count() or 1
    print("machine:", platform.machine(), cores, "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    data, _, texts = generate(args.n, 4, 1, args.seed)
    rows = [(i, texts[i], data[i]) for i in range(args.n)]
    results = {1: [], cores: []}
    for r in range(args.runs):
        for threads in (1, cores):
            with tempfile.TemporaryDirectory(prefix="bench-ftb-") as d:
                proc, port = start_server(args.bin, os.path.join(d, "data"),
                                          extra_args=["--iscp-build-threads", str(threads)])
                try:
                    e = Trib(port)
                    e.create(4)
                    for j in range(0, args.n, 1000):
                        e.insert(rows[j:j + 1000])
                    other = Trib.__new__(Trib)
                    other.c = pymysql.connect(host="127.0.0.1", port=port, user="root",
                                              password="", database="b",
                                              autocommit=True).cursor()
                    with Poller(other.q, args.n) as p:
                        t = time.perf_counter()
                        e.q("CREATE FULLTEXT INDEX f ON v(body) ASYNC")
                        wait_iscp_current(e.c)
                        dt = time.perf_counter() - t
                    during = p.lat
                    with Poller(other.q, args.n) as p:
                        time.sleep(dt)
                    results[threads].append((dt, during, p.lat))
                    print(f"run {r + 1}: {threads} writer thread(s): build until current "
                          f"{dt:.2f} s; point SELECT during {summary(during)}, "
                          f"idle {summary(p.lat)}", flush=True)
                finally:
                    stop_server(proc)
    print(f"\n{args.n:,} documents; median of {args.runs}:")
    for threads, rs in results.items():
        during = [x for _, dur, _ in rs for x in dur]
        idle = [x for _, _, idl in rs for x in idl]
        s, i = summary(during), summary(idle)
        print(f"  {threads} thread(s): {statistics.median(dt for dt, _, _ in rs):.2f} s; "
              f"point SELECT during p50 {s['p50']:.2f} / p99 {s['p99']:.2f} / "
              f"max {s['max']:.1f} ms, idle p50 {i['p50']:.2f} / p99 {i['p99']:.2f} / "
              f"max {i['max']:.1f} ms")


if __name__ == "__main__":
    main()
