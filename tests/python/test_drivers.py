"""Transaction handling, types and errors through each Python MySQL driver.

The same scenarios run through PyMySQL, mysqlclient (MySQLdb) and
mysql-connector-python (pure Python and, when built, its C extension). Each
driver decides from the server status flags of the OK packets whether
autocommit is on and whether a transaction is open; a server that sends
status 0 everywhere makes PyMySQL and mysqlclient skip `SET autocommit=0`,
so a `rollback()` silently keeps the row. The checks below look at the data
from a second, independent connection, not only at what the driver believes.
"""

import datetime
import decimal

import pymysql
import pytest

SERVER_STATUS_IN_TRANS = 0x0001


class Driver:
    """A thin adapter over one DB-API driver's connect/introspection."""

    name = "?"
    Error = Exception

    def connect(self, server, db=None, autocommit=None):
        raise NotImplementedError

    def autocommit_on(self, conn):
        """The driver's own notion of the session's autocommit mode."""
        raise NotImplementedError

    def in_transaction(self, conn):
        """The driver's notion of an open transaction, or None if it has none."""
        return None

    def set_autocommit(self, conn, on):
        conn.autocommit(on)

    def errno(self, exc):
        return exc.args[0]

    def select_db(self, conn, db):
        conn.select_db(db)


class PyMySQLDriver(Driver):
    name = "pymysql"
    Error = pymysql.MySQLError

    def connect(self, server, db=None, autocommit=None):
        kw = {} if autocommit is None else {"autocommit": autocommit}
        return pymysql.connect(host=server.host, port=server.port, user="root",
                               password="", database=db, read_timeout=30, **kw)

    def autocommit_on(self, conn):
        return conn.get_autocommit()

    def in_transaction(self, conn):
        return bool(conn.server_status & SERVER_STATUS_IN_TRANS)


class MySQLdbDriver(Driver):
    name = "mysqldb"

    def __init__(self):
        import MySQLdb

        self.mod = MySQLdb
        self.Error = MySQLdb.MySQLError

    def connect(self, server, db=None, autocommit=None):
        kw = {} if autocommit is None else {"autocommit": autocommit}
        if db is not None:
            kw["database"] = db
        return self.mod.connect(host=server.host, port=server.port, user="root",
                                password="", read_timeout=30, **kw)

    def autocommit_on(self, conn):
        # mysql_get_server_status() & SERVER_STATUS_AUTOCOMMIT in libmariadb
        return conn.get_autocommit()


class ConnectorDriver(Driver):
    def __init__(self, use_pure):
        import mysql.connector

        self.mod = mysql.connector
        self.use_pure = use_pure
        self.name = "connector-pure" if use_pure else "connector-c"
        self.Error = mysql.connector.Error
        if not use_pure and not mysql.connector.HAVE_CEXT:
            pytest.skip("mysql-connector-python C extension not available")

    def connect(self, server, db=None, autocommit=None):
        kw = {} if autocommit is None else {"autocommit": autocommit}
        if db is not None:
            kw["database"] = db
        return self.mod.connect(host=server.host, port=server.port, user="root",
                                password="", use_pure=self.use_pure,
                                connection_timeout=30, **kw)

    def autocommit_on(self, conn):
        # the pure driver asks the server (SELECT @@session.autocommit), the
        # C extension reads libmysqlclient's copy of the status flags.
        return bool(conn.autocommit)

    def in_transaction(self, conn):
        return conn.in_transaction

    def set_autocommit(self, conn, on):
        conn.autocommit = on

    def errno(self, exc):
        return exc.errno

    def select_db(self, conn, db):
        conn.database = db


@pytest.fixture(params=["pymysql", "mysqldb", "connector-pure", "connector-c"])
def driver(request):
    if request.param == "pymysql":
        return PyMySQLDriver()
    if request.param == "mysqldb":
        return MySQLdbDriver()
    return ConnectorDriver(use_pure=request.param == "connector-pure")


def observer(server, db):
    """An independent autocommit connection used to look at committed data."""
    return pymysql.connect(host=server.host, port=server.port, user="root",
                           password="", database=db, autocommit=True, read_timeout=30)


def committed_ids(server, db, table="tx"):
    conn = observer(server, db)
    try:
        with conn.cursor() as c:
            c.execute(f"SELECT id FROM {table} ORDER BY id")
            return [r[0] for r in c.fetchall()]
    finally:
        conn.close()


def setup_table(server, db, ddl):
    conn = observer(server, db)
    try:
        with conn.cursor() as c:
            c.execute(ddl)
    finally:
        conn.close()


def test_default_is_not_autocommit_and_rollback_discards(server, dbname, driver):
    """PEP 249: a new connection is not in autocommit mode; rollback() undoes."""
    setup_table(server, dbname, "CREATE TABLE tx (id INT PRIMARY KEY)")
    conn = driver.connect(server, dbname)
    try:
        assert driver.autocommit_on(conn) is False, \
            f"{driver.name} believes autocommit is on right after connect"
        cur = conn.cursor()
        assert driver.in_transaction(conn) in (None, False)
        cur.execute("INSERT INTO tx VALUES (1)")
        assert driver.in_transaction(conn) in (None, True), \
            f"{driver.name} does not see the open transaction after an INSERT"
        assert committed_ids(server, dbname) == [], \
            "an uncommitted INSERT is visible to another session (autocommit still on?)"
        conn.rollback()
        assert driver.in_transaction(conn) in (None, False)
        assert committed_ids(server, dbname) == [], "rollback() did not discard the row"
        cur.execute("SELECT COUNT(*) FROM tx")
        assert cur.fetchone()[0] == 0
        conn.rollback()  # end the read's transaction

        cur.execute("INSERT INTO tx VALUES (2)")
        assert driver.in_transaction(conn) in (None, True)
        conn.commit()
        assert driver.in_transaction(conn) in (None, False)
        assert committed_ids(server, dbname) == [2], "commit() did not keep the row"
        cur.close()
    finally:
        conn.close()


def test_autocommit_toggle(server, dbname, driver):
    setup_table(server, dbname, "CREATE TABLE tx (id INT PRIMARY KEY)")
    conn = driver.connect(server, dbname, autocommit=True)
    try:
        assert driver.autocommit_on(conn) is True
        cur = conn.cursor()
        cur.execute("INSERT INTO tx VALUES (1)")
        assert driver.in_transaction(conn) in (None, False)
        assert committed_ids(server, dbname) == [1], "autocommit INSERT not committed"

        driver.set_autocommit(conn, False)
        assert driver.autocommit_on(conn) is False
        cur.execute("INSERT INTO tx VALUES (2)")
        assert driver.in_transaction(conn) in (None, True)
        conn.rollback()
        assert committed_ids(server, dbname) == [1], "rollback() after autocommit(False) kept the row"
        cur.execute("INSERT INTO tx VALUES (3)")
        conn.commit()
        assert committed_ids(server, dbname) == [1, 3]

        driver.set_autocommit(conn, True)
        assert driver.autocommit_on(conn) is True
        cur.execute("INSERT INTO tx VALUES (4)")
        assert committed_ids(server, dbname) == [1, 3, 4]
        cur.close()
    finally:
        conn.close()


def test_explicit_begin_in_autocommit_mode(server, dbname, driver):
    setup_table(server, dbname, "CREATE TABLE tx (id INT PRIMARY KEY)")
    conn = driver.connect(server, dbname, autocommit=True)
    try:
        cur = conn.cursor()
        cur.execute("START TRANSACTION")
        assert driver.in_transaction(conn) in (None, True)
        cur.execute("INSERT INTO tx VALUES (1)")
        assert driver.in_transaction(conn) in (None, True)
        cur.execute("ROLLBACK")
        assert driver.in_transaction(conn) in (None, False)
        assert committed_ids(server, dbname) == []
        cur.close()
    finally:
        conn.close()


def test_last_insert_id_is_int(server, dbname, driver):
    setup_table(server, dbname,
                "CREATE TABLE a (id BIGINT AUTO_INCREMENT PRIMARY KEY, v INT)")
    conn = driver.connect(server, dbname, autocommit=True)
    try:
        cur = conn.cursor()
        cur.execute("INSERT INTO a (v) VALUES (10)")
        assert cur.lastrowid == 1
        cur.execute("INSERT INTO a (v) VALUES (20)")
        assert cur.lastrowid == 2
        cur.execute("SELECT LAST_INSERT_ID()")
        (v,) = cur.fetchone()
        assert type(v) is int and v == 2, repr(v)
        cur.close()
    finally:
        conn.close()


def check_date_decimal(rows):
    assert len(rows) == 2
    d, p = rows[0]
    assert type(d) is datetime.date, f"DATE decoded as {type(d).__name__}: {d!r}"
    assert d == datetime.date(2024, 2, 29)
    assert isinstance(p, decimal.Decimal), f"DECIMAL decoded as {type(p).__name__}: {p!r}"
    assert p == decimal.Decimal("12.30") and p.as_tuple().exponent == -2, repr(p)
    assert rows[1] == (None, None)


def test_date_and_decimal_types(server, dbname, driver):
    setup_table(server, dbname, "CREATE TABLE dd (id INT PRIMARY KEY, d DATE, p DECIMAL(10,2))")
    conn = driver.connect(server, dbname, autocommit=True)
    try:
        cur = conn.cursor()
        cur.execute("INSERT INTO dd VALUES (1, '2024-02-29', 12.3), (2, NULL, NULL)")
        cur.execute("SELECT d, p FROM dd ORDER BY id")
        check_date_decimal([tuple(r) for r in cur.fetchall()])
        cur.close()
    finally:
        conn.close()


def test_date_and_decimal_types_prepared(server, dbname):
    """The binary protocol (COM_STMT_EXECUTE) decodes the same types."""
    drv = ConnectorDriver(use_pure=True)
    setup_table(server, dbname, "CREATE TABLE dd (id INT PRIMARY KEY, d DATE, p DECIMAL(10,2))")
    conn = drv.connect(server, dbname, autocommit=True)
    try:
        cur = conn.cursor(prepared=True)
        cur.execute("INSERT INTO dd VALUES (?, ?, ?)", (1, datetime.date(2024, 2, 29), decimal.Decimal("12.30")))
        cur.execute("INSERT INTO dd VALUES (?, ?, ?)", (2, None, None))
        cur.execute("SELECT d, p FROM dd WHERE id >= ? ORDER BY id", (1,))
        check_date_decimal([tuple(r) for r in cur.fetchall()])
        cur.close()
    finally:
        conn.close()


def test_error_codes_unwrapped(server, dbname, driver):
    setup_table(server, dbname, "CREATE TABLE k (id INT PRIMARY KEY)")
    conn = driver.connect(server, dbname, autocommit=True)
    try:
        cur = conn.cursor()
        with pytest.raises(driver.Error) as e:
            cur.execute("SELECT * FROM no_such_table")
        assert driver.errno(e.value) == 1146, e.value
        with pytest.raises(driver.Error) as e:
            cur.execute("SELEKT 1")
        assert driver.errno(e.value) == 1064, e.value
        cur.execute("INSERT INTO k VALUES (1)")
        with pytest.raises(driver.Error) as e:
            cur.execute("INSERT INTO k VALUES (1)")
        assert driver.errno(e.value) == 1062, e.value
        with pytest.raises(driver.Error) as e:
            driver.select_db(conn, "no_such_db_xyz")
        assert driver.errno(e.value) == 1049, e.value
        cur.close()
        cur = conn.cursor()
        cur.execute("SELECT COUNT(*) FROM k")
        assert cur.fetchone()[0] == 1, "connection unusable after errors"
        cur.close()
    finally:
        conn.close()


def test_connect_without_database(server, dbname, driver):
    setup_table(server, dbname, "CREATE TABLE w (id INT PRIMARY KEY)")
    conn = driver.connect(server, autocommit=True)
    try:
        cur = conn.cursor()
        cur.execute("SELECT 1")
        assert cur.fetchone()[0] == 1
        with pytest.raises(driver.Error) as e:
            cur.execute("SELECT * FROM w")
        assert driver.errno(e.value) == 1046, e.value  # No database selected
        cur.execute(f"INSERT INTO {dbname}.w VALUES (1)")
        cur.close()
        driver.select_db(conn, dbname)
        cur = conn.cursor()
        cur.execute("SELECT id FROM w")
        assert [tuple(r) for r in cur.fetchall()] == [(1,)]
        cur.close()
    finally:
        conn.close()


def test_ddl_commits_implicitly(server, dbname, driver):
    """MySQL: DDL ends the open transaction with an implicit commit (before
    and after the statement), so neither the DDL nor earlier writes are lost
    when a non-autocommit connection closes without commit()."""
    setup_table(server, dbname, "CREATE TABLE tx (id INT PRIMARY KEY)")
    conn = driver.connect(server, dbname)
    try:
        cur = conn.cursor()
        cur.execute("INSERT INTO tx VALUES (1)")
        cur.execute("CREATE TABLE made_in_tx (id INT PRIMARY KEY)")
        assert driver.in_transaction(conn) in (None, False)
        cur.execute(f"CREATE DATABASE {dbname}_ddl")
        cur.close()
    finally:
        conn.close()  # no commit()
    assert committed_ids(server, dbname) == [1], "the INSERT before DDL was not committed"
    assert committed_ids(server, dbname, "made_in_tx") == []
    conn = observer(server, None)
    try:
        with conn.cursor() as c:
            c.execute("SHOW DATABASES")
            assert (f"{dbname}_ddl",) in c.fetchall(), "CREATE DATABASE was rolled back"
    finally:
        conn.close()
