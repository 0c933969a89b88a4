"""`manage.py make_manpage_eval OUT [--count N] [--min-chars N]`

Writes a third evaluation set, from a corpus nobody tuned on and of another genre than the Django
docs or the package READMEs: the machine's manual pages (sections 1 and 8), one document each,
and one question per page, its one-line description from the NAME section ("Remove untracked
files from the working tree" for git-clean), whose source is that page. The description is taken
out of the page first, or the question would be a string search; the command's name stays, but
the question does not contain it. Sources only, like make_package_eval: it measures ranking, not
coverage. Which pages a machine has depends on what is installed there, so compare settings with
it on one machine, side by side.

OUT/identifiers.jsonl asks, for each page that names an identifier with underscores no other page
names (an environment variable, a setting, a function), what it does ("What does DPKG_COLORS do?"),
without naming the page: the lookups people make in reference documentation. Sources only.

OUT/options.jsonl asks about the same pages the other way round, the way people search reference
pages: one option per page ("What does the --dry-run option of git-clean do?"), with the first
words of the option's description as the evidence to find. Its questions name the page, so their
sources are easy; what it measures is evidence coverage (whether the context holds the option's
own paragraph among the page's dozens), of questions made of identifiers.
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

from chat.evaluation.metrics import normalise, write_items, write_sources_only_set
from corpus.ingest.parse.text import strip_overstrike

# `apropos -l` lines: "git-clean (1)        - Remove untracked files from the working tree"
_APROPOS_LINE = re.compile(r"^(\S+) \((\w+)\)\s+- (.+)$")
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
    """A rendered page without nroff's overstruck bold and underline (the text parser's own rule) and
    terminal colour codes."""
    return _SGR.sub("", strip_overstrike(rendered))


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


# An option item as man renders it at 80 columns: seven spaces, then the option(s); its description
# follows, indented further, up to a blank line.
_OPTION_ITEM = re.compile(r"^ {7}(-{1,2}[A-Za-z0-9][\w-]*)")
_LONG_OPTION = re.compile(r"--[A-Za-z0-9][\w-]*")
EVIDENCE_WORDS = 12
MIN_EVIDENCE_WORDS = 6


def page_options(text: str) -> list[tuple[str, str]]:
    """(option, the first words of its description's first sentence) for each option item of a
    rendered page whose description's first sentence has at least six words, named by its longest
    long form; an option described twice (in two sections, say) is left out: which paragraph
    answers would be ambiguous."""
    lines = text.splitlines()
    found = []
    for i, line in enumerate(lines):
        match = _OPTION_ITEM.match(line)
        if match is None:
            continue
        description = []
        for following in lines[i + 1:]:
            if not following.strip() or len(following) - len(following.lstrip()) <= 7:
                break
            description.append(following.strip())
        words = re.split(r"(?<=[.!?])\s", " ".join(description))[0].split()
        if len(words) < MIN_EVIDENCE_WORDS:
            continue
        long_forms = _LONG_OPTION.findall(line)
        option = max(long_forms, key=len) if long_forms else match.group(1)
        found.append((option, " ".join(words[:EVIDENCE_WORDS]).rstrip(".,;:")))
    times = Counter(option for option, _ in found)
    return [(option, evidence) for option, evidence in found if times[option] == 1]


def option_questions(documents: list[tuple[str, str, str]], *, min_options: int = 3) -> list[dict]:
    """One question per page with at least `min_options` usable options, about one of them chosen
    by a digest of the page's file name (a fixed choice, not the first option every time)."""
    items = []
    for filename, text, _ in documents:
        options = page_options(text)
        if len(options) < min_options:
            continue
        option, evidence = options[int(hashlib.sha1(filename.encode()).hexdigest(), 16) % len(options)]
        page = filename.rsplit(".", 2)[0]
        items.append({"id": f"opt-{len(items) + 1:03d}", "question": f"What does the {option} option of {page} do?",
                      "kind": "factoid", "source": filename, "evidence": [evidence]})
    return items


# An identifier written with underscores (DPKG_COLORS, copy_extensions): two or more parts of two or
# more characters, the first a letter.
_IDENTIFIER = re.compile(r"\b[A-Za-z][A-Za-z0-9]+(?:_[A-Za-z0-9]{2,})+\b")


def identifier_questions(documents: list[tuple[str, str, str]]) -> list[dict]:
    """One question per page that names an identifier no other page names ("What does DPKG_COLORS
    do?"), chosen by a digest of the page's file name; the page is its source. The question does
    not name the page, and the page's own name is not asked about."""
    found = {filename: set(_IDENTIFIER.findall(text)) for filename, text, _ in documents}
    pages_naming = Counter(identifier for identifiers in found.values() for identifier in identifiers)
    items = []
    for filename, identifiers in found.items():
        page = filename.rsplit(".", 2)[0]
        unique = sorted(i for i in identifiers if pages_naming[i] == 1 and i.lower() != page.lower())
        if not unique:
            continue
        identifier = unique[int(hashlib.sha1(filename.encode()).hexdigest(), 16) % len(unique)]
        items.append({"id": f"ident-{len(items) + 1:03d}", "question": f"What does {identifier} do?",
                      "kind": "factoid", "source": filename, "evidence": []})
    return items


def _render(name: str, section: str) -> str:
    result = subprocess.run(["man", "-P", "cat", section, name], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "MANWIDTH": "80", "MAN_KEEP_FORMATTING": ""}, errors="replace")
    return result.stdout


class Command(BaseCommand):
    help = ("Write evaluation sets from this machine's manual pages (OUT/docs): OUT/questions.jsonl asks each "
            "page's one-line description, taken out of the page; OUT/options.jsonl asks what one of its options "
            "does, with the option's description as the evidence; OUT/identifiers.jsonl asks what an identifier "
            "only that page names does.")

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
        options = option_questions(documents)
        write_items(out / "options.jsonl", options)
        identifiers = identifier_questions(documents)
        write_items(out / "identifiers.jsonl", identifiers)
        self.stdout.write(f"{len(documents)} manual pages: {out / 'docs'}/ and {out / 'questions.jsonl'}; "
                          f"{len(options)} questions about their options: {out / 'options.jsonl'}; "
                          f"{len(identifiers)} about identifiers they name: {out / 'identifiers.jsonl'}")
        if others:
            self.stderr.write(f"{len(others)} other files in {out / 'docs'} (an earlier run's?) will be ingested "
                              f"with it: {', '.join(others[:5])}")
