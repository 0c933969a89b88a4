"""Retrieval evaluation on the ../shared/eval format: source recall@k, MRR@10 and evidence coverage.

Item format (one JSON object per line): {"id", "question", "kind": "factoid"|"section", "source",
"evidence": [phrases]}. Coverage compares normalised text (lowercase, every run of
non-alphanumerics one space, stripped) and counts whole-word phrase matches, exactly as
../shared/eval/check_evidence.py does (reimplemented here, not imported).
"""

from __future__ import annotations

import json
import random
import re
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
KINDS = ("factoid", "section", "row")  # row: a question a table row answers (its cell the evidence)
SEPARATOR = "\n\n"


class EvalFormatError(ValueError):
    pass


@dataclass(frozen=True)
class Item:
    id: str
    question: str
    kind: str
    source: str
    evidence: tuple[str, ...]
    page: int | None = None  # the PDF page of the evidence, when the source is paged


def normalise(text: str) -> str:
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def coverage(evidence: Sequence[str], context: str) -> float | None:
    """Fraction of the evidence phrases found, as whole words, in the context; None for a question
    without evidence (an eval set may give sources only), which is left out of the averages."""
    if not evidence:
        return None
    padded = f" {normalise(context)} "
    return sum(f" {normalise(p)} " in padded for p in evidence) / len(evidence)


def load_items(path: Path) -> list[Item]:
    try:
        text = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise EvalFormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from exc
    items: list[Item] = []
    seen: set[str] = set()
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            raw = json.loads(line)
        except ValueError as exc:
            raise EvalFormatError(f"{where}: not JSON ({exc})") from exc
        item = _item(raw, where)
        if item.id in seen:  # reports and --baseline match questions by id
            raise EvalFormatError(f"{where}: id {item.id!r} is used twice")
        seen.add(item.id)
        items.append(item)
    return items


def _item(raw, where: str) -> Item:
    if not isinstance(raw, dict):
        raise EvalFormatError(f"{where}: not an evaluation item (a JSON object is needed)")
    missing = [key for key in ("id", "question", "kind", "source", "evidence") if key not in raw]
    if missing:
        raise EvalFormatError(f"{where}: not an evaluation item (missing {', '.join(missing)})")
    if not isinstance(raw["id"], str | int) or isinstance(raw["id"], bool):
        raise EvalFormatError(f"{where}: id must be a string or a number")
    for key in ("question", "source"):
        if not isinstance(raw[key], str) or not raw[key].strip():
            raise EvalFormatError(f"{where}: {key} must be a non-empty string")
    if raw["kind"] not in KINDS:
        raise EvalFormatError(f"{where}: kind must be factoid, section or row, not {raw['kind']!r}")
    evidence = raw["evidence"]
    if not isinstance(evidence, list) or not all(isinstance(p, str) and p.strip() for p in evidence):
        raise EvalFormatError(f"{where}: evidence must be a list of non-empty strings (may be empty)")
    return Item(id=str(raw["id"]), question=raw["question"], kind=raw["kind"], source=raw["source"],
                evidence=tuple(evidence), page=page_number(raw, where))


def page_number(raw: dict, where: str) -> int | None:
    """The optional 1-based "page" of an item (or a conversation turn)."""
    page = raw.get("page")
    if page is not None and (isinstance(page, bool) or not isinstance(page, int) or page < 1):
        raise EvalFormatError(f"{where}: page must be a page number (1 or more)")
    return page


def read_jsonl(path: Path) -> list[tuple[str, dict]]:
    """(where, object) per non-blank line of a JSONL file, `where` being "path:line" for messages."""
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


def first_source_rank(sources: Sequence[str], source: str, *, within: int = 10) -> int | None:
    """1-based rank of the first result from `source` among the first `within`, else None."""
    for rank, s in enumerate(sources[:within], start=1):
        if s == source:
            return rank
    return None


def joined(texts: Iterable[str], limit: int | None = None) -> str:
    """Texts joined best first, cut to `limit` characters."""
    text = SEPARATOR.join(texts)
    return text if limit is None else text[:limit]


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def mean(values: Iterable[float]) -> float:
    values = list(values)
    return statistics.fmean(values) if values else float("nan")


def bootstrap_interval(values: Sequence[float], *, level: float = 0.95, resamples: int = 2000,
                       seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of per-question `values` (questions drawn with
    replacement; a fixed seed, so a report is reproducible). Passed the differences between two
    runs on the same questions, it is the paired interval of their difference."""
    if not values:
        return float("nan"), float("nan")
    rng = random.Random(seed)
    n = len(values)
    means = sorted(statistics.fmean(rng.choices(values, k=n)) for _ in range(resamples))
    tail = (1 - level) / 2
    return means[int(tail * (resamples - 1))], means[int((1 - tail) * (resamples - 1) + 0.5)]


def reciprocal_ranks(ranks: Iterable[int | None]) -> list[float]:
    return [1.0 / r if r else 0.0 for r in ranks]


def paired_mrr_difference(ranks: Sequence[int | None], other_ranks: Sequence[int | None]) -> dict:
    """MRR@10 of `ranks` minus that of `other_ranks` (the same questions, in the same order), with
    the paired bootstrap interval of the difference."""
    differences = [a - b for a, b in zip(reciprocal_ranks(ranks), reciprocal_ranks(other_ranks), strict=True)]
    return {"difference": mean(differences), "interval": bootstrap_interval(differences)}


def moved_questions(before: Sequence[dict], after: Sequence[dict]) -> list[tuple[str, int | None, int | None]]:
    """(id, rank before, rank after) of the questions of both lists whose source rank changed."""
    old = {row["id"]: row["rank"] for row in before}
    return [(row["id"], old[row["id"]], row["rank"]) for row in after
            if row["id"] in old and old[row["id"]] != row["rank"]]


def write_items(path: Path, items: Iterable[dict]) -> None:
    """An evaluation file: one JSON object per line, in the format load_items reads."""
    path.write_text("".join(json.dumps(item) + "\n" for item in items), encoding="utf-8")


def write_sources_only_set(out: Path, documents: Sequence[tuple[str, str, str]], *, id_prefix: str) -> list[str]:
    """Write a known-item evaluation set: each (file name, text, question) as OUT/docs/<file name>,
    and OUT/questions.jsonl with one factoid question per document, whose source it is (no evidence
    phrases). Returns the names of other files already in OUT/docs, which an ingest of the folder
    would take in too (not deleted: the folder is the caller's)."""
    docs = out / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    items = []
    for number, (filename, text, question) in enumerate(documents, start=1):
        (docs / filename).write_text(text, encoding="utf-8")
        items.append({"id": f"{id_prefix}-{number:03d}", "question": question, "kind": "factoid",
                      "source": filename, "evidence": []})
    write_items(out / "questions.jsonl", items)
    written = {filename for filename, _, _ in documents}
    return sorted(f.name for f in docs.iterdir() if f.name not in written)
