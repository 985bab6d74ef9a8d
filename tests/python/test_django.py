"""Django (ORM, migrations, transactions) against `tributary serve`, in-process.

Driver: mysqlclient (Django's own MySQL driver; scripts/test-deps.sh installs
pkg-config + libmariadb-dev to build it). Settings are made with
`settings.configure()`; the app is tests/python/django_app (foreign keys with
CASCADE and SET NULL, a many-to-many, a unique_together, an index). The
module migrates contenttypes, auth, sessions, admin and the app from nothing
in a fresh database, then runs `check --database default`, ORM round trips,
nested atomic() blocks, select_for_update(skip_locked=True) from two
threads (two connections), bulk_create, aggregates and F() expressions,
deletes that cascade / set NULL, and migrates the app backwards.
"""

import datetime
import decimal
import io
import os
import threading

import django
import pymysql
import pytest
from django.conf import settings

# Deadline for a thread to reach the point the other one waits for.
WAIT_S = 30.0


def tables(server, db):
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           database=db, autocommit=True, read_timeout=30)
    try:
        with conn.cursor() as c:
            c.execute("SHOW TABLES")
            return {r[0] for r in c.fetchall()}
    finally:
        conn.close()


@pytest.fixture(scope="module")
def djdb(target):
    """Django configured on a fresh database, every app migrated."""
    server = target
    name = "django_t"
    conn = pymysql.connect(host=server.host, port=server.port, user="root", password="",
                           autocommit=True)
    try:
        with conn.cursor() as c:
            c.execute(f"DROP DATABASE IF EXISTS {name}")
            c.execute(f"CREATE DATABASE {name}")
    finally:
        conn.close()
    if not settings.configured:
        settings.configure(
            DEBUG=False,
            SECRET_KEY="test-only",
            USE_TZ=True,
            TIME_ZONE="UTC",
            INSTALLED_APPS=[
                "django.contrib.contenttypes",
                "django.contrib.auth",
                "django.contrib.sessions",
                "django.contrib.messages",
                "django.contrib.admin",
                "django_app.apps.DjangoAppConfig",
            ],
            DATABASES={
                "default": {
                    "ENGINE": "django.db.backends.mysql",
                    "NAME": name,
                    "USER": "root",
                    "PASSWORD": "",
                    "HOST": server.host,
                    "PORT": str(server.port),
                    "OPTIONS": {"charset": "utf8mb4"},
                }
            },
            TEMPLATES=[{
                "BACKEND": "django.template.backends.django.DjangoTemplates",
                "APP_DIRS": True,
                "OPTIONS": {"context_processors": [
                    "django.template.context_processors.request",
                    "django.contrib.auth.context_processors.auth",
                    "django.contrib.messages.context_processors.messages",
                ]},
            }],
            MIDDLEWARE=[
                "django.contrib.sessions.middleware.SessionMiddleware",
                "django.contrib.auth.middleware.AuthenticationMiddleware",
                "django.contrib.messages.middleware.MessageMiddleware",
            ],
            DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
        )
        django.setup()
    from django.core.management import call_command
    from django.db import connections

    call_command("migrate", verbosity=0, interactive=False)
    yield name
    connections.close_all()


def test_migrate_created_every_table(target, djdb):
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    have = tables(target, djdb)
    for t in ["django_content_type", "auth_user", "auth_group", "auth_permission",
              "auth_user_groups", "django_session", "django_admin_log",
              "django_migrations", "django_app_author", "django_app_book",
              "django_app_book_tags", "django_app_tag", "django_app_job"]:
        assert t in have, f"{t} missing after migrate: {sorted(have)}"
    applied = {(a, n) for a, n in MigrationRecorder(connection).applied_migrations()}
    assert ("django_app", "0001_initial") in applied
    assert ("admin", "0001_initial") in applied
    assert ("auth", "0012_alter_user_first_name_max_length") in applied


def test_models_match_migrations(djdb):
    """The shipped migration is what makemigrations writes for the models."""
    from django.core.management import call_command

    call_command("makemigrations", "django_app", "--check", "--dry-run", verbosity=0)


def test_check_database(djdb):
    from django.core.management import call_command

    out = io.StringIO()
    call_command("check", "--database", "default", stdout=out, stderr=out)
    assert "System check identified no issues" in out.getvalue(), out.getvalue()


def test_introspected_constraints(djdb):
    """What Django reads back from the catalog: the unique_together, the
    index and the foreign keys the migration made."""
    from django.db import connection

    with connection.cursor() as c:
        cons = connection.introspection.get_constraints(c, "django_app_book")
    by_cols = {tuple(v["columns"]): v for v in cons.values()}
    assert by_cols[("author_id", "title")]["unique"]
    assert cons["book_pages_idx"]["index"] and cons["book_pages_idx"]["columns"] == ["pages"]
    fks = {tuple(v["columns"]): v["foreign_key"] for v in cons.values() if v["foreign_key"]}
    assert fks[("author_id",)] == ("django_app_author", "id")
    assert fks[("editor_id",)] == ("django_app_author", "id")
    # The admin log's PositiveSmallIntegerField: a column CHECK constraint,
    # read back from information_schema.CHECK_CONSTRAINTS.
    with connection.cursor() as c:
        log = connection.introspection.get_constraints(c, "django_admin_log")
    checks = [v["columns"] for v in log.values() if v["check"]]
    assert checks == [["action_flag"]], log


def test_orm_round_trip(djdb):
    from django_app.models import Author, Book, Tag

    a = Author.objects.create(name="Ursula", born=datetime.date(1929, 10, 21))
    b = Book.objects.create(title="The Dispossessed", author=a, editor=a, pages=387,
                            price=decimal.Decimal("12.50"),
                            meta={"series": "Hainish", "awards": ["Hugo", "Nebula"]},
                            added=datetime.datetime(2024, 3, 5, 7, 8, 9,
                                                    tzinfo=datetime.timezone.utc))
    t1, t2 = Tag.objects.create(name="sf"), Tag.objects.create(name="utopia")
    b.tags.add(t1, t2)
    got = Book.objects.select_related("author").get(pk=b.pk)
    assert got.author.name == "Ursula" and got.author.born == datetime.date(1929, 10, 21)
    assert got.price == decimal.Decimal("12.50")
    assert sorted(t.name for t in got.tags.all()) == ["sf", "utopia"]
    assert list(Tag.objects.filter(books__author__name="Ursula").order_by("name")
                .values_list("name", flat=True)) == ["sf", "utopia"]
    # contains / startswith / endswith are LIKE BINARY (case matters),
    # the i- forms LIKE under the column's collation.
    assert Book.objects.filter(title__contains="Disposs").count() == 1
    assert Book.objects.filter(title__contains="disposs").count() == 0
    assert Book.objects.filter(title__icontains="disposs").count() == 1
    assert Book.objects.filter(title__startswith="The ").count() == 1
    assert Book.objects.filter(title__endswith="ESSED").count() == 0
    assert Book.objects.filter(title__iendswith="ESSED").count() == 1
    # regex: REGEXP_LIKE(…, 'c'); iregex: 'i'.
    assert Book.objects.filter(title__regex=r"^The D[a-z]+$").count() == 1
    assert Book.objects.filter(title__regex=r"^the").count() == 0
    assert Book.objects.filter(title__iregex=r"^the").count() == 1
    # JSONField: JSON_EXTRACT / JSON_CONTAINS / JSON_CONTAINS_PATH.
    assert Book.objects.get(pk=b.pk).meta == {"series": "Hainish", "awards": ["Hugo", "Nebula"]}
    assert Book.objects.filter(meta__series="Hainish").count() == 1
    assert Book.objects.filter(meta__awards__1="Nebula").count() == 1
    assert Book.objects.filter(meta__has_key="awards").count() == 1
    assert Book.objects.filter(meta__contains={"series": "Hainish"}).count() == 1
    assert Book.objects.filter(meta__series="Earthsea").count() == 0
    # DateTimeField with USE_TZ: TruncMonth, __date, __hour.
    from django.db.models.functions import TruncMonth
    assert list(Book.objects.filter(pk=b.pk).annotate(m=TruncMonth("added"))
                .values_list("m", flat=True)) == [
        datetime.datetime(2024, 3, 1, tzinfo=datetime.timezone.utc)]
    assert Book.objects.filter(added__date=datetime.date(2024, 3, 5), added__hour=7).count() == 1
    # Date part lookups: EXTRACT(MONTH FROM …), DAYOFWEEK(…), BETWEEN.
    assert Author.objects.filter(born__month=10, born__day=21).count() == 1
    assert Author.objects.filter(born__year=1929, born__week_day=2).count() == 1
    assert list(Author.objects.filter(name="Ursula").values_list("born__quarter", flat=True)) == [4]
    got.pages = 400
    got.save(update_fields=["pages"])
    assert Book.objects.get(pk=b.pk).pages == 400
    b.tags.remove(t1)
    assert [t.name for t in Book.objects.get(pk=b.pk).tags.all()] == ["utopia"]


def test_unique_together_is_enforced(djdb):
    from django.db import IntegrityError, transaction
    from django_app.models import Author, Book

    a = Author.objects.create(name="Twice")
    Book.objects.create(title="Same", author=a, price=1)
    with pytest.raises(IntegrityError):
        with transaction.atomic():
            Book.objects.create(title="Same", author=a, price=2)
    assert Book.objects.filter(author=a).count() == 1


def test_nested_atomic_inner_rollback_keeps_outer(djdb):
    from django.db import transaction
    from django_app.models import Author

    class Boom(Exception):
        pass

    with transaction.atomic():
        Author.objects.create(name="outer-1")
        with pytest.raises(Boom):
            with transaction.atomic():
                Author.objects.create(name="inner")
                assert Author.objects.filter(name="inner").exists()
                raise Boom()
        assert not Author.objects.filter(name="inner").exists()
        Author.objects.create(name="outer-2")
    names = set(Author.objects.filter(name__in=["outer-1", "outer-2", "inner"])
                .values_list("name", flat=True))
    assert names == {"outer-1", "outer-2"}


def test_outer_atomic_rollback_discards_everything(djdb):
    from django.db import transaction
    from django_app.models import Author

    with pytest.raises(RuntimeError):
        with transaction.atomic():
            Author.objects.create(name="gone-1")
            with transaction.atomic():
                Author.objects.create(name="gone-2")
            raise RuntimeError("roll back the outer block")
    assert not Author.objects.filter(name__startswith="gone-").exists()


def test_select_for_update_skip_locked_two_connections(djdb):
    from django.db import connection, transaction
    from django_app.models import Job

    Job.objects.all().delete()
    Job.objects.bulk_create([Job(name=f"job{i}") for i in range(6)])
    first_locked = threading.Event()
    second_done = threading.Event()
    claimed = {}
    errors = []

    def worker(who, before, after):
        try:
            with transaction.atomic():
                if before is not None and not before.wait(WAIT_S):
                    raise TimeoutError(f"{who}: the other worker never locked its rows")
                rows = list(Job.objects.select_for_update(skip_locked=True)
                            .order_by("id")[:3])
                claimed[who] = [r.pk for r in rows]
                Job.objects.filter(pk__in=claimed[who]).update(claimed_by=who)
                after.set()
                if who == "a" and not second_done.wait(WAIT_S):
                    raise TimeoutError("a: b never finished")
        except Exception as e:  # reported by the main thread
            errors.append(e)
            after.set()
        finally:
            connection.close()

    ta = threading.Thread(target=worker, args=("a", None, first_locked))
    tb = threading.Thread(target=worker, args=("b", first_locked, second_done))
    ta.start()
    tb.start()
    ta.join(WAIT_S * 2)
    tb.join(WAIT_S * 2)
    assert not ta.is_alive() and not tb.is_alive(), "a worker hung"
    assert not errors, errors
    assert len(claimed["a"]) == 3 and len(claimed["b"]) == 3
    assert not set(claimed["a"]) & set(claimed["b"]), claimed
    by = dict(Job.objects.values_list("pk", "claimed_by"))
    assert {pk for pk, w in by.items() if w == "a"} == set(claimed["a"])
    assert {pk for pk, w in by.items() if w == "b"} == set(claimed["b"])


def test_bulk_create_aggregate_and_f_expressions(djdb):
    from django.db.models import Avg, Count, F, Max, Sum
    from django_app.models import Author, Book

    a = Author.objects.create(name="Bulk")
    # One multi-row INSERT (MySQL has no RETURNING: Django sets no pk).
    books = Book.objects.bulk_create([
        Book(title=f"vol {i}", author=a, pages=100 * i, price=decimal.Decimal(f"{i}.25"))
        for i in range(1, 6)
    ])
    assert len(books) == 5
    qs = Book.objects.filter(author=a)
    assert sorted(qs.values_list("title", flat=True)) == [f"vol {i}" for i in range(1, 6)]
    agg = qs.aggregate(n=Count("id"), total=Sum("pages"), top=Max("price"), mean=Avg("pages"))
    assert agg == {"n": 5, "total": 1500, "top": decimal.Decimal("5.25"), "mean": 300}
    assert qs.update(pages=F("pages") + 1, price=F("price") * 2) == 5
    assert sorted(qs.values_list("pages", flat=True)) == [101, 201, 301, 401, 501]
    # price 2.50 4.50 6.50 8.50 10.50 against pages/100 + 3: 4.01 5.01 6.01 7.01 8.01
    assert qs.filter(price__gt=F("pages") / 100 + 3).count() == 3
    per = (Author.objects.filter(name="Bulk").annotate(n=Count("books"), p=Sum("books__pages"))
           .values_list("n", "p").get())
    assert per == (5, 1505)


def test_delete_cascades_and_sets_null(djdb):
    from django_app.models import Author, Book, Tag

    writer = Author.objects.create(name="Writer")
    editor = Author.objects.create(name="Editor")
    t = Tag.objects.create(name="doomed-tag")
    b1 = Book.objects.create(title="one", author=writer, editor=editor, price=1)
    b2 = Book.objects.create(title="two", author=editor, editor=writer, price=1)
    b1.tags.add(t)
    editor.delete()
    assert not Book.objects.filter(pk=b2.pk).exists(), "CASCADE did not delete the book"
    assert Book.objects.get(pk=b1.pk).editor_id is None, "SET NULL did not clear editor"
    writer.delete()
    assert not Book.objects.filter(pk=b1.pk).exists()
    assert Book.tags.through.objects.filter(tag=t).count() == 0
    assert Tag.objects.filter(pk=t.pk).exists()


def test_migrate_app_backwards_and_forwards(target, djdb):
    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.recorder import MigrationRecorder

    call_command("migrate", "django_app", "zero", verbosity=0, interactive=False)
    have = tables(target, djdb)
    assert not {t for t in have if t.startswith("django_app_")}, sorted(have)
    assert "auth_user" in have
    applied = {a for a, _ in MigrationRecorder(connection).applied_migrations()}
    assert "django_app" not in applied
    call_command("migrate", "django_app", verbosity=0, interactive=False)
    assert "django_app_book_tags" in tables(target, djdb)
