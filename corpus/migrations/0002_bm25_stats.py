"""BM25 corpus statistics kept exact by triggers on corpus_chunk.

Per collection: the number of chunks and the sum of their lengths (lexeme occurrences in the
`search` tsvector), and per lexeme the number of chunks containing it (document frequency).
The pipeline swaps a document's chunks with a bulk delete and a bulk insert in one transaction,
so the triggers are statement-level with transition tables: one aggregated upsert per statement,
not one per row. Rows are upserted in (collection_id, lexeme) order so that two transactions
touching the same collection wait for each other instead of deadlocking.

No foreign keys on purpose: Django's test flush TRUNCATEs model tables without CASCADE, and a
foreign key to corpus_collection would make that fail. A TRUNCATE trigger on corpus_chunk and a
DELETE trigger on corpus_collection keep the tables clean instead.
"""

from django.db import migrations

# Length of a chunk for BM25: number of lexeme occurrences (stop words are not indexed).
LENGTH_FUNCTION = """
CREATE FUNCTION bm25_length(tsvector) RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE STRICT AS
$$ SELECT coalesce(sum(coalesce(array_length(positions, 1), 1)), 0)::integer FROM unnest($1) $$;
"""

TABLES = """
CREATE TABLE bm25_collection_stats (
    collection_id bigint PRIMARY KEY,
    chunk_count bigint NOT NULL DEFAULT 0,
    total_length bigint NOT NULL DEFAULT 0
);
CREATE TABLE bm25_term_stats (
    collection_id bigint NOT NULL,
    lexeme text NOT NULL,
    df integer NOT NULL,
    PRIMARY KEY (collection_id, lexeme)
);
"""

# `changed` yields (collection_id, search, sign) for the rows of one statement.
APPLY_CHANGES = """
    INSERT INTO bm25_collection_stats AS s (collection_id, chunk_count, total_length)
    SELECT collection_id, sum(sign), sum(sign * bm25_length(search))
    FROM ({changed}) AS changed
    GROUP BY collection_id
    ORDER BY collection_id
    ON CONFLICT (collection_id) DO UPDATE
        SET chunk_count = s.chunk_count + excluded.chunk_count,
            total_length = s.total_length + excluded.total_length;

    WITH upserted AS (
        INSERT INTO bm25_term_stats AS t (collection_id, lexeme, df)
        SELECT changed.collection_id, u.lexeme, sum(changed.sign)
        FROM ({changed}) AS changed, unnest(changed.search) AS u
        GROUP BY changed.collection_id, u.lexeme
        HAVING sum(changed.sign) <> 0
        ORDER BY changed.collection_id, u.lexeme
        ON CONFLICT (collection_id, lexeme) DO UPDATE SET df = t.df + excluded.df
        RETURNING t.collection_id, t.lexeme, t.df
    )
    SELECT array_agg(collection_id), array_agg(lexeme) INTO dead_collections, dead_lexemes
    FROM upserted WHERE df <= 0;

    IF dead_collections IS NOT NULL THEN
        DELETE FROM bm25_term_stats t
        USING unnest(dead_collections, dead_lexemes) AS dead(collection_id, lexeme)
        WHERE t.collection_id = dead.collection_id AND t.lexeme = dead.lexeme AND t.df <= 0;
    END IF;
"""

NEW_ROWS = ("SELECT d.collection_id, r.search, 1 AS sign FROM bm25_new_rows r "
            "JOIN corpus_document d ON d.id = r.document_id")
OLD_ROWS = ("SELECT d.collection_id, r.search, -1 AS sign FROM bm25_old_rows r "
            "JOIN corpus_document d ON d.id = r.document_id")


def _function(name: str, changed: str) -> str:
    return f"""
CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    dead_collections bigint[];
    dead_lexemes text[];
BEGIN
{APPLY_CHANGES.format(changed=changed)}
    RETURN NULL;
END
$fn$;
"""


TRIGGERS = (
    _function("bm25_chunks_inserted", NEW_ROWS)
    + _function("bm25_chunks_deleted", OLD_ROWS)
    + _function("bm25_chunks_updated", f"{NEW_ROWS} UNION ALL {OLD_ROWS}")
    + """
CREATE FUNCTION bm25_chunks_truncated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM bm25_term_stats;
    DELETE FROM bm25_collection_stats;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION bm25_collections_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM bm25_term_stats t USING bm25_old_rows o WHERE t.collection_id = o.id;
    DELETE FROM bm25_collection_stats s USING bm25_old_rows o WHERE s.collection_id = o.id;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER bm25_after_insert AFTER INSERT ON corpus_chunk
    REFERENCING NEW TABLE AS bm25_new_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_inserted();
CREATE TRIGGER bm25_after_delete AFTER DELETE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_deleted();
CREATE TRIGGER bm25_after_update AFTER UPDATE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_updated();
CREATE TRIGGER bm25_after_truncate AFTER TRUNCATE ON corpus_chunk
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_truncated();
CREATE TRIGGER bm25_after_collection_delete AFTER DELETE ON corpus_collection
    REFERENCING OLD TABLE AS bm25_old_rows FOR EACH STATEMENT EXECUTE FUNCTION bm25_collections_deleted();
"""
)

# Chunks that exist before the migration.
BACKFILL = """
INSERT INTO bm25_collection_stats (collection_id, chunk_count, total_length)
SELECT d.collection_id, count(*), sum(bm25_length(c.search))
FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id GROUP BY d.collection_id;
INSERT INTO bm25_term_stats (collection_id, lexeme, df)
SELECT d.collection_id, u.lexeme, count(*)
FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) AS u
GROUP BY d.collection_id, u.lexeme;
"""

REVERSE = """
DROP TRIGGER IF EXISTS bm25_after_collection_delete ON corpus_collection;
DROP TRIGGER IF EXISTS bm25_after_truncate ON corpus_chunk;
DROP TRIGGER IF EXISTS bm25_after_update ON corpus_chunk;
DROP TRIGGER IF EXISTS bm25_after_delete ON corpus_chunk;
DROP TRIGGER IF EXISTS bm25_after_insert ON corpus_chunk;
DROP FUNCTION IF EXISTS bm25_collections_deleted(), bm25_chunks_truncated(), bm25_chunks_updated(),
    bm25_chunks_deleted(), bm25_chunks_inserted();
DROP TABLE IF EXISTS bm25_term_stats, bm25_collection_stats;
DROP FUNCTION IF EXISTS bm25_length(tsvector);
"""


class Migration(migrations.Migration):
    dependencies = [("corpus", "0001_initial")]

    operations = [
        migrations.RunSQL(LENGTH_FUNCTION + TABLES + TRIGGERS + BACKFILL, REVERSE),
    ]
