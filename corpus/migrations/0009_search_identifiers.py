"""Identifiers written with underscores (DJANGO_SETTINGS_MODULE, get_object_or_404) also index as
one lexeme each.

Postgres' parser splits `DJANGO_SETTINGS_MODULE` at the underscores into `django`, `set` and
`modul`: three common words, so a question naming the setting matches every chunk about Django
settings about as well as the one that defines it. A hyphenated word (`dry-run`) is kept whole
beside its parts; this does the same for underscores. `ragweb_identifiers` lists the text's
underscore identifiers with the underscores taken out (`djangosettingsmodule`), indexed with the
`simple` configuration (no stemming, no stop words) and added to the `english` tsvector. Queries
are turned into lexemes the same way (chat/bm25.py, QUERY_TSVECTOR).

The column's expression changes in place on PostgreSQL 17+ (`SET EXPRESSION`); on 16 the column is
dropped and added again with its GIN index. Either way the table is rewritten without firing its
row triggers, so the BM25 statistics and postings are rebuilt here from the new tsvectors.
"""

import django.contrib.postgres.search
from django.db import migrations, models

import corpus.models

IDENTIFIERS_FUNCTION = r"""
CREATE OR REPLACE FUNCTION ragweb_identifiers(context text, body text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(string_agg(replace(m[1], '_', ''), ' '), '')
    FROM regexp_matches(coalesce(context, '') || ' ' || coalesce(body, ''),
                        '([A-Za-z][A-Za-z0-9]*(?:_+[A-Za-z0-9]+)+)', 'g') AS m
$$;
"""

ENGLISH = "to_tsvector('english'::regconfig, ((COALESCE(context, ''::text) || ' '::text) || COALESCE(text, ''::text)))"
WITH_IDENTIFIERS = f"({ENGLISH} || to_tsvector('simple'::regconfig, ragweb_identifiers(context, text)))"

REBUILD = """
TRUNCATE bm25_posting, bm25_term_stats, bm25_collection_stats;
INSERT INTO bm25_posting (chunk_id, collection_id, tf, len, lexeme)
    SELECT c.id, d.collection_id, coalesce(array_length(u.positions, 1), 1), length(c.search), u.lexeme
    FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) AS u;
INSERT INTO bm25_collection_stats (collection_id, chunk_count, total_length)
    SELECT d.collection_id, count(*), sum(bm25_length(c.search))
    FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id GROUP BY d.collection_id;
INSERT INTO bm25_term_stats (collection_id, lexeme, df)
    SELECT collection_id, lexeme, count(*) FROM bm25_posting GROUP BY collection_id, lexeme;
ANALYZE bm25_posting;
"""


def _set_expression(schema_editor, expression: str) -> None:
    if schema_editor.connection.pg_version >= 170000:
        schema_editor.execute(f"ALTER TABLE corpus_chunk ALTER COLUMN search SET EXPRESSION AS {expression}")
        return
    schema_editor.execute("ALTER TABLE corpus_chunk DROP COLUMN search")  # its GIN index goes with it
    schema_editor.execute(
        f"ALTER TABLE corpus_chunk ADD COLUMN search tsvector GENERATED ALWAYS AS {expression} STORED")
    schema_editor.execute("CREATE INDEX chunk_search_gin ON corpus_chunk USING gin (search)")


def forward(apps, schema_editor):
    schema_editor.execute(IDENTIFIERS_FUNCTION)
    _set_expression(schema_editor, WITH_IDENTIFIERS)
    schema_editor.execute(REBUILD)


def backward(apps, schema_editor):
    _set_expression(schema_editor, f"({ENGLISH})")
    schema_editor.execute(REBUILD)
    schema_editor.execute("DROP FUNCTION IF EXISTS ragweb_identifiers(text, text)")


class Migration(migrations.Migration):
    dependencies = [("corpus", "0008_bm25_posting_covering_key")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(forward, backward)],
            state_operations=[
                migrations.AlterField(
                    model_name="chunk",
                    name="search",
                    field=models.GeneratedField(
                        db_persist=True,
                        expression=django.contrib.postgres.search.CombinedSearchVector(
                            django.contrib.postgres.search.SearchVector("context", "text", config="english"),
                            "||",
                            django.contrib.postgres.search.SearchVector(
                                corpus.models.Identifiers("context", "text"), config="simple"),
                            django.contrib.postgres.search.SearchConfig("english"),
                        ),
                        output_field=django.contrib.postgres.search.SearchVectorField(),
                    ),
                ),
            ],
        ),
    ]
