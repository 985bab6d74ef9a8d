#!/usr/bin/env python3
"""Instructions per single-row autocommit INSERT, counted by callgrind.

Rates on the 2-vCPU benchmark machine move ±30 % from one minute to the
next (BENCHMARKS "Storage v2"), and so does server CPU time per commit; an
instruction count does not. This runs `tributary serve` under
`valgrind --tool=callgrind` with its data on tmpfs (/dev/shm), warms up,
inserts --commits rows one autocommit statement each from one PyMySQL
client, stops the server and prints, per commit, the inclusive instruction
count of the whole server and of the functions named in FUNCTIONS (the SQL
layer, the commit path, the applier). Compare two builds with
`TRIBUTARY_BIN=... python3 scripts/profile_commits.py` on each.

Needs valgrind (installed with apt-get when missing) and a release build
(`cargo build --release --bin tributary`; debug info is on in release).
Takes about a minute.
"""

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pydeps  # noqa: E402
import serverproc  # noqa: E402

pymysql = pydeps.ensure("pymysql", "PyMySQL")

# (label, a substring of callgrind_annotate's function name)
FUNCTIONS = [
    ("statement (parse + plan + run)", "tributary::sql::Engine::execute_statement ["),
    ("  parse", "tributary::sql::parse::parse ["),
    ("  catalog lookup", "tributary::catalog::require_table_for_write ["),
    ("  row write (PK check + put)", "tributary::sql::dml::write_new_row ["),
    ("  commit", "tributary_storage::embedded::txn::EmbeddedTxn as tributary_storage::api::Transaction>::commit ["),
    ("    group commit (leader)", "tributary_storage::embedded::commit::commit ["),
    ("      log write", "tributary_storage::embedded::log::CommitLog::append_encoded ["),
    ("      log sync and completion", "tributary_storage::embedded::flush::sync_round ["),
    ("      change list (before images)", "tributary_storage::embedded::changelog::build_changes ["),
    ("      overlay install", "tributary_storage::embedded::mvcc::VersionStore::install ["),
    ("  redb read transactions", "tributary_storage::embedded::engine::Inner::rows_reader ["),
    ("  row locks (acquire)", "tributary_storage::embedded::locks::LockManager::acquire ["),
    ("applier (redb write)", "tributary_storage::embedded::durable::Durable::commit_group ["),
]
PORT_RE = re.compile(r"listening on \S+:(\d+)")


def ensure_valgrind():
    if shutil.which("valgrind") and shutil.which("callgrind_annotate"):
        return
    print("installing valgrind with apt-get", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "-q", "valgrind"], check=True,
                   stdout=subprocess.DEVNULL)


def wait_port(port, deadline_s=120.0):
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    sys.exit(f"the server under valgrind did not listen on {port} in {deadline_s} s")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def inclusive_counts(out_file):
    text = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", "--auto=no",
                           out_file],
                          # Run elsewhere than the repository: there it finds
                          # the sources and prints smaller "inclusive" counts.
                          cwd="/", check=True, capture_output=True, text=True).stdout
    total = None
    counts = {}
    for line in text.splitlines():
        # Function lines only ("count (pct)  file:function [object]").
        m = re.match(r"\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)", line)
        if not m or "=>" in line:
            continue
        n = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in m.group(2):
            total = n
        for label, needle in FUNCTIONS:
            if needle in m.group(2):
                counts[label] = max(counts.get(label, 0), n)
    return total, counts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--commits", type=int, default=3000, help="measured commits (default 3000)")
    ap.add_argument("--warmup", type=int, default=500, help="commits before measuring (500)")
    ap.add_argument("--rows", type=int, default=1,
                    help="rows per INSERT (multi-VALUES; default 1); counts are then per row")
    args = ap.parse_args()
    ensure_valgrind()
    binary = serverproc.default_binary()
    if not os.path.exists(binary):
        sys.exit(f"no binary at {binary}: cargo build --release --bin tributary")
    data = tempfile.mkdtemp(prefix="tributary-cg-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    out_file = os.path.join(data, "callgrind.out")
    port = free_port()
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
         "--instr-atstart=no", binary, "serve", "--data", os.path.join(data, "db"),
         "--listen", f"127.0.0.1:{port}", "--admin-listen", "off"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_port(port)
        conn = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        cur = conn.cursor()
        cur.execute("CREATE DATABASE b")
        cur.execute("USE b")
        cur.execute("CREATE TABLE t (id BIGINT PRIMARY KEY, txt VARCHAR(100), n INT)")
        txt = "x" * 100

        def insert(stmts):
            for s in stmts:
                ids = range(s * args.rows, (s + 1) * args.rows)
                cur.execute("INSERT INTO t VALUES "
                            + ",".join(f"({i},'{txt}',{i % 1000})" for i in ids))

        insert(range(args.warmup))
        subprocess.run(["callgrind_control", "--instr=on", str(proc.pid)], check=True,
                       stdout=subprocess.DEVNULL)
        insert(range(args.warmup, args.warmup + args.commits))
        subprocess.run(["callgrind_control", "--instr=off", str(proc.pid)], check=True,
                       stdout=subprocess.DEVNULL)
        cur.execute("SELECT COUNT(*) FROM t")
        rows = cur.fetchone()[0]
        if rows != (args.warmup + args.commits) * args.rows:
            sys.exit(f"expected {(args.warmup + args.commits) * args.rows} rows, found {rows}")
        conn.close()
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=120)
        total, counts = inclusive_counts(out_file)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        keep = os.environ.get("KEEP_CALLGRIND_OUT")
        if keep and os.path.exists(out_file):
            shutil.copy(out_file, keep)
        shutil.rmtree(data, ignore_errors=True)
    if total is None:
        sys.exit("callgrind_annotate printed no totals")
    print(f"binary: {binary}")
    rows = args.commits * args.rows
    unit = "commit" if args.rows == 1 else "row"
    print(f"{args.commits} {args.rows}-row autocommit INSERTs, one client; instructions per {unit}:")
    print(f"  {'whole server (all threads)':36} {total / rows:>10,.0f}")
    for label, _ in FUNCTIONS:
        if label in counts:
            print(f"  {label:36} {counts[label] / rows:>10,.0f}")


if __name__ == "__main__":
    main()
