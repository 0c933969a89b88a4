"""Reciprocal rank fusion (Cormack et al.): score = sum over lists of weight / (k + rank).

Pure: ranks are 1-based positions in each ranked list. The hybrid SQL returns the candidates of
both sides with their ranks; this module decides the fused order.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

RRF_K = 60


def rrf_scores(rankings: Sequence[Sequence[Hashable]], *, weights: Sequence[float] | None = None,
               k: int = RRF_K) -> dict[Hashable, float]:
    """Fused score of every item of `rankings` (each list best first, items unique per list)."""
    if weights is None:
        weights = [1.0] * len(rankings)
    if len(weights) != len(rankings):
        raise ValueError("one weight per ranking is needed")
    if k < 1:
        raise ValueError("k must be at least 1")
    scores: dict[Hashable, float] = {}
    for ranking, weight in zip(rankings, weights, strict=True):
        for position, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + position)
    return scores


def rrf_order(scores: Mapping[Hashable, float], *, tie_break: Mapping[Hashable, float] | None = None) -> list:
    """Items by descending fused score. Ties (common: rank 3 on one side equals rank 3 on the other)
    go to the higher `tie_break` value, then to the item itself so the order is deterministic."""
    tie_break = tie_break or {}
    return sorted(scores, key=lambda item: (-scores[item], -tie_break.get(item, 0.0), item))


def fuse(rankings: Sequence[Sequence[Hashable]], *, weights: Sequence[float] | None = None, k: int = RRF_K,
         tie_break: Mapping[Hashable, float] | None = None) -> list[tuple[Hashable, float]]:
    """(item, score) best first."""
    scores = rrf_scores(rankings, weights=weights, k=k)
    return [(item, scores[item]) for item in rrf_order(scores, tie_break=tie_break)]


def round_robin(rankings: Sequence[Sequence[Hashable]], *, k: int = RRF_K,
                tie_break: Mapping[Hashable, float] | None = None) -> list[tuple[Hashable, float]]:
    """Merge the lists of several queries: an item scores max 1 / (k + rank) over the lists, so the
    lists take turns (every query's first item comes before any second item). Summing, as RRF
    does, would instead favour items that are mediocre for every query over the best of each."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for position, item in enumerate(ranking, start=1):
            scores[item] = max(scores.get(item, 0.0), 1.0 / (k + position))
    return [(item, scores[item]) for item in rrf_order(scores, tie_break=tie_break)]
