"""python manage.py rebuild_keyword_index: recompute the BM25 postings and statistics from the chunks."""

from __future__ import annotations

from django.core.management.base import BaseCommand

from chat.retrieval.bm25 import rebuild_stats


class Command(BaseCommand):
    help = ("Recompute the keyword index (BM25 postings, term and collection statistics) from the stored chunks. "
            "Database triggers keep it exact; run this after restoring or editing those tables by hand. "
            "Ingestion waits while it runs (the chunk table is locked against writes; searches go on).")

    def handle(self, *args, **options) -> None:
        rebuild_stats()
        self.stdout.write("Keyword index rebuilt.")
