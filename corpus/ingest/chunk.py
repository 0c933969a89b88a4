"""Chunkers: split a document's text into spans of at most `size` model tokens.

Strategies (corpus.models.Collection.Chunker): fixed, sliding, recursive, markdown, semantic,
semantic_percentile, maxmin. Every strategy but "sliding" returns spans that are in order,
non-empty, do not overlap and cover the text exactly; RSE and the chunk invariant rely on it.

Sizes are counted in tokens of the embedding model. The text is tokenised once and every cut
falls on a word boundary (a tokenizer pre-token boundary), where token counts simply add up, so
the size of any candidate chunk is two binary searches instead of a re-tokenisation.

Bounds: no chunk has more than `size` tokens, except a chunk made of a single word whose
word pieces alone exceed `size` (a word is never cut in half by the token bound; the tokenizer
caps words at 100 characters, so this needs a tiny `size`). No chunk has more than `max_chars`
characters, whatever the tokenizer says: a 20 MB line without spaces is one [UNK] "word" to it,
so a longer chunk is cut again, at whitespace or a word start when there is one in its last half,
else where the bound falls (inside a word: the pieces are within `size` in the text's own tokens,
but a piece tokenised alone may count more, "ere.g." of "...tokenizere.g."). No chunk is empty
or whitespace-only, except the one chunk of a text that is itself only whitespace (zero tokens,
returned whole up to `max_chars`) and the pieces of a whitespace run longer than `max_chars`.

A table's rows stay under their header: no strategy but "sliding" cuts inside a Markdown table
block where the block fits in a chunk, nor inside a row where it does not (chunk_tables).
Code stays whole: the strategies that split at separators (recursive, markdown, the semantic ones)
do not cut inside a fenced code block that fits in a chunk; a longer one is cut between its lines
first, and chunk_fences.refenced() shows each piece as code.

"markdown" cuts at every heading; a section too small to stand alone (TINY_SECTION_FRACTION) joins
the section after it, and the chunk's `section` then names that section's heading, where its
heading path is read (Span.heading_at).

A document that would make more than `max_chunks` chunks raises TooManyChunks, as soon as its
token count shows it (before any chunking work).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from corpus.ingest.chunk_fences import fence_at, fence_blocks
from corpus.ingest.chunk_tables import cuts_outside_tables
from corpus.ingest.embed import embed_texts
from corpus.ingest.tokens import TokenIndex, tokenize

if TYPE_CHECKING:
    from corpus.ingest.parse import Heading

STRATEGIES = ("fixed", "sliding", "recursive", "markdown", "semantic", "semantic_percentile", "maxmin")

# Separators of the recursive chunker, coarsest first. Each cut falls at the end of a match, so the
# separator stays with the text before it and the next chunk starts with content.
_PARAGRAPH = re.compile(r"\n(?:[^\S\n]*\n)+")
_LINE = re.compile(r"\n")
_SENTENCE = re.compile(r"[.!?…][\"'”’)\]]*(?:[^\S\n]+|[^\S\n]*\n(?:[^\S\n]*\n)*)")
_CLAUSE = re.compile(r"[,;:][^\S\n]+")
_WORD = re.compile(r"\s+")
_LEVELS = (_PARAGRAPH, _LINE, _SENTENCE, _CLAUSE, _WORD)
_CLAUSE_LEVEL = _LEVELS.index(_CLAUSE)
# Sentence units of the semantic chunkers: paragraphs and sentences (not lines: most plain-text
# formats wrap paragraphs, so a line is rarely a unit of meaning).
_UNIT = re.compile(_PARAGRAPH.pattern + "|" + _SENTENCE.pattern)

# A section with fewer tokens than this share of `size` (typically a heading with nothing under it
# before its first subheading) joins the next section instead of being a chunk of its own.
TINY_SECTION_FRACTION = 0.125
# Semantic chunkers do not start a new chunk while the current one is shorter than this share of
# `size`, so a lone heading or a one-line sentence does not become a chunk of its own.
MIN_SEMANTIC_FRACTION = 0.125


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    # Where the chunk's heading path is read, when not at its start: a "markdown" chunk that opens with
    # a tiny section joined to the next is about that next section (its heading's offset).
    section: int | None = field(default=None, compare=False)

    @property
    def heading_at(self) -> int:
        return self.start if self.section is None else self.section


# A chunk's character bound, unless configured: this many characters per token of `size` (prose
# averages 4-5, tables and indented code up to ~10), and never less than MIN_MAX_CHARS.
MAX_CHARS_PER_TOKEN = 16
MIN_MAX_CHARS = 2048


class TooManyChunks(ValueError):
    """The document would make more chunks than allowed; str(exc) is a message for its uploader."""


@dataclass(frozen=True)
class ChunkingConfig:
    """strategy: a Collection.Chunker value; size/overlap in model tokens; threshold: the cosine
    similarity below which "semantic" breaks, the breakpoint percentile / 100 of
    "semantic_percentile" (0.9 = break at the 10% least similar neighbour pairs), and the cohesion
    a single-sentence chunk is given by "maxmin"; max_chars: the character bound of a chunk
    (0: size x MAX_CHARS_PER_TOKEN, at least MIN_MAX_CHARS)."""

    strategy: str
    size: int
    overlap: int = 0
    threshold: float = 0.5
    max_chars: int = 0

    @property
    def char_limit(self) -> int:
        return self.max_chars or max(self.size * MAX_CHARS_PER_TOKEN, MIN_MAX_CHARS)

    def __post_init__(self) -> None:
        if self.strategy not in STRATEGIES:
            raise ValueError(f"Unknown chunking strategy {self.strategy!r}; expected one of {', '.join(STRATEGIES)}.")
        if self.size < 1:
            raise ValueError("Chunk size must be at least 1 token.")
        if not 0 <= self.overlap < self.size:
            raise ValueError("Chunk overlap must be at least 0 and smaller than the chunk size.")
        if self.max_chars < 0:
            raise ValueError("The chunk character bound must be positive (or 0 for the default).")


Embed = Callable[[list[str]], np.ndarray]


def chunk_text(text: str, config: ChunkingConfig, *, headings: Sequence[Heading] = (),
               embed: Embed | None = None, max_chunks: int | None = None) -> list[Span]:
    """Split `text` per `config` (see the module docstring for the guarantees).

    headings: section starts for "markdown" (without them it behaves as "recursive").
    embed: texts -> one vector per text, for the semantic strategies; defaults to the
    configured embedding model (corpus.ingest.embed.embed_texts).
    max_chunks: raise TooManyChunks rather than return more chunks than this.
    """
    if not text:
        return []
    index = tokenize(text)
    size = config.size
    if max_chunks is not None and len(index) > max_chunks * size:
        # Each chunk holds at most `size` tokens (bar single long words), so this many cannot fit.
        raise _too_many(max_chunks)
    doc = _Doc(text, index)
    if not len(doc.index):
        spans = [Span(0, len(text))]
    elif config.strategy == "sliding":
        spans = _sliding(doc, size, config.overlap)
    else:
        if config.strategy == "fixed":
            cuts = doc.window_cuts(0, len(text), size)
        elif config.strategy == "recursive":
            cuts = _recursive_cuts(doc, 0, len(text), 0, size)
        elif config.strategy == "markdown":
            cuts = _markdown_cuts(doc, headings, size)
        else:
            cuts = _semantic_cuts(doc, config, embed)
        spans = doc.spans(cuts_outside_tables(text, cuts, doc.count, size))
        if doc.sections:
            spans = [replace(span, section=doc.sections[span.start])
                     if span.start in doc.sections and doc.sections[span.start] < span.end else span
                     for span in spans]
    spans = _bound_chars(doc, spans, config.char_limit)
    if max_chunks is not None and len(spans) > max_chunks:
        raise _too_many(max_chunks)
    return spans


def _too_many(max_chunks: int) -> TooManyChunks:
    return TooManyChunks(f"The document would make more than {max_chunks:,} chunks, the limit per document; "
                         "split it into smaller files.")


_WORD_AFTER_SPACE = re.compile(r"\s(?=\S)")
_SPACE = re.compile(r"\s")


def _bound_chars(doc: _Doc, spans: list[Span], limit: int) -> list[Span]:
    """Cut every span longer than `limit` characters into pieces of at most `limit`: each cut falls
    in the piece's last half, at the last word start after whitespace, else the last word start,
    else the last whitespace, else at the bound itself (inside a "word" that long)."""
    if all(span.end - span.start <= limit for span in spans):
        return spans
    word_starts = doc.index.word_starts
    bounded: list[Span] = []
    for span in spans:
        start = span.start
        while span.end - start > limit:
            low, high = start + limit // 2, start + limit
            window = doc.text[low:high + 1]
            cut = None
            for match in _WORD_AFTER_SPACE.finditer(window):
                cut = low + match.end()
            if cut is None:
                i = int(np.searchsorted(word_starts, high, side="right")) - 1
                if i >= 0 and word_starts[i] > low:
                    cut = int(word_starts[i])
            if cut is None:
                for match in _SPACE.finditer(window, 1):
                    cut = low + match.start()
            if cut is None or cut <= start:
                cut = high
            bounded.append(Span(start, cut, span.section if start == span.start else None))
            start = cut
        bounded.append(Span(start, span.end, span.section if start == span.start else None))
    return bounded


def heading_paths(headings: Sequence[Heading], offsets: Sequence[int]) -> list[list[str]]:
    """For each offset, the titles of the headings enclosing it, outermost first (a heading starting
    exactly at the offset encloses it). One sweep over headings and offsets in order: a document of
    thousands of headings and chunks costs no more than sorting them."""
    ordered = sorted(headings, key=lambda h: h.start)
    paths: list[list[str]] = [[] for _ in offsets]
    stack: list[Heading] = []
    next_heading = 0
    for i in sorted(range(len(offsets)), key=offsets.__getitem__):
        while next_heading < len(ordered) and ordered[next_heading].start <= offsets[i]:
            heading = ordered[next_heading]
            while stack and stack[-1].level >= heading.level:
                stack.pop()
            stack.append(heading)
            next_heading += 1
        paths[i] = [heading.title for heading in stack]
    return paths


class _Doc:
    """A text with its tokens, answering token counts between word-boundary cuts."""

    def __init__(self, text: str, index: TokenIndex) -> None:
        self.text = text
        self.index = index
        self.starts: list[int] = self.index.starts.tolist()
        n = len(self.index)
        self.word_first = self.index.is_word_first
        gap = np.ones(n, dtype=bool)
        gap[1:] = self.index.starts[1:] > self.index.ends[:-1]
        # Cutting before these tokens splits at whitespace: the nicest place for a forced cut.
        self.spaced_first = gap & self.word_first
        self.fences = fence_blocks(text) if "```" in text or "~~~" in text else []
        self.fence_starts = [fence.start for fence in self.fences]
        self.sections: dict[int, int] = {}  # chunk start -> the section it is about ("markdown")

    def count(self, start: int, end: int) -> int:
        return bisect_left(self.starts, end) - bisect_left(self.starts, start)

    def safe(self, cuts: list[int]) -> list[int]:
        """The cuts that fall between words (a few exotic space characters are inside words)."""
        if not cuts:
            return cuts
        values = np.asarray(cuts, dtype=np.int64)
        word_starts, word_ends = self.index.word_starts, self.index.word_ends
        i = np.searchsorted(word_starts, values, side="right") - 1
        inside = (i >= 0) & (word_starts[np.maximum(i, 0)] < values) & (values < word_ends[np.maximum(i, 0)])
        return values[~inside].tolist()

    def separator_cuts(self, pattern: re.Pattern[str], start: int, end: int, size: int | None = None) -> list[int]:
        """Ends of `pattern` matches strictly inside (start, end), at word boundaries; with `size`,
        none inside a fenced code block of at most `size` tokens."""
        cuts = self.safe([m.end() for m in pattern.finditer(self.text, start, end) if start < m.end() < end])
        if size is not None and self.fences:
            cuts = [cut for cut in cuts if not self._in_small_fence(cut, size)]
        return cuts

    def whole_fence(self, start: int, end: int, size: int) -> bool:
        """Whether [start, end) is one fenced code block (give or take the white space around it)
        of at most `size` tokens."""
        fence = fence_at(self.fences, start + 1, self.fence_starts) if self.fences else None
        return (fence is not None and not self.text[start:fence.start].strip()
                and not self.text[fence.end:end].strip() and self.count(fence.start, fence.end) <= size)

    def _in_small_fence(self, offset: int, size: int) -> bool:
        fence = fence_at(self.fences, offset, self.fence_starts)
        return fence is not None and self.count(fence.start, fence.end) <= size

    def cut_token(self, first: int, limit: int, window: int) -> int | None:
        """The token to start the next chunk at, for a chunk starting at token `first` that may not
        reach token `limit`: the last whitespace-preceded word start within `window` tokens before
        `limit`, else the last word start after `first`, else None (one word runs past `limit`)."""
        low = max(first + 1, limit - window)
        found = np.flatnonzero(self.spaced_first[low:limit + 1])
        if found.size:
            return low + int(found[-1])
        found = np.flatnonzero(self.word_first[first + 1:limit + 1])
        if found.size:
            return first + 1 + int(found[-1])
        return None

    def next_word_token(self, token: int) -> int:
        """The first word-starting token after `token` (len(index) if none)."""
        found = np.flatnonzero(self.word_first[token + 1:])
        return token + 1 + int(found[0]) if found.size else len(self.index)

    def window_cuts(self, start: int, end: int, size: int) -> list[int]:
        """Cuts splitting [start, end) into runs of at most `size` tokens, snapped back to whitespace."""
        cuts: list[int] = []
        position = start
        end_token = bisect_left(self.starts, end)
        while self.count(position, end) > size:
            first = bisect_left(self.starts, position)
            token = self.cut_token(first, first + size, max(1, size // 4))
            if token is None:
                token = self.next_word_token(first + size)
                if token >= end_token:
                    break
            position = self.starts[token]
            cuts.append(position)
        return cuts

    def spans(self, cuts: list[int]) -> list[Span]:
        """Spans between sorted cuts; a piece without tokens joins the piece before it (or after it,
        at the start), so no chunk is whitespace-only."""
        bounds = [0]
        for cut in cuts:
            if self.count(bounds[-1], cut) > 0:
                bounds.append(cut)
        if len(bounds) > 1 and self.count(bounds[-1], len(self.text)) == 0:
            bounds.pop()
        bounds.append(len(self.text))
        return [Span(a, b) for a, b in pairwise(bounds)]


def _sliding(doc: _Doc, size: int, overlap: int) -> list[Span]:
    """Windows of at most `size` tokens; each next window starts at a word at least `overlap`
    tokens before the previous one ends (the same as "fixed" when overlap is 0)."""
    n = len(doc.index)
    spans: list[Span] = []
    first, start = 0, 0
    while True:
        if n - first <= size:
            spans.append(Span(start, len(doc.text)))
            return spans
        token = doc.cut_token(first, first + size, max(1, size // 4))
        if token is None:
            token = doc.next_word_token(first + size)
            if token >= n:
                spans.append(Span(start, len(doc.text)))
                return spans
        spans.append(Span(start, doc.starts[token]))
        following = token
        if overlap:
            # Clamped: a negative bound would slice from the end of the document and skip text.
            found = np.flatnonzero(doc.word_first[first + 1:max(first + 1, token - overlap + 1)])
            following = first + 1 + int(found[-1]) if found.size else doc.next_word_token(first)
        first, start = following, doc.starts[following]


def _recursive_cuts(doc: _Doc, start: int, end: int, level: int, size: int, keep: int | None = None) -> list[int]:
    """Cuts for [start, end): split at the coarsest separator present, recurse into pieces still
    over `size` with the finer ones (token windows last), then merge neighbours up to `size`.
    A fenced code block of at most `keep` tokens (default `size`) is never cut: one over `size`
    (a smaller bound than `keep`) stands as a piece of its own."""
    keep = size if keep is None else keep
    if doc.count(start, end) <= size:
        return []
    if keep > size and doc.whole_fence(start, end, keep):
        return []
    if level == len(_LEVELS):
        return doc.window_cuts(start, end, size)
    separators = doc.separator_cuts(_LEVELS[level], start, end, keep)
    if not separators:
        return _recursive_cuts(doc, start, end, level + 1, size, keep)
    atoms = [start]
    for a, b in pairwise([start, *separators, end]):
        if doc.count(a, b) > size:
            atoms.extend(_recursive_cuts(doc, a, b, level + 1, size, keep))
        atoms.append(b)
    return _merge(doc, atoms, size)


def _merge(doc: _Doc, bounds: list[int], size: int) -> list[int]:
    """Interior cuts left after greedily joining consecutive pieces while they fit in `size`; a
    tiny last chunk is avoided by moving the cut before it back (balancing the last two)."""
    cuts: list[int] = []
    chunk_start = previous = bounds[0]
    for bound in bounds[1:]:
        if previous > chunk_start and doc.count(chunk_start, bound) > size:
            cuts.append(previous)
            chunk_start = previous
        previous = bound
    end = bounds[-1]
    if cuts and doc.count(cuts[-1], end) < size * TINY_SECTION_FRACTION:
        before = cuts[-2] if len(cuts) > 1 else bounds[0]
        best, best_balance = cuts[-1], doc.count(cuts[-1], end)
        for bound in bounds[bisect_left(bounds, before) + 1: bisect_left(bounds, cuts[-1])]:
            head, tail = doc.count(before, bound), doc.count(bound, end)
            if tail <= size and head > 0 and min(head, tail) > best_balance:
                best, best_balance = bound, min(head, tail)
        cuts[-1] = best
    return cuts


def _markdown_cuts(doc: _Doc, headings: Sequence[Heading], size: int) -> list[int]:
    """Cut at every heading and split long sections recursively. A tiny section (all of it, never
    the tail of a long one) joins the start of the next instead of standing alone."""
    length = len(doc.text)
    if not any(0 <= h.start < length for h in headings):
        return _recursive_cuts(doc, 0, length, 0, size)
    starts = doc.safe(sorted({h.start for h in headings if 0 < h.start < length}))
    tiny = max(1, int(size * TINY_SECTION_FRACTION))
    cuts: list[int] = []
    open_start, open_whole = 0, True
    for section_start, section_end in pairwise([0, *starts, length]):
        chunk_start = section_start
        if section_start > 0:
            if open_whole and doc.count(open_start, section_start) < tiny:
                chunk_start = open_start
                doc.sections[chunk_start] = section_start
            else:
                cuts.append(section_start)
        inner = _section_cuts(doc, chunk_start, section_start, section_end, size)
        cuts.extend(inner)
        open_start, open_whole = (inner[-1], False) if inner else (chunk_start, True)
    return cuts


def _section_cuts(doc: _Doc, start: int, heading_start: int, end: int, size: int) -> list[int]:
    """Cuts inside the section [start, end) whose heading block (the heading and anything
    before it up to the first blank line) must stay with the text that follows it."""
    match = _PARAGRAPH.search(doc.text, heading_start, end)
    head_end = match.end() if match else end
    head_tokens = doc.count(start, head_end)
    if head_end >= end or 2 * head_tokens > size or doc.safe([head_end]) != [head_end]:
        return _recursive_cuts(doc, start, end, 0, size)
    # Leave room for the heading in the first chunk, then split the rest normally. A code block that
    # fits in a chunk but not beside the heading starts the next chunk, unless it comes first under
    # the heading: then it is cut (chunk_fences.refenced shows both pieces as code).
    body = _recursive_cuts(doc, head_end, end, 0, size - head_tokens, keep=size)
    if doc.count(start, body[0] if body else end) > size:
        body = _recursive_cuts(doc, head_end, end, 0, size - head_tokens)
    if not body:
        return []
    return [body[0], *_recursive_cuts(doc, body[0], end, 0, size)]


def _semantic_cuts(doc: _Doc, config: ChunkingConfig, embed: Embed | None) -> list[int]:
    """Group sentence units by embedding similarity, never past `size` tokens."""
    length = len(doc.text)
    units = [0, *_unit_cuts(doc, config.size), length]
    if len(units) <= 2:
        return []
    if embed is None:
        embed = embed_texts
    vectors = np.asarray(embed([doc.text[a:b].strip() for a, b in pairwise(units)]), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    if config.strategy == "maxmin":
        return _maxmin(doc, units, vectors, config)
    similarity = np.einsum("ij,ij->i", vectors[:-1], vectors[1:])
    if config.strategy == "semantic":
        breaks = similarity < config.threshold
    else:
        distance = 1.0 - similarity
        breaks = distance > np.percentile(distance, 100.0 * config.threshold)
    minimum = int(config.size * MIN_SEMANTIC_FRACTION)
    cuts: list[int] = []
    chunk_start = 0
    for i in range(1, len(units) - 1):
        boundary, following = units[i], units[i + 1]
        overflow = doc.count(chunk_start, following) > config.size
        if overflow or (breaks[i - 1] and doc.count(chunk_start, boundary) >= minimum):
            cuts.append(boundary)
            chunk_start = boundary
    return cuts


def _maxmin(doc: _Doc, units: list[int], vectors: np.ndarray, config: ChunkingConfig) -> list[int]:
    """Max-min semantic chunking: a sentence joins the current chunk when its highest similarity
    to a member exceeds the chunk's lowest pairwise similarity (its cohesion; `threshold` for a
    one-sentence chunk) and the chunk stays within `size`; a chunk under the minimum size takes
    the next sentence whenever it fits."""
    minimum = int(config.size * MIN_SEMANTIC_FRACTION)
    cuts: list[int] = []
    first = 0
    cohesion = config.threshold
    for i in range(1, len(units) - 1):
        similarities = vectors[first:i] @ vectors[i]
        fits = doc.count(units[first], units[i + 1]) <= config.size
        small = doc.count(units[first], units[i]) < minimum
        if fits and (small or float(similarities.max()) > cohesion):
            lowest = float(similarities.min())
            cohesion = lowest if i - first == 1 else min(cohesion, lowest)
        else:
            cuts.append(units[i])
            first, cohesion = i, config.threshold
    return cuts


def _unit_cuts(doc: _Doc, size: int) -> list[int]:
    """Cuts between sentence units (paragraphs and sentences), units over `size` split further."""
    length = len(doc.text)
    separators = doc.separator_cuts(_UNIT, 0, length, size)
    cuts: list[int] = []
    for a, b in pairwise([0, *separators, length]):
        if doc.count(a, b) > size:
            cuts.extend(_recursive_cuts(doc, a, b, _CLAUSE_LEVEL, size))
        if b < length:
            cuts.append(b)
    # Whitespace-only units (blank runs the patterns leave) join their neighbour.
    return [span.start for span in doc.spans(cuts)[1:]]
