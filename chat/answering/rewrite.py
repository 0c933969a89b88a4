"""Rewrite a follow-up question into a standalone retrieval query, when an LLM is configured."""

from __future__ import annotations

import logging
from collections.abc import Sequence

from chat.answering.prompts import rewrite_messages
from corpus import llm

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 500


def clean_rewrite(text: str) -> str:
    """The first non-empty line of the LLM reply, without a "Query:" prefix or quotes."""
    for line in text.splitlines():
        line = line.strip()
        if line.lower().startswith(("query:", "standalone query:", "search query:")):
            line = line.split(":", 1)[1].strip()
        line = line.strip("\"'`“”").strip()
        if line:
            return line
    return ""


def rewrite_query(question: str, history: Sequence[tuple[str, str]]) -> str:
    """A standalone query for `question`; the question itself when there is no history, no LLM,
    or the LLM fails (retrieval with the raw question beats no answer)."""
    if not history or not llm.llm_configured():
        return question
    try:
        reply = llm.complete(rewrite_messages(question=question, history=history), max_tokens=100)
    except Exception:  # any LLM failure: fall back to the raw question, the answer step reports errors
        logger.warning("query rewrite failed; using the question as is", exc_info=True)
        return question
    query = clean_rewrite(reply or "")
    if not query or len(query) > MAX_QUERY_CHARS:
        return question
    return query
