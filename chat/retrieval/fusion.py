"""How a hybrid search merges its two sides. Pure: the hybrid SQL returns every candidate with
both sides' ranks and scores (the similarity of the keyword side's chunks and the BM25 of the
vector side's are computed too), and this module decides the fused order.

- Convex combination (the default, tuning.FUSION): each side's scores min-max normalised
  over the candidates, then a weighted average. It keeps how far apart the scores are: a chunk the
  vector side finds far closer than anything else stays first when BM25 does not find it at all.
- Reciprocal rank fusion (Cormack et al., fusion="rrf"): score = sum over lists of
  weight / (k + rank). Ranks only: with k = 60 and 60 candidates a side, any chunk on both lists
  outscores a first place on one list (2 / 120 > 1 / 61), so a paraphrase that only the vector side
  finds, ranked first there, can fall out of the top ten.

docs/evaluation.md ("Fusion") has the two measured side by side on three evaluation sets.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence

from chat.retrieval.tuning import RRF_K


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


def order_by_score(scores: Mapping[Hashable, float], *, tie_break: Mapping[Hashable, float] | None = None) -> list:
    """Items by descending fused score. Ties (common: rank 3 on one side equals rank 3 on the other)
    go to the higher `tie_break` value, then to the item itself so the order is deterministic."""
    tie_break = tie_break or {}
    return sorted(scores, key=lambda item: (-scores[item], -tie_break.get(item, 0.0), item))


def fuse_rrf(rankings: Sequence[Sequence[Hashable]], *, weights: Sequence[float] | None = None, k: int = RRF_K,
             tie_break: Mapping[Hashable, float] | None = None) -> list[tuple[Hashable, float]]:
    """(item, score) best first."""
    scores = rrf_scores(rankings, weights=weights, k=k)
    return [(item, scores[item]) for item in order_by_score(scores, tie_break=tie_break)]


def convex_scores(sides: Sequence[Mapping[Hashable, float]], *, weights: Sequence[float] | None = None
                  ) -> dict[Hashable, float]:
    """Fused score of every item: sum over sides of weight x the item's min-max normalised score,
    weights normalised to sum to 1, so scores lie in [0, 1]. Each side scores the same items (an
    item a side did not score counts as that side's minimum). A side whose scores are all equal
    (always so with one candidate) orders nothing: each item it scored above 0 is that side's best
    and gets its full weight, so a lone match reads as the best there is, not as worthless; a
    value of 0 or less (BM25 0: no query term in any candidate) adds nothing."""
    if weights is None:
        weights = [1.0] * len(sides)
    if len(weights) != len(sides):
        raise ValueError("one weight per side is needed")
    if any(w < 0 for w in weights) or sum(weights) <= 0:
        raise ValueError("weights must be non-negative and not all 0")
    total = sum(weights)
    items = {item for side in sides for item in side}
    scores = dict.fromkeys(items, 0.0)
    for side, weight in zip(sides, weights, strict=True):
        if not side:
            continue
        low, high = min(side.values()), max(side.values())
        if high <= low:
            for item, value in side.items():
                if value > 0:
                    scores[item] += weight / total
            continue
        for item in items:
            value = side.get(item, low)
            scores[item] += weight / total * (value - low) / (high - low)
    return scores


def fuse_convex(sides: Sequence[Mapping[Hashable, float]], *, weights: Sequence[float] | None = None,
                tie_break: Mapping[Hashable, float] | None = None) -> list[tuple[Hashable, float]]:
    """(item, score) best first."""
    scores = convex_scores(sides, weights=weights)
    return [(item, scores[item]) for item in order_by_score(scores, tie_break=tie_break)]


def round_robin(rankings: Sequence[Sequence[Hashable]], *, k: int = RRF_K,
                tie_break: Mapping[Hashable, float] | None = None) -> list[tuple[Hashable, float]]:
    """Merge the lists of several queries: an item scores max 1 / (k + rank) over the lists, so the
    lists take turns (every query's first item comes before any second item). Summing, as RRF
    does, would instead favour items that are mediocre for every query over the best of each."""
    scores: dict[Hashable, float] = {}
    for ranking in rankings:
        for position, item in enumerate(ranking, start=1):
            scores[item] = max(scores.get(item, 0.0), 1.0 / (k + position))
    return [(item, scores[item]) for item in order_by_score(scores, tie_break=tie_break)]
