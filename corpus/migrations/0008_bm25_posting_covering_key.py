"""The postings' primary key carries tf and len, so exact BM25 scoring reads the index alone.

The second pass of keyword search (chat/bm25.py) scores each pooled chunk from its postings,
looked up by (chunk, lexeme). Without tf and len in the key, each posting found costs a visit to
a random heap page as well; on the benchmark table that is ~700 pages per query. Side by side
on the 100k-chunk benchmark the keyword half took 0.92x the time (docs/evaluation.md).
"""

from django.db import migrations

FORWARD = """
ALTER TABLE bm25_posting DROP CONSTRAINT bm25_posting_pkey,
    ADD CONSTRAINT bm25_posting_pkey PRIMARY KEY (chunk_id, lexeme) INCLUDE (tf, len);
"""

REVERSE = """
ALTER TABLE bm25_posting DROP CONSTRAINT bm25_posting_pkey,
    ADD CONSTRAINT bm25_posting_pkey PRIMARY KEY (chunk_id, lexeme);
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0007_chunk_embedding_inline")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
