"""Start and stop a `tributary serve` process for the scripts in this folder
(benchmarks, load test): which binary (`default_binary`), an ephemeral
loopback port read from the server's "listening on" line, bounded waits,
SIGTERM then kill."""

import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time

START_DEADLINE_S = 60.0
STOP_DEADLINE_S = 30.0
READY_DEADLINE_S = 1800.0


def default_binary():
    """$TRIBUTARY_BIN, else the release build under $CARGO_TARGET_DIR (or ./target)."""
    return os.environ.get(
        "TRIBUTARY_BIN",
        os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "release", "tributary"))


def _reader(stream, q):
    for line in iter(stream.readline, ""):
        q.put(line)
    q.put(None)


def start_server(binary, data_dir, extra_args=(), show_log=False, log_path=None):
    """Start `binary serve` on 127.0.0.1:0 with the admin endpoint off;
    returns (process, port). Its log goes to the terminal with `show_log`,
    to the file `log_path` if given, else nowhere. Exits the script if it
    does not come up."""
    if log_path is not None:
        stderr = open(log_path, "w")
    else:
        stderr = None if show_log else subprocess.DEVNULL
    proc = subprocess.Popen(
        [binary, "serve", "--data", data_dir, "--listen", "127.0.0.1:0",
         "--admin-listen", "off", *extra_args],
        stdout=subprocess.PIPE,
        stderr=stderr,
        text=True,
    )
    q = queue.Queue()
    threading.Thread(target=_reader, args=(proc.stdout, q), daemon=True).start()
    deadline = time.monotonic() + START_DEADLINE_S
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            proc.wait()
            sys.exit("server did not print 'listening on' in time")
        try:
            line = q.get(timeout=left)
        except queue.Empty:
            continue
        if line is None:
            sys.exit(f"server exited early with code {proc.wait()}")
        m = re.match(r"listening on [\d.]+:(\d+)", line)
        if m:
            return proc, int(m.group(1))


def stop_server(proc):
    """SIGTERM, wait (bounded), then kill; returns the exit code or None."""
    proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=STOP_DEADLINE_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        return None


def wait_iscp_current(cur, deadline_s=READY_DEADLINE_S):
    """Poll SHOW ISCP STATUS on DB-API cursor `cur` until every job not
    dropped (dropped ones stay listed, canceled, for a while) is `current`;
    exits the script when one is in error or the deadline passes."""
    deadline = time.monotonic() + deadline_s
    while True:
        cur.execute("SHOW ISCP STATUS")
        cols = [d[0] for d in cur.description]
        jobs = [j for j in (dict(zip(cols, r)) for r in cur.fetchall())
                if j["phase"] != "canceled"]
        if jobs and all(j["phase"] == "current" for j in jobs):
            return
        if any(j["phase"] == "error" for j in jobs) or time.monotonic() > deadline:
            sys.exit(f"index not current: {jobs}")
        time.sleep(0.05)
