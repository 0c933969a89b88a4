"""Chunk embeddings live in the row itself, not in the TOAST table.

pgvector stores a vector as EXTERNAL: once a row passes ~2 kB, the largest such value moves out of
line. A 384-dimension embedding is 1.5 kB, the largest value in a chunk's row, so it was the one
moved, and every distance computed from a row (an exact scan, the similarity of a keyword hit,
the distance of each chunk the HNSW scan returns) cost a TOAST lookup. With MAIN storage the
chunk's text and tsvector move out of line instead; they are read far less often (the text of the
candidates and segments only, the tsvector by ts_rank_cd only).

Measured on the benchmark table (docs/evaluation.md, "Embeddings in the row"): an exact search of
the 8,936-chunk development collection went from 92 ms to 13 ms.

Existing rows are rewritten (VACUUM FULL, which also rebuilds the indexes; it holds an exclusive
lock on corpus_chunk while it runs), so this migration runs outside a transaction.
"""

from django.db import migrations


class Migration(migrations.Migration):
    atomic = False  # VACUUM cannot run inside a transaction block

    dependencies = [("corpus", "0006_bm25_lexeme_collation_c")]

    operations = [
        migrations.RunSQL("ALTER TABLE corpus_chunk ALTER COLUMN embedding SET STORAGE MAIN",
                          "ALTER TABLE corpus_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL"),
        migrations.RunSQL("VACUUM FULL corpus_chunk", migrations.RunSQL.noop),
    ]
