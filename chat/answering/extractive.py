"""The answer without an LLM: the sentences of the top sources that best match the query,
each with its [n] citation. A sentence's score mixes embedding similarity to the query with
the share of the query's words it contains (the latter rescues exact names and numbers)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)

LABEL = "Extractive answer (no LLM configured)"
SIMILARITY_WEIGHT = 0.6
OVERLAP_WEIGHT = 0.4
MIN_WORDS = 4
MAX_SENTENCE_CHARS = 400
SOURCES_SCANNED = 4

_STOPWORDS = frozenset(
    "a an and are as at be by can do does for from how i in is it its of on or that the this to was what when "
    "where which who why will with you your my me we our they them there their about into than then so if not "
    "no yes should would could".split())
_WORD = re.compile(r"[A-Za-z0-9_]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[`*A-Z0-9])")
_MARKUP_PREFIX = re.compile(r"^\s*(?:#{1,6}\s+|[-*+]\s+|\d+[.)]\s+|>\s*)+")


@dataclass(frozen=True)
class Sentence:
    n: int          # citation number of the source it comes from
    position: int   # order within that source
    text: str


def _terms(text: str) -> set[str]:
    return {w for w in (m.lower() for m in _WORD.findall(text)) if len(w) > 1 and w not in _STOPWORDS}


_RST_ROLE = re.compile(r":[\w.-]+(?::[\w.-]+)?:(?=`)")
_RULE_CHARS = set("=-~^*#_+`:'\".| ")
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def _paragraphs(text: str) -> list[str]:
    """Prose paragraphs with hard-wrapped lines joined; code (fenced, or reST literal blocks after
    "::"), tables, heading underlines and directives are left out."""
    paragraphs: list[str] = []
    current: list[str] = []
    in_fence = literal = False

    def flush() -> None:
        if current:
            paragraphs.append(" ".join(current))
            current.clear()

    for raw_line in text.splitlines():
        stripped = raw_line.strip()
        if stripped.startswith(("```", "~~~")):
            flush()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if literal:  # a reST literal block lasts while lines are blank or indented
            if not stripped or raw_line[:1].isspace():
                continue
            literal = False
        if not stripped:
            flush()
            continue
        if stripped.startswith(("|", ".. ")) or set(stripped) <= _RULE_CHARS or stripped.startswith("#"):
            flush()
            continue
        if _LIST_ITEM.match(raw_line):
            flush()
        current.append(stripped)
        if stripped.endswith("::"):
            flush()
            literal = True
    flush()
    return paragraphs


def split_sentences(text: str) -> list[str]:
    """Sentences of a source, skipping code, tables, headings and fragments too short to answer."""
    sentences: list[str] = []
    for paragraph in _paragraphs(text):
        paragraph = _RST_ROLE.sub("", _MARKUP_PREFIX.sub("", paragraph))
        for part in _SENTENCE_END.split(paragraph):
            part = part.strip().rstrip(":").strip()
            if len(part.split()) < MIN_WORDS:
                continue
            if len(part) > MAX_SENTENCE_CHARS:
                part = part[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
            sentences.append(part)
    return sentences


def overlap_score(query_terms: set[str], sentence: str) -> float:
    if not query_terms:
        return 0.0
    return len(query_terms & _terms(sentence)) / len(query_terms)


def _default_similarity(query: str, sentences: list[str]) -> np.ndarray:
    from corpus.ingest.embed import embed_query, embed_texts

    return embed_texts(sentences) @ embed_query(query)


def score_sentences(query: str, sentences: Sequence[Sentence],
                    similarity: Callable[[str, list[str]], np.ndarray] | None = None) -> list[float]:
    """One score per sentence (higher is better)."""
    texts = [s.text for s in sentences]
    try:
        sims = np.asarray((similarity or _default_similarity)(query, texts), dtype=float)
    except Exception:  # the embedding model is optional here: words alone still rank sentences
        logger.warning("sentence embedding failed; ranking by word overlap only", exc_info=True)
        sims = np.zeros(len(texts))
    query_terms = _terms(query)
    return [SIMILARITY_WEIGHT * float(sim) + OVERLAP_WEIGHT * overlap_score(query_terms, text)
            for sim, text in zip(sims, texts, strict=True)]


def extractive_answer(query: str, citations: Sequence[dict], *, max_sentences: int = 4,
                      similarity: Callable[[str, list[str]], np.ndarray] | None = None) -> str:
    """Markdown: the label, then the best sentences as a list, each ending in its "[n]"."""
    candidates = [Sentence(c["n"], i, text)
                  for c in list(citations)[:SOURCES_SCANNED]
                  for i, text in enumerate(split_sentences(c["text"]))]
    if not candidates:
        return f"*{LABEL}.* The sources found contain no sentence that answers this; open them below."
    scores = score_sentences(query, candidates, similarity)
    ranked = sorted(zip(scores, candidates, strict=True), key=lambda pair: (-pair[0], pair[1].n, pair[1].position))
    chosen: list[Sentence] = []
    seen: set[str] = set()
    for _score, sentence in ranked:
        key = " ".join(sentence.text.lower().split())
        if key in seen:
            continue
        seen.add(key)
        chosen.append(sentence)
        if len(chosen) == max_sentences:
            break
    lines = [f"- {s.text} [{s.n}]" for s in chosen]
    return f"*{LABEL}: the most relevant sentences of the sources.*\n\n" + "\n".join(lines)
