"""Django and SQLAlchemy 2 + Alembic against the three-node PostgreSQL
cluster (issue 42 item 6): one throwaway PostgreSQL and three `tributary
serve --storage postgres://…` compute nodes (test_cluster.py's Cluster),
then tests/python/test_django.py and test_alembic.py, unchanged, in a
child pytest pointed at the first node through $TRIBUTARY_TARGET (Django
is set up once per process, so it gets a process of its own).
Everything passes there, Django's select_for_update(skip_locked=True)
from two connections included."""

import os
import subprocess
import sys

from test_cluster import Cluster

HERE = os.path.dirname(os.path.abspath(__file__))
# The child's whole run; it takes ~10 s.
CHILD_DEADLINE_S = 300


def test_django_and_alembic_on_the_cluster():
    c = Cluster()
    try:
        node = c.nodes[0]
        env = dict(os.environ, TRIBUTARY_TARGET=f"127.0.0.1:{node.port}")
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
             os.path.join(HERE, "test_django.py"), os.path.join(HERE, "test_alembic.py")],
            cwd=HERE, env=env, capture_output=True, text=True, timeout=CHILD_DEADLINE_S)
        tail = "\n".join((out.stdout + out.stderr).splitlines()[-60:])
        assert out.returncode == 0, f"the framework tests failed on the cluster:\n{tail}"
        assert " passed" in out.stdout, tail
        assert "skipped" not in out.stdout and "xfail" not in out.stdout, tail
    finally:
        c.close()
