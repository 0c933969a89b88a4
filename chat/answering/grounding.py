"""The grounding pass: every sentence of an LLM answer checked against the numbered sources. Pure.

A sentence's support by a source is the share of the sentence's content words (lightly stemmed)
that the source contains: a paraphrase of a source reuses most of its words, a sentence the
model made up does not. Then, sentence by sentence:

- a `[n]` that names no source is removed;
- a cited source that does not support the sentence is dropped, and the sentence keeps the cited
  sources that do;
- a sentence left without a citation gets the `[n]` of the source that supports it best, when that
  source clearly does (ADD_SUPPORT);
- a sentence no source supports stays uncited and counts as unsupported; the answer then ends with
  UNSUPPORTED_NOTE.

Sentences too short to check ("Yes.", headings) and sentences about the sources themselves ("The
sources do not say.") keep their valid citations and are not counted. Code blocks are left alone.
The text is changed only where a citation changes: a sentence whose citations all stand is kept
as the model wrote it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from chat.answering.text import content_terms, sentence_breaks

# A cited source is kept when it holds this share of the sentence's content words...
KEEP_SUPPORT = 0.5
# ...and an uncited sentence gets the best source's [n] when that source holds this share.
ADD_SUPPORT = 0.7
# Sentences with fewer content words than this are not checked (too little to judge by words).
MIN_TERMS = 3

UNSUPPORTED_NOTE = "*Sentences without a citation are not supported by the sources.*"

# "[1]", "[1, 2]", "[1][2]", "[Source 1]": the ways models cite numbered sources.
_MARKER = re.compile(r"\s?\[(?:(?:source|sources|src)\s*)?(\d{1,3}(?:\s*[,;]\s*(?:(?:source)\s*)?\d{1,3})*)\]",
                     re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_LIST_PREFIX = re.compile(r"^(\s*(?:[-*+]|\d+[.)])\s+|\s*#{1,6}\s+|\s*>\s*)")
_META = re.compile(r"\b(sources?|documents?|context|passages?|provided)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(not|no|none|n't|cannot|neither|nothing|unable)\b|n't\b", re.IGNORECASE)


@dataclass(frozen=True)
class Grounded:
    text: str
    cited: tuple[int, ...]  # source numbers the text cites, in order of first citation
    removed: tuple[int, ...]  # numbers that named no source, or a source not supporting its sentence
    added: int  # sentences that got a citation from this pass
    unsupported: int  # checked sentences no source supports (left uncited)
    declined: bool  # the answer only says the sources do not hold the answer

    @property
    def partly_unsupported(self) -> bool:
        return self.unsupported > 0


def _sentences(line: str) -> list[str]:
    """The sentences of a line of an answer, each with its [n] markers and the white space after
    it: joined, they give back the line (chat.answering.text.sentence_breaks)."""
    pieces, position = [], 0
    for _gap_start, gap_end in sentence_breaks(line):
        pieces.append(line[position:gap_end])
        position = gap_end
    pieces.append(line[position:])
    return [piece for piece in pieces if piece]


def marker_numbers(text: str) -> list[int]:
    """Every number cited in `text` ([1], [1, 2], [Source 3]), in order, repeats kept."""
    return [int(n) for match in _MARKER.finditer(text) for n in re.findall(r"\d{1,3}", match.group(1))]


def support(sentence_terms: set[str], source_terms: set[str]) -> float:
    """Share of the sentence's content words found in the source (0 when it has none)."""
    if not sentence_terms:
        return 0.0
    return len(sentence_terms & source_terms) / len(sentence_terms)


def is_meta(sentence: str) -> bool:
    """A sentence about the sources rather than the subject ("The sources do not mention X")."""
    return bool(_META.search(sentence) and _NEGATION.search(sentence))


@dataclass
class _Tally:
    cited: list[int]
    removed: list[int]
    added: int = 0
    unsupported: int = 0
    claims: int = 0
    meta: int = 0


def ground(text: str, sources: dict[int, str]) -> Grounded:
    """Check `text` (Markdown citing [n]) against `sources` ({n: source text})."""
    source_terms = {n: content_terms(body) for n, body in sources.items()}
    tally = _Tally(cited=[], removed=[])
    out_lines: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            out_lines.append(line)
            continue
        if in_fence or not line.strip():
            out_lines.append(line)
            continue
        prefix_match = _LIST_PREFIX.match(line)
        prefix = prefix_match.group(0) if prefix_match else ""
        body = line[len(prefix):]
        sentences = _sentences(body)
        out_lines.append(prefix + "".join(_ground_sentence(s, source_terms, tally) for s in sentences))
    grounded = "\n".join(out_lines).rstrip()
    if tally.unsupported:
        grounded += "\n\n" + UNSUPPORTED_NOTE
    cited = tuple(dict.fromkeys(tally.cited))
    return Grounded(text=grounded, cited=cited, removed=tuple(tally.removed), added=tally.added,
                    unsupported=tally.unsupported, declined=bool(tally.meta) and not cited)


def _ground_sentence(sentence: str, source_terms: dict[int, set[str]], tally: _Tally) -> str:
    numbers = marker_numbers(sentence)
    claim = _MARKER.sub("", sentence)
    terms = content_terms(claim)
    checkable = len(terms) >= MIN_TERMS and not is_meta(claim)
    if is_meta(claim):
        tally.meta += 1
    valid = list(dict.fromkeys(n for n in numbers if n in source_terms))
    if not checkable:
        keep = valid
    else:
        tally.claims += 1
        keep = [n for n in valid if support(terms, source_terms[n]) >= KEEP_SUPPORT]
        if not keep:
            scored = sorted(((support(terms, t), n) for n, t in source_terms.items()), key=lambda p: (-p[0], p[1]))
            if scored and scored[0][0] >= ADD_SUPPORT:
                keep = [scored[0][1]]
                tally.added += 1
            else:
                tally.unsupported += 1
    tally.removed.extend(n for n in numbers if n not in keep)
    tally.cited.extend(keep)
    if keep == list(dict.fromkeys(numbers)):
        return sentence  # every citation stands: the sentence as the model wrote it
    return _with_citations(claim, keep)


def _with_citations(claim: str, numbers: Sequence[int]) -> str:
    """The sentence with `numbers` cited before its closing punctuation (and its spacing kept)."""
    stripped = claim.rstrip()
    trailing = claim[len(stripped):]
    if not numbers:
        return claim
    markers = "".join(f"[{n}]" for n in numbers)
    end = len(stripped)
    while end and stripped[end - 1] in ".!?:;":
        end -= 1
    return f"{stripped[:end]} {markers}{stripped[end:]}{trailing}"


def sentences_citing(text: str, n: int) -> list[str]:
    """The sentences of `text` (Markdown) that cite [n], without their citation markers."""
    found = []
    in_fence = False
    for line in text.split("\n"):
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip():
            continue
        prefix = _LIST_PREFIX.match(line)
        body = line[prefix.end():] if prefix else line
        for sentence in _sentences(body):
            if n in marker_numbers(sentence):
                found.append(_MARKER.sub("", sentence).strip())
    return found
