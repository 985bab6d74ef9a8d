#!/usr/bin/env python3
"""SQLite anchor for docs/BENCHMARKS.md: the same workload as `cargo bench
--bench sql` (single-row autocommit inserts, 100-row batched inserts, point
selects, filtered full scan), on Python's sqlite3 with WAL and
synchronous=NORMAL. Prints one line per metric."""
import os, random, sqlite3, tempfile, time

N_SINGLE = int(os.environ.get("BENCH_SINGLE", "2000"))
N_BATCH = 20000
d = tempfile.mkdtemp()
con = sqlite3.connect(os.path.join(d, "b.db"), isolation_level=None)
con.execute("PRAGMA journal_mode=WAL")
con.execute("PRAGMA synchronous=NORMAL")
con.execute("CREATE TABLE kv (id INTEGER PRIMARY KEY, v VARCHAR(64))")
t = time.perf_counter()
for i in range(N_SINGLE):
    con.execute("INSERT INTO kv VALUES (?, ?)", (i, f"value-{i}"))
print(f"sqlite single-row autocommit insert: {N_SINGLE / (time.perf_counter() - t):.0f} rows/s")
t = time.perf_counter()
i = N_SINGLE
for _ in range(N_BATCH // 100):
    rows = [(i + j + 1, f"value-{i + j + 1}") for j in range(100)]
    i += 100
    con.execute("BEGIN")
    con.executemany("INSERT INTO kv VALUES (?, ?)", rows)
    con.execute("COMMIT")
print(f"sqlite batched insert (100 rows/txn): {N_BATCH / (time.perf_counter() - t):.0f} rows/s")
total = i
rnd = random.Random(7)
t = time.perf_counter()
for _ in range(20000):
    con.execute("SELECT v FROM kv WHERE id = ?", (rnd.randrange(total),)).fetchall()
print(f"sqlite point select: {20000 / (time.perf_counter() - t):.0f} queries/s")
t = time.perf_counter()
(cnt,) = con.execute("SELECT count(*) FROM kv WHERE v LIKE 'value-%'").fetchone()
print(f"sqlite full scan with filter: {cnt / (time.perf_counter() - t):.0f} rows/s ({cnt} rows)")
