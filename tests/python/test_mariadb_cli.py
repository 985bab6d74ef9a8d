"""The `mariadb` command-line client against `tributary serve`."""

import shutil
import subprocess

import pytest

MARIADB = shutil.which("mariadb") or shutil.which("mysql")


def run(server, sql, *extra, user="root", password=None):
    if MARIADB is None:
        pytest.skip("mariadb client not installed")
    args = [MARIADB, "-h127.0.0.1", f"-P{server.port}", f"-u{user}", "--batch",
            "--skip-ssl", *extra, "-e", sql]
    if password is not None:
        args.insert(4, f"-p{password}")
    return subprocess.run(args, capture_output=True, text=True, timeout=30)


def test_batch_round_trip(server, dbname):
    r = run(server, f"USE {dbname}; CREATE TABLE t (id INT PRIMARY KEY, name VARCHAR(20)); "
            "INSERT INTO t VALUES (1,'a'),(2,NULL); SELECT id, name FROM t ORDER BY id;")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "id\tname\n1\ta\n2\tNULL\n"


def test_database_flag_and_error(server, dbname):
    r = run(server, "SELECT * FROM nope", dbname)
    assert r.returncode == 1
    assert "ERROR 1146 (42S02)" in r.stderr


def test_alice_password(server):
    r = run(server, "SELECT 1 AS x", user="alice", password="secret")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "x\n1\n"
    r = run(server, "SELECT 1", user="alice", password="bad")
    assert r.returncode == 1
    assert "ERROR 1045 (28000)" in r.stderr
