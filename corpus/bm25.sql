-- Keyword search (BM25): today's functions and triggers, in one place.
--
-- Applied by the corpus migrations (0021 and any later one that re-applies it; a test checks that the
-- newest such migration applied this very file, and that the migrated database's functions and triggers
-- are exactly these: tests/corpus/test_bm25_sql.py). To change BM25's SQL, edit this file and add a
-- migration that runs it again (copy 0021 with the new SHA-256).
--
-- The tables the triggers keep (made by migrations 0002 and 0004):
--   bm25_collection_stats (collection_id, chunk_count, total_length): per collection, the chunks and
--     the sum of their lengths;
--   bm25_term_stats (collection_id, lexeme, df): per lexeme, how many chunks contain it;
--   bm25_posting (chunk_id, collection_id, tf, len, impact, lexeme): one row per (chunk, lexeme),
--     read in impact order by keyword search (chat/retrieval/bm25.py).
-- No foreign keys on purpose: Django's test flush TRUNCATEs without CASCADE; the TRUNCATE and
-- collection DELETE triggers below keep the tables clean instead.
--
-- Every trigger is statement-level with transition tables (bm25_new_rows, bm25_old_rows): the pipeline
-- swaps a document's chunks with one bulk delete and one bulk insert, so one aggregated upsert per
-- statement, in (collection_id, lexeme) order so that two transactions on one collection wait for each
-- other instead of deadlocking.

-- The text the chunks' `search` tsvector indexes beside its words: underscore identifiers
-- (DJANGO_SETTINGS_MODULE) whole, underscores taken out, so they match as one lexeme (migration 0009).
-- Used by the generated column: changing it here does not recompute existing rows.

CREATE OR REPLACE FUNCTION ragweb_identifiers(context text, body text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE
AS $function$
    SELECT coalesce(string_agg(replace(m[1], '_', ''), ' '), '')
    FROM regexp_matches(coalesce(context, '') || ' ' || coalesce(body, ''),
                        '([A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+)', 'g') AS m
$function$;

-- A chunk's length for BM25: the number of distinct lexemes of its tsvector (migration 0003).

CREATE OR REPLACE FUNCTION bm25_length(tsvector)
 RETURNS integer
 LANGUAGE sql
 IMMUTABLE PARALLEL SAFE STRICT
AS $function$ SELECT length($1) $function$;


-- Statistics: kept exact and live at publish (the chunks outside the HNSW graph are scored with them too).

CREATE OR REPLACE FUNCTION bm25_chunks_inserted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    dead_collections bigint[];
    dead_lexemes text[];
BEGIN
    INSERT INTO bm25_collection_stats AS s (collection_id, chunk_count, total_length)
    SELECT collection_id, sum(sign), sum(sign * bm25_length(search))
    FROM (SELECT d.collection_id, r.search, 1 AS sign FROM bm25_new_rows r JOIN corpus_document d ON d.id = r.document_id) AS changed
    GROUP BY collection_id
    ORDER BY collection_id
    ON CONFLICT (collection_id) DO UPDATE
        SET chunk_count = s.chunk_count + excluded.chunk_count,
            total_length = s.total_length + excluded.total_length;

    WITH upserted AS (
        INSERT INTO bm25_term_stats AS t (collection_id, lexeme, df)
        SELECT changed.collection_id, u.lexeme, sum(changed.sign)
        FROM (SELECT d.collection_id, r.search, 1 AS sign FROM bm25_new_rows r JOIN corpus_document d ON d.id = r.document_id) AS changed, unnest(changed.search) AS u
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

    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION bm25_chunks_deleted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    dead_collections bigint[];
    dead_lexemes text[];
BEGIN
    INSERT INTO bm25_collection_stats AS s (collection_id, chunk_count, total_length)
    SELECT collection_id, sum(sign), sum(sign * bm25_length(search))
    FROM (SELECT d.collection_id, r.search, -1 AS sign FROM bm25_old_rows r JOIN corpus_document d ON d.id = r.document_id) AS changed
    GROUP BY collection_id
    ORDER BY collection_id
    ON CONFLICT (collection_id) DO UPDATE
        SET chunk_count = s.chunk_count + excluded.chunk_count,
            total_length = s.total_length + excluded.total_length;

    WITH upserted AS (
        INSERT INTO bm25_term_stats AS t (collection_id, lexeme, df)
        SELECT changed.collection_id, u.lexeme, sum(changed.sign)
        FROM (SELECT d.collection_id, r.search, -1 AS sign FROM bm25_old_rows r JOIN corpus_document d ON d.id = r.document_id) AS changed, unnest(changed.search) AS u
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

    RETURN NULL;
END
$function$;

-- An UPDATE that changes nothing keyword search reads (e.g. only in_graph, the graph merge) does nothing;
-- asked as a count so the join is planned as a hash join (a 20,000-row UPDATE spent 10 minutes in the
-- EXISTS form: migration 0017).

CREATE OR REPLACE FUNCTION bm25_chunks_updated()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
DECLARE
    dead_collections bigint[];
    dead_lexemes text[];
BEGIN
    -- ragweb 0017: nothing keyword search reads changed (e.g. only in_graph): nothing to do. A count,
    -- not EXISTS, so that the join is planned as a hash join (corpus/migrations/0017).
    IF (SELECT count(*) FROM bm25_new_rows n JOIN bm25_old_rows o ON o.id = n.id
        WHERE n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id) = 0 THEN
        RETURN NULL;
    END IF;

    INSERT INTO bm25_collection_stats AS s (collection_id, chunk_count, total_length)
    SELECT collection_id, sum(sign), sum(sign * bm25_length(search))
    FROM (SELECT d.collection_id, r.search, 1 AS sign FROM bm25_new_rows r JOIN corpus_document d ON d.id = r.document_id UNION ALL SELECT d.collection_id, r.search, -1 AS sign FROM bm25_old_rows r JOIN corpus_document d ON d.id = r.document_id) AS changed
    GROUP BY collection_id
    ORDER BY collection_id
    ON CONFLICT (collection_id) DO UPDATE
        SET chunk_count = s.chunk_count + excluded.chunk_count,
            total_length = s.total_length + excluded.total_length;

    WITH upserted AS (
        INSERT INTO bm25_term_stats AS t (collection_id, lexeme, df)
        SELECT changed.collection_id, u.lexeme, sum(changed.sign)
        FROM (SELECT d.collection_id, r.search, 1 AS sign FROM bm25_new_rows r JOIN corpus_document d ON d.id = r.document_id UNION ALL SELECT d.collection_id, r.search, -1 AS sign FROM bm25_old_rows r JOIN corpus_document d ON d.id = r.document_id) AS changed, unnest(changed.search) AS u
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

    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION bm25_chunks_truncated()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM bm25_term_stats;
    DELETE FROM bm25_collection_stats;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION bm25_collections_deleted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM bm25_term_stats t USING bm25_old_rows o WHERE t.collection_id = o.id;
    DELETE FROM bm25_collection_stats s USING bm25_old_rows o WHERE s.collection_id = o.id;
    RETURN NULL;
END
$function$;


-- Postings: a chunk has postings exactly while it is in the HNSW graph (in_graph, set by the background
-- merge, corpus.graph.merge); keyword search scores the chunks outside the graph from their tsvectors.
-- Inserted in the impact index's order (migration 0016).

CREATE OR REPLACE FUNCTION bm25_postings_inserted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    INSERT INTO bm25_posting (chunk_id, collection_id, tf, len, lexeme)
    SELECT r.id, d.collection_id, coalesce(array_length(u.positions, 1), 1), length(r.search), u.lexeme
    FROM bm25_new_rows r JOIN corpus_document d ON d.id = r.document_id, unnest(r.search) AS u
    WHERE r.in_graph
    ORDER BY d.collection_id, u.lexeme;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION bm25_postings_deleted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM bm25_posting p USING bm25_old_rows o WHERE p.chunk_id = o.id AND o.in_graph;
    RETURN NULL;
END
$function$;

-- A row leaving the graph or changing its text or document loses its postings; a row entering the graph
-- or changing while in it gets them; an unchanged row in the graph keeps its.

CREATE OR REPLACE FUNCTION bm25_postings_updated()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM bm25_posting p USING bm25_old_rows o
    WHERE p.chunk_id = o.id AND o.in_graph
      AND NOT EXISTS (SELECT 1 FROM bm25_new_rows n WHERE n.id = o.id AND n.in_graph AND o.in_graph AND n.search IS NOT DISTINCT FROM o.search AND n.document_id = o.document_id);
    INSERT INTO bm25_posting (chunk_id, collection_id, tf, len, lexeme)
    SELECT r.id, d.collection_id, coalesce(array_length(u.positions, 1), 1), length(r.search), u.lexeme
    FROM bm25_new_rows r JOIN corpus_document d ON d.id = r.document_id, unnest(r.search) AS u
    WHERE r.in_graph AND NOT EXISTS (SELECT 1 FROM bm25_old_rows o WHERE o.id = r.id AND o.in_graph AND r.in_graph AND o.search IS NOT DISTINCT FROM r.search AND o.document_id = r.document_id)
    ORDER BY d.collection_id, u.lexeme;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION bm25_postings_truncated()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM bm25_posting;
    RETURN NULL;
END
$function$;

CREATE OR REPLACE FUNCTION bm25_postings_collections_deleted()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
BEGIN
    DELETE FROM bm25_posting p USING bm25_old_rows o WHERE p.collection_id = o.id;
    RETURN NULL;
END
$function$;


-- The triggers.

CREATE OR REPLACE TRIGGER bm25_after_insert AFTER INSERT ON corpus_chunk
    REFERENCING NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_inserted();
CREATE OR REPLACE TRIGGER bm25_after_delete AFTER DELETE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_deleted();
CREATE OR REPLACE TRIGGER bm25_after_update AFTER UPDATE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_updated();
CREATE OR REPLACE TRIGGER bm25_after_truncate AFTER TRUNCATE ON corpus_chunk
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_chunks_truncated();
CREATE OR REPLACE TRIGGER bm25_after_collection_delete AFTER DELETE ON corpus_collection
    REFERENCING OLD TABLE AS bm25_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_collections_deleted();
CREATE OR REPLACE TRIGGER bm25_postings_after_insert AFTER INSERT ON corpus_chunk
    REFERENCING NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_inserted();
CREATE OR REPLACE TRIGGER bm25_postings_after_delete AFTER DELETE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_deleted();
CREATE OR REPLACE TRIGGER bm25_postings_after_update AFTER UPDATE ON corpus_chunk
    REFERENCING OLD TABLE AS bm25_old_rows NEW TABLE AS bm25_new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_updated();
CREATE OR REPLACE TRIGGER bm25_postings_after_truncate AFTER TRUNCATE ON corpus_chunk
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_truncated();
CREATE OR REPLACE TRIGGER bm25_postings_after_collection_delete AFTER DELETE ON corpus_collection
    REFERENCING OLD TABLE AS bm25_old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION bm25_postings_collections_deleted();
