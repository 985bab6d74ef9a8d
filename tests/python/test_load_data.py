"""LOAD DATA over the wire: LOCAL through PyMySQL (`local_infile=True`) and
the `mariadb` client (`--local-infile`), the server-side file under
`--secure-file-priv`, the OK packet's `Records:` info (length-encoded, as
MariaDB sends it), KILL QUERY of a running load with its progress in
SHOW PROCESSLIST. Waits are polls with deadlines, never fixed sleeps."""

import os
import shutil
import subprocess
import tempfile
import threading
import time

import pymysql
import pytest

from conftest import start_server, stop_server

WAIT_S = 30


@pytest.fixture(scope="module")
def srv():
    """A server of its own: `--secure-file-priv` set, and `local_infile`
    switched on by the tests (a global)."""
    with tempfile.TemporaryDirectory(prefix="tributary-load-") as d:
        files = os.path.join(d, "files")
        os.mkdir(files)
        proc, port, _ = start_server(
            os.path.join(d, "data"), extra_args=("--secure-file-priv", files), admin=False
        )

        class S:
            pass

        s = S()
        s.host, s.port, s.files, s.dir = "127.0.0.1", port, files, d
        yield s
        assert stop_server(proc) == 0


def connect(s, db=None, **kw):
    return pymysql.connect(
        host=s.host, port=s.port, user="root", password="", database=db, autocommit=True, **kw
    )


_n = [0]


@pytest.fixture
def db(srv):
    _n[0] += 1
    name = f"load{_n[0]}"
    c = connect(srv)
    with c.cursor() as cur:
        cur.execute(f"CREATE DATABASE {name}")
        cur.execute("SET GLOBAL local_infile = ON")
    c.close()
    return name


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def test_local_infile_through_pymysql(srv, db, tmp_path):
    p = write(tmp_path / "a.csv", '1,"x,y"\n2,\\N\n1,dup\n3,"q""uote"\n')
    conn = connect(srv, db, local_infile=True)
    with conn.cursor() as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
        n = c.execute(
            f"LOAD DATA LOCAL INFILE '{p}' INTO TABLE t "
            "FIELDS TERMINATED BY ',' OPTIONALLY ENCLOSED BY '\"'"
        )
        assert n == 3
        # LOCAL implies IGNORE: the duplicate is a warning.
        assert c._result.message == b"/Records: 4  Deleted: 0  Skipped: 1  Warnings: 1"
        c.execute("SHOW WARNINGS")
        assert c.fetchall() == (("Warning", 1062, "Duplicate entry '1' for key 'PRIMARY'"),)
        c.execute("SELECT id, v FROM t ORDER BY id")
        assert c.fetchall() == ((1, "x,y"), (2, None), (3, 'q"uote'))
        # Many packets: the file streams through.
        big = write(tmp_path / "big.txt", "".join(f"{i}\t{'v' * 50}{i}\n" for i in range(10, 30010)))
        assert c.execute(f"LOAD DATA LOCAL INFILE '{big}' INTO TABLE t") == 30000
        c.execute("SELECT COUNT(*), SUM(id) FROM t")
        assert c.fetchone() == (30003, sum(range(10, 30010)) + 6)
    conn.close()


def test_local_refusals(srv, db, tmp_path):
    p = write(tmp_path / "a.txt", "1\n")
    # A client that did not offer CLIENT_LOCAL_FILES: 1148.
    conn = connect(srv, db)
    with conn.cursor() as c:
        c.execute("CREATE TABLE t (id INT)")
        with pytest.raises(pymysql.err.OperationalError) as e:
            c.execute(f"LOAD DATA LOCAL INFILE '{p}' INTO TABLE t")
        assert e.value.args[0] == 1148
        c.execute("SELECT 1")
        assert c.fetchone() == (1,)
    conn.close()
    conn = connect(srv, db, local_infile=True)
    with conn.cursor() as c:
        c.execute("SET GLOBAL local_infile = OFF")
        try:
            with pytest.raises(pymysql.err.MySQLError) as e:
                c.execute(f"LOAD DATA LOCAL INFILE '{p}' INTO TABLE t")
            assert e.value.args[0] == 3948
        finally:
            c.execute("SET GLOBAL local_infile = ON")
        # A statement error before the file is asked for (no such table),
        # then a load error after it was sent: the connection goes on.
        with pytest.raises(pymysql.err.ProgrammingError):
            c.execute(f"LOAD DATA LOCAL INFILE '{p}' INTO TABLE nope")
        c.execute("CREATE TABLE s (id INT PRIMARY KEY, v INT)")
        bad = write(tmp_path / "bad.txt", "1\t1\n2\t2\n3\t3\n")
        with pytest.raises(pymysql.err.MySQLError) as e:
            c.execute(f"LOAD DATA LOCAL INFILE '{bad}' REPLACE INTO TABLE s (id, @x) SET v = nope")
        assert e.value.args[0] == 1054
        assert c.execute(f"LOAD DATA LOCAL INFILE '{bad}' INTO TABLE s") == 3
    conn.close()


def test_server_side_file(srv, db):
    p = write(os.path.join(srv.files, "s.txt"), "h\n5\tfive\n6\tsix\n")
    conn = connect(srv, db)
    with conn.cursor() as c:
        c.execute("CREATE TABLE t (id INT, v VARCHAR(8))")
        assert c.execute(f"LOAD DATA INFILE '{p}' INTO TABLE t IGNORE 1 LINES") == 2
        assert c._result.message == b"/Records: 2  Deleted: 0  Skipped: 0  Warnings: 0"
        with pytest.raises(pymysql.err.MySQLError) as e:
            c.execute("LOAD DATA INFILE '/etc/hostname' INTO TABLE t")
        assert e.value.args[0] == 1290
        c.execute("SELECT @@secure_file_priv")
        assert c.fetchone() == (srv.files,)
    conn.close()


@pytest.mark.skipif(shutil.which("mariadb") is None, reason="mariadb client not installed")
def test_mariadb_client_local_infile(srv, db, tmp_path):
    p = write(tmp_path / "m.txt", "1\tone\n2\ttwo\n")
    conn = connect(srv, db)
    with conn.cursor() as c:
        c.execute("CREATE TABLE t (id INT, v TEXT)")
    out = subprocess.run(
        ["mariadb", "-h", srv.host, "-P", str(srv.port), "-uroot", "--local-infile=1", "-vvv",
         db, "-e", f"LOAD DATA LOCAL INFILE '{p}' INTO TABLE t"],
        capture_output=True, text=True, timeout=WAIT_S,
    )
    assert out.returncode == 0, out.stderr
    assert "Records: 2  Deleted: 0  Skipped: 0  Warnings: 0" in out.stdout
    with conn.cursor() as c:
        c.execute("SELECT id, v FROM t ORDER BY id")
        assert c.fetchall() == ((1, "one"), (2, "two"))
    conn.close()


def test_kill_query_stops_a_load_and_progress_shows(srv, db, tmp_path):
    rows = 300_000
    p = write(tmp_path / "k.txt", "".join(f"{i}\tsome text {i}\n" for i in range(rows)))
    victim = connect(srv, db, local_infile=True)
    with victim.cursor() as c:
        c.execute("CREATE TABLE t (id INT PRIMARY KEY, v TEXT)")
        c.execute("SELECT CONNECTION_ID()")
        vid = c.fetchone()[0]
    out = {}

    def go():
        try:
            with victim.cursor() as c:
                c.execute(f"LOAD DATA LOCAL INFILE '{p}' INTO TABLE t")
        except Exception as e:  # noqa: BLE001 - the test inspects it
            out["error"] = e

    th = threading.Thread(target=go)
    th.start()
    admin = connect(srv)
    state = None
    deadline = time.monotonic() + WAIT_S
    with admin.cursor() as c:
        while time.monotonic() < deadline:
            c.execute("SHOW PROCESSLIST")
            for r in c.fetchall():
                if r[0] == vid and r[6] and r[6].startswith("Loading: ") and r[6] != "Loading: 0 rows":
                    state = r[6]
            if state:
                break
            time.sleep(0.01)
        assert state, "the load's progress never showed"
        c.execute(f"KILL QUERY {vid}")
    th.join(WAIT_S)
    assert not th.is_alive()
    assert out["error"].args[0] == 1317, out
    with victim.cursor() as c:
        c.execute("SELECT COUNT(*) FROM t")
        assert c.fetchone() == (0,)
    victim.close()
    admin.close()
