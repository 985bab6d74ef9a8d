#!/usr/bin/env python3
"""Analytical query benchmark: Tributary (through its MySQL server, PyMySQL)
against SQLite (Python's sqlite3) on the same TPC-H-style data, generated
here deterministically at scale factor --sf.

What it does, in one run:
  1. starts `tributary serve` (scripts/serverproc.py: temporary data
     directory, ephemeral loopback port, SIGTERM at the end) and opens
     SQLite (in memory by default, `--sqlite file` for a temporary file in
     WAL mode with synchronous=NORMAL);
  2. generates region, nation, supplier, part, customer, orders, lineitem
     (sf 1 = 10k suppliers, 200k parts, 150k customers, 1.5M orders, ~6M
     lineitems; linear in sf) plus a `tree` table of 1,000,000 × sf
     edges (indexed on the parent) for the recursive CTE, and loads the same multi-row INSERT
     statements (--batch rows each, --txn-statements statements per
     transaction) into both engines, timing each engine separately
     (generation time is not counted);
  3. for every query (TPC-H Q1, Q3, Q5, Q10 shapes, a LIKE full scan, a
     one-table GROUP BY, two window-function queries — top-3 per group and
     a running total — and a recursive CTE walking the tree): checks that both engines return the same rows
     (numbers compared after rounding to 2 places, see `same_rows`), then
     times --runs runs on each and reports the median; then 2,000
     primary-key point SELECTs on orders with random keys (p50 and q/s).

Prints the machine and command, then a table: query, Tributary s, SQLite s,
ratio = SQLite s / Tributary s (>= 1: Tributary is faster), rows. Exits 1
if any query failed on an engine or the answers differ (after running all
of them). `--json out.json` writes everything, including the SQL.

Run (release build; PyMySQL from the project venv):
  cargo build --release --bin tributary
  $CARGO_TARGET_DIR/venv/bin/python scripts/bench_query.py --sf 0.1
Binary: --bin, else $TRIBUTARY_BIN, else
/var/tmp/tributary-target/release/tributary.
"""
import argparse
import datetime
import decimal
import json
import os
import platform
import random
import shlex
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import timed  # noqa: E402
from serverproc import start_server, stop_server  # noqa: E402

DEFAULT_BIN = os.environ.get("TRIBUTARY_BIN", "/var/tmp/tributary-target/release/tributary")

# --------------------------------------------------------------------------
# Schema. Single-column keys are BIGINT in Tributary; in SQLite they are
# declared INTEGER PRIMARY KEY (the rowid, SQLite's natural primary key).
# DECIMAL columns have NUMERIC affinity in SQLite (stored as REAL/INTEGER);
# DATE columns hold 'YYYY-MM-DD' text there, which orders like the date.
# --------------------------------------------------------------------------
TABLES = [
    ("region", [("r_regionkey", "KEY"), ("r_name", "VARCHAR(25)"), ("r_comment", "VARCHAR(152)")],
     ["r_regionkey"]),
    ("nation", [("n_nationkey", "KEY"), ("n_name", "VARCHAR(25)"), ("n_regionkey", "INT"),
                ("n_comment", "VARCHAR(152)")], ["n_nationkey"]),
    ("supplier", [("s_suppkey", "KEY"), ("s_name", "VARCHAR(25)"), ("s_address", "VARCHAR(40)"),
                  ("s_nationkey", "INT"), ("s_phone", "VARCHAR(15)"), ("s_acctbal", "DECIMAL(12,2)"),
                  ("s_comment", "VARCHAR(101)")], ["s_suppkey"]),
    ("part", [("p_partkey", "KEY"), ("p_name", "VARCHAR(55)"), ("p_mfgr", "VARCHAR(25)"),
              ("p_brand", "VARCHAR(10)"), ("p_type", "VARCHAR(25)"), ("p_size", "INT"),
              ("p_container", "VARCHAR(10)"), ("p_retailprice", "DECIMAL(12,2)"),
              ("p_comment", "VARCHAR(23)")], ["p_partkey"]),
    ("customer", [("c_custkey", "KEY"), ("c_name", "VARCHAR(25)"), ("c_address", "VARCHAR(40)"),
                  ("c_nationkey", "INT"), ("c_phone", "VARCHAR(15)"), ("c_acctbal", "DECIMAL(12,2)"),
                  ("c_mktsegment", "VARCHAR(10)"), ("c_comment", "VARCHAR(117)")], ["c_custkey"]),
    ("orders", [("o_orderkey", "KEY"), ("o_custkey", "BIGINT"), ("o_orderstatus", "VARCHAR(1)"),
                ("o_totalprice", "DECIMAL(12,2)"), ("o_orderdate", "DATE"),
                ("o_orderpriority", "VARCHAR(15)"), ("o_clerk", "VARCHAR(15)"),
                ("o_shippriority", "INT"), ("o_comment", "VARCHAR(79)")], ["o_orderkey"]),
    ("lineitem", [("l_orderkey", "BIGINT"), ("l_partkey", "BIGINT"), ("l_suppkey", "BIGINT"),
                  ("l_linenumber", "INT"), ("l_quantity", "DECIMAL(12,2)"),
                  ("l_extendedprice", "DECIMAL(12,2)"), ("l_discount", "DECIMAL(12,2)"),
                  ("l_tax", "DECIMAL(12,2)"), ("l_returnflag", "VARCHAR(1)"),
                  ("l_linestatus", "VARCHAR(1)"), ("l_shipdate", "DATE"), ("l_commitdate", "DATE"),
                  ("l_receiptdate", "DATE"), ("l_shipinstruct", "VARCHAR(25)"),
                  ("l_shipmode", "VARCHAR(10)"), ("l_comment", "VARCHAR(44)")],
     ["l_orderkey", "l_linenumber"]),
    # Not TPC-H: a tree of 1,000,000 × sf edges (node k's parent is a random
    # earlier node, so the depth is about ln n) for the recursive-CTE query.
    ("tree", [("t_id", "KEY"), ("t_parent", "BIGINT")], ["t_id"]),
]

# Secondary indexes both engines get after their tables are created.
INDEXES = ["CREATE INDEX tree_parent ON tree (t_parent)"]


def ddl(table, cols, pk, engine):
    parts = []
    for name, ty in cols:
        if ty == "KEY":
            ty = "INTEGER PRIMARY KEY" if engine == "sqlite" else "BIGINT NOT NULL"
        parts.append(f"{name} {ty}")
    if not (engine == "sqlite" and len(pk) == 1):
        parts.append(f"PRIMARY KEY ({', '.join(pk)})")
    return f"CREATE TABLE {table} ({', '.join(parts)})"


# --------------------------------------------------------------------------
# Data generation (dbgen-like distributions, not dbgen itself).
# --------------------------------------------------------------------------
REGIONS = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"]
NATIONS = [("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4),
           ("ETHIOPIA", 0), ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2),
           ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2), ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0),
           ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2), ("ROMANIA", 3), ("SAUDI ARABIA", 4),
           ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3), ("UNITED STATES", 1)]
SEGMENTS = ["AUTOMOBILE", "BUILDING", "FURNITURE", "HOUSEHOLD", "MACHINERY"]
PRIORITIES = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"]
INSTRUCTS = ["DELIVER IN PERSON", "COLLECT COD", "NONE", "TAKE BACK RETURN"]
MODES = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"]
CONTAINERS = [a + " " + b for a in ("SM", "LG", "MED", "JUMBO", "WRAP")
              for b in ("CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM")]
TYPES = [a + " " + b + " " + c for a in ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
         for b in ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
         for c in ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER")]
COLORS = ["almond", "antique", "aquamarine", "azure", "beige", "bisque", "black", "blanched",
          "blue", "blush", "brown", "burlywood", "burnished", "chartreuse", "chiffon", "chocolate",
          "coral", "cornflower", "cornsilk", "cream", "cyan", "dark", "deep", "dim", "dodger"]
# Lower case only: LIKE is case-insensitive in both engines' defaults anyway.
WORDS = ["furiously", "quickly", "carefully", "blithely", "slyly", "final", "regular", "ironic",
         "express", "pending", "bold", "even", "special", "unusual", "silent", "deposits",
         "requests", "accounts", "packages", "instructions", "theodolites", "foxes", "pinto",
         "beans", "ideas", "dependencies", "platelets", "asymptotes", "courts", "dolphins",
         "sleep", "wake", "are", "haggle", "nag", "use", "boost", "affix", "detect", "integrate",
         "among", "above", "after", "across", "against", "along", "about", "the", "to", "of"]
ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"

EPOCH = datetime.date(1992, 1, 1)
ORDER_DAYS = (datetime.date(1998, 8, 2) - EPOCH).days  # last order date: 1998-08-02
CURRENT = datetime.date(1995, 6, 17)


def money(cents):
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return f"{sign}{cents // 100}.{cents % 100:02d}"


def q(s):
    return "'" + s.replace("'", "''") + "'"


def text(rnd, lo, hi):
    """Random lower-case words, total length in [lo, hi]."""
    target = rnd.randint(lo, hi)
    out = rnd.choice(WORDS)
    while len(out) < target:
        out += " " + rnd.choice(WORDS)
    return out[:target].rstrip()


def addr(rnd):
    return "".join(rnd.choice(ALNUM) for _ in range(rnd.randint(10, 40)))


def phone(rnd, nation):
    return f"{nation + 10}-{rnd.randint(100, 999)}-{rnd.randint(100, 999)}-{rnd.randint(1000, 9999)}"


def retail_cents(partkey):
    return 90000 + (partkey // 10) % 20001 + 100 * (partkey % 1000)


def counts(sf):
    return {
        "supplier": max(1, round(10_000 * sf)),
        "part": max(1, round(200_000 * sf)),
        "customer": max(1, round(150_000 * sf)),
        "orders": max(1, round(1_500_000 * sf)),
        "tree": max(2, round(1_000_000 * sf)),
    }


def order_key(i):
    """dbgen's sparse order keys: 8 used out of every 32."""
    return (i // 8) * 32 + i % 8 + 1


def generate(sf, seed):
    """Yields (table, value-tuple SQL text) in load order; lineitem rows
    come right after their order row's batch is decided (orders and
    lineitems are generated together and yielded per table by the caller)."""
    n = counts(sf)
    rnd = random.Random(seed)
    for i, name in enumerate(REGIONS):
        yield "region", f"({i}, {q(name)}, {q(text(rnd, 31, 115))})"
    for i, (name, region) in enumerate(NATIONS):
        yield "nation", f"({i}, {q(name)}, {region}, {q(text(rnd, 31, 114))})"
    for k in range(1, n["supplier"] + 1):
        nat = rnd.randrange(25)
        yield "supplier", (f"({k}, {q(f'Supplier#{k:09d}')}, {q(addr(rnd))}, {nat}, "
                           f"{q(phone(rnd, nat))}, {money(rnd.randint(-99999, 999999))}, "
                           f"{q(text(rnd, 25, 100))})")
    for k in range(1, n["part"] + 1):
        m = rnd.randint(1, 5)
        name = " ".join(rnd.sample(COLORS, 5))
        yield "part", (f"({k}, {q(name)}, {q(f'Manufacturer#{m}')}, "
                       f"{q(f'Brand#{m}{rnd.randint(1, 5)}')}, {q(rnd.choice(TYPES))}, "
                       f"{rnd.randint(1, 50)}, {q(rnd.choice(CONTAINERS))}, "
                       f"{money(retail_cents(k))}, {q(text(rnd, 5, 22))})")
    for k in range(1, n["customer"] + 1):
        nat = rnd.randrange(25)
        yield "customer", (f"({k}, {q(f'Customer#{k:09d}')}, {q(addr(rnd))}, {nat}, "
                           f"{q(phone(rnd, nat))}, {money(rnd.randint(-99999, 999999))}, "
                           f"{q(rnd.choice(SEGMENTS))}, {q(text(rnd, 29, 116))})")
    ncust, nsupp, npart = n["customer"], n["supplier"], n["part"]
    clerks = max(1, round(1000 * sf))
    for i in range(n["orders"]):
        ok = order_key(i)
        cust = rnd.randint(1, ncust)
        if ncust >= 3:
            while cust % 3 == 0:  # dbgen: a third of the customers have no orders
                cust = rnd.randint(1, ncust)
        odate = EPOCH + datetime.timedelta(days=rnd.randint(0, ORDER_DAYS))
        total = 0
        statuses = set()
        lines = []
        for ln in range(1, rnd.randint(1, 7) + 1):
            pk = rnd.randint(1, npart)
            sk = rnd.randint(1, nsupp)
            qty = rnd.randint(1, 50)
            ext = qty * retail_cents(pk)
            disc = rnd.randint(0, 10)
            tax = rnd.randint(0, 8)
            ship = odate + datetime.timedelta(days=rnd.randint(1, 121))
            commit = odate + datetime.timedelta(days=rnd.randint(30, 90))
            receipt = ship + datetime.timedelta(days=rnd.randint(1, 30))
            rflag = rnd.choice("RA") if receipt <= CURRENT else "N"
            lstatus = "O" if ship > CURRENT else "F"
            statuses.add(lstatus)
            total += (ext * (100 + tax) * (100 - disc) + 5000) // 10000
            lines.append(f"({ok}, {pk}, {sk}, {ln}, {qty}.00, {money(ext)}, {money(disc)}, "
                         f"{money(tax)}, '{rflag}', '{lstatus}', '{ship}', '{commit}', "
                         f"'{receipt}', {q(rnd.choice(INSTRUCTS))}, {q(rnd.choice(MODES))}, "
                         f"{q(text(rnd, 10, 43))})")
        ostatus = "F" if statuses == {"F"} else "O" if statuses == {"O"} else "P"
        yield "orders", (f"({ok}, {cust}, '{ostatus}', {money(total)}, '{odate}', "
                         f"{q(rnd.choice(PRIORITIES))}, "
                         f"{q(f'Clerk#{rnd.randint(1, clerks):09d}')}, 0, "
                         f"{q(text(rnd, 19, 78))})")
        for line in lines:
            yield "lineitem", line
    # The tree from its own generator, so that the TPC-H rows above stay what
    # they were before it existed.
    trnd = random.Random(seed + 1)
    yield "tree", "(1, 0)"
    for k in range(2, n["tree"] + 1):
        yield "tree", f"({k}, {trnd.randint(1, k - 1)})"


# --------------------------------------------------------------------------
# Queries. Dates are literals (TPC-H's `DATE 'x' - INTERVAL n DAY` computed
# here); ORDER BY has tie-breakers so that a LIMIT cuts the same rows.
# --------------------------------------------------------------------------
D = datetime.date
Q1_DATE = D(1998, 12, 1) - datetime.timedelta(days=90)  # 1998-09-02

QUERIES = [
    ("Q1 pricing summary", f"""
SELECT l_returnflag, l_linestatus,
       SUM(l_quantity) AS sum_qty,
       SUM(l_extendedprice) AS sum_base_price,
       SUM(l_extendedprice * (1 - l_discount)) AS sum_disc_price,
       SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge,
       AVG(l_quantity) AS avg_qty,
       AVG(l_extendedprice) AS avg_price,
       AVG(l_discount) AS avg_disc,
       COUNT(*) AS count_order
FROM lineitem
WHERE l_shipdate <= '{Q1_DATE}'
GROUP BY l_returnflag, l_linestatus
ORDER BY l_returnflag, l_linestatus"""),
    ("Q3 shipping priority", """
SELECT l_orderkey, SUM(l_extendedprice * (1 - l_discount)) AS revenue,
       o_orderdate, o_shippriority
FROM customer
JOIN orders ON c_custkey = o_custkey
JOIN lineitem ON l_orderkey = o_orderkey
WHERE c_mktsegment = 'BUILDING'
  AND o_orderdate < '1995-03-15'
  AND l_shipdate > '1995-03-15'
GROUP BY l_orderkey, o_orderdate, o_shippriority
ORDER BY revenue DESC, o_orderdate, l_orderkey
LIMIT 10"""),
    ("Q5 local supplier volume", """
SELECT n_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue
FROM customer, orders, lineitem, supplier, nation, region
WHERE c_custkey = o_custkey
  AND l_orderkey = o_orderkey
  AND l_suppkey = s_suppkey
  AND c_nationkey = s_nationkey
  AND s_nationkey = n_nationkey
  AND n_regionkey = r_regionkey
  AND r_name = 'ASIA'
  AND o_orderdate >= '1994-01-01'
  AND o_orderdate < '1995-01-01'
GROUP BY n_name
ORDER BY revenue DESC, n_name"""),
    ("Q10 returned items", """
SELECT c_custkey, c_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue,
       c_acctbal, n_name, c_address, c_phone, c_comment
FROM customer
JOIN orders ON c_custkey = o_custkey
JOIN lineitem ON l_orderkey = o_orderkey
JOIN nation ON c_nationkey = n_nationkey
WHERE o_orderdate >= '1993-10-01'
  AND o_orderdate < '1994-01-01'
  AND l_returnflag = 'R'
GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment
ORDER BY revenue DESC, c_custkey
LIMIT 20"""),
    ("scan LIKE '%special%'", """
SELECT COUNT(*) FROM lineitem WHERE l_comment LIKE '%special%'"""),
    ("GROUP BY l_shipmode", """
SELECT l_shipmode, COUNT(*) AS n, SUM(l_quantity) AS qty, AVG(l_extendedprice) AS avg_price,
       MIN(l_shipdate) AS first_ship, MAX(l_receiptdate) AS last_receipt
FROM lineitem
GROUP BY l_shipmode
ORDER BY l_shipmode"""),
    # Window functions (issue 41): top-N per group and a running total.
    ("window top-3 per customer", """
SELECT o_custkey, o_orderkey, o_totalprice, rn FROM (
  SELECT o_custkey, o_orderkey, o_totalprice,
         ROW_NUMBER() OVER (PARTITION BY o_custkey ORDER BY o_totalprice DESC, o_orderkey) AS rn
  FROM orders) AS ranked
WHERE rn <= 3
ORDER BY o_custkey, rn
LIMIT 100"""),
    ("window running total", """
SELECT o_custkey, o_orderdate, o_orderkey,
       SUM(o_totalprice) OVER (PARTITION BY o_custkey ORDER BY o_orderdate, o_orderkey
                               ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
FROM orders
ORDER BY o_custkey, o_orderdate, o_orderkey
LIMIT 100"""),
    # A recursive CTE walking the whole tree from its root (1,000,000 × sf edges).
    ("recursive CTE tree walk", """
WITH RECURSIVE sub (id, depth) AS (
  SELECT t_id, 0 FROM tree WHERE t_id = 1
  UNION ALL
  SELECT t.t_id, s.depth + 1 FROM tree t JOIN sub s ON t.t_parent = s.id)
SELECT COUNT(*), MAX(depth), SUM(id) FROM sub"""),
]

POINT_SQL = ("SELECT o_orderkey, o_custkey, o_orderstatus, o_totalprice, o_orderdate, "
             "o_orderpriority FROM orders WHERE o_orderkey = {}")


# --------------------------------------------------------------------------
# Comparing answers.
# --------------------------------------------------------------------------
def norm(v):
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float, decimal.Decimal)):
        return float(v)
    if isinstance(v, (datetime.date, datetime.datetime)):
        return v.isoformat()[:10] if isinstance(v, datetime.date) else v.isoformat()
    if isinstance(v, (bytes, bytearray)):
        return v.decode("utf-8", "replace")
    return v


def norm_rows(rows):
    return [tuple(norm(v) for v in r) for r in rows]


def same_value(a, b):
    if isinstance(a, float) and isinstance(b, float):
        # "Equal after rounding to 2 places": exact decimals vs SQLite's
        # binary floats can round an exact .xx5 the other way, so one unit
        # of the second place (plus float noise on big sums) is allowed.
        return abs(round(a, 2) - round(b, 2)) <= 0.0100001 + 1e-12 * max(abs(a), abs(b))
    return a == b


def same_rows(a, b, ordered):
    if len(a) != len(b):
        return False
    if not ordered:
        key = lambda r: tuple((0, round(v, 2)) if isinstance(v, float) else (1, str(v)) for v in r)  # noqa: E731
        a, b = sorted(a, key=key), sorted(b, key=key)
    return all(len(x) == len(y) and all(same_value(u, v) for u, v in zip(x, y))
               for x, y in zip(a, b))


def show(rows, limit=12):
    out = []
    for r in rows[:limit]:
        out.append("  (" + ", ".join(
            (str(int(v)) if v.is_integer() else f"{v:.2f}") if isinstance(v, float) else repr(v)
            for v in r) + ")")
    if len(rows) > limit:
        out.append(f"  … {len(rows) - limit} more rows")
    return "\n".join(out) if out else "  (no rows)"


# --------------------------------------------------------------------------
# Engines.
# --------------------------------------------------------------------------
class Tributary:
    name = "tributary"

    def __init__(self, port, timeout):
        self.port, self.timeout = port, timeout
        self.connect()

    def connect(self):
        self.conn = pymysql.connect(host="127.0.0.1", port=self.port, user="root", password="",
                                    autocommit=True, read_timeout=self.timeout,
                                    write_timeout=self.timeout)
        self.cur = self.conn.cursor()

    def use(self, db):
        self.db = db
        self.cur.execute(f"USE {db}")

    def reconnect(self):
        try:
            self.conn.close()
        except Exception:
            pass
        self.connect()
        self.cur.execute(f"USE {self.db}")

    def execute(self, sql):
        self.cur.execute(sql)
        return self.cur.fetchall()


class Sqlite:
    name = "sqlite"

    def __init__(self, path):
        self.conn = sqlite3.connect(path, isolation_level=None)
        if path != ":memory:":
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")

    def execute(self, sql):
        return self.conn.execute(sql).fetchall()



# --------------------------------------------------------------------------
# Steps.
# --------------------------------------------------------------------------
def load(trib, lite, args):
    for table, cols, pk in TABLES:
        trib.execute(ddl(table, cols, pk, "tributary"))
        lite.execute(ddl(table, cols, pk, "sqlite"))
    for sql in INDEXES:
        trib.execute(sql)
        lite.execute(sql)
    spent = {"tributary": 0.0, "sqlite": 0.0, "generate": 0.0}
    rows = {t[0]: 0 for t in TABLES}
    pending = {t[0]: [] for t in TABLES}
    stmts_in_txn = 0

    def run_both(sql):
        for eng in (trib, lite):
            t = time.perf_counter()
            eng.execute(sql)
            spent[eng.name] += time.perf_counter() - t

    def flush(table):
        nonlocal stmts_in_txn
        vals = pending[table]
        if not vals:
            return
        if stmts_in_txn == 0:
            run_both("BEGIN")
        run_both(f"INSERT INTO {table} VALUES " + ", ".join(vals))
        rows[table] += len(vals)
        pending[table] = []
        stmts_in_txn += 1
        if stmts_in_txn >= args.txn_statements:
            run_both("COMMIT")
            stmts_in_txn = 0

    gen = generate(args.sf, args.seed)
    t0 = time.perf_counter()
    while True:
        g = time.perf_counter()
        item = next(gen, None)
        spent["generate"] += time.perf_counter() - g
        if item is None:
            break
        table, vals = item
        pending[table].append(vals)
        if len(pending[table]) >= args.batch:
            flush(table)
    for table, _, _ in TABLES:
        flush(table)
    if stmts_in_txn:
        run_both("COMMIT")
    if args.sqlite_analyze:
        t = time.perf_counter()
        lite.execute("ANALYZE")
        spent["sqlite"] += time.perf_counter() - t
    wall = time.perf_counter() - t0
    return {"rows": rows, "total_rows": sum(rows.values()), "tributary_s": spent["tributary"],
            "sqlite_s": spent["sqlite"], "generate_s": spent["generate"], "wall_s": wall}


def check_counts(trib, lite, load_info, failures):
    for table, _, _ in TABLES:
        a = trib.execute(f"SELECT COUNT(*) FROM {table}")[0][0]
        b = lite.execute(f"SELECT COUNT(*) FROM {table}")[0][0]
        if a != b or a != load_info["rows"][table]:
            failures.append(f"row count of {table}: tributary {a}, sqlite {b}, "
                            f"loaded {load_info['rows'][table]}")
            print(f"MISMATCH: SELECT COUNT(*) FROM {table}: tributary {a}, sqlite {b}, "
                  f"loaded {load_info['rows'][table]}")
    # SQLite compares DATE columns as text: make sure they are stored as text.
    kinds = lite.execute("SELECT DISTINCT typeof(l_shipdate) FROM lineitem")
    if kinds and [k[0] for k in kinds] != ["text"]:
        sys.exit(f"sqlite stored l_shipdate as {kinds}, not text: date literals would not compare")


def run_query(label, sql, trib, lite, args, failures):
    sql = sql.strip()
    ordered = "ORDER BY" in sql.upper()
    res = {"query": label, "sql": sql, "tributary_s": None, "sqlite_s": None, "ratio": None,
           "rows": None, "status": "ok"}
    # First run of each: the answers (and a warm-up).
    try:
        lite_rows = norm_rows(lite.execute(sql))
    except Exception as e:  # noqa: BLE001
        res["status"] = f"sqlite error: {e}"
        failures.append(f"{label}: {res['status']}")
        print(f"ERROR (sqlite) in {label}: {e}\n{sql}")
        return res
    res["rows"] = len(lite_rows)
    try:
        trib_rows = norm_rows(trib.execute(sql))
    except Exception as e:  # noqa: BLE001
        res["status"] = f"tributary error: {e!r}"
        failures.append(f"{label}: {res['status']}")
        print(f"ERROR (tributary) in {label}: {e!r}\n{sql}\nsqlite answer ({len(lite_rows)} rows):\n"
              f"{show(lite_rows)}")
        if isinstance(e, (pymysql.err.OperationalError, pymysql.err.InterfaceError)):
            trib.reconnect()
        return res
    if args.show_answers:
        print(f"answer of {label} (tributary, {len(trib_rows)} rows):\n{show(trib_rows)}")
    if not same_rows(trib_rows, lite_rows, ordered):
        res["status"] = "MISMATCH"
        res["tributary_answer"] = [list(r) for r in trib_rows[:50]]
        res["sqlite_answer"] = [list(r) for r in lite_rows[:50]]
        failures.append(f"{label}: answers differ")
        print(f"MISMATCH in {label}:\n{sql}\n"
              f"tributary ({len(trib_rows)} rows):\n{show(trib_rows)}\n"
              f"sqlite ({len(lite_rows)} rows):\n{show(lite_rows)}")
    # Timed runs (also when the answers differ: the time is still reported).
    times = {"tributary": [], "sqlite": []}
    for _ in range(args.runs):
        for eng in (trib, lite):
            try:
                dt, _ = timed(lambda: eng.execute(sql))
            except Exception as e:  # noqa: BLE001
                res["status"] = f"{eng.name} error on a timed run: {e!r}"
                failures.append(f"{label}: {res['status']}")
                print(f"ERROR ({eng.name}) on a timed run of {label}: {e!r}")
                return res
            times[eng.name].append(dt)
    res["tributary_s"] = statistics.median(times["tributary"])
    res["sqlite_s"] = statistics.median(times["sqlite"])
    res["tributary_runs_s"], res["sqlite_runs_s"] = times["tributary"], times["sqlite"]
    if res["tributary_s"] > 0:
        res["ratio"] = res["sqlite_s"] / res["tributary_s"]
    return res


def run_points(trib, lite, args, failures):
    n_orders = counts(args.sf)["orders"]
    rnd = random.Random(args.seed + 1)
    keys = [order_key(rnd.randrange(n_orders)) for _ in range(args.points)]
    res = {"query": f"point SELECT orders by PK (x{args.points})", "sql": POINT_SQL.format("?"),
           "rows": 0, "status": "ok", "tributary_s": None, "sqlite_s": None, "ratio": None}
    # Answers first, on the first 100 keys (warm-up too).
    for k in keys[:100]:
        sql = POINT_SQL.format(k)
        try:
            a = norm_rows(trib.execute(sql))
        except Exception as e:  # noqa: BLE001
            res["status"] = f"tributary error: {e!r}"
            failures.append(f"point select: {res['status']}")
            print(f"ERROR (tributary) in point select: {e!r}\n{sql}")
            return res
        b = norm_rows(lite.execute(sql))
        if not same_rows(a, b, True) or len(b) != 1:
            res["status"] = "MISMATCH"
            failures.append(f"point select key {k}: answers differ")
            print(f"MISMATCH in point select:\n{sql}\ntributary:\n{show(a)}\nsqlite:\n{show(b)}")
            break
    lat = {"tributary": [], "sqlite": []}
    total = {}
    # Tributary through the server (PyMySQL interpolates; one round trip per
    # query); SQLite with a bound parameter (its statement cache applies).
    t0 = time.perf_counter()
    for k in keys:
        t = time.perf_counter()
        trib.cur.execute(POINT_SQL.format(k))
        rows = trib.cur.fetchall()
        lat["tributary"].append(time.perf_counter() - t)
        res["rows"] += len(rows)
    total["tributary"] = time.perf_counter() - t0
    lite_sql = POINT_SQL.format("?")
    t0 = time.perf_counter()
    for k in keys:
        t = time.perf_counter()
        lite.conn.execute(lite_sql, (k,)).fetchall()
        lat["sqlite"].append(time.perf_counter() - t)
    total["sqlite"] = time.perf_counter() - t0
    res["tributary_s"], res["sqlite_s"] = total["tributary"], total["sqlite"]
    res["ratio"] = total["sqlite"] / total["tributary"]
    for e in ("tributary", "sqlite"):
        res[f"{e}_p50_ms"] = statistics.median(lat[e]) * 1e3
        res[f"{e}_qps"] = len(keys) / total[e]
    return res


def machine():
    info = {"nproc": len(os.sched_getaffinity(0)), "cpu": platform.processor() or "?",
            "ram_gib": None, "python": platform.python_version(),
            "sqlite": sqlite3.sqlite_version, "pymysql": pymysql.__version__}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    info["ram_gib"] = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return info


def describe_binary(path):
    st = os.stat(path)
    out = {"path": os.path.abspath(path), "size": st.st_size,
           "mtime": datetime.datetime.fromtimestamp(st.st_mtime).isoformat(timespec="seconds"),
           "kind": "debug" if "/debug/" in os.path.abspath(path) else
           "release" if "/release/" in os.path.abspath(path) else "?"}
    try:
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        head = subprocess.run(["git", "-C", repo, "rev-parse", "--short", "HEAD"],
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", repo, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10).stdout.strip()
        out["source_tree"] = head + (" (modified)" if dirty else "")
    except Exception:  # noqa: BLE001
        pass
    return out


def fmt_ratio(r):
    return "—" if r is None else f"{r:.2f}" if r >= 0.1 else f"{r:.2g}"


def fmt_s(v):
    return "—" if v is None else f"{v:.4f}" if v < 10 else f"{v:.2f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=DEFAULT_BIN,
                    help="tributary binary (default $TRIBUTARY_BIN or %(default)s)")
    ap.add_argument("--sf", type=float, default=0.01, help="scale factor (default 0.01)")
    ap.add_argument("--runs", type=int, default=3, help="timed runs per query, median (default 3)")
    ap.add_argument("--points", type=int, default=2000, help="point SELECTs (default 2000)")
    ap.add_argument("--batch", type=int, default=500, help="rows per INSERT (default 500)")
    ap.add_argument("--txn-statements", type=int, default=20,
                    help="INSERT statements per transaction (default 20)")
    ap.add_argument("--sqlite", choices=["memory", "file"], default="memory",
                    help="SQLite in memory (default) or a temporary file (WAL, synchronous=NORMAL)")
    ap.add_argument("--no-sqlite-analyze", dest="sqlite_analyze", action="store_false",
                    help="skip ANALYZE on SQLite after the load (default: run it, counted in its load time)")
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--timeout", type=float, default=1800,
                    help="client read timeout per Tributary statement, s (default 1800)")
    ap.add_argument("--only", metavar="TEXT", help="run only the queries whose label contains TEXT")
    ap.add_argument("--explain", action="store_true", help="print Tributary's EXPLAIN ANALYZE of each query")
    ap.add_argument("--show-answers", action="store_true",
                    help="print each query's answer (Tributary's, first rows)")
    ap.add_argument("--server-log", action="store_true", help="show the server's stderr")
    ap.add_argument("--json", metavar="OUT", help="also write the results as JSON")
    args = ap.parse_args()
    if not os.path.exists(args.bin):
        sys.exit(f"tributary binary not found at {args.bin} (--bin or TRIBUTARY_BIN)")

    command = " ".join(shlex.quote(a) for a in [sys.executable] + sys.argv)
    mach = machine()
    binary = describe_binary(args.bin)
    print(f"command: {command}")
    print(f"machine: nproc {mach['nproc']}, RAM {mach['ram_gib']} GiB, CPU {mach['cpu']}")
    print(f"tributary: {binary['path']} ({binary['kind']} build, built {binary['mtime']}, "
          f"source tree {binary.get('source_tree', '?')})")
    print(f"sqlite: {mach['sqlite']} via Python {mach['python']} sqlite3, "
          f"{'in memory' if args.sqlite == 'memory' else 'temporary file, WAL, synchronous=NORMAL'}"
          f"{', ANALYZE after load' if args.sqlite_analyze else ''}; pymysql {mach['pymysql']}")
    print(f"scale factor {args.sf} ({counts(args.sf)}), runs {args.runs} (median), "
          f"{args.batch} rows/INSERT, {args.txn_statements} INSERTs/transaction", flush=True)

    failures = []
    results = []
    with tempfile.TemporaryDirectory(prefix="tributary-bench-query-") as d:
        proc, port = start_server(args.bin, os.path.join(d, "data"), show_log=args.server_log)
        try:
            trib = Tributary(port, args.timeout)
            trib.execute("CREATE DATABASE tpch")
            trib.use("tpch")
            lite = Sqlite(":memory:" if args.sqlite == "memory" else os.path.join(d, "tpch.sqlite"))

            load_info = load(trib, lite, args)
            print(f"loaded {load_info['total_rows']:,} rows per engine ({load_info['rows']}); "
                  f"generation {load_info['generate_s']:.2f} s (not counted)", flush=True)
            check_counts(trib, lite, load_info, failures)
            results.append({"query": "load (all tables)", "tributary_s": load_info["tributary_s"],
                            "sqlite_s": load_info["sqlite_s"],
                            "ratio": load_info["sqlite_s"] / load_info["tributary_s"],
                            "rows": load_info["total_rows"], "status": "ok"})

            for label, sql in [(l, s) for l, s in QUERIES if not args.only or args.only in l]:
                if args.explain:
                    try:
                        plan = trib.execute("EXPLAIN ANALYZE " + sql.strip())
                        print(f"EXPLAIN {label}:\n" + "\n".join("  " + " | ".join(map(str, r))
                                                                for r in plan))
                    except Exception as e:  # noqa: BLE001
                        print(f"EXPLAIN {label} failed: {e!r}")
                r = run_query(label, sql, trib, lite, args, failures)
                results.append(r)
                print(f"  {label}: tributary {fmt_s(r['tributary_s'])} s, sqlite "
                      f"{fmt_s(r['sqlite_s'])} s, {r['status']}", flush=True)
            pts = run_points(trib, lite, args, failures)
            results.append(pts)
            trib.conn.close()
        finally:
            rc = stop_server(proc)
            if rc != 0:
                print(f"warning: server exit code {rc} after SIGTERM", file=sys.stderr)

    print()
    head = ("query", "tributary s", "sqlite s", "ratio", "rows", "status")
    table = [head] + [(r["query"], fmt_s(r["tributary_s"]), fmt_s(r["sqlite_s"]),
                       fmt_ratio(r["ratio"]),
                       "—" if r["rows"] is None else f"{r['rows']:,}", r["status"][:60])
                      for r in results]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for n, row in enumerate(table):
        print("| " + " | ".join(c.ljust(w) if i in (0, 5) else c.rjust(w)
                                for i, (c, w) in enumerate(zip(row, widths))) + " |")
        if n == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    print("ratio = SQLite s / Tributary s (>= 1: Tributary faster). Load: multi-row INSERTs, "
          "generation excluded.")
    if pts.get("tributary_p50_ms") is not None:
        print(f"point SELECT: tributary p50 {pts['tributary_p50_ms']:.3f} ms, "
              f"{pts['tributary_qps']:,.0f} q/s (server, PyMySQL); sqlite p50 "
              f"{pts['sqlite_p50_ms']:.3f} ms, {pts['sqlite_qps']:,.0f} q/s (in process)")

    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": command, "machine": mach, "tributary_binary": binary,
                       "sf": args.sf, "runs": args.runs, "sqlite_mode": args.sqlite,
                       "sqlite_analyze": args.sqlite_analyze, "batch": args.batch,
                       "txn_statements": args.txn_statements, "load": load_info,
                       "results": results, "failures": failures}, f, indent=2, default=str)
        print(f"wrote {args.json}")
    if failures:
        print("\nFAILED (answers differ or a query failed):\n  " + "\n  ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
