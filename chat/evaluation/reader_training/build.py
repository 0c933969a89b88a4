"""Training and validation pairs: (question, candidate, label) from the docstring corpus and the
synthetic tables, split by package (and by table schema) so validation never sees a package or
schema training saw.

Each question brings its answer (label 1), near-topic negatives from the same section and
document (label 0), and one from another document of the package; a near-topic unanswerable
question brings only negatives. Written as gzip'd JSON lines, one pair a line:
{"q": question, "c": candidate text, "y": 0 or 1, "g": question id}.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

from chat.evaluation.reader_training.corpus import Doc, package_docs
from chat.evaluation.reader_training.questions import questions_for
from chat.evaluation.reader_training.tables import SCHEMAS, table_questions
from reader.candidates import candidate_text, points_back

SEED = 20261206
# Validation: these packages and standard library modules, and these table schemas, never trained on.
VALID_PACKAGES = {"requests", "click", "networkx", "pygments", "babel"}
VALID_STDLIB = ("email", "http", "json", "logging")
VALID_SCHEMAS = {"Servers", "Price list"}
MAX_QUESTIONS_PER_PACKAGE = 700
MAX_QUESTIONS_STDLIB = 2000
TABLE_QUESTIONS_PER_SCHEMA = 700
SAME_SECTION = 3
SAME_DOC = 2


def is_valid(doc: Doc) -> bool:
    return doc.package in VALID_PACKAGES or (doc.package == "stdlib" and doc.name.split(".")[0] in VALID_STDLIB)


def _texts(doc: Doc) -> list[list[str]]:
    """Each unit's candidate text, a sentence that points back read after the one before it."""
    out = []
    for section in doc.sections:
        texts = []
        for i, unit in enumerate(section.units):
            before = section.units[i - 1] if i and points_back(unit) and not section.terms[i] else ""
            texts.append(candidate_text(section.heading, unit, before=before))
        out.append(texts)
    return out


def doc_pairs(doc: Doc, rng: random.Random, other_terms: list[str], neighbour: Doc | None,
              qid: str) -> list[dict]:
    texts = _texts(doc)
    flat = [(si, ui) for si, s in enumerate(texts) for ui in range(len(s))]
    pairs = []
    for n, question in enumerate(questions_for(doc, rng, other_terms)):
        group = f"{qid}-{n}"
        key = question.key.lower()

        answer = doc.sections[question.section].units[question.unit] if question.section >= 0 else None

        def negative(si: int, ui: int, question=question, key=key, answer=answer) -> bool:
            if (si, ui) == (question.section, question.unit) or (answer and answer in texts[si][ui]):
                return False
            unit = doc.sections[si].units[ui].lower()
            return not (key and key in unit)

        if question.section >= 0:
            pairs.append({"q": question.text, "c": texts[question.section][question.unit], "y": 1, "g": group})
            same = [(question.section, u) for u in range(len(texts[question.section]))]
            other = [p for p in flat if p[0] != question.section]
        else:
            same, other = [], flat
        picks = rng.sample([p for p in same if negative(*p)], min(SAME_SECTION, len([p for p in same if negative(*p)])))
        rest = [p for p in other if negative(*p)]
        picks += rng.sample(rest, min(SAME_DOC if question.section >= 0 else 4, len(rest)))
        pairs += [{"q": question.text, "c": texts[si][ui], "y": 0, "g": group} for si, ui in picks]
        if neighbour is not None:
            far = _texts(neighbour)
            si = rng.randrange(len(far))
            pairs.append({"q": question.text, "c": rng.choice(far[si]), "y": 0, "g": group})
    return pairs


def table_pairs(rng: random.Random, *, valid: bool) -> list[dict]:
    pairs = []
    for schema in SCHEMAS:
        if (schema.title in VALID_SCHEMAS) != valid:
            continue
        for n, question in enumerate(table_questions(schema, rng, TABLE_QUESTIONS_PER_SCHEMA // (3 if valid else 1))):
            group = f"table-{schema.title}-{n}"
            for i, row in enumerate(question.rows):
                if i == question.answer or rng.random() < 0.5:
                    pairs.append({"q": question.text, "c": candidate_text(question.heading, row),
                                  "y": int(i == question.answer), "g": group})
    return pairs


def build(out: Path, *, seed: int = SEED) -> dict[str, int]:
    """Write out/train.jsonl.gz and out/valid.jsonl.gz; return the number of pairs of each."""
    rng = random.Random(seed)
    by_package: dict[str, list[Doc]] = defaultdict(list)
    for doc in tqdm(package_docs(), desc="reading docstrings", unit=" docs"):
        by_package[doc.package].append(doc)
    terms = sorted({t for docs in by_package.values() for d in docs for s in d.sections for t in s.terms
                    if t and " " not in t and not t.startswith("Raises")})
    splits: dict[str, list[dict]] = {"train": [], "valid": []}
    for package in tqdm(sorted(by_package), desc="making questions", unit=" packages"):
        docs = by_package[package]
        rng.shuffle(docs)
        limit = MAX_QUESTIONS_STDLIB if package == "stdlib" else MAX_QUESTIONS_PER_PACKAGE
        made = defaultdict(int)
        for i, doc in enumerate(docs):
            split = "valid" if is_valid(doc) else "train"
            if made[split] >= limit:
                continue
            neighbour = docs[(i + 1) % len(docs)] if len(docs) > 1 else None
            pairs = doc_pairs(doc, rng, terms, neighbour, f"{doc.name}")
            made[split] += len({p["g"] for p in pairs})
            splits[split] += pairs
    splits["train"] += table_pairs(rng, valid=False)
    splits["valid"] += table_pairs(rng, valid=True)
    out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for split, pairs in splits.items():
        rng.shuffle(pairs)
        with gzip.open(out / f"{split}.jsonl.gz", "wt", encoding="utf-8", compresslevel=9) as handle:
            for pair in pairs:
                handle.write(json.dumps(pair, ensure_ascii=False) + "\n")
        counts[split] = len(pairs)
    return counts
