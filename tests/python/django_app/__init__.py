"""A tiny Django app for tests/python/test_django.py: foreign keys with
CASCADE and SET NULL, a many-to-many, a unique_together and an index. Its
migration (migrations/0001_initial.py) was written by `makemigrations`; the
test checks that the models still match it."""
