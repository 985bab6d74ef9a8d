#!/usr/bin/env python3
"""Freshness of an ASYNC HNSW index at default settings (issue 16, item 2):
how long after a row's commit a `fast_search = 1` query (index only, no
fresh-tail merge) finds it, while single-row INSERTs arrive at a steady
rate on a table that already holds many vectors.

Server: `tributary serve` with no tuning flags: every ISCP and checkpoint
setting at its default (tick 100 ms, checkpoints after 20,000 changes or
half the index, or 60 s of age). The index is created with default
options (`CREATE INDEX … USING HNSW … ASYNC`: M 16, EF_CONSTRUCTION 128).

Procedure (deterministic data, --seed):
  1. --rows vectors (default 100,000) of 128 dimensions, clustered like
     scripts/bench_vector.py, loaded in 1,000-row INSERTs; then the index
     is created and the script waits until SHOW ISCP STATUS says `current`.
  2. For each rate in --rates (default 200 and 1,000 rows/s): one
     connection inserts single rows (autocommit) at that rate for --secs
     seconds (default 60), drawn from the same clusters. Every
     --sample-th row is polled by a second connection with `SET
     fast_search = 1` and, for that session only, `SET hnsw_ef_search =
     400` (so that a miss means the row is not in the index yet, not a
     recall miss): `ORDER BY l2_distance(x, its own vector) LIMIT 1` until
     the answer is that row. Lag = the time the poll first sees it minus
     the time its INSERT returned.
     Polling is oldest-first: the index applies changes in commit order.
  3. Checkpoints (bases written) during each window are counted from the
     server's log ("index checkpoint written").

Prints p50 / p90 / p99 / max lag per rate (of the rows found), samples,
the achieved insert rate, checkpoints, and how many sampled rows were not
found within 120 s of their commit — and whether the job had then applied
every change (a search miss) or was still behind. `--json out.json` writes them.

Run (release build; the project venv has PyMySQL and numpy is pip-installed
when missing):
  cargo build --release --bin tributary
  $CARGO_TARGET_DIR/venv/bin/python scripts/bench_lag.py
With RUST_LOG=info,tributary::iscp::runner=debug it also prints the storage
GC passes of each window.
"""
import argparse
import json
import os
import platform
import shlex
import sys
import tempfile
import threading
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pydeps import ensure  # noqa: E402

np = ensure("numpy", "numpy")
pymysql = ensure("pymysql", "pymysql")

from serverproc import default_binary, start_server, stop_server, wait_iscp_current  # noqa: E402,E501

POLL_DEADLINE_S = 120.0
POLL_EF_SEARCH = 400
# Oldest pending rows probed per polling round.
POLL_AHEAD = 64
# Pause after a round of polls that found nothing new.
POLL_PAUSE_S = 0.005
DIM = 128


def lit(v):
    return "[" + ",".join(f"{x:.5f}" for x in v) + "]"


def connect(port):
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                        database="lag", autocommit=True, read_timeout=3600)
    return c.cursor()


def checkpoints(log_path, what="index checkpoint written"):
    """The server's "index checkpoint written" log lines so far (each
    names why the base was written, its bytes, and serialize_ms / write_ms);
    with `what`, the lines holding that instead."""
    with open(log_path, errors="replace") as f:
        return [line.strip() for line in f if what in line]


def points(rng, centres, m):
    """`m` vectors around the data's cluster centres."""
    return centres[rng.integers(0, len(centres), m)] + rng.normal(0.0, 0.6, (m, DIM))


def run_rate(port, rng, centres, first_id, rate, secs, sample):
    """Insert at `rate` rows/s for `secs`; returns (lags in ms, rows, elapsed)."""
    pending = []  # (id, vector literal, commit time), oldest first
    lock = threading.Lock()
    done = threading.Event()
    lags = []
    worst = []  # (lag ms, seconds into the window of the commit)
    failures = []
    start = time.monotonic()
    wall_start = time.time()

    def poll():
        cur = connect(port)
        cur.execute("SET fast_search = 1")
        # A wide beam for this session only: a miss is then lateness, not
        # HNSW recall (at the default beam about 4 % of rows are not their
        # own vector's top-1 on this data, fresh or not).
        cur.execute(f"SET hnsw_ef_search = {POLL_EF_SEARCH}")
        while True:
            with lock:
                batch = list(pending[:POLL_AHEAD])
            if not batch:
                if done.is_set():
                    return
                time.sleep(0.001)
                continue
            # The oldest POLL_AHEAD rows every round: a row that stays
            # unfound must not hold up the measurement of the rows after it.
            found = 0
            for rid, vl, at in batch:
                cur.execute(f"SELECT id FROM v ORDER BY l2_distance(x, '{vl}') LIMIT 1")
                row = cur.fetchone()
                now = time.monotonic()
                if row and row[0] == rid:
                    found += 1
                    lags.append((now - at) * 1000.0)
                    worst.append(((now - at) * 1000.0, at - start))
                    with lock:
                        pending.remove((rid, vl, at))
                    continue
                if now - at > POLL_DEADLINE_S:
                    # Not found in time: still behind the index's
                    # watermark, or applied and missed by the search?
                    cur.execute("SHOW ISCP STATUS")
                    cols = [d[0] for d in cur.description]
                    job = dict(zip(cols, cur.fetchone()))
                    failures.append((rid, "applied" if job["lag_ts"] == 0 else "behind"))
                    with lock:
                        pending.remove((rid, vl, at))
                    continue
            if not found:
                # Nothing applied since the last round: pause instead of
                # spinning wide-beam searches on a core the server under
                # test needs (the granularity stays within POLL_PAUSE_S).
                time.sleep(POLL_PAUSE_S)

    poller = threading.Thread(target=poll)
    poller.start()
    cur = connect(port)
    n = int(rate * secs)
    for i in range(n):
        due = start + i / rate
        wait = due - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        rid = first_id + i
        vl = lit(points(rng, centres, 1)[0])
        cur.execute(f"INSERT INTO v VALUES ({rid}, '{vl}')")
        if i % sample == 0:
            with lock:
                pending.append((rid, vl, time.monotonic()))
    elapsed = time.monotonic() - start
    done.set()
    poller.join()
    worst.sort(reverse=True)
    print(f"  window began {time.strftime('%H:%M:%S', time.gmtime(wall_start))}"
          f".{int(wall_start * 1000) % 1000:03d} UTC; "
          "worst lags (ms @ s into the window): "
          + ", ".join(f"{lag:.0f} @ {t:.1f}" for lag, t in worst[:8]), flush=True)
    return lags, failures, n, elapsed


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round((len(xs) - 1) * p)))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rates", default="200,1000")
    ap.add_argument("--secs", type=float, default=60.0)
    ap.add_argument("--sample", type=int, default=5, help="poll every n-th row")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--json")
    ap.add_argument("--bin", default=default_binary())
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    rng = np.random.default_rng(args.seed)
    centres = rng.normal(0.0, 1.0, (64, DIM)).astype(np.float32)
    res = {"rows": args.rows, "secs": args.secs, "sample": args.sample, "rates": {}}
    with tempfile.TemporaryDirectory(prefix="bench-lag-") as d:
        log_path = os.path.join(d, "server.log")
        proc, port = start_server(args.bin, os.path.join(d, "data"), log_path=log_path)
        try:
            c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                autocommit=True, read_timeout=3600).cursor()
            c.execute("CREATE DATABASE lag")
            c.execute("USE lag")
            c.execute(f"CREATE TABLE v (id INT PRIMARY KEY, x VECF32({DIM}))")
            t = time.monotonic()
            for j in range(0, args.rows, 1000):
                m = min(1000, args.rows - j)
                pts = points(rng, centres, m)
                c.execute("INSERT INTO v VALUES " + ",".join(
                    f"({j + i},'{lit(p)}')" for i, p in enumerate(pts)))
            print(f"loaded {args.rows:,} rows in {time.monotonic() - t:.1f} s")
            t = time.monotonic()
            c.execute("CREATE INDEX h USING HNSW ON v(x) OP_TYPE 'vector_l2_ops' ASYNC")
            wait_iscp_current(c)
            print(f"index built and current in {time.monotonic() - t:.1f} s")
            next_id = args.rows
            for rate in [float(r) for r in args.rates.split(",")]:
                before = len(checkpoints(log_path))
                gc_before = len(checkpoints(log_path, "storage GC"))
                lags, failures, n, elapsed = run_rate(port, rng, centres, next_id, rate,
                                                     args.secs, args.sample)
                next_id += n
                written = checkpoints(log_path)[before:]
                cps = len(written)
                for line in written:
                    print("  " + line, flush=True)
                # Storage GC passes (logged at debug level: run with
                # RUST_LOG=info,tributary::iscp::runner=debug to see them).
                for line in checkpoints(log_path, "storage GC")[gc_before:]:
                    print("  " + line, flush=True)
                r = {"p50": pct(lags, 0.50), "p90": pct(lags, 0.90), "p99": pct(lags, 0.99),
                     "max": max(lags) if lags else float("nan"), "samples": len(lags),
                     "achieved_rows_per_s": n / elapsed, "checkpoints": cps,
                     "checkpoint_log": written,
                     "not_seen_in_time": len(failures),
                     "not_seen_but_applied": sum(1 for _, why in failures if why == "applied")}
                res["rates"][str(rate)] = r
                print(f"{rate:,.0f} rows/s (achieved {r['achieved_rows_per_s']:,.0f}): "
                      f"lag p50 {r['p50']:.0f} ms, p90 {r['p90']:.0f} ms, "
                      f"p99 {r['p99']:.0f} ms, max {r['max']:.0f} ms "
                      f"({r['samples']} samples, {cps} checkpoints)", flush=True)
                if failures:
                    print(f"  {len(failures)} sampled rows not found within "
                          f"{POLL_DEADLINE_S:.0f} s of their commit; of those, "
                          f"{r['not_seen_but_applied']} when the job had applied every "
                          f"change (a search miss), the others while it was behind", flush=True)
        finally:
            stop_server(proc)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)


if __name__ == "__main__":
    main()
