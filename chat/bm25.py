"""BM25 keyword scoring inside Postgres, from the `search` tsvector of corpus_chunk.

Candidates come from the GIN index with OR semantics: the query is turned into lexemes by the
same text search configuration as the index, and a chunk holding any of them matches (a
question must not need every word). Each match is scored with Okapi BM25,

    sum over query lexemes q in the chunk:  idf(q) * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len / avglen))
    idf(q) = ln(1 + (N - df + 0.5) / (df + 0.5))

tf = positions of q in the chunk's tsvector, len = bm25_length(search) (distinct lexemes, see
corpus/migrations/0003_bm25_length_distinct.py),
N, df and avglen from bm25_collection_stats / bm25_term_stats (kept exact by triggers, see
corpus/migrations/0002_bm25_stats.py), summed over the collections searched.

Postgres' own ts_rank_cd ignores corpus statistics (no IDF); it is kept as a comparison mode.
The SQL here is a set of CTEs that chat/candidates.py splices into one statement.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connection

from corpus.models import SEARCH_CONFIG

# A lexeme quoted for tsquery input (embedded quotes and backslashes doubled), so nothing in a
# user's query is read as tsquery syntax.
_QUOTED = r"'''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || ''''"

# Chunks of the searched collections whose tsvector matches kw_query's tsquery (through the GIN index).
_KW_MATCH = """kw_match AS (
    SELECT c.id, c.search
    FROM corpus_chunk c
    WHERE c.search @@ (SELECT tsq FROM kw_query)
      AND c.document_id IN (SELECT id FROM corpus_document WHERE collection_id = ANY(%(collections)s::bigint[]))
),"""

# ts_rank_cd baseline: every query lexeme, OR-ed.
TS_RANK_CD_CTES = f"""
kw_query AS (
    SELECT string_agg({_QUOTED}, ' | ')::tsquery AS tsq
    FROM unnest(to_tsvector('{SEARCH_CONFIG}', %(query)s))
),
{_KW_MATCH}
kw_scored AS (
    SELECT m.id, ts_rank_cd(m.search, (SELECT tsq FROM kw_query)) AS score, NULL::float8 AS bm25
    FROM kw_match m
),
kw_idf_sum AS (SELECT NULL::float8 AS total)"""

# BM25. Matching chunks are found through the GIN index with the query's rarest lexemes, as many
# as fit a budget of %(max_matches)s summed document frequencies (at least one). Common lexemes
# add little IDF yet would drag in most of a large corpus; they still count in the score of
# every chunk that is found. Below the budget (the whole evaluation corpus) this is plain OR.
# tf comes from a copy of the tsvector filtered to the query's lexemes (setweight + ts_filter,
# C functions) rather than from unnesting the whole tsvector into rows.
BM25_CTES = f"""
kw_stats AS (
    SELECT sum(chunk_count)::float8 AS n,
           sum(total_length)::float8 / nullif(sum(chunk_count), 0) AS avglen
    FROM bm25_collection_stats WHERE collection_id = ANY(%(collections)s::bigint[])
),
kw_terms AS (
    SELECT t.lexeme, sum(t.df)::float8 AS df
    FROM bm25_term_stats t
    WHERE t.collection_id = ANY(%(collections)s::bigint[])
      AND t.lexeme IN (SELECT unnest(tsvector_to_array(to_tsvector('{SEARCH_CONFIG}', %(query)s))))
    GROUP BY t.lexeme
    HAVING sum(t.df) > 0
),
kw_idf AS (
    SELECT k.lexeme, ln(1 + (s.n - k.df + 0.5) / (k.df + 0.5)) AS idf FROM kw_terms k CROSS JOIN kw_stats s
),
kw_query AS (
    SELECT (SELECT array_agg(lexeme) FROM kw_terms) AS lexemes, string_agg({_QUOTED}, ' | ')::tsquery AS tsq
    FROM (SELECT lexeme, row_number() OVER (ORDER BY df, lexeme) AS n,
                 sum(df) OVER (ORDER BY df, lexeme) AS cumulative
          FROM kw_terms) AS ranked
    WHERE n = 1 OR cumulative <= %(max_matches)s
),
{_KW_MATCH}
kw_scored AS (
    SELECT m.id, sum(i.idf * u.tf * (%(k1)s + 1) / (u.tf + %(k1)s * (1 - %(b)s + %(b)s * m.len / s.avglen)))
               AS score
    FROM (SELECT id, search, length(search) AS len FROM kw_match) AS m  -- length() = bm25_length()
    CROSS JOIN kw_stats s
    CROSS JOIN LATERAL (
        SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf
        FROM unnest(ts_filter(setweight(setweight(m.search, 'D'), 'A', (SELECT lexemes FROM kw_query)), '{{a}}'))
    ) AS u
    JOIN kw_idf i ON i.lexeme = u.lexeme
    GROUP BY m.id
),
kw_idf_sum AS (SELECT coalesce(sum(idf), 0) AS total FROM kw_idf)"""

RANKED_CTE = """
kw AS (
    SELECT id, score, row_number() OVER (ORDER BY score DESC, id) AS rank
    FROM kw_scored ORDER BY score DESC, id LIMIT %(candidates)s
)"""


def keyword_ctes(scoring: str) -> str:
    """CTEs defining kw_scored (every match: id, score), kw (top
    %(candidates)s with rank) and kw_idf_sum. Parameters: query, collections, k1, b, candidates,
    max_matches."""
    if scoring == "bm25":
        return BM25_CTES + "," + RANKED_CTE
    if scoring == "ts_rank_cd":
        return TS_RANK_CD_CTES + "," + RANKED_CTE
    raise ValueError(f"unknown keyword scoring {scoring!r}")


@dataclass(frozen=True)
class CollectionStats:
    chunk_count: int
    total_length: int


def collection_stats(collection_ids: list[int]) -> CollectionStats:
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(sum(chunk_count), 0), coalesce(sum(total_length), 0) "
                       "FROM bm25_collection_stats WHERE collection_id = ANY(%s)", [collection_ids])
        count, length = cursor.fetchone()
    return CollectionStats(int(count), int(length))


def document_frequencies(collection_id: int) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT lexeme, df FROM bm25_term_stats WHERE collection_id = %s", [collection_id])
        return dict(cursor.fetchall())


def rebuild_stats() -> None:
    """Recompute every statistic from corpus_chunk (repair; the triggers keep them exact)."""
    with connection.cursor() as cursor:
        cursor.execute("LOCK TABLE corpus_chunk IN SHARE MODE")
        cursor.execute("DELETE FROM bm25_term_stats")
        cursor.execute("DELETE FROM bm25_collection_stats")
        cursor.execute("""
            INSERT INTO bm25_collection_stats (collection_id, chunk_count, total_length)
            SELECT d.collection_id, count(*), sum(bm25_length(c.search))
            FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id GROUP BY d.collection_id""")
        cursor.execute("""
            INSERT INTO bm25_term_stats (collection_id, lexeme, df)
            SELECT d.collection_id, u.lexeme, count(*)
            FROM corpus_chunk c JOIN corpus_document d ON d.id = c.document_id, unnest(c.search) AS u
            GROUP BY d.collection_id, u.lexeme""")
