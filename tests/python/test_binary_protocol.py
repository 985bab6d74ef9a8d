"""mysql-connector-python prepared statements (binary protocol)."""

import datetime

import mysql.connector
import pytest


def connect(server, db):
    return mysql.connector.connect(
        host=server.host, port=server.port, user="root", password="",
        database=db, autocommit=True, use_pure=True,
    )


def test_prepared_insert_and_select(server, dbname):
    conn = connect(server, dbname)
    c = conn.cursor(prepared=True)
    c.execute("CREATE TABLE p (id INT PRIMARY KEY, name VARCHAR(40), score DOUBLE)")
    rows = [(1, "O'Brien", 1.25), (2, "back\\slash", None), (3, None, -2.0)]
    for r in rows:
        c.execute("INSERT INTO p VALUES (?, ?, ?)", r)
    c.execute("SELECT id, name, score FROM p WHERE id >= ? ORDER BY id", (1,))
    got = [tuple(x) for x in c.fetchall()]
    assert got == [(1, "O'Brien", 1.25), (2, "back\\slash", None), (3, None, -2.0)]
    c.execute("SELECT name FROM p WHERE name = ?", ("O'Brien",))
    assert [tuple(x) for x in c.fetchall()] == [("O'Brien",)]
    c.close()
    conn.close()


def test_prepared_error_keeps_connection(server, dbname):
    conn = connect(server, dbname)
    c = conn.cursor(prepared=True)
    with pytest.raises(mysql.connector.Error) as e:
        c.execute("SELECT * FROM missing WHERE id = ?", (1,))
    assert e.value.errno == 1146
    c.execute("SELECT ? + 1", (41,))
    assert [tuple(x) for x in c.fetchall()] == [(42,)]
    c.close()
    conn.close()


def test_prepared_datetime_param(server, dbname):
    conn = connect(server, dbname)
    c = conn.cursor(prepared=True)
    c.execute("CREATE TABLE d (id INT PRIMARY KEY, at DATETIME)")
    ts = datetime.datetime(2026, 12, 2, 16, 25, 41)
    c.execute("INSERT INTO d VALUES (?, ?)", (1, ts))
    c.execute("SELECT at FROM d WHERE id = ?", (1,))
    assert [tuple(x) for x in c.fetchall()] == [(ts,)]
    c.close()
    conn.close()
