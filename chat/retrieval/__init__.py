"""The search engine: query -> embed -> candidates (vector + BM25) -> fusion -> [rerank] ->
relevance -> RSE segments. `search()` and the shapes it returns are its interface."""

from chat.retrieval.search import SearchError, search
from chat.retrieval.types import DocumentRef, ScoredChunk, SearchResult, Segment

__all__ = ["DocumentRef", "ScoredChunk", "SearchError", "SearchResult", "Segment", "search"]
