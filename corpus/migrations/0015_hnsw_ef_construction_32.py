"""The chunk HNSW index inserts with ef_construction 32 (was 64): publishing at a million chunks.

Each published chunk is an HNSW insert, ~70% of the publish step's database time at a million chunks
(docs/scaling.md, "Publishing"); ef_construction is how many candidates that insert's graph search
keeps. 32 is the least pgvector accepts with m = 16 (2 x m, checked when an index is built). Side
by side at 1M the publish step ran 1.19x as fast (median of 4 rounds); recall@10 at ef_search 100 of
queries near chunks inserted at 32 stayed within noise, and a 200k-vector graph built at 32 lost
less than a point against one built at 64.

`ALTER INDEX ... SET` changes only the stored option, read by every later insert and by a rebuild:
no rewrite, so it takes a moment on any size of table (a brief lock on the index, waiting for
searches in flight). The graph already built stays as it is. Model state: the same index, new option.
"""

from django.db import migrations
from pgvector.django import HnswIndex

FORWARD = "ALTER INDEX chunk_embedding_hnsw SET (ef_construction = 32)"
REVERSE = "ALTER INDEX chunk_embedding_hnsw SET (ef_construction = 64)"


def _index(ef_construction: int) -> HnswIndex:
    return HnswIndex(name="chunk_embedding_hnsw", fields=["embedding"], m=16, ef_construction=ef_construction,
                     opclasses=["vector_cosine_ops"])


class Migration(migrations.Migration):
    dependencies = [("corpus", "0014_reembed")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(FORWARD, REVERSE)],
            state_operations=[
                migrations.RemoveIndex(model_name="chunk", name="chunk_embedding_hnsw"),
                migrations.AddIndex(model_name="chunk", index=_index(32)),
            ],
        ),
    ]
