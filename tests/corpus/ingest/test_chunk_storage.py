import random
import string

import pytest
from django.db import connection

from corpus.models import Chunk
from tests.chat.factories import make_collection, make_document, random_unit_vectors

pytestmark = pytest.mark.django_db


def _out_of_line(column: str, chunk_id: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT pg_column_toast_chunk_id({column}) IS NOT NULL FROM corpus_chunk WHERE id = %s",
                       [chunk_id])
        return cursor.fetchone()[0]


def _chunk_sized_text() -> str:
    """~900 characters of words that hardly compress: with its tsvector and a 1.5 kB embedding, a
    typical chunk overflows the ~2 kB a row may hold before values move out of it."""
    rng = random.Random(1)
    return " ".join("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(130))


def test_a_chunk_keeps_its_embedding_in_the_row_and_moves_its_tsvector_out():
    text = _chunk_sized_text()
    document = make_document(make_collection("docs"), "long.txt", [text], embeddings=random_unit_vectors(1))
    chunk = Chunk.objects.get(document=document)
    assert _out_of_line("search", chunk.id)
    assert not _out_of_line("embedding", chunk.id)
    assert chunk.text == text and len(chunk.embedding) == 384


def test_with_the_old_external_storage_the_embedding_was_the_value_moved_out():
    # The reason for corpus/migrations/0007: the same row under pgvector's default storage.
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE corpus_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL")
    document = make_document(make_collection("docs"), "long.txt", [_chunk_sized_text()],
                             embeddings=random_unit_vectors(1))
    assert _out_of_line("embedding", Chunk.objects.get(document=document).id)
