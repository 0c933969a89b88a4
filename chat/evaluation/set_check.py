"""Check an answer evaluation set against its corpus as ragweb stores it (Document.text of the
collection, after parsing), so that a phrase the parser changed, a wrong page or a question that
the document does answer after all is an error before any answer is scored.

- every evidence phrase (items and conversation turns) is in its source's stored text, with the
  evaluation's normalisation (chat.evaluation.metrics.normalise);
- a "page" is the page (Document.page_at) of one of the places the phrase is found;
- every "absent" word of a near-topic unanswerable question is missing from its near document.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chat.evaluation.answer_sets import Conversation, Unanswerable
from chat.evaluation.metrics import Item, normalise


def normalised_with_offsets(text: str) -> tuple[str, list[int]]:
    """The text normalised as metrics.normalise does (lowercase, every run of other characters than
    a-z and 0-9 one space, stripped), with the offset in `text` of each of its characters."""
    chars: list[str] = []
    offsets: list[int] = []
    for index, char in enumerate(text):
        for low in char.lower():  # a few characters lowercase to two
            if "a" <= low <= "z" or "0" <= low <= "9":
                chars.append(low)
                offsets.append(index)
            elif chars and chars[-1] != " ":
                chars.append(" ")
                offsets.append(index)
    if chars and chars[-1] == " ":
        chars.pop()
        offsets.pop()
    return "".join(chars), offsets


def phrase_offsets(phrase: str, text: str) -> list[int]:
    """Offsets in `text` where the normalised phrase starts, matching whole words only."""
    norm, offsets = normalised_with_offsets(text)
    needle = f" {normalise(phrase)} "
    padded = f" {norm} "
    found, start = [], padded.find(needle)
    while start != -1:
        # padded[start] is the space before the phrase, so norm[start] is the phrase's first character.
        found.append(offsets[start])
        start = padded.find(needle, start + 1)
    return found


class StoredCorpus:
    """The stored documents of one collection (Document rows), looked up by source."""

    def __init__(self, documents: Iterable) -> None:
        self.documents = {d.source: d for d in documents}

    def problems_of_evidence(self, where: str, source: str, evidence: Sequence[str], page: int | None) -> list[str]:
        document = self.documents.get(source)
        if document is None:
            return [f"{where}: no document with source {source!r} in the collection"]
        problems = []
        pages: set[int | None] = set()
        for phrase in evidence:
            found = phrase_offsets(phrase, document.text)
            if not found:
                problems.append(f"{where}: not in the stored text of {source}: {phrase!r}")
            pages |= {document.page_at(offset) for offset in found}
        if page is not None and not document.pages:
            problems.append(f"{where}: page {page} given, but {source} has no pages")
        elif page is not None and pages and page not in pages:
            problems.append(f"{where}: the evidence is on page(s) {sorted(p for p in pages if p)} of {source}, "
                            f"not {page}")
        return problems

    def problems_of_unanswerable(self, item: Unanswerable) -> list[str]:
        document = self.documents.get(item.near)
        if document is None:
            return [f"{item.id}: no document with source {item.near!r} in the collection"]
        text = f" {normalise(document.text)} "
        return [f"{item.id}: {item.near} does say {word!r}: the question may be answerable"
                for word in item.absent if f" {normalise(word)} " in text]


def set_problems(corpus: StoredCorpus, *, items: Sequence[Item] = (), unanswerable: Sequence[Unanswerable] = (),
                 conversations: Sequence[Conversation] = ()) -> list[str]:
    """Every problem of the set against the stored corpus (an empty list: the set is sound)."""
    problems: list[str] = []
    for item in items:
        problems += corpus.problems_of_evidence(item.id, item.source, item.evidence, item.page)
    for near in unanswerable:
        problems += corpus.problems_of_unanswerable(near)
    for conversation in conversations:
        for number, turn in enumerate(conversation.turns, start=1):
            if turn.source is not None:
                problems += corpus.problems_of_evidence(f"{conversation.id} turn {number}", turn.source,
                                                        turn.evidence, turn.page)
    return problems
