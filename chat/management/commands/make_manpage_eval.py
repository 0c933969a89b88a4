"""`manage.py make_manpage_eval OUT [--count N] [--min-chars N]`

Writes a third evaluation set, from a corpus nobody tuned on and of another genre than the Django
docs or the package READMEs: the machine's manual pages (sections 1 and 8), one document each,
and one question per page, its one-line description from the NAME section ("Remove untracked
files from the working tree" for git-clean), whose source is that page. The description is taken
out of the page first, or the question would be a string search; the command's name stays, but
the question does not contain it. Sources only, like make_package_eval: it measures ranking, not
coverage. Which pages a machine has depends on what is installed there, so compare settings with
it on one machine, side by side.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from chat.evaluation import normalise, write_sources_only_set

# `apropos -l` lines: "git-clean (1)        - Remove untracked files from the working tree"
_APROPOS_LINE = re.compile(r"^(\S+) \((\w+)\)\s+- (.+)$")
_OVERSTRIKE = re.compile(r".\x08")  # bold and underline as nroff writes them for a printer
_SGR = re.compile(r"\x1b\[[0-9;]*m")
MIN_QUESTION_WORDS = 4


def parse_apropos(lines: Iterable[str]) -> list[tuple[str, str, str]]:
    """(name, section, description) per page with a real description of at least four words;
    descriptions shared by several pages (aliases, generated stubs) are left out: the question
    would have more than one right source."""
    entries = []
    for line in lines:
        match = _APROPOS_LINE.match(line.rstrip())
        if match is None:
            continue
        name, section, description = match.groups()
        description = description.strip().rstrip(".")
        if "(unknown subject)" in description or len(description.split()) < MIN_QUESTION_WORDS:
            continue
        entries.append((name, section, description))
    shared = Counter(normalise(d) for _, _, d in entries)
    return [e for e in entries if shared[normalise(e[2])] == 1]


def plain_text(rendered: str) -> str:
    return _SGR.sub("", _OVERSTRIKE.sub("", rendered))


def without_description(text: str, description: str) -> str | None:
    """The page without the lines that carry its description; None when the description is
    still there after that (wrapped over two lines, or repeated elsewhere)."""
    key = normalise(description)[:40]
    kept = [line for line in text.splitlines() if key not in normalise(line)]
    body = "\n".join(kept)
    return None if normalise(description) in normalise(body) else body


def manpage_documents(entries: list[tuple[str, str, str]], render: Callable[[str, str], str], *, count: int,
                      min_chars: int) -> list[tuple[str, str, str]]:
    """(file name, text, description) for up to `count` pages of at least `min_chars` characters,
    taken in an order fixed by a digest of their names (a stable sample of whatever is installed);
    a page whose text repeats an earlier one's (the same page under two names) is skipped."""
    chosen: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for name, section, description in sorted(entries, key=lambda e: hashlib.sha1(e[0].encode()).hexdigest()):
        if len(chosen) >= count:
            break
        text = plain_text(render(name, section))
        digest = hashlib.sha1(text.encode()).hexdigest()
        if len(text) < min_chars or digest in seen:
            continue
        seen.add(digest)
        body = without_description(text, description)
        if body is not None:
            chosen.append((f"{name}.{section}.txt", body, description))
    return chosen


def _render(name: str, section: str) -> str:
    result = subprocess.run(["man", "-P", "cat", section, name], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": ""}, errors="replace")
    return result.stdout


class Command(BaseCommand):
    help = ("Write a sources-only evaluation set from this machine's manual pages (OUT/docs, OUT/questions.jsonl): "
            "each page's one-line description, taken out of the page, is the question.")

    def add_arguments(self, parser):
        parser.add_argument("out", type=Path)
        parser.add_argument("--count", type=int, default=150, help="Pages to take (a fixed sample).")
        parser.add_argument("--min-chars", type=int, default=3000, help="Leave out pages shorter than this.")

    def handle(self, *args, out: Path, count: int, min_chars: int, **options):
        if not shutil.which("apropos") or not shutil.which("man"):
            raise CommandError("This needs man and apropos (Debian: apt-get install man-db).")
        listing = subprocess.run(["apropos", "-l", "-s", "1,8", "."], capture_output=True, text=True,
                                 errors="replace", timeout=300)
        entries = parse_apropos(listing.stdout.splitlines())
        documents = manpage_documents(entries, _render, count=count, min_chars=min_chars)
        if not documents:
            raise CommandError(f"No manual page with a description and {min_chars}+ characters was found "
                               "(is the man-db index built? mandb).")
        others = write_sources_only_set(out, documents, id_prefix="man")
        self.stdout.write(f"{len(documents)} manual pages: {out / 'docs'}/ and {out / 'questions.jsonl'}")
        if others:
            self.stderr.write(f"{len(others)} other files in {out / 'docs'} (an earlier run's?) will be ingested "
                              f"with it: {', '.join(others[:5])}")
