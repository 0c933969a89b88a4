"""The answer evaluation's extra question files, beside the ../shared/eval item format
(chat.evaluation.metrics.load_items, whose items may also give the PDF "page" of their evidence).

- Near-topic unanswerable questions (JSONL {"id", "question", "kind": "unanswerable", "near",
  "absent"}): about the subject of the document `near` (its source), asking a detail it does not
  state; `absent` lists the words an answer would need, each checked absent from that document
  (chat.evaluation.set_check). Scored on abstention: "not found" is the right answer.
- Off-topic questions (JSONL {"id", "question", "category"}): nothing in the corpus is near them.
- Conversations (JSONL {"id", "turns": [{"question", "kind", "source", "evidence", "page",
  "standalone"}, ...]}): asked in order, each answer going into the next turn's history. `kind` is
  "first" (the opening question), "follow-up" (leans on the conversation: "How do I turn it off?")
  or "new-topic" (an abrupt switch, standing alone). A turn with a `source` is scored like an item;
  a follow-up needs `standalone`, the same question with its subject spelled out, asked alone as
  the figure the follow-up should reach. The older two-turn format ({"id", "kind", "turns": [q1,
  q2], "source", "evidence"}) is read as a first turn left unscored and a scored second turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chat.evaluation.metrics import EvalFormatError, page_number, read_jsonl

TURN_KINDS = ("first", "follow-up", "new-topic")


@dataclass(frozen=True)
class Unanswerable:
    id: str
    question: str
    near: str
    absent: tuple[str, ...]


@dataclass(frozen=True)
class OffTopic:
    id: str
    question: str
    category: str


@dataclass(frozen=True)
class Turn:
    question: str
    kind: str
    source: str | None = None  # None: asked for the history only, not scored
    evidence: tuple[str, ...] = ()
    page: int | None = None
    standalone: str | None = None


@dataclass(frozen=True)
class Conversation:
    id: str
    turns: tuple[Turn, ...]


def _text(raw: dict, key: str, where: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip():
        raise EvalFormatError(f"{where}: {key} must be a non-empty string")
    return value


def _phrases(raw: dict, key: str, where: str) -> tuple[str, ...]:
    value = raw.get(key, [])
    if not isinstance(value, list) or not all(isinstance(p, str) and p.strip() for p in value):
        raise EvalFormatError(f"{where}: {key} must be a list of non-empty strings")
    return tuple(value)


def _unique(ids: list[str], path: Path) -> None:
    seen: set[str] = set()
    for ident in ids:
        if ident in seen:  # reports match questions by id
            raise EvalFormatError(f"{path}: id {ident!r} is used twice")
        seen.add(ident)


def load_unanswerable(path: Path) -> list[Unanswerable]:
    items = []
    for where, raw in read_jsonl(path):
        if raw.get("kind", "unanswerable") != "unanswerable":
            raise EvalFormatError(f"{where}: kind must be unanswerable")
        absent = _phrases(raw, "absent", where)
        if not absent:
            raise EvalFormatError(f"{where}: absent must name what the document does not say")
        items.append(Unanswerable(id=str(raw.get("id", where)), question=_text(raw, "question", where),
                                  near=_text(raw, "near", where), absent=absent))
    _unique([i.id for i in items], path)
    return items


def load_offtopic(path: Path) -> list[OffTopic]:
    items = [OffTopic(id=str(raw.get("id", where)), question=_text(raw, "question", where),
                      category=str(raw.get("category", "other"))) for where, raw in read_jsonl(path)]
    _unique([i.id for i in items], path)
    return items


def _turn(raw, where: str) -> Turn:
    if not isinstance(raw, dict):
        raise EvalFormatError(f"{where}: each turn must be a JSON object")
    kind = raw.get("kind")
    if kind not in TURN_KINDS:
        raise EvalFormatError(f"{where}: turn kind must be one of {', '.join(TURN_KINDS)}, not {kind!r}")
    source = raw.get("source")
    if source is not None and (not isinstance(source, str) or not source.strip()):
        raise EvalFormatError(f"{where}: source must be a non-empty string when given")
    standalone = raw.get("standalone")
    if kind == "follow-up" and source is not None:
        standalone = _text(raw, "standalone", where)
    return Turn(question=_text(raw, "question", where), kind=kind, source=source,
                evidence=_phrases(raw, "evidence", where), page=page_number(raw, where), standalone=standalone)


def _two_turn(raw: dict, where: str) -> tuple[Turn, ...]:
    """The older format: two questions, the second scored against source and evidence."""
    questions = raw["turns"]
    if len(questions) < 2 or not all(isinstance(q, str) and q.strip() for q in questions):
        raise EvalFormatError(f"{where}: turns must be at least two questions")
    kind = raw.get("kind", "follow-up")
    if kind not in ("follow-up", "new-topic"):
        raise EvalFormatError(f"{where}: kind must be follow-up or new-topic, not {kind!r}")
    last = Turn(question=questions[-1], kind=kind, source=_text(raw, "source", where),
                evidence=_phrases(raw, "evidence", where), standalone=raw.get("standalone"))
    return (*(Turn(question=q, kind="first" if i == 0 else "follow-up") for i, q in enumerate(questions[:-1])),
            last)


def load_conversations(path: Path) -> list[Conversation]:
    conversations = []
    for where, raw in read_jsonl(path):
        turns = raw.get("turns")
        if not isinstance(turns, list) or len(turns) < 2:
            raise EvalFormatError(f"{where}: turns must be a list of at least two turns")
        if all(isinstance(t, str) for t in turns):
            parsed = _two_turn(raw, where)
        else:
            parsed = tuple(_turn(t, f"{where} turn {n}") for n, t in enumerate(turns, start=1))
        if parsed[0].kind != "first" or any(t.kind == "first" for t in parsed[1:]):
            raise EvalFormatError(f"{where}: the first turn, and only it, must be of kind first")
        conversations.append(Conversation(id=str(raw.get("id", where)), turns=parsed))
    _unique([c.id for c in conversations], path)
    return conversations
