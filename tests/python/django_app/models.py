from django.db import models


class Author(models.Model):
    name = models.CharField(max_length=100, unique=True)
    born = models.DateField(null=True)


class Tag(models.Model):
    name = models.CharField(max_length=50, unique=True)


class Book(models.Model):
    # MySQL 8's default collation, named: Tributary's database default is
    # still utf8mb4_bin (docs/COMPATIBILITY.md), and icontains / iexact
    # need a case-insensitive column, as on MySQL.
    title = models.CharField(max_length=200, db_collation="utf8mb4_0900_ai_ci")
    author = models.ForeignKey(Author, on_delete=models.CASCADE, related_name="books")
    editor = models.ForeignKey(Author, on_delete=models.SET_NULL, null=True,
                               related_name="edited")
    tags = models.ManyToManyField(Tag, related_name="books")
    pages = models.IntegerField(default=0)
    price = models.DecimalField(max_digits=8, decimal_places=2)
    meta = models.JSONField(null=True)
    added = models.DateTimeField(null=True)

    class Meta:
        unique_together = [("author", "title")]
        indexes = [models.Index(fields=["pages"], name="book_pages_idx")]


class Job(models.Model):
    """A work queue row: select_for_update(skip_locked=True) claims them."""

    name = models.CharField(max_length=40)
    claimed_by = models.CharField(max_length=40, blank=True, default="")
