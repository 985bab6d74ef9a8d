"""mysqldump against `tributary serve`, and its dump fed back with `mariadb`.

mysqldump opens with versioned comments (`/*!40100 SET @@SQL_MODE='' */`,
`/*!40103 SET TIME_ZONE=...*/`, ...), then asks for the table list, each
table's CREATE statement and its rows; the dump itself carries the same kind
of versioned comments, LOCK TABLES and INSERT statements."""

import shutil
import subprocess

import pymysql
import pytest

MYSQLDUMP = shutil.which("mysqldump") or shutil.which("mariadb-dump")
MARIADB = shutil.which("mariadb") or shutil.which("mysql")
ROWS = [
    (1, "plain", "2024-02-29", "12.30"),
    (2, "it's \"quoted\"\\back", "1999-12-31", "-0.05"),
    (3, None, None, None),
]


def sql(server, db, *stmts):
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           database=db, autocommit=True, read_timeout=30)
    try:
        with conn.cursor() as c:
            out = None
            for s in stmts:
                c.execute(s[0], s[1]) if isinstance(s, tuple) else c.execute(s)
                out = c.fetchall()
            return out
    finally:
        conn.close()


def dump_args(server, db, *extra):
    if MYSQLDUMP is None or MARIADB is None:
        pytest.fail("mysqldump/mariadb missing (scripts/test-deps.sh installs mariadb-client)")
    args = [MYSQLDUMP, "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot",
            "--no-tablespaces"]
    help_text = subprocess.run([MYSQLDUMP, "--help"], capture_output=True, text=True).stdout
    if "column-statistics" in help_text:  # MySQL's mysqldump; MariaDB's has no such option
        args.append("--column-statistics=0")
    if "skip-ssl" in help_text or "--ssl " in help_text:
        args.append("--skip-ssl")
    return [*args, *extra, db]


def as_text(rows):
    return [tuple(None if v is None else str(v) for v in r) for r in rows]


SCHEMA = (
    "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), d DATE, p DECIMAL(10,2))",
    "CREATE TABLE docs (id INT PRIMARY KEY, owner INT, body TEXT, v VECF32(3))",
    "CREATE INDEX by_owner ON docs (owner)",
    "CREATE UNIQUE INDEX uq_name ON t (name)",
    "CREATE INDEX hv USING hnsw ON docs (v) OP_TYPE 'vector_l2_ops' M 16 EF_CONSTRUCTION 64",
    "CREATE FULLTEXT INDEX ft ON docs (body) ASYNC",
)
DOCS = [(i, i % 3, f"doc {i} about {'rust' if i % 2 else 'go'} engines", f"[{i},{i % 5},{i % 7}]")
        for i in range(1, 41)]
# Queries each index answers (and their brute-force twins must agree).
INDEX_QUERIES = (
    "SELECT id FROM docs ORDER BY l2_distance(v, '[3,1,2]'), id LIMIT 5",
    "SELECT id FROM docs WHERE MATCH(body) AGAINST('rust') ORDER BY id",
    "SELECT id FROM docs WHERE owner = 2 ORDER BY id",
    "SELECT id, name FROM t WHERE name = 'plain'",
)


def restore(server, dump, db):
    sql(server, None, f"CREATE DATABASE {db}")
    return subprocess.run([MARIADB, "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot",
                           "--skip-ssl", "--batch", db],
                          input=dump, capture_output=True, text=True, timeout=60)


def snapshot(server, db):
    """Everything the round trip must keep: rows, SHOW CREATE TABLE, index answers."""
    out = {}
    for table in ("t", "docs"):
        out[table] = as_text(sql(server, db, f"SELECT * FROM {table} ORDER BY id"))
        out["create " + table] = sql(server, db, f"SHOW CREATE TABLE {table}")[0][1]
    for q in INDEX_QUERIES:
        out[q] = as_text(sql(server, db, "SET iscp_wait_fresh = 1", q))
    return out


def test_mysqldump_round_trip(server, dbname):
    """A database with vector, full-text (ASYNC) and secondary indexes, dumped
    by mysqldump and restored by the mariadb CLI into a fresh database: same
    rows, same SHOW CREATE TABLE, and the indexes answer the same queries."""
    sql(server, dbname, *SCHEMA,
        *[("INSERT INTO t VALUES (%s, %s, %s, %s)", r) for r in ROWS],
        *[("INSERT INTO docs VALUES (%s, %s, %s, %s)", r) for r in DOCS])
    want = snapshot(server, dbname)
    assert len(want["docs"]) == len(DOCS) and want[INDEX_QUERIES[1]], want

    # A default dump: LOCK TABLES … READ while dumping, LOCK TABLES …
    # WRITE around each table's rows in the restore.
    r = subprocess.run(dump_args(server, dbname), capture_output=True,
                       text=True, timeout=60)
    assert "40100 SET @@SQL_MODE" not in r.stderr, f"preamble rejected: {r.stderr}"
    assert r.returncode == 0, f"mysqldump failed ({r.returncode}): {r.stderr}"
    dump = r.stdout
    assert "-- Dump completed" in dump, dump[-2000:]
    assert "USING hnsw" in dump and "FULLTEXT KEY `ft`" in dump and "INSERT INTO" in dump, dump
    assert "LOCK TABLES `t` WRITE" in dump and "UNLOCK TABLES" in dump, dump

    restored = dbname + "_r"
    r = restore(server, dump, restored)
    assert r.returncode == 0, f"restoring the dump failed: {r.stderr}\n--- dump ---\n{dump}"
    assert snapshot(server, restored) == want


FK_SCHEMA = (
    # Named so that mysqldump (table name order) creates the children
    # before their parents: the dump's FOREIGN_KEY_CHECKS=0 lets them in.
    "CREATE TABLE b_parent (id INT PRIMARY KEY, code VARCHAR(10), UNIQUE KEY uq_code (code))",
    "CREATE TABLE a_child (id INT PRIMARY KEY, pid INT, code VARCHAR(10),"
    " CONSTRAINT a_to_b FOREIGN KEY (pid) REFERENCES b_parent (id) ON DELETE CASCADE,"
    " FOREIGN KEY (code) REFERENCES b_parent (code) ON UPDATE CASCADE ON DELETE SET NULL)",
    "CREATE TABLE c_tree (id INT PRIMARY KEY, up INT, FOREIGN KEY (up) REFERENCES c_tree (id))",
)


def test_mysqldump_round_trip_with_foreign_keys(server, dbname):
    """Foreign keys survive mysqldump and a restore with the mariadb CLI
    (children created before their parents), and are enforced after it."""
    sql(server, dbname, *FK_SCHEMA,
        "INSERT INTO b_parent VALUES (1, 'one'), (2, 'two')",
        "INSERT INTO a_child VALUES (10, 1, 'one'), (11, 2, 'two'), (12, 2, NULL)",
        "INSERT INTO c_tree VALUES (1, NULL), (2, 1), (3, 2)")
    tables = ("a_child", "b_parent", "c_tree")
    want = {t: (sql(server, dbname, f"SHOW CREATE TABLE {t}")[0][1],
                as_text(sql(server, dbname, f"SELECT * FROM {t} ORDER BY id")))
            for t in tables}
    assert "CONSTRAINT `a_to_b` FOREIGN KEY (`pid`) REFERENCES `b_parent` (`id`) ON DELETE CASCADE" \
        in want["a_child"][0], want
    r = subprocess.run(dump_args(server, dbname), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"mysqldump failed ({r.returncode}): {r.stderr}"
    dump = r.stdout
    assert "FOREIGN_KEY_CHECKS=0" in dump and "CONSTRAINT `a_to_b`" in dump, dump
    restored = dbname + "_r"
    r = restore(server, dump, restored)
    assert r.returncode == 0, f"restoring the dump failed: {r.stderr}\n--- dump ---\n{dump}"
    got = {t: (sql(server, restored, f"SHOW CREATE TABLE {t}")[0][1],
               as_text(sql(server, restored, f"SELECT * FROM {t} ORDER BY id")))
           for t in tables}
    assert got == want
    # Enforced in the restored database: the parent, created after its
    # child, took the keys over.
    with pytest.raises(pymysql.err.IntegrityError) as e:
        sql(server, restored, "INSERT INTO a_child VALUES (13, 9, NULL)")
    assert e.value.args[0] == 1452
    sql(server, restored, "DELETE FROM b_parent WHERE id = 2")
    assert as_text(sql(server, restored, "SELECT id FROM a_child ORDER BY id")) == [("10",)]
    with pytest.raises(pymysql.err.IntegrityError) as e:
        sql(server, restored, "DELETE FROM c_tree WHERE id = 1")
    assert e.value.args[0] == 1451


def test_mysqldump_round_trip_with_a_view(server, dbname):
    """A view is dumped as a view (mysqldump tells it from a table by SHOW
    CREATE TABLE's `View` column, then reads SHOW FIELDS for its placeholder)
    and restored as one: same definition, same answers, no rows of its own."""
    sql(server, dbname, "CREATE TABLE t (id INT PRIMARY KEY, a VARCHAR(10))",
        "INSERT INTO t VALUES (1, 'x'), (2, 'y'), (3, 'z')",
        "CREATE VIEW v (k, label) AS SELECT id, a FROM t WHERE id > 1")
    r = subprocess.run(dump_args(server, dbname), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"mysqldump failed ({r.returncode}): {r.stderr}"
    dump = r.stdout
    assert "CREATE TABLE `v`" not in dump and "INSERT INTO `v`" not in dump, dump
    assert "VIEW `v` (`k`,`label`) AS SELECT id, a FROM t WHERE id > 1" in dump, dump
    restored = dbname + "_r"
    r = restore(server, dump, restored)
    assert r.returncode == 0, f"restoring the dump failed: {r.stderr}\n--- dump ---\n{dump}"
    assert sql(server, restored, "SHOW FULL TABLES") == (("t", "BASE TABLE"), ("v", "VIEW"))
    assert sql(server, restored, "SHOW CREATE VIEW v")[0][1] == \
        sql(server, dbname, "SHOW CREATE VIEW v")[0][1]
    assert as_text(sql(server, restored, "SELECT k, label FROM v ORDER BY k")) == \
        [("2", "y"), ("3", "z")]


BINARY_ROWS = [
    (bytes.fromhex("6ccd780cbaba102695645b8c656024db"), bytes(range(256)), b"\x00'\\\"\n", b"x"),
    (b"\xff" * 16, b"", b"", None),
    (b"\x00" * 16, None, bytes(range(255, -1, -1)), b"\x80\x00"),
]


@pytest.mark.parametrize("hex_blob", [False, True], ids=["escaped", "hex-blob"])
def test_mysqldump_round_trip_binary_columns(server, dbname, hex_blob):
    """Binary strings (BINARY(16) primary key, BLOB, VARBINARY, TINYBLOB)
    with every byte value survive mysqldump — its escaped raw bytes by
    default, `0x…` with --hex-blob — and a restore with the mariadb CLI."""
    sql(server, dbname,
        "CREATE TABLE bin (id BINARY(16) PRIMARY KEY, b BLOB, vb VARBINARY(300), "
        "tb TINYBLOB DEFAULT NULL)",
        "CREATE INDEX by_vb ON bin (vb)",
        *[("INSERT INTO bin VALUES (%s, %s, %s, %s)", r) for r in BINARY_ROWS])
    want = (sql(server, dbname, "SHOW CREATE TABLE bin")[0][1],
            sql(server, dbname, "SELECT * FROM bin ORDER BY id"))
    assert [r[0] for r in want[1]] == sorted(r[0] for r in BINARY_ROWS)
    r = subprocess.run(dump_args(server, dbname, *(["--hex-blob"] if hex_blob else [])),
                       capture_output=True, timeout=60)
    assert r.returncode == 0, f"mysqldump failed ({r.returncode}): {r.stderr}"
    dump = r.stdout
    assert (b"0x6CCD780C" in dump) == hex_blob, dump[-3000:]
    restored = dbname + "_r"
    sql(server, None, f"CREATE DATABASE {restored}")
    r = subprocess.run([MARIADB, "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot",
                        "--skip-ssl", "--batch", "--binary-mode", restored],
                       input=dump, capture_output=True, timeout=60)
    assert r.returncode == 0, f"restoring the dump failed: {r.stderr}"
    got = (sql(server, restored, "SHOW CREATE TABLE bin")[0][1],
           sql(server, restored, "SELECT * FROM bin ORDER BY id"))
    assert got == want
    assert sql(server, restored, ("SELECT HEX(id) FROM bin WHERE vb = %s",
                                  (bytes(range(255, -1, -1)),))) == (("0" * 32,),)
