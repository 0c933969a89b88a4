"""`manage.py make_package_eval OUT [--min-chars N]`

Writes a second evaluation set, from a corpus nobody tuned on: the long descriptions (READMEs)
of the Python packages installed beside ragweb, one document each, and one question per package,
its one-line summary, whose source is that document. Sources only, no evidence phrases, so it
measures ranking (recall@k, MRR@10), not coverage. Known-item questions are easier than the
development set's (a summary often repeats the README's first line, which is why the summary's own
text is taken out of the document), so compare settings with it, not with the development figures.
"""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.evaluation.metrics import write_sources_only_set

_NOT_A_NAME = re.compile(r"[^a-z0-9]+")


def package_documents(distributions, *, min_chars: int) -> list[tuple[str, str, str]]:
    """(file name, description, summary) per package with a usable summary and a description of at
    least `min_chars` characters, sorted by name; the first of two same-named packages wins."""
    found: dict[str, tuple[str, str, str]] = {}
    for dist in distributions:
        meta = dist.metadata
        name, summary = meta.get("Name") or "", (meta.get("Summary") or "").strip()
        body = meta.get_payload() or meta.get("Description") or ""
        if not name or len(summary) < 20 or summary.upper() == "UNKNOWN":
            continue
        # The summary's own words would make the question a string search.
        body = re.sub(re.escape(summary), " ", body, flags=re.IGNORECASE)
        if len(body.strip()) < min_chars:
            continue
        stem = _NOT_A_NAME.sub("-", name.lower()).strip("-")
        markdown = "markdown" in (meta.get("Description-Content-Type") or "")
        found.setdefault(stem, (stem + (".md" if markdown else ".txt"), body, summary))
    return [found[k] for k in sorted(found)]


class Command(BaseCommand):
    help = ("Write a sources-only evaluation set from the installed packages' descriptions (OUT/docs, "
            "OUT/questions.jsonl): a held-out corpus to check that a setting is not tuned to the Django docs.")

    def add_arguments(self, parser):
        parser.add_argument("out", type=Path)
        parser.add_argument("--min-chars", type=int, default=3000,
                            help="Leave out packages whose description is shorter than this.")

    def handle(self, *args, out: Path, min_chars: int, **options):
        documents = package_documents(metadata.distributions(), min_chars=min_chars)
        if not documents:
            raise CommandError(f"No installed package has a summary and a description of {min_chars}+ characters.")
        others = write_sources_only_set(out, documents, id_prefix="pkg")
        self.stdout.write(f"{len(documents)} packages: {out / 'docs'}/ and {out / 'questions.jsonl'}")
        if others:
            self.stderr.write(f"{len(others)} other files in {out / 'docs'} (an earlier run's?) will be ingested "
                              f"with it: {', '.join(others[:5])}")
