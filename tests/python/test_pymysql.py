"""PyMySQL (text protocol) round trips against `tributary serve`."""

import pymysql
import pytest


def connect(server, db=None, user="root", password="", **kw):
    return pymysql.connect(
        host=server.host, port=server.port, user=user, password=password,
        database=db, autocommit=True, **kw
    )


def test_round_trip_with_nulls(server, dbname):
    conn = connect(server, dbname)
    with conn.cursor() as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20), score DOUBLE)")
        assert c.execute("INSERT INTO t VALUES (1, 'a', 1.5), (2, NULL, NULL)") == 2
        c.execute("SELECT id, name, score FROM t ORDER BY id")
        assert [d[0] for d in c.description] == ["id", "name", "score"]
        assert c.fetchall() == ((1, "a", 1.5), (2, None, None))
        c.execute("UPDATE t SET name = 'b' WHERE id = 2")
        assert c.rowcount == 1
        c.execute("SELECT name FROM t WHERE id = 2")
        assert c.fetchone() == ("b",)
    conn.close()


def test_errors_keep_connection_usable(server, dbname):
    conn = connect(server, dbname)
    with conn.cursor() as c:
        with pytest.raises(pymysql.err.ProgrammingError) as e:
            c.execute("SELECT * FROM no_such_table")
        assert e.value.args[0] == 1146
        with pytest.raises(pymysql.err.ProgrammingError) as e:
            c.execute("SELEKT 1")
        assert e.value.args[0] == 1064
        c.execute("CREATE TABLE k (id INT PRIMARY KEY)")
        c.execute("INSERT INTO k VALUES (1)")
        with pytest.raises(pymysql.err.IntegrityError) as e:
            c.execute("INSERT INTO k VALUES (1)")
        assert e.value.args[0] == 1062
        c.execute("SELECT COUNT(*) FROM k")
        assert c.fetchone() == (1,)
    conn.close()


def test_comment_only_queries(server, dbname):
    # A dump's MariaDB-only lines and statements gated to newer versions run
    # nothing and succeed; an empty query is still 1065.
    conn = connect(server, dbname)
    with conn.cursor() as c:
        c.execute("/*M!100616 SET @OLD_NOTE_VERBOSITY=@@NOTE_VERBOSITY, NOTE_VERBOSITY=0 */")
        c.execute("/*!99999 SELECT 1 */")
        c.execute("/*!40101 SET @x = 7 */")
        c.execute("SELECT @x")
        assert c.fetchone() == (7,)
        with pytest.raises(pymysql.err.MySQLError) as e:
            c.execute("   ")
        assert e.value.args[0] == 1065
    conn.close()


def test_transaction_commit_and_rollback(server, dbname):
    conn = connect(server, dbname)
    with conn.cursor() as c:
        c.execute("CREATE TABLE tx (id INT PRIMARY KEY)")
        c.execute("BEGIN")
        c.execute("INSERT INTO tx VALUES (1)")
        c.execute("COMMIT")
        c.execute("BEGIN")
        c.execute("INSERT INTO tx VALUES (2)")
        c.execute("ROLLBACK")
        c.execute("SELECT id FROM tx ORDER BY id")
        assert c.fetchall() == ((1,),)
    conn.close()


def test_multi_statement_query(server, dbname):
    conn = connect(server, dbname, client_flag=pymysql.constants.CLIENT.MULTI_STATEMENTS)
    with conn.cursor() as c:
        c.execute("CREATE TABLE m (id INT PRIMARY KEY); INSERT INTO m VALUES (1),(2); SELECT id FROM m ORDER BY id")
        # first result: CREATE (no rows)
        assert c.description is None
        assert c.nextset()
        assert c.rowcount == 2
        assert c.nextset()
        assert c.fetchall() == ((1,), (2,))
        assert not c.nextset()
        c.execute("SELECT 1")
        assert c.fetchone() == (1,)
    conn.close()


def test_auth_alice(server):
    conn = connect(server, user="alice", password="secret")
    with conn.cursor() as c:
        c.execute("SELECT 1")
        assert c.fetchone() == (1,)
    conn.close()
    with pytest.raises(pymysql.err.OperationalError) as e:
        connect(server, user="alice", password="wrong")
    assert e.value.args[0] == 1045
    assert "Access denied" in e.value.args[1]
    with pytest.raises(pymysql.err.OperationalError) as e:
        connect(server, user="root", password="nope")
    assert e.value.args[0] == 1045


def test_init_db(server, dbname):
    conn = connect(server)
    conn.select_db(dbname)
    with conn.cursor() as c:
        c.execute("CREATE TABLE i (id INT PRIMARY KEY)")
        c.execute("INSERT INTO i VALUES (7)")
    conn.close()
    conn = connect(server, dbname)
    with conn.cursor() as c:
        c.execute("SELECT id FROM i")
        assert c.fetchone() == (7,)
    conn.close()


def test_unknown_database_on_connect(server):
    with pytest.raises(pymysql.err.OperationalError) as e:
        connect(server, db="no_such_db_xyz")
    assert e.value.args[0] == 1049


@pytest.fixture(scope="module")
def limited_server():
    """A second server with a 1 MiB packet limit and 3 connections."""
    import os
    import tempfile

    from conftest import start_server, stop_server, Server

    with tempfile.TemporaryDirectory(prefix="tributary-pytest-small-") as d:
        proc, port, _ = start_server(
            os.path.join(d, "data"),
            ["--max-allowed-packet", str(1 << 20), "--max-connections", "3"],
            admin=False,
        )
        yield Server(proc, port, None, d)
        assert stop_server(proc) == 0


def test_packet_too_large_closes_connection(limited_server):
    conn = connect(limited_server, max_allowed_packet=64 << 20)
    big = "SELECT '" + "x" * (2 << 20) + "'"
    with pytest.raises(pymysql.err.OperationalError) as e:
        with conn.cursor() as c:
            c.execute(big)
    # MySQL semantics: error 1153, then the server closes the connection.
    # (2006/2013 if the client saw the close before reading the error.)
    assert e.value.args[0] in (1153, 2006, 2013), e.value.args
    conn.close()
    # A query under the limit works on a new connection.
    conn = connect(limited_server)
    with conn.cursor() as c:
        c.execute("SELECT '" + "y" * 1000 + "'")
        assert c.fetchone() == ("y" * 1000,)
    conn.close()


def test_too_many_connections(limited_server):
    held = [connect(limited_server) for _ in range(3)]
    try:
        with pytest.raises(pymysql.err.OperationalError) as e:
            connect(limited_server)
        assert e.value.args[0] == 1040
    finally:
        for c in held:
            c.close()
    # A slot frees up once a connection closes (the server notices the close
    # asynchronously, so retry until a deadline).
    import time

    deadline = time.monotonic() + 10
    while True:
        try:
            conn = connect(limited_server)
            break
        except pymysql.err.OperationalError as e:
            if e.args[0] != 1040 or time.monotonic() > deadline:
                raise
    conn.close()


def test_found_rows_capability(server, dbname):
    """CLIENT_FOUND_ROWS (SQLAlchemy sets it): an UPDATE reports the rows it
    matched, also those it left unchanged, and an upsert that changes
    nothing counts 1; without the flag both count only changes."""
    from pymysql.constants import CLIENT

    def counts(flag):
        conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                               database=dbname, autocommit=True, client_flag=flag)
        try:
            with conn.cursor() as c:
                c.execute("CREATE TABLE IF NOT EXISTS fr (id INT PRIMARY KEY, v INT)")
                c.execute("REPLACE INTO fr VALUES (1, 5), (2, 5)")
                same = c.execute("UPDATE fr SET v = 5")
                one = c.execute("UPDATE fr SET v = 6 WHERE id = 1")
                upsert = c.execute("INSERT INTO fr VALUES (2, 0) ON DUPLICATE KEY UPDATE v = v")
                return same, one, upsert
        finally:
            conn.close()

    assert counts(0) == (0, 1, 0)
    assert counts(CLIENT.FOUND_ROWS) == (2, 1, 1)


def test_function_results_have_numeric_types(server, dbname):
    """Drivers convert by the column type the server declares: functions
    that return one of their numeric arguments (COALESCE over SUM, IF,
    GREATEST, ROUND, MOD, …) arrive as numbers, not strings (SUM of an INT
    is a DECIMAL, as in MySQL)."""
    import decimal

    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           database=dbname, autocommit=True)
    try:
        with conn.cursor() as c:
            c.execute("CREATE TABLE nums (id INT PRIMARY KEY, n INT, f DOUBLE)")
            c.execute("INSERT INTO nums VALUES (1, 2, 1.5), (2, NULL, NULL)")
            c.execute("SELECT COALESCE(SUM(n), 0), IFNULL(MAX(f), 0), IF(COUNT(*) > 1, 1, 0), "
                      "GREATEST(1, 7, 3), LEAST(2.5, 1), ROUND(7.25, 1), ABS(-4), MOD(7, 3), "
                      "NULLIF(5, 6), COALESCE(NULL, 'x'), FLOOR(2.5), YEAR('2024-05-06') FROM nums")
            row = c.fetchone()
    finally:
        conn.close()
    # 2.5 and 7.25 are DECIMAL literals: LEAST and ROUND keep the type.
    assert row == (2, 1.5, 1, 7, decimal.Decimal("1.0"), decimal.Decimal("7.3"), 4, 1, 5, "x", 2,
                   2024), row
    assert [type(v) for v in row] == [decimal.Decimal, float, int, int, decimal.Decimal,
                                      decimal.Decimal, int, int, int, str, int, int], row


def test_doubles_with_fixed_decimals_print_them(server, dbname):
    """MySQL types some DOUBLE results with fixed decimals and its text
    protocol prints them (PI() is 3.141593, AVG of ROUND(f) has 4); the
    value itself is not rounded. Answers as MariaDB 10.11 gives them."""
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           database=dbname, autocommit=True, conv={})

    def row(c):
        return tuple(v.decode() if isinstance(v, bytes) else v for v in c.fetchone())

    with conn.cursor() as c:
        c.execute("CREATE TABLE fd (id INT PRIMARY KEY, f DOUBLE)")
        c.execute("INSERT INTO fd VALUES (1, 0.5), (2, 2.5), (3, -1.25)")
        c.execute("SELECT PI(), ROUND(3.14159e0) + 0.2 / 12345678.99, ROUND(-0.4e0), "
                  "ROUND(2.5e0, 2), -3 / TRUNCATE(LOG10(42), 2), 1e0 + 0.5, CEIL(1.5e0) + 0.5, "
                  "CAST(PI() AS CHAR), PI() * 1e0 = PI()")
        assert row(c) == ("3.141593", "3.00000", "0", "2.50", "-1.851852", "1.5", "2.5",
                          "3.141593", "1")
        c.execute("SELECT AVG(ROUND(f)), SUM(f), AVG(f) FROM fd")
        assert row(c) == ("0.3333", "1.75", "0.5833333333333334")
    conn.close()
