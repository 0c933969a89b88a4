"""`manage.py bench_scale --queries EVAL.jsonl [--sizes 100000,1000000] [--small-share 0.01] [--keep]`
`manage.py bench_scale --publish-only [--rounds N] [--tail-search 0,2000,20000]`
`manage.py bench_scale --queries EVAL.jsonl --sustained SECONDS [--interval 30] [--publishers 2] [--no-pace]`

ragweb at a million chunks: grows synthetic collections (chat/evaluation/synthetic_corpus.py:
text recombined from a real collection's sentences, vectors clustered around its real
embeddings) beside the real collection to each size in turn, and at each size prints

- the build: rows loaded with COPY (the indexes dropped and built after the load, in parallel,
  with a large maintenance_work_mem), seconds and disk per 100,000 chunks;
- publishing: the ingestion pipeline's own publish step (insert with the BM25 statistics; the HNSW
  insert and the BM25 postings are left to the graph merge, corpus/graph/) of fresh documents into
  the full table, in chunks per second, and the graph merge of what was published, timed apart;
- hybrid, vector and keyword search latency p50/p95/p99/max, one client and 10 concurrent;
- HNSW recall@10 against exact search, over the whole table and within the small collection
  (--small-share of the chunks: the iterative filtered scan);
- MRR@10 of the real questions over all the collections (their source among all the noise);
- PASS/FAIL for the targets of issue 31.

It drops and rebuilds the chunk indexes while loading: run it on a database kept for
benchmarks, never on one serving users. Figures come from this command, never from tests.

--publish-only measures only the publish rate at the table's current size (nothing grown, nothing
searched, no --queries needed): 1 and 2 publishers, --rounds times in turn so a busy machine's
drift falls on both, with the table size, shared_buffers and the load average; with --tail-search,
the hybrid, vector and keyword search latency over the big collection with that many chunks outside the
graph (both sides scan those exactly: the vector side's vec_tail, the keyword side's kw_tail).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import close_old_connections, connection, connections
from django.utils import timezone

from chat.evaluation import sustained_upload
from chat.evaluation.hnsw_recall import recall_at_k
from chat.evaluation.metrics import EvalFormatError, first_source_rank, load_items, mean, percentile, reciprocal_ranks
from chat.evaluation.synthetic_corpus import (
    CHUNKS_PER_DOCUMENT,
    Bases,
    add_synthetic_chunks,
    calibrate_noise,
    drop_bulk_indexes,
    fresh_documents,
    rebuild_indexes,
)
from chat.retrieval import search
from corpus.graph import merge as graph
from corpus.graph.merge import graph_merge, graph_tail_size
from corpus.ingest import pipeline
from corpus.ingest.embed import embed_texts
from corpus.models import Chunk, Collection, Document

BIG_SLUG, SMALL_SLUG = "bench-scale", "bench-scale-small"
MODES = ("hybrid", "vector", "keyword")
CONCURRENT_CLIENTS = 10
PUBLISH_DOCUMENTS = 20
# Publishing documents one at a time (one worker), and as two workers do at once: what the
# database can take from many embedding workers is the second.
PUBLISHERS = (1, 2)
TARGET_HYBRID_P95_MS = 100
TARGET_RECALL = 0.95
TARGET_MAX_MS = 1000
TARGET_PUBLISH_PER_S = 1000
RECALL_QUESTIONS = 40
TAIL_QUESTIONS = 30
# A sustained upload at 1M (issue 42): the tail a search may have to score, and its p95 meanwhile.
TARGET_SUSTAINED_TAIL = 5_000
TARGET_SUSTAINED_P95_MS = 150


@dataclass(frozen=True)
class PublishRun:
    rate: float  # chunks/s through the publish step
    tail: int  # chunks outside the HNSW graph once published
    merge_rate: float  # chunks/s the graph merge then moved into the graph


def _disk_bytes() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT sum(pg_total_relation_size(c)) FROM unnest(ARRAY['corpus_chunk', 'corpus_document', "
                       "'bm25_posting', 'bm25_term_stats', 'bm25_collection_stats']::regclass[]) AS c")
        return int(cursor.fetchone()[0])


def _chunk_count(*collections: Collection) -> int:
    return Chunk.objects.filter(document__collection__in=collections).count()


def _publish_line(publishers: int, run: PublishRun) -> str:
    return (f"publish (pipeline's publish step, {PUBLISH_DOCUMENTS} documents of {CHUNKS_PER_DOCUMENT} chunks, "
            f"{publishers} at a time): {run.rate:,.0f} chunks/s; graph merge of the {run.tail:,}-chunk tail: "
            f"{run.merge_rate:,.0f} chunks/s")


class Command(BaseCommand):
    help = "Benchmark build, publish, search latency, recall and MRR with synthetic chunks up to 1,000,000."

    def add_arguments(self, parser):
        parser.add_argument("--queries",
                            help="Evaluation JSONL whose questions are the queries (not needed with --publish-only).")
        parser.add_argument("--recall-collection", default="django-docs",
                            help="Real collection: the text and vectors synthetic chunks are drawn from.")
        parser.add_argument("--sizes", default="100000,1000000",
                            help="Synthetic chunk counts to grow to and measure at, comma-separated.")
        parser.add_argument("--small-share", type=float, default=0.01,
                            help="Share of the synthetic chunks in the small collection.")
        parser.add_argument("--keep", action="store_true", help="Keep the synthetic collections (and reuse them).")
        parser.add_argument("--seed", type=int, default=11)
        parser.add_argument("--ef", type=int, default=None,
                            help="HNSW ef_search for this run (default: the SEARCH_HNSW_EF setting).")
        parser.add_argument("--publish-only", action="store_true",
                            help="Only the publish rate into the table as it is (1 and 2 publishers).")
        parser.add_argument("--rounds", type=int, default=1, help="With --publish-only: measurements of each.")
        parser.add_argument("--tail-search", default="",
                            help="With --publish-only: also search latency with these many chunks outside the "
                                 "HNSW graph, comma-separated (e.g. 0,2000,20000).")
        parser.add_argument("--sustained", type=float, default=0, metavar="SECONDS",
                            help="Only a sustained upload into the table as it is, for this long: publish rate, "
                                 "merge rate, tail and search p95 per interval (needs --queries).")
        parser.add_argument("--interval", type=float, default=30, help="With --sustained: seconds per line.")
        parser.add_argument("--publishers", type=int, default=2, help="With --sustained: publishing threads.")
        parser.add_argument("--no-pace", action="store_true",
                            help="With --sustained: the bare publish step, without the tail's bound.")
        parser.add_argument("--nice", type=int, default=None,
                            help="With --sustained: the publishers and the merger (threads and Postgres backends) "
                                 "at this nice value (lib.priority), the search client left at its own.")

    def handle(self, *args, queries, recall_collection, sizes, small_share, keep, seed, ef, publish_only, rounds,
               tail_search, sustained, interval, publishers, no_pace, nice, **options):
        real = Collection.objects.filter(slug=recall_collection).first()
        if real is None:
            raise CommandError(f"There is no collection {recall_collection!r}.")
        if sustained:
            if not queries:
                raise CommandError("--queries is required (the questions searched during the upload).")
            if not 0 < sustained <= 24 * 3600 or not 0 < interval <= sustained or not 1 <= publishers <= 16:
                raise CommandError("--sustained must be up to a day, --interval within it, --publishers 1 to 16.")
            if nice is not None and not 0 <= nice <= 19:
                raise CommandError("--nice must be from 0 to 19.")
            try:
                questions = [item.question for item in load_items(Path(queries))]
            except (OSError, EvalFormatError) as exc:
                raise CommandError(str(exc)) from exc
            return self._sustained(real, questions, sustained, interval, publishers, not no_pace, keep, seed, nice)
        if publish_only:
            if not 1 <= rounds <= 100:
                raise CommandError("--rounds must be from 1 to 100.")
            try:
                tails = [int(t) for t in tail_search.split(",") if t.strip()]
            except ValueError as exc:
                raise CommandError(f"--tail-search: {exc}") from exc
            if any(not 0 <= t <= 200_000 for t in tails):
                raise CommandError("--tail-search sizes must be from 0 to 200000 chunks.")
            return self._publish_only(real, rounds, np.random.default_rng(seed), tails)
        if not queries:
            raise CommandError("--queries is required (unless --publish-only).")
        try:
            items = load_items(Path(queries))
            targets = sorted({int(s) for s in sizes.split(",") if s.strip()})
        except (OSError, EvalFormatError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if not targets or targets[0] < 10 * CHUNKS_PER_DOCUMENT or not 0 < small_share < 0.5:
            raise CommandError("Sizes must be at least 1000 chunks and --small-share between 0 and 0.5.")
        if ef is not None:
            if not 1 <= ef <= 1000:
                raise CommandError("--ef must be from 1 to 1000.")
            settings.SEARCH_HNSW_EF = ef  # this process only: the search reads it per statement
        with os.popen("uptime") as uptime:
            self.stdout.write(f"{timezone.now():%Y-%m-%d %H:%M} UTC; {uptime.read().strip()}; "
                              f"hnsw.ef_search {settings.SEARCH_HNSW_EF}")
        rng = np.random.default_rng(seed)
        bases = Bases.of(real)
        sigma, cosine = calibrate_noise(bases, rng)
        self.stdout.write(f"{len(bases.vectors)} real chunks of {real.slug} as bases; recombined texts embedded "
                          f"at mean cosine {cosine:.3f} from their base -> noise sigma {sigma:.4f}")
        big, _ = Collection.objects.get_or_create(slug=BIG_SLUG, defaults={"name": "Benchmark at scale"})
        small, _ = Collection.objects.get_or_create(slug=SMALL_SLUG, defaults={"name": "Benchmark at scale (small)"})
        questions = [item.question for item in items]
        vectors = embed_texts(questions)
        try:
            for size in targets:
                self._grow(big, small, size, small_share, bases, sigma, rng)
                self._measure(real, big, small, items, vectors, bases, rng)
        finally:
            if not keep:
                self.stdout.write("deleting the synthetic collections ...")
                Collection.objects.filter(pk__in=[big.pk, small.pk]).delete()

    def _header(self) -> tuple[int, str]:
        """Print when and at what load the run starts; return the table's chunks and shared_buffers."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM corpus_chunk")
            total = cursor.fetchone()[0]
            cursor.execute("SHOW shared_buffers")
            buffers = cursor.fetchone()[0]
        with os.popen("uptime") as uptime:
            self.stdout.write(f"{timezone.now():%Y-%m-%d %H:%M} UTC; {uptime.read().strip()}")
        return total, buffers

    def _publish_only(self, real, rounds, rng, tails):
        total, buffers = self._header()
        self.stdout.write(f"{total:,} chunks in the table; shared_buffers {buffers}")
        try:
            bases = Bases.of(real)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        # Into the big benchmark collection when there is one; else one made for this run and removed.
        big, made = Collection.objects.get_or_create(slug=BIG_SLUG, defaults={"name": "Benchmark at scale"})
        self.stdout.write(f"{graph_tail_size():,} chunks outside the HNSW graph before the run")
        rates: dict[int, list[float]] = {n: [] for n in PUBLISHERS}
        merges: list[float] = []
        try:
            for _ in range(rounds):
                for publishers in PUBLISHERS:
                    run = self._publish(big, bases, rng, publishers)
                    rates[publishers].append(run.rate)
                    merges.append(run.merge_rate)
                    self.stdout.write(_publish_line(publishers, run))
            if tails:
                self._tail_search(real, big, bases, rng, tails)
        finally:
            if made:
                big.delete()
        for publishers, measured in rates.items():
            best = max(measured)
            self.stdout.write(f"{publishers} publisher(s): median {float(np.median(measured)):,.0f} chunks/s, best "
                              f"{best:,.0f} {self._verdict(best >= TARGET_PUBLISH_PER_S)} "
                              f"(target >= {TARGET_PUBLISH_PER_S})")
        self.stdout.write(f"graph merge: median {float(np.median(merges)):,.0f} chunks/s")
        with os.popen("uptime") as uptime:
            self.stdout.write(f"after: {uptime.read().strip()}")

    def _sustained(self, real, questions, seconds, interval, publishers, paced, keep, seed, nice):
        total, buffers = self._header()
        try:
            bases = Bases.of(real)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        big, made = Collection.objects.get_or_create(slug=BIG_SLUG, defaults={"name": "Benchmark at scale"})
        searched = Collection.objects.filter(slug__in=[real.slug, BIG_SLUG, SMALL_SLUG])
        pacing = f"publishing paced to the merge (tail bound {graph.TAIL_LIMIT:,})" if paced else "publishing unpaced"
        if nice is not None:
            pacing += f", publishers and merger at nice {nice}"
        self.stdout.write(f"{total:,} chunks in the table, {graph_tail_size():,} outside the graph; shared_buffers "
                          f"{buffers}\nsustained upload for {seconds:.0f} s: {publishers} publisher(s) of "
                          f"{CHUNKS_PER_DOCUMENT}-chunk documents, {pacing}; one background merger; one client "
                          f"(a process of its own) searching (hybrid) {searched.count()} collections")
        self.stdout.write(f"{'s':>6} {'published/s':>11} {'merged/s':>9} {'by publishers/s':>15} {'tail':>7} "
                          f"{'tail max':>8} {'searches':>8} {'p50 ms':>8} {'p95 ms':>8}")

        def line(step: sustained_upload.Interval) -> None:
            p50, p95 = percentile(step.latencies, 50), percentile(step.latencies, 95)
            per = step.seconds
            self.stdout.write(f"{step.end:6.0f} {step.published / per:11,.0f} {step.merged / per:9,.0f} "
                              f"{step.by_publishers / per:15,.0f} {step.tail:7,} {step.tail_max:8,} "
                              f"{len(step.latencies):8} {p50:8.1f} {p95:8.1f}")
            self.stdout.flush()

        published: list[int] = []
        quiet = logging.getLogger(pipeline.__name__)
        level = quiet.level
        quiet.setLevel(logging.WARNING)  # not a line per document among the table's
        try:
            steps, published = sustained_upload.run(
                collection=big, searched=searched, bases=bases, questions=questions, seconds=seconds,
                interval=interval, publishers=publishers, paced=paced, seed=seed, report=line, nice=nice)
        finally:
            quiet.setLevel(level)
            if not keep:
                Document.objects.filter(pk__in=published).delete()
                if made:
                    big.delete()
        elapsed = sum(step.seconds for step in steps)
        chunks, merged = sum(step.published for step in steps), sum(step.merged for step in steps)
        latencies = [ms for step in steps for ms in step.latencies]
        tail_max = max(step.tail_max for step in steps)
        p95 = percentile(latencies, 95)
        bounded = tail_max <= TARGET_SUSTAINED_TAIL
        self.stdout.write(
            f"published {chunks:,} chunks in {elapsed:.0f} s ({chunks / elapsed:,.0f}/s), merged {merged:,} "
            f"({merged / elapsed:,.0f}/s); tail at most {tail_max:,} {self._verdict(bounded)} "
            f"(target <= {TARGET_SUSTAINED_TAIL:,}); hybrid p95 one client over the run {p95:.1f} ms "
            f"{self._verdict(p95 < TARGET_SUSTAINED_P95_MS)} (target < {TARGET_SUSTAINED_P95_MS}), "
            f"{len(latencies)} searches")
        if keep:
            self.stdout.write(f"kept the {len(published):,} published documents ({graph_tail_size():,} chunks "
                              "outside the graph)")
        with os.popen("uptime") as uptime:
            self.stdout.write(f"after: {uptime.read().strip()}")

    # -- build ------------------------------------------------------------------------------------

    def _grow(self, big, small, size, small_share, bases, sigma, rng):
        want_small = round(size * small_share)
        have_big, have_small = _chunk_count(big), _chunk_count(small)
        missing = (size - want_small - have_big, want_small - have_small)
        if max(missing) <= 0:
            self.stdout.write(f"\n== {have_big + have_small} synthetic chunks already there")
            return
        self.stdout.write(f"\n== growing to {size} synthetic chunks ({want_small} in the small collection)")
        disk_before, started = _disk_bytes(), time.perf_counter()
        definitions = drop_bulk_indexes()
        try:
            added = 0
            for collection, count in zip((big, small), missing, strict=True):
                if count <= 0:
                    continue

                def report(n, base=added):
                    self.stdout.write(f"\r  loaded {base + n:,} / {sum(max(m, 0) for m in missing):,}", ending="")
                    self.stdout.flush()

                add_synthetic_chunks(collection, count, bases, sigma, rng, progress=report)
                added += count
            loaded = time.perf_counter() - started
            self.stdout.write("")
        finally:
            index_started = time.perf_counter()
            rebuild_indexes(definitions)
            indexed = time.perf_counter() - index_started
        with connection.cursor() as cursor:
            for table in ("corpus_chunk", "bm25_posting", "corpus_document"):
                cursor.execute(f"VACUUM (ANALYZE) {table}")
        grown = added / 100_000
        disk = (_disk_bytes() - disk_before) / 2**20
        self.stdout.write(f"  load {loaded:.0f} s ({loaded / grown:.0f} s per 100k), indexes built after it "
                          f"{indexed:.0f} s, disk {disk:+,.0f} MiB ({disk / grown:,.0f} MiB per 100k chunks)")

    # -- measurements -------------------------------------------------------------------------------

    def _measure(self, real, big, small, items, vectors, bases, rng):
        everything = Collection.objects.filter(pk__in=[real.pk, big.pk, small.pk])
        total = _chunk_count(real, big, small)
        self.stdout.write(f"\n-- {total:,} chunks searched ({_chunk_count(small):,} in the small collection)")
        for publishers in PUBLISHERS:
            published = self._publish(big, bases, rng, publishers)
            self.stdout.write(f"{_publish_line(publishers, published)}  "
                              f"{self._verdict(published.rate >= TARGET_PUBLISH_PER_S)} "
                              f"(target >= {TARGET_PUBLISH_PER_S})")
        with connection.cursor() as cursor:
            # The published documents were merged, then deleted: their entries stay in the HNSW graph, dead, until
            # a vacuum (autovacuum in time), and a small table's searches would walk mostly those.
            cursor.execute("VACUUM corpus_chunk")
        questions = [item.question for item in items]
        search(query="warm up", collections=everything, k=10)
        slowest = 0.0
        self.stdout.write(f"{'mode':8} {'clients':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'max ms':>8} "
                          f"{'per s':>7}")
        hybrid_single_p95, ranks = None, {}
        for mode in MODES:
            for clients in (1, CONCURRENT_CLIENTS):
                latencies, per_second, found = self._run(questions, everything, mode, clients)
                slowest = max(slowest, max(latencies))
                self.stdout.write(f"{mode:8} {clients:7} {percentile(latencies, 50):8.1f} "
                                  f"{percentile(latencies, 95):8.1f} {percentile(latencies, 99):8.1f} "
                                  f"{max(latencies):8.1f} {per_second:7.1f}")
                if mode == "hybrid" and clients == 1:
                    hybrid_single_p95 = percentile(latencies, 95)
                    ranks = {i: first_source_rank(sources, items[i].source) for i, sources in found.items()}
        mrr = mean(reciprocal_ranks(ranks.values()))
        sample = vectors[:RECALL_QUESTIONS]
        whole = recall_at_k(sample, 10)
        within = recall_at_k(sample, 10, [small.pk])
        self.stdout.write(f"hybrid MRR@10 of the {len(ranks)} questions over all {total:,} chunks: {mrr:.3f}")
        self.stdout.write(f"HNSW recall@10 vs exact ({len(sample)} questions): whole table {whole:.3f} "
                          f"{self._verdict(whole >= TARGET_RECALL)}; within the small collection {within:.3f} "
                          f"{self._verdict(within >= TARGET_RECALL)} (target >= {TARGET_RECALL})")
        fast = hybrid_single_p95 < TARGET_HYBRID_P95_MS
        self.stdout.write(f"hybrid p95 one client {hybrid_single_p95:.1f} ms "
                          f"{self._verdict(fast)} (target < {TARGET_HYBRID_P95_MS}); "
                          f"slowest query {slowest:.0f} ms {self._verdict(slowest < TARGET_MAX_MS)} "
                          f"(target < {TARGET_MAX_MS})")

    def _verdict(self, ok: bool) -> str:
        return self.style.SUCCESS("PASS") if ok else self.style.ERROR("FAIL")

    @staticmethod
    def _run(questions, collections, mode, clients):
        """Each client (a thread with its own connection) searches every question once, from its
        own starting point. (latencies ms, searches per second, {question index: sources})."""
        latencies: list[float] = []
        found: dict[int, list[str]] = {}
        lock = threading.Lock()

        def client(offset: int) -> None:
            try:
                for step in range(len(questions)):
                    i = (offset + step) % len(questions)
                    started = time.perf_counter()
                    result = search(query=questions[i], collections=collections, mode=mode, k=10, rse="balanced")
                    elapsed = (time.perf_counter() - started) * 1000
                    with lock:
                        latencies.append(elapsed)
                        found.setdefault(i, [c.document.source for c in result.chunks])
            finally:
                connections.close_all()

        started = time.perf_counter()
        if clients == 1:
            client(0)
            close_old_connections()
        else:
            threads = [threading.Thread(target=client, args=(n * len(questions) // clients,)) for n in range(clients)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
        return latencies, len(latencies) / (time.perf_counter() - started), found

    @staticmethod
    def _publish_all(pairs, publishers: int) -> float:
        """Publish `pairs` through the pipeline's publish step, `publishers` threads (own connections)
        taking them in turn; the seconds it took."""
        quiet = logging.getLogger(pipeline.__name__)
        level = quiet.level
        quiet.setLevel(logging.WARNING)  # not a line per document
        try:
            def publish(share) -> None:
                try:
                    for document, built in share:
                        pipeline._publish(document.pk, built)
                finally:
                    connections.close_all()  # this thread's own

            threads = [threading.Thread(target=publish, args=(pairs[n::publishers],)) for n in range(publishers)]
            started = time.perf_counter()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            return time.perf_counter() - started
        finally:
            quiet.setLevel(level)

    def _publish(self, collection, bases, rng, publishers: int) -> PublishRun:
        """Chunks per second through the pipeline's publish step (delete the old chunks, insert the
        new ones with their BM25 maintenance, outside the HNSW graph; update the document), timed
        around it only; then the graph merge of what was published (corpus.graph.merge), timed
        apart. The documents are deleted afterwards."""
        pairs = fresh_documents(collection, bases, rng, PUBLISH_DOCUMENTS)
        try:
            elapsed = self._publish_all(pairs, publishers)
            tail = graph_tail_size()
            merged = graph_merge(seconds=float("inf"))
        finally:
            Document.objects.filter(pk__in=[d.pk for d, _ in pairs]).delete()
        chunks = PUBLISH_DOCUMENTS * CHUNKS_PER_DOCUMENT
        return PublishRun(chunks / elapsed, tail, merged.merged / merged.seconds if merged.merged else 0.0)

    def _tail_search(self, real, big, bases, rng, tails: list[int]) -> None:
        """Search latency (hybrid, vector and keyword, one client) over the big collection with `tails`
        chunks published outside the graph; the tail's documents are deleted afterwards."""
        questions = [bases.recombine(int(i), rng) for i in rng.integers(len(bases.vectors), size=TAIL_QUESTIONS)]
        search(query="warm up", collections=Collection.objects.filter(pk=big.pk), k=10)
        published: list[Document] = []
        self.stdout.write(f"{'tail':>7} {'mode':8} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
        try:
            for tail in sorted(tails):
                missing = (tail - graph_tail_size()) // CHUNKS_PER_DOCUMENT
                if missing > 0:
                    pairs = fresh_documents(big, bases, rng, missing)
                    self._publish_all(pairs, 1)
                    published += [d for d, _ in pairs]
                with connection.cursor() as cursor:
                    cursor.execute("ANALYZE corpus_chunk")
                for mode in MODES:
                    latencies, _, _ = self._run(questions, Collection.objects.filter(pk=big.pk), mode, 1)
                    self.stdout.write(f"{graph_tail_size():7,} {mode:8} {percentile(latencies, 50):8.1f} "
                                      f"{percentile(latencies, 95):8.1f} {max(latencies):8.1f}")
        finally:
            Document.objects.filter(pk__in=[d.pk for d in published]).delete()
