"""A follow-up question in the conversation's context: rewritten by the LLM when one is
configured, built from the conversation when there is none (or the LLM fails).

The answer pipeline searches the question as asked *and* in context and keeps the search
retrieval is more confident in (chat.answering.pipeline), so this module only proposes the
in-context query. Without an LLM it is the question followed by the key words of the question it
follows: "What is RSE?" then "What presets does it have?" proposes "What presets does it have?
(RSE)". The words come from the previous question only (itself resolved one step further back
when it refers back), never from the whole conversation, so they cannot pile up turn after turn.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

from chat.answering.prompts import rewrite_messages
from chat.answering.text import ASKING_WORDS, STOPWORDS, words
from corpus import llm

logger = logging.getLogger(__name__)

MAX_QUERY_CHARS = 500
# At most this many key words are carried over from the earlier question.
MAX_CARRIED_TERMS = 8

# Words that point back into the conversation.
_REFERRING = frozenset(
    "it its it's itself they them their theirs themselves this that these those there such same "
    "former latter above previous he him his she her".split())
# Of those, the words that can only point back into the conversation ("that", "there" and "such"
# also join clauses and name places in questions that stand alone).
_POINTING = frozenset("it its it's itself they them their theirs themselves this these those former latter "
                      "he him his she her".split())
# "What if ..." asks for a variation of what was being discussed, as "What about ..." does.
_CONTINUING = re.compile(r"^\s*(and|also|but|so|then|what about|how about|what if|and what|and how|or)\b",
                         re.IGNORECASE)
# "that", "this" or "there" with no word after it, only punctuation: a pronoun, not a conjunction
# ("My receiver runs twice, how do I stop that?", "Can I do this?").
_TRAILING_POINTER = re.compile(r"\b(that|this|there)\s*(?:[?.!,;:)]|$)", re.IGNORECASE)

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
        if lower in STOPWORDS or lower in _REFERRING or lower in ASKING_WORDS or len(lower) < 2:
            continue
        kept.setdefault(lower, word)
    return list(kept.values())


# A fragment this short ("How often?", "Why?", "Since when?", "Which one?") cannot name its subject.
FRAGMENT_MAX_WORDS = 2


def refers_back(question: str) -> bool:
    """True for a question that points into the conversation: it continues it ("And ...",
    "What about ..."), names something by a pronoun ("it", "they", a "that" ending a clause), or
    is a fragment of at most FRAGMENT_MAX_WORDS words."""
    asked = words(question)
    return (bool(_CONTINUING.match(question)) or any(w in _POINTING for w in asked)
            or bool(_TRAILING_POINTER.search(question)) or 0 < len(asked) <= FRAGMENT_MAX_WORDS)


def contextual_query(question: str, history: Sequence[tuple[str, str]]) -> str:
    """The question with the key words of the previous question (no LLM); the question itself
    when there is no previous question or it adds no word of its own."""
    asked = [content.strip() for role, content in history if role == "user" and content.strip()]
    if not asked:
        return question
    subject = asked[-1]
    if len(asked) > 1 and refers_back(subject):
        # "What is RSE?" → "What presets does it have?" → "And which is the default?": the middle
        # question is about RSE only through the first one. One step, no further.
        subject = _with_subject(subject, asked[-2])
    return _with_subject(question, subject)


def _with_subject(question: str, subject: str) -> str:
    own = {w.lower() for w in _content_words(question)}
    carried = [w for w in _content_words(subject) if w.lower() not in own][:MAX_CARRIED_TERMS]
    if not carried:
        return question
    return f"{question} ({' '.join(carried)})"[:MAX_QUERY_CHARS]


def rewrite_query(question: str, history: Sequence[tuple[str, str]]) -> str:
    """The question in the conversation's context: the question itself without history; the
    LLM's standalone rewrite when an LLM is configured; else (or when the LLM fails) the question
    with the previous question's key words."""
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
