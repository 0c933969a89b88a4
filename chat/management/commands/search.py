"""`manage.py search QUERY [--mode] [--k] [--collection SLUG] [--rse PRESET|none] [--max-chars N] [--json]
[--media-type TYPE]... [--tag TAG]... [--source-prefix PREFIX] [--after DAY] [--before DAY]`.

The filter options make the filter object of POST /api/search/ (chat.retrieval.filters), parsed
by the same function."""

from __future__ import annotations

import json
from dataclasses import asdict

from django.core.management.base import BaseCommand, CommandError

from chat.retrieval import SearchError, search
from chat.retrieval.candidates import MODES
from chat.retrieval.filters import KEYS, FilterError, parse_filters
from chat.retrieval.rse import PRESETS
from corpus.models import Collection


class Command(BaseCommand):
    help = "Search the corpus (all collections, or one) and print the chunks and RSE segments."

    def add_arguments(self, parser):
        parser.add_argument("query", nargs="+", help="The query; several words are joined.")
        parser.add_argument("--mode", choices=MODES, default="hybrid")
        parser.add_argument("--k", type=int, default=10)
        parser.add_argument("--collection", help="Collection slug (default: every collection).")
        parser.add_argument("--rse", choices=[*PRESETS, "none"], default="balanced")
        parser.add_argument("--max-chars", type=int, metavar="N",
                            help="A context budget: the RSE segments fitted to at most N characters in all, "
                                 "the top chunks they lack taking part.")
        parser.add_argument("--json", action="store_true", help="Print the /api/search/ JSON response.")
        filters = parser.add_argument_group("filters (all must match)")
        filters.add_argument("--media-type", action="append", dest="media_type", metavar="TYPE",
                             help="Only documents of this media type (repeat for any of several).")
        filters.add_argument("--tag", action="append", dest="tags", metavar="TAG",
                             help="Only documents with this tag (repeat for any of several).")
        filters.add_argument("--source-prefix", metavar="PREFIX", help="Only documents whose source starts so.")
        filters.add_argument("--after", metavar="YYYY-MM-DD", help="Only documents dated on or after this day.")
        filters.add_argument("--before", metavar="YYYY-MM-DD", help="Only documents dated before this day.")

    def handle(self, *args, query, mode, k, collection, rse, max_chars, json: bool, **options):
        given = {key: options[key] for key in KEYS if options.get(key) is not None}
        try:
            filters = parse_filters(given)
        except FilterError as exc:
            raise CommandError(str(exc)) from exc
        collections = Collection.objects.all()
        if collection:
            collections = collections.filter(slug=collection)
            if not collections.exists():
                raise CommandError(f"There is no collection {collection!r}.")
        try:
            result = search(query=" ".join(query), collections=collections, mode=mode, k=k,
                            rse=None if rse == "none" else rse, max_chars=max_chars, filters=filters)
        except SearchError as exc:
            raise CommandError(str(exc)) from exc
        if json:
            data = asdict(result)
            data.pop("query_vectors", None)  # the question's vectors, kept for the answer: not part of the response
            self.stdout.write(_dumps(data))
            return
        self.stdout.write(f"{len(result.chunks)} chunks ({mode})")
        for n, hit in enumerate(result.chunks, start=1):
            preview = " ".join(hit.text.split())[:160]
            self.stdout.write(f"{n:3}. {hit.score:.4f} rel={hit.relevance:.2f} v={hit.ranks['vector']} "
                              f"k={hit.ranks['keyword']} {hit.document.source}#{hit.chunk_index}  {preview}")
        if result.segments:
            self.stdout.write(f"\n{len(result.segments)} segments (RSE {rse})")
            for seg in result.segments:
                preview = " ".join(seg.text.split())[:160]
                self.stdout.write(f"  {seg.score:6.2f} {seg.document.source} chunks {seg.start}-{seg.end} "
                                  f"({len(seg.text)} chars)  {preview}")
        timings = ", ".join(f"{name} {ms:.1f}" for name, ms in result.timings_ms.items())
        self.stdout.write(f"\ntimings ms: {timings}")


def _dumps(data) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False)
