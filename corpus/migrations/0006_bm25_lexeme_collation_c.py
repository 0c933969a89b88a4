"""Lexemes compare byte by byte (collation "C") in the BM25 tables.

Every keyword search descends the postings' primary key (chunk, lexeme) and impact index
(collection, lexeme, impact) and the statistics key (collection, lexeme) once per query lexeme
and chunk. Under a linguistic collation (en_US.UTF-8, or even C.UTF-8 from libc, which Postgres
does not recognise as byte order) each comparison inside those btrees calls strcoll(). Lexemes
are only ever matched for equality, so their sort order is of no interest to anyone: byte order
gives the same matches at a fraction of the cost (docs/evaluation.md, "Lexeme collation").
"""

from django.db import migrations

FORWARD = """
ALTER TABLE bm25_posting ALTER COLUMN lexeme TYPE text COLLATE "C";
ALTER TABLE bm25_term_stats ALTER COLUMN lexeme TYPE text COLLATE "C";
"""

REVERSE = """
ALTER TABLE bm25_posting ALTER COLUMN lexeme TYPE text COLLATE "default";
ALTER TABLE bm25_term_stats ALTER COLUMN lexeme TYPE text COLLATE "default";
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0005_embedding_mode_neighbours")]

    operations = [migrations.RunSQL(FORWARD, REVERSE)]
