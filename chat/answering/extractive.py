"""The answer without an LLM: the few sentences of the sources that answer the question, each
with its [n] citation, in the order of its source (the source of the best one first).

A sentence is scored by how well it answers the query, not only by how similar it is:

- meaning: the embedding similarity of the query and the sentence read under its heading
  ("Path converters: The following path converters are available by default"), or, when a
  cross-encoder is configured (RERANKER_MODEL), its probability for the two read together;
- the query's words it holds, each weighted by how rare it is among the candidate sentences
  (so "many-to-many" and "save_m2m" count for more than "form", which every sentence shares), its
  heading's words counting half;
- retrieval's own judgement: the calibrated relevance of the retrieved chunk the sentence sits
  in (a sentence of the chunk that best matched the whole question is more likely the answer
  than a similar sentence of a chunk that was only brought along for context).

The answer is the best sentence, then more of the same section (the same source under the same
heading: an answer is usually told in one place) until the length budget is used or the
sentences left are much weaker, and a sentence from elsewhere only when it is nearly as good as
the best: fewer, better sentences; a short answer is fine. Each next sentence is the one that
scores best once its likeness to the sentences already taken is counted against it (maximal
marginal relevance): the same fact told twice, in two sources or two sections, is quoted once,
and the room goes to what the answer does not hold yet. A sentence that ends in a colon
brings the list items or table rows it introduces; a question in the source ("Why do we use
...?") hands its score to the sentence after it, which answers it. Code, tables without an
introduction and headings are never quoted.
"""

from __future__ import annotations

import logging
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from chat.answering import reading
from chat.answering.blocks import CODE, ITEM, PARAGRAPH, ROW, Block, display_heading, display_text, parse_blocks
from chat.answering.citations import quoted
from chat.answering.sentence_vectors import text_vectors
from chat.answering.text import ASKING_WORDS, content_terms, stem
from chat.answering.text import split_sentences as prose_sentences
from reader.candidates import row_text

logger = logging.getLogger(__name__)

SIMILARITY_WEIGHT = 0.5
OVERLAP_WEIGHT = 0.5
RETRIEVAL_WEIGHT = 0.3  # times the relevance (0-1) of the retrieved chunk holding the sentence
HEADING_WEIGHT = 0.5  # a heading's words count this much toward a sentence's share of the query
# "Why ...?" is answered by a reason: sentences that give one gain this much.
REASON_WEIGHT = 0.2
# A candidate's score loses this much times its cosine likeness to the closest sentence taken.
REDUNDANCY_WEIGHT = 0.2
# More of the best sentence's section joins while it scores at least this share of the best;
# a sentence from elsewhere must score ELSEWHERE_RATIO of it.
SECTION_RATIO = 0.6
ELSEWHERE_RATIO = 0.95
MAX_CHARS = 550  # of quoted text, list items included
MAX_ITEMS = 6  # list items or table rows kept under a sentence that introduces them
MAX_ITEM_CHARS = 160
MIN_WORDS = 4
MAX_SENTENCE_CHARS = 400

_WHY = re.compile(r"\bwhy\b", re.IGNORECASE)
_REASON = re.compile(r"\b(because|reasons?|since|so that|in order to|otherwise|that way|this means|would|unable|"
                     r"essential|avoids?|prevents?|ensures?|instead)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Hit:
    """A retrieved chunk: where it is in its document and how relevant retrieval found it."""

    document: int
    start: int
    end: int
    relevance: float


@dataclass(frozen=True)
class Sentence:
    n: int  # citation number of the source it comes from
    rank: int  # 0 for the first source, 1 for the next...
    position: int  # order within that source
    text: str  # as displayed (Markdown)
    heading: str
    items: tuple[str, ...] = ()  # list items or table rows it introduces (it ends with a colon)
    relevance: float = 0.0  # of the retrieved chunk holding it (0 when retrieval did not return it)
    asks: bool = False  # a question of the source's own ("Why do we...?")
    document: int | None = None  # id of the document the source comes from (None: not known)
    row: bool = False  # a table row, its text each cell after its column's header

    @property
    def section(self) -> tuple[int, str]:
        return self.n, self.heading


def scored_text(sentence: Sentence) -> str:
    """What a sentence is embedded as: read under its heading ("Path converters: The following ...")."""
    return f"{sentence.heading}: {sentence.text}" if sentence.heading else sentence.text


def source_texts(text: str) -> list[str]:
    """scored_text() of each sentence of one source's text, in order: what an answer over a
    source with this text embeds (chat.answering.sentence_fill fills them ahead)."""
    return [scored_text(s) for s in _sentences(parse_blocks(text), n=0, rank=0)]


def split_sentences(text: str) -> list[str]:
    """Sentences of prose (paragraphs and list items), in order; code, tables and headings skipped."""
    return [s.text for s in _sentences(parse_blocks(text), n=0, rank=0)]


def _sentences(blocks: Sequence[Block], *, n: int, rank: int,
               relevance_at: Callable[[int], float] = lambda offset: 0.0,
               document: int | None = None, rows: bool = False) -> list[Sentence]:
    """The quotable sentences of `blocks`; with `rows`, each table row too, read under the
    table's header row (the first row of a table; a repeat of it is skipped)."""
    sentences: list[Sentence] = []
    header: list[str] = []
    for index, block in enumerate(blocks):
        if block.kind == ROW and rows:
            cells = [display_text(c) for c in block.text.split(" — ")]
            if index == 0 or blocks[index - 1].kind != ROW:
                header = cells  # a table's first row names its columns
            elif cells != header and any(c.strip() for c in cells):
                sentences.append(Sentence(n=n, rank=rank, position=len(sentences), text=row_text(header, cells),
                                          heading=display_heading(block.heading), relevance=relevance_at(block.start),
                                          document=document, row=True))
            continue
        if block.kind not in (PARAGRAPH, ITEM):
            continue
        parts = prose_sentences(display_text(block.text))
        relevance = relevance_at(block.start)
        for i, part in enumerate(parts):
            if len(part.split()) < MIN_WORDS:
                continue
            items: tuple[str, ...] = ()
            if i == len(parts) - 1 and part.endswith(":"):
                items = _introduced(blocks, index)
                if not items and _followed_by_code(blocks, index):
                    part = part[:-1].rstrip() + " …"  # what it introduces is code: see the source
            if len(part) > MAX_SENTENCE_CHARS:
                part = part[:MAX_SENTENCE_CHARS].rsplit(" ", 1)[0] + " …"
            sentences.append(Sentence(n=n, rank=rank, position=len(sentences), text=part,
                                      heading=display_heading(block.heading), items=items, relevance=relevance,
                                      asks=part.endswith("?"), document=document))
    return sentences


def _introduced(blocks: Sequence[Block], index: int) -> tuple[str, ...]:
    """The list items or table rows right after block `index`, shortened."""
    following: list[str] = []
    for block in blocks[index + 1:]:
        if block.kind not in (ITEM, ROW) or len(following) == MAX_ITEMS:
            break
        text = block.text
        if block.kind == ROW:
            text = " — ".join(cell for cell in text.split(" — ") if cell.strip())
        item = display_text(text)
        if len(item) > MAX_ITEM_CHARS:
            item = item[:MAX_ITEM_CHARS].rsplit(" ", 1)[0] + " …"
        following.append(item)
    return tuple(following)


def _followed_by_code(blocks: Sequence[Block], index: int) -> bool:
    return index + 1 < len(blocks) and blocks[index + 1].kind == CODE


# (query, texts) -> (the query's vector, one row per text), L2-normalised.
Embedder = Callable[[str, list[str]], tuple[np.ndarray, np.ndarray]]


def _model_vectors(query: str, sentences: Sequence[Sentence], *,
                   query_vector: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The model's vectors of the query (`query_vector` when known already) and of the sentences
    (scored_text), read from the shared store when known there (chat.answering.sentence_vectors)."""
    return text_vectors(query, [scored_text(s) for s in sentences], [s.document for s in sentences],
                        query_vector=query_vector)


def _idf(count: int, terms: Sequence[set[str]]) -> Callable[[str], float]:
    frequency: dict[str, int] = {}
    for sentence_terms in terms:
        for term in sentence_terms:
            frequency[term] = frequency.get(term, 0) + 1
    return lambda term: math.log(1 + (count + 1) / (frequency.get(term, 0) + 0.5))


@dataclass(frozen=True)
class Scored:
    scores: list[float]  # one per sentence, higher answers the query better
    vectors: np.ndarray  # one unit row per sentence (zeros when the embedding failed)


def _cross_encoded(query: str, texts: list[str], similarities: np.ndarray) -> np.ndarray:
    """With a cross-encoder configured (RERANKER_MODEL), its probability that each sentence
    answers the query (query and sentence read together) replaces the embedding similarity as
    the meaning term; without one, or should it fail, the similarities stay."""
    from chat.retrieval import rerank  # the reranker's one model, loaded only when configured

    if not rerank.enabled() or not texts:
        return similarities
    try:
        return np.asarray(rerank.cross_encoder_scorer(query, texts), dtype=float)
    except Exception:  # a broken reranker must not take answers down: the embedding still ranks
        logger.warning("sentence cross-encoding failed; ranking by embedding similarity", exc_info=True)
        return similarities


def score_sentences(query: str, sentences: Sequence[Sentence], embed: Embedder | None = None, *,
                    query_vector: np.ndarray | None = None) -> Scored:
    """Score each sentence for how well it answers `query` (its vector `query_vector` when the
    caller has it); keep the sentence vectors (choose() weighs redundancy with them)."""
    texts = [scored_text(s) for s in sentences]
    try:
        query_vector, vectors = (embed(query, texts) if embed
                                 else _model_vectors(query, sentences, query_vector=query_vector))
        vectors = np.asarray(vectors, dtype=float).reshape(len(texts), -1)
        sims = vectors @ np.asarray(query_vector, dtype=float)
    except Exception:  # the embedding model is optional here: words alone still rank sentences
        logger.warning("sentence embedding failed; ranking by words only", exc_info=True)
        vectors, sims = np.zeros((len(texts), 1)), np.zeros(len(texts))
    sims = _cross_encoded(query, texts, sims)
    own = [content_terms(s.text) for s in sentences]
    headings = [content_terms(s.heading) for s in sentences]
    idf = _idf(len(sentences), own)
    query_terms = content_terms(query)
    total = sum(idf(t) for t in query_terms)
    asks_why = bool(_WHY.search(query))
    scores = []
    for sentence, sim, terms, heading_terms in zip(sentences, sims, own, headings, strict=True):
        overlap = 0.0
        if total:
            overlap = sum(idf(t) * (1.0 if t in terms else HEADING_WEIGHT if t in heading_terms else 0.0)
                          for t in query_terms) / total
        score = (SIMILARITY_WEIGHT * max(0.0, float(sim)) + OVERLAP_WEIGHT * overlap
                 + RETRIEVAL_WEIGHT * sentence.relevance)
        if asks_why and _REASON.search(sentence.text):
            score += REASON_WEIGHT
        scores.append(score)
    # A question of the source is answered by the sentence after it: that one is the answer.
    for i, sentence in enumerate(sentences[:-1]):
        following = sentences[i + 1]
        if sentence.asks and following.n == sentence.n and following.position == sentence.position + 1:
            scores[i + 1] = max(scores[i + 1], scores[i])
            scores[i] = 0.0
    return Scored(scores, vectors)


def choose(sentences: Sequence[Sentence], scored: Scored, *, max_chars: int = MAX_CHARS) -> list[Sentence]:
    """chosen() given source by source (the best sentence's first), each in its source's order."""
    return _in_source_order(chosen(sentences, scored, max_chars=max_chars))


def _in_source_order(picked: list[Sentence]) -> list[Sentence]:
    """The best sentence (picked[0]) first: the one that answers; then the others as the sources
    tell it, the best one's source first, then the others as retrieval ranked them, each source's
    sentences in its own order."""
    if not picked:
        return []
    best = picked[0]
    return [best] + sorted(picked[1:], key=lambda s: (s.n != best.n, s.rank, s.position))


def chosen(sentences: Sequence[Sentence], scored: Scored, *, max_chars: int = MAX_CHARS) -> list[Sentence]:
    """The best sentence, then more of its section, then the few nearly as good from elsewhere,
    each next one the best once its likeness to those taken is counted against it, within
    `max_chars`: in the order they were chosen, the best first."""
    if not sentences:
        return []
    scores, vectors = scored.scores, scored.vectors
    order = sorted(range(len(sentences)), key=lambda i: (-scores[i], sentences[i].rank, sentences[i].position))
    best = sentences[order[0]]
    best_score = scores[order[0]]
    picked = [order[0]]
    used = _length(best)
    seen = {_key(best.text), *(_key(item) for item in best.items)}
    def strong_enough(i: int) -> bool:
        ratio = SECTION_RATIO if sentences[i].section == best.section else ELSEWHERE_RATIO
        return scores[i] >= ratio * best_score

    # Eligible: strong enough for where it sits, not a repeat; taken while there is room.
    eligible = [i for i in order[1:] if strong_enough(i) and _key(sentences[i].text) not in seen]
    likeness = vectors[eligible] @ vectors[order[0]] if eligible else np.zeros(0)
    while eligible:
        fitting = [k for k, i in enumerate(eligible) if used + _length(sentences[i]) <= max_chars]
        if not fitting:
            break
        k = max(fitting, key=lambda k: scores[eligible[k]] - REDUNDANCY_WEIGHT * likeness[k])
        i = eligible.pop(k)
        sentence = sentences[i]
        likeness = np.delete(likeness, k)
        if _key(sentence.text) in seen:
            continue
        seen.update([_key(sentence.text), *(_key(item) for item in sentence.items)])
        picked.append(i)
        used += _length(sentence)
        if eligible:
            likeness = np.maximum(likeness, vectors[eligible] @ vectors[i])
    return [sentences[i] for i in picked]


def _length(sentence: Sentence) -> int:
    return len(sentence.text) + sum(len(item) for item in sentence.items)


def _key(text: str) -> str:
    return " ".join(text.lower().split())


def candidates(citations: Sequence[dict], hits: Sequence[Hit] = (), *, rows: bool = False) -> list[Sentence]:
    """The sentences of all the sources (with `rows`, their table rows too), in source order,
    each with the relevance of the retrieved chunk (among `hits`) that holds it."""
    found: list[Sentence] = []
    for rank, citation in enumerate(citations):
        document = (citation.get("document") or {}).get("id")
        base = citation.get("char_start") or 0
        own = [h for h in hits if h.document == document]

        def relevance_at(offset: int, own=own, base=base) -> float:
            return max((h.relevance for h in own if h.start <= base + offset < h.end), default=0.0)

        found += _sentences(parse_blocks(citation["text"]), n=citation["n"], rank=rank, relevance_at=relevance_at,
                            document=document, rows=rows)
    return found


def question_coverage(query: str, citations: Sequence[dict], sentences: Sequence[Sentence]) -> float:
    """The share of the question's words the sources hold, each word weighted by how rare it is
    among the sources' sentences (0-1). Sources that hold little of what the question names
    ("Can the email framework send SMS?" over pages that never say SMS) are about its subject at
    best; they do not answer it."""
    asked = content_terms(query) - {stem(word) for word in ASKING_WORDS}
    if not asked:
        return 1.0
    held = content_terms(" ".join(c["text"] for c in citations))
    own = [content_terms(f"{s.text} {s.heading} {' '.join(s.items)}") for s in sentences]
    idf = _idf(len(own), own)
    total = sum(idf(t) for t in asked)
    return sum(idf(t) for t in asked if t in held) / total if total else 1.0


@dataclass(frozen=True)
class Quotes:
    """What an extractive answer quotes, and how much of the question the sources hold."""

    sentences: tuple[Sentence, ...]  # in the order the answer gives them
    coverage: float  # question_coverage() of the sources
    # (n, text): the best sentence quoted from source n, for each source quoted; its page is the
    # citation's page and the passage view opens at it (chat.answering.support, "lead").
    leads: tuple[tuple[int, str], ...] = ()
    # How likely the best quote answers the question (the reader's probability; None without the
    # reader). `read`: the reader chose the quotes and decides whether the sources answer at all
    # (`answers`); otherwise the heuristic chose them and the reader only rated the best one.
    confidence: float | None = None
    answers: bool = True
    read: bool = False

    @property
    def sure(self) -> bool:
        return self.confidence is None or self.confidence >= reading.SURE

    def renumbered(self, numbers: dict[int, int]) -> Quotes:
        """The same quotes citing the sources by their new numbers ({old n: new n})."""
        return replace(self, sentences=tuple(replace(s, n=numbers.get(s.n, s.n)) for s in self.sentences),
                       leads=tuple((numbers.get(n, n), text) for n, text in self.leads))


def select_quotes(query: str, citations: Sequence[dict], *, hits: Sequence[Hit] = (),
                  embed: Embedder | None = None, max_chars: int = MAX_CHARS, searched: str | None = None,
                  query_vector: np.ndarray | None = None) -> Quotes:
    """The sentences of the sources that answer `query` best (choose()), and the coverage of what
    was `searched` (the query in the conversation's context; `query` when not given).
    `query_vector`: `query`'s vector with the configured model, when the caller has it.

    With the reader (chat.answering.reading.current()), it picks among the heuristic's best
    sentences and table rows, the most likely answer first, and says whether any answers."""
    scorer = reading.current()
    found = candidates(citations, hits, rows=True)
    coverage = question_coverage(searched or query, citations, found)
    if not found:
        return Quotes((), coverage, confidence=0.0 if scorer == reading.READER else None,
                      answers=scorer != reading.READER, read=scorer == reading.READER)
    scored = score_sentences(query, found, embed, query_vector=query_vector)
    ranked = sorted(range(len(found)), key=lambda i: -scored.scores[i])
    best = ranked[0]
    row_near_top = any(found[i].row for i in ranked[:reading.ROW_NEAR_TOP])
    if scorer == reading.READER or (scorer == reading.AUTO and row_near_top):
        try:
            verdict = reading.read(query, found, scored.scores, max_chars=max_chars,
                                   row_scores=_row_scores(query, searched, found, scored, embed))
        except Exception:  # a broken reader must not take answers down: the heuristic still chooses
            logger.warning("the reader failed; choosing sentences by the heuristic", exc_info=True)
            verdict = None
        # auto: the reader decides when the heuristic's best is a row, or when it finds a row among
        # the heuristic's best that answers better than the heuristic's prose (a spreadsheet beside
        # a guide); prose against prose stays the heuristic's.
        if verdict is not None and (scorer == reading.READER or found[best].row
                                    or (verdict.chosen and found[verdict.chosen[0][0]].row)):
            leads: dict[int, str] = {}
            for i, _ in verdict.chosen:
                leads.setdefault(found[i].n, found[i].text)
            return Quotes(tuple(reading.quoted_sentences(found, verdict)), coverage, tuple(leads.items()),
                          confidence=verdict.confidence, answers=verdict.answers, read=True)
    picked = chosen(found, scored, max_chars=max_chars)
    leads = {}
    for sentence in picked:
        leads.setdefault(sentence.n, sentence.text)
    return Quotes(tuple(reading.with_antecedents(found, _in_source_order(picked))), coverage, tuple(leads.items()),
                  confidence=_rated(query, found, picked, scorer))


def _row_scores(query: str, searched: str | None, found: Sequence[Sentence], scored: Scored,
                embed: Embedder | None) -> list[float]:
    """The heuristic's scores that put a table's rows in order: for a follow-up searched in its
    context ("And how many desks does it have?" after a question on the Leeds office), those of the
    question as asked plus those of the question in context, so the row the conversation is about
    ranks first unless the question names another ("And Bristol?")."""
    if not searched or searched == query:
        return list(scored.scores)
    context = score_sentences(searched, found, embed).scores
    return [a + b for a, b in zip(scored.scores, context, strict=True)]


def _rated(query: str, found: Sequence[Sentence], picked: Sequence[Sentence], scorer: str) -> float | None:
    """With the reader at hand (AUTO), how sure the heuristic's prose answer is: the reader's
    probability for its best sentence (picked[0]), which the answer quotes first. On the held-out
    sets the answers it rates SURE or more hold the evidence far more often than the rest
    (docs/evaluation.md, "How sure a prose answer is")."""
    if scorer != reading.AUTO or not picked:
        return None
    best = next((i for i, s in enumerate(found) if s is picked[0]), None)
    if best is None:
        return None
    try:
        return reading.rate(query, found, best)
    except Exception:  # a broken reader must not take answers down: the answer goes without a confidence
        logger.warning("the reader failed to rate the answer", exc_info=True)
        return None


# Under an answer whose best quote the reader found only fairly likely to answer the question.
UNSURE = "These passages may not answer your question."


def render_quotes(quotes: Quotes, citations: Sequence[dict]) -> str:
    """Markdown: the chosen sentences as a list, each ending in its "[n]"; a sentence that
    introduces a list keeps its first items as a nested list. The answer is only the quotes: that
    it is extractive is the message's `mode` (shown as a badge), never part of the text."""
    if not quotes.sentences:
        listed = "".join(f"[{c['n']}]" for c in citations)
        return f"The passages found hold code or tables rather than sentences to quote; open them: {listed}."
    lines = []
    for sentence in quotes.sentences:
        lines.append(f"- {quoted(sentence.text)} [{sentence.n}]")
        lines += [f"    - {quoted(item)}" for item in sentence.items]
    if not quotes.sure:
        lines += ["", f"*{UNSURE}*"]
    return "\n".join(lines)


def extractive_answer(query: str, citations: Sequence[dict], *, hits: Sequence[Hit] = (),
                      embed: Embedder | None = None, max_chars: int = MAX_CHARS) -> str:
    """The extractive answer's Markdown (render_quotes of select_quotes)."""
    return render_quotes(select_quotes(query, citations, hits=hits, embed=embed, max_chars=max_chars), citations)
