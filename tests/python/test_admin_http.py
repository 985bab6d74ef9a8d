"""Admin HTTP endpoint: health and fault-point control; mutating requests
need the bearer token the server wrote to <data dir>/admin.token (0600)."""

import json
import os
import stat
import urllib.error
import urllib.request

import pymysql


def token_path(server):
    return os.path.join(server.data_dir, "data", "admin.token")


def admin_token(server):
    with open(token_path(server)) as f:
        return f.read().strip()


def http(server, method, path, body=None, token=True):
    data = None if body is None else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if token is True:
        token = admin_token(server)
    if token:
        headers["Authorization"] = "Bearer " + token
    req = urllib.request.Request(server.admin_url + path, data=data, method=method,
                                 headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


POINT = {"name": "pytest/admin_point", "freq": "", "action": "echo",
         "iarg": 0, "sarg": "hello", "constant": False}


def test_health(server):
    assert http(server, "GET", "/health", token=None) == (200, "ok")


def test_token_file_and_401(server):
    mode = stat.S_IMODE(os.stat(token_path(server)).st_mode)
    assert mode == 0o600, oct(mode)
    assert len(admin_token(server)) == 64
    name = urllib.request.quote(POINT["name"], safe="")
    for method, path, body in [("POST", "/faults", POINT), ("DELETE", "/faults/" + name, None)]:
        status, _ = http(server, method, path, body, token=None)
        assert status == 401, (method, path)
        status, _ = http(server, method, path, body, token="wrong" + admin_token(server))
        assert status == 401, (method, path)
    # Reading stays open.
    status, _ = http(server, "GET", "/faults", token=None)
    assert status == 200


def test_fault_lifecycle(server):
    status, body = http(server, "GET", "/faults")
    assert status == 200
    json.loads(body)
    # Injection is disabled at start-up: adding conflicts.
    status, body = http(server, "POST", "/faults", POINT)
    assert status == 409, body
    # Bad JSON is a 400.
    status, _ = http(server, "POST", "/faults", {"nope": 1})
    assert status == 400
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           autocommit=True)
    try:
        with conn.cursor() as c:
            c.execute("select enable_fault_injection()")
            c.fetchall()
        status, body = http(server, "POST", "/faults", POINT)
        assert status == 200, body
        status, body = http(server, "GET", "/faults")
        assert status == 200 and POINT["name"] in body
        status, body = http(server, "POST", "/faults", dict(POINT, action="no-such-action"))
        assert status == 400, body
        status, body = http(server, "DELETE", "/faults/" + urllib.request.quote(POINT["name"], safe=""))
        assert status == 200, body
        status, body = http(server, "GET", "/faults")
        assert POINT["name"] not in body
        status, _ = http(server, "DELETE", "/faults/" + urllib.request.quote(POINT["name"], safe=""))
        assert status == 404
    finally:
        with conn.cursor() as c:
            c.execute("select disable_fault_injection()")
            c.fetchall()
        conn.close()


def test_status_page_hides_error_values_without_the_token(server):
    """Recent errors carry other sessions' row values (issue 39 item 4):
    without the token the page shows their codes only."""
    secret = "bob-5e1c@secret.example"
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           autocommit=True)
    try:
        with conn.cursor() as c:
            c.execute("CREATE DATABASE IF NOT EXISTS status_redact")
            c.execute("CREATE TABLE status_redact.t (e VARCHAR(64) PRIMARY KEY)")
            c.execute(f"INSERT INTO status_redact.t VALUES ('{secret}')")
            try:
                c.execute(f"INSERT INTO status_redact.t VALUES ('{secret}')")
                raise AssertionError("duplicate accepted")
            except pymysql.err.IntegrityError as e:
                assert e.args[0] == 1062
    finally:
        conn.close()
    status, page = http(server, "GET", "/", token=None)
    assert status == 200
    assert "<td>1062</td>" in page
    assert secret not in page
    status, page = http(server, "GET", "/", token="wrong" + admin_token(server))
    assert status == 200 and secret not in page
    status, page = http(server, "GET", "/")
    assert status == 200 and secret in page
