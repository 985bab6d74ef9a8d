"""Accounts and privileges over the wire (docs/SECURITY.md): CREATE USER,
login (1045), 1044/1142/1227, GRANT reaching an open connection."""

import pymysql
import pytest


def connect(server, user="root", password="", db=None):
    return pymysql.connect(host=server.host, port=server.port, user=user, password=password,
                           database=db, autocommit=True)


def test_grant_revoke_over_the_wire(server, dbname):
    root = connect(server, db=dbname)
    with root.cursor() as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY)")
        c.execute("INSERT INTO t VALUES (1)")
        c.execute("CREATE USER 'pyu'@'localhost' IDENTIFIED BY 'pw'")
    with pytest.raises(pymysql.err.OperationalError) as e:
        connect(server, "pyu", "nope")
    assert e.value.args[0] == 1045
    with pytest.raises(pymysql.err.OperationalError) as e:
        connect(server, "pyu", "pw", db=dbname)
    assert e.value.args[0] == 1044
    u = connect(server, "pyu", "pw")
    with u.cursor() as c:
        with pytest.raises(pymysql.err.OperationalError) as e:
            c.execute(f"SELECT * FROM {dbname}.t")
        assert e.value.args[0] == 1142
        assert e.value.args[1] == \
            "SELECT command denied to user 'pyu'@'127.0.0.1' for table 't'"
        with pytest.raises(pymysql.err.OperationalError) as e:
            c.execute("SELECT enable_fault_injection()")
        assert e.value.args[0] == 1227
        with root.cursor() as r:
            r.execute(f"GRANT SELECT ON {dbname}.* TO 'pyu'@'localhost'")
        c.execute(f"SELECT id FROM {dbname}.t")
        assert c.fetchall() == ((1,),)
        c.execute("SHOW GRANTS")
        assert [r[0] for r in c.fetchall()] == [
            "GRANT USAGE ON *.* TO `pyu`@`localhost`",
            f"GRANT SELECT ON `{dbname}`.* TO `pyu`@`localhost`",
        ]
        with root.cursor() as r:
            r.execute(f"REVOKE SELECT ON {dbname}.* FROM 'pyu'@'localhost'")
        with pytest.raises(pymysql.err.OperationalError) as e:
            c.execute(f"SELECT * FROM {dbname}.t")
        assert e.value.args[0] == 1142
    u.close()
    with root.cursor() as c:
        c.execute("DROP USER 'pyu'@'localhost'")
    root.close()
    with pytest.raises(pymysql.err.OperationalError) as e:
        connect(server, "pyu", "pw")
    assert e.value.args[0] == 1045
