"""The extractive answer read by the reader (reader/, a cross-encoder of our own): which of the
candidate sentences and table rows answer the question, in what order, whether any does, and how
sure the answer is.

The heuristic scorer (chat.answering.extractive.score_sentences: meaning, the question's rarer
words, retrieval's relevance) shortlists SHORTLIST candidates; the reader reads each with the
question and gives the probability that it answers it. The best goes first; others join while
they are nearly as likely (KEEP_RATIO of the best, at least KEEP_MIN). When the reader finds a
table row most likely, the rows go in the heuristic's order (the reader rates the rows of one table
nearly alike): the heuristic's best row is the best. When even the best is below ANSWERS, the
sources do not answer the question: "not found". Below SURE, the answer says that the passages may
not answer it.

A sentence that points back ("This is the default.") is read, and quoted, after the sentence it
points to (reader.candidates).

Which scorer answers is `current()`: AUTO when the reader's model is in the repository (the
heuristic chooses among prose sentences, the reader decides when the best candidate is a table
row, or when a row among the heuristic's best ROW_NEAR_TOP is the reader's first choice: on prose
the reader, trained on questions made by rules, does not beat the heuristic yet;
docs/evaluation.md), unless a caller chose otherwise with `using()` (the evaluation runs them side
by side). The heuristic's answer quotes its best sentence first too, and a sentence that points
back with what it points to; under AUTO the reader rates that best sentence (rate()), which is how
sure the prose answer says it is (the reader's probability separates right from wrong prose answers
on the held-out sets, though it does not choose the sentences better than the heuristic).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace

from reader import runtime
from reader.candidates import candidate_text, points_back

logger = logging.getLogger(__name__)

# auto: the heuristic for prose, the reader when the best candidate is a table row (where the reader
# beats the heuristic on the held-out sets: docs/evaluation.md, "The reader").
AUTO, READER, HEURISTIC = "auto", "reader", "heuristic"
SCORERS = (AUTO, READER, HEURISTIC)

# Candidates the reader reads, the heuristic's best (its share of an answer's CPU: see
# docs/evaluation.md, "The reader"). The answer's sentence is among the heuristic's best 12 for
# nearly every question it ranks anywhere.
SHORTLIST = 12
# Probability thresholds, chosen on the reader's validation split (packages and table schemas it
# never trained on) and checked on the held-out answer sets (docs/evaluation.md).
ANSWERS = 0.35  # below this for every candidate: the sources do not answer the question
SURE = 0.8  # the best candidate at least this likely: the answer is stated without a caveat
KEEP_MIN = 0.5  # another candidate joins the answer when at least this likely ...
KEEP_RATIO = 0.75  # ... and at least this share of the best
MAX_QUOTES = 4
# A question whose best retrieved chunk is less relevant than pipeline.ANSWER_MIN_RELEVANCE is still
# read when it is at least this relevant and the best candidate is a table row (chat.answering.pipeline):
# the held-out tables' row questions retrieve at 0.24-0.56, off-topic questions below 0.35.
ROW_MIN_RELEVANCE = 0.2
# auto reads when a table row is among the heuristic's best ROW_NEAR_TOP candidates: in a collection
# of prose and tables the heuristic may rank a sentence on the row's subject above the row that
# answers ("Where is the rotavator kept?" beside a guide that mentions the rotavator).
ROW_NEAR_TOP = 3
# When the reader finds a row most likely, the heuristic orders the rows (_rows_by_heuristic): another
# row joins the first only while the heuristic scores it this share of the first.
ROW_KEEP_RATIO = 0.9

_chosen: ContextVar[str | None] = ContextVar("answer_scorer", default=None)


def current() -> str:
    chosen = _chosen.get()
    if chosen:
        return chosen
    return AUTO if runtime.available() else HEURISTIC


@contextlib.contextmanager
def using(scorer: str) -> Iterator[None]:
    """Answer with `scorer` (READER or HEURISTIC) inside the block."""
    if scorer not in SCORERS:
        raise ValueError(f"unknown scorer {scorer!r}; one of {', '.join(SCORERS)}")
    token = _chosen.set(scorer)
    try:
        yield
    finally:
        _chosen.reset(token)


@dataclass(frozen=True)
class Reading:
    """The reader's verdict on a shortlist: the chosen candidates (indexes into the candidates,
    best first, each with the index of the sentence it points back to or None) and the best
    probability."""

    chosen: tuple[tuple[int, int | None], ...]
    confidence: float

    @property
    def answers(self) -> bool:
        return self.confidence >= ANSWERS

    @property
    def sure(self) -> bool:
        return self.confidence >= SURE


def shortlist(sentences: Sequence, scores: Sequence[float]) -> tuple[list[int], list[int | None], list[str]]:
    """What the reader reads: the SHORTLIST best of `sentences` by the heuristic `scores` (their
    indexes, best first), the index of the sentence each points back to (or None), and the texts
    the reader is given (reader.candidates.candidate_text)."""
    order = sorted(range(len(sentences)), key=lambda i: -scores[i])[:SHORTLIST]
    befores = [_before(sentences, i) for i in order]
    texts = [candidate_text(sentences[i].heading, sentences[i].text,
                            before=sentences[b].text if b is not None else "")
             for i, b in zip(order, befores, strict=True)]
    return order, befores, texts


def read(question: str, sentences: Sequence, scores: Sequence[float], *, max_chars: int,
         row_scores: Sequence[float] | None = None) -> Reading:
    """Read the shortlist() of `sentences` (chat.answering.extractive.Sentence, scored by the
    heuristic `scores`) with `question`. `row_scores` (default `scores`): the heuristic's scores that
    order table rows (_rows_by_heuristic), for a follow-up those of the question in its context."""
    order, befores, texts = shortlist(sentences, scores)
    if not order:
        return Reading((), 0.0)
    probabilities = runtime.score(question, texts)
    ranked = sorted(range(len(order)), key=lambda k: -probabilities[k])
    if sentences[order[ranked[0]]].row:
        ranked = _rows_by_heuristic(ranked, order, sentences, scores if row_scores is None else row_scores)
    best = float(probabilities[ranked[0]])
    chosen: list[tuple[int, int | None]] = []
    used, seen = 0, set()
    for k in ranked:
        p = float(probabilities[k])
        if chosen and (p < KEEP_MIN or p < KEEP_RATIO * best or len(chosen) == MAX_QUOTES):
            break
        i, b = order[k], befores[k]
        length = len(sentences[i].text) + (len(sentences[b].text) if b is not None else 0)
        key = " ".join(sentences[i].text.lower().split())
        if key in seen or (chosen and used + length > max_chars):
            continue
        seen.add(key)
        chosen.append((i, b))
        used += length
    return Reading(tuple(chosen), best)


def _rows_by_heuristic(ranked: list[int], order: list[int], sentences: Sequence,
                       scores: Sequence[float]) -> list[int]:
    """The reader's ranking of the shortlist (positions in `order`) when it finds a table row most
    likely, with the rows put in the heuristic's order: its best row first, other rows kept only
    while the heuristic scores them ROW_KEEP_RATIO of that row. The reader tells a row from prose
    (the rotavator's row above a guide's sentence on the rotavator) but rates the rows of one table
    nearly alike (0.95-0.98 for every day of a rota), so which row it puts first is close to
    arbitrary, while the heuristic ranks first the row that names what the question names."""
    rows = [k for k in range(len(order)) if sentences[order[k]].row]
    first = max(rows, key=lambda k: (scores[order[k]], -k))  # the best row, the shortlist's first on a tie
    floor = ROW_KEEP_RATIO * scores[order[first]]
    return [first] + [k for k in ranked if k != first and (not sentences[order[k]].row or scores[order[k]] >= floor)]


def rate(question: str, sentences: Sequence, i: int) -> float:
    """How likely `sentences[i]`, the heuristic's best sentence, answers `question` (the reader's
    probability, reading it after the sentence it points back to): how sure a prose answer the
    heuristic chose is. Raises what the reader raises."""
    b = _before(sentences, i)
    text = candidate_text(sentences[i].heading, sentences[i].text,
                          before=sentences[b].text if b is not None else "")
    return float(runtime.score(question, [text])[0])


def _before(sentences: Sequence, i: int) -> int | None:
    """The index of the sentence `sentences[i]` points back to: the one before it in its source."""
    if i == 0 or not points_back(sentences[i].text):
        return None
    previous = sentences[i - 1]
    if previous.n == sentences[i].n and previous.position == sentences[i].position - 1 and not previous.row:
        return i - 1
    return None


def with_antecedents(sentences: Sequence, picked: Sequence) -> list:
    """`picked` (some of `sentences`), each sentence that points back carrying the one before it
    in its text unless that one is quoted already."""
    index = {id(s): i for i, s in enumerate(sentences)}
    taken = {id(s) for s in picked}
    out = []
    for sentence in picked:
        i = index.get(id(sentence))
        b = _before(sentences, i) if i is not None else None
        if b is not None and id(sentences[b]) not in taken:
            sentence = replace(sentence, text=f"{sentences[b].text} {sentence.text}")
        out.append(sentence)
    return out


def quoted_sentences(sentences: Sequence, reading: Reading) -> list:
    """The chosen sentences as the answer quotes them, best first: a sentence that points back
    carries the sentence before it in its text."""
    out = []
    for i, b in reading.chosen:
        sentence = sentences[i]
        if b is not None:
            sentence = replace(sentence, text=f"{sentences[b].text} {sentence.text}")
        out.append(sentence)
    return out


def preload() -> None:
    """Load the reader's model now (the app does so before forking its processes)."""
    if runtime.available():
        try:
            runtime.load()
        except Exception:  # a broken model file must not stop the app: answers fall back to the heuristic
            logger.warning("the reader's model failed to load", exc_info=True)
