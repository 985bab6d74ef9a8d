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
  2. For each rate in --rates (default 200 and 1,000 rows/s): --writers
     connections (default 2) insert single rows (autocommit), each row at
     its due time, together at that rate for --secs
     seconds (default 60), drawn from the same clusters. Every
     --sample-th row (default: 40 rows a second, every 5th at 200 rows/s,
     every 25th at 1,000) is polled by another connection with `SET
     fast_search = 1` and, for that session only, `SET hnsw_ef_search =
     400` (so that a miss means the row is not in the index yet, not a
     recall miss): `ORDER BY l2_distance(x, its own vector) LIMIT 1` until
     the answer is that row. Lag = the time the poll first sees it minus
     the time its INSERT returned.
     Polling is oldest-first and stops at the first row not found (the
     index applies changes in commit order), after probing the next one:
     if that one is found, the older row was applied and missed by the
     search, and it is re-probed every 100 ms until found or its deadline.
     The vectors' literals are made before the window.
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
from benchlib import lit  # noqa: E402
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
# Sampled rows per second polled by default (--sample): each is at least one
# beam-400 search, and a poller that cannot keep up measures its own queue.
POLL_RATE = 40
# How often rows a search missed (see poll) are probed again.
SUSPECT_EVERY_S = 0.1
# How long the oldest pending row may stay unfound before the poller checks
# whether rows younger than it are found (see poll).
STUCK_S = 2.0
DIM = 128



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


def run_rate(port, rng, centres, first_id, rate, secs, sample, writers):
    """Insert at `rate` rows/s for `secs` from `writers` connections; returns
    (lags in ms, failures, rows, elapsed)."""
    n = int(rate * secs)
    # Literals made before the window: the client's own CPU (numpy and
    # formatting 128 floats) must not compete with the server it measures.
    vls = [lit(p) for p in points(rng, centres, n)]
    pending = []  # (id, vector literal, commit time), oldest commit first
    suspects = []  # rows a search missed while a younger row was found
    lock = threading.Lock()
    done = threading.Event()
    lags = []
    probes = []  # ms each poll query took
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

        def seen(rid, vl):
            t = time.monotonic()
            cur.execute(f"SELECT id FROM v ORDER BY l2_distance(x, '{vl}') LIMIT 1")
            row = cur.fetchone()
            probes.append((time.monotonic() - t) * 1000.0)
            return bool(row and row[0] == rid)

        def found(item):
            now = time.monotonic()
            lag = (now - item[2]) * 1000.0
            lags.append(lag)
            worst.append((lag, item[2] - start))

        def expired(item, now):
            if now - item[2] <= POLL_DEADLINE_S:
                return False
            # Not found in time: still behind the index's watermark, or
            # applied and missed by the search?
            cur.execute("SHOW ISCP STATUS")
            cols = [d[0] for d in cur.description]
            job = dict(zip(cols, cur.fetchone()))
            failures.append((item[0], "applied" if job["lag_ts"] == 0 else "behind"))
            return True

        last_suspect_round = 0.0
        while True:
            with lock:
                batch = list(pending[:POLL_AHEAD])
            if not batch and not suspects:
                if done.is_set():
                    return
                time.sleep(0.001)
                continue
            # Oldest first. The index applies changes in commit order, so
            # when the oldest pending row is not found, the next one is
            # probed: if it is not found either, the index is behind both
            # and the round ends (two probes, not a whole batch of
            # wide-beam searches on a core the server needs). If it is
            # found, the older row was applied and missed by the search:
            # it becomes a suspect, re-probed every SUSPECT_EVERY_S until
            # the deadline, and no longer holds up the rows after it.
            progressed = False
            i = 0
            while i < len(batch):
                item = batch[i]
                if seen(item[0], item[1]):
                    found(item)
                    with lock:
                        pending.remove(item)
                    progressed = True
                    i += 1
                    continue
                if expired(item, time.monotonic()):
                    with lock:
                        pending.remove(item)
                    i += 1
                    continue
                if i + 1 < len(batch) and seen(batch[i + 1][0], batch[i + 1][1]):
                    found(batch[i + 1])
                    with lock:
                        pending.remove(item)
                        pending.remove(batch[i + 1])
                    suspects.append(item)
                    progressed = True
                    i += 2
                    continue
                # Two rows in a row missed by the search (rare) would hold
                # up the rest: after STUCK_S the batch's youngest row tells.
                last = batch[-1]
                if (time.monotonic() - item[2] > STUCK_S and i + 2 < len(batch)
                        and seen(last[0], last[1])):
                    found(last)
                    for it in batch[i:-1]:
                        if seen(it[0], it[1]):
                            found(it)
                        else:
                            suspects.append(it)
                    with lock:
                        for it in batch[i:]:
                            pending.remove(it)
                    progressed = True
                break
            now = time.monotonic()
            if suspects and now - last_suspect_round >= SUSPECT_EVERY_S:
                last_suspect_round = now
                for item in list(suspects):
                    if seen(item[0], item[1]):
                        found(item)
                        suspects.remove(item)
                    elif expired(item, time.monotonic()):
                        suspects.remove(item)
            if not progressed:
                # Nothing applied since the last round: pause (the
                # granularity stays within POLL_PAUSE_S).
                time.sleep(POLL_PAUSE_S)

    def write(w):
        cur = connect(port)
        # Writer w inserts rows w, w + writers, …, each at its due time.
        for i in range(w, n, writers):
            due = start + i / rate
            wait = due - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            rid = first_id + i
            cur.execute(f"INSERT INTO v VALUES ({rid}, '{vls[i]}')")
            if i % sample == 0:
                item = (rid, vls[i], time.monotonic())
                with lock:
                    # Kept in commit order (writers interleave).
                    k = len(pending)
                    while k > 0 and pending[k - 1][2] > item[2]:
                        k -= 1
                    pending.insert(k, item)

    poller = threading.Thread(target=poll)
    poller.start()
    threads = [threading.Thread(target=write, args=(w,)) for w in range(writers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - start
    done.set()
    poller.join()
    worst.sort(reverse=True)
    print(f"  window began {time.strftime('%H:%M:%S', time.gmtime(wall_start))}"
          f".{int(wall_start * 1000) % 1000:03d} UTC; "
          "worst lags (ms @ s into the window): "
          + ", ".join(f"{lag:.0f} @ {t:.1f}" for lag, t in worst[:8]), flush=True)
    print(f"  {len(probes)} poll queries: p50 {pct(probes, 0.5):.1f} ms, "
          f"p99 {pct(probes, 0.99):.1f} ms, max {max(probes, default=0):.1f} ms", flush=True)
    return lags, failures, n, elapsed


def stat_cpu(path):
    """(name, CPU seconds) of a /proc/.../stat file; None if it is gone."""
    try:
        with open(path) as f:
            st = f.read()
    except OSError:
        return None
    fields = st[st.rindex(")") + 2:].split()
    secs = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return st[st.index("(") + 1:st.rindex(")")], secs


def thread_cpu(pid):
    """CPU seconds used so far by each of process `pid`'s threads, summed
    by thread name (Linux /proc; empty elsewhere)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        got = stat_cpu(f"/proc/{pid}/task/{tid}/stat")
        if got:
            out[got[0]] = out.get(got[0], 0.0) + got[1]
    return out


def process_cpu(pid):
    """CPU seconds used so far by process `pid`, its ended threads included."""
    got = stat_cpu(f"/proc/{pid}/stat")
    return got[1] if got else 0.0


def cpu_delta(before, after):
    return {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after
            if after.get(k, 0.0) - before.get(k, 0.0) >= 0.05}


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round((len(xs) - 1) * p)))] if xs else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--rates", default="200,1000")
    ap.add_argument("--secs", type=float, default=60.0)
    ap.add_argument("--sample", type=int,
                    help="poll every n-th row (default: rate / POLL_RATE, at least 1)")
    ap.add_argument("--writers", type=int, default=2,
                    help="connections sharing the insert rate")
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--json")
    ap.add_argument("--log", help="keep the server's log at this path")
    ap.add_argument("--bin", default=default_binary())
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    rng = np.random.default_rng(args.seed)
    centres = rng.normal(0.0, 1.0, (64, DIM)).astype(np.float32)
    res = {"rows": args.rows, "secs": args.secs, "rates": {}}
    with tempfile.TemporaryDirectory(prefix="bench-lag-") as d:
        log_path = args.log or os.path.join(d, "server.log")
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
                sample = args.sample or max(1, round(rate / POLL_RATE))
                cpu0, me0 = thread_cpu(proc.pid), process_cpu(os.getpid())
                total0 = process_cpu(proc.pid)
                lags, failures, n, elapsed = run_rate(port, rng, centres, next_id, rate,
                                                     args.secs, sample, args.writers)
                server_cpu = cpu_delta(cpu0, thread_cpu(proc.pid))
                total = process_cpu(proc.pid) - total0
                client_cpu = process_cpu(os.getpid()) - me0
                print(f"  CPU seconds in the {elapsed:.0f} s window: server {total:.1f} "
                      "(threads alive at its end: "
                      + ", ".join(f"{k} {v:.1f}" for k, v in
                                  sorted(server_cpu.items(), key=lambda kv: -kv[1]))
                      + f"); this client {client_cpu:.1f}", flush=True)
                next_id += n
                written = checkpoints(log_path)[before:]
                cps = len(written)
                for line in written:
                    print("  " + line, flush=True)
                # Storage GC passes (logged at debug level: run with
                # RUST_LOG=info,tributary::iscp::runner=debug to see them).
                for line in checkpoints(log_path, "storage GC")[gc_before:]:
                    print("  " + line, flush=True)
                r = {"sample": sample, "p50": pct(lags, 0.50), "p90": pct(lags, 0.90), "p99": pct(lags, 0.99),
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
