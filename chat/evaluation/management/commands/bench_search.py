"""`manage.py bench_search [--chunks 100000] [--queries EVAL.jsonl] [--recall-collection SLUG] [--keep]`

Latency of the search stages at scale, beside a bare pgvector HNSW top-k query in the same run,
and HNSW recall@10 against exact search on real embeddings.

Builds a scratch collection of synthetic chunks (text drawn from a Zipf distribution over the
words of the real corpus, so keyword queries match as they would on real text; random unit
embeddings), searches it together with the real collection, and deletes it afterwards unless
--keep. Figures come from this command, never from tests.
"""

from __future__ import annotations

import random
import re
import time
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connection, transaction

from chat.evaluation.hnsw_recall import bare_hnsw, recall_at_k
from chat.evaluation.metrics import EvalFormatError, first_source_rank, load_items, mean, percentile, reciprocal_ranks
from chat.retrieval import search
from chat.retrieval.query_batching import embed_queries
from corpus.ingest.embed import embed_texts
from corpus.models import Chunk, Collection, Document

SCRATCH_SLUG = "bench-scratch"
CHUNKS_PER_DOCUMENT = 100
WORDS_PER_CHUNK = 130
_WORD = re.compile(r"[A-Za-z]{3,}")


def _vocabulary(collection: Collection, size: int = 20000) -> list[str]:
    counts: dict[str, int] = {}
    for text in Chunk.objects.filter(document__collection=collection).values_list("text", flat=True)[:3000]:
        for word in _WORD.findall(text.lower()):
            counts[word] = counts.get(word, 0) + 1
    words = sorted(counts, key=counts.get, reverse=True)[:size]
    if len(words) < 100:
        raise CommandError("The real collection has too little text to draw a vocabulary from.")
    return words


def _build_scratch(n_chunks: int, words: list[str], stdout) -> Collection:
    Collection.objects.filter(slug=SCRATCH_SLUG).delete()
    scratch = Collection.objects.create(slug=SCRATCH_SLUG, name="Benchmark scratch")
    rng = np.random.default_rng(7)
    zipf_weights = 1.0 / np.arange(1, len(words) + 1)
    zipf_weights /= zipf_weights.sum()
    n_docs = (n_chunks + CHUNKS_PER_DOCUMENT - 1) // CHUNKS_PER_DOCUMENT
    started = time.perf_counter()
    for d in range(n_docs):
        count = min(CHUNKS_PER_DOCUMENT, n_chunks - d * CHUNKS_PER_DOCUMENT)
        pieces = []
        for _ in range(count):
            picked = rng.choice(len(words), size=WORDS_PER_CHUNK, p=zipf_weights)
            pieces.append(" ".join(words[i] for i in picked) + ". ")
        vectors = rng.standard_normal((count, settings.EMBEDDING_DIMENSIONS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        with transaction.atomic():
            doc = Document.objects.create(collection=scratch, source=f"synthetic/{d:05}.txt", title=f"Synthetic {d}",
                                          text="".join(pieces), status=Document.Status.READY)
            offset, rows = 0, []
            for i, piece in enumerate(pieces):
                # In the HNSW graph at once: the benchmark measures the graph's searches, not a tail's.
                rows.append(Chunk(document=doc, chunk_index=i, text=piece, start=offset, end=offset + len(piece),
                                  embedding=vectors[i].tolist(), in_graph=True))
                offset += len(piece)
            Chunk.objects.bulk_create(rows)
        if (d + 1) % 100 == 0:
            stdout.write(f"  {min((d + 1) * CHUNKS_PER_DOCUMENT, n_chunks)} chunks "
                         f"({time.perf_counter() - started:.0f}s)")
    return scratch


class Command(BaseCommand):
    help = "Benchmark search latency at scale and HNSW recall@10 (scratch collection, removed afterwards)."

    def add_arguments(self, parser):
        parser.add_argument("--chunks", type=int, default=100_000)
        parser.add_argument("--queries", required=True, help="Evaluation JSONL whose questions are the queries.")
        parser.add_argument("--recall-collection", default="django-docs",
                            help="Real collection: vocabulary source and HNSW recall measurement.")
        parser.add_argument("--k", type=int, default=10)
        parser.add_argument("--repeat", type=int, default=2, help="Passes over the queries.")
        parser.add_argument("--keep", action="store_true", help="Keep the scratch collection (and reuse it).")
        parser.add_argument("--build-only", action="store_true", help="Build (and keep) the scratch collection only.")

    def handle(self, *args, chunks: int, queries: str, recall_collection: str, k: int, repeat: int, keep: bool,
               build_only: bool, **options):
        real = Collection.objects.filter(slug=recall_collection).first()
        if real is None:
            raise CommandError(f"There is no collection {recall_collection!r}.")
        try:
            items = load_items(Path(queries))
        except (OSError, EvalFormatError) as exc:
            raise CommandError(str(exc)) from exc
        questions = [item.question for item in items]
        vectors = embed_texts(questions)

        scratch = Collection.objects.filter(slug=SCRATCH_SLUG).first()
        if scratch is None or Chunk.objects.filter(document__collection=scratch).count() != chunks:
            self.stdout.write(f"building {chunks} synthetic chunks ...")
            scratch = _build_scratch(chunks, _vocabulary(real), self.stdout)
        if build_only:
            return
        with connection.cursor() as cursor:
            # As autovacuum would in time: statistics, and the visibility map that lets BM25 read
            # postings from the index alone.
            cursor.execute("VACUUM (ANALYZE) bm25_posting")
            cursor.execute("ANALYZE corpus_chunk; ANALYZE corpus_document")
            cursor.execute("SELECT count(*) FROM corpus_chunk")
            total_chunks = cursor.fetchone()[0]
        try:
            self._latency(scratch, real, items, vectors, k, repeat, total_chunks)
            self._recall(real, vectors, k)
        finally:
            if not keep:
                Collection.objects.filter(pk=scratch.pk).delete()
                self.stdout.write("scratch collection deleted")

    def _latency(self, scratch, real, items, vectors, k, repeat, total_chunks):
        questions = [item.question for item in items]
        source_ranks: dict[int, int | None] = {}
        both = Collection.objects.filter(pk__in=[scratch.pk, real.pk])
        stages: dict[str, list[float]] = {}
        bare: dict[str, list[float]] = {"warm": [], "after embedding": []}
        search(query="warm up", collections=both, k=k)
        order = list(range(len(questions))) * repeat
        random.Random(3).shuffle(order)
        for n, i in enumerate(order):
            # Whatever runs first for a query reads the pages its HNSW path visits; the runs after
            # find them in shared buffers. So the search and the bare query take turns going first.
            if n % 2:
                self._bare(questions[i], vectors[i], k, n, bare)
            result = search(query=questions[i], collections=both, k=k, rse="balanced")
            timings = result.timings_ms
            for stage, ms in timings.items():
                stages.setdefault(stage, []).append(ms)
            stages.setdefault("total-embed", []).append(timings["total"] - timings["embed"])
            # Quality beside the synthetic chunks: the real documents must still come first.
            source_ranks[i] = first_source_rank([c.document.source for c in result.chunks], items[i].source)
            if not n % 2:
                self._bare(questions[i], vectors[i], k, n, bare)
        self.stdout.write(f"\nlatency over {len(order)} queries, {total_chunks} chunks in the table, "
                          f"hybrid k={k}, RSE balanced, ef_search={settings.SEARCH_HNSW_EF}")
        self.stdout.write(f"{'stage':30} {'p50 ms':>8} {'p95 ms':>8}")
        for stage in ["embed", "candidates", "fusion", "rse", "total", "total-embed"]:
            values = stages.get(stage)
            if values:
                self.stdout.write(f"{stage:30} {percentile(values, 50):8.2f} {percentile(values, 95):8.2f}")
        self.stdout.write(f"{'bare HNSW top-k':30} {percentile(bare['warm'], 50):8.2f} "
                          f"{percentile(bare['warm'], 95):8.2f}   (sent as the search sends its statements)")
        after = bare["after embedding"]
        self.stdout.write(f"{'  after embedding its query':30} {percentile(after, 50):8.2f} "
                          f"{percentile(after, 95):8.2f}   (right after the model embedded the query)")
        without_embedding = percentile(stages["total-embed"], 50)
        self.stdout.write(f"total without embedding / bare HNSW at p50: "
                          f"{without_embedding / percentile(bare['warm'], 50):.1f}x "
                          f"({without_embedding / percentile(after, 50):.1f}x against the bare query "
                          "after embedding)")
        mrr = mean(reciprocal_ranks(source_ranks.values()))
        self.stdout.write(f"hybrid MRR@{k} of the {len(source_ranks)} questions searching both collections "
                          f"(their source among {total_chunks} chunks): {mrr:.3f}")

    @staticmethod
    def _bare(question, vector, k, n, bare):
        for way in ("warm", "after embedding") if n % 2 else ("after embedding", "warm"):
            if way == "after embedding":
                # A search's statements run right after the model has had the cores and their
                # caches (measured: the same statement 0.7-0.9 ms slower than when re-run): so
                # does this one, the embedding not timed.
                embed_queries([question])
            bare[way].append(bare_hnsw(vector, k)[0])

    def _recall(self, real, vectors, k):
        filtered = recall_at_k(vectors, k, [real.pk])
        whole = recall_at_k(vectors, k)
        self.stdout.write(f"\nHNSW recall@{k} vs exact, real embeddings ({len(vectors)} questions): "
                          f"filtered to {real.slug}: {filtered:.3f}; whole table: {whole:.3f}")
