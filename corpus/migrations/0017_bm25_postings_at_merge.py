"""A chunk gets its BM25 postings when it is merged into the HNSW graph, not when it is published.

After corpus 0015 took the HNSW insert out of the publish step, the postings trigger was most of
what was left of it (docs/scaling.md, "Publishing"): ~5,000 entries into the postings' impact index
per 100 chunks. The postings now follow `in_graph`: a chunk has postings exactly when it is in the
graph. The background merge (corpus.graph.merge) sets in_graph in batches and the update trigger
inserts the batch's postings, sorted in the impact index's order (corpus 0016); keyword search
scores the chunks outside the graph exactly from their `search` tsvectors (chat/retrieval/bm25.py).

- insert: postings only for rows inserted already in the graph (bulk loads, tests);
- delete: only the postings of rows in the graph (a tail row has none to look for);
- update: a row leaving the graph or changing its text or document loses its postings; a row
  entering the graph or changing while in it gets them; an unchanged row in the graph keeps its.

The BM25 statistics (df, chunk count, total length) stay maintained at publish: they are cheap
beside the postings, and keeping them exact and live is what lets the tail be scored with the
same IDF and average length as the postings.

The statistics' update trigger keeps 0015's guard (a merge changes nothing they count) but asks it
as a count: as IF NOT EXISTS it was planned for its first row, a nested loop over both transition
tables, quadratic in the rows updated (a 20,000-row UPDATE spent 10 minutes in it; a 200-row merge
batch 40,000 comparisons).

Existing chunks outside the graph lose their postings here (the merge will insert them again),
under a lock that keeps publishes and merges out meanwhile, so no chunk ends with two sets.
"""

from django.db import migrations

LOCK = "LOCK TABLE corpus_chunk IN SHARE ROW EXCLUSIVE MODE;"

POSTINGS_OF = """
    INSERT INTO bm25_posting (chunk_id, collection_id, tf, len, lexeme)
    SELECT r.id, d.collection_id, coalesce(array_length(u.positions, 1), 1), length(r.search), u.lexeme
    FROM {rows} r JOIN corpus_document d ON d.id = r.document_id, unnest(r.search) AS u
    WHERE {condition}
    ORDER BY d.collection_id, u.lexeme;"""

# Same text and document, in the graph before and after: its postings stand.
UNCHANGED = ("{other}.id = {row}.id AND {other}.in_graph AND {row}.in_graph AND {other}.search IS NOT DISTINCT "
             "FROM {row}.search AND {other}.document_id = {row}.document_id")

FORWARD_FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION bm25_postings_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN{POSTINGS_OF.format(rows="bm25_new_rows", condition="r.in_graph")}
    RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION bm25_postings_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM bm25_posting p USING bm25_old_rows o WHERE p.chunk_id = o.id AND o.in_graph;
    RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION bm25_postings_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM bm25_posting p USING bm25_old_rows o
    WHERE p.chunk_id = o.id AND o.in_graph
      AND NOT EXISTS (SELECT 1 FROM bm25_new_rows n WHERE {UNCHANGED.format(other="n", row="o")});{
    POSTINGS_OF.format(rows="bm25_new_rows", condition="r.in_graph AND NOT EXISTS (SELECT 1 FROM bm25_old_rows o "
                       "WHERE " + UNCHANGED.format(other="o", row="r") + ")")}
    RETURN NULL;
END
$fn$;
"""
DROP_TAIL_POSTINGS = "DELETE FROM bm25_posting p USING corpus_chunk c WHERE c.id = p.chunk_id AND NOT c.in_graph;"

# corpus 0016's postings insert: every new row, in the impact index's order.
SORTED_INSERT = """    INSERT INTO bm25_posting (chunk_id, collection_id, tf, len, lexeme)
    SELECT r.id, d.collection_id, coalesce(array_length(u.positions, 1), 1), length(r.search), u.lexeme
    FROM bm25_new_rows r JOIN corpus_document d ON d.id = r.document_id, unnest(r.search) AS u
    ORDER BY d.collection_id, u.lexeme;
"""

# Back to corpus 0016: postings for every chunk, the update trigger behind 0015's guard.
BACKWARD_FUNCTIONS = f"""
CREATE OR REPLACE FUNCTION bm25_postings_inserted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
{SORTED_INSERT}    RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION bm25_postings_deleted() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM bm25_posting p USING bm25_old_rows o WHERE p.chunk_id = o.id;
    RETURN NULL;
END
$fn$;
CREATE OR REPLACE FUNCTION bm25_postings_updated() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    -- ragweb 0015: nothing keyword search reads changed (e.g. only in_graph): nothing to do.
    IF NOT EXISTS (SELECT 1 FROM bm25_new_rows n JOIN bm25_old_rows o ON o.id = n.id
                   WHERE n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id) THEN
        RETURN NULL;
    END IF;
    DELETE FROM bm25_posting p USING bm25_old_rows o WHERE p.chunk_id = o.id;
{SORTED_INSERT}    RETURN NULL;
END
$fn$;
"""
ADD_TAIL_POSTINGS = POSTINGS_OF.format(rows="corpus_chunk", condition="NOT r.in_graph")


OLD_GUARD = """
    -- ragweb 0015: nothing keyword search reads changed (e.g. only in_graph): nothing to do.
    IF NOT EXISTS (SELECT 1 FROM bm25_new_rows n JOIN bm25_old_rows o ON o.id = n.id
                   WHERE n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id) THEN
        RETURN NULL;
    END IF;"""
NEW_GUARD = """
    -- ragweb 0017: nothing keyword search reads changed (e.g. only in_graph): nothing to do. A count,
    -- not EXISTS, so that the join is planned as a hash join (corpus/migrations/0017).
    IF (SELECT count(*) FROM bm25_new_rows n JOIN bm25_old_rows o ON o.id = n.id
        WHERE n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id) = 0 THEN
        RETURN NULL;
    END IF;"""


def _replace_stats_guard(schema_editor, old: str, new: str) -> None:
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = 'bm25_chunks_updated'")
        row = cursor.fetchone()
        if row is None or old not in row[0]:
            return
        cursor.execute("CREATE OR REPLACE FUNCTION bm25_chunks_updated() RETURNS trigger LANGUAGE plpgsql AS "
                       f"$fn${row[0].replace(old, new)}$fn$")


def count_guard(apps, schema_editor) -> None:
    _replace_stats_guard(schema_editor, OLD_GUARD, NEW_GUARD)


def exists_guard(apps, schema_editor) -> None:
    _replace_stats_guard(schema_editor, NEW_GUARD, OLD_GUARD)


class Migration(migrations.Migration):
    dependencies = [("corpus", "0016_bm25_postings_sorted")]

    operations = [
        migrations.RunSQL(LOCK + FORWARD_FUNCTIONS + DROP_TAIL_POSTINGS, LOCK + BACKWARD_FUNCTIONS + ADD_TAIL_POSTINGS),
        migrations.RunPython(count_guard, exists_guard),
    ]
