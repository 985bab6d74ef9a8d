"""GET /metrics on the admin endpoint (issue 13, item 3): scraped and parsed
with the Prometheus client library's own text parser, after a workload
that exercises each family (statements by kind and outcome, commits and
fsyncs, a lock wait that times out, an ISCP job built and caught up, an
armed fault point, a DROP)."""

import os
import tempfile
import threading
import time
import urllib.request

import pymysql
import pytest
from prometheus_client.parser import text_string_to_metric_families

from conftest import start_server, stop_server


@pytest.fixture(scope="module")
def srv():
    with tempfile.TemporaryDirectory(prefix="tributary-metrics-") as d:
        proc, port, admin_port = start_server(os.path.join(d, "data"))
        yield port, admin_port
        assert stop_server(proc) == 0


def scrape(admin_port):
    with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/metrics", timeout=10) as r:
        assert r.status == 200
        assert r.headers["Content-Type"].startswith("text/plain")
        text = r.read().decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def value(families, name, **labels):
    """The sample `name` (a sample name, e.g. ..._total or ..._count) whose
    labels include `labels`; None when absent."""
    for f in families.values():
        for s in f.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return None


def connect(port, **kw):
    return pymysql.connect(host="127.0.0.1", port=port, user="root", autocommit=True, **kw)


def test_metrics_cover_statements_storage_locks_iscp_and_faults(srv):
    port, admin = srv
    with connect(port) as c, c.cursor() as cur:
        cur.execute("CREATE DATABASE m")
        cur.execute("USE m")
        cur.execute("CREATE TABLE t (id INT PRIMARY KEY, v VECF32(2))")
        for i in range(20):
            cur.execute(f"INSERT INTO t VALUES ({i}, '[{i},1]')")
        cur.execute("SELECT COUNT(*) FROM t")
        with pytest.raises(pymysql.err.ProgrammingError):
            cur.execute("SELEC 1")
        cur.execute("CREATE INDEX hv USING HNSW ON t(v) OP_TYPE 'vector_l2_ops' ASYNC")
        deadline = time.monotonic() + 60
        while True:
            fam = scrape(admin)
            if (value(fam, "tributary_iscp_job_build_progress", index="hv") == 1.0
                    and value(fam, "tributary_iscp_job_lag_changes", index="hv") == 0.0
                    and value(fam, "tributary_iscp_job_rows_applied", index="hv") == 20.0):
                break
            assert time.monotonic() < deadline, "the job never showed as built and caught up"
            time.sleep(0.1)
        cur.execute("SELECT id FROM t ORDER BY l2_distance(v, '[3,1]') LIMIT 3")
        assert cur.fetchall()[0][0] == 3
    # A lock wait that times out: one session holds the row, another waits 1 s.
    holder = connect(port, database="m")
    holder.autocommit(False)
    with holder.cursor() as cur:
        cur.execute("BEGIN")
        cur.execute("UPDATE t SET v = '[0,0]' WHERE id = 1")
    with connect(port, database="m") as w, w.cursor() as cur:
        cur.execute("SET SESSION innodb_lock_wait_timeout = 1")
        with pytest.raises(pymysql.err.OperationalError) as e:
            cur.execute("UPDATE t SET v = '[9,9]' WHERE id = 1")
        assert e.value.args[0] == 1205
    holder.rollback()
    holder.close()
    with connect(port) as c, c.cursor() as cur:
        cur.execute("SELECT enable_fault_injection()")
        cur.execute("SELECT add_fault_point('fj/metrics/test', ':::', 'echo', 0, '', false)")
        cur.execute("DROP INDEX hv ON m.t")
    keep = connect(port)  # one open connection while scraping
    fam = scrape(admin)
    keep.close()
    # Parsed families have the right types.
    assert fam["tributary_statements"].type == "counter"
    assert fam["tributary_statement_duration_seconds"].type == "histogram"
    assert fam["tributary_connections_open"].type == "gauge"
    assert fam["tributary_iscp_job_state"].type == "gauge"
    assert value(fam, "tributary_statements_total", kind="insert", outcome="ok") >= 20
    assert value(fam, "tributary_statements_total", kind="other", outcome="error") >= 1
    assert value(fam, "tributary_statement_duration_seconds_count", kind="drop") >= 1
    assert value(fam, "tributary_statement_duration_seconds_bucket", kind="insert", le="+Inf") >= 20
    assert value(fam, "tributary_connections_open") >= 1
    assert value(fam, "tributary_connections_total") >= 5
    assert value(fam, "tributary_commits_total") >= 20
    assert value(fam, "tributary_commit_duration_seconds_count") >= 20
    assert value(fam, "tributary_fsyncs_total") >= 1
    assert value(fam, "tributary_fsync_duration_seconds_count") >= 1
    assert value(fam, "tributary_lock_waits_total") >= 1
    assert value(fam, "tributary_lock_wait_timeouts_total") >= 1
    assert value(fam, "tributary_fault_points_armed") == 1
    assert value(fam, "tributary_storage_latest_ts") > 0
    assert value(fam, "tributary_storage_data_bytes") > 0
    assert value(fam, "tributary_cache_hits_total", cache="catalog") > 0
    assert value(fam, "tributary_cache_misses_total", cache="catalog") >= 1
    index_lookups = sum(value(fam, f"tributary_cache_{k}_total", cache="index") or 0
                        for k in ("hits", "misses"))
    assert index_lookups >= 1
    assert value(fam, "tributary_storage_cache_evictions") >= 0
    assert value(fam, "tributary_iscp_runner") == 1
    # The dropped job: Canceling (6) or Canceled (5), never Completed.
    state = value(fam, "tributary_iscp_job_state", db="m", table="t", index="hv")
    assert state in (5.0, 6.0), state
    with connect(port) as c, c.cursor() as cur:
        cur.execute("SELECT remove_fault_point('fj/metrics/test')")
    assert value(scrape(admin), "tributary_fault_points_armed") == 0
