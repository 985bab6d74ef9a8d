"""Binary strings (BINARY / VARBINARY / BLOB) through real drivers: every
byte value 0..255 round-trips through PyMySQL's and mysqlclient's text
protocol (their `_binary'…'` literals carry the raw bytes) and through
mysql-connector's prepared statements (binary protocol, bytes parameters),
and comes back as `bytes` (charset 63 in the column definition). Bytes that
are not UTF-8 into a text column are still refused with 1366."""

import MySQLdb
import mysql.connector
import pymysql
import pytest

ALL = bytes(range(256))
# Every byte, alone, and the quoting / escaping hazards of SQL text.
VALUES = [ALL, ALL[::-1], b"", b"\x00", b"'", b"\\", b"\\'\x00\"\x1a\r\n", bytes([0xC3, 0x28]),
          "é".encode(), b"\xff" * 300]


def pymysql_conn(server, db):
    return pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           database=db, autocommit=True)


def connector_conn(server, db):
    return mysql.connector.connect(host=server.host, port=server.port, user="root",
                                   password="", database=db, autocommit=True, use_pure=True)


def test_all_bytes_round_trip_text_protocol(server, dbname):
    conn = pymysql_conn(server, dbname)
    with conn.cursor() as c:
        c.execute("CREATE TABLE bt (id INT PRIMARY KEY, b BLOB, vb VARBINARY(300), "
                  "fx BINARY(4), k VARBINARY(400))")
        c.execute("CREATE UNIQUE INDEX uk ON bt (k)")
        for i, v in enumerate(VALUES):
            c.execute("INSERT INTO bt VALUES (%s, %s, %s, %s, %s)",
                      (i, v, v, v[:4], v + bytes([i])))
        c.execute("SELECT id, b, vb, fx, k FROM bt ORDER BY id")
        rows = c.fetchall()
        assert [r[0] for r in rows] == list(range(len(VALUES)))
        for (i, b, vb, fx, k), v in zip(rows, VALUES):
            assert isinstance(b, bytes) and isinstance(vb, bytes), (type(b), type(vb))
            assert b == v and vb == v and k == v + bytes([i])
            assert fx == v[:4].ljust(4, b"\x00")
        # Looked up through the unique index by bytes; ordered as memcmp.
        for i, v in enumerate(VALUES):
            c.execute("SELECT id FROM bt WHERE k = %s", (v + bytes([i]),))
            assert c.fetchall() == ((i,),)
        c.execute("SELECT id FROM bt ORDER BY k")
        got = [r[0] for r in c.fetchall()]
        assert got == sorted(range(len(VALUES)), key=lambda i: VALUES[i] + bytes([i]))
        c.execute("SELECT HEX(b), LENGTH(b) FROM bt WHERE id = 0")
        assert c.fetchall() == ((ALL.hex().upper(), 256),)
        # Functions of bytes come back as bytes too.
        c.execute("SELECT UNHEX('00ff'), CONCAT(_binary'a', X'00'), UUID_TO_BIN(%s)",
                  ("6ccd780c-baba-1026-9564-5b8c656024db",))
        assert c.fetchall() == ((b"\x00\xff", b"a\x00",
                                 bytes.fromhex("6ccd780cbaba102695645b8c656024db")),)
        # Bytes that are not UTF-8 into a text column: 1366, nothing stored.
        c.execute("CREATE TABLE tt (id INT PRIMARY KEY, s TEXT)")
        with pytest.raises(pymysql.err.MySQLError) as e:
            c.execute("INSERT INTO tt VALUES (1, %s)", (b"\xff\xfe",))
        assert e.value.args[0] == 1366, e.value.args
        c.execute("INSERT INTO tt VALUES (2, %s)", ("é".encode(),))
        c.execute("SELECT id, s FROM tt")
        assert c.fetchall() == ((2, "é"),)
    conn.close()


def test_all_bytes_round_trip_prepared(server, dbname):
    conn = connector_conn(server, dbname)
    c = conn.cursor(prepared=True)
    c.execute("CREATE TABLE bp (id INT PRIMARY KEY, b LONGBLOB, vb VARBINARY(300))")
    for i, v in enumerate(VALUES):
        c.execute("INSERT INTO bp VALUES (?, ?, ?)", (i, v, v))
    c.execute("SELECT id, b, vb FROM bp WHERE id >= ? ORDER BY id", (0,))
    rows = c.fetchall()
    assert len(rows) == len(VALUES)
    for (i, b, vb), v in zip(rows, VALUES):
        assert bytes(b) == v and bytes(vb) == v, (i, b, vb)
    c.execute("SELECT id FROM bp WHERE vb = ?", (ALL,))
    assert [tuple(r) for r in c.fetchall()] == [(0,)]
    c.execute("CREATE TABLE tp (id INT PRIMARY KEY, s VARCHAR(10))")
    with pytest.raises(mysql.connector.Error) as e:
        c.execute("INSERT INTO tp VALUES (?, ?)", (1, b"\xc3\x28"))
    assert e.value.errno == 1366
    c.close()
    conn.close()


def test_all_bytes_round_trip_mysqlclient(server, dbname):
    conn = MySQLdb.connect(host=server.host, port=server.port, user="root", passwd="",
                           db=dbname, autocommit=True)
    c = conn.cursor()
    c.execute("CREATE TABLE bm (id INT PRIMARY KEY, b MEDIUMBLOB, fx BINARY(16))")
    for i, v in enumerate(VALUES):
        c.execute("INSERT INTO bm VALUES (%s, %s, %s)", (i, v, v[:16]))
    c.execute("SELECT id, b, fx FROM bm ORDER BY id")
    rows = c.fetchall()
    assert len(rows) == len(VALUES)
    for (i, b, fx), v in zip(rows, VALUES):
        assert isinstance(b, bytes) and b == v, (i, b)
        assert fx == v[:16].ljust(16, b"\x00"), (i, fx)
    c.close()
    conn.close()
