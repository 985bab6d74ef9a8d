"""The README's example session, unchanged, through SQLAlchemy 2
(`Connection.exec_driver_sql` over mysql+pymysql): every statement runs and
the queries answer what the README says they do."""

import pathlib
import re

from sqlalchemy import create_engine

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def readme_statements():
    text = README.read_text()
    block = re.search(r"```sql\n(.*?)```", text, re.S)
    assert block, "README has no ```sql block"
    # The block has no `--` or `;` inside quotes: strip comments, split.
    lines = [line.split(" -- ")[0] for line in block.group(1).splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]


def test_readme_session_runs_unchanged(server):
    statements = readme_statements()
    assert statements[0] == "CREATE DATABASE d"
    engine = create_engine(f"mysql+pymysql://root:@{server.host}:{server.port}/")
    results = {}
    try:
        with engine.connect() as c:
            c.exec_driver_sql("DROP DATABASE IF EXISTS d")
            for st in statements:
                r = c.exec_driver_sql(st)
                if r.returns_rows:
                    results[st] = r.fetchall()
            c.commit()
            # What the README's queries promise (nearest first by brute
            # force: id 1 is [1,2,3], id 2 is [0,0,1]; the query is [1,1,1]).
            def d2(v):
                return sum((a - 1) ** 2 for a in v)

            order = [i for _, i in sorted([(d2([1, 2, 3]), 1), (d2([0, 0, 1]), 2)])]
            knn = next(v for k, v in results.items() if k.startswith("SELECT id FROM t ORDER BY"))
            assert [row[0] for row in knn] == order
            ft = next(v for k, v in results.items() if "AGAINST('rust')" in k)
            assert [row[0] for row in ft] == [1]
            joined = next(v for k, v in results.items() if k.startswith("SELECT t.id, o.name"))
            names = {1: "ann", 2: "bob"}
            assert [tuple(row) for row in joined] == [(i, names[i]) for i in order]
            assert any(k.startswith("EXPLAIN ANALYZE") for k in results)
            assert "SHOW ISCP STATUS" in results
            c.exec_driver_sql("DROP DATABASE d")
    finally:
        engine.dispose()
