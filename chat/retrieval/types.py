"""The shapes a search returns, and those passed between its stages.

DocumentRef, ScoredChunk, Segment and SearchResult are what callers get (exported by
chat.retrieval); their field names are the REST contract of POST /api/search/ (DESIGN.md), which
turns them into JSON through its output serializers. Candidate and RankedQuery are internal: a
chunk as the candidates statement returns it, and one query's candidates in their fused order with
their calibrated relevance (fusion -> rerank -> RSE).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DocumentRef:
    id: int
    title: str
    source: str


@dataclass(frozen=True)
class ScoredChunk:
    """A returned chunk: its score in the search's order and its calibrated 0-1 relevance."""

    chunk_id: int
    document: DocumentRef
    chunk_index: int
    text: str
    start: int  # character offset in the document text
    end: int  # exclusive
    score: float  # hybrid: the fused score; vector: cosine similarity; keyword: BM25
    relevance: float
    ranks: dict[str, int | None]  # {"vector": rank or None, "keyword": rank or None}, 1-based


@dataclass(frozen=True)
class Segment:
    """A run of consecutive chunks of one document chosen by RSE, with their text."""

    document: DocumentRef
    start: int  # chunk index, inclusive
    end: int  # chunk index, exclusive
    char_start: int
    char_end: int  # the text is the document's text[char_start:char_end]
    text: str
    score: float  # RSE's value of the segment
    page: int | None  # the PDF page its text starts on


@dataclass(frozen=True)
class SearchResult:
    query: str | list[str]
    mode: str
    chunks: list[ScoredChunk] = field(default_factory=list)  # best first
    segments: list[Segment] = field(default_factory=list)  # in the order of their best-ranked chunk
    timings_ms: dict[str, float] = field(default_factory=dict)  # per stage, and "total"
    # {model: one row per query}: the queries' vectors, for a caller that needs them again (an
    # extractive answer scores sentences against the question's vector).
    query_vectors: dict = field(default_factory=dict, repr=False, compare=False)


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
