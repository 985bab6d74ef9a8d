#!/usr/bin/env python3
"""Full-text search benchmark (issue 14): Tributary through its MySQL server
(PyMySQL, loopback) against SQLite FTS5 (Python's sqlite3, in process) and
PostgreSQL's GIN full-text search (psycopg, loopback; `--no-pg` to skip)
on the same generated documents, in one run.

PostgreSQL: the Debian package's binaries (`/usr/lib/postgresql/*/bin`;
installed with apt-get when missing and run as root), a throwaway cluster
in a temporary directory started as the `postgres` user on 127.0.0.1 and
an ephemeral port, `psycopg[binary]` pip-installed into this Python when
missing. Its index: a stored generated `tsvector` column
(`to_tsvector('simple', body)`) plus a GIN index on it (both timed as the
build); queries rank with `ts_rank` (1 term: `plainto_tsquery`, 2 terms:
`a | b`) and count with `@@`.

Data: --docs documents (default 50,000) of 20–60 words drawn from a
--vocab-word vocabulary (default 5,000) with Zipf weights 1/rank, generated
deterministically (--seed). Both engines load the same rows, then build
their index (timed: Tributary `CREATE FULLTEXT INDEX`, synchronous, so the
index is complete when it returns; SQLite `INSERT INTO fts … SELECT` into an
FTS5 table with `content=''`-free storage).

Queries (terms drawn from ranks 20–2,000 of the vocabulary, the same
sequence for both engines), each timed as a batch of --queries queries,
engines alternating, --runs runs, median reported:
  * 1-term top-10 by relevance: Tributary `WHERE MATCH(body) AGAINST(t)
    ORDER BY MATCH(body) AGAINST(t) DESC LIMIT 10`; FTS5 `WHERE fts MATCH t
    ORDER BY rank LIMIT 10` (BM25 in both);
  * 2-term top-10 (natural language mode = either term; FTS5 `a OR b`);
  * COUNT(*) of the documents holding one term.
Answers are checked: COUNTs must be equal; for top-10 the share of
Tributary's ids that FTS5 also returns is printed (both rank by BM25 but
tokenise and normalise slightly differently, so ties near the cut differ).

Prints the machine and the command, then a table: per metric each engine's
figure and Tributary's ratio to each peer (q/s: Tributary / peer, > 1 =
Tributary faster; build: peer s / Tributary s). `--json out.json` writes
everything.

Run (release build; PyMySQL from the project venv):
  cargo build --release --bin tributary
  $CARGO_TARGET_DIR/venv/bin/python scripts/bench_search.py
"""
import argparse
import bisect
import json
import os
import platform
import random
import shlex
import sqlite3
import statistics
import sys
import tempfile
import time

import pymysql

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pgproc import PgCluster, debian_bin  # noqa: E402
from serverproc import start_server, stop_server  # noqa: E402


def generate(n_docs, vocab, seed):
    rnd = random.Random(seed)
    cum, c = [], 0.0
    total = sum(1.0 / (i + 1) for i in range(vocab))
    for i in range(vocab):
        c += 1.0 / (i + 1) / total
        cum.append(c)

    def word():
        return "w%d" % min(bisect.bisect_left(cum, rnd.random()), vocab - 1)

    return [(i, " ".join(word() for _ in range(rnd.randint(20, 60)))) for i in range(1, n_docs + 1)]


def terms(n, vocab, seed):
    rnd = random.Random(seed)
    hi = min(2000, vocab - 1)
    return ["w%d" % rnd.randint(20, hi) for _ in range(n)]


class Trib:
    def __init__(self, port):
        self.conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                    autocommit=True, read_timeout=600)
        self.cur = self.conn.cursor()

    def q(self, sql, args=None):
        self.cur.execute(sql, args)
        return self.cur.fetchall()

    def load(self, docs):
        self.q("CREATE DATABASE bs")
        self.q("USE bs")
        self.q("CREATE TABLE docs (id INT PRIMARY KEY, body TEXT)")
        for j in range(0, len(docs), 1000):
            chunk = docs[j:j + 1000]
            self.cur.execute("INSERT INTO docs VALUES " + ",".join(["(%s,%s)"] * len(chunk)),
                             [x for d in chunk for x in d])
        t = time.perf_counter()
        self.q("CREATE FULLTEXT INDEX ft ON docs(body)")
        return time.perf_counter() - t

    def top(self, expr):
        return [r[0] for r in self.q(
            f"SELECT id FROM docs WHERE MATCH(body) AGAINST(%s) "
            f"ORDER BY MATCH(body) AGAINST(%s) DESC LIMIT 10", (expr, expr))]

    def count(self, term):
        return self.q("SELECT COUNT(*) FROM docs WHERE MATCH(body) AGAINST(%s)", (term,))[0][0]


class Lite:
    def __init__(self, path):
        self.conn = sqlite3.connect(path, isolation_level=None)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")

    def load(self, docs):
        c = self.conn
        c.execute("CREATE TABLE docs (id INTEGER PRIMARY KEY, body TEXT)")
        c.execute("BEGIN")
        c.executemany("INSERT INTO docs VALUES (?, ?)", docs)
        c.execute("COMMIT")
        t = time.perf_counter()
        c.execute("CREATE VIRTUAL TABLE fts USING fts5(body, content='docs', content_rowid='id')")
        c.execute("INSERT INTO fts(rowid, body) SELECT id, body FROM docs")
        return time.perf_counter() - t

    def top(self, expr):
        return [r[0] for r in self.conn.execute(
            "SELECT rowid FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 10", (expr,))]

    def count(self, term):
        return self.conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (term,)).fetchone()[0]


class Pg(PgCluster):
    """The Debian package's PostgreSQL, fsync off (a read benchmark)."""

    def __init__(self):
        super().__init__(debian_bin(), fsync=False)

    def load(self, docs):
        c = self.conn
        c.execute("CREATE TABLE docs (id int PRIMARY KEY, body text)")
        with c.cursor().copy("COPY docs (id, body) FROM STDIN") as cp:
            for d in docs:
                cp.write_row(d)
        c.execute("ANALYZE docs")
        t = time.perf_counter()
        c.execute("ALTER TABLE docs ADD COLUMN tsv tsvector "
                  "GENERATED ALWAYS AS (to_tsvector('simple', body)) STORED")
        c.execute("CREATE INDEX docs_tsv ON docs USING gin (tsv)")
        return time.perf_counter() - t

    def top(self, expr):
        q = " | ".join(expr.split())
        return [r[0] for r in self.conn.execute(
            "SELECT id FROM docs WHERE tsv @@ to_tsquery('simple', %s) "
            "ORDER BY ts_rank(tsv, to_tsquery('simple', %s)) DESC LIMIT 10", (q, q))]

    def count(self, term):
        return self.conn.execute(
            "SELECT count(*) FROM docs WHERE tsv @@ to_tsquery('simple', %s)", (term,)).fetchone()[0]


def timed_batch(fn, items):
    t = time.perf_counter()
    out = [fn(x) for x in items]
    return time.perf_counter() - t, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--vocab", type=int, default=5_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--bin", default=os.environ.get(
        "TRIBUTARY_BIN", "/var/tmp/tributary-target/release/tributary"))
    ap.add_argument("--json")
    ap.add_argument("--no-pg", action="store_true", help="skip PostgreSQL")
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    print("sqlite:", sqlite3.sqlite_version, "(FTS5), pymysql:", pymysql.__version__)
    docs = generate(args.docs, args.vocab, args.seed)
    one = terms(args.queries, args.vocab, args.seed + 1)
    two = [f"{a} {b}" for a, b in zip(one, terms(args.queries, args.vocab, args.seed + 2))]
    with tempfile.TemporaryDirectory(prefix="bench-search-") as d:
        proc, port = start_server(args.bin, os.path.join(d, "trib"))
        pg = None
        try:
            engines = {"tributary": Trib(port), "sqlite": Lite(os.path.join(d, "lite.db"))}
            if not args.no_pg:
                pg = Pg()
                print("postgresql:", pg.version, "(GIN on a stored tsvector, ts_rank)")
                engines["postgresql"] = pg
            results = {"build_s": {name: e.load(docs) for name, e in engines.items()}}
            lite_or = {"top": lambda e: engines["sqlite"].top(" OR ".join(e.split()))}
            cases = [("1-term top-10", one, "top"), ("2-term top-10", two, "top"),
                     ("COUNT MATCH 1 term", one, "count")]
            failures = []
            for label, items, what in cases:
                times = {name: [] for name in engines}
                outs = {}
                for _ in range(args.runs):
                    for name, e in engines.items():
                        fn = getattr(e, what)
                        if name == "sqlite" and label.startswith("2-term"):
                            fn = lite_or["top"]
                        dt, outs[name] = timed_batch(fn, items)
                        times[name].append(dt)
                r = {f"{name}_qps": len(items) / statistics.median(t) for name, t in times.items()}
                if what == "count":
                    for name, out in outs.items():
                        if out != outs["tributary"]:
                            bad = [(i, a, b) for i, a, b in zip(items, outs["tributary"], out) if a != b][:5]
                            failures.append(f"{label}: {name} counts differ from tributary's, e.g. {bad}")
                else:
                    for name, out in outs.items():
                        if name != "tributary":
                            ov = [len(set(a) & set(b)) / len(a) for a, b in zip(outs["tributary"], out) if a]
                            r[f"{name}_top10_overlap"] = statistics.mean(ov) if ov else None
                results[label] = r
        finally:
            stop_server(proc)
            if pg:
                pg.stop()
    names = list(results["build_s"])
    head = "".join(f"{n:>13}" for n in names) + "".join(f"{'trib/' + n[:6]:>13}" for n in names[1:])
    print(f"\n{'metric':<24}{head}")
    b = results["build_s"]
    print(f"{'index build (s)':<24}" + "".join(f"{b[n]:>13.2f}" for n in names)
          + "".join(f"{b[n] / b['tributary']:>13.2f}" for n in names[1:]))
    for label, *_ in cases:
        r = results[label]
        print(f"{label + ' (q/s)':<24}" + "".join(f"{r[n + '_qps']:>13.0f}" for n in names)
              + "".join(f"{r['tributary_qps'] / r[n + '_qps']:>13.2f}" for n in names[1:]))
    for label, *_ in cases:
        ov = {k: v for k, v in results[label].items() if k.endswith("overlap") and v is not None}
        if ov:
            print(f"{label} top-10 overlap with tributary: " + ", ".join(f"{k.removesuffix('_top10_overlap')} {v:.2f}" for k, v in ov.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results, "failures": failures}, f, indent=1)
    for f_ in failures:
        print("FAILED:", f_)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
