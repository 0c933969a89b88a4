"""corpus.vectors: chunk vectors go to the database in a shorter text form that stores the same float32s."""

import numpy as np
import pytest
from django.db import connection
from pgvector.vector import Vector

from corpus.models import Chunk
from corpus.vectors import vector_text
from tests.chat.factories import make_collection, make_document, random_unit_vectors


def test_the_text_is_shorter_and_parses_to_the_same_float32s():
    vector = random_unit_vectors(1, seed=3)[0]
    text, pgvector_text = vector_text(vector), Vector._to_db(vector)
    assert len(text) < 0.75 * len(pgvector_text)
    parsed = np.array([float(x) for x in text[1:-1].split(",")], dtype=np.float32)
    assert np.array_equal(parsed, vector)
    assert vector_text([0.5, -2, 1e-8]) == "[0.5,-2,9.99999994e-09]"  # lists too, to float32 precision
    with pytest.raises(ValueError):
        vector_text([[1.0, 2.0]])


@pytest.mark.django_db
def test_a_chunk_vector_reads_back_exactly_as_written():
    vectors = random_unit_vectors(3, seed=5)
    document = make_document(make_collection("vectors"), "a.txt", ["one ", "two ", "three "], embeddings=vectors)
    stored = [np.asarray(c.embedding, dtype=np.float32)
              for c in Chunk.objects.filter(document=document).order_by("chunk_index")]
    assert all(np.array_equal(s, v) for s, v in zip(stored, vectors, strict=True))
    with connection.cursor() as cursor:  # and Postgres reads both texts as the same vector
        cursor.execute("SELECT %s::vector = %s::vector", [vector_text(vectors[0]), Vector._to_db(vectors[0])])
        assert cursor.fetchone()[0] is True
