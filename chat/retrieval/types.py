"""The shapes passed between the search's stages.

Candidate and RankedQuery are internal: a chunk as the candidates statement returns it, and one
query's candidates in their fused order with their calibrated relevance (fusion -> rerank -> RSE).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Candidate:
    chunk_id: int
    document_id: int
    collection_id: int
    chunk_index: int
    text: str | None  # not fetched with the candidates: chat.retrieval.segment_text fills the returned ones
    start: int
    end: int
    page: int | None
    title: str
    source: str
    vector_rank: int | None
    keyword_rank: int | None
    similarity: float | None
    bm25: float | None  # 0 for a chunk holding none of the query's terms; None in vector mode


@dataclass
class RankedQuery:
    """One query's results, best first, with each chunk's calibrated relevance."""

    candidates: list[Candidate]
    relevance: dict[int, float]  # chunk_id -> 0-1
