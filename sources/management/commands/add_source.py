"""`manage.py add_source COLLECTION URL|PATH [--kind url|site|folder] [--schedule ...] [--max-pages N]
[--max-depth N] [--tag TAG]... [--no-sync]`: add a source to a collection (created if missing) and
queue its first sync. The kind defaults to `url` for an http(s) address and `folder` otherwise; a
folder must be under SOURCES_FOLDERS, as everywhere else (sources.services checks)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from corpus import services as corpus_services
from corpus.metadata import is_url
from sources import services
from sources.models import Source


def _messages(exc: ValidationError) -> str:
    if hasattr(exc, "error_dict"):
        return "; ".join(f"{field}: {' '.join(messages)}" for field, messages in exc.message_dict.items())
    return " ".join(exc.messages)


class Command(BaseCommand):
    help = "Add a web page, a site or a server folder to a collection as a source, and queue its first sync."

    def add_arguments(self, parser):
        parser.add_argument("collection", help="Collection slug (created if missing).")
        parser.add_argument("location", help="The page's or site's URL, or the folder's path.")
        parser.add_argument("--kind", choices=Source.Kind.values,
                            help="Default: url for an http(s) address, folder otherwise.")
        parser.add_argument("--schedule", choices=Source.Schedule.values, default=Source.Schedule.DAILY)
        parser.add_argument("--max-pages", type=int, default=100)
        parser.add_argument("--max-depth", type=int, default=3)
        parser.add_argument("--tag", action="append", default=[], help="A tag for its documents (repeatable).")
        parser.add_argument("--no-sync", action="store_true", help="Do not queue the first sync.")

    def handle(self, *args, collection: str, location: str, kind: str | None, schedule: str, max_pages: int,
               max_depth: int, tag: list[str], no_sync: bool, **options):
        kind = kind or (Source.Kind.URL if is_url(location) else Source.Kind.FOLDER)
        where = {"path": location} if kind == Source.Kind.FOLDER else {"url": location}
        try:
            target = corpus_services.collection_get_or_create(slug=collection)
            source = services.source_create(collection=target, kind=kind, schedule=schedule, max_pages=max_pages,
                                            max_depth=max_depth, tags=tag, sync=not no_sync, **where)
        except ValidationError as exc:
            raise CommandError(_messages(exc)) from None
        self.stdout.write(f"Added source {source.pk} to {target.slug!r}: {source}"
                          + ("" if no_sync else " (first sync queued)."))
