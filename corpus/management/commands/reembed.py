"""`manage.py reembed [--collection SLUG] [--wait] [--here]`: move collections to EMBEDDING_MODEL.

Queues a background re-embed of every collection (or one) not yet on the configured model: each
keeps being searched with its old vectors until all its chunks have new ones, then switches
(corpus.reembed). --wait shows progress and exits non-zero if a re-embed failed; --here runs the
work in this process instead of a Celery worker (resuming whatever an earlier run left).
"""

from __future__ import annotations

import time

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.db.models import Sum

from corpus import services
from corpus.ingest import embed as embedding
from corpus.models import Collection, ReembedStatus
from corpus.reembed import services as reembed

POLL_SECONDS = 0.5


class Command(BaseCommand):
    help = "Re-embed collections with EMBEDDING_MODEL in the background; searches switch when each is done."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--collection", help="Only this collection (slug).")
        parser.add_argument("--wait", action="store_true", help="Wait until done, with a progress bar.")
        parser.add_argument("--here", action="store_true", help="Run the re-embed in this process, not a worker.")
        parser.add_argument("--timeout", type=float, default=None, help="Seconds --wait waits at most.")

    def handle(self, *args, collection: str | None, wait: bool, here: bool, timeout: float | None,
               **options) -> None:
        model = settings.EMBEDDING_MODEL
        try:
            embedding.model_path(model)  # a name that is no model fails here, not in every worker
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from None
        collections = Collection.objects.order_by("pk")
        if collection:
            collections = collections.filter(slug=collection)
            if not collections.exists():
                raise CommandError(f"No collection with the slug {collection!r}.")
        targets = [c for c in collections if c.embedding_model != model]
        if not targets:
            self.stdout.write(f"Every collection is already on {model}.")
            return
        ids = [c.pk for c in targets]
        for c in targets:
            # --here resumes a queued or failed run as well as starting a new one.
            started = (reembed.reembed_start(collection=c, model=model) if here
                       else services.collection_reembed(collection=c, model=model))
            if not started and here:
                Collection.objects.filter(pk=c.pk, reembed_model=model).update(reembed_status=ReembedStatus.QUEUED)
            self.stdout.write(f"{c.slug}: {c.embedding_model} -> {model}" + ("" if started else " (already running)"))
        if here:
            for pk in ids:
                reembed.reembed_run(pk)
        if wait or here:
            self._wait(ids, timeout=timeout)

    def _wait(self, ids: list[int], *, timeout: float | None) -> None:
        from tqdm import tqdm

        rows = Collection.objects.filter(pk__in=ids)
        deadline = None if timeout is None else time.monotonic() + timeout
        bar = tqdm(unit="chunk", desc="re-embedding", file=self.stderr._out)
        try:
            while True:
                progress = rows.aggregate(done=Sum("reembed_done"), total=Sum("reembed_total"))
                bar.total, bar.n = progress["total"] or 0, progress["done"] or 0
                bar.refresh()
                if not rows.filter(reembed_status__in=(ReembedStatus.QUEUED, ReembedStatus.RUNNING)).exists():
                    break
                if deadline is not None and time.monotonic() > deadline:
                    raise CommandError("Timed out; the re-embed goes on in the background.")
                time.sleep(POLL_SECONDS)
        finally:
            bar.close()
        failed = list(rows.filter(reembed_status=ReembedStatus.FAILED).values_list("slug", "reembed_error"))
        for slug, error in failed:
            self.stderr.write(f"FAILED {slug}: {error}")
        if failed:
            raise CommandError(f"{len(failed)} of {len(ids)} collection(s) failed; run the command again to resume.")
        self.stdout.write(f"{len(ids)} collection(s) now search {settings.EMBEDDING_MODEL} vectors.")
