"""Chunks are published outside the HNSW graph and merged into it later (corpus.graph).

- `in_graph`: existing rows are in the graph (true), new ones are not (false). Added with DEFAULT
  true and the default then set to false: both are catalogue changes in Postgres 11+, so a table
  of a million chunks is not rewritten.
- The HNSW index becomes partial (WHERE in_graph): an insert of a row outside it skips the graph.
  It is built beside the old one (CONCURRENTLY: searches keep their index meanwhile), the old one
  dropped and the new one renamed. At a million chunks the build takes minutes (docs/scaling.md,
  "Publishing"); maintenance_work_mem is raised for it so the graph is built in memory.
- chunk_graph_tail: the not-yet-merged chunks by document, the rows a search scans exactly.
- The GIN index on `search` is dropped: no query uses `@@` (keyword search reads the BM25
  postings, chat/retrieval/bm25.py), and it cost ~10% of every insert.
- The BM25 update triggers return at once when no row's `search` or document changed: moving
  chunks into the graph is an UPDATE of `in_graph` alone and must not rewrite postings or statistics.

Runs outside a transaction (CREATE/DROP INDEX CONCURRENTLY).
"""

from django.contrib.postgres.operations import AddIndexConcurrently
from django.db import migrations, models
from django.db.models import Q
from pgvector.django import HnswIndex

HNSW_M, HNSW_EF_CONSTRUCTION = 16, 64  # corpus.models' at the time of this migration

UPDATE_TRIGGER_FUNCTIONS = ("bm25_chunks_updated", "bm25_postings_updated")
GUARD = """
    -- ragweb 0015: nothing keyword search reads changed (e.g. only in_graph): nothing to do.
    IF NOT EXISTS (SELECT 1 FROM bm25_new_rows n JOIN bm25_old_rows o ON o.id = n.id
                   WHERE n.search IS DISTINCT FROM o.search OR n.document_id <> o.document_id) THEN
        RETURN NULL;
    END IF;"""


def _rewrite_update_triggers(schema_editor, change) -> None:
    with schema_editor.connection.cursor() as cursor:
        for name in UPDATE_TRIGGER_FUNCTIONS:
            cursor.execute("SELECT prosrc FROM pg_proc WHERE proname = %s", [name])
            row = cursor.fetchone()
            if row is None:
                continue
            source = change(row[0])
            cursor.execute(f"CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS "
                           f"$fn${source}$fn$")


def add_guard(apps, schema_editor) -> None:
    def change(source: str) -> str:
        if GUARD in source:
            return source
        head, begin, body = source.partition("\nBEGIN")
        return head + begin + GUARD + body

    _rewrite_update_triggers(schema_editor, change)


def remove_guard(apps, schema_editor) -> None:
    _rewrite_update_triggers(schema_editor, lambda source: source.replace(GUARD, ""))


HNSW_OPTIONS = f"USING hnsw (embedding vector_cosine_ops) WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION})"


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("corpus", "0014_reembed")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(
                ["ALTER TABLE corpus_chunk ADD COLUMN in_graph boolean NOT NULL DEFAULT true",
                 "ALTER TABLE corpus_chunk ALTER COLUMN in_graph SET DEFAULT false"],
                ["ALTER TABLE corpus_chunk DROP COLUMN in_graph"])],
            state_operations=[migrations.AddField(
                model_name="chunk", name="in_graph", field=models.BooleanField(default=False, editable=False))],
        ),
        migrations.RunPython(add_guard, remove_guard),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(
                ["DROP INDEX CONCURRENTLY IF EXISTS chunk_search_gin"],
                ["CREATE INDEX CONCURRENTLY IF NOT EXISTS chunk_search_gin ON corpus_chunk USING gin (search)"])],
            state_operations=[migrations.RemoveIndex(model_name="chunk", name="chunk_search_gin")],
        ),
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunSQL(
                ["SET maintenance_work_mem = '2GB'",
                 "DROP INDEX CONCURRENTLY IF EXISTS chunk_embedding_hnsw_graph",  # a build cut short
                 f"CREATE INDEX CONCURRENTLY chunk_embedding_hnsw_graph ON corpus_chunk {HNSW_OPTIONS} WHERE in_graph",
                 "RESET maintenance_work_mem",
                 "DROP INDEX CONCURRENTLY chunk_embedding_hnsw",
                 "ALTER INDEX chunk_embedding_hnsw_graph RENAME TO chunk_embedding_hnsw"],
                ["SET maintenance_work_mem = '2GB'",
                 f"CREATE INDEX CONCURRENTLY chunk_embedding_hnsw_all ON corpus_chunk {HNSW_OPTIONS}",
                 "RESET maintenance_work_mem",
                 "DROP INDEX CONCURRENTLY chunk_embedding_hnsw",
                 "ALTER INDEX chunk_embedding_hnsw_all RENAME TO chunk_embedding_hnsw"])],
            state_operations=[
                migrations.RemoveIndex(model_name="chunk", name="chunk_embedding_hnsw"),
                migrations.AddIndex(model_name="chunk", index=HnswIndex(
                    condition=Q(in_graph=True), ef_construction=HNSW_EF_CONSTRUCTION, fields=["embedding"], m=HNSW_M,
                    name="chunk_embedding_hnsw", opclasses=["vector_cosine_ops"])),
            ],
        ),
        AddIndexConcurrently(model_name="chunk", index=models.Index(
            condition=Q(in_graph=False), fields=["document"], name="chunk_graph_tail")),
    ]
