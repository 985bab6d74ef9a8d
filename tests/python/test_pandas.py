"""pandas over SQLAlchemy (mysql+pymysql): `DataFrame.to_sql` creates and
fills a table, `read_sql` reads a join back with bound parameters."""

import datetime

import pandas as pd
import pytest
from sqlalchemy import create_engine, text


@pytest.fixture
def engine(server, dbname):
    eng = create_engine(f"mysql+pymysql://root:@{server.host}:{server.port}/{dbname}")
    yield eng
    eng.dispose()


def test_to_sql_and_read_sql(engine):
    people = pd.DataFrame({
        "id": [1, 2, 3],
        "name": ["ann", "bob", None],
        "score": [1.5, -2.25, 3.0],
        "born": [datetime.datetime(1990, 1, 2, 3, 4, 5), datetime.datetime(2000, 2, 29), None],
    })
    assert people.to_sql("people", engine, index=False) == 3
    with engine.begin() as c:
        c.execute(text("CREATE TABLE pets (id INT PRIMARY KEY, owner INT, kind VARCHAR(10))"))
        c.execute(text("INSERT INTO pets VALUES (10, 1, 'cat'), (11, 1, 'dog'), (12, 3, 'eel')"))
    got = pd.read_sql(text("SELECT p.name, COUNT(*) AS pets, MAX(p.score) AS score "
                           "FROM people p JOIN pets t ON t.owner = p.id "
                           "WHERE p.id <= :top GROUP BY p.name ORDER BY pets DESC"),
                      engine, params={"top": 3})
    assert got["pets"].tolist() == [2, 1]
    assert got["name"].tolist()[0] == "ann" and got["name"].isna().tolist() == [False, True]
    assert got["score"].tolist() == [1.5, 3.0]
    back = pd.read_sql("SELECT * FROM people ORDER BY id", engine)
    assert back["id"].tolist() == [1, 2, 3]
    assert back["score"].tolist() == [1.5, -2.25, 3.0]
    assert back["born"].iloc[0] == pd.Timestamp("1990-01-02 03:04:05")
    assert back["born"].iloc[1] == pd.Timestamp("2000-02-29")
    assert pd.isna(back["born"].iloc[2])
