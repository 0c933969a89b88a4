"""`manage.py reader_probe QUESTIONS.jsonl --collection SLUG [--unanswerable U.jsonl] [--model DIR ...]`

How well reader models choose among the candidates the answer would give them, beside the heuristic
that shortlists them, without writing answers: for every question, the app's search and candidate
sentences (as the answer pipeline makes them), the heuristic's SHORTLIST best, and each model's
probabilities for them. Prints, per scorer:

- first holds evidence: answerable questions whose top candidate holds the evidence phrases (of
  those whose shortlist holds it at all: what choosing can win);
- AUC answerable/unanswerable: the chance the best score of an answerable question is above that
  of a near-topic unanswerable one (what a "not found" threshold can separate);
- at the reader's thresholds (chat.answering.reading.ANSWERS): near-topic "not found" and false
  "not found" rates; "sure right": of the questions whose best probability is SURE or more, the
  share whose top candidate holds the evidence (a near-topic question answered "sure" is wrong);
- near-topic "not found" at 5% false: the rate a threshold would reach that says "not found" for
  one answerable question in twenty on this set (an operating point of the AUC, read off the set
  itself: a threshold for the app is chosen on the development set, not here).

"heuristic top 3, M best" lets model M choose among the heuristic's three best candidates and say
how sure it is of its choice.

`--dump FILE` writes each question's shortlist scores as JSON lines (answerable or not, which
candidates hold the evidence, the heuristic's and each model's scores), to try combinations of them
without searching again.

A model is a directory holding reader.onnx and tokenizer.json (default: the committed reader/model),
so that a newly trained model is measured beside the shipped one in one run.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from django.core.management.base import BaseCommand, CommandError

from chat.answering import extractive, pipeline, reading
from chat.answering.citations import build_citations
from chat.evaluation.answer_sets import load_unanswerable
from chat.evaluation.metrics import EvalFormatError, coverage, load_items
from chat.evaluation.reader_training.train import auc
from corpus.models import Collection
from reader.runtime import MODEL_DIR, Reader


def shortlist(question: str, collections) -> tuple[list[str], list[str], np.ndarray]:
    """The SHORTLIST candidates the reader would read, best-by-heuristic first: (plain texts for the
    evidence check, the reader's candidate texts, the heuristic's scores)."""
    result = pipeline._search(question, collections, "balanced")
    citations = build_citations(result)
    found = extractive.candidates(citations, pipeline.retrieved_hits(result), rows=True)
    if not found:
        return [], [], np.zeros(0)
    scored = extractive.score_sentences(question, found, query_vector=pipeline.question_vector(result, question))
    order, befores, texts = reading.shortlist(found, scored.scores)
    plain = [(found[b].text + " " if b is not None else "") + found[i].text
             for i, b in zip(order, befores, strict=True)]
    return plain, texts, np.array([scored.scores[i] for i in order], dtype=float)


def _best_of_top(scores: dict[str, np.ndarray], name: str, k: int) -> tuple[int, float]:
    """Model `name`'s choice among the heuristic's k best candidates, and its probability."""
    top = [int(i) for i in np.argsort(-scores["heuristic"])[:k]]
    chosen = max(top, key=lambda i: scores[name][i])
    return chosen, float(scores[name][chosen])


def at_false_rate(answerable: list[float], unanswerable: list[float], rate: float = 0.05) -> float:
    """The share of `unanswerable` below the threshold under which `rate` of `answerable` fall."""
    if not answerable or not unanswerable:
        return float("nan")
    threshold = float(np.quantile(np.array(answerable), rate, method="lower"))
    return _rate([b < threshold for b in unanswerable])


def _rate(values: list[bool]) -> float:
    return sum(values) / len(values) if values else float("nan")


class Command(BaseCommand):
    help = "Compare reader models and the heuristic on the candidates of an answer set (no answers written)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("eval_file", type=Path, help="Answerable questions with evidence (../shared/eval format).")
        parser.add_argument("--collection", required=True)
        parser.add_argument("--unanswerable", type=Path, help="Near-topic unanswerable questions (answer-set format).")
        parser.add_argument("--model", type=Path, action="append", default=[],
                            help="A directory with reader.onnx and tokenizer.json (repeat; default reader/model).")
        parser.add_argument("--dump", type=Path, help="Write each question's shortlist scores here (JSON lines).")

    def handle(self, *args, eval_file: Path, collection: str, unanswerable: Path | None, model: list[Path],
               dump: Path | None = None, **options) -> None:
        collections = Collection.objects.filter(slug=collection)
        if not collections.exists():
            raise CommandError(f"No collection {collection!r}.")
        try:
            items = [i for i in load_items(eval_file) if i.evidence]
            unanswered = load_unanswerable(unanswerable) if unanswerable else []
        except (OSError, EvalFormatError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        models = {}
        for folder in model or [MODEL_DIR]:
            if not (folder / "reader.onnx").exists() or not (folder / "tokenizer.json").exists():
                raise CommandError(f"{folder} holds no reader.onnx and tokenizer.json.")
            models[str(folder)] = Reader(folder / "reader.onnx", folder / "tokenizer.json")
        # Each scorer's verdict on a shortlist: (the candidate it puts first, how likely it says that
        # one answers). "heuristic order, M sure": the heuristic chooses, model M says how sure (the
        # auto scorer's prose answers, were the reader to give them their confidence).
        verdicts = {"heuristic": lambda s: (int(np.argmax(s["heuristic"])), float(s["heuristic"].max()))}
        for name in models:
            verdicts[name] = lambda s, name=name: (int(np.argmax(s[name])), float(s[name].max()))
            verdicts[f"heuristic order, {Path(name).name} sure"] = (
                lambda s, name=name: (int(np.argmax(s["heuristic"])), float(s[name][int(np.argmax(s["heuristic"]))])))
            verdicts[f"heuristic top 3, {Path(name).name} best"] = lambda s, name=name: _best_of_top(s, name, 3)
        first: dict[str, list[bool]] = {s: [] for s in verdicts}
        sure_right: dict[str, list[bool]] = {s: [] for s in verdicts}
        best: dict[str, tuple[list[float], list[float]]] = {s: ([], []) for s in verdicts}
        reachable, dumped = 0, []
        for answerable_, question, evidence in [(True, i.question, i.evidence) for i in items] + [
                (False, u.question, ()) for u in unanswered]:
            plain, texts, heuristic = shortlist(question, collections)
            holds = [answerable_ and (coverage(list(evidence), p) or 0.0) >= 0.5 for p in plain]
            reachable += any(holds)
            scores = {"heuristic": heuristic} | {name: r.score(question, texts) for name, r in models.items()}
            dumped.append({"question": question, "answerable": answerable_, "holds": holds,
                           "scores": {name: [round(float(v), 5) for v in values] for name, values in scores.items()}})
            for name, verdict in verdicts.items():
                top, confidence = verdict(scores) if texts else (0, 0.0)
                best[name][0 if answerable_ else 1].append(confidence)
                if any(holds):
                    first[name].append(holds[top])
                if texts and confidence >= reading.SURE:
                    sure_right[name].append(holds[top])
        if dump:
            dump.write_text("".join(json.dumps(row) + "\n" for row in dumped))
        self.stdout.write(f"{len(items)} answerable questions ({reachable} with the evidence in the shortlist of "
                          f"{reading.SHORTLIST}), {len(unanswered)} near-topic unanswerable")
        self.stdout.write(f"{'scorer':<44}{'first holds evidence':>22}{'AUC ans/unans':>15}"
                          f"{'near-topic not found':>22}{'false not found':>17}{'sure right':>12}"
                          f"{'nt NF at 5% false':>19}")
        for name in verdicts:
            answerable, unanswerable_ = best[name]
            labels = np.array([1] * len(answerable) + [0] * len(unanswerable_))
            separation = auc(labels, np.array(answerable + unanswerable_)) if unanswerable_ else float("nan")
            if name == "heuristic":
                rates = f"{'-':>22}{'-':>17}{'-':>12}"
            else:
                rates = (f"{_rate([b < reading.ANSWERS for b in unanswerable_]):>22.2f}"
                         f"{_rate([b < reading.ANSWERS for b in answerable]):>17.2f}"
                         f"{_rate(sure_right[name]):>12.2f}")
            operating = at_false_rate(answerable, unanswerable_)
            self.stdout.write(f"{name[-44:]:<44} {_rate(first[name]):>21.2f}{separation:>15.2f}{rates}"
                              f"{operating:>19.2f}")
