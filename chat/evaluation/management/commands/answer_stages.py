"""`manage.py answer_stages EVAL.jsonl --collection SLUG [--limit N] [--rounds 2]`

The extractive answer's cost per stage, over the questions of an evaluation set (the ../shared/eval
format): search (hybrid + RSE, as the answer pipeline searches), numbering the sources, splitting
them into sentences, the sentence vectors, scoring, the reader (CPU milliseconds of its one
inference thread for what the answer asks of it: under the auto scorer, reading the shortlist when a
table row is among the best candidates, otherwise rating the best sentence), choosing, rendering and
pinning pages; then, apart from the total, "shortlist": the CPU of reading the whole shortlist, timed
on every question (what an answer whose candidates hold a row costs). Each round asks every question
once; sentence vectors come from the shared store (chat.answering.sentence_vectors, filled at
ingestion and by earlier answers). Prints the mean and p95 milliseconds of each stage per round, and
how many sentence vectors were found stored and how many had to be embedded.
"""

from __future__ import annotations

import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.answering import extractive, pipeline, reading, sentence_vectors
from chat.answering.citations import build_citations
from chat.answering.support import pin_pages
from chat.evaluation.metrics import EvalFormatError, load_items
from corpus.models import Collection

STAGES = ("search", "sources", "split", "vectors", "scoring", "reader", "choose", "render", "pages", "total",
          "shortlist")


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def time_answer(question: str, collections) -> dict[str, float]:
    """Milliseconds per stage of one extractive answer (the pipeline's own functions, in its order)."""
    timings: dict[str, float] = {}
    t0 = t = time.perf_counter()
    result = pipeline._search(question, collections, "balanced")
    timings["search"] = _ms(t)
    t = time.perf_counter()
    citations = build_citations(result)
    hits = pipeline.retrieved_hits(result)
    timings["sources"] = _ms(t)
    t = time.perf_counter()
    found = extractive.candidates(citations, hits, rows=True)
    timings["split"] = _ms(t)
    keys = {sentence_vectors.digest(extractive.scored_text(s)) for s in found}
    known = len(sentence_vectors.stored(settings.EMBEDDING_MODEL, list(keys)))  # not timed: counts only
    t = time.perf_counter()
    vectors = extractive._model_vectors(question, found, query_vector=pipeline.question_vector(result, question))
    timings["vectors"] = _ms(t)
    t = time.perf_counter()
    scored = extractive.score_sentences(question, found, embed=lambda query, texts: vectors)
    timings["scoring"] = _ms(t)
    scorer = reading.current()
    timings["reader"] = 0.0
    if scorer != reading.HEURISTIC and found:
        # The reader's CPU (one inference thread; target <= 100 ms an answer) for what this answer asks
        # of it, as extractive.select_quotes does: read the shortlist, or rate the best sentence.
        ranked = sorted(range(len(found)), key=lambda i: -scored.scores[i])
        cpu = time.thread_time()
        if scorer == reading.READER or any(found[i].row for i in ranked[:reading.ROW_NEAR_TOP]):
            reading.read(question, found, scored.scores, max_chars=extractive.MAX_CHARS)
        else:
            reading.rate(question, found, ranked[0])
        timings["reader"] = (time.thread_time() - cpu) * 1000
    t = time.perf_counter()
    chosen = extractive.choose(found, scored) if found else []
    timings["choose"] = _ms(t)
    t = time.perf_counter()
    coverage = extractive.question_coverage(question, citations, found)
    text = extractive.render_quotes(extractive.Quotes(tuple(chosen), coverage), citations)
    timings["render"] = _ms(t)
    t = time.perf_counter()
    pin_pages(citations, text)
    timings["pages"] = _ms(t)
    timings["total"] = _ms(t0)
    timings["shortlist"] = 0.0
    if scorer != reading.HEURISTIC and found:
        cpu = time.thread_time()
        reading.read(question, found, scored.scores, max_chars=extractive.MAX_CHARS)
        timings["shortlist"] = (time.thread_time() - cpu) * 1000
    timings["sentences"] = len(found)
    timings["stored"], timings["embedded"] = known, len(keys) - known
    return timings


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


class Command(BaseCommand):
    help = "Time the extractive answer per stage (search, split, sentence vectors, scoring, rendering)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("eval_file", type=Path, help="JSONL questions (the ../shared/eval format).")
        parser.add_argument("--collection", required=True, help="Slug of the collection holding the corpus.")
        parser.add_argument("--limit", type=int, help="Only the first N questions.")
        parser.add_argument("--rounds", type=int, default=2, help="Times each question is asked (default 2).")

    def handle(self, *args, eval_file: Path, collection: str, limit: int | None, rounds: int, **options) -> None:
        collections = Collection.objects.filter(slug=collection)
        if not collections.exists():
            raise CommandError(f"No collection {collection!r}.")
        try:
            items = load_items(eval_file)[:limit]
        except (OSError, EvalFormatError) as exc:
            raise CommandError(str(exc)) from exc
        if not items or rounds < 1:
            raise CommandError("Nothing to time: no questions, or --rounds below 1.")
        pipeline._search("warm up the model and the connection", collections, "balanced")
        header = (f"{'round':<8}" + "".join(f"{stage:>11}" for stage in STAGES)
                  + f"{'sentences':>11}{'stored':>8}{'embedded':>9}")
        self.stdout.write(f"{len(items)} questions, mean (p95) ms per stage; sentence vectors found stored "
                          "and embedded (distinct texts, all questions)")
        self.stdout.write(header)
        for round_number in range(1, rounds + 1):
            runs = [time_answer(item.question, collections) for item in items]
            cells = "".join(f"{sum(r[s] for r in runs) / len(runs):>6.1f}({_p95([r[s] for r in runs]):>3.0f})"
                            for s in STAGES)
            sentences = sum(r["sentences"] for r in runs) / len(runs)
            stored = sum(r["stored"] for r in runs)
            embedded = sum(r["embedded"] for r in runs)
            self.stdout.write(f"{round_number:<8}{cells}{sentences:>11.0f}{stored:>8}{embedded:>9}")
