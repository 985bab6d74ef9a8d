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


# Statements of a mariadb-dump file that the server rejects today and that are
# outside the protocol work: table locks and MyISAM-era key toggles.
OUT_OF_SCOPE_RESTORE = (
    "doesn't yet support 'LOCK TABLES",
    "doesn't yet support 'UNLOCK TABLES",
    "unsupported ALTER TABLE action near 'DISABLE'",
)


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


def dump_args(server, db):
    if MYSQLDUMP is None or MARIADB is None:
        pytest.fail("mysqldump/mariadb missing (scripts/test-deps.sh installs mariadb-client)")
    args = [MYSQLDUMP, "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot",
            "--skip-lock-tables", "--no-tablespaces"]
    help_text = subprocess.run([MYSQLDUMP, "--help"], capture_output=True, text=True).stdout
    if "column-statistics" in help_text:  # MySQL's mysqldump; MariaDB's has no such option
        args.append("--column-statistics=0")
    if "skip-ssl" in help_text or "--ssl " in help_text:
        args.append("--skip-ssl")
    return [*args, db]


def as_text(rows):
    return [tuple(None if v is None else str(v) for v in r) for r in rows]


def test_mysqldump_round_trip(server, dbname):
    sql(server, dbname,
        "CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(40), d DATE, p DECIMAL(10,2))",
        *[("INSERT INTO t VALUES (%s, %s, %s, %s)", r) for r in ROWS])
    want = as_text(sql(server, dbname, "SELECT id, name, d, p FROM t ORDER BY id"))

    r = subprocess.run(dump_args(server, dbname), capture_output=True, text=True, timeout=60)
    assert "40100 SET @@SQL_MODE" not in r.stderr, f"preamble rejected: {r.stderr}"
    if r.returncode != 0 and "FROM INFORMATION_SCHEMA." in r.stderr \
            and "Unknown database 'information_schema'" in r.stderr:
        # Past the preamble; what stops it is a catalogue the server lacks.
        pytest.xfail("mysqldump reads INFORMATION_SCHEMA.TABLES (engine, table_type) per "
                     "table and the server has no information_schema: " + r.stderr.strip())
    assert r.returncode == 0, f"mysqldump failed ({r.returncode}): {r.stderr}"
    dump = r.stdout
    assert "-- Dump completed" in dump, dump[-2000:]
    assert "CREATE TABLE" in dump and "INSERT INTO" in dump, dump

    restored = dbname + "_r"
    sql(server, None, f"CREATE DATABASE {restored}")
    r = subprocess.run([MARIADB, "--no-defaults", "-h127.0.0.1", f"-P{server.port}", "-uroot",
                        "--skip-ssl", "--batch", restored],
                       input=dump, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        for marker in OUT_OF_SCOPE_RESTORE:
            if marker in r.stderr:
                pytest.xfail(f"restoring the dump stops at a statement the server does not "
                             f"support yet ({marker!r}): {r.stderr.strip()}")
    assert r.returncode == 0, f"restoring the dump failed: {r.stderr}\n--- dump ---\n{dump}"
    got = as_text(sql(server, restored, "SELECT id, name, d, p FROM t ORDER BY id"))
    assert got == want
