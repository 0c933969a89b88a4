"""python manage.py fill_sentence_vectors [--collection SLUG]: store the sentence vectors of documents
already published (ingestion fills them for new ones; chat.answering.sentence_fill)."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError

from chat.answering.sentence_fill import document_fill
from corpus.models import Collection, Document


class Command(BaseCommand):
    help = ("Store the vectors of the sentences extractive answers score, for the ready documents of one "
            "collection or of all: for databases ingested before the store existed, or after changing "
            "EMBEDDING_MODEL. Documents already filled cost a look-up each.")

    def add_arguments(self, parser) -> None:
        parser.add_argument("--collection", help="Slug of one collection (default: every collection).")

    def handle(self, *args, collection: str | None, **options) -> None:
        documents = Document.objects.filter(status=Document.Status.READY)
        if collection:
            found = Collection.objects.filter(slug=collection).first()
            if found is None:
                raise CommandError(f"No collection {collection!r}.")
            documents = documents.filter(collection=found)
        ids = list(documents.order_by("pk").values_list("pk", flat=True))
        started, embedded = time.monotonic(), 0
        for done, document_id in enumerate(ids, start=1):
            embedded += document_fill(document_id)
            if done % 50 == 0 or done == len(ids):
                self.stdout.write(f"{done}/{len(ids)} documents, {embedded} sentence texts embedded, "
                                  f"{time.monotonic() - started:.0f} s")
        if not ids:
            self.stdout.write("No ready documents.")
