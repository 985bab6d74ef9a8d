"""SQLAlchemy 2 (mysql+pymysql) against `tributary serve`: the engine's
dialect initialisation, Session transactions and an ORM round trip."""

import datetime
import decimal

import pymysql
import pytest
from sqlalchemy import Date, ForeignKey, Numeric, String, create_engine, func, select, text
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship


class Base(DeclarativeBase):
    pass


class Item(Base):
    __tablename__ = "items"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(40))
    price: Mapped[decimal.Decimal] = mapped_column(Numeric(10, 2))
    day: Mapped[datetime.date] = mapped_column(Date)


@pytest.fixture
def engine(server, dbname):
    eng = create_engine(f"mysql+pymysql://root:@{server.host}:{server.port}/{dbname}",
                        pool_pre_ping=False)
    yield eng
    eng.dispose()


def committed_ids(server, db):
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           database=db, autocommit=True, read_timeout=30)
    try:
        with conn.cursor() as c:
            c.execute("SELECT id FROM tx ORDER BY id")
            return [r[0] for r in c.fetchall()]
    finally:
        conn.close()


def test_engine_connects(engine):
    with engine.connect() as c:
        assert c.execute(text("SELECT 41 + 1")).scalar_one() == 42


def test_engine_connects_without_database(server):
    eng = create_engine(f"mysql+pymysql://root:@{server.host}:{server.port}/")
    try:
        with eng.connect() as c:
            assert c.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        eng.dispose()


def test_session_rollback_discards_and_commit_keeps(server, dbname, engine):
    with engine.begin() as c:
        c.execute(text("CREATE TABLE tx (id INT PRIMARY KEY)"))
    with Session(engine) as s:
        assert not s.in_transaction()
        s.execute(text("INSERT INTO tx VALUES (1)"))
        assert s.in_transaction()
        assert committed_ids(server, dbname) == [], "uncommitted row visible to another session"
        s.rollback()
        assert not s.in_transaction()
        assert committed_ids(server, dbname) == [], "Session.rollback() kept the row"

        s.execute(text("INSERT INTO tx VALUES (2)"))
        assert s.in_transaction()
        s.commit()
        assert not s.in_transaction()
        assert committed_ids(server, dbname) == [2], "Session.commit() lost the row"

        # the DBAPI connection really is in a transaction while the session is
        s.execute(text("INSERT INTO tx VALUES (3)"))
        raw = s.connection().connection.dbapi_connection
        assert raw.server_status & 0x0001, "server does not report the open transaction"
        s.rollback()
    assert committed_ids(server, dbname) == [2]


def test_orm_round_trip(server, dbname, engine):
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        s.add_all([
            Item(name="widget", price=decimal.Decimal("12.30"), day=datetime.date(2024, 2, 29)),
            Item(name="o'brien", price=decimal.Decimal("0.05"), day=datetime.date(1999, 12, 31)),
        ])
        s.flush()
        ids = sorted(i.id for i in s.scalars(select(Item)))
        assert ids == [1, 2]
        s.commit()
    with Session(engine) as s:
        items = s.scalars(select(Item).order_by(Item.id)).all()
        assert [(i.id, i.name) for i in items] == [(1, "widget"), (2, "o'brien")]
        w = items[0]
        assert type(w.day) is datetime.date and w.day == datetime.date(2024, 2, 29)
        assert isinstance(w.price, decimal.Decimal) and w.price == decimal.Decimal("12.30")
        assert w.price.as_tuple().exponent == -2
        w.name = "gadget"
        s.commit()
        s.add(Item(name="discarded", price=decimal.Decimal("1.00"), day=datetime.date(2000, 1, 1)))
        s.flush()
        s.rollback()
    with Session(engine) as s:
        assert s.scalars(select(Item.name).order_by(Item.id)).all() == ["gadget", "o'brien"]


def test_error_code_reaches_sqlalchemy(engine):
    with engine.connect() as c:
        with pytest.raises(DBAPIError) as e:
            c.execute(text("SELECT * FROM no_such_table"))
        assert e.value.orig.args[0] == 1146


def test_inspect_and_reflect(engine):
    """inspect(): table and view names (SHOW FULL TABLES), columns, primary
    key and indexes (parsed from SHOW CREATE TABLE); MetaData.reflect() of
    every table, then a query through the reflected tables with a join."""
    from sqlalchemy import MetaData, inspect

    with engine.begin() as c:
        c.execute(text("CREATE TABLE owners (id INT PRIMARY KEY, name VARCHAR(20) NOT NULL)"))
        c.execute(text("CREATE TABLE docs (id BIGINT PRIMARY KEY AUTO_INCREMENT, "
                       "owner_id INT, title VARCHAR(40), score DECIMAL(6,2))"))
        c.execute(text("CREATE INDEX by_owner ON docs (owner_id)"))
        c.execute(text("CREATE UNIQUE INDEX uq_name ON owners (name)"))
        c.execute(text("CREATE VIEW named AS SELECT d.id, o.name FROM docs d "
                       "JOIN owners o ON o.id = d.owner_id"))
        c.execute(text("INSERT INTO owners VALUES (1, 'ann'), (2, 'bob')"))
        c.execute(text("INSERT INTO docs (owner_id, title, score) VALUES "
                       "(1, 'a', 1.5), (2, 'b', 2.5), (1, 'c', NULL)"))
    i = inspect(engine)
    assert i.get_table_names() == ["docs", "owners"]
    assert i.get_view_names() == ["named"]
    cols = {c["name"]: (str(c["type"]), c["nullable"]) for c in i.get_columns("docs")}
    assert cols == {"id": ("BIGINT", False), "owner_id": ("INTEGER", True),
                    "title": ("VARCHAR(40)", True), "score": ("DECIMAL(6, 2)", True)}
    assert i.get_pk_constraint("docs")["constrained_columns"] == ["id"]
    idx = {x["name"]: (x["column_names"], bool(x["unique"])) for x in i.get_indexes("owners")}
    assert idx == {"uq_name": (["name"], True)}
    assert [x["name"] for x in i.get_indexes("docs")] == ["by_owner"]

    meta = MetaData()
    meta.reflect(engine)
    assert sorted(meta.tables) == ["docs", "owners"]
    docs, owners = meta.tables["docs"], meta.tables["owners"]
    q = (select(owners.c.name, docs.c.title).join(docs, docs.c.owner_id == owners.c.id)
         .where(owners.c.name == "ann").order_by(docs.c.title))
    with engine.connect() as c:
        assert c.execute(q).all() == [("ann", "a"), ("ann", "c")]


def test_mysql_upsert(engine):
    """SQLAlchemy's MySQL `insert().on_duplicate_key_update()` (rendered with
    the row alias `AS new` for a MySQL 8.0.20+ server): inserts, then
    updates from the inserted values."""
    from sqlalchemy import Column, Integer, MetaData, Table
    from sqlalchemy.dialects.mysql import insert

    meta = MetaData()
    t = Table("counters", meta, Column("id", Integer, primary_key=True, autoincrement=False),
              Column("n", Integer, nullable=False))
    meta.create_all(engine)
    stmt = insert(t).values(id=1, n=1)
    stmt = stmt.on_duplicate_key_update(n=t.c.n + stmt.inserted.n)
    with engine.begin() as c:
        assert c.execute(stmt).rowcount == 1
        assert c.execute(stmt).rowcount == 2
        c.execute(insert(t).values(id=2, n=5).on_duplicate_key_update(n=7))
    with engine.connect() as c:
        assert c.execute(select(t.c.id, t.c.n).order_by(t.c.id)).all() == [(1, 2), (2, 5)]


class RelBase(DeclarativeBase):
    pass


class Author(RelBase):
    __tablename__ = "authors"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(40))
    books: Mapped[list["Book"]] = relationship(back_populates="author", cascade="all, delete-orphan")


class Book(RelBase):
    __tablename__ = "books"
    id: Mapped[int] = mapped_column(primary_key=True)
    title: Mapped[str] = mapped_column(String(80))
    author_id: Mapped[int] = mapped_column(ForeignKey("authors.id"))
    author: Mapped[Author] = relationship(back_populates="books")


def test_orm_relationship_join(engine):
    # Tables created without FOREIGN KEY constraints: the ORM's
    # relationship works from the mapped columns alone.
    with engine.begin() as c:
        c.exec_driver_sql("CREATE TABLE authors (id INT PRIMARY KEY, name VARCHAR(40))")
        c.exec_driver_sql(
            "CREATE TABLE books (id INT PRIMARY KEY, title VARCHAR(80), author_id INT, KEY ix_author (author_id))"
        )
    with Session(engine) as s:
        ann = Author(id=1, name="ann", books=[Book(id=10, title="rust"), Book(id=11, title="sql")])
        bob = Author(id=2, name="bob", books=[Book(id=12, title="python")])
        s.add_all([ann, bob])
        s.commit()
    with Session(engine) as s:
        rows = s.execute(
            select(Author.name, Book.title).join(Author.books).order_by(Book.id)
        ).all()
        assert [tuple(r) for r in rows] == [("ann", "rust"), ("ann", "sql"), ("bob", "python")]
        # Lazy load through the relationship, then update and delete.
        a = s.get(Author, 1)
        assert sorted(b.title for b in a.books) == ["rust", "sql"]
        a.books[0].title = "rust 2"
        s.delete(s.get(Author, 2))
        s.commit()
    with Session(engine) as s:
        titles = s.scalars(select(Book.title).order_by(Book.id)).all()
        assert titles == ["rust 2", "sql"]
        assert s.scalars(select(Author.name)).all() == ["ann"]
        n = s.scalar(
            select(func.count()).select_from(Author).join(Book).where(Book.title.like("rust%"))
        )
        assert n == 1


class FkBase(DeclarativeBase):
    pass


class Team(FkBase):
    __tablename__ = "teams"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(40))
    players: Mapped[list["Player"]] = relationship(back_populates="team", passive_deletes=True)


class Player(FkBase):
    __tablename__ = "players"
    id: Mapped[int] = mapped_column(primary_key=True)
    name: Mapped[str] = mapped_column(String(40))
    team_id: Mapped[int] = mapped_column(ForeignKey("teams.id", ondelete="CASCADE"))
    mentor_id: Mapped[int | None] = mapped_column(ForeignKey("players.id", ondelete="SET NULL"))
    team: Mapped[Team] = relationship(back_populates="players")


def test_create_all_with_foreign_keys_enforces_them(engine):
    # create_all() of two models joined by ForeignKey (issue 42): the
    # constraints are created, reflected back, and enforced.
    FkBase.metadata.create_all(engine)
    from sqlalchemy import inspect

    fks = inspect(engine).get_foreign_keys("players")
    by_col = {tuple(f["constrained_columns"]): f for f in fks}
    assert by_col[("team_id",)]["referred_table"] == "teams"
    assert by_col[("team_id",)]["referred_columns"] == ["id"]
    assert by_col[("team_id",)]["options"].get("ondelete") == "CASCADE"
    assert by_col[("mentor_id",)]["referred_table"] == "players"
    assert by_col[("mentor_id",)]["options"].get("ondelete") == "SET NULL"
    with Session(engine) as s:
        s.add_all([Team(id=1, name="red"), Team(id=2, name="blue")])
        s.flush()
        s.add_all([Player(id=10, name="ann", team_id=1),
                   Player(id=11, name="bob", team_id=1, mentor_id=10),
                   Player(id=12, name="cy", team_id=2, mentor_id=11)])
        s.commit()
    with Session(engine) as s:
        s.add(Player(id=13, name="orphan", team_id=9))
        with pytest.raises(DBAPIError) as e:
            s.commit()
        assert e.value.orig.args[0] == 1452
    # The database cascades: team 1's players go, cy's mentor becomes NULL.
    with Session(engine) as s:
        s.delete(s.get(Team, 1))
        s.commit()
    with Session(engine) as s:
        rows = s.execute(select(Player.id, Player.mentor_id).order_by(Player.id)).all()
        assert [tuple(r) for r in rows] == [(12, None)]
    # drop_all orders the drops by the keys (children first).
    FkBase.metadata.drop_all(engine)
    assert inspect(engine).get_table_names() == []
