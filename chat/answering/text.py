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
    ("caches"/"cache", "configured"/"configuration", "retries"/"retry", "employees"/"employee")."""
    if len(word) <= 3 or not word.isalpha():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)] + ("y" if suffix in ("ies", "ied") else "")
            break
    # Every final "e": "employees" loses "es" above and "employee" only its "e"s here, and both are "employ".
    while word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


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


# Sentences. A sentence ends at . ! or ? (then any closing quotes or brackets, and any [n] citation
# markers of an answer) before white space and what can start a sentence; not after an abbreviation
# ("Ms. Halvorsen", "e.g. bilberries", "Fig. 3"), an initial ("J. R. Smith") or a dotted
# abbreviation ("U.S."). A decimal number ("1.5") has no white space after its point. A rule set of
# our own: the libraries that learn abbreviations (NLTK's punkt) need data files fetched at run time.
_MARKERS = r"\[\d{1,3}(?:\s*,\s*\d{1,3})*\]"
_BREAK = re.compile(rf"[.!?]+[\"')\]”’*_`]*(?:[ \t]*{_MARKERS})*\s+(?!{_MARKERS})(?=[\"'(\[`*“‘A-Z0-9])")
# Never end a sentence: titles, Latin and reference abbreviations, months. A company's "Ltd.",
# "Inc." or "Corp." is not here: it ends the name, so a capital after it starts a sentence
# ("supplied by Acme Ltd. The price ..."); "Co." is, since "Ltd." often follows it.
_ABBREVIATIONS = frozenset(
    "mr mrs ms mx dr prof sr jr st mt rev gen col capt lt sgt hon e.g i.e etc vs cf al approx ca "
    "co dept univ jan feb mar apr jun jul aug sep sept oct nov dec".split())
# Days of the week, capitalised ("From Mon. 3 March": the date goes on; "in the sun. The" ends).
_DAYS = frozenset("Mon Tue Tues Wed Thu Thur Thurs Fri Sat Sun".split())
# End a sentence unless a number follows ("No. 4", "Fig. 3", "pp. 12-14", "Vol. 2", "min. 5 kg").
# Units are here, not above: "It weighs 5 kg. The box ..." ends where it ends.
_BEFORE_NUMBERS = frozenset(
    "no nos fig figs vol vols p pp ch sec eq art min max tel ext kg km cm mm lb lbs oz ft yd mi hr hrs".split())
_LAST_WORD = re.compile(r"([A-Za-z]+(?:\.[A-Za-z]+)*)\.$")


def ends_sentence(text: str, point: int, following: str) -> bool:
    """False when the "." at text[point] closes an abbreviation or an initial rather than a
    sentence; `following` is the text after the white space."""
    if text[point] != ".":
        return True
    word = _LAST_WORD.search(text, max(0, point - 40), point + 1)
    if word is None:
        return True
    token = word.group(1)
    lower = token.lower()
    if lower in _ABBREVIATIONS or token in _DAYS:
        return False
    if "." in token:  # "U.S.", "a.m." (one letter a part); not an identifier ("django.urls.path.")
        return not all(len(part) == 1 for part in token.split("."))
    if len(token) == 1 and token.isupper():  # an initial: "J. R. Smith"
        return False
    return not (lower in _BEFORE_NUMBERS and following[:1].isdigit())


def sentence_breaks(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of the gaps between the sentences of text[start:end]: from just after the
    final punctuation (and any closing quotes, brackets or [n] markers) to the next sentence's
    first character."""
    end = len(text) if end is None else end
    gaps = []
    for match in _BREAK.finditer(text, start, end):
        if ends_sentence(text, match.start(), text[match.end():match.end() + 1]):
            gap_start = match.start() + len(match.group(0).rstrip())
            gaps.append((gap_start, match.end()))
    return gaps


def split_sentences(text: str) -> list[str]:
    """The sentences of a paragraph of prose, stripped, in order (sentence_breaks)."""
    pieces, position = [], 0
    for gap_start, gap_end in sentence_breaks(text):
        pieces.append(text[position:gap_start])
        position = gap_end
    pieces.append(text[position:])
    return [p.strip() for p in pieces if p.strip()]
