"""Turn a follow-up question into a standalone retrieval query: rewritten by the LLM when one is
configured, built from the conversation when there is none (or the LLM fails).

Without an LLM a follow-up that leans on the conversation — it refers back ("What presets does
it have?", "And in templates?") or is too short to stand alone — is searched together with the
key words of the question it follows (itself resolved the same way, so a chain of follow-ups
keeps its subject): "What is RSE?" then "What presets does it have?" searches
"What presets does it have? (RSE)". A question that stands on its own is searched as asked
(and, should nothing relevant be found for it, the answer pipeline tries it once more in the
conversation's context: `contextual_query(..., force=True)`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from chat.answering.prompts import rewrite_messages
from chat.answering.text import STOPWORDS, words
from corpus import llm

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 500
# A question with fewer content words than this cannot stand alone ("And the timeout?" has one).
MIN_STANDALONE_TERMS = 3
# At most this many key words are carried over from the earlier question.
MAX_CARRIED_TERMS = 8

# Words that point back into the conversation.
_REFERRING = frozenset(
    "it its it's itself they them their theirs themselves this that these those there such same "
    "former latter above previous he him his she her".split())
_CONTINUING = re.compile(r"^\s*(and|also|but|so|then|what about|how about|and what|and how|or)\b", re.IGNORECASE)
# Question words and verbs of asking carry no subject of their own.
_ASKING = frozenset(
    "tell explain show describe give example examples mean means work works happen happens say says "
    "difference different".split())


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


def _content_words(text: str) -> list[str]:
    """The words of `text` that carry its subject, in order, without repeats (case kept)."""
    found = re.findall(r"[A-Za-z0-9]+(?:[_.'-][A-Za-z0-9]+)*", text)
    kept: dict[str, str] = {}
    for word in found:
        lower = word.lower()
        if lower in STOPWORDS or lower in _REFERRING or lower in _ASKING or len(lower) < 2:
            continue
        kept.setdefault(lower, word)
    return list(kept.values())


def leans_on_conversation(question: str) -> bool:
    """True for a follow-up that needs the conversation to be understood."""
    lowered = words(question)
    if _CONTINUING.match(question) or any(w in _REFERRING for w in lowered):
        return True
    return len(_content_words(question)) < MIN_STANDALONE_TERMS


def contextual_query(question: str, history: Sequence[tuple[str, str]], *, force: bool = False) -> str:
    """The question with the key words of the question it follows, when it leans on it (no LLM);
    `force`: even when it does not look like a follow-up."""
    subject = ""
    for role, content in history:
        if role == "user" and content.strip():
            subject = _with_subject(content.strip(), subject)
    return _with_subject(question, subject, force=force)


def _with_subject(question: str, subject: str, *, force: bool = False) -> str:
    if not subject or not (force or leans_on_conversation(question)):
        return question
    own = {w.lower() for w in _content_words(question)}
    carried = [w for w in _content_words(subject) if w.lower() not in own][:MAX_CARRIED_TERMS]
    if not carried:
        return question
    return f"{question} ({' '.join(carried)})"[:MAX_QUERY_CHARS]


def rewrite_query(question: str, history: Sequence[tuple[str, str]]) -> str:
    """A standalone query for `question`: the question itself without history; the LLM's rewrite
    when an LLM is configured; else (or when the LLM fails) one built from the conversation."""
    if not history:
        return question
    if not llm.llm_configured():
        return contextual_query(question, history)
    try:
        reply = llm.complete(rewrite_messages(question=question, history=history), max_tokens=100)
    except Exception:  # any LLM failure: fall back to the conversation, the answer step reports errors
        logger.warning("query rewrite failed; building the query from the conversation", exc_info=True)
        return contextual_query(question, history)
    query = clean_rewrite(reply or "")
    if not query or len(query) > MAX_QUERY_CHARS:
        return contextual_query(question, history)
    return query
