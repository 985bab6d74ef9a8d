#!/usr/bin/env python3
"""The standing adversarial suite (issue 39, item 6): what an unprivileged
login (or a full disk) can do to a server, probed and measured.

    python3 scripts/adversarial.py                   # release build, full sizes
    python3 scripts/adversarial.py --bounded         # smaller shapes (CI: debug build)
    python3 scripts/adversarial.py --only crash,privilege --json out.json

It starts its own `tributary serve` (scripts/serverproc.py; $TRIBUTARY_BIN or
--binary) on a throwaway data directory, creates an account `adv` with no
grant at all beside root, and runs five groups of probes:

* crash    — recursive shapes at about 10x their limit (parentheses, NOT
             chains, UNION chains, nested subqueries and derived tables, CTE
             chains, JSON nesting, views over views, a long IN list): the
             answer must be an error (or a result) and the process alive.
* memory   — statements that would grow the server without bound (series
             cross joins, a huge series streamed, GROUP BY / ORDER BY / DISTINCT
             of millions, a PREPARE flood), on a server started with
             --statement-memory (512 MB): each must end with a result or a
             MySQL error while the server's resident memory stays below
             baseline + 1.5 x that budget + 64 MB (sizes are estimates; the
             allocator keeps slack), and return to within 10 % (16 MB at
             least) of its baseline afterwards.
* kill     — per long-running shape, KILL QUERY from root: the victim must get
             1317 within --kill-bound-ms. Shapes: table functions (joins,
             GROUP BY, ORDER BY, DISTINCT, REGEXP, streaming), index builds
             over a large table, and DDLs issued while the data file takes
             one large INSERT (--kill-shapes picks some by name).
* privilege — the no-grant account against other databases, LOCK TABLES, KILL
             of root's connection, SET GLOBAL, account statements, FLUSH.
* disk     — (root only: mounts a 64 MB tmpfs) a full disk: writes 1021,
             reads go on, writes work again once space returns.

Every probe prints one line; the summary is a Markdown table (the one in
docs/SECURITY.md comes from a full run). Exit status 1 if any probe failed.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serverproc  # noqa: E402

try:
    import pymysql
except ImportError:  # pragma: no cover - test-deps installs it
    sys.exit("pymysql is needed: pip install -r tests/python/requirements.txt")

MiB = 1 << 20


class Probe:
    """One probe's outcome."""

    def __init__(self, group, shape):
        self.group = group
        self.shape = shape
        self.outcome = ""
        self.ok = False
        self.detail = ""
        self.peak_mb = None
        self.kill_ms = None
        self.seconds = None

    def row(self):
        return {
            "group": self.group, "shape": self.shape, "outcome": self.outcome,
            "ok": self.ok, "detail": self.detail, "peak_mb": self.peak_mb,
            "kill_ms": self.kill_ms, "seconds": self.seconds,
        }


def fill_disk(path):
    """Write the file `path`/filler until its file system is full (whole
    MiBs, then pages for what a MiB did not fit into); returns its path.
    Also used by tests/python/test_disk_full.py."""
    filler = os.path.join(path, "filler")
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (MiB, 4096):
            chunk = b"\0" * size
            try:
                while True:
                    os.write(fd, chunk)
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def rss_kb(pid, field="VmRSS"):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class Sampler:
    """Samples the server's VmRSS every 10 ms while alive."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = 0
        self.stop = threading.Event()
        self.th = threading.Thread(target=self.run, daemon=True)

    def run(self):
        while not self.stop.is_set():
            kb = rss_kb(self.pid)
            if kb is not None:
                self.peak = max(self.peak, kb)
            self.stop.wait(0.01)

    def __enter__(self):
        self.th.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.th.join()


class Suite:
    def __init__(self, args):
        self.args = args
        self.results = []
        self.dir = tempfile.mkdtemp(prefix="tributary-adversarial-")
        self.log = os.path.join(self.dir, "server.log")
        extra = ["--statement-memory", f"{args.statement_memory_mb}MB",
                 *(args.server_arg or [])]
        self.proc, self.port = serverproc.start_server(
            args.binary, os.path.join(self.dir, "data"), extra, log_path=self.log)
        root = self.root()
        c = root.cursor()
        c.execute("CREATE DATABASE adv_db")
        c.execute("CREATE TABLE adv_db.t (a INT PRIMARY KEY, b VARCHAR(20))")
        c.execute("INSERT INTO adv_db.t VALUES (1, 'x'), (2, 'y')")
        c.execute("CREATE USER 'adv'@'%' IDENTIFIED BY 'adv'")
        root.close()

    # -- connections -------------------------------------------------------
    def root(self, db=None):
        return pymysql.connect(host="127.0.0.1", port=self.port, user="root",
                               password="", database=db, autocommit=True,
                               read_timeout=600)

    def adv(self, cursorclass=pymysql.cursors.Cursor):
        return pymysql.connect(host="127.0.0.1", port=self.port, user="adv",
                               password="adv", autocommit=True, read_timeout=600,
                               cursorclass=cursorclass)

    def alive(self):
        if self.proc.poll() is not None:
            return False
        try:
            c = self.root()
            cur = c.cursor()
            cur.execute("SELECT 1")
            ok = cur.fetchone() == (1,)
            c.close()
            return ok
        except pymysql.err.MySQLError:
            return False

    def record(self, p):
        self.results.append(p)
        mark = "ok  " if p.ok else "FAIL"
        extra = []
        if p.peak_mb is not None:
            extra.append(f"peak +{p.peak_mb} MB")
        if p.kill_ms is not None:
            extra.append(f"KILL {p.kill_ms} ms")
        if p.seconds is not None:
            extra.append(f"{p.seconds:.2f} s")
        print(f"[{mark}] {p.group:9} {p.shape:42} {p.outcome:28} {' '.join(extra)} {p.detail}",
              flush=True)
        if not self.alive():
            print("server is gone; stopping", flush=True)
            self.finish()
            sys.exit(1)

    # -- crash shapes -------------------------------------------------------
    def crash(self):
        n = 20_000
        shapes = [
            ("parentheses x%d" % n, "SELECT " + "(" * n + "1" + ")" * n),
            ("NOT chain x%d" % n, "SELECT " + "NOT " * n + "1"),
            ("unary minus x%d" % n, "SELECT " + "- " * n + "1"),
            ("UNION ALL chain x%d" % n, " UNION ALL ".join(["SELECT 1"] * n)),
            ("UNION chain x%d" % n, " UNION ".join(["SELECT 1"] * n)),
            ("INTERSECT chain x%d" % (n // 2), " INTERSECT ".join(["SELECT 1"] * (n // 2))),
            ("EXCEPT chain x%d" % (n // 2), " EXCEPT ".join(["SELECT 1"] * (n // 2))),
            ("scalar subqueries x%d" % (n // 2),
             "SELECT " + "(SELECT " * (n // 2) + "1" + ")" * (n // 2)),
            ("derived tables x%d" % (n // 2),
             "SELECT * FROM " + "(SELECT * FROM " * (n // 2) + "generate_series(1,2)"
             + "".join(f") d{i}" for i in range(n // 2))),
            ("IN subqueries x%d" % (n // 4),
             "SELECT 1 FROM generate_series(1,2) WHERE result IN "
             + "(SELECT result FROM generate_series(1,2) WHERE result IN " * (n // 4)
             + "(1)" + ")" * (n // 4)),
            ("CTE chain x%d" % (n // 4),
             "WITH c0 AS (SELECT 1 AS x)"
             + "".join(f", c{i} AS (SELECT x FROM c{i - 1})" for i in range(1, n // 4))
             + f" SELECT * FROM c{n // 4 - 1}"),
            ("function nesting x%d" % n, "SELECT " + "ABS(" * n + "1" + ")" * n),
            ("CASE nesting x%d" % (n // 2),
             "SELECT " + "CASE WHEN 1 THEN " * (n // 2) + "1" + " END" * (n // 2)),
            ("JSON depth x%d" % (n * 5),
             "SELECT JSON_VALID('" + "[" * (n * 5) + "]" * (n * 5) + "')"),
            ("JSON_ARRAY nesting x%d" % (n // 2),
             "SELECT " + "JSON_ARRAY(" * (n // 2) + "1" + ")" * (n // 2)),
            ("IN list of %d" % (n * 50),
             "SELECT 1 IN (" + ",".join(str(i) for i in range(n * 50)) + ")"),
            ("REGEXP backtracking bomb",
             "SELECT REGEXP_LIKE(REPEAT('a', 100000), '(a*)*b')"),
        ]
        for name, sql in shapes:
            self.one_statement("crash", name, sql, user=self.adv)
        self.views_over_views(200 if self.args.bounded else 1000)

    def one_statement(self, group, name, sql, user):
        p = Probe(group, name)
        t0 = time.monotonic()
        try:
            c = user()
            cur = c.cursor()
            cur.execute(sql)
            cur.fetchall()
            p.outcome = "result"
            c.close()
        except pymysql.err.MySQLError as e:
            p.outcome = f"error {e.args[0]}"
        p.seconds = time.monotonic() - t0
        p.ok = self.proc.poll() is None
        self.record(p)

    def views_over_views(self, n):
        root = self.root("adv_db")
        cur = root.cursor()
        cur.execute("CREATE VIEW v0 AS SELECT a FROM t")
        created = 1
        err = None
        for i in range(1, n):
            try:
                cur.execute(f"CREATE VIEW v{i} AS SELECT a FROM v{i - 1}")
                created += 1
            except pymysql.err.MySQLError as e:
                err = e.args[0]
                break
        root.close()
        name = f"views over views x{n}"
        if err is not None:
            p = Probe("crash", name + " (create)")
            p.outcome = f"error {err} at {created}"
            p.ok = self.proc.poll() is None
            self.record(p)
        self.one_statement("crash", name, f"SELECT COUNT(*) FROM adv_db.v{created - 1}",
                           user=self.root)

    # -- memory shapes ------------------------------------------------------
    def memory_shapes(self):
        big = 2_000_000 if self.args.bounded else 10_000_000
        groups = 1_000_000 if self.args.bounded else 8_000_000
        return [
            ("series cross join count(*)",
             f"SELECT COUNT(*) FROM generate_series(1,{big}) a, generate_series(1,{big}) b"),
            (f"series of {big} streamed",
             f"SELECT * FROM generate_series(1,{big})"),
            (f"GROUP BY of {groups} groups",
             f"SELECT result, COUNT(*) FROM generate_series(1,{groups}) GROUP BY result"),
            (f"ORDER BY of {big} rows",
             f"SELECT result FROM generate_series(1,{big}) ORDER BY result DESC LIMIT 1 OFFSET 5"),
            (f"DISTINCT of {groups}",
             f"SELECT COUNT(DISTINCT result) FROM generate_series(1,{groups})"),
            ("self cross join of a series, sorted",
             f"SELECT a.result FROM generate_series(1,{groups // 100}) a, "
             f"generate_series(1,{groups // 100}) b ORDER BY a.result + b.result LIMIT 1"),
        ]

    def memory(self):
        margin_mb = self.args.memory_margin_mb
        for name, sql in self.memory_shapes():
            p = Probe("memory", name)
            base = rss_kb(self.proc.pid) or 0
            t0 = time.monotonic()
            with Sampler(self.proc.pid) as s:
                try:
                    c = self.adv(pymysql.cursors.SSCursor)
                    cur = c.cursor()
                    cur.execute(f"SET SESSION max_execution_time = {self.args.statement_seconds * 1000}")
                    cur.execute(sql)
                    n = 0
                    for _ in cur:
                        n += 1
                    p.outcome = f"result ({n} rows)"
                    c.close()
                except pymysql.err.MySQLError as e:
                    p.outcome = f"error {e.args[0]}"
            p.seconds = time.monotonic() - t0
            p.peak_mb = max(0, (s.peak - base) // 1024)
            after = self.settle(base)
            p.detail = f"after +{max(0, (after - base) // 1024)} MB"
            p.ok = (self.proc.poll() is None and p.peak_mb <= margin_mb
                    and after - base <= max(base // 10, 64 * 1024))
            self.record(p)
        self.prepare_flood()

    def settle(self, base):
        """Resident memory once it is back near `base` (a failed
        statement's rows are freed after its error is sent), or after 10 s."""
        deadline = time.monotonic() + 10
        while True:
            now = rss_kb(self.proc.pid) or 0
            if now <= base + max(base // 10, 16 * 1024) or time.monotonic() >= deadline:
                return now
            time.sleep(0.1)

    def prepare_flood(self):
        conns = 8
        per = 3_000 if self.args.bounded else 20_000
        p = Probe("memory", f"PREPARE flood {conns}x{per}")
        base = rss_kb(self.proc.pid) or 0
        codes = {}
        lock = threading.Lock()

        def flood(i):
            c = self.adv()
            cur = c.cursor()
            long_sql = "SELECT " + ", ".join(f"{j} + {i}" for j in range(200))
            for k in range(per):
                try:
                    cur.execute(f"PREPARE s{k} FROM '{long_sql}'")
                except pymysql.err.MySQLError as e:
                    with lock:
                        codes[e.args[0]] = codes.get(e.args[0], 0) + 1
                    break
            c.close()

        t0 = time.monotonic()
        with Sampler(self.proc.pid) as s:
            ths = [threading.Thread(target=flood, args=(i,)) for i in range(conns)]
            for t in ths:
                t.start()
            for t in ths:
                t.join()
        p.seconds = time.monotonic() - t0
        p.peak_mb = max(0, (s.peak - base) // 1024)
        p.outcome = ", ".join(f"error {k} x{v}" for k, v in sorted(codes.items())) or "all prepared"
        after = self.settle(base)
        p.detail = f"after +{max(0, (after - base) // 1024)} MB"
        p.ok = self.proc.poll() is None and p.peak_mb <= self.args.memory_margin_mb
        self.record(p)

    # -- KILL latency -------------------------------------------------------
    def kill(self):
        big = 10_000_000
        shapes = [
            ("SLEEP(60)", "SELECT SLEEP(60)"),
            ("series cross join", f"SELECT COUNT(*) FROM generate_series(1,{big}) a, "
                                  f"generate_series(1,{big}) b"),
            ("series streamed", f"SELECT * FROM generate_series(1,{big})"),
            ("GROUP BY of a series", f"SELECT result % 1000003, COUNT(*) FROM "
                                     f"generate_series(1,{big}) GROUP BY result % 1000003"),
            ("ORDER BY of a series", f"SELECT result FROM generate_series(1,{big}) "
                                     f"ORDER BY result DESC LIMIT 1"),
            ("DISTINCT of a series", f"SELECT COUNT(*) FROM (SELECT DISTINCT result % 5000011 "
                                     f"FROM generate_series(1,{big})) d"),
            ("nested loop join", f"SELECT COUNT(*) FROM generate_series(1,100000) a "
                                 f"JOIN generate_series(1,100000) b ON a.result + b.result = 3"),
            ("REGEXP over a series", f"SELECT COUNT(*) FROM generate_series(1,{big}) "
                                     f"WHERE CAST(result AS CHAR) REGEXP '^1(2|3)+$'"),
        ]
        for name, sql in shapes:
            if self.wanted(name):
                self.kill_one(name, sql)
        # DDL: an index build over a table of its own (root's: the no-grant
        # account may not create one).
        rows = 200_000 if self.args.bounded else 1_000_000
        ddl = [f"CREATE INDEX over {rows} rows", f"CREATE FULLTEXT INDEX over {rows} rows"]
        behind = [f"CREATE INDEX behind a {rows}-row INSERT",
                  f"CREATE TABLE behind a {rows}-row INSERT"]
        if not any(self.wanted(n) for n in ddl + behind):
            return
        root = self.root("adv_db")
        cur = root.cursor()
        cur.execute("CREATE TABLE big (id INT PRIMARY KEY, v VARCHAR(40), body TEXT)")
        # In transactions of 50,000 rows: the DDLs below are to meet no
        # transaction still being applied to the data file.
        step = 50_000
        for lo in range(1, rows + 1, step):
            cur.execute(f"INSERT INTO big SELECT result, CONCAT('v', result % 977), "
                        f"CONCAT('word', result % 5003, ' other', result % 7) "
                        f"FROM generate_series({lo},{lo + step - 1})")
        root.close()
        as_root = lambda cursorclass: self.root()  # noqa: E731
        if self.wanted(ddl[0]):
            self.kill_one(ddl[0], "CREATE INDEX iv ON adv_db.big (v)", user=as_root)
        if self.wanted(ddl[1]):
            self.kill_one(ddl[1], "CREATE FULLTEXT INDEX ft ON adv_db.big (body)", user=as_root)
        # A DDL right behind one large INSERT: the data file takes the
        # INSERT's transaction in one write (1,000,000 rows: over a second)
        # while the DDL allocates its ids durably; KILL must not wait for it.
        for i, (name, sql) in enumerate(zip(behind, ["CREATE INDEX iw ON adv_db.big (v, id)",
                                                     "CREATE TABLE adv_db.fresh (a INT)"])):
            if not self.wanted(name):
                continue
            root = self.root("adv_db")
            cur = root.cursor()
            cur.execute(f"CREATE TABLE filler{i} (id INT PRIMARY KEY, v VARCHAR(40))")
            cur.execute(f"INSERT INTO filler{i} SELECT result, CONCAT('v', result) "
                        f"FROM generate_series(1,{rows})")
            root.close()
            self.kill_one(name, sql, user=as_root, after_s=0.05, may_finish=True)

    def wanted(self, shape):
        """Whether --kill-shapes selects `shape` (all when not given)."""
        pick = self.args.kill_shapes
        return not pick or any(w.strip().lower() in shape.lower() for w in pick.split(","))

    def kill_one(self, name, sql, user=None, after_s=None, may_finish=False):
        """KILL QUERY `sql` after it ran `after_s` (--kill-after-s); it must
        answer 1317 within --kill-bound-ms. With `may_finish`, a statement
        that ended before the KILL was sent passes too (a DDL that did not
        have to wait)."""
        p = Probe("kill", name)
        victim = (user or self.adv)(pymysql.cursors.SSCursor)
        vid = victim.thread_id()
        out = {}

        def run():
            try:
                cur = victim.cursor()
                cur.execute(sql)
                for _ in cur:
                    pass
                out["result"] = True
            except pymysql.err.MySQLError as e:
                out["error"] = e.args[0]
            out["end"] = time.monotonic()

        th = threading.Thread(target=run)
        th.start()
        root = self.root()
        cur = root.cursor()
        # Running for a while first (its time goes where the shape puts it).
        deadline = time.monotonic() + 30
        started = None
        while time.monotonic() < deadline and "end" not in out:
            cur.execute("SELECT ID, TIME FROM information_schema.PROCESSLIST WHERE ID = %s",
                        (vid,))
            row = cur.fetchone()
            if row is not None and started is None:
                started = time.monotonic()
            wait = self.args.kill_after_s if after_s is None else after_s
            if started is not None and time.monotonic() - started >= wait:
                break
            time.sleep(0.02 if after_s is None else 0.005)
        t_kill = time.monotonic()
        cur.execute(f"KILL QUERY {vid}")
        th.join(timeout=60)
        root.close()
        if th.is_alive():
            p.outcome = "still running 60 s after KILL"
            p.ok = False
        else:
            p.kill_ms = int((out["end"] - t_kill) * 1000)
            p.outcome = f"error {out['error']}" if "error" in out else "finished before KILL"
            p.ok = out.get("error") == 1317 and p.kill_ms <= self.args.kill_bound_ms
            if "error" not in out and out["end"] < t_kill:
                p.kill_ms = None
                p.outcome = "finished before KILL was sent"
                p.ok = may_finish
            elif "error" not in out:
                p.outcome = "finished after KILL"
        try:
            victim.close()
        except pymysql.err.MySQLError:
            pass
        self.record(p)

    # -- privileges -----------------------------------------------------------
    def privilege(self):
        root = self.root()
        rcur = root.cursor()
        rid = root.thread_id()
        checks = [
            ("SELECT another database's table", "SELECT * FROM adv_db.t", {1142, 1044}),
            ("INSERT into another database", "INSERT INTO adv_db.t VALUES (9, 'z')", {1142, 1044}),
            ("LOCK TABLES another database's table", "LOCK TABLES adv_db.t WRITE", {1142, 1044}),
            ("KILL root's connection", f"KILL {rid}", {1095}),
            ("KILL QUERY of root", f"KILL QUERY {rid}", {1095}),
            ("SET GLOBAL", "SET GLOBAL max_connections = 1", {1227}),
            ("CREATE USER", "CREATE USER 'x'@'%'", {1227}),
            ("GRANT to itself", "GRANT ALL ON *.* TO 'adv'@'%'", {1044, 1045, 1227, 1142}),
            ("DROP DATABASE of another", "DROP DATABASE adv_db", {1044}),
            ("CREATE DATABASE", "CREATE DATABASE adv_new", {1044}),
            ("FLUSH", "FLUSH PRIVILEGES", {1227}),
            # Not a statement Tributary has (1064) or refused (1227).
            ("SHUTDOWN", "SHUTDOWN", {1227, 1064}),
            ("read mysql.user", "SELECT * FROM mysql.user", {1142, 1044}),
            ("fault points", "SELECT add_fault_point('fj/x', ':::', 'echo', 0, '', 0)",
             {1227, 1142, 1044, 1305}),
        ]
        c = self.adv()
        cur = c.cursor()
        for name, sql, codes in checks:
            p = Probe("privilege", name)
            try:
                cur.execute(sql)
                cur.fetchall()
                p.outcome = "allowed"
            except pymysql.err.MySQLError as e:
                p.outcome = f"error {e.args[0]}"
                p.ok = e.args[0] in codes
            p.detail = "expected " + "/".join(str(x) for x in sorted(codes))
            self.record(p)
        # With SELECT on the table but no LOCK TABLES privilege, the account
        # must not block writers (issue 39: at 64bc9a0 it could, until its
        # session ended).
        rcur.execute("GRANT SELECT ON adv_db.t TO 'adv'@'%'")
        for name, sql in [("LOCK TABLES WRITE with SELECT only", "LOCK TABLES adv_db.t WRITE"),
                          ("LOCK TABLES READ with SELECT only", "LOCK TABLES adv_db.t READ"),
                          ("FOR UPDATE with SELECT only",
                           "SELECT * FROM adv_db.t FOR UPDATE")]:
            p = Probe("privilege", name)
            try:
                cur.execute(sql)
                cur.fetchall()
                p.outcome = "allowed"
                cur.execute("UNLOCK TABLES")
            except pymysql.err.MySQLError as e:
                p.outcome = f"error {e.args[0]}"
                p.ok = e.args[0] in {1044, 1142}
            p.detail = "expected 1044/1142"
            self.record(p)
        rcur.execute("REVOKE SELECT ON adv_db.t FROM 'adv'@'%'")
        # SHOW PROCESSLIST shows only its own sessions without PROCESS.
        p = Probe("privilege", "SHOW PROCESSLIST of others")
        rcur.execute("SELECT 1")
        cur.execute("SHOW FULL PROCESSLIST")
        users = {r[1] for r in cur.fetchall()}
        p.outcome = "sees " + ",".join(sorted(users))
        p.ok = users <= {"adv"}
        self.record(p)
        c.close()
        root.close()

    # -- disk full ------------------------------------------------------------
    def disk(self):
        p = Probe("disk", "full disk: writes 1021, reads, recovery")
        mnt = tempfile.mkdtemp(prefix="tributary-adv-tmpfs-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", mnt],
                           capture_output=True)
        if r.returncode != 0:
            os.rmdir(mnt)
            p.outcome = "skipped (cannot mount a tmpfs)"
            p.ok = True
            self.record(p)
            return
        proc = None
        try:
            proc, port = serverproc.start_server(
                self.args.binary, os.path.join(mnt, "data"), ["--commit-log-size", "4MB"],
                log_path=os.path.join(self.dir, "disk.log"))
            c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                autocommit=True)
            cur = c.cursor()
            cur.execute("CREATE DATABASE d")
            cur.execute("CREATE TABLE d.t (id INT PRIMARY KEY, body TEXT)")
            cur.execute("CREATE FULLTEXT INDEX ft ON d.t(body) ASYNC")
            filler = fill_disk(mnt)
            code, n = None, 0
            for i in range(20000):
                try:
                    cur.execute("INSERT INTO d.t VALUES (%s, %s)", (i, "word " + "x" * 2000))
                    n += 1
                except pymysql.err.MySQLError as e:
                    code = e.args[0]
                    break
            cur.execute("SELECT COUNT(*) FROM d.t WHERE MATCH(body) AGAINST('word')")
            seen = cur.fetchone()[0]
            os.remove(filler)
            deadline = time.monotonic() + 30
            recovered = False
            while time.monotonic() < deadline and not recovered:
                try:
                    cur.execute("INSERT INTO d.t VALUES (-1, 'after')")
                    recovered = True
                except pymysql.err.MySQLError:
                    time.sleep(0.1)
            c.close()
            p.outcome = f"error {code} after {n} rows"
            p.detail = f"MATCH saw {seen}; recovered={recovered}"
            p.ok = code == 1021 and seen == n and recovered and proc.poll() is None
        finally:
            if proc is not None:
                serverproc.stop_server(proc)
            subprocess.run(["umount", "-l", mnt])
            shutil.rmtree(mnt, ignore_errors=True)
        self.record(p)

    # -- end ------------------------------------------------------------------
    def finish(self):
        code = serverproc.stop_server(self.proc) if self.proc.poll() is None else self.proc.returncode
        panicked = False
        with open(self.log, errors="replace") as f:
            panicked = "panicked" in f.read()
        failed = any(not p.ok for p in self.results) or panicked or code != 0
        if failed or self.args.keep_dir:
            print(f"server data directory and log kept in {self.dir}", flush=True)
        else:
            # Each run's directory holds hundreds of MB (the disk probes'
            # fill file, the server's data): never leave it behind.
            shutil.rmtree(self.dir, ignore_errors=True)
        return code, panicked


def markdown(results, commit):
    lines = [f"Run at `{commit}`:", "",
             "| group | shape | outcome | peak RSS | KILL latency | pass |",
             "|---|---|---|---|---|---|"]
    for r in results:
        peak = f"+{r['peak_mb']} MB" if r["peak_mb"] is not None else ""
        kill = f"{r['kill_ms']} ms" if r["kill_ms"] is not None else ""
        lines.append(f"| {r['group']} | {r['shape']} | {r['outcome']} | {peak} | {kill} | "
                     f"{'yes' if r['ok'] else '**no**'} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--binary", default=serverproc.default_binary())
    ap.add_argument("--bounded", action="store_true", help="smaller shapes (CI)")
    ap.add_argument("--only", default="crash,memory,kill,privilege,disk")
    ap.add_argument("--kill-bound-ms", type=int, default=100)
    ap.add_argument("--kill-after-s", type=float, default=1.0,
                    help="how long a statement runs before it is killed")
    ap.add_argument("--kill-shapes", default="",
                    help="comma-separated words: only kill shapes whose name has one")
    ap.add_argument("--statement-memory-mb", type=int, default=512,
                    help="the server's --statement-memory (one statement's budget)")
    ap.add_argument("--memory-margin-mb", type=int, default=None,
                    help="most a statement may grow the server's RSS "
                         "(default: 1.5 x the statement budget + 64 MB: estimates and "
                         "allocator slack)")
    ap.add_argument("--statement-seconds", type=int, default=30,
                    help="max_execution_time of the memory probes")
    ap.add_argument("--server-arg", action="append", help="extra `serve` argument")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--keep-dir", action="store_true",
                    help="keep the server's data directory and log (kept anyway when a probe fails)")
    args = ap.parse_args()
    if args.memory_margin_mb is None:
        args.memory_margin_mb = args.statement_memory_mb * 3 // 2 + 64
    if not os.path.exists(args.binary):
        sys.exit(f"no binary at {args.binary} (build it or set TRIBUTARY_BIN)")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.strip()
    print(f"adversarial suite: {args.binary} at {commit}, "
          f"{'bounded' if args.bounded else 'full'} sizes, {os.cpu_count()} cores", flush=True)
    suite = Suite(args)
    try:
        for group in args.only.split(","):
            getattr(suite, group.strip())()
    finally:
        code, panicked = suite.finish()
    results = [p.row() for p in suite.results]
    failed = [r for r in results if not r["ok"]]
    print()
    print(markdown(results, commit))
    print()
    print(f"{len(results)} probes, {len(failed)} failed; server exit {code}, "
          f"{'a panic in its log' if panicked else 'no panic in its log'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"commit": commit, "results": results, "exit": code,
                       "panicked": panicked}, f, indent=1)
    sys.exit(1 if failed or panicked or code != 0 else 0)


if __name__ == "__main__":
    main()
