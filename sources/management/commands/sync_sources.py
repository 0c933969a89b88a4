"""`manage.py sync_sources [ID...] [--collection SLUG] [--due] [--wait] [--timeout S] [--quiet]`:
sync sources (default: all of them).

Without --wait, a sync of each is queued for the workers. With --wait, each source is synced in
this process, one line per page or file (new, changed, unchanged, removed, failed with its
reason), then the command waits for their documents to be processed (a progress bar) and exits
non-zero if any item or document failed or a source could not be read.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from corpus.management.waiting import wait_for_documents
from corpus.models import Document
from sources import services
from sources.models import Source
from sources.sync import source_sync


class Command(BaseCommand):
    help = "Sync sources now (all, the ones given, a collection's, or those due); --wait shows progress."

    def add_arguments(self, parser):
        parser.add_argument("ids", nargs="*", type=int, help="Source ids (default: all).")
        parser.add_argument("--collection", help="Only this collection's sources (slug).")
        parser.add_argument("--due", action="store_true", help="Only the sources whose scheduled sync is due.")
        parser.add_argument("--wait", action="store_true",
                            help="Sync here with progress, then wait for the documents to be processed.")
        parser.add_argument("--timeout", type=float, default=None, help="Give up waiting after this many seconds.")
        parser.add_argument("--quiet", action="store_true", help="Print only failures and the summary.")

    def handle(self, *args, ids: list[int], collection: str | None, due: bool, wait: bool, timeout: float | None,
               quiet: bool, **options):
        from django.utils import timezone

        sources = Source.objects.select_related("collection").order_by("pk")
        if ids:
            sources = sources.filter(pk__in=ids)
            missing = sorted(set(ids) - set(sources.values_list("pk", flat=True)))
            if missing:
                raise CommandError(f"No source with id {', '.join(map(str, missing))}.")
        if collection:
            sources = sources.filter(collection__slug=collection)
        if due:
            sources = sources.filter(pk__in=Source.objects.due(timezone.now()).values("pk"))
        sources = list(sources)
        if not sources:
            self.stdout.write("No sources to sync.")
            return
        if not wait:
            for source in sources:
                services.source_sync_enqueue(source=source)
            self.stdout.write(f"Queued a sync of {len(sources)} source(s).")
            return
        self._sync_here(sources, timeout=timeout, quiet=quiet)

    def _sync_here(self, sources: list[Source], *, timeout: float | None, quiet: bool) -> None:
        problems = 0
        for source in sources:
            self.stdout.write(f"source {source.pk} ({source.collection.slug}): {source}")

            def show(outcome: str, item: str) -> None:
                if not quiet and outcome != "failed":
                    self.stdout.write(f"  {outcome:<9} {item}")

            result = source_sync(source_id=source.pk, progress=show)
            if result is None:
                continue
            if result.busy:
                self.stdout.write("  another sync of this source is running; skipped")
                continue
            for failure in result.failures:
                self.stderr.write(f"  FAILED    {failure['item']}: {failure['reason']}")
            if result.error:
                self.stderr.write(f"  the source could not be read (nothing removed): {result.error}")
            problems += result.failed + bool(result.error)
            self.stdout.write("  " + ", ".join(f"{count} {name}" for name, count in result.counts.items()))
        ids = list(Document.objects.filter(source_link__source__in=sources).values_list("pk", flat=True))
        if ids:
            wait_for_documents(self, ids, timeout=timeout, quiet=quiet)
        if problems:
            raise CommandError(f"{problems} item(s) or source(s) failed (see above).")
