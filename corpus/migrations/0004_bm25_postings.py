"""BM25 postings: one row per (chunk, lexeme) with the term frequency and the chunk's length.

Scoring BM25 from the chunks' tsvectors means reading every matching chunk from the heap; a
common query term matches thousands of chunks at 100k. With postings, keyword search reads each
query term's postings from an index in impact order, and only as many as it needs (see
chat/bm25.py). `impact` is the BM25 term-frequency factor under fixed parameters (k1 1.2, b 0.75,
average length 32); it orders a term's postings, best first, and gives the approximate first-pass
score that picks the pool. Final scores are computed at query time from tf and len with the
configured k1, b and the live average length, so the fixed values only decide which postings of a
very common term are read and which chunks reach the pool.

Maintained like the statistics of 0002: statement-level triggers on corpus_chunk with transition
tables. No foreign keys, for the same reason (Django's test flush truncates without CASCADE).
"""

from django.db import migrations

TABLE = """
CREATE TABLE bm25_posting (
    chunk_id bigint NOT NULL,
    collection_id bigint NOT NULL,
    tf integer NOT NULL,
    len integer NOT NULL,
    impact real GENERATED ALWAYS AS (tf / (tf + 1.2 * (0.25 + 0.75 * len / 32.0))) STORED,
    lexeme text NOT NULL,
    PRIMARY KEY (chunk_id, lexeme)
);
-- A term's postings in one collection, best first, readable without touching the table.
CREATE INDEX bm25_posting_by_impact ON bm25_posting (collection_id, lexeme, impact DESC)
    INCLUDE (chunk_id, tf, len);
"""

# (chunk, lexeme) rows of the chunks in `rows` (a transition table or corpus_chunk itself).
POSTINGS_OF = """
    SELECT r.id, d.collection_id, coalesce(array_length(u.positions, 1), 1), length(r.search), u.lexeme
    FROM {rows} r JOIN corpus_document d ON d.id = r.document_id, unnest(r.search) AS u
"""
INSERT_POSTINGS = "INSERT INTO bm25_posting (chunk_id, collection_id, tf, len, lexeme)" + POSTINGS_OF
DELETE_POSTINGS = "DELETE FROM bm25_posting p USING {rows} o WHERE p.chunk_id = o.id;"

TRIGGERS = f"""
CREATE FUNCTION bm25_postings_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    {INSERT_POSTINGS.format(rows="bm25_new_rows")};
    RETURN NULL;
END
$fn$;

CREATE FUNCTION bm25_postings_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    {DELETE_POSTINGS.format(rows="bm25_old_rows")}
    RETURN NULL;
END
$fn$;

CREATE FUNCTION bm25_postings_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    {DELETE_POSTINGS.format(rows="bm25_old_rows")}
    {INSERT_POSTINGS.format(rows="bm25_new_rows")};
    RETURN NULL;
END
$fn$;

CREATE FUNCTION bm25_postings_truncated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM bm25_posting;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION bm25_postings_collections_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM bm25_posting p USING bm25_old_rows o WHERE p.collection_id = o.id;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER bm25_postings_after_insert AFTER INSERT ON corpus_chunk
    REFERENCING NEW TABLE AS bm25_new_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_inserted();
CREATE TRIGGER bm25_postings_after_delete AFTER DELETE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_deleted();
CREATE TRIGGER bm25_postings_after_update AFTER UPDATE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_updated();
CREATE TRIGGER bm25_postings_after_truncate AFTER TRUNCATE ON corpus_chunk
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_truncated();
CREATE TRIGGER bm25_postings_after_collection_delete AFTER DELETE ON corpus_collection
    REFERENCING OLD TABLE AS bm25_old_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_collections_deleted();
"""

BACKFILL = INSERT_POSTINGS.format(rows="corpus_chunk") + ";\nANALYZE bm25_posting;"

REVERSE = """
DROP TRIGGER IF EXISTS bm25_postings_after_collection_delete ON corpus_collection;
DROP TRIGGER IF EXISTS bm25_postings_after_truncate ON corpus_chunk;
DROP TRIGGER IF EXISTS bm25_postings_after_update ON corpus_chunk;
DROP TRIGGER IF EXISTS bm25_postings_after_delete ON corpus_chunk;
DROP TRIGGER IF EXISTS bm25_postings_after_insert ON corpus_chunk;
DROP FUNCTION IF EXISTS bm25_postings_collections_deleted(), bm25_postings_truncated(), bm25_postings_updated(),
    bm25_postings_deleted(), bm25_postings_inserted();
DROP TABLE IF EXISTS bm25_posting;
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0003_bm25_length_distinct")]

    operations = [migrations.RunSQL(TABLE + TRIGGERS + BACKFILL, REVERSE)]
