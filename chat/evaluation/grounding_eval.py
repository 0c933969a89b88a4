"""How well ways of checking a claim against its cited source tell supported claims from others, on
the labelled grounding set (chat.evaluation.grounding_set), side by side in one run.

Ways (`METHODS`):

- `overlap`: today's grounding pass (chat.answering.grounding): the source holds at least
  KEEP_SUPPORT of the claim's content words;
- `reader`: the reader (reader/, the question-answering cross-encoder) reads the claim as the
  question and the source's READ sentences sharing most of its words as candidates
  (reader_support); supported when its best probability is at least a
  threshold;
- `overlap or reader`: supported by either (the reader read only for claims overlap would flag);
- `overlap and reader`: supported by both (the reader read only for claims overlap would keep).

A threshold is chosen on the development set only (the one maximising the mean of the four kinds'
accuracies) and the held-out sets are scored with it. Reported per set: per kind, the share judged
right (kept for the supported kinds, flagged for the others), and of the paraphrases written by
hand (the ones in other words) the share kept; precision and recall of "supported";
the reader's CPU time per claim of the set (a method that reads only some claims costs less).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from chat.answering.blocks import display_text
from chat.answering.grounding import KEEP_SUPPORT, support
from chat.answering.text import content_terms
from chat.evaluation.grounding_set import DEVELOPMENT, KINDS, Claim, source_sentences

# Source sentences the reader reads per claim: 2 holds nearly all of 4's figures at half the CPU
# (docs/evaluation.md, "Grounding with the reader").
READ = 2
# A longer claim is read in part (the reader reads 128 tokens of claim and sentence together).
MAX_CLAIM_CHARS = 300
THRESHOLDS = [round(0.05 * i, 2) for i in range(1, 20)]
METHODS = ("overlap", "reader", "overlap or reader", "overlap and reader")


@dataclass
class Scored:
    claim: Claim
    overlap: float
    reader: float | None = None  # best probability over the READ sentences (None: not read)
    cpu: float = 0.0  # seconds of the reader's CPU for this claim


def best_sentences(claim: str, source: str, k: int = READ) -> list[str]:
    """The `k` sentences of `source` (of three words or more) holding the largest share of
    `claim`'s content words (of equals, the one most of whose own words the claim holds)."""
    terms = content_terms(claim)
    sentences = [(s, content_terms(s)) for s in source_sentences(source) if len(s.split()) >= 3]
    ranked = sorted(sentences, key=lambda p: (-support(terms, p[1]), -support(p[1], terms)))
    return [sentence for sentence, _ in ranked[:k]]


def reader_support(claim: str, source: str) -> float:
    """The reader's best probability over the READ best_sentences() of `source`, `claim` read as
    the question (reST and Markdown markup read as plain words)."""
    from reader import runtime

    candidates = [display_text(s) for s in best_sentences(claim, source)]
    if not candidates:
        return 0.0
    return float(max(runtime.score(display_text(claim)[:MAX_CLAIM_CHARS], candidates)))


def score(claims: Sequence[Claim]) -> list[Scored]:
    """Every claim's word overlap with its source and the reader's best probability
    (reader_support)."""
    out = []
    for claim in claims:
        overlap = support(content_terms(claim.claim), content_terms(claim.source))
        started = time.process_time()
        best = reader_support(claim.claim, claim.source)
        out.append(Scored(claim, overlap, best, time.process_time() - started))
    return out


def judge(method: str, scored: Scored, threshold: float) -> bool:
    by_words = scored.overlap >= KEEP_SUPPORT
    by_reader = (scored.reader or 0.0) >= threshold
    if method == "overlap":
        return by_words
    if method == "reader":
        return by_reader
    if method == "overlap or reader":
        return by_words or by_reader
    if method == "overlap and reader":
        return by_words and by_reader
    raise ValueError(method)


def reads(method: str, scored: Scored) -> bool:
    """Whether `method` reads this claim with the reader at all."""
    by_words = scored.overlap >= KEEP_SUPPORT
    return {"overlap": False, "reader": True, "overlap or reader": not by_words,
            "overlap and reader": by_words}[method]


@dataclass(frozen=True)
class Figures:
    per_kind: dict[str, float]
    precision: float
    recall: float
    balanced: float  # the mean of the per-kind accuracies
    ms_per_claim: float  # the reader's CPU per claim of the set
    written: float  # of the paraphrases written by hand (part of `paraphrase`), the share kept


def figures(method: str, scored: Sequence[Scored], threshold: float) -> Figures:
    per_kind = {}
    for kind in KINDS:
        of_kind = [s for s in scored if s.claim.kind == kind]
        if of_kind:
            per_kind[kind] = sum(judge(method, s, threshold) == s.claim.supported for s in of_kind) / len(of_kind)
    written = [s for s in scored if s.claim.how == "written"]
    kept = [s for s in scored if judge(method, s, threshold)]
    supported = [s for s in scored if s.claim.supported]
    precision = sum(s.claim.supported for s in kept) / len(kept) if kept else 0.0
    recall = sum(judge(method, s, threshold) for s in supported) / len(supported) if supported else 0.0
    cpu = sum(s.cpu for s in scored if reads(method, s))
    return Figures(per_kind, precision, recall, sum(per_kind.values()) / len(per_kind),
                   1000 * cpu / len(scored) if scored else 0.0,
                   sum(judge(method, s, threshold) for s in written) / len(written) if written else float("nan"))


def tune(method: str, development: Sequence[Scored]) -> float:
    """The threshold maximising the development set's mean per-kind accuracy (the lowest of equals)."""
    if method == "overlap":
        return KEEP_SUPPORT
    return max(THRESHOLDS, key=lambda t: (figures(method, development, t).balanced, -t))


def table(scored: dict[str, list[Scored]]) -> list[str]:
    """The report: per set, one row per method at the development set's threshold."""
    thresholds = {m: tune(m, scored[DEVELOPMENT]) for m in METHODS}
    lines = []
    for name, rows in scored.items():
        counts = {k: sum(1 for s in rows if s.claim.kind == k) for k in KINDS}
        counts["of them written by hand"] = sum(1 for s in rows if s.claim.how == "written")
        role = "tuned on" if name == DEVELOPMENT else "held out"
        lines += ["", f"{name} ({role}; " + ", ".join(f"{k} {n}" for k, n in counts.items()) + ")",
                  f"| method | threshold | {' | '.join(KINDS)} | paraphrase by hand | mean | precision | recall | "
                  "reader ms/claim |", "|---|---|" + "---|" * (len(KINDS) + 5)]
        for method in METHODS:
            f = figures(method, rows, thresholds[method])
            t = "-" if method == "overlap" else f"{thresholds[method]:.2f}"
            kinds = " | ".join(f"{f.per_kind.get(k, float('nan')):.2f}" for k in KINDS)
            lines.append(f"| {method} | {t} | {kinds} | {f.written:.2f} | {f.balanced:.2f} | {f.precision:.2f} | "
                         f"{f.recall:.2f} | {f.ms_per_claim:.1f} |")
    return lines
