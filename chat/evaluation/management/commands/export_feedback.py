"""`manage.py export_feedback [--include-positive] [--out FILE] [--collection SLUG] [--todo FILE]`

Writes the thumbs-down ratings of answers (and the thumbs-up ones with --include-positive) as
evaluation items (chat.evaluation.feedback_items), one JSON object per line, ready for
`manage.py evaluate FILE --collection SLUG`. Ratings whose source nobody has chosen yet are left
out and listed (with --todo, written to a file of their own for a person to complete).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.evaluation.feedback_items import feedback_items
from chat.models import Feedback


class Command(BaseCommand):
    help = "Export rated answers (thumbs down; thumbs up too with --include-positive) as evaluation items."

    def add_arguments(self, parser):
        parser.add_argument("--include-positive", action="store_true", help="Also export thumbs-up ratings.")
        parser.add_argument("--out", type=Path, help="Write the items to this file (default: standard output).")
        parser.add_argument("--collection", help="Only items whose source document is in this collection "
                                                 "(the collection evaluate will search).")
        parser.add_argument("--todo", type=Path, help="Write the ratings that still need a source here, with "
                                                      '"source": "" for a person to fill in.')

    def handle(self, *args, include_positive: bool, out: Path | None, collection: str | None, todo: Path | None,
               **options):
        ratings = [Feedback.Rating.DOWN, Feedback.Rating.UP] if include_positive else [Feedback.Rating.DOWN]
        feedbacks = Feedback.objects.filter(rating__in=ratings).order_by("created_at", "id")
        ready, incomplete = feedback_items(feedbacks)
        if collection:
            ready = [item for item in ready if item["collection"] == collection]
        try:
            self._write(out, ready)
            if todo is not None:
                self._write(todo, incomplete)
        except OSError as exc:
            raise CommandError(f"Cannot write the items: {exc}") from exc
        kinds = {rating: sum(item["rating"] == rating for item in ready) for rating in ratings}
        self.stderr.write(f"{len(ready)} evaluation item(s) written to {out or 'standard output'} "
                          f"({', '.join(f'{n} thumbs-{r}' for r, n in kinds.items())}).")
        if incomplete:
            where = f"written to {todo}" if todo else "see --todo"
            ids = ", ".join(item["id"] for item in incomplete[:10]) + (" …" if len(incomplete) > 10 else "")
            self.stderr.write(f"{len(incomplete)} rating(s) have no source chosen yet ({ids}): choose one in the "
                              f"admin (Chat › Feedback) or fill it in ({where}).")

    def _write(self, path: Path | None, items: list[dict]) -> None:
        text = "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in items)
        if path is None:
            self.stdout.write(text, ending="")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
