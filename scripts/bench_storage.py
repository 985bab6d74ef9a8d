#!/usr/bin/env python3
"""Storage benchmark: Tributary, MariaDB and PostgreSQL side by side, each
through its own wire protocol from Python (Tributary and MariaDB with
PyMySQL, PostgreSQL with psycopg 3), on the same table

    t (id BIGINT PRIMARY KEY, txt VARCHAR(100), n INT)

with a 100-byte `txt` and `n = id % 1000`. Workloads, in this order, on a
freshly created database per repetition:

  insert 1 row, 1 client      single-row autocommit INSERTs            rows/s
  insert 100 rows, 1 client   100-row multi-VALUES autocommit INSERTs  rows/s
  insert 1 row, C clients     C processes (one connection each, --clients,
                              default 8 and 32) doing single-row autocommit
                              INSERTs on disjoint id ranges; the window runs
                              from the first client's start after a shared
                              barrier to the last client's end      total rows/s
  (untimed) 1000-row INSERTs until the table holds --scan-rows rows
  point select                SELECT txt, n FROM t WHERE id = <random>  queries/s
  range scan                  SELECT id, n FROM t WHERE id BETWEEN a AND a+99
                              (100 rows each)                          queries/s
  full scan                   SELECT COUNT(*) FROM t WHERE n = <k> over the
                              whole table, after one untimed warm-up  rows scanned/s

Every statement is a literal SQL string (no prepared statements, no
client-side batching beyond the multi-VALUES INSERT), one round trip each;
results are checked (row counts after the inserts, each query's rows). Each
server is started once, with its defaults for durability: Tributary fsyncs
every commit (plus whatever `--tributary-args` says), MariaDB runs with
`--no-defaults` (innodb_flush_log_at_trx_commit=1, no binary log, 128 MiB
buffer pool), PostgreSQL with fsync and synchronous_commit on. All data
directories are temporary directories on the same file system.

Each workload runs on every server back to back before the next workload
starts (the servers run side by side throughout), in an order rotated per
workload and per rep (A B C, B C A, ...), so that the slow phases of a
shared virtual disk fall on all servers alike instead of on whichever ran
its whole suite then; every rep drops and recreates the databases. The
JSON (--json) keeps every rep's rates. The table shows the median
over reps per workload and server, the ratios of those medians Tributary /
MariaDB and Tributary / PostgreSQL (> 1: Tributary faster), and the same
ratios "paired": the median over reps of each rep's own ratio, whose runs
were seconds apart (the disk's drift between reps cancels out). A second table shows the
Python client's CPU time as a share of the wall time of each single-client
workload (near 100 %: the client, not the server, is the bottleneck;
PyMySQL is pure Python, psycopg's binary build is C).

Reproduce (PyMySQL and psycopg are pip-installed when missing; mariadb-server
is apt-get installed when `mariadbd` is missing, PostgreSQL likewise):

    cargo build --release --bin tributary
    python3 scripts/bench_storage.py [--reps 3] [--servers tributary,mariadb,postgres]
        [--tributary-args='--some-flag value'] [--json out.json] [--quick]

Sizes (--single, --batch, --clients, --rows-per-client, --point, --range,
--full-scans, --scan-rows) default to about 1.5-2.5 minutes per rep on
a 2-core machine; --quick shrinks them to a few seconds for a smoke run.
The header gives the machine, the server versions and durability settings
and the command line; progress lines go to stderr.

Tributary binary: $TRIBUTARY_BIN, else $CARGO_TARGET_DIR/release/tributary
(or ./target/release/tributary).
"""
import argparse
import datetime
import json
import multiprocessing
import os
import platform
import random
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mariadbproc  # noqa: E402
import pgproc  # noqa: E402
import pydeps  # noqa: E402
import serverproc  # noqa: E402

pymysql = pydeps.ensure("pymysql", "PyMySQL")

DDL = "CREATE TABLE t (id BIGINT PRIMARY KEY, txt VARCHAR(100), n INT)"
LOAD_BATCH = 1000
BARRIER_TIMEOUT_S = 120.0
CLIENT_TIMEOUT_S = 1800.0
SERVER_NAMES = ("tributary", "mariadb", "postgres")
DISPLAY = {"tributary": "tributary", "mariadb": "mariadb", "postgres": "postgresql"}

DEFAULTS = dict(single=5000, batch=100_000, clients="8,32", rows_per_client=2000,
                point=20000, range=5000, full_scans=5, scan_rows=200_000)
QUICK = dict(single=200, batch=2000, clients="4,8", rows_per_client=50,
             point=1000, range=200, full_scans=2, scan_rows=10_000)

_FILLER = "".join(random.Random(42).choice("abcdefghijklmnopqrstuvwxyz") for _ in range(100))


def txt_of(i):
    """Row `i`'s 100-byte txt: the zero-padded id, then filler."""
    return (f"{i:012d}-" + _FILLER)[:100]


def row_sql(i):
    """The VALUES tuple of row `i`: txt_of(i), n = i % 1000."""
    return f"({i},'{txt_of(i)}',{i % 1000})"


def monotonic():
    """System-wide on Linux, so comparable between the client processes."""
    return time.clock_gettime(time.CLOCK_MONOTONIC)


# ---------------------------------------------------------------- servers
# One thin adapter per server: start/stop, connect() to database `b`
# (autocommit), reset() (drop and recreate `b` and the table), version and
# the settings worth printing. Connect and reset are the only dialect
# differences; every workload's SQL is the same for all three.

class MySQLProtocol:
    """What Tributary and MariaDB share: PyMySQL as root without a password
    on 127.0.0.1:`self.port`."""

    def _connect(self, **kw):
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                               autocommit=True, **kw)

    def connect(self):
        return self._connect(database="b")

    def query_one(self, sql):
        conn = self._connect()
        try:
            with conn.cursor() as c:
                c.execute(sql)
                return c.fetchone()[0]
        finally:
            conn.close()

    def reset(self):
        conn = self._connect()
        try:
            with conn.cursor() as c:
                c.execute("DROP DATABASE IF EXISTS b")
                c.execute("CREATE DATABASE b")
                c.execute("USE b")
                c.execute(DDL)
        finally:
            conn.close()

    def log_tail(self):
        try:
            with open(self.log) as f:
                return f.read()[-3000:]
        except OSError:
            return ""


class Tributary(MySQLProtocol):
    name = "tributary"

    def __init__(self, binary, extra_args):
        self.binary = binary
        self.extra_args = extra_args

    def start(self):
        if not os.path.exists(self.binary):
            sys.exit(f"tributary binary not found at {self.binary} "
                     "(set TRIBUTARY_BIN or CARGO_TARGET_DIR)")
        self.root = tempfile.mkdtemp(prefix="bench-tributary-")
        self.log = os.path.join(self.root, "server.log")
        try:
            self.proc, self.port = serverproc.start_server(
                self.binary, os.path.join(self.root, "data"), self.extra_args,
                log_path=self.log)
        except SystemExit as e:  # it did not come up: say why, leave no directory
            tail = self.log_tail()
            shutil.rmtree(self.root, ignore_errors=True)
            sys.exit(f"tributary: {e}\n{tail}")
        self.version = self.query_one("SELECT VERSION()")
        self.settings = {"binary": self.binary,
                         "serve args": shlex.join(self.extra_args) or "(none)"}

    def stop(self):
        rc = serverproc.stop_server(self.proc)
        if rc != 0:
            print(f"warning: tributary exit code {rc} after SIGTERM; log tail:\n"
                  + self.log_tail(), file=sys.stderr)
        shutil.rmtree(self.root, ignore_errors=True)


class MariaDB(MySQLProtocol):
    name = "mariadb"

    def start(self):
        self.server = mariadbproc.MariaDB(pymysql).start()
        self.port = self.server.port
        self.log = self.server.log
        self.version = self.server.version
        self.settings = {v: self.query_one(f"SELECT @@{v}") for v in (
            "innodb_flush_log_at_trx_commit", "innodb_buffer_pool_size", "log_bin",
            "innodb_doublewrite", "innodb_flush_method")}

    def stop(self):
        self.server.stop()


class Postgres:
    name = "postgres"

    def start(self):
        self.psycopg = pgproc.psycopg_module()
        self.cluster = pgproc.PgCluster(pgproc.debian_bin())
        self.port = self.cluster.port
        self.version = self.query_one("SELECT version()").split(" on ")[0]
        self.settings = {v: self.query_one(f"SHOW {v}") for v in (
            "fsync", "synchronous_commit", "shared_buffers", "wal_sync_method",
            "max_parallel_workers_per_gather")}

    def connect(self):
        return self.psycopg.connect(host="127.0.0.1", port=self.port, user="postgres",
                                    dbname="b", autocommit=True)

    def query_one(self, sql):
        return self.cluster.conn.execute(sql).fetchone()[0]

    def reset(self):
        admin = self.cluster.conn
        admin.execute("DROP DATABASE IF EXISTS b WITH (FORCE)")
        admin.execute("CREATE DATABASE b")
        conn = self.connect()
        try:
            conn.execute(DDL)
        finally:
            conn.close()

    def stop(self):
        self.cluster.stop()

    def log_tail(self):
        return ""


# -------------------------------------------------------------- workloads
# Each returns a result dict: count (rows or queries), seconds, rate, unit,
# and for single-client workloads the client's CPU seconds.

def result(count, seconds, unit, client_cpu=None):
    r = {"count": count, "seconds": seconds, "rate": count / seconds, "unit": unit}
    if client_cpu is not None:
        r["client_cpu_s"] = client_cpu
    return r


class Timer:
    def __enter__(self):
        self.cpu, self.wall = time.process_time(), time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.wall
        self.client_cpu = time.process_time() - self.cpu


def insert_single(cur, first, count):
    with Timer() as t:
        for i in range(first, first + count):
            cur.execute("INSERT INTO t VALUES " + row_sql(i))
    return result(count, t.seconds, "rows/s", t.client_cpu)


def insert_batches(cur, first, count, per_stmt):
    """`count` rows from id `first`, `per_stmt` rows per INSERT (the last
    statement may be shorter)."""
    stmts = ["INSERT INTO t VALUES " + ",".join(
                 row_sql(i) for i in range(s, min(s + per_stmt, first + count)))
             for s in range(first, first + count, per_stmt)]
    with Timer() as t:
        for sql in stmts:
            cur.execute(sql)
    return result(count, t.seconds, "rows/s", t.client_cpu)


def _client(server, first, count, barrier, out):
    """One concurrent client process: connect, wait at the barrier, insert
    ids first..first+count-1 one autocommit statement each; reports
    (start, end, error) on `out`."""
    try:
        conn = server.connect()
        cur = conn.cursor()
    except Exception as e:  # reported to the parent
        barrier.abort()
        out.put((None, None, f"connect: {e!r}"))
        return
    try:
        barrier.wait(BARRIER_TIMEOUT_S)
        start = monotonic()
        for i in range(first, first + count):
            cur.execute("INSERT INTO t VALUES " + row_sql(i))
        out.put((start, monotonic(), None))
    except Exception as e:  # reported to the parent
        barrier.abort()
        out.put((None, None, repr(e)))
    finally:
        conn.close()


def insert_concurrent(server, first, clients, per_client):
    ctx = multiprocessing.get_context("fork")
    barrier = ctx.Barrier(clients)
    out = ctx.Queue()
    procs = [ctx.Process(target=_client,
                         args=(server, first + k * per_client, per_client, barrier, out))
             for k in range(clients)]
    for p in procs:
        p.start()
    try:
        reports = [out.get(timeout=CLIENT_TIMEOUT_S) for _ in procs]
    except BaseException:  # timed out or interrupted: leave no client behind
        for p in procs:
            p.terminate()
        raise
    finally:
        for p in procs:
            p.join()
    errors = [e for _, _, e in reports if e]
    if errors:
        raise RuntimeError(f"{server.name}: {len(errors)} of {clients} clients failed; "
                           f"first: {errors[0]}")
    window = max(end for _, end, _ in reports) - min(start for start, _, _ in reports)
    return result(clients * per_client, window, "rows/s")


def point_select(cur, total, count, rnd):
    ids = [rnd.randrange(total) for _ in range(count)]
    with Timer() as t:
        for i in ids:
            cur.execute(f"SELECT txt, n FROM t WHERE id = {i}")
            rows = cur.fetchall()
            if len(rows) != 1 or rows[0][1] != i % 1000:
                raise RuntimeError(f"point select id {i}: {rows!r}")
    return result(count, t.seconds, "queries/s", t.client_cpu)


def range_scan(cur, total, count, rnd):
    starts = [rnd.randrange(total - 99) for _ in range(count)]
    with Timer() as t:
        for a in starts:
            cur.execute(f"SELECT id, n FROM t WHERE id BETWEEN {a} AND {a + 99}")
            rows = cur.fetchall()
            if len(rows) != 100:
                raise RuntimeError(f"range {a}..{a + 99}: {len(rows)} rows")
    return result(count, t.seconds, "queries/s", t.client_cpu)


def full_scan(cur, total, count, k=7):
    """`count` timed scans after one untimed warm-up; rate = rows scanned per
    second (the table's size times the scans over their total time)."""
    sql = f"SELECT COUNT(*) FROM t WHERE n = {k}"
    expected = len(range(k, total, 1000))
    cur.execute(sql)
    cur.fetchall()
    with Timer() as t:
        for _ in range(count):
            cur.execute(sql)
            (got,), = cur.fetchall()
            if got != expected:
                raise RuntimeError(f"{sql}: {got}, expected {expected}")
    return result(count * total, t.seconds, "rows/s", t.client_cpu)


def count_rows(cur):
    cur.execute("SELECT COUNT(*) FROM t")
    return cur.fetchone()[0]


def workload_names(clients):
    return (["insert 1 row, 1 client", "insert 100 rows, 1 client"]
            + [f"insert 1 row, {c} clients" for c in clients]
            + ["point select", "range scan (100 rows)", "full scan COUNT(*) WHERE n = k"])


def run_server(server, args, rep):
    """The workloads on `server` against a fresh database, one step per
    workload: yields (workload, result) after each, so that `main` can run
    each workload on every server back to back."""
    server.reset()
    names = iter(workload_names(args.clients))
    conn = server.connect()
    try:
        cur = conn.cursor()
        yield next(names), insert_single(cur, 0, args.single)
        next_id = args.single
        yield next(names), insert_batches(cur, next_id, args.batch, 100)
        next_id += args.batch
        for c in args.clients:
            yield next(names), insert_concurrent(server, next_id, c, args.rows_per_client)
            next_id += c * args.rows_per_client
        if count_rows(cur) != next_id:
            raise RuntimeError(f"{server.name}: {count_rows(cur)} rows after the inserts, "
                               f"expected {next_id}")
        if next_id < args.scan_rows:
            insert_batches(cur, next_id, args.scan_rows - next_id, LOAD_BATCH)
            next_id = args.scan_rows
        total = count_rows(cur)
        if total != next_id:
            raise RuntimeError(f"{server.name}: {total} rows after loading, expected {next_id}")
        rnd = random.Random(rep)
        yield next(names), point_select(cur, total, args.point, rnd)
        yield next(names), range_scan(cur, total, args.range, rnd)
        yield next(names), full_scan(cur, total, args.full_scans)
    finally:
        conn.close()


# ---------------------------------------------------------------- report

def machine_header():
    def cpuinfo(key):
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith(key):
                    return line.split(":", 1)[1].strip()
        return "?"

    with open("/proc/meminfo") as f:
        mem_kb = int(next(line for line in f if line.startswith("MemTotal")).split()[1])
    fs = subprocess.run(["df", "--output=fstype,source", tempfile.gettempdir()],
                        capture_output=True, text=True).stdout.split("\n")[1].split()
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "command": shlex.join([sys.executable, *sys.argv]),
        "nproc": os.cpu_count(),
        "cpu": cpuinfo("model name"),
        "ram": f"{mem_kb / 1024 / 1024:.1f} GiB",
        "kernel": platform.release(),
        "temp dir": f"{tempfile.gettempdir()} ({' on '.join(fs)})",
    }


def fmt_rate(r):
    return f"{r:,.0f}"


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "–"


def print_report(header, servers, medians, paired, cpu_share, names, reps):
    for k, v in header.items():
        print(f"{k}: {v}")
    for s in servers:
        print(f"{DISPLAY[s.name]}: {s.version}; "
              + ", ".join(f"{k}={v}" for k, v in s.settings.items()))
    print(f"\nmedian of {reps} rep(s); ratio > 1: Tributary faster; 'paired': the median"
          " of each rep's own ratio\n")
    cols = [DISPLAY[n] for n in SERVER_NAMES]
    print("| workload | unit | " + " | ".join(cols)
          + " | trib/maria | trib/pg | trib/maria paired | trib/pg paired |")
    print("|---|---|" + "---:|" * (len(cols) + 4))
    for w, unit in names:
        m = medians.get(w, {})
        p = paired.get(w, {})
        cells = [fmt_rate(m[n]) if n in m else "–" for n in SERVER_NAMES]
        t = m.get("tributary")
        print(f"| {w} | {unit} | " + " | ".join(cells)
              + f" | {fmt_ratio(t, m.get('mariadb'))} | {fmt_ratio(t, m.get('postgres'))}"
              + "".join(f" | {p[n]:.2f}" if n in p else " | –" for n in ("mariadb", "postgres"))
              + " |")
    print("\nPython client CPU / wall time (median), single-client workloads\n")
    print("| workload | " + " | ".join(cols) + " |")
    print("|---|" + "---:|" * len(cols))
    for w, _ in names:
        if w in cpu_share:
            print(f"| {w} | " + " | ".join(
                f"{cpu_share[w][n]:.0%}" if n in cpu_share[w] else "–"
                for n in SERVER_NAMES) + " |")


# ------------------------------------------------------------------ main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--servers", default=",".join(SERVER_NAMES),
                    help="comma-separated subset of " + ",".join(SERVER_NAMES))
    ap.add_argument("--reps", type=int, help="repetitions (default 3; 1 with --quick)")
    ap.add_argument("--quick", action="store_true", help="tiny sizes for a smoke run")
    ap.add_argument("--single", type=int, help=f"rows, single-row inserts ({DEFAULTS['single']})")
    ap.add_argument("--batch", type=int, help=f"rows, 100-row inserts ({DEFAULTS['batch']})")
    ap.add_argument("--clients", help=f"concurrent-insert client counts ({DEFAULTS['clients']})")
    ap.add_argument("--rows-per-client", type=int,
                    help=f"rows per concurrent client ({DEFAULTS['rows_per_client']})")
    ap.add_argument("--point", type=int, help=f"point selects ({DEFAULTS['point']})")
    ap.add_argument("--range", type=int, help=f"range scans ({DEFAULTS['range']})")
    ap.add_argument("--full-scans", type=int, help=f"timed full scans ({DEFAULTS['full_scans']})")
    ap.add_argument("--scan-rows", type=int,
                    help=f"table size for the reads, topped up untimed ({DEFAULTS['scan_rows']})")
    ap.add_argument("--tributary-args", default="",
                    help="extra arguments of `tributary serve`, shell-split; write "
                         "--tributary-args='--flag value' when they start with a dash")
    ap.add_argument("--json", help="write the raw per-rep numbers here")
    args = ap.parse_args()
    sizes = QUICK if args.quick else DEFAULTS
    for k, v in sizes.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    if args.reps is None:
        args.reps = 1 if args.quick else 3
    args.clients = [int(c) for c in str(args.clients).split(",") if c]
    args.servers = [s.strip() for s in args.servers.split(",") if s.strip()]
    unknown = set(args.servers) - set(SERVER_NAMES)
    if unknown or not args.servers:
        ap.error(f"--servers: unknown {sorted(unknown)}; choose from {','.join(SERVER_NAMES)}")
    if args.scan_rows < 100:
        ap.error("--scan-rows must be at least 100")
    return args


def make_server(name, args):
    if name == "tributary":
        return Tributary(serverproc.default_binary(), shlex.split(args.tributary_args))
    return {"mariadb": MariaDB, "postgres": Postgres}[name]()


def main():
    args = parse_args()
    header = machine_header()
    servers = []
    t_start = time.monotonic()
    try:
        for name in args.servers:
            s = make_server(name, args)
            s.start()
            servers.append(s)
        runs = []
        for rep in range(args.reps):
            # Each workload runs on every server back to back (a few seconds
            # apart, in an order rotated per rep and per workload), so that
            # the disk's slow phases fall on all servers alike.
            steps = {s.name: run_server(s, args, rep) for s in servers}
            rep_res = {s.name: {} for s in servers}
            for i in range(len(workload_names(args.clients))):
                k = (rep + i) % len(servers)
                for s in servers[k:] + servers[:k]:
                    try:
                        w, r = next(steps[s.name])
                    except Exception:
                        print(f"{s.name} failed in rep {rep + 1}; server log tail:\n"
                              f"{s.log_tail()}", file=sys.stderr)
                        raise
                    rep_res[s.name][w] = r
            for g in steps.values():
                g.close()
            for s in servers:
                print(f"rep {rep + 1}/{args.reps} {s.name}: "
                      + ", ".join(f"{w}={fmt_rate(r['rate'])}" for w, r in rep_res[s.name].items()),
                      file=sys.stderr, flush=True)
            runs.append({"rep": rep + 1, "results": rep_res})
    finally:
        stoppers = [threading.Thread(target=s.stop) for s in servers]
        for th in stoppers:
            th.start()
        for th in stoppers:
            th.join()

    first = runs[0]["results"][args.servers[0]]
    names = [(w, r["unit"]) for w, r in first.items()]
    medians, cpu_share, paired = {}, {}, {}
    for w, _ in names:
        for n in args.servers:
            rs = [run["results"][n][w] for run in runs]
            medians.setdefault(w, {})[n] = statistics.median(r["rate"] for r in rs)
            if "tributary" in args.servers and n != "tributary":
                # Each rep's ratio, of runs seconds apart: the disk's
                # drift between reps cancels out.
                paired.setdefault(w, {})[n] = statistics.median(
                    run["results"]["tributary"][w]["rate"] / run["results"][n][w]["rate"]
                    for run in runs)
            if "client_cpu_s" in rs[0]:
                cpu_share.setdefault(w, {})[n] = statistics.median(
                    r["client_cpu_s"] / r["seconds"] for r in rs)
    header["duration"] = f"{time.monotonic() - t_start:.0f} s"
    print_report(header, servers, medians, paired, cpu_share, names, args.reps)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"header": header,
                       "servers": {s.name: {"version": s.version, "settings": s.settings}
                                   for s in servers},
                       "args": vars(args),
                       "runs": runs, "median": medians, "paired_ratio": paired}, f, indent=1)


if __name__ == "__main__":
    main()
