"""The one check of a question, whichever way it is asked: the chat page's /ask/, POST /api/ask/,
/v1/chat/completions and `manage.py ask` all call clean_question before any work is done.

A question is at most MAX_QUESTION_CHARS characters (the same cap everywhere: a 9 MB
question would be stored and then weigh on every page and export of its conversation), and has
no character that Postgres or UTF-8 cannot hold (NUL, a lone surrogate from a JSON "\\ud800")."""

from __future__ import annotations

import re

# ~300 words: a question, or a question with a pasted error message, fits; a constant, not a setting, as a
# longer one is not a question the search or the answer can use (the search reads 256 tokens of it).
MAX_QUESTION_CHARS = 2000

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class InvalidQuestion(ValueError):
    """The question cannot be asked; str(exc) says why, for the person who asked."""


def unstorable_character(text: str) -> str | None:
    """Why `text` cannot be stored as text ("a NUL character", "an invalid character"), or None."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    return "a NUL character" if found.group() == "\x00" else "an invalid character (a lone surrogate)"


def clean_question(text: str) -> str:
    """`text` stripped, or InvalidQuestion when it is empty, longer than MAX_QUESTION_CHARS or
    holds a character that cannot be stored."""
    question = (text or "").strip()
    if not question:
        raise InvalidQuestion("Please type a question.")
    limit = MAX_QUESTION_CHARS
    if len(question) > limit:
        raise InvalidQuestion(f"The question is longer than {limit} characters.")
    bad = unstorable_character(question)
    if bad:
        raise InvalidQuestion(f"The question contains {bad}.")
    return question
