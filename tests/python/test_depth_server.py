"""Issue 39 item 1: every recursive shape a statement can build, fed at
ten times its limit to a `tributary serve` process running with its
default thread stacks, is answered with MySQL's error — 1436 (thread
stack overrun), 1473 (too high level of nesting for select), 1116 (too
many tables), 3157 (JSON too deep) — and the process lives on.

The limits (src/sql/parse.rs, src/sql/plan.rs, src/json.rs): nesting
2,000 levels (set operators included), 4,096 operators in a chain, 63
query blocks, 61 tables in a join, JSON 100 levels; views over views are
query blocks too."""

import os
import tempfile

import pymysql
import pytest

from conftest import start_server, stop_server

NESTING = 2000
CHAIN = 4096
BLOCKS = 63
JOIN_TABLES = 61
JSON_DEPTH = 100


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="tributary-depth-") as d:
        proc, port, _ = start_server(os.path.join(d, "data"), admin=False)
        c = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
        with c.cursor() as cur:
            cur.execute("CREATE USER nobody IDENTIFIED BY 'pw'")  # no grants at all
            cur.execute("CREATE DATABASE d")
            cur.execute("CREATE TABLE d.t (id INT PRIMARY KEY, a INT)")
            cur.execute("INSERT INTO d.t VALUES (1, 1)")
        c.close()
        yield proc, port
        assert stop_server(proc) == 0


def alive(proc, port):
    assert proc.poll() is None, f"server died: exit {proc.returncode}"
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", connect_timeout=10)
    try:
        with c.cursor() as cur:
            cur.execute("SELECT 1")
            assert cur.fetchone() == (1,)
    finally:
        c.close()


def code_of(port, sql, user="nobody", password="pw"):
    c = pymysql.connect(host="127.0.0.1", port=port, user=user, password=password,
                        read_timeout=300)
    try:
        with c.cursor() as cur:
            cur.execute(sql)
            return ("ok", cur.fetchall()[:1])
    except pymysql.err.MySQLError as e:
        return e.args[0]
    finally:
        c.close()


def setop(op, n):
    return f" {op} ".join(["SELECT 1"] * n)


def derived(n):
    return "SELECT a FROM " + "(SELECT * FROM " * n + "(SELECT 1 AS a) x0" + ") x" * n


def cte_chain(n):
    w = ["c0 AS (SELECT 1 AS a)"] + [f"c{i} AS (SELECT a FROM c{i - 1})" for i in range(1, n)]
    return f"WITH {', '.join(w)} SELECT a FROM c{n - 1}"


def joins(n):
    j = " ".join(f"JOIN (SELECT 1 AS k) t{i} ON t{i}.k = t0.k" for i in range(1, n))
    return f"SELECT COUNT(*) FROM (SELECT 1 AS k) t0 {j}"


SHAPES = {
    "UNION ALL chain": (setop("UNION ALL", 10 * NESTING), 1436),
    "UNION chain": (setop("UNION", 10 * NESTING), 1436),
    "INTERSECT chain": (setop("INTERSECT", 10 * NESTING), 1436),
    "EXCEPT chain": (setop("EXCEPT", 10 * NESTING), 1436),
    "UNION chain in a derived table":
        (f"SELECT COUNT(*) FROM ({setop('UNION ALL', 10 * NESTING)}) x", 1436),
    "parentheses": ("SELECT " + "(" * (10 * NESTING) + "1" + ")" * (10 * NESTING), 1436),
    "function calls": ("SELECT " + "abs(" * (10 * NESTING) + "1" + ")" * (10 * NESTING), 1436),
    "CASE": ("SELECT " + "CASE WHEN 1 THEN " * (10 * NESTING) + "1" + " END" * (10 * NESTING),
             1436),
    "NOT run": ("SELECT " + "NOT " * (10 * NESTING) + "1", 1436),
    "operator chain": ("SELECT " + " + ".join(["1"] * (10 * CHAIN)), 1436),
    "scalar subqueries": ("SELECT " + "(SELECT " * (10 * BLOCKS) + "1" + ")" * (10 * BLOCKS),
                          1473),
    "derived tables": (derived(10 * BLOCKS), 1473),
    "IN subqueries": ("SELECT 1 WHERE 1 IN " + "(SELECT 1 WHERE 1 IN " * (10 * BLOCKS)
                      + "(SELECT 1)" + ")" * (10 * BLOCKS), 1473),
    "CTE references": (cte_chain(10 * BLOCKS), 1473),
    "joined tables": (joins(10 * JOIN_TABLES), 1116),
    "JSON text": ("SELECT JSON_EXTRACT('" + "[" * (10 * JSON_DEPTH) + "1"
                  + "]" * (10 * JSON_DEPTH) + "', '$')", 3157),
    "JSON_ARRAY calls": ("SELECT " + "JSON_ARRAY(" * (10 * JSON_DEPTH) + "1"
                         + ")" * (10 * JSON_DEPTH), 3157),
    "JSON_OBJECT calls": ("SELECT " + "JSON_OBJECT('k', " * (10 * JSON_DEPTH) + "1"
                          + ")" * (10 * JSON_DEPTH), 3157),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_shape_at_ten_times_its_limit(srv, shape):
    proc, port = srv
    sql, want = SHAPES[shape]
    assert code_of(port, sql) == want, shape
    alive(proc, port)


def test_within_the_limits_answers(srv):
    """The deepest accepted form of the query-block shapes still answers
    (on the server's own stacks, not only in the in-process tests)."""
    proc, port = srv
    for sql in [derived(BLOCKS - 2), cte_chain(BLOCKS - 1), joins(JOIN_TABLES),
                setop("UNION ALL", NESTING)]:
        got = code_of(port, sql)
        assert got[0] == "ok", (sql[:60], got)
    alive(proc, port)


def test_views_over_views(srv):
    """A chain of views is a chain of query blocks: 62 views over a table
    (with the SELECT reading the last, 63 blocks) are read; the next one is
    refused (1473) when created — a view that can be created can be read —
    and so is every further one up to ten times the limit."""
    proc, port = srv
    c = pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True)
    codes = []
    with c.cursor() as cur:
        cur.execute("CREATE VIEW d.v0 AS SELECT a FROM d.t")
        made = 0
        for i in range(1, 10 * BLOCKS):
            try:
                cur.execute(f"CREATE VIEW d.v{i} AS SELECT a FROM d.v{made}")
                made = i
            except pymysql.err.MySQLError as e:
                codes.append(e.args[0])
        cur.execute(f"SELECT a FROM d.v{made}")
        assert cur.fetchall() == ((1,),)
    c.close()
    assert made == BLOCKS - 2
    assert set(codes) == {1473} and len(codes) == 10 * BLOCKS - BLOCKS + 1
    alive(proc, port)
