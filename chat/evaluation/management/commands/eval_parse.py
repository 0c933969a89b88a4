"""`manage.py eval_parse [--no-scans]`

The parse fidelity suite (chat.evaluation.fidelity): every real document of
chat/evaluation/data/fidelity/files read through the parser registry and scored against the expected
plain text of its source; one line per file (format × producer): characters right, words right, words
lost, words doubled; then the born-digital target. No database needed.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand

from chat.evaluation.fidelity import score_suite, table


class Command(BaseCommand):
    help = "Scores every parser on the fidelity suite's real documents against their expected text."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--no-scans", action="store_true", help="skip the scanned images (OCR is slow)")

    def handle(self, *args, no_scans: bool, **options) -> None:
        for line in table(score_suite(scans=not no_scans)):
            self.stdout.write(line)
