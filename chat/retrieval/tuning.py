"""The retrieval engine's tuned numbers, in one place.

Each was chosen by measuring on the evaluation sets (docs/evaluation.md has the runs) and is part
of the algorithm, not of a deployment: changing one changes what a search returns, so it calls for
another `make eval` (and the held-out `make eval-packages` / `make eval-manpages`), not an
environment variable. The one choice an operator does make is a setting (ragweb/settings.py:
SEARCH_HNSW_EF, recall against latency on their corpus and hardware). Modules read these as `tuning.NAME` when
they run, so a test can change one with monkeypatch.
"""

# How a hybrid search merges its sides (chat/retrieval/fusion.py): "convex", a weighted average of the
# min-max normalised similarity and BM25, or "rrf", reciprocal rank fusion. Convex gained on all three
# evaluation sets (docs/evaluation.md, "Fusion: convex combination against RRF"); `evaluate` prints
# hybrid:rrf beside it, and a search may ask for either (search(fusion=...)).
FUSION = "convex"

# Collections holding at most this many chunks (together) are searched exactly, without the HNSW index:
# perfect recall where a scan is still cheap (docs/evaluation.md, "Latency and HNSW recall at scale").
# 0 always uses the index.
EXACT_MAX_CHUNKS = 5000

# Chunks fetched per side (vector, keyword) before fusion; RSE sees their relevance. A search
# asking for more (k) fetches k.
CANDIDATES = 60

# Convex fusion (chat/retrieval/fusion.py): the BM25 side's share of the weighted average of the
# min-max normalised scores; the vector side gets the rest.
CONVEX_KEYWORD_SHARE = 1 / 3
# ... when the query names an underscore identifier the searched collections hold
# (DJANGO_SETTINGS_MODULE): an embedding cannot spell it, the keyword index can.
CONVEX_IDENTIFIER_SHARE = 0.6

# Reciprocal rank fusion (FUSION = "rrf"): score = sum of weight / (RRF_K + rank). RRF_K also
# merges the lists of several queries (fusion.round_robin).
RRF_K = 60
RRF_VECTOR_WEIGHT = 1.0
RRF_KEYWORD_WEIGHT = 1.0

# Okapi BM25 (chat/retrieval/bm25.py). The first pass reads at most BM25_TERM_POSTINGS postings per
# query term in each collection searched (best first; all of a rarer term's), then a pool of
# BM25_POOL chunks is scored exactly.
BM25_K1 = 1.2
BM25_B = 0.75
BM25_TERM_POSTINGS = 500
BM25_POOL = 200

# Iterative HNSW scans stop after this many tuples; the exact-scan fallback covers the rest
# (chat/retrieval/vector.py).
HNSW_MAX_SCAN_TUPLES = 20000

# Relevance calibration for RSE (chat/retrieval/relevance.py): a logistic of the cosine similarity
# (centre, width), times a logistic of how far a chunk falls short of the query's best match
# (0.5 at the margin; margin 0 turns it off), blended with the BM25 share of the query's IDF.
SIMILARITY_CENTER = 0.35
SIMILARITY_WIDTH = 0.08
SIMILARITY_MARGIN = 0.15
SIMILARITY_MARGIN_WIDTH = 0.05
RELEVANCE_KEYWORD_WEIGHT = 0.30

# With RERANKER_MODEL set: how many fused candidates the cross-encoder rescores.
RERANK_CANDIDATES = 30
