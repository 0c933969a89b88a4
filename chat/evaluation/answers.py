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
- abstained: the pipeline said "not found" (or an LLM answer only said the sources do not hold it).

Extra sets, in files of their own:
- off-topic questions (JSONL {"id", "question", "category"}): nothing in the corpus answers them;
  the abstention rate should be high;
- two-turn conversations (JSONL {"id", "kind": "follow-up"|"new-topic", "turns": [q1, q2],
  "source", "evidence"}): the second turn is asked after the first turn's answer; scored like an
  item, plus where the source ranks among the numbered sources.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chat.answering.citations import cited_numbers
from chat.answering.pipeline import AnswerError, NotFound, answer_question
from chat.evaluation.metrics import EvalFormatError, Item, coverage, mean

_MARKER = re.compile(r"\[\d{1,3}(?:\s*,\s*\d{1,3})*\]")


@dataclass(frozen=True)
class OffTopic:
    id: str
    question: str
    category: str


@dataclass(frozen=True)
class Conversation:
    id: str
    kind: str
    turns: tuple[str, ...]
    source: str
    evidence: tuple[str, ...]


def without_markers(text: str) -> str:
    return _MARKER.sub(" ", text)


def _jsonl(path: Path) -> list[tuple[str, dict]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalFormatError(f"{path}: cannot read ({exc})") from exc
    rows = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise EvalFormatError(f"{path}:{lineno}: not JSON ({exc})") from exc
        if not isinstance(raw, dict):
            raise EvalFormatError(f"{path}:{lineno}: a JSON object is needed")
        rows.append((f"{path}:{lineno}", raw))
    return rows


def load_offtopic(path: Path) -> list[OffTopic]:
    items = []
    for where, raw in _jsonl(path):
        if not isinstance(raw.get("question"), str) or not raw["question"].strip():
            raise EvalFormatError(f"{where}: question must be a non-empty string")
        items.append(OffTopic(id=str(raw.get("id", where)), question=raw["question"],
                              category=str(raw.get("category", "other"))))
    return items


def load_conversations(path: Path) -> list[Conversation]:
    items = []
    for where, raw in _jsonl(path):
        turns = raw.get("turns")
        if not isinstance(turns, list) or len(turns) < 2 or not all(isinstance(t, str) and t.strip() for t in turns):
            raise EvalFormatError(f"{where}: turns must be a list of at least two questions")
        evidence = raw.get("evidence", [])
        if not isinstance(raw.get("source"), str) or not isinstance(evidence, list):
            raise EvalFormatError(f"{where}: source (a string) and evidence (a list) are needed")
        items.append(Conversation(id=str(raw.get("id", where)), kind=str(raw.get("kind", "follow-up")),
                                  turns=tuple(turns), source=raw["source"], evidence=tuple(evidence)))
    return items


def run_question(question: str, collections, *, history: Sequence[tuple[str, str]] = (),
                 source: str | None = None, evidence: Sequence[str] = ()) -> dict:
    """One question through the answer pipeline, scored. Errors other than "not found" (the LLM
    failing) are recorded as such, not as abstentions."""
    row: dict = {"question": question}
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
    })
    if source is not None:
        row["right_document"] = source in cited_sources
        row["source_rank"] = sources.index(source) + 1 if source in sources else None
        row["evidence"] = coverage(list(evidence), without_markers(answer.text))
        row["raw_evidence"] = coverage(list(evidence), without_markers(answer.raw_text))
        row["sources_evidence"] = coverage(list(evidence), "\n\n".join(c["text"] for c in prepared.citations))
    return row


def run_item(item: Item, collections) -> dict:
    row = run_question(item.question, collections, source=item.source, evidence=item.evidence)
    return {"id": item.id, "kind": item.kind, **row}


def run_offtopic(item: OffTopic, collections) -> dict:
    return {"id": item.id, "kind": "offtopic", "category": item.category,
            **run_question(item.question, collections)}


def run_conversation(conversation: Conversation, collections, *, use_history: bool = True) -> dict:
    """The turns in order, each answer going into the history of the next; the last turn scored.
    `use_history=False` asks the last turn alone (the baseline a follow-up should beat)."""
    history: list[tuple[str, str]] = []
    if use_history:
        for turn in conversation.turns[:-1]:
            earlier = run_question(turn, collections, history=history)
            history += [("user", turn)] + ([("assistant", earlier["text"])] if earlier["text"] else [])
    row = run_question(conversation.turns[-1], collections, history=history, source=conversation.source,
                       evidence=conversation.evidence)
    return {"id": conversation.id, "kind": conversation.kind, **row}


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
    return summary
