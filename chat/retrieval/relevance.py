"""Calibrated 0-1 relevance for RSE. Pure.

Fused scores only say which chunk is better, not how good any chunk is (RRF's are ranks, and the
convex combination normalises each query's scores to 0-1 from worst to best), yet RSE needs an absolute
relevance (a chunk worth 0.8 keeps a segment going, one worth 0.1 ends it). Without a reranker
we read it off the two scores that do carry absolute meaning:

- cosine similarity of the query and chunk embeddings, mapped through a logistic curve centred
  where, for sentence-embedding models of the MiniLM family, related and unrelated passages part,
  and multiplied by a second logistic of how far the chunk falls short of the query's best match.
  The absolute curve alone calls most of the 60 nearest chunks relevant for a query phrased like
  the corpus (similarities crowd together above the centre), and RSE then returns long runs of
  loosely related text; the relative factor keeps "relevant" for chunks about as close as the best
  one, while a query whose best match is poor still gets low values from the absolute curve;
- the BM25 score divided by the sum of the query terms' IDFs: the share of the query's
  information the chunk matches (1.0 = every term present about as often as in an average chunk).

With a reranker (a CrossEncoder), its probability is spread out with a beta CDF as in dsRAG,
because cross-encoder probabilities crowd near 0 and 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from chat.retrieval import tuning


@dataclass(frozen=True)
class Calibration:
    similarity_center: float = tuning.SIMILARITY_CENTER
    similarity_width: float = tuning.SIMILARITY_WIDTH
    keyword_weight: float = tuning.RELEVANCE_KEYWORD_WEIGHT  # the keyword evidence's share; the rest is semantic
    # Relative factor: 0.5 for a chunk this much less similar than the query's best chunk (0: off).
    similarity_margin: float = tuning.SIMILARITY_MARGIN
    similarity_margin_width: float = tuning.SIMILARITY_MARGIN_WIDTH


DEFAULT_CALIBRATION = Calibration()


def similarity_relevance(similarity: float | None, calibration: Calibration = DEFAULT_CALIBRATION,
                         best_similarity: float | None = None) -> float:
    """0-1: the absolute logistic of the similarity, times the relative one when the query's best
    similarity is given (and the margin is on)."""
    if similarity is None:
        return 0.0
    value = sigmoid((similarity - calibration.similarity_center) / calibration.similarity_width)
    if best_similarity is not None and calibration.similarity_margin > 0:
        shortfall = best_similarity - similarity
        value *= sigmoid((calibration.similarity_margin - shortfall) / calibration.similarity_margin_width)
    return value


def keyword_relevance(bm25: float | None, idf_sum: float | None) -> float:
    if not bm25 or not idf_sum or idf_sum <= 0:
        return 0.0
    return max(0.0, min(1.0, bm25 / idf_sum))


def blended_relevance(similarity: float | None, bm25: float | None, idf_sum: float | None,
                      calibration: Calibration = DEFAULT_CALIBRATION, best_similarity: float | None = None) -> float:
    """Weighted mean of the semantic and the keyword relevance, 0-1."""
    w = calibration.keyword_weight
    return ((1.0 - w) * similarity_relevance(similarity, calibration, best_similarity)
            + w * keyword_relevance(bm25, idf_sum))


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, x))))


def beta_cdf_relevance(probability: float, a: float = 0.4, b: float = 0.4) -> float:
    """dsRAG's transform of a reranker probability (0-1) to a more uniform 0-1 relevance."""
    from scipy.stats import beta  # scipy is only needed when a reranker is configured

    p = max(0.0, min(1.0, probability))
    return float(beta.cdf(p, a, b))
