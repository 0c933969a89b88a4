"""`manage.py bench_workers [PATH] [--limit N] [--setups pinned1,...] [--concurrency N]`

Does ingestion grow with workers? Starts real Celery workers (the command `make run` starts, with
its pool processes per worker: WORKER_CONCURRENCY, or --concurrency to compare others) against
this settings' broker and database, ingests the same files into a fresh collection
per setup, and times from the upload to the last document ready:

- `pinned1`: one worker pinned to CPU 0 with one torch thread;
- `pinned2`: two such workers, pinned to CPUs 0 and 1;
- `sharedN`: N workers, not pinned, with the default thread settings, sharing every CPU.

Beside them, bare SentenceTransformer.encode() of the very same chunk inputs in this process: on
CPU 0 with one thread (what `pinned1` can reach) and on every CPU (what the shared setups can
reach). Checks that every setup ends with every document ready and the same chunks (nothing lost
or duplicated). No other worker may consume the broker's queue while it runs: `make bench-workers`
runs it on Redis databases of its own (RAGWEB_REDIS_DB=6), apart from `make run`'s and the tests'.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Count, Max

from chat.evaluation.management.commands.bench_ingest import DEFAULT_CORPUS, DEMO_CORPUS
from corpus import services
from corpus.ingest import embed as embedding
from corpus.ingest import pipeline
from corpus.management.commands.ingest import iter_files
from corpus.models import Chunk, Collection, Document

SETUPS = {"pinned1": (1, True), "pinned2": (2, True), "shared1": (1, False), "shared2": (2, False),
          "shared4": (4, False)}
READY_TIMEOUT_S = 3600
WARM_UP = "warm-up/"  # sources of the documents that warm the workers up, never counted


def _worker(n: int, pinned: bool, concurrency: int) -> subprocess.Popen:
    env = dict(os.environ, CELERY_TASK_ALWAYS_EAGER="0", WORKER_CONCURRENCY=str(concurrency))
    command = [sys.executable, "-m", "celery", "-A", "ragweb", "worker", "--loglevel", "WARNING",
               "--hostname", f"bench-workers-{n}@%h", "--without-gossip", "--without-mingle"]
    if pinned:
        env["EMBEDDING_THREADS"] = "1"
        command = ["taskset", "--cpu-list", str(n % os.cpu_count()), *command]
    return subprocess.Popen(command, env=env, cwd=settings.BASE_DIR, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def _stop(workers: list[subprocess.Popen]) -> None:
    for worker in workers:
        worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()


def _wait_ready(collection: Collection, count: int, workers: list[subprocess.Popen]) -> None:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while True:
        done = Document.objects.filter(collection=collection,
                                       status__in=[Document.Status.READY, Document.Status.FAILED]).count()
        if done >= count:
            return
        dead = [w for w in workers if w.poll() is not None]
        if dead:
            raise CommandError(f"a worker exited: {dead[0].stderr.read().decode(errors='replace')[-2000:]}")
        if time.monotonic() > deadline:
            raise CommandError(f"only {done} of {count} documents ready after {READY_TIMEOUT_S} s")
        time.sleep(0.2)


def _chunk_shape(collection: Collection) -> dict[str, tuple[int, int]]:
    """Per document source: (chunks, highest chunk_index + 1); equal when nothing is lost or doubled."""
    rows = (Chunk.objects.filter(document__collection=collection).exclude(document__source__startswith=WARM_UP)
            .values("document__source")
            .annotate(n=Count("id"), top=Max("chunk_index")))
    return {r["document__source"]: (r["n"], r["top"] + 1) for r in rows}


class Command(BaseCommand):
    help = "Benchmark ingestion with 1 and 2 pinned workers and 1/2/4 shared workers against bare encode."

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", type=Path, default=None,
                            help=f"Corpus folder (default {DEFAULT_CORPUS} if present, else demo/docs/).")
        parser.add_argument("--limit", type=int, default=120, help="Only the first N files.")
        parser.add_argument("--setups", default=",".join(SETUPS))
        parser.add_argument("--keep", action="store_true", help="Keep the scratch collections.")
        parser.add_argument("--concurrency", type=int, default=settings.CELERY_WORKER_CONCURRENCY,
                            help="Pool processes per worker: documents it builds at once (default WORKER_CONCURRENCY).")

    def handle(self, *args, path, limit, setups, keep, concurrency, **options):
        path = path or (DEFAULT_CORPUS if DEFAULT_CORPUS.is_dir() else DEMO_CORPUS)
        names = [s.strip() for s in setups.split(",") if s.strip()]
        unknown = [s for s in names if s not in SETUPS]
        if unknown or not names:
            raise CommandError(f"Unknown setup(s) {unknown}; use some of {', '.join(SETUPS)}.")
        if settings.CELERY_TASK_ALWAYS_EAGER:
            raise CommandError("CELERY_TASK_ALWAYS_EAGER is set: the workers would never see a task.")
        if settings.REDIS_DB == 0 and "REDIS_URL" not in os.environ:
            self.stderr.write("Warning: on make run's broker (Redis database 0): a running `make run` worker would "
                              "take these tasks. `make bench-workers` uses RAGWEB_REDIS_DB=6.")
        files, _ = iter_files(path)
        files = [(f, s, f.read_bytes()) for f, s in files[:limit]]
        if not files:
            raise CommandError(f"No files under {path}.")
        with os.popen("uptime") as uptime:
            self.stdout.write(f"{uptime.read().strip()}; {os.cpu_count()} CPUs; {len(files)} files of {path}; "
                              f"workers: concurrency {concurrency}")
        results, shapes, collections = [], {}, []
        try:
            for name in names:
                count, pinned = SETUPS[name]
                collection = Collection.objects.create(slug=f"bench-workers-{name}-{time.time_ns()}",
                                                       name=f"bench_workers {name}")
                collections.append(collection)
                seconds = self._ingest(collection, files, count, pinned, concurrency)
                shapes[name] = _chunk_shape(collection)
                chunks = sum(n for n, _ in shapes[name].values())
                failed = Document.objects.filter(collection=collection, status=Document.Status.FAILED).count()
                results.append((name, count, pinned, seconds, chunks, failed))
                self.stdout.write(f"  {name}: {chunks} chunks in {seconds:.1f} s ({chunks / seconds:.1f} chunks/s), "
                                  f"{failed} failed")
            one_core, all_cores = self._bare(collections[0], one_cpu=any(SETUPS[n][1] for n in names))
        finally:
            if not keep:
                Collection.objects.filter(pk__in=[c.pk for c in collections]).delete()
        self._report(results, shapes, one_core, all_cores)

    def _ingest(self, collection, files, count, pinned, concurrency) -> float:
        workers = [_worker(n, pinned, concurrency) for n in range(count)]
        warm_ups = count * concurrency
        try:
            # Warm-up: one small document per pool slot (prefetch 1 per slot, so each takes one), that
            # loads Django and the model in every worker before the clock starts.
            for n in range(warm_ups):
                services.document_ingest(collection=collection, source=f"{WARM_UP}{n}.txt",
                                         data=f"Warm-up document {n}. It loads the model.".encode(),
                                         filename=f"{n}.txt")
            _wait_ready(collection, warm_ups, workers)
            started = time.perf_counter()
            for _, source, data in files:
                services.document_ingest(collection=collection, source=source, data=data, filename=Path(source).name)
            _wait_ready(collection, warm_ups + len(files), workers)
            return time.perf_counter() - started
        finally:
            _stop(workers)

    @staticmethod
    def _bare(collection, *, one_cpu: bool) -> tuple[float | None, float]:
        """Chunks/s of bare encode() of the collection's chunk inputs: on CPU 0 with one thread
        (only if `one_cpu`: what pinned setups are compared with, else None), then on every CPU
        with one thread each."""
        rows = (Chunk.objects.filter(document__collection=collection).exclude(document__source__startswith=WARM_UP)
                .order_by("document_id", "chunk_index").values_list("context", "text"))
        inputs = [pipeline.embedding_input(context, text) for context, text in rows]
        model = embedding.get_model()
        import torch

        rates = []
        affinity = os.sched_getaffinity(0)
        for cpus in ([{0}] if one_cpu else []) + [affinity]:
            os.sched_setaffinity(0, cpus)
            torch.set_num_threads(len(cpus))
            try:
                model.encode(inputs[:64], batch_size=settings.EMBEDDING_BATCH_SIZE, show_progress_bar=False)  # warm
                started = time.perf_counter()
                model.encode(inputs, batch_size=settings.EMBEDDING_BATCH_SIZE, normalize_embeddings=True,
                             convert_to_numpy=True, show_progress_bar=False)
                rates.append(len(inputs) / (time.perf_counter() - started))
            finally:
                os.sched_setaffinity(0, affinity)
        return (rates[0] if one_cpu else None), rates[-1]

    def _report(self, results, shapes, one_core, all_cores):
        on_one = f"{one_core:.1f} chunks/s on one CPU (1 thread), " if one_core else ""
        self.stdout.write(f"\nbare encode: {on_one}{all_cores:.1f} chunks/s on every CPU")
        self.stdout.write(f"{'setup':9} {'workers':>7} {'seconds':>8} {'chunks/s':>9} {'x pinned1':>9} "
                          f"{'x bare':>7}  same chunks")
        reference = shapes[results[0][0]]
        base_rate = None
        for name, count, pinned, seconds, chunks, failed in results:
            rate = chunks / seconds
            if name == "pinned1":
                base_rate = rate
            bare = one_core * count if pinned else all_cores
            same = "yes" if shapes[name] == reference and not failed else "NO"
            relative = f"{rate / base_rate:9.2f}" if base_rate else f"{'-':>9}"
            self.stdout.write(f"{name:9} {count:7} {seconds:8.1f} {rate:9.1f} {relative} {rate / bare:7.2f}  {same}")
        self.stdout.write("targets: pinned2 >= 1.8x pinned1; every shared setup >= 0.9x bare encode on every CPU "
                          "('x bare' of a pinned setup is against one thread per pinned CPU)")
