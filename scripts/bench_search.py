#!/usr/bin/env python3
"""Full-text search benchmark (issue 14): Tributary through its MySQL server
(PyMySQL, loopback) against SQLite FTS5 (Python's sqlite3, in process) on
the same generated documents, in one run.

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

Prints the machine and the command, then a table: metric, Tributary, SQLite,
ratio (>1: Tributary faster). `--json out.json` writes everything.

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
    args = ap.parse_args()
    print("machine:", platform.machine(), os.cpu_count(), "cpus,", platform.platform())
    print("command:", " ".join(shlex.quote(a) for a in sys.argv))
    print("sqlite:", sqlite3.sqlite_version, "(FTS5), pymysql:", pymysql.__version__)
    docs = generate(args.docs, args.vocab, args.seed)
    one = terms(args.queries, args.vocab, args.seed + 1)
    two = [f"{a} {b}" for a, b in zip(one, terms(args.queries, args.vocab, args.seed + 2))]
    with tempfile.TemporaryDirectory(prefix="bench-search-") as d:
        proc, port = start_server(args.bin, os.path.join(d, "trib"))
        try:
            trib, lite = Trib(port), Lite(os.path.join(d, "lite.db"))
            results = {"build_s": {"tributary": trib.load(docs), "sqlite": lite.load(docs)}}
            cases = [
                ("1-term top-10", one, trib.top, lite.top),
                ("2-term top-10", two, trib.top, lambda e: lite.top(" OR ".join(e.split()))),
                ("COUNT MATCH 1 term", one, trib.count, lite.count),
            ]
            failures = []
            for label, items, tf, lf in cases:
                ts, ls, overlap = [], [], []
                for _ in range(args.runs):
                    dt, tout = timed_batch(tf, items)
                    dl, lout = timed_batch(lf, items)
                    ts.append(dt)
                    ls.append(dl)
                if label.startswith("COUNT"):
                    if tout != lout:
                        bad = [(i, a, b) for i, a, b in zip(items, tout, lout) if a != b][:5]
                        failures.append(f"{label}: counts differ, e.g. {bad}")
                else:
                    for a, b in zip(tout, lout):
                        if a:
                            overlap.append(len(set(a) & set(b)) / len(a))
                results[label] = {
                    "tributary_qps": len(items) / statistics.median(ts),
                    "sqlite_qps": len(items) / statistics.median(ls),
                    "top10_overlap": statistics.mean(overlap) if overlap else None,
                }
        finally:
            stop_server(proc)
    b = results["build_s"]
    print(f"\n{'metric':<22}{'Tributary':>12}{'SQLite FTS5':>14}{'ratio':>8}")
    print(f"{'index build (s)':<22}{b['tributary']:>12.2f}{b['sqlite']:>14.2f}{b['sqlite'] / b['tributary']:>8.2f}")
    for label, *_ in cases:
        r = results[label]
        extra = "" if r["top10_overlap"] is None else f"   top-10 overlap {r['top10_overlap']:.2f}"
        print(f"{label + ' (q/s)':<22}{r['tributary_qps']:>12.0f}{r['sqlite_qps']:>14.0f}"
              f"{r['tributary_qps'] / r['sqlite_qps']:>8.2f}{extra}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results, "failures": failures}, f, indent=1)
    for f_ in failures:
        print("FAILED:", f_)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
