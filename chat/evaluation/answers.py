"""Answer evaluation: the real answer pipeline (chat.answering.pipeline.answer_question, as the
chat page runs it) over an evaluation set, scored on what a person reads.

Per answer:
- evidence: the share of the item's evidence phrases found in the answer text, normalised as
  ../shared/eval/check_evidence.py does (metrics.coverage), after the [n] markers are taken out
  (they are links, not words of the answer);
- chars: the length of the answer text as stored (label and markers included);
- right_document: the item's source is among the sources the answer cites;
- valid_citations: every [n] of the answer names one of its numbered sources (also measured on the
  raw text, before the grounding pass, for LLM answers);
- abstained: the pipeline said "not found" (or an LLM answer only said the sources do not hold it);
- baseline_evidence: the same share in a naive answer, the first 550 characters of the best-ranked
  chunk (chat.evaluation.baseline): an answer that does not beat it adds nothing to the search;
- first_evidence: the same share in the answer's first point (is the answering sentence first?);
- confidence / sure: the reader's probability that the first quote answers the question, and
  whether the answer states it without a caveat (chat.answering.reading.SURE);
- page_right (items with a "page", for PDFs): the answer cites that page of the source; summarised
  over every such question (an answer without the evidence names some other page, or none) and over
  the answers that quote the evidence (page_right_quoted: the page of the sentence cited).

Extra sets, in files of their own (formats in chat.evaluation.answer_sets): off-topic and near-topic
unanswerable questions (scored on abstention: both should be "not found"), and conversations
(chat.evaluation.conversations), each scored turn like an item.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from chat.answering.citations import cited_numbers
from chat.answering.pipeline import AnswerError, NotFound, answer_question
from chat.answering.reading import SURE
from chat.evaluation.answer_sets import OffTopic, Unanswerable
from chat.evaluation.baseline import naive_answer
from chat.evaluation.metrics import KINDS, Item, coverage, mean

_MARKER = re.compile(r"\[\d{1,3}(?:\s*,\s*\d{1,3})*\]")


def without_markers(text: str) -> str:
    return _MARKER.sub(" ", text)


def run_question(question: str, collections, *, history: Sequence[tuple[str, str]] = (),
                 source: str | None = None, evidence: Sequence[str] = (), page: int | None = None) -> dict:
    """One question through the answer pipeline, scored. Errors other than "not found" (the LLM
    failing) are recorded as such, not as abstentions."""
    row: dict = {"question": question}
    if source is not None:
        # The naive baseline knows nothing of the conversation: it searches the question as asked.
        row["baseline_evidence"] = coverage(list(evidence), naive_answer(question, collections))
    if page is not None:
        row["page_right"] = False
    try:
        prepared, answer = answer_question(question=question, collections=collections, history=history)
    except NotFound as exc:
        return {**row, "abstained": True, "error": str(exc), "text": "", "chars": 0}
    except AnswerError as exc:
        return {**row, "abstained": False, "error": str(exc), "text": "", "chars": 0, "failed": True}
    numbers = {c["n"] for c in prepared.citations}
    cited = cited_numbers(answer.text)
    raw_cited = cited_numbers(answer.raw_text)
    sources = [c["document"]["source"] for c in prepared.citations]
    cited_sources = [c["document"]["source"] for c in answer.citations]
    row.update({
        "query": prepared.query, "mode": prepared.mode, "text": answer.text, "chars": len(answer.text),
        "abstained": answer.declined, "top_relevance": prepared.top_relevance,
        "cites": bool(cited), "valid_citations": all(n in numbers for n in cited),
        "raw_cites": bool(raw_cited), "raw_valid_citations": all(n in numbers for n in raw_cited),
        "partly_unsupported": answer.partly_unsupported, "cited_sources": cited_sources,
        "confidence": answer.confidence, "sure": answer.confidence is None or answer.confidence >= SURE,
        "cited_pages": [[c["document"]["source"], c.get("page")] for c in answer.citations],
    })
    if source is not None:
        row["right_document"] = source in cited_sources
        row["source_rank"] = sources.index(source) + 1 if source in sources else None
        row["evidence"] = coverage(list(evidence), without_markers(answer.text))
        row["first_evidence"] = coverage(list(evidence), without_markers(first_quote(answer.text)))
        row["raw_evidence"] = coverage(list(evidence), without_markers(answer.raw_text))
        row["sources_evidence"] = coverage(list(evidence), "\n\n".join(c["text"] for c in prepared.citations))
    if page is not None:
        row["page_right"] = [source, page] in row["cited_pages"]
    return row


def first_quote(text: str) -> str:
    """The first point of an extractive answer (its first "- " line and the items under it), or
    the whole text of an answer that is not a list."""
    lines = text.splitlines()
    if not lines or not lines[0].startswith("- "):
        return text
    first = [lines[0]]
    for line in lines[1:]:
        if not line.startswith("    "):
            break
        first.append(line)
    return "\n".join(first)


def right(row: dict) -> bool:
    """An answer a reader can trust: of an answerable question, holding half its evidence or more."""
    return row["kind"] in KINDS and (row.get("evidence") or 0.0) >= 0.5


def run_item(item: Item, collections) -> dict:
    row = run_question(item.question, collections, source=item.source, evidence=item.evidence, page=item.page)
    return {"id": item.id, "kind": item.kind, **row}


def run_offtopic(item: OffTopic, collections) -> dict:
    return {"id": item.id, "kind": "offtopic", "category": item.category,
            **run_question(item.question, collections)}


def run_unanswerable(item: Unanswerable, collections) -> dict:
    """A near-topic question the corpus does not answer: right when it abstains."""
    return {"id": item.id, "kind": "unanswerable", "near": item.near, **run_question(item.question, collections)}


def _rate(rows: Sequence[dict], key: str) -> float:
    return mean(1.0 if r.get(key) else 0.0 for r in rows)


def summarise(rows: Sequence[dict]) -> dict:
    """Figures of one group of rows (one question kind)."""
    answered = [r for r in rows if not r["abstained"] and not r.get("failed")]
    scored = [r for r in answered if r.get("evidence") is not None]
    summary = {
        "n": len(rows),
        "abstained": _rate(rows, "abstained"),
        "failed": _rate(rows, "failed"),
        "answered": len(answered),
        "chars": mean(r["chars"] for r in answered),
        "cites": _rate(answered, "cites"),
        "valid_citations": _rate(answered, "valid_citations"),
        "raw_valid_citations": _rate(answered, "raw_valid_citations"),
        "partly_unsupported": _rate(answered, "partly_unsupported"),
    }
    with_source = [r for r in rows if "right_document" in r]
    if with_source:
        # Over every question, an abstention scoring 0: a "not found" is no answer to an answerable one.
        summary["evidence"] = mean(r.get("evidence") or 0.0 for r in with_source)
        summary["evidence_answered"] = mean(r["evidence"] for r in scored) if scored else float("nan")
        summary["right_document"] = _rate(with_source, "right_document")
        summary["sources_evidence"] = mean(r.get("sources_evidence") or 0.0 for r in with_source)
        summary["source_in_sources"] = _rate(with_source, "source_rank")
        summary["baseline_evidence"] = mean(r.get("baseline_evidence") or 0.0 for r in with_source)
        # The answering sentence first: of the answers quoting the evidence, those whose first point does.
        quoting = [r for r in scored if (r.get("evidence") or 0.0) >= 0.5]
        if quoting:
            summary["evidence_first"] = _rate([{"x": r.get("first_evidence", 0.0) >= 0.5} for r in quoting], "x")
    sure = [r for r in answered if r.get("sure") and r.get("confidence") is not None]
    if sure:
        summary["sure"] = len(sure) / max(1, len(answered))
        summary["sure_right"] = _rate([{"x": right(r)} for r in sure], "x")
    with_page = [r for r in rows if "page_right" in r]
    if with_page:
        # Over every question with a page, an abstention counting as a wrong page.
        summary["page_right"] = _rate(with_page, "page_right")
        # Over the answers that quote the evidence: does the citation name the page of what it quotes?
        quoting = [r for r in with_page if r.get("evidence")]
        if quoting:
            summary["page_right_quoted"] = _rate(quoting, "page_right")
    return summary
