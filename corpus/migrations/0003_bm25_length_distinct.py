"""BM25 chunk length = number of distinct lexemes in the chunk's tsvector (length(tsvector)).

Counting every lexeme occurrence needs the whole tsvector unnested into rows, per candidate and
per query: at 100k chunks that alone cost seconds for common queries. length() reads the
tsvector header. The two lengths are closely proportional, which is all BM25's length
normalisation (len / avglen) needs. The statistics are recomputed under the new definition.
"""

from django.db import migrations

FORWARD = """
CREATE OR REPLACE FUNCTION bm25_length(tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS $$ SELECT length($1) $$;
UPDATE bm25_collection_stats s SET total_length = coalesce(
    (SELECT sum(length(c.search)) FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id
     WHERE d.collection_id = s.collection_id), 0);
"""

BACKWARD = """
CREATE OR REPLACE FUNCTION bm25_length(tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS
$$ SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer FROM unnest($1) $$;
UPDATE bm25_collection_stats s SET total_length = coalesce(
    (SELECT sum(bm25_length(c.search)) FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id
     WHERE d.collection_id = s.collection_id), 0);
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0002_bm25_stats")]

    operations = [migrations.RunSQL(FORWARD, BACKWARD)]
