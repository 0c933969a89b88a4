"""Words of a question, a sentence or a source, as the answer stage compares them. Pure.

Content terms are lowercased words without stopwords, lightly stemmed ("settings" and "setting",
"retried" and "retries" meet), identifiers kept whole as well as split at underscores and dots
("select_related" gives "select_related", "select" and "related").
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9]+(?:[_.][A-Za-z0-9]+)*")

STOPWORDS = frozenset(
    "a about above after again all also am an and any are as at be because been before being below between "
    "both but by can could did do does doing done during each either else etc even ever every for from "
    "further get gets got had has have having he her here hers him his how however i if in into is it its "
    "itself just let lets like may me might more most much must my need needs no nor not now of off on once "
    "one only or other our ours out over own per please same shall she should so some such than that the "
    "their theirs them then there these they this those through thus to too under until up upon us use used "
    "uses using very via want was way we were what whatever when where whether which while who whom whose why "
    "will with within without would yes yet you your yours".split())

# Words of asking rather than of the subject ("Tell me everything about the deployment"): they name
# nothing a source could hold.
ASKING_WORDS = frozenset(
    "tell explain show describe give example examples mean means meaning work works happen happens say says "
    "difference different everything anything something thing things know need needs want wants possible "
    "way ways".split())

_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "s")


def stem(word: str) -> str:
    """A light suffix stripper: enough to match plural and tense forms of the same word
    ("caches"/"cache", "configured"/"configuration", "retries"/"retry")."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    return word[:-1] if word.endswith("e") and len(word) > 3 else word


def words(text: str) -> list[str]:
    """Lowercased words; identifiers (select_related, django.urls.path) as single words."""
    return [w.lower() for w in _WORD.findall(text)]


def content_terms(text: str) -> set[str]:
    """Stemmed content words of `text`, identifiers also split into their parts."""
    terms: set[str] = set()
    for word in words(text):
        parts = [word]
        if "_" in word or "." in word:
            parts += [p for p in re.split(r"[_.]", word) if p]
        for part in parts:
            if part in STOPWORDS or (len(part) < 2 and not part.isdigit()):
                continue
            terms.add(stem(part))
    return terms
