"""BM25 keyword scoring inside Postgres, from a postings table kept beside corpus_chunk.

A chunk holding any of the query's lexemes is a match (OR semantics: a question must not need
every word); the query is turned into lexemes by the same text search configuration as the
chunks' `search` tsvector. Each match is scored with Okapi BM25,

    sum over query lexemes q in the chunk:  idf(q) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))
    idf(q) = ln(1 + (N - df + 0.5) / (df + 0.5))

tf = positions of q in the chunk's tsvector, len = length(search) (distinct lexemes, see
corpus/migrations/0003_bm25_length_distinct.py); tf and len are copied into bm25_posting
(corpus/migrations/0004_bm25_postings.py). N, df and avglen come from bm25_collection_stats /
bm25_term_stats (corpus/migrations/0002_bm25_stats.py), summed over the collections searched.
Triggers keep all three tables exact as chunks come and go, with one difference in timing: the
statistics count a chunk from the moment it is published, the postings only once the background
merge has moved it into the HNSW graph (`in_graph`, corpus/graph/, corpus 0017), as their index
inserts were most of the publish step's cost. The chunks outside the graph (the tail) are scored
exactly from their `search` tsvectors instead (kw_tail), with the same statistics, so a document is
found the moment it is published and its scores are the same before and after the merge.

The SQL here is a set of CTEs that chat/retrieval/candidates.py splices into one statement.
"""

from __future__ import annotations

from django.db import connection, transaction

from corpus.models import SEARCH_CONFIG

# The query's lexemes, made as the chunks' `search` column makes them (corpus/migrations/
# 0009_search_identifiers.py): the configuration's words plus each underscore identifier whole.
QUERY_IDENTIFIERS = "to_tsvector('simple', ragweb_identifiers('', %(query)s))"
QUERY_TSVECTOR = f"(to_tsvector('{SEARCH_CONFIG}', %(query)s) || {QUERY_IDENTIFIERS})"

# BM25 from the postings table (corpus/migrations/0004_bm25_postings.py), in two passes.
# 1. Each query lexeme's postings are read from the impact index, best first, at most
#    %(term_postings)s per lexeme (all of a rarer lexeme's); a common lexeme adds little IDF and
#    contributes only through its highest-impact chunks. Searching several collections, each
#    reads the lexeme's best postings in it, as many as it would searched alone, so a small
#    collection is not crowded out by a large one (its best chunks for the lexeme are read even
#    when the large one holds thousands with a higher impact); beyond FULL_BUDGET_COLLECTIONS
#    collections holding the lexeme, that many budgets are shared evenly, which bounds the cost.
#    The first-pass score,
#    sum of IDF x stored impact (the BM25 tf factor under fixed k1, b and average length, so no
#    arithmetic per posting), picks a pool of %(pool)s chunks. Aggregating the postings is the
#    cost of the keyword side; on the development set 500 postings per lexeme give the same
#    figures as reading them all (docs/evaluation.md).
# 2. The pool, and the vector side's chunks in hybrid mode, are scored exactly from their own
#    postings (primary key lookups), and the pool is ranked by that score.
# An unknown query lexeme has no statistics row, so it costs nothing.
# With metadata filters (chat/retrieval/filters.py) the first pass reads only the postings of
# chunks whose document passes them (the impact index is read on until the quota is met, or the
# lexeme's postings run out); N, df and the average length stay the collections' own, so a
# filter narrows which chunks are found, not how a word is weighed.
FULL_BUDGET_COLLECTIONS = 4
BM25_STATS_CTES = """
kw_stats AS (
    SELECT sum(chunk_count)::float8 AS n,
           sum(total_length)::float8 / nullif(sum(chunk_count), 0) AS avglen
    FROM bm25_collection_stats WHERE collection_id = ANY(%(collections)s::bigint[])
),
kw_term_df AS (
    SELECT t.collection_id, t.lexeme, t.df,
           -- term_postings x min(m, FULL_BUDGET_COLLECTIONS) / m, rounded up (m: collections holding
           -- the lexeme), in integers: a float or numeric product can land a hair above a whole number.
           ((%(term_postings)s * least(count(*) OVER lexeme, {full_budget_collections}) + count(*) OVER lexeme - 1)
            / count(*) OVER lexeme)::int AS quota
    FROM bm25_term_stats t
    WHERE t.collection_id = ANY(%(collections)s::bigint[])
      AND t.lexeme = ANY(tsvector_to_array({query_tsvector}))
      AND t.df > 0
    WINDOW lexeme AS (PARTITION BY t.lexeme)
),
kw_idf AS (
    SELECT k.lexeme, ln(1 + (s.n - sum(k.df) + 0.5) / (sum(k.df) + 0.5)) AS idf
    FROM kw_term_df k CROSS JOIN kw_stats s GROUP BY k.lexeme, s.n
),
kw_idf_sum AS (
    -- identifiers: how many of the query's underscore identifiers the collections hold
    SELECT coalesce(sum(idf), 0) AS total,
           count(*) FILTER (WHERE lexeme = ANY(tsvector_to_array({query_identifiers}))) AS identifiers
    FROM kw_idf
)"""

BM25_POOL_CTES = """
kw_first_pass AS (
    SELECT p.chunk_id, sum(i.idf * p.impact) AS score
    FROM kw_term_df t
    JOIN kw_idf i ON i.lexeme = t.lexeme
    CROSS JOIN LATERAL (
        SELECT bp.chunk_id, bp.impact FROM bm25_posting bp
        WHERE bp.collection_id = t.collection_id AND bp.lexeme = t.lexeme{posting_filter}
        ORDER BY bp.impact DESC LIMIT t.quota
    ) AS p
    GROUP BY p.chunk_id
),
kw_pool AS (
    SELECT chunk_id FROM kw_first_pass ORDER BY score DESC, chunk_id LIMIT %(pool)s
)"""

BM25_SCORED_CTE = """
kw_terms AS (
    SELECT array_agg(lexeme) AS lexemes, array_agg(idf) AS idfs FROM kw_idf
),
kw_scored_merged AS (
    -- One scan of the (chunk, lexeme) primary key for all pairs; each posting finds its lexeme's
    -- IDF by position in a short array (a join here is planned as a nested loop).
    SELECT p.chunk_id AS id, sum(t.idfs[array_position(t.lexemes, p.lexeme)] * {tf_factor}) AS score
    FROM kw_terms t CROSS JOIN kw_stats s CROSS JOIN bm25_posting p
    WHERE p.chunk_id = ANY(ARRAY({scored_ids})) AND p.lexeme = ANY(ARRAY(SELECT lexeme FROM kw_idf))
    GROUP BY p.chunk_id
),
kw_tail AS MATERIALIZED (
    -- The chunks outside the graph have no postings yet (corpus 0017): every one of the collections'
    -- holding a query lexeme, scored exactly from its tsvector with the same tf, length and
    -- formula the postings would give (found through the partial index chunk_graph_tail; each costs
    -- more than a posting, docs/scaling.md "Publishing": the merge keeps the tail short).
    -- The query's lexemes are cut out of the tsvector in C (setweight marks them A, `search` holds
    -- only the default weight D, ts_filter keeps the A's): 2.5-3x faster than unnesting every lexeme.
    SELECT c.id, sum(t.idfs[array_position(t.lexemes, u.lexeme)] * {tail_tf_factor}) AS score
    FROM kw_terms t CROSS JOIN kw_stats s
    CROSS JOIN corpus_chunk c JOIN corpus_document d ON d.id = c.document_id
    CROSS JOIN LATERAL unnest(ts_filter(setweight(c.search, 'A', t.lexemes), '{{a}}')) AS u
    WHERE NOT c.in_graph AND d.collection_id = ANY(%(collections)s::bigint[]){document_filter}
    GROUP BY c.id
),
kw_scored AS (
    SELECT id, score FROM kw_scored_merged UNION ALL SELECT id, score FROM kw_tail
)"""

BM25_RANKED_CTE = """
kw_ranked AS (
    SELECT id, score FROM kw_scored_merged WHERE id IN (SELECT chunk_id FROM kw_pool)
    UNION ALL SELECT id, score FROM kw_tail
)"""

# The BM25 tf factor of a posting p (s: kw_stats, the average length).
TF_FACTOR = "p.tf * (%(k1)s + 1) / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.len / s.avglen))"
# The same for a lexeme u of a tail chunk c's tsvector: tf and len as the postings triggers take them.
TAIL_TF_FACTOR = TF_FACTOR.replace("p.tf", "coalesce(array_length(u.positions, 1), 1)").replace(
    "p.len", "length(c.search)")

# Ties (chunks with the same terms and length) go to the lower id. Scores are rounded first: a
# sum's last bits depend on the order the plan adds the terms in.
RANKED_CTE = """
kw AS (
    SELECT id, score, row_number() OVER (ORDER BY round(score::numeric, 9) DESC, id) AS rank
    FROM kw_ranked ORDER BY round(score::numeric, 9) DESC, id LIMIT %(candidates)s
)"""


def keyword_ctes(*, with_vector: bool, document_filter: str = "") -> str:
    """CTEs defining kw_scored (id, BM25 score of the chunks scored: the pool and, with_vector, the
    vec CTE's chunks), kw (the top %(candidates)s with rank) and kw_idf_sum. `document_filter`:
    SQL conditions on a document row d, each starting with AND (SearchFilters.document_condition()).
    Parameters: query, collections, k1, b, candidates, term_postings, pool, the filters'."""
    scored_ids = "SELECT chunk_id FROM kw_pool" + (" UNION SELECT id FROM vec" if with_vector else "")
    posting_filter = ""
    if document_filter:
        posting_filter = ("\n          AND EXISTS (SELECT 1 FROM corpus_chunk fc JOIN corpus_document d ON d.id = "
                          "fc.document_id WHERE fc.id = bp.chunk_id" + document_filter + ")")
    return ",".join([_stats_ctes(), BM25_POOL_CTES.format(posting_filter=posting_filter),
                     BM25_SCORED_CTE.format(tf_factor=TF_FACTOR, tail_tf_factor=TAIL_TF_FACTOR, scored_ids=scored_ids,
                                            document_filter=document_filter),
                     BM25_RANKED_CTE, RANKED_CTE])


def _stats_ctes() -> str:
    return BM25_STATS_CTES.format(query_tsvector=QUERY_TSVECTOR, query_identifiers=QUERY_IDENTIFIERS,
                                  full_budget_collections=FULL_BUDGET_COLLECTIONS)


@transaction.atomic
def rebuild_stats() -> None:
    """Recompute every statistic and posting from corpus_chunk (`manage.py rebuild_keyword_index`).

    The triggers keep them exact; this repairs them after a restore or a manual edit of the tables."""
    with connection.cursor() as cursor:
        cursor.execute("LOCK TABLE corpus_chunk IN SHARE MODE")
        cursor.execute("DELETE FROM bm25_term_stats")
        cursor.execute("DELETE FROM bm25_collection_stats")
        cursor.execute("DELETE FROM bm25_posting")
        cursor.execute("""
            INSERT INTO bm25_posting (chunk_id, collection_id, tf, len, lexeme)
            SELECT c.id, d.collection_id, coalesce(array_length(u.positions, 1), 1), length(c.search), u.lexeme
            FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) AS u
            WHERE c.in_graph""")  # the tail's postings come with the graph merge (corpus 0017)
        cursor.execute("""
            INSERT INTO bm25_collection_stats (collection_id, chunk_count, total_length)
            SELECT d.collection_id, count(*), sum(bm25_length(c.search))
            FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id GROUP BY d.collection_id""")
        cursor.execute("""
            INSERT INTO bm25_term_stats (collection_id, lexeme, df)
            SELECT d.collection_id, u.lexeme, count(*)
            FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) AS u
            GROUP BY d.collection_id, u.lexeme""")
