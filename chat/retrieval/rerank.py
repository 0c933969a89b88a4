"""Optional reranking stage: a sentence-transformers CrossEncoder named in settings.RERANKER_MODEL
(a local path; nothing is downloaded), or `reader`: ragweb's own reader (reader/, reading the first
128 tokens of each chunk). Off when the setting is empty: neither improved retrieval on the held-out
sets (docs/evaluation.md, "The reader as reranker").

When on, the cross-encoder's probability replaces the calibrated similarity/BM25 relevance and
its order replaces the fused order for the candidates it scores, as in dsRAG; the probability
is spread out with a beta CDF (chat.retrieval.relevance.beta_cdf_relevance) before RSE uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from django.conf import settings

from chat.retrieval import tuning
from chat.retrieval.relevance import beta_cdf_relevance
from chat.retrieval.types import RankedQuery

READER = "reader"  # RERANKER_MODEL naming ragweb's own reader rather than a CrossEncoder's path
# (query, texts) -> probabilities 0-1, one per text.
Scorer = Callable[[str, list[str]], list[float]]


def enabled() -> bool:
    return bool(settings.RERANKER_MODEL)


@lru_cache(maxsize=2)
def _model(path: str):
    from sentence_transformers import CrossEncoder

    return CrossEncoder(path, device="cpu", local_files_only=True)


def cross_encoder_scorer(query: str, texts: list[str]) -> list[float]:
    """Probabilities from the configured CrossEncoder (its activation: sigmoid for one label)."""
    if settings.RERANKER_MODEL == READER:
        from reader import runtime

        return [float(p) for p in runtime.score(query, texts)]
    model = _model(settings.RERANKER_MODEL)
    scores = model.predict([(query, t) for t in texts], batch_size=16, show_progress_bar=False)
    return [float(s) for s in scores]


def rerank(query: str, ranked: RankedQuery, scores: dict[int, float], *, scorer: Scorer | None = None,
           limit: int | None = None) -> tuple[RankedQuery, dict[int, float]]:
    """Rescore the first `limit` candidates (tuning.RERANK_CANDIDATES) with the scorer;
    they come first, by probability; the rest keep their order and get relevance 0."""
    scorer = scorer or cross_encoder_scorer
    limit = tuning.RERANK_CANDIDATES if limit is None else limit
    head, tail = ranked.candidates[:limit], ranked.candidates[limit:]
    if not head:
        return ranked, scores
    probabilities = scorer(query, [c.text or "" for c in head])  # None: deleted since the search
    if len(probabilities) != len(head):
        raise ValueError("the reranker returned a different number of scores")
    order = sorted(range(len(head)), key=lambda i: (-probabilities[i], i))
    candidates = [head[i] for i in order] + tail
    relevance = {c.chunk_id: 0.0 for c in tail}
    new_scores = {c.chunk_id: scores.get(c.chunk_id, 0.0) for c in tail}
    for i in order:
        relevance[head[i].chunk_id] = beta_cdf_relevance(probabilities[i])
        new_scores[head[i].chunk_id] = probabilities[i]
    return RankedQuery(candidates, relevance), new_scores
