#!/usr/bin/env python3
"""Vector search benchmark (issue 14, items 3–4): Tributary through its
MySQL server (PyMySQL, loopback) against PostgreSQL + pgvector (psycopg, loopback)
on the same generated data, in one run.

pgvector: the PostgreSQL 16 + pgvector 0.6 binaries of PyPI's `pgserver`
wheel (Debian 12 packages no pgvector), pip-installed into this Python when
missing with `psycopg[binary]` and numpy; a throwaway cluster
(`pgproc.PgCluster`) on 127.0.0.1 over TCP like Tributary, default settings
(fsync and `synchronous_commit` on, 2 parallel maintenance workers,
`maintenance_work_mem` 64 MB), stopped and deleted at the end.

Data (deterministic, --seed): --n vectors (default 20,000) of --dim
dimensions (default 128) drawn around 64 Gaussian cluster centres (real
embeddings cluster; uniform random vectors are a worst case no index
meets), --queries query vectors from the same distribution, and per row
`cat = id % 100` (a 1 % filter), `grp = id % 10` (10 %) and a short text
of 4–10 words from a 200-word Zipf vocabulary (hybrid queries).

Both systems: rows loaded first, then the timed index builds — HNSW on the
vector (M --m, EF_CONSTRUCTION --efc, L2), a B-tree on `cat` and a
full-text index on the text (Tributary `FULLTEXT`; PostgreSQL a stored
`to_tsvector('simple', …)` column with GIN). Tributary's indexes are
synchronous (maintained by the writing transaction), like pgvector's.

Measured, engines alternating, --runs runs, median:
  * HNSW build (s);
  * top-10 search: per beam width (Tributary `SET hnsw_ef_search`,
    pgvector `SET hnsw.ef_search`) recall@10 against numpy's exact L2 and
    queries/s; then per system the best q/s at recall ≥ 0.95 and ≥ 0.99;
  * filtered top-10 (`WHERE cat = ?` 1 %, `WHERE grp = ?` 10 %) at default
    settings: recall@10 against the exact filtered answer and q/s;
  * hybrid: `WHERE <text matches one word> ORDER BY distance LIMIT 10`,
    recall@10 and q/s;
  * INSERT with the indexes present: --single single-row autocommit
    INSERTs and --batches 100-row INSERTs, rows/s.

Prints the machine and the command, then tables with Tributary's ratio to
pgvector (q/s and rows/s: Tributary / pgvector; build: pgvector s /
Tributary s; > 1 = Tributary faster). `--json out.json` writes everything.

Run (release build; the project venv has PyMySQL):
  cargo build --release --bin tributary
  $CARGO_TARGET_DIR/venv/bin/python scripts/bench_vector.py
"""
import argparse
import json
import os
import platform
import shlex
import statistics
import sys
import tempfile
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import lit, timed  # noqa: E402
from pydeps import ensure  # noqa: E402

np = ensure("numpy", "numpy")
pymysql = ensure("pymysql", "pymysql")
ensure("psycopg", "psycopg[binary]")
ensure("pgserver", "pgserver")

from pgproc import PgCluster  # noqa: E402
from serverproc import default_binary, start_server, stop_server  # noqa: E402

K = 10


def generate(n, dim, nq, seed):
    rng = np.random.default_rng(seed)
    centres = rng.normal(0.0, 1.0, (64, dim)).astype(np.float32)
    pick = rng.integers(0, 64, n + nq)
    pts = centres[pick] + rng.normal(0.0, 0.6, (n + nq, dim)).astype(np.float32)
    data, queries = pts[:n], pts[n:]
    ranks = np.arange(1, 201)
    p = (1.0 / ranks) / (1.0 / ranks).sum()
    texts = [" ".join(f"t{w}" for w in rng.choice(200, size=rng.integers(4, 11), p=p))
             for _ in range(n)]
    return data, queries, texts



def top_exact(data, q, mask=None):
    d = ((data - q) ** 2).sum(axis=1)
    if mask is not None:
        d = np.where(mask, d, np.inf)
    idx = np.argsort(d)[:K]
    return {int(i) for i in idx if np.isfinite(d[i])}


class Trib:
    name = "Tributary"

    def __init__(self, port):
        self.c = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                 autocommit=True, read_timeout=3600).cursor()
        self.c.execute("CREATE DATABASE b")
        self.c.execute("USE b")

    def q(self, sql):
        self.c.execute(sql)
        return self.c.fetchall()

    def create(self, dim):
        self.q(f"CREATE TABLE v (id INT PRIMARY KEY, cat INT, grp INT, body TEXT, x VECF32({dim}))")

    def insert(self, rows):
        self.q("INSERT INTO v VALUES " + ",".join(
            f"({i},{i % 100},{i % 10},'{t}','{lit(x)}')" for i, t, x in rows))

    def build_hnsw(self, m, efc):
        self.q(f"CREATE INDEX h USING HNSW ON v(x) OP_TYPE 'vector_l2_ops' M {m} "
               f"EF_CONSTRUCTION {efc} EF_SEARCH 10")

    def build_others(self):
        self.q("CREATE INDEX c ON v(cat)")
        self.q("CREATE FULLTEXT INDEX f ON v(body)")

    def set_ef(self, ef):
        self.q(f"SET hnsw_ef_search = {ef}")

    def knn(self, q, where=""):
        return {r[0] for r in self.q(
            f"SELECT id FROM v {where} ORDER BY l2_distance(x, '{lit(q)}') LIMIT {K}")}

    def text_where(self, word):
        return f"WHERE MATCH(body) AGAINST('{word}')"


class Pg(PgCluster):
    name = "pgvector"

    def __init__(self):
        from pgserver._commands import POSTGRES_BIN_PATH
        super().__init__(str(POSTGRES_BIN_PATH), fsync=True)
        self.conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        self.vector_version = self.conn.execute(
            "SELECT extversion FROM pg_extension WHERE extname = 'vector'").fetchone()[0]

    def q(self, sql):
        cur = self.conn.execute(sql)
        return cur.fetchall() if cur.description else []

    def create(self, dim):
        self.q(f"CREATE TABLE v (id INT PRIMARY KEY, cat INT, grp INT, body TEXT, x vector({dim}))")

    def insert(self, rows):
        self.q("INSERT INTO v (id, cat, grp, body, x) VALUES " + ",".join(
            f"({i},{i % 100},{i % 10},'{t}','{lit(x)}')" for i, t, x in rows))

    def build_hnsw(self, m, efc):
        self.q(f"CREATE INDEX h ON v USING hnsw (x vector_l2_ops) "
               f"WITH (m = {m}, ef_construction = {efc})")

    def build_others(self):
        self.q("CREATE INDEX c ON v(cat)")
        self.q("ALTER TABLE v ADD COLUMN tsv tsvector "
               "GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED")
        self.q("CREATE INDEX f ON v USING gin(tsv)")

    def set_ef(self, ef):
        self.q(f"SET hnsw.ef_search = {ef}")

    def knn(self, q, where=""):
        return {r[0] for r in self.q(
            f"SELECT id FROM v {where} ORDER BY x <-> '{lit(q)}' LIMIT {K}")}

    def text_where(self, word):
        return f"WHERE tsv @@ plainto_tsquery('simple', '{word}')"



def search_batch(eng, queries, truths, where_of=None):
    """(seconds, recall@10) of one pass over `queries`."""
    hits = want = 0
    t = time.perf_counter()
    for i, (q, truth) in enumerate(zip(queries, truths)):
        got = eng.knn(q, where_of(i) if where_of else "")
        hits += len(got & truth)
        want += len(truth)
    return time.perf_counter() - t, hits / max(want, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--dim", type=int, default=128)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--m", type=int, default=16)
    ap.add_argument("--efc", type=int, default=64)
    ap.add_argument("--efs", default="10,20,40,80,160,320")
    ap.add_argument("--single", type=int, default=500)
    ap.add_argument("--batches", type=int, default=10)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--json")
    ap.add_argument("--bin", default=default_binary())
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    data, queries, texts = generate(args.n, args.dim, args.queries, args.seed)
    ids = np.arange(args.n)
    truth = [top_exact(data, q) for q in queries]
    filters = {
        "cat = c (1 %)": (lambda i: f"WHERE cat = {i % 100}", lambda i: ids % 100 == i % 100),
        "grp = g (10 %)": (lambda i: f"WHERE grp = {i % 10}", lambda i: ids % 10 == i % 10),
    }
    words = [f"t{5 + (i % 20)}" for i in range(args.queries)]
    has = {w: np.array([w in t.split() for t in texts]) for w in set(words)}
    res = {"n": args.n, "dim": args.dim, "m": args.m, "efc": args.efc}
    with tempfile.TemporaryDirectory(prefix="bench-vec-") as d:
        proc, port = start_server(args.bin, os.path.join(d, "trib"))
        pg = None
        try:
            pg = Pg()
            print(f"PostgreSQL {pg.version}, pgvector {pg.vector_version}")
            res["pgvector"] = pg.vector_version
            engines = [Trib(port), pg]
            rows = [(i, texts[i], data[i]) for i in range(args.n)]
            for e in engines:
                e.create(args.dim)
                for j in range(0, args.n, 500):
                    e.insert(rows[j:j + 500])
            # Builds: one table per run would reload the data; build once
            # per engine, alternating, and report it (one run).
            for e in engines:
                dt, _ = timed(lambda: e.build_hnsw(args.m, args.efc))
                res[f"{e.name}_build_s"] = dt
                dt, _ = timed(e.build_others)
                res[f"{e.name}_other_indexes_s"] = dt
                print(f"{e.name}: HNSW build {res[f'{e.name}_build_s']:.2f} s")
            # Beam sweep.
            sweep = {}
            for ef in [int(x) for x in args.efs.split(",")]:
                for e in engines:
                    e.set_ef(ef)
                times = {e.name: [] for e in engines}
                rec = {}
                for _ in range(args.runs):
                    for e in engines:
                        e.set_ef(ef)
                        dt, r = search_batch(e, queries, truth)
                        times[e.name].append(dt)
                        rec[e.name] = r
                sweep[ef] = {e: (rec[e], args.queries / statistics.median(t))
                             for e, t in times.items()}
                print(f"ef {ef:>4}: " + "  ".join(
                    f"{e} recall {r:.3f} {q:,.0f} q/s" for e, (r, q) in sweep[ef].items()))
            res["sweep"] = {str(k): v for k, v in sweep.items()}
            for target in (0.95, 0.99):
                best = {}
                for e in engines:
                    ok = [(q, ef) for ef, v in sweep.items() for (r, q) in [v[e.name]] if r >= target]
                    best[e.name] = max(ok) if ok else None
                res[f"at_{target}"] = best
            # Default beams from here on.
            engines[0].set_ef(0)
            engines[1].set_ef(40)
            for label, (where, mask) in filters.items():
                ftruth = [top_exact(data, q, mask(i)) for i, q in enumerate(queries)]
                times = {e.name: [] for e in engines}
                rec = {}
                for _ in range(args.runs):
                    for e in engines:
                        dt, r = search_batch(e, queries, ftruth, where)
                        times[e.name].append(dt)
                        rec[e.name] = r
                res[f"filter {label}"] = {e: (rec[e], args.queries / statistics.median(t))
                                          for e, t in times.items()}
            htruth = [top_exact(data, q, has[words[i]]) for i, q in enumerate(queries)]
            times = {e.name: [] for e in engines}
            rec = {}
            for _ in range(args.runs):
                for e in engines:
                    dt, r = search_batch(e, queries, htruth, lambda i, e=e: e.text_where(words[i]))
                    times[e.name].append(dt)
                    rec[e.name] = r
            res["hybrid"] = {e: (rec[e], args.queries / statistics.median(t))
                             for e, t in times.items()}
            # Inserts with every index present.
            rng = np.random.default_rng(args.seed + 1)
            nxt = {e.name: args.n for e in engines}
            ins = {e.name: {"single": [], "batch": []} for e in engines}
            for _ in range(args.runs):
                for e in engines:
                    base = nxt[e.name]
                    new = [(base + j, "t1 t2 t3", rng.normal(0, 1, args.dim))
                           for j in range(args.single)]
                    t = time.perf_counter()
                    for r in new:
                        e.insert([r])
                    ins[e.name]["single"].append(args.single / (time.perf_counter() - t))
                    base += args.single
                    new = [(base + j, "t1 t2 t3", rng.normal(0, 1, args.dim))
                           for j in range(100 * args.batches)]
                    t = time.perf_counter()
                    for j in range(0, len(new), 100):
                        e.insert(new[j:j + 100])
                    ins[e.name]["batch"].append(len(new) / (time.perf_counter() - t))
                    nxt[e.name] = base + len(new)
            res["insert"] = {e: {k: statistics.median(v) for k, v in kinds.items()}
                             for e, kinds in ins.items()}
        finally:
            stop_server(proc)
            if pg is not None:
                pg.stop()
    report(res)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2, default=str)


def report(res):
    t, p = "Tributary", "pgvector"
    print(f"\n{res['n']:,} × {res['dim']}-d, HNSW M {res['m']}, EF_CONSTRUCTION {res['efc']}; "
          f"pgvector {res['pgvector']}")
    print(f"{'metric':<44}{t:>14}{p:>14}{'ratio':>8}")

    def line(label, a, b, unit, inverse=False):
        ratio = (b / a if inverse else a / b) if a and b else float("nan")
        print(f"{label:<44}{a:>14,.2f}{b:>14,.2f}{ratio:>8.2f}  {unit}")

    line("HNSW build", res[f"{t}_build_s"], res[f"{p}_build_s"], "s", inverse=True)
    for target in (0.95, 0.99):
        a, b = res[f"at_{target}"][t], res[f"at_{target}"][p]
        if a and b:
            line(f"top-10 q/s at recall ≥ {target} (ef {a[1]} / {b[1]})", a[0], b[0], "q/s")
        else:
            print(f"top-10 at recall ≥ {target}: Tributary {a}, pgvector {b} (not reached)")
    for key in [k for k in res if k.startswith("filter ")] + ["hybrid"]:
        (ra, qa), (rb, qb) = res[key][t], res[key][p]
        line(f"{key} q/s (recall {ra:.3f} / {rb:.3f})", qa, qb, "q/s")
    for kind in ("single", "batch"):
        line(f"INSERT {kind} rows/s (indexes present)", res["insert"][t][kind],
             res["insert"][p][kind], "rows/s")


if __name__ == "__main__":
    main()
