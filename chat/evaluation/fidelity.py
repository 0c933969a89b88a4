"""The parse fidelity suite: real documents made here by real producers (data/fidelity/files, made by
its make_files.sh from data/fidelity/sources), each read through the parser registry as an upload is,
and scored against the expected plain text of its source (data/fidelity/expected/<source>.txt).

A file is named `<source>-<producer>.<extension>` (`<source>.<extension>` for a file as written by
hand). Scores, after both texts are normalised (Markdown table pipes and rules, heading marks and the
header rows the parser repeats above every few rows of a table dropped, white space runs made one
space):

- characters right: the characters of the expected text found in order in the parsed one
  (difflib's matching blocks) over the expected text's length;
- words right / words lost: the expected words (runs of letters and digits, case kept) the parsed
  text holds, counted with their multiplicity, and those it misses;
- words doubled: expected words the parsed text holds more often than the expected one, plus words
  of doubled letters ("AAbbss": text drawn twice read twice);
- for a PDF, the words right of poppler's `pdftotext -layout` against the same expected text: a
  word both miss is not in the PDF as drawn (LibreOffice's HTML import drops a shadowed <h1>).
"""

from __future__ import annotations

import difflib
import re
import shutil
import subprocess
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path

from corpus.ingest.parse import parse_document
from corpus.ingest.parse.pdf_overdrawn import doubled_word

FIDELITY_DIR = Path(__file__).resolve().parent / "data" / "fidelity"
BORN_DIGITAL_TARGET = 0.995  # of words right, on every file that is not a scan
SCANS = frozenset({".png", ".jpg", ".jpeg", ".tif", ".tiff"})

_WORD = re.compile(r"[A-Za-z0-9]+")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")
_HEADING_MARK = re.compile(r"^\s{0,3}#{1,6}\s+", re.MULTILINE)


@dataclass(frozen=True)
class Score:
    name: str
    format: str
    producer: str
    characters_right: float
    words: int  # in the expected text
    words_right: int
    words_lost: int
    words_doubled: int
    reference_words_right: float | None = None  # pdftotext -layout's, for a PDF (None: not a PDF or no pdftotext)

    @property
    def words_right_share(self) -> float:
        return self.words_right / self.words if self.words else 1.0

    @property
    def born_digital(self) -> bool:
        return f".{self.format}" not in SCANS


def normalised(text: str) -> str:
    """Text as scored: table pipes and rules gone, a table header repeated by the parser dropped
    after its first time, heading marks gone, white space runs one space."""
    lines, seen_headers = [], set()
    raw = text.split("\n")
    for index, line in enumerate(raw):
        if _TABLE_RULE.match(line) and "-" in line:
            continue
        following = raw[index + 1] if index + 1 < len(raw) else ""
        if line.strip().startswith("|") and _TABLE_RULE.match(following) and "-" in following:
            if line.strip() in seen_headers:
                continue
            seen_headers.add(line.strip())
        lines.append(line.replace("|", " "))
    return " ".join(_HEADING_MARK.sub("", "\n".join(lines)).split())


def score_text(name: str, expected: str, parsed: str) -> Score:
    stem, _, extension = name.rpartition(".")
    producer = stem.split("-", 1)[1] if "-" in stem else "as written"
    reference, got = normalised(expected), normalised(parsed)
    matcher = difflib.SequenceMatcher(None, reference, got, autojunk=False)
    matched = sum(block.size for block in matcher.get_matching_blocks())
    want, have = Counter(_WORD.findall(reference)), Counter(_WORD.findall(got))
    right = sum(min(count, have[word]) for word, count in want.items())
    doubled = sum(max(0, have[word] - count) for word, count in want.items())
    doubled += sum(1 for word in got.split() if doubled_word(word))
    total = sum(want.values())
    return Score(name, extension, producer, matched / len(reference) if reference else 1.0, total, right,
                 total - right, doubled)


def score_file(path: Path, expected_dir: Path) -> Score:
    source = path.name.split(".")[0].split("-")[0]
    expected = (expected_dir / f"{source}.txt").read_text(encoding="utf-8")
    parsed = parse_document(path.read_bytes(), filename=path.name).text
    score = score_text(path.name, expected, parsed)
    reference = _pdftotext(path)
    if reference is None:
        return score
    return replace(score, reference_words_right=score_text(path.name, expected, reference).words_right_share)


def _pdftotext(path: Path) -> str | None:
    """poppler's `pdftotext -layout` of a PDF: what the PDF holds as another reader reads it (a word
    both miss is the producer's, not the parser's). None for another file or without poppler-utils."""
    if path.suffix.lower() != ".pdf" or shutil.which("pdftotext") is None:
        return None
    done = subprocess.run(["pdftotext", "-layout", str(path), "-"], capture_output=True, text=True, timeout=60,
                          check=False)
    return done.stdout if done.returncode == 0 else None


def suite_files(directory: Path = FIDELITY_DIR, *, scans: bool = True) -> list[Path]:
    return sorted(path for path in (directory / "files").iterdir()
                  if path.is_file() and (scans or path.suffix.lower() not in SCANS))


def score_suite(directory: Path = FIDELITY_DIR, *, scans: bool = True) -> list[Score]:
    return [score_file(path, directory / "expected") for path in suite_files(directory, scans=scans)]


def table(scores: list[Score]) -> list[str]:
    """The report: one line per file (format × producer), then whether the targets are met."""
    lines = [f"{'file':<28} {'format':<6} {'producer':<12} {'chars right':>11} {'words right':>11} "
             f"{'lost':>5} {'doubled':>7} {'pdftotext words right':>21}"]
    for s in scores:
        reference = "-" if s.reference_words_right is None else f"{s.reference_words_right:.2%}"
        lines.append(f"{s.name:<28} {s.format:<6} {s.producer:<12} {s.characters_right:>11.2%} "
                     f"{s.words_right_share:>11.2%} {s.words_lost:>5} {s.words_doubled:>7} {reference:>21}")
    digital = [s for s in scores if s.born_digital]
    misses = [s.name for s in digital if s.words_right_share < BORN_DIGITAL_TARGET or s.words_doubled]
    lines.append(f"born-digital files: {len(digital) - len(misses)}/{len(digital)} with >= "
                 f"{BORN_DIGITAL_TARGET:.1%} of words right and none doubled"
                 + (f"; misses: {', '.join(misses)}" if misses else ""))
    return lines
