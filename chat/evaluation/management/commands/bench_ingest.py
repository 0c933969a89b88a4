"""`manage.py bench_ingest [PATH]`: ingestion throughput of the real pipeline next to bare encode().

Ingests a corpus into a scratch collection in this process (tasks run eagerly, through the same
services and pipeline as the workers), then encodes the very same chunk inputs with one bare
encode of the configured model on its runtime (corpus.ingest.embed.embed_texts: ONNX Runtime by
default), and prints chunks/s of both, their ratio, the time per pipeline
stage and the peak memory (RSS high-water mark) of the process.
"""

from __future__ import annotations

import functools
import resource
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from corpus import services
from corpus.ingest import embed as embedding
from corpus.ingest import pipeline
from corpus.management.commands.ingest import iter_files
from corpus.models import Chunk, Collection, Document

DEFAULT_CORPUS = Path("/work/shared/eval/django-docs")
DEMO_CORPUS = Path(settings.BASE_DIR) / "demo" / "docs"


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)  # all threads of this process (torch included)
    return usage.ru_utime + usage.ru_stime


# The pipeline's stages, as the module-level names corpus.ingest.pipeline calls them by.
STAGES = {"parse_document": "parse", "chunk_text": "chunk", "contextualize": "contextualize",
          "_embed_plain": "embed", "_publish": "publish"}


@contextmanager
def timed_stages() -> Iterator[Counter[str]]:
    """Seconds spent in each pipeline stage while the block runs, measured from outside: the
    stage functions are wrapped for the benchmark's duration, so production carries no timers."""
    seconds: Counter[str] = Counter()
    originals = {name: getattr(pipeline, name) for name in STAGES}

    def timed(name, function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                seconds[STAGES[name]] += time.perf_counter() - started
        return wrapper

    for name, function in originals.items():
        setattr(pipeline, name, timed(name, function))
    try:
        yield seconds
    finally:
        for name, function in originals.items():
            setattr(pipeline, name, function)


class Command(BaseCommand):
    help = "Benchmark ingestion: pipeline chunks/s vs a bare encode of the same chunks by the configured model."

    def add_arguments(self, parser):
        parser.add_argument("path", nargs="?", type=Path, default=None,
                            help=f"Corpus folder (default {DEFAULT_CORPUS} if present, else demo/docs/).")
        parser.add_argument("--collection", default="bench-ingest", help="Scratch collection slug (emptied first).")
        parser.add_argument("--limit", type=int, default=None, help="Only the first N files.")
        parser.add_argument("--chunker", default=None, choices=Collection.Chunker.values)
        parser.add_argument("--chunk-size", type=int, default=None)
        parser.add_argument("--embedding-mode", default=None, choices=Collection.EmbeddingMode.values)
        parser.add_argument("--keep", action="store_true", help="Keep the scratch collection afterwards.")

    def handle(self, *args, path: Path | None, collection: str, limit: int | None, chunker: str | None,
               chunk_size: int | None, embedding_mode: str | None, keep: bool, **options):
        from celery import current_app as app  # the project's (ragweb.celery): apps sit below the shell

        path = path or (DEFAULT_CORPUS if DEFAULT_CORPUS.is_dir() else DEMO_CORPUS)
        if not path.exists():
            raise CommandError(f"{path} does not exist.")
        files, _ = iter_files(path)
        files = files[:limit] if limit else files
        scratch = self._fresh_collection(collection, chunker=chunker, chunk_size=chunk_size,
                                         embedding_mode=embedding_mode)
        self.stdout.write(f"corpus {path}: {len(files)} files, {sum(f.stat().st_size for f, _ in files) / 1e6:.2f} MB; "
                          f"collection {scratch.slug!r} ({scratch.pipeline_signature()})")

        # Load the model and tokenizer before the clock starts: both runs get a warm model.
        embedding.embed_texts(["warm up"])
        was_eager = app.conf.task_always_eager
        app.conf.task_always_eager = True
        try:
            with timed_stages() as stage_seconds:
                started, cpu_started = time.perf_counter(), _cpu_seconds()
                for file, source in files:
                    services.document_ingest(collection=scratch, source=source, data=file.read_bytes(),
                                             filename=file.name)
                pipeline_seconds = time.perf_counter() - started
                pipeline_cpu = _cpu_seconds() - cpu_started
        finally:
            app.conf.task_always_eager = was_eager

        documents = Document.objects.filter(collection=scratch)
        failed = documents.filter(status=Document.Status.FAILED).count()
        chunks = list(Chunk.objects.filter(document__collection=scratch).order_by("document_id", "chunk_index")
                      .values_list("context", "text"))
        if not chunks:
            raise CommandError("No chunks were produced.")
        inputs = [pipeline.embedding_input(context, text) for context, text in chunks]

        # The bare encode: one call of the configured model and runtime (EMBEDDING_MODEL) on the same
        # inputs, batch size and threads as the pipeline's embedding step, nothing else.
        started, cpu_started = time.perf_counter(), _cpu_seconds()
        embedding.embed_texts(inputs)
        bare_seconds = time.perf_counter() - started
        bare_cpu = _cpu_seconds() - cpu_started

        n = len(chunks)
        pipeline_rate, bare_rate = n / pipeline_seconds, n / bare_seconds
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.stdout.write(f"documents: {documents.count()} ({failed} failed), chunks: {n}, "
                          f"mean chunk input: {sum(map(len, inputs)) / n:.0f} chars, "
                          f"batch size {settings.EMBEDDING_BATCH_SIZE}")
        self.stdout.write(f"pipeline:     {pipeline_seconds:8.1f} s  {pipeline_rate:7.1f} chunks/s")
        self.stdout.write(f"bare encode:  {bare_seconds:8.1f} s  {bare_rate:7.1f} chunks/s")
        self.stdout.write(f"ratio:        {pipeline_rate / bare_rate:8.2f}  (target >= 0.85)")
        # On a shared machine wall time depends on the neighbours; CPU time of this process does not
        # (but leaves out the work Postgres does for the inserts).
        self.stdout.write(f"cpu time:     pipeline {pipeline_cpu:.1f} s, bare {bare_cpu:.1f} s, "
                          f"ratio {bare_cpu / pipeline_cpu:.2f}")
        stages = ", ".join(f"{stage} {seconds:.1f} s" for stage, seconds in stage_seconds.most_common())
        other = pipeline_seconds - sum(stage_seconds.values())
        self.stdout.write(f"stages:       {stages}, other (storage, queries, task) {other:.1f} s")
        self.stdout.write(f"peak memory:  {peak_mb:8.0f} MB RSS (high-water mark of this process)")
        if not keep:
            self._delete(scratch)

    def _fresh_collection(self, slug: str, **fields) -> Collection:
        existing = Collection.objects.filter(slug=slug).first()
        if existing is not None:
            self._delete(existing)
        collection = Collection(slug=slug, name=f"Benchmark ({slug})")
        for name, value in fields.items():
            if value is not None:
                setattr(collection, name, value)
        if collection.chunk_overlap >= collection.chunk_size:
            collection.chunk_overlap = collection.chunk_size // 4
        collection.save()
        return collection

    def _delete(self, collection: Collection) -> None:
        for document in collection.documents.all():
            services.document_delete(document=document)
        collection.delete()
