"""The labelled grounding set: claims an LLM answer could make, each paired with the source text it
cites and labelled supported or not, for measuring the grounding pass (chat.answering.grounding;
`manage.py evaluate_grounding`).

Made from the answer sets' evidence: for every question of a set, up to PHRASES_PER_ITEM evidence
phrases; for each, the sentence of the document that holds it (EVIDENCE_WORDS long) and the
source an answer would cite for it: the document's chunk holding the sentence with the chunk
before and after (markdown chunks of CHUNK_TOKENS, the collections' default: a segment as the
search assembles it). Four claims a sentence:

- `verbatim` (supported): the evidence sentence as the document states it;
- `paraphrase` (supported): the same sentence in other words, written by SmolLM2-135M-Instruct
  (`how: model`, data/grounding/paraphrases.jsonl, made by chat.evaluation.grounding_paraphrase and
  read by eye: 36 of 207 passed its checks, 16 kept: most of its output copies the sentence), by
  rules (`how: rules`: synonyms from a short table of our own and a leading conditional clause
  moved to the end; paraphrase_by_rules), and, since neither rewords much, by hand for 31
  sentences (`how: written`, data/grounding/written.jsonl: other words, same facts, names kept, as
  a capable LLM would answer), each where there is one;
- `other_document` (not supported): the evidence sentence of another document of the same set cited
  against this source; of those, the one sharing the most content words with the source (the
  near-topic sentence that word overlap is most likely to let through);
- `fact_changed` (not supported): the evidence sentence with one fact changed by rules
  (change_fact): a number, a name taken from the same source swapped in, or a negation added
  or removed.

The split is by document collection: `development` is the Django documentation of the development
set (../shared/eval), on which thresholds are chosen; `pdf-manuals` and `html-guides` are the
held-out answer sets' documents (chat/evaluation/data), never tuned on. A sentence is used once per
set (two questions citing one sentence give it once).

`manage.py evaluate_grounding --rebuild` writes data/grounding/<set>.jsonl again: the same inputs
give the same lines (no randomness; documents parsed as ingestion parses them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from chat.answering.text import content_terms, split_sentences
from chat.evaluation.metrics import load_items, normalise

DATA = Path(__file__).parent / "data"
OUT = DATA / "grounding"
PARAPHRASES = OUT / "paraphrases.jsonl"
WRITTEN = OUT / "written.jsonl"
EVAL_DIR = Path("../shared/eval")  # the development set beside the checkout (the Makefile's EVAL_DIR)
SETS = {  # set -> (questions, documents folder); the development set's are under the eval dir
    "development": (Path("django_dev.jsonl"), Path("django-docs")),
    "pdf-manuals": (DATA / "pdf-manuals" / "questions.jsonl", DATA / "pdf-manuals" / "docs"),
    "html-guides": (DATA / "html-guides" / "questions.jsonl", DATA / "html-guides" / "docs"),
}
DEVELOPMENT = "development"
KINDS = ("verbatim", "paraphrase", "other_document", "fact_changed")
SUPPORTED_KINDS = ("verbatim", "paraphrase")
PHRASES_PER_ITEM = 2
EVIDENCE_WORDS = (6, 60)
CHUNK_TOKENS = 200
_MAX_BYTES = 50 * 1024 * 1024


@dataclass(frozen=True)
class Claim:
    id: str
    set: str
    doc: str
    kind: str
    claim: str
    source: str
    supported: bool
    sentence: str  # the evidence sentence the claim was made from
    how: str = ""  # for a paraphrase: model or rules; for a changed fact: what changed


def load(name: str, folder: Path = OUT) -> list[Claim]:
    with (folder / f"{name}.jsonl").open(encoding="utf-8") as handle:
        return [Claim(**json.loads(line)) for line in handle if line.strip()]


# --- Documents and sources ---------------------------------------------------------------------

@dataclass
class _Doc:
    name: str
    text: str
    segments: list[tuple[int, int]]  # (start, end) of each chunk with its neighbours
    chunks: list[tuple[int, int]]


def _parse(path: Path, name: str) -> _Doc:
    from corpus.ingest.chunk import ChunkingConfig, chunk_text
    from corpus.ingest.parse import parse_document

    document = parse_document(path.read_bytes(), filename=path.name, max_bytes=_MAX_BYTES)
    spans = chunk_text(document.text, ChunkingConfig("markdown", CHUNK_TOKENS), headings=document.headings)
    chunks = [(s.start, s.end) for s in spans]
    segments = [(chunks[max(0, i - 1)][0], chunks[min(len(chunks) - 1, i + 1)][1]) for i in range(len(chunks))]
    return _Doc(name, document.text, segments, chunks)


def source_sentences(text: str) -> list[str]:
    """The sentences of a source: its paragraphs (blank-line separated) split into sentences with
    their white space joined; the lines of a table (| a | b |) one by one."""
    out = []
    for paragraph in re.split(r"\n\s*\n", text):
        lines = [line.strip() for line in paragraph.splitlines() if line.strip()]
        if lines and all(line.startswith("|") for line in lines):
            out += lines
        elif lines:
            out += split_sentences(" ".join(lines))
    return out


def _evidence_sentence(doc: _Doc, phrase: str) -> tuple[str, str] | None:
    """(the sentence holding `phrase`, the source segment holding that sentence), or None when the
    phrase is not inside one sentence of EVIDENCE_WORDS words."""
    wanted = normalise(phrase)
    for (c_start, c_end), (s_start, s_end) in zip(doc.chunks, doc.segments, strict=True):
        chunk = doc.text[c_start:c_end]
        if wanted not in normalise(chunk):
            continue
        for sentence in source_sentences(chunk):
            if wanted in normalise(sentence) and EVIDENCE_WORDS[0] <= len(sentence.split()) <= EVIDENCE_WORDS[1]:
                if sentence.startswith("|") or sentence.startswith("..") or "::" in sentence[-3:]:
                    return None
                return sentence, doc.text[s_start:s_end].strip()
        return None
    return None


# --- Claims made by rules ----------------------------------------------------------------------

# Words and their plain synonyms (written for this set; the sense documentation uses them in).
_SYNONYMS = {
    "specify": "give", "specified": "given", "specifies": "gives", "contains": "holds", "contain": "hold",
    "create": "make", "creates": "makes", "created": "made", "require": "need", "requires": "needs",
    "required": "needed", "allows": "lets", "allow": "let", "directory": "folder", "directories": "folders",
    "display": "show", "displays": "shows", "displayed": "shown", "starts": "begins", "start": "begin",
    "automatically": "on its own", "immediately": "right away", "instead of": "rather than",
    "modify": "change", "modifies": "changes", "modified": "changed", "obtain": "get", "obtains": "gets",
    "determine": "work out", "determines": "works out", "ensure": "make sure", "ensures": "makes sure",
    "provide": "offer", "provides": "offers", "provided": "offered", "attempt": "try", "attempts": "tries",
    "retrieve": "fetch", "retrieves": "fetches", "remove": "delete", "removes": "deletes", "removed": "deleted",
    "large": "big", "small": "little", "multiple": "several", "numerous": "many", "assist": "help",
    "additional": "extra", "sufficient": "enough", "commence": "begin", "terminate": "end",
    "terminates": "ends", "terminated": "ended", "executes": "runs", "execute": "run", "executed": "run",
    "invoke": "call", "invokes": "calls", "invoked": "called", "indicates": "shows", "indicate": "show",
    "utilize": "use", "therefore": "so", "however": "but", "typically": "usually", "generally": "usually",
    "initially": "at first", "subsequently": "later", "prior to": "before", "in order to": "to",
    "describes": "explains", "describe": "explain",
    "stored": "kept", "store": "keep", "stores": "keeps", "default": "standard", "maximum": "upper limit",
    "minimum": "lower limit", "location": "place", "purpose": "aim", "necessary": "needed",
    "different": "distinct", "enables": "turns on", "enable": "turn on", "disable": "turn off",
    "disables": "turns off", "ignored": "skipped", "ignores": "skips", "ignore": "skip",
}
# A word, not part of a name or code (value=NULL, ``default``).
_SYNONYM = re.compile(r"(?<![\w`=.-])(" + "|".join(sorted(map(re.escape, _SYNONYMS), key=len, reverse=True))
                      + r")(?![\w`=.(-])")
_IF_CLAUSE = re.compile(r"^(If|When|Unless) ([^,]{6,}), (.+?)([.!?]?)$")


def paraphrase_by_rules(sentence: str) -> str | None:
    """`sentence` in other words by rules: a leading conditional clause moved to the end, and the
    table's synonyms swapped in; None when fewer than two things changed."""
    changes = 0
    text = sentence.strip()
    match = _IF_CLAUSE.match(text)
    if match:
        word, condition, main, stop = match.groups()
        text = f"{main[0].upper()}{main[1:]} {word.lower()} {condition}{stop or '.'}"
        changes += 1

    def swap(m: re.Match) -> str:
        nonlocal changes
        changes += 1
        return _SYNONYMS[m.group(1)]

    text = _SYNONYM.sub(swap, text)
    return text if changes >= 2 else None


_NUMBER = re.compile(r"(?<![\w.])(\d+)(?![\w.]*\d*\.\d)")
# A name: a literal (``x``), a command-line option (-C, --verbose), a dotted or underscored identifier
# or call (build.ninja, asn1_create(), .ninja_log), a CamelCase or an UPPER_CASE word.
_NAME = re.compile(r"`{1,2}([^`\s]{3,})`{1,2}|(?<![\w.-])(--?[A-Za-z][\w-]*|"
                   r"\.?[A-Za-z]\w*(?:[._-]\w+)+(?:\(\))?|[A-Z][a-z]+[A-Z]\w*|[A-Z]{2,}[A-Z0-9_]*)(?![\w.-])")
_NEGATIONS = [  # (pattern, replacement): the first that matches is applied once
    (r"\bMUST NOT\b", "MUST"), (r"\bMUST\b", "MUST NOT"), (r"\bcannot\b", "can"), (r"\bcan not\b", "can"),
    (r"\bdoes not\b", "does"), (r"\bdo not\b", "do"), (r"\bis not\b", "is"), (r"\bare not\b", "are"),
    (r"\bnever\b", "always"), (r"\balways\b", "never"), (r"\bmust\b", "must not"), (r"\bcan\b", "cannot"),
    (r"\bshould\b", "should not"), (r"\bwill\b", "will not"), (r"\bis\b", "is not"), (r"\bare\b", "are not"),
]
_NOT_NAMES = {"MUST", "NOT", "SHOULD", "MAY", "REQUIRED", "OPTIONAL", "SHALL"}


def _names(text: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _NAME.finditer(text) if (m.group(1) or m.group(2)) not in _NOT_NAMES]


def _name_kind(name: str) -> str:
    """An option, a call, an identifier or a capitalised term: a name is swapped for one of its kind."""
    return "-" if name.startswith("-") else "(" if name.endswith("()") else "_" if "_" in name else "A"


def change_fact(sentence: str, source: str, turn: int) -> tuple[str, str] | None:
    """`sentence` with one fact changed, and what changed: a number, a name (an identifier, an
    option, a capitalised term) replaced by another name of `source` the sentence does not hold, or
    a negation added or removed. `turn` picks which of the applicable changes comes first, so that
    a set gets a mix. None when none applies."""
    def number() -> tuple[str, str] | None:
        match = _NUMBER.search(sentence)
        if not match:
            return None
        value = int(match.group(1))
        new = value * 2 if value > 1 else value + 2
        return sentence[:match.start()] + str(new) + sentence[match.end():], f"number {value} -> {new}"

    def name() -> tuple[str, str] | None:
        own = _names(sentence)
        others = [n for n in dict.fromkeys(_names(source)) if n not in sentence and n.lower() not in sentence.lower()]
        for word in own:
            for other in others:
                if _name_kind(other) == _name_kind(word) and other != word:
                    return sentence.replace(word, other, 1), f"name {word} -> {other}"
        return None

    def negation() -> tuple[str, str] | None:
        for pattern, replacement in _NEGATIONS:
            match = re.search(pattern, sentence)
            if match:
                return sentence[:match.start()] + replacement + sentence[match.end():], \
                    f"negation {match.group(0)!r} -> {replacement!r}"
        return None

    changes = [number, name, negation]
    for i in range(len(changes)):
        changed = changes[(turn + i) % len(changes)]()
        if changed and changed[0] != sentence:
            return changed
    return None


# --- The set ------------------------------------------------------------------------------------

def load_paraphrases(path: Path) -> dict[str, str]:
    """sentence -> its paraphrase (the rows kept, for the model's)."""
    if not path.exists():
        return {}
    with path.open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    return {r["sentence"]: r["paraphrase"] for r in rows if r.get("keep", True)}


def evidence(name: str, eval_dir: Path) -> Iterator[tuple[str, str, str, str]]:
    """(item id, document, evidence sentence, source) of a set, each sentence once."""
    questions, folder = SETS[name]
    root = eval_dir if name == DEVELOPMENT else Path(".")
    items = load_items(root / questions)
    docs: dict[str, _Doc] = {}
    seen: set[str] = set()
    for item in items:
        if item.source not in docs:
            docs[item.source] = _parse(root / folder / item.source, item.source)
        taken = 0
        for phrase in item.evidence:
            found = _evidence_sentence(docs[item.source], phrase)
            if found is None or found[0] in seen:
                continue
            seen.add(found[0])
            yield item.id, item.source, found[0], found[1]
            taken += 1
            if taken == PHRASES_PER_ITEM:
                break


def build_set(name: str, eval_dir: Path, paraphrases: dict[str, str], written: dict[str, str]) -> list[Claim]:
    rows = list(evidence(name, eval_dir))
    claims: list[Claim] = []
    for turn, (item_id, doc, sentence, source) in enumerate(rows):
        base = f"{item_id}-{sum(1 for c in claims if c.id.startswith(item_id + '-') and c.kind == 'verbatim') + 1}"

        def claim(kind: str, text: str, supported: bool, how: str = "",
                  base=base, doc=doc, source=source, sentence=sentence) -> None:
            suffix = f"-{how}" if kind == "paraphrase" else ""
            claims.append(Claim(f"{base}-{kind}{suffix}", name, doc, kind, text, source, supported, sentence, how))

        claim("verbatim", sentence, True)
        if sentence in paraphrases:
            claim("paraphrase", paraphrases[sentence], True, "model")
        if sentence in written:
            claim("paraphrase", written[sentence], True, "written")
        by_rules = paraphrase_by_rules(sentence)
        if by_rules:
            claim("paraphrase", by_rules, True, "rules")
        source_terms = content_terms(source)
        others = [(len(content_terms(s) & source_terms) / max(1, len(content_terms(s))), s)
                  for _, d, s, _ in rows if d != doc and normalise(s) not in normalise(source)]
        if others:
            claim("other_document", max(others, key=lambda p: (p[0], p[1]))[1], False)
        changed = change_fact(sentence, source, turn)
        if changed:
            claim("fact_changed", changed[0], False, changed[1])
    return claims


def build(eval_dir: Path = EVAL_DIR, out: Path = OUT) -> dict[str, int]:
    """Write out/<set>.jsonl for every set; `eval_dir` holds the development set."""
    out.mkdir(parents=True, exist_ok=True)
    paraphrases, written = load_paraphrases(PARAPHRASES), load_paraphrases(WRITTEN)
    counts = {}
    for name in SETS:
        claims = build_set(name, eval_dir, paraphrases, written)
        with (out / f"{name}.jsonl").open("w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(asdict(c), ensure_ascii=False) + "\n" for c in claims)
        counts[name] = len(claims)
    return counts
