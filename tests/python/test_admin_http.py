"""Admin HTTP endpoint: health and fault-point control."""

import json
import urllib.error
import urllib.request

import pymysql


def http(server, method, path, body=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server.admin_url + path, data=data, method=method,
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


POINT = {"name": "pytest/admin_point", "freq": "", "action": "echo",
         "iarg": 0, "sarg": "hello", "constant": False}


def test_health(server):
    assert http(server, "GET", "/health") == (200, "ok")


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
