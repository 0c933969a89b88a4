"""The naive answer an answer scorer has to beat: the first BASELINE_CHARS characters of the
best-ranked chunk of the same hybrid search the answer pipeline runs, for the question as asked.
Every answer figure of the evaluation is printed beside this one's."""

from __future__ import annotations

from chat.answering.pipeline import SEARCH_K
from chat.retrieval import SearchError, search

BASELINE_CHARS = 550


def naive_answer(question: str, collections) -> str:
    """The baseline's answer text ("" when the search finds nothing or fails)."""
    try:
        result = search(query=question, collections=collections, mode="hybrid", k=SEARCH_K, rse=None)
    except SearchError:
        return ""
    return result.chunks[0].text[:BASELINE_CHARS] if result.chunks else ""
