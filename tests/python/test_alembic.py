"""SQLAlchemy 2 + Alembic (mysql+pymysql) against `tributary serve`, in-process.

Models with foreign keys are made by `create_all()`; Alembic's API (a
temporary migrations directory: the generic template's script.py.mako and an env.py that
takes the engine and the metadata from `Config.attributes`) autogenerates a
revision adding a column, an index and a foreign key, upgrades to it and
downgrades from it. Autogenerate compares the models with what SQLAlchemy
reflects from the server, so any column, type, index or key the server
reports differently from what it was given shows up as a spurious change.
`Session.begin_nested()` (SAVEPOINT) keeps the outer transaction's rows.
"""

import itertools
import os
import pathlib

import alembic
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import (Column, ForeignKey, Index, Integer, MetaData, Numeric, String, Table,
                        create_engine, inspect, select)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column


ENV_PY = '''
from alembic import context

config = context.config
engine = config.attributes["engine"]
with engine.connect() as connection:
    context.configure(connection=connection,
                      target_metadata=config.attributes["metadata"],
                      compare_type=True, compare_server_default=True)
    with context.begin_transaction():
        context.run_migrations()
'''


def metadata_v1():
    md = MetaData()
    Table("users", md,
          Column("id", Integer, primary_key=True, autoincrement=True),
          Column("name", String(50), nullable=False, unique=True))
    Table("posts", md,
          Column("id", Integer, primary_key=True, autoincrement=True),
          Column("user_id", Integer, ForeignKey("users.id", ondelete="CASCADE"),
                 nullable=False),
          Column("title", String(200), nullable=False),
          Column("score", Numeric(10, 2)))
    return md


def metadata_v2():
    """v1 plus users.email, an index on posts.title and posts.editor_id with
    a foreign key to users."""
    md = metadata_v1()
    md.tables["users"].append_column(Column("email", String(120), nullable=True))
    posts = md.tables["posts"]
    posts.append_column(Column("editor_id", Integer,
                               ForeignKey("users.id", name="fk_posts_editor",
                                          ondelete="SET NULL"),
                               nullable=True))
    Index("ix_posts_title", posts.c.title)
    return md


_dbs = itertools.count(1)


@pytest.fixture
def engine(target):
    name = f"alembic_{os.getpid()}_{next(_dbs)}"
    base = f"mysql+pymysql://root:@{target.host}:{target.port}"
    admin = create_engine(base + "/")
    with admin.connect() as c:
        c.exec_driver_sql(f"DROP DATABASE IF EXISTS {name}")
        c.exec_driver_sql(f"CREATE DATABASE {name}")
    admin.dispose()
    eng = create_engine(f"{base}/{name}")
    yield eng
    eng.dispose()


def diff(engine, md):
    with engine.connect() as c:
        return compare_metadata(MigrationContext.configure(
            c, opts={"compare_type": True, "compare_server_default": True}), md)


def alembic_config(tmp_path, engine, md):
    cfg = Config()
    script_dir = tmp_path / "migrations"
    cfg.set_main_option("script_location", str(script_dir))
    cfg.attributes["engine"] = engine
    cfg.attributes["metadata"] = md
    return cfg, script_dir


def test_create_all_reflects_what_was_made(engine):
    md = metadata_v1()
    md.create_all(engine)
    insp = inspect(engine)
    assert set(insp.get_table_names()) == {"users", "posts"}
    fks = insp.get_foreign_keys("posts")
    assert [(f["constrained_columns"], f["referred_table"], f["referred_columns"],
             f["options"].get("ondelete")) for f in fks] == \
        [(["user_id"], "users", ["id"], "CASCADE")]
    assert diff(engine, md) == [], "reflection disagrees with the models it was made from"


def test_autogenerate_upgrade_downgrade(tmp_path, engine):
    metadata_v1().create_all(engine)
    md2 = metadata_v2()
    cfg, script_dir = alembic_config(tmp_path, engine, md2)
    (script_dir / "versions").mkdir(parents=True)
    (script_dir / "env.py").write_text(ENV_PY)
    template = pathlib.Path(alembic.__file__).parent / "templates" / "generic" / "script.py.mako"
    (script_dir / "script.py.mako").write_text(template.read_text())

    # Autogenerate sees exactly the three changes, nothing spurious.
    kinds = sorted(d[0] if isinstance(d, tuple) else d[0][0] for d in diff(engine, md2))
    assert kinds == ["add_column", "add_column", "add_fk", "add_index"], diff(engine, md2)
    rev = command.revision(cfg, message="email, title index, editor fk", autogenerate=True)
    text = pathlib.Path(rev.path).read_text()
    for op in ["op.add_column('users'", "op.add_column('posts'", "op.create_index(",
               "op.create_foreign_key('fk_posts_editor'", "op.drop_constraint('fk_posts_editor'",
               "op.drop_index(", "op.drop_column('users', 'email')"]:
        assert op in text, f"{op} not in the autogenerated revision:\n{text}"

    command.upgrade(cfg, "head")
    insp = inspect(engine)
    assert "email" in {c["name"] for c in insp.get_columns("users")}
    assert {i["name"]: i["column_names"] for i in insp.get_indexes("posts")}["ix_posts_title"] \
        == ["title"]
    fks = {f["name"]: f for f in insp.get_foreign_keys("posts")}
    assert fks["fk_posts_editor"]["constrained_columns"] == ["editor_id"]
    assert fks["fk_posts_editor"]["referred_table"] == "users"
    assert fks["fk_posts_editor"]["options"].get("ondelete") == "SET NULL"
    assert diff(engine, md2) == [], "upgraded schema still differs from the models"
    with engine.connect() as c:
        assert c.exec_driver_sql("SELECT version_num FROM alembic_version").scalar_one() \
            == rev.revision

    command.downgrade(cfg, "base")
    insp = inspect(engine)
    assert "email" not in {c["name"] for c in insp.get_columns("users")}
    assert "ix_posts_title" not in {i["name"] for i in insp.get_indexes("posts")}
    assert "fk_posts_editor" not in {f["name"] for f in insp.get_foreign_keys("posts")}
    assert "editor_id" not in {c["name"] for c in insp.get_columns("posts")}
    assert diff(engine, metadata_v1()) == [], "downgrade did not restore the v1 schema"


class Base(DeclarativeBase):
    pass


class Owner(Base):
    __tablename__ = "owners"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    name: Mapped[str] = mapped_column(String(40))


class Pet(Base):
    __tablename__ = "pets"
    id: Mapped[int] = mapped_column(primary_key=True, autoincrement=True)
    owner_id: Mapped[int] = mapped_column(ForeignKey("owners.id"))
    name: Mapped[str] = mapped_column(String(40))


def test_session_begin_nested(engine):
    Base.metadata.create_all(engine)
    with Session(engine) as s:
        with s.begin():
            o = Owner(name="kept")
            s.add(o)
            s.flush()
            s.add(Pet(owner_id=o.id, name="kept-pet"))
            nested = s.begin_nested()
            s.add(Pet(owner_id=o.id, name="dropped-pet"))
            s.flush()
            assert s.scalar(select(Pet.id).where(Pet.name == "dropped-pet")) is not None
            nested.rollback()
            with s.begin_nested():
                s.add(Pet(owner_id=o.id, name="savepoint-kept"))
    with Session(engine) as s:
        assert sorted(s.scalars(select(Pet.name))) == ["kept-pet", "savepoint-kept"]
        assert s.scalars(select(Owner.name)).all() == ["kept"]
