"""Vector candidates: cosine distance (`<=>`) over chunk embeddings, HNSW or exact.

Filtering an HNSW scan by collection can starve it: the index hands back its ef_search nearest
chunks and the filter may drop most of them. pgvector's iterative index scan
(`hnsw.iterative_scan = relaxed_order`) keeps scanning until LIMIT rows pass the filter; relaxed
order means the rows may arrive slightly out of order, so they are re-sorted after a
MATERIALIZED CTE. When the searched collections are small, an exact scan is cheaper and
perfect, so it is used instead; and should the index still come back short (it stops after
hnsw.max_scan_tuples), the exact scan runs as a fallback inside the same statement.

The column's HNSW index holds only the chunks merged into the graph (`in_graph`, corpus/graph/):
a chunk just published is outside it until the background merge. The HNSW branch therefore also
scans the searched collections' chunks outside the graph exactly (vec_tail, through the small
partial index chunk_graph_tail) and keeps the nearest of both, so a document is found the moment
it is published and the results are the same before and after the merge. The exact branch reads
every chunk either way. The side table (corpus_chunkvector, a re-embed's vectors) has no tail:
its rows enter their model's graph when written.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from chat.retrieval import tuning

# The query's vector, written once into a statement that uses it in several places: with
# client-side parameter binding each %(vector)s is 384 numbers of text for the server to parse.
# An uncorrelated scalar subquery is computed once (an InitPlan), and the HNSW index still serves
# ORDER BY embedding <=> (SELECT v FROM query_vector).
QUERY_VECTOR_CTE = "query_vector AS (SELECT %(vector)s::vector AS v)"

# CTEs defining vec (id, distance, rank, and the chunk's place: document_id, chunk_index, start,
# "end", page, collection_id, title, source) for the %(candidates)s nearest chunks of the
# collections. The place is read with the distance, from the chunk row and the document row the
# scan visits anyway (the document for the collection filter, and for the metadata filters,
# {document_filter}: chat/retrieval/filters.py). Parameters: collections, candidates, exact_max,
# the filters'; the query_vector CTE.
_VECTOR_CTES = """
vec_small AS (
    SELECT coalesce(sum(chunk_count), 0) <= %(exact_max)s AS yes
    FROM bm25_collection_stats WHERE collection_id = ANY(%(collections)s::bigint[])
),
vec_hnsw AS MATERIALIZED (
    SELECT c.id, {embedding} <=> (SELECT v FROM query_vector) AS distance,
           c.document_id, c.chunk_index, c.start, c."end", c.page, d.collection_id, d.title, d.source
    FROM {chunks} JOIN corpus_document d ON d.id = c.document_id
    WHERE NOT (SELECT yes FROM vec_small){in_graph}
      AND d.collection_id = ANY(%(collections)s::bigint[]){document_filter}
    ORDER BY {embedding} <=> (SELECT v FROM query_vector)
    LIMIT %(candidates)s
),
vec_tail AS MATERIALIZED (
    -- The chunks outside the graph, exactly (corpus/graph/): few, found through chunk_graph_tail.
    SELECT c.id, c.embedding <=> (SELECT v FROM query_vector) AS distance,
           c.document_id, c.chunk_index, c.start, c."end", c.page, d.collection_id, d.title, d.source
    FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id
    WHERE {tail} AND NOT (SELECT yes FROM vec_small) AND NOT c.in_graph AND c.embedding IS NOT NULL
      AND d.collection_id = ANY(%(collections)s::bigint[]){document_filter}
    ORDER BY (c.embedding <=> (SELECT v FROM query_vector)) + 0
    LIMIT %(candidates)s
),
vec_exact AS MATERIALIZED (
    -- "+ 0" keeps the planner off the HNSW index: this branch is the exact scan. It reads the
    -- chunks of the collections' documents through the document key (OFFSET 0 keeps the lateral
    -- subquery a parameterised scan): a plan misjudging how few documents the collections hold
    -- would otherwise scan every chunk of every collection.
    SELECT c.id, c.embedding <=> (SELECT v FROM query_vector) AS distance,
           c.document_id, c.chunk_index, c.start, c."end", c.page, d.collection_id, d.title, d.source
    FROM corpus_document d
    CROSS JOIN LATERAL (
        {lateral} OFFSET 0
    ) AS c
    WHERE ((SELECT yes FROM vec_small) OR (SELECT count(*) FROM vec_hnsw) < %(candidates)s)
      AND d.collection_id = ANY(%(collections)s::bigint[]){document_filter}
    ORDER BY (c.embedding <=> (SELECT v FROM query_vector)) + 0
    LIMIT %(candidates)s
),
vec AS (
    SELECT v.*, row_number() OVER (ORDER BY distance, id) AS rank
    FROM (SELECT * FROM vec_exact
          UNION ALL
          (SELECT * FROM (SELECT * FROM vec_hnsw UNION ALL SELECT * FROM vec_tail) AS graph_and_tail
           WHERE NOT EXISTS (SELECT 1 FROM vec_exact)
           ORDER BY distance, id LIMIT %(candidates)s)) AS v
)"""


@dataclass(frozen=True)
class VectorSource:
    """Where the vector side reads the chunks' vectors: SQL fragments for the chunk row c with its
    vector as {embedding}. COLUMN is corpus_chunk.embedding; side(D) reads corpus_chunkvector rows
    of the model %(model)s through the model's partial HNSW index on (embedding::vector(D))
    (corpus/reembed/store.py), which the planner uses because the ORDER BY is that expression and
    the join condition carries the index's WHERE (with client-side binding the model is a literal)."""

    chunks: str  # FROM item(s) giving c (and the vector)
    embedding: str  # the vector of c
    lateral: str  # a document's chunks with their vector, as columns of corpus_chunk, for d.id
    similarity_join: str  # join giving the final SELECT's chunk c its vector ("" for the column)
    in_graph: str  # condition(s) on c, from AND, keeping the HNSW branch to its index's rows
    tail: str  # whether vec_tail reads the column's chunks outside the graph ("true"/"false")


COLUMN = VectorSource(
    chunks="corpus_chunk c",
    embedding="c.embedding",
    in_graph=" AND c.in_graph",
    tail="true",
    lateral=("SELECT id, embedding, document_id, chunk_index, start, \"end\", page\n"
             "        FROM corpus_chunk WHERE document_id = d.id AND embedding IS NOT NULL"),
    similarity_join="",
)


def side(dimensions: int) -> VectorSource:
    """The side table's vectors of the model %(model)s, `dimensions` wide."""
    cast = f"::vector({int(dimensions)})"
    return VectorSource(
        chunks="corpus_chunkvector cv JOIN corpus_chunk c ON c.id = cv.chunk_id AND cv.model = %(model)s",
        embedding=f"(cv.embedding{cast})",
        lateral=(f"SELECT ch.id, cv.embedding{cast} AS embedding, ch.document_id, ch.chunk_index, ch.start, "
                 "ch.\"end\", ch.page FROM corpus_chunk ch JOIN corpus_chunkvector cv "
                 "ON cv.chunk_id = ch.id AND cv.model = %(model)s WHERE ch.document_id = d.id"),
        similarity_join=("LEFT JOIN corpus_chunkvector cvs ON cvs.chunk_id = c.id AND cvs.model = %(model)s"),
        in_graph="",
        tail="false",
    )


def vector_ctes(*, document_filter: str = "", source: VectorSource = COLUMN) -> str:
    """The vector side's CTEs, restricted by `document_filter` (SQL conditions on the document
    row d, each starting with AND; SearchFilters.document_condition()), reading `source`."""
    return _VECTOR_CTES.format(document_filter=document_filter, chunks=source.chunks, embedding=source.embedding,
                               lateral=source.lateral, in_graph=source.in_graph, tail=source.tail)


def session_settings_sql() -> str:
    """SET LOCAL statements for the HNSW scan (valid until the end of the transaction).
    Values are integers (a validated setting, a constant), so they are inlined (SET takes no parameters)."""
    ef = int(settings.SEARCH_HNSW_EF)
    max_tuples = int(tuning.HNSW_MAX_SCAN_TUPLES)
    # No parallel workers: starting them costs more than these small scans (the exact branch's
    # plan is parallel-aware even when its one-time filter skips it).
    return (f"SET LOCAL hnsw.ef_search = {ef}; SET LOCAL hnsw.iterative_scan = relaxed_order; "
            f"SET LOCAL hnsw.max_scan_tuples = {max_tuples}; SET LOCAL max_parallel_workers_per_gather = 0")


def execute_with_session_settings(cursor, sql: str, params) -> None:
    """Run `sql` under the HNSW settings in one round trip, leaving its rows to fetch.

    The SET LOCALs and the statement travel as one query string. Outside a transaction Postgres
    runs such a string as one implicit transaction, so the settings hold for the statement and
    end with it; inside the caller's transaction they last until it ends, as any SET LOCAL does.
    A BEGIN, a SET and a COMMIT of their own would be three more round trips per search."""
    cursor.execute(session_settings_sql() + ";\n" + sql, params)
    while cursor.description is None and cursor.nextset():
        pass  # skip the SETs' empty results
