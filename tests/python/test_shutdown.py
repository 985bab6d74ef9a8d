"""Graceful shutdown: SIGTERM stops the server with exit code 0 and data
written before it is still there after a restart."""

import os
import tempfile

import pymysql

from conftest import start_server, stop_server


def test_sigterm_exits_zero_and_keeps_data():
    with tempfile.TemporaryDirectory(prefix="tributary-pytest-stop-") as d:
        data = os.path.join(d, "data")
        proc, port, _ = start_server(data, admin=False)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="",
                                   autocommit=True)
            with conn.cursor() as c:
                c.execute("CREATE DATABASE s")
                c.execute("CREATE TABLE s.t (id INT PRIMARY KEY)")
                c.execute("INSERT INTO s.t VALUES (1), (2)")
            # Leave the connection open: shutdown must close idle connections.
        finally:
            assert stop_server(proc) == 0
        proc, port, _ = start_server(data, admin=False)
        try:
            conn = pymysql.connect(host="127.0.0.1", port=port, user="root", password="")
            with conn.cursor() as c:
                c.execute("SELECT COUNT(*) FROM s.t")
                assert c.fetchone() == (2,)
            conn.close()
        finally:
            assert stop_server(proc) == 0
