#!/usr/bin/env python3
"""HNSW builds over equal vectors (issue 38, item 8; decision 020):
Tributary through its MySQL server (PyMySQL, loopback) against PostgreSQL 15
+ pgvector 0.8 (psycopg, loopback) in one run.

pgvector: built from source into the Debian PostgreSQL 15 when its
extension is not installed yet (`apt-get install -y
postgresql-server-dev-15`, then `make && make install` in a checkout of
--pgvector-src, default: a clone of github.com/pgvector/pgvector at
--pgvector-tag in /tmp). A throwaway cluster (`pgproc.PgCluster`) on
127.0.0.1, default settings (2 parallel maintenance workers,
`maintenance_work_mem` 64 MB).

Data (deterministic, --seed), --n rows of --dim dimensions, three sets:
  equal     --n copies of one vector;
  half      --n/2 distinct vectors (64 Gaussian clusters, as
            bench_vector.py) and --n/2 copies of them (50 % duplicates);
  distinct  --n distinct vectors (the baseline).
Per set and engine: the rows are loaded, then CREATE INDEX (HNSW, M --m,
EF_CONSTRUCTION --efc, L2) is timed, then the first search after it.
Tributary builds its synchronous index twice, under autocommit=1 and
autocommit=0 (the same work either way), and runs CHECK INDEX after each
(reported with its count of rows not found by a search for their own
vector at the default beam: HNSW's ordinary loss on this data, distinct
vectors included).
--runs runs, median; engines alternate.

Prints the machine, the command and a table with the ratio Tributary /
pgvector of the build times (< 1: Tributary faster). `--json out.json`
writes everything.

Run (release build; the project venv has PyMySQL):
  cargo build --release --bin tributary
  $CARGO_TARGET_DIR/venv/bin/python scripts/bench_equal_vectors.py
"""
import argparse
import glob
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import lit, timed  # noqa: E402
from pydeps import ensure  # noqa: E402

np = ensure("numpy", "numpy")
pymysql = ensure("pymysql", "pymysql")
ensure("psycopg", "psycopg[binary]")

from pgproc import PgCluster  # noqa: E402
from serverproc import default_binary, start_server, stop_server  # noqa: E402

PG_MAJOR = "15"


def ensure_pgvector(src, tag):
    """Install pgvector into the Debian PostgreSQL PG_MAJOR unless it is."""
    control = f"/usr/share/postgresql/{PG_MAJOR}/extension/vector.control"
    if os.path.exists(control):
        return
    if not glob.glob(f"/usr/include/postgresql/{PG_MAJOR}/server/postgres.h"):
        subprocess.run(["apt-get", "install", "-y", "-q",
                        f"postgresql-server-dev-{PG_MAJOR}"], check=True)
    if src is None:
        src = tempfile.mkdtemp(prefix="pgvector-")
        subprocess.run(["git", "clone", "-q", "--branch", tag,
                        "https://github.com/pgvector/pgvector", src], check=True)
    pg_config = f"PG_CONFIG=/usr/lib/postgresql/{PG_MAJOR}/bin/pg_config"
    subprocess.run(["make", "-C", src, pg_config], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["make", "-C", src, pg_config, "install"], check=True,
                   stdout=subprocess.DEVNULL)


def datasets(n, dim, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 1.0, (64, dim)).astype(np.float32)

    def clustered(m):
        pick = rng.integers(0, 64, m)
        return centres[pick] + rng.normal(0.0, 0.6, (m, dim)).astype(np.float32)

    equal = np.repeat(clustered(1), n, axis=0)
    base = clustered(n // 2)
    half = np.concatenate([base, base[rng.integers(0, len(base), n - len(base))]])
    half = half[rng.permutation(n)]
    return {"equal": equal, "half": half, "distinct": clustered(n)}




class Trib:
    name = "Tributary"

    def __init__(self, port):
        self.conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                    autocommit=True, read_timeout=3600)
        self.c = self.conn.cursor()
        self.c.execute("CREATE DATABASE IF NOT EXISTS b")
        self.c.execute("USE b")

    def q(self, sql):
        self.c.execute(sql)
        return self.c.fetchall()

    def load(self, data):
        self.q("DROP TABLE IF EXISTS v")
        self.q(f"CREATE TABLE v (id INT PRIMARY KEY, x VECF32({data.shape[1]}))")
        for s in range(0, len(data), 500):
            self.q("INSERT INTO v VALUES " + ",".join(
                f"({s + i},'{lit(x)}')" for i, x in enumerate(data[s:s + 500])))

    def build(self, m, efc, autocommit=True):
        self.conn.autocommit(autocommit)
        try:
            self.q(f"CREATE INDEX h USING HNSW ON v(x) OP_TYPE 'vector_l2_ops' M {m} "
                   f"EF_CONSTRUCTION {efc}")
        finally:
            self.conn.autocommit(True)

    def drop(self):
        self.q("DROP INDEX h ON v")

    def knn(self, q):
        return [r[0] for r in self.q(
            f"SELECT id FROM v ORDER BY l2_distance(x, '{lit(q)}') LIMIT 10")]

    def check(self):
        """CHECK INDEX's status, with its count of unreachable rows (rows a
        search for their own vector at the default beam does not find)."""
        row = self.q("CHECK INDEX h ON v")[0]
        return row[-1] if row[-1] == "OK" else f"{row[-1]}: {row[5]} unreachable"


class Pg(PgCluster):
    name = "pgvector"

    def __init__(self):
        super().__init__(f"/usr/lib/postgresql/{PG_MAJOR}/bin", fsync=True)
        self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.vector_version = self.conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]

    def q(self, sql):
        cur = self.conn.execute(sql)
        return cur.fetchall() if cur.description else []

    def load(self, data):
        self.q("DROP TABLE IF EXISTS v")
        self.q(f"CREATE TABLE v (id INT PRIMARY KEY, x vector({data.shape[1]}))")
        for s in range(0, len(data), 500):
            self.q("INSERT INTO v (id, x) VALUES " + ",".join(
                f"({s + i},'{lit(x)}')" for i, x in enumerate(data[s:s + 500])))
        self.q("VACUUM ANALYZE v")

    def build(self, m, efc):
        self.q(f"CREATE INDEX h ON v USING hnsw (x vector_l2_ops) "
               f"WITH (m = {m}, ef_construction = {efc})")

    def drop(self):
        self.q("DROP INDEX h")

    def knn(self, q):
        return [r[0] for r in self.q(f"SELECT id FROM v ORDER BY x <-> '{lit(q)}' LIMIT 10")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=64)
    ap.add_argument("--seed", type=int, default=38)
    ap.add_argument("--sets", default="equal,half,distinct")
    ap.add_argument("--bin", default=default_binary())
    ap.add_argument("--pgvector-src", default=None)
    ap.add_argument("--pgvector-tag", default="v0.8.6")
    ap.add_argument("--json", default=None)
    args = ap.parse_args()

    print("command:", shlex.join([sys.executable, *sys.argv]))
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    ensure_pgvector(args.pgvector_src, args.pgvector_tag)
    sets = datasets(args.n, args.dim, args.seed)
    names = [s for s in args.sets.split(",") if s]
    res = {"n": args.n, "dim": args.dim, "m": args.m, "efc": args.efc, "sets": {}}
    with tempfile.TemporaryDirectory() as d:
        proc, port = start_server(args.bin, os.path.join(d, "trib"))
        pg = Pg()
        res["pgvector"] = pg.vector_version
        res["postgres"] = pg.version
        try:
            trib = Trib(port)
            for name in names:
                data = sets[name]
                query = data[0]
                r = {"trib": [], "trib_ac0": [], "trib_first": [], "trib_ac0_first": [],
                     "pg": [], "pg_first": [], "check": []}
                trib.load(data)
                pg.load(data)
                for run in range(args.runs):
                    for ac in (True, False):
                        dt, _ = timed(lambda: trib.build(args.m, args.efc, ac))
                        ft, _ = timed(lambda: trib.knn(query))
                        key = "trib" if ac else "trib_ac0"
                        r[key].append(dt)
                        r[key + "_first"].append(ft)
                        r["check"].append(trib.check())
                        trib.drop()
                    dt, _ = timed(lambda: pg.build(args.m, args.efc))
                    ft, _ = timed(lambda: pg.knn(query))
                    r["pg"].append(dt)
                    r["pg_first"].append(ft)
                    pg.drop()
                    print(f"{name} run {run + 1}: Tributary {r['trib'][-1]:.2f} s "
                          f"(autocommit=0 {r['trib_ac0'][-1]:.2f} s, first search "
                          f"{r['trib_ac0_first'][-1] * 1000:.0f} ms), pgvector {r['pg'][-1]:.2f} s, "
                          f"CHECK INDEX {r['check'][-2]}/{r['check'][-1]}", flush=True)
                res["sets"][name] = r
        finally:
            pg.stop()
            stop_server(proc)

    med = statistics.median
    print(f"\n{args.n:,} × {args.dim}-d, HNSW M {args.m}, EF_CONSTRUCTION {args.efc}; "
          f"PostgreSQL {res['postgres']} + pgvector {res['pgvector']}; median of {args.runs}")
    print("| data | Tributary build | autocommit=0 build | first search after it (1 / 0) | "
          "pgvector build | Tributary / pgvector | CHECK INDEX |")
    print("|---|---|---|---|---|---|---|")
    for name, r in res["sets"].items():
        ratio = med(r["trib"]) / med(r["pg"])
        r["ratio"] = ratio
        checks = "OK" if all(c == "OK" for c in r["check"]) else "; ".join(sorted(set(r["check"])))
        print(f"| {name} | {med(r['trib']):.2f} s | {med(r['trib_ac0']):.2f} s | "
              f"{med(r['trib_first']) * 1000:.0f} / {med(r['trib_ac0_first']) * 1000:.0f} ms | "
              f"{med(r['pg']):.2f} s | "
              f"{ratio:.2f} | {checks} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
