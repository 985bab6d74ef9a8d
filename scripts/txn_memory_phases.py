#!/usr/bin/env python3
"""Memory of one large write transaction, by phase (decision 032): a fresh
server, `START TRANSACTION; LOAD DATA INFILE <file> INTO TABLE b` (the
`bench_load.py` table: INT key, TEXT, VECF32(128)), then `COMMIT`. Prints
the server's VmRSS after the load (transaction still open), its peak
(VmHWM, reset before the COMMIT) during the commit, and VmRSS 30 s later.

    scripts/txn_memory_phases.py BINARY FILE [server args…]

FILE: a `bench_load.py` file (`--keep-file`), in a directory the server
may read (it is passed as `--secure-file-priv`)."""

import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import pymysql  # noqa: E402

import serverproc  # noqa: E402


def status_mb(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) // 1024
    return None


def reset_peak(pid):
    with open(f"/proc/{pid}/clear_refs", "w") as f:
        f.write("5")


def main():
    binary, path = sys.argv[1], os.path.abspath(sys.argv[2])
    d = tempfile.mkdtemp(prefix="txn-memory-")
    proc, port = serverproc.start_server(
        binary, os.path.join(d, "data"),
        extra_args=("--secure-file-priv", os.path.dirname(path), *sys.argv[3:]))
    try:
        c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                            autocommit=True, read_timeout=7200).cursor()
        c.execute("CREATE DATABASE bench")
        c.execute("USE bench")
        c.execute("CREATE TABLE b (id INT PRIMARY KEY, t TEXT, v VECF32(128))")
        pid = proc.pid
        print(f"start: RSS {status_mb(pid, 'VmRSS')} MB", flush=True)
        c.execute("START TRANSACTION")
        t0 = time.monotonic()
        c.execute(f"LOAD DATA INFILE '{path}' INTO TABLE b")
        print(f"after LOAD (txn open) {time.monotonic() - t0:.1f} s: "
              f"RSS {status_mb(pid, 'VmRSS')} MB", flush=True)
        reset_peak(pid)
        t0 = time.monotonic()
        c.execute("COMMIT")
        print(f"COMMIT {time.monotonic() - t0:.1f} s: RSS {status_mb(pid, 'VmRSS')} MB, "
              f"peak during commit {status_mb(pid, 'VmHWM')} MB", flush=True)
        time.sleep(30)  # a measurement interval, not synchronisation
        print(f"30 s later: RSS {status_mb(pid, 'VmRSS')} MB", flush=True)
    finally:
        serverproc.stop_server(proc)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
