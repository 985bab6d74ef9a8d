#!/usr/bin/env python3
"""LOAD DATA benchmark: one tab-separated file of N rows (an INT primary
key, a short TEXT, a 128-d vector written `[x,x,…]`), loaded by Tributary's
`LOAD DATA INFILE` and by MariaDB's (a throwaway server started here,
`mariadbproc.py`: its compiled-in defaults) in the same run, each into a
fresh server. Reports each one's load time, rows/s, the server's peak RSS
(VmHWM of the server process, which starts fresh for the run) and the
ratio (MariaDB time / Tributary time: above 1.0 Tributary is faster).

MariaDB 10.11 has no vector type: its table keeps the vector's text in a
TEXT column; Tributary parses it into a VECF32(128).

    scripts/bench_load.py --bin /var/tmp/target-load/release/tributary [--rows 1000000]
        [--local] [--commit-rows N] [--keep-file PATH]

`--local` loads with LOAD DATA LOCAL (the file through the client
protocol) on both sides instead of the server-side file. `--commit-rows N`
sets Tributary's `tributary_load_commit_rows` (a commit every N lines;
default 0: one transaction, as InnoDB's)."""

import argparse
import os
import random
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pymysql  # noqa: E402

import mariadbproc  # noqa: E402
import serverproc  # noqa: E402

DIM = 128


def generate(path, rows, seed=7):
    """Write the file (streamed, 64 k rows per write)."""
    rnd = random.Random(seed)
    words = ["alpha", "beta", "gamma", "delta", "river", "stone", "cloud", "ember", "tide"]
    batch = []
    with open(path, "w", encoding="utf-8") as f:
        for i in range(1, rows + 1):
            text = " ".join(rnd.choice(words) for _ in range(5))
            vec = ",".join(f"{rnd.uniform(-1, 1):.3f}" for _ in range(DIM))
            batch.append(f"{i}\t{text} {i}\t[{vec}]\n")
            if len(batch) == 65536:
                f.write("".join(batch))
                batch.clear()
        f.write("".join(batch))
    os.chmod(path, 0o644)


def peak_rss_mb(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def load(conn, ddl, path, local, setup=()):
    with conn.cursor() as c:
        for sql in setup:
            c.execute(sql)
        c.execute("CREATE DATABASE bench")
        c.execute("USE bench")
        c.execute(ddl)
        kw = "LOCAL " if local else ""
        t0 = time.monotonic()
        c.execute(f"LOAD DATA {kw}INFILE '{path}' INTO TABLE b")
        took = time.monotonic() - t0
        info = c._result.message
        c.execute("SELECT COUNT(*) FROM b")
        n = c.fetchone()[0]
    return took, n, info


def run_tributary(binary, path, local, rows, commit_rows):
    d = tempfile.mkdtemp(prefix="bench-load-trib-")
    try:
        proc, port = serverproc.start_server(
            binary, os.path.join(d, "data"),
            extra_args=("--secure-file-priv", os.path.dirname(path)))
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                   autocommit=True, local_infile=True, read_timeout=3600)
            if local:
                with conn.cursor() as c:
                    c.execute("SET GLOBAL local_infile = ON")
            took, n, info = load(
                conn,
                "CREATE TABLE b (id INT PRIMARY KEY, t TEXT, v VECF32(128))",
                path, local, setup=[f"SET tributary_load_commit_rows = {commit_rows}"])
            rss = peak_rss_mb(proc.pid)
            conn.close()
        finally:
            serverproc.stop_server(proc)
    finally:
        shutil.rmtree(d, ignore_errors=True)
    if n != rows:
        sys.exit(f"tributary loaded {n} rows, not {rows} ({info!r})")
    return took, rss


def run_mariadb(path, local, rows):
    m = mariadbproc.MariaDB(pymysql).start()
    try:
        conn = m.connect(autocommit=True, local_infile=True, read_timeout=3600)
        took, n, info = load(
            conn,
            "CREATE TABLE b (id INT PRIMARY KEY, t TEXT, v TEXT) ENGINE=InnoDB",
            path, local)
        rss = peak_rss_mb(m.proc.pid)
        conn.close()
        version = m.version
    finally:
        m.stop()
    if n != rows:
        sys.exit(f"mariadb loaded {n} rows, not {rows} ({info!r})")
    return took, rss, version


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=serverproc.default_binary())
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--local", action="store_true")
    ap.add_argument("--commit-rows", type=int, default=0)
    ap.add_argument("--keep-file", help="generate (or reuse) the file at this path")
    args = ap.parse_args()
    if args.keep_file:
        path = os.path.abspath(args.keep_file)
        tmp = None
    else:
        tmp = tempfile.mkdtemp(prefix="bench-load-file-")
        os.chmod(tmp, 0o755)
        path = os.path.join(tmp, "rows.tsv")
    try:
        if not os.path.exists(path):
            t0 = time.monotonic()
            generate(path, args.rows)
            print(f"generated {args.rows} rows, {os.path.getsize(path) / 1e6:.0f} MB "
                  f"in {time.monotonic() - t0:.1f} s", flush=True)
        mode = "LOAD DATA LOCAL INFILE" if args.local else "LOAD DATA INFILE (server-side)"
        trib, trib_rss = run_tributary(args.bin, path, args.local, args.rows, args.commit_rows)
        print(f"tributary: {trib:.1f} s", flush=True)
        maria, maria_rss, version = run_mariadb(path, args.local, args.rows)
        print(f"mariadb:   {maria:.1f} s", flush=True)
        print()
        batches = (f"commits every {args.commit_rows} rows" if args.commit_rows
                   else "one transaction")
        print(f"{mode}, {args.rows} rows (INT, TEXT, {DIM}-d vector), MariaDB {version}; "
              f"Tributary: {batches}")
        print(f"{'':12}{'time s':>9}{'rows/s':>11}{'peak RSS MB':>13}")
        for name, t, rss in (("tributary", trib, trib_rss), ("mariadb", maria, maria_rss)):
            rss_s = f"{rss:.0f}" if rss is not None else "?"
            print(f"{name:12}{t:9.1f}{args.rows / t:11.0f}{rss_s:>13}")
        print(f"ratio (MariaDB time / Tributary time): {maria / trib:.2f}x")
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
