"""BM25's functions and triggers from one file, corpus/bm25.sql: today's definitions, the ones the
earlier migrations left (0002-0017), applied again so that the file is what the database runs.

A later change to BM25's SQL edits corpus/bm25.sql and adds a migration like this one with the file's
new SHA-256 (tests/corpus/test_bm25_sql.py fails until it does: a deployment already migrated past this
one would otherwise never run the change). Reversing is a no-op: the definitions are 0017's.
"""

from pathlib import Path

from django.db import migrations

BM25_SQL = Path(__file__).resolve().parents[1] / "bm25.sql"
APPLIES_SHA256 = "5762762c1cbb5ab0ad3b8ab66bacf00eec505faf350e8fcc7bb053cccb12327b"


def apply_bm25_sql(apps, schema_editor) -> None:
    schema_editor.execute(BM25_SQL.read_text(), params=None)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0020_stale_html_documents")]

    operations = [migrations.RunPython(apply_bm25_sql, migrations.RunPython.noop)]
