"""A source's text as blocks a reader would see: headings, paragraphs, list items, table rows
and code, for Markdown, reStructuredText and plain text alike. Pure.

The extractive answer quotes sentences of paragraphs and list items; a sentence that ends in a
colon brings along the list items or table rows that follow it, and the heading above a sentence
tells what it is about. Besides Markdown and reST headings (a `#` line too long or of several
sentences is prose, as at ingestion), a paragraph of one short line without
final punctuation is a heading (PDF text gives headings so, set apart at ingestion). Display
text turns reST inline markup into Markdown (``code`` to `code`, :func:`~a.b.c` to `c`,
`link <url>`_ to link) and Markdown into what a reader should see (links within the author's
site, images and inline HTML as text: corpus.ingest.parse.markdown_inline.readable); a heading
shown or read under a sentence is its words without markup (display_heading).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from corpus.ingest.parse.base import reads_as_heading
from corpus.ingest.parse.layout import reads_as_title
from corpus.ingest.parse.markdown_inline import plain, readable

HEADING, PARAGRAPH, ITEM, ROW, CODE = "heading", "paragraph", "item", "row", "code"


@dataclass(frozen=True)
class Block:
    kind: str
    text: str  # a ROW's: its cells joined by " — ", empty ones included
    heading: str  # the nearest heading above the block ("" before any)
    start: int = 0  # offset of the block's first line in the parsed text


_FENCE = re.compile(r"^\s*(```|~~~)")
_MD_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_RULE = re.compile(r"^\s*([=\-~^\"'`*+#:._])\1{2,}\s*$")
_SIMPLE_TABLE_RULE = re.compile(r"^\s*=+(?:\s+=+)+\s*$")
_GRID_LINE = re.compile(r"^\s*\+[-=+]+\+\s*$")
_LIST_ITEM = re.compile(r"^(\s*)(?:[-*+•]|\d+[.)]|#\.|[a-zA-Z][.)])\s+(?=\S)")
_DIRECTIVE = re.compile(r"^\s*\.\.\s+([\w:-]+)::\s*(.*)$")
_CODE_DIRECTIVES = {"code-block", "code", "sourcecode", "console", "literalinclude", "highlight", "math",
                    "graphviz", "doctest", "testcode", "csv-table", "list-table", "toctree", "image", "figure",
                    "raw", "only", "include", "autoclass", "automodule", "autofunction"}
_COMMENT_OR_TARGET = re.compile(r"^\s*\.\.(\s+_[^:]*:.*|\s*$|\s+[^:]*$)")
_PUNCTUATED_END = re.compile(r"[.!?:;,…][\"')\]’”*_`]*$")
TITLE_WORDS, FEW_WORDS = 12, 6
_MARKUP = re.compile(r"[`*_:|<>\[\]{}=]")
_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.\d+(?:\.\d+)*)\s+\S")
_MD_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def parse_blocks(text: str) -> list[Block]:
    """The blocks of `text`, in order. Code is kept as CODE blocks (never quoted as sentences)."""
    blocks: list[Block] = []
    heading = ""
    current: list[str] = []
    current_start = current_index = 0
    current_kind = PARAGRAPH
    code: list[str] = []
    fence = False
    literal_indent: int | None = None  # inside an indented reST literal block: its parent's indent
    simple_table = False
    ordinal: int | None = None  # the number (or letter) of the current list item

    text_indent = 0  # the indentation of the last paragraph, item or heading: the text's own margin

    def flush() -> None:
        nonlocal current, heading, text_indent
        if current:
            joined = " ".join(line.strip() for line in current).strip()
            raw_lines = lines[current_index:current_index + len(current)]
            before = lines[current_index - 1] if current_index else ""
            if current_kind == PARAGRAPH and _indented_code(raw_lines, before, text_indent):
                blocks.append(Block(CODE, "\n".join(raw_lines), heading, current_start))
            elif current_kind == PARAGRAPH and len(current) == 1 and _title_line(joined):
                heading = joined
                blocks.append(Block(HEADING, joined, heading, current_start))
                text_indent = _indent(raw_lines[0])
            elif joined:
                blocks.append(Block(current_kind, joined, heading, current_start))
                text_indent = _indent(lines[current_index]) if current_kind == PARAGRAPH else text_indent
        current = []

    def flush_code() -> None:
        nonlocal code
        while code and not code[-1].strip():
            code.pop()
        if code:
            blocks.append(Block(CODE, "\n".join(code), heading, offset))
        code = []

    lines = text.splitlines()
    offsets = _line_offsets(text)
    for index, raw in enumerate(lines):
        offset = offsets[index]
        stripped = raw.strip()
        indent = len(raw) - len(raw.lstrip())
        if fence:
            if _FENCE.match(raw):
                fence = False
                flush_code()
            else:
                code.append(raw)
            continue
        if _FENCE.match(raw) and not _underlines(current, raw):
            flush()
            fence = True
            continue
        if literal_indent is not None:
            if not stripped or indent > literal_indent:
                code.append(raw)
                continue
            literal_indent = None
            flush_code()
        if not stripped:
            flush()
            continue
        if _SIMPLE_TABLE_RULE.match(raw):
            flush()
            simple_table = not simple_table if _closes_table(lines, index) else True
            continue
        if simple_table:
            flush()
            blocks.append(Block(ROW, " — ".join(c for c in re.split(r"\s{2,}", stripped) if c), heading, offset))
            continue
        if _GRID_LINE.match(raw) or _MD_TABLE_SEPARATOR.match(raw) and "|" in raw:
            flush()
            continue
        if stripped.startswith("|") and stripped.endswith("|") and len(stripped) > 1:
            flush()
            # Empty cells are kept: a row's cells are named by their position under the header's.
            cells = [c.strip() for c in stripped.strip("|").split("|")]
            blocks.append(Block(ROW, " — ".join(cells), heading, offset))
            continue
        md_heading = _MD_HEADING.match(raw)
        if md_heading and not stripped.startswith("#."):
            if reads_as_heading(md_heading.group(1)):
                flush()
                heading = md_heading.group(1)
                blocks.append(Block(HEADING, heading, heading, offset))
                continue
            stripped = md_heading.group(1)  # prose behind a "#" (base.reads_as_heading): quoted without it
        if _RULE.match(raw):
            # A reST underline makes the one line above it a heading; an overline or a transition
            # (a rule between blank lines) is only decoration.
            if _underlines(current, raw):
                heading = current[0].strip()
                current = []
                blocks.append(Block(HEADING, heading, heading, current_start))
            else:
                flush()
            continue
        directive = _DIRECTIVE.match(raw)
        if directive:
            flush()
            name = directive.group(1).lower()
            if name in _CODE_DIRECTIVES:
                literal_indent = indent
            continue
        if _COMMENT_OR_TARGET.match(raw):
            flush()
            continue
        if _man_section(lines, index):
            flush()
            heading = stripped
            blocks.append(Block(HEADING, heading, heading, offset))
            continue
        item = _LIST_ITEM.match(raw)
        if item and current and not _starts_item(raw, ordinal if current_kind == ITEM else None):
            item = None  # a number wrapped to the start of a line ("exceeds\n1000. Then"): text goes on
        if item:
            flush()
            current_kind, current_start = ITEM, offset
            current = [raw[item.end():]]
            ordinal = _ordinal(raw)
        else:
            if not current:
                current_kind, current_start, current_index = PARAGRAPH, offset, index
            current.append(stripped)
        if stripped.endswith("::"):
            current[-1] = current[-1][:-1]  # "using X::" reads "using X:"; the literal block follows
            flush()
            literal_indent = indent
    flush()
    flush_code()
    return blocks


# Plain text sets its examples (configuration, commands, listings) apart by indentation alone. A
# paragraph indented at least CODE_INDENT further than the text around it, after a blank line, is
# code when it reads as code: half its lines start as code does (_CODE_LINE), or many of its tokens
# are what prose seldom has (an assignment, a path, a variable, braces). Indented prose (a reST block
# quote, a note, a manual page's body) stays prose.
CODE_INDENT = 4
CODE_TOKEN_SHARE = 0.3
_CODE_TOKEN = re.compile(r"[=$/@{}<>;|\\]|^\d+$")
# A line that is code by its start: numbered (a listing's line numbers), an assignment ("mynetworks =
# 127.0.0.0/8"), a path ("/etc/postfix/main.cf:"), a shell or Python prompt.
_CODE_LINE = re.compile(r"^\s*(?:\d+(?:\s{2,}\S|\s*$|\s+/)|[\w.$\[\]-]+\s*[:+]?=(?:\s|$)|\.{0,2}/\w|~/|\$ |>>> )")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented_code(block: list[str], before: str, text_indent: int) -> bool:
    """`block` (a paragraph's lines, as written) is an example set apart by indentation."""
    if before.strip() or min(_indent(line) for line in block) < text_indent + CODE_INDENT:
        return False
    if sum(bool(_CODE_LINE.match(line)) for line in block) * 2 >= len(block):
        return True
    tokens = " ".join(block).split()
    # Inline code, roles and links are prose's own markup ("See :doc:`/topics/db/queries`.").
    code = [t for t in tokens if _CODE_TOKEN.search(t) and "`" not in t and "](" not in t]
    return len(code) >= CODE_TOKEN_SHARE * len(tokens)


_ORDINAL = re.compile(r"^\s*(\d+|[a-zA-Z])[.)]\s")
_MAN_SECTION = re.compile(r"^[A-Z][A-Z0-9 ]*$")


def _ordinal(line: str) -> int | None:
    """The number of a numbered or lettered list item ("3." 3, "b)" 2); None for a bullet."""
    marker = _ORDINAL.match(line)
    if marker is None:
        return None
    value = marker.group(1)
    return int(value) if value.isdigit() else ord(value.lower()) - ord("a") + 1


def _starts_item(line: str, previous: int | None) -> bool:
    """Whether a line with a list marker, coming inside a paragraph or list item, starts a new
    item: a bullet does, a number or letter only when it starts a list (1, a) or follows the
    item before it (`previous` + 1). Otherwise it is a number wrapped to the start of a line
    ("... exceeds\\n1000. Then ..."), which CommonMark too keeps in its paragraph."""
    number = _ordinal(line)
    return number is None or number == 1 or (previous is not None and number == previous + 1)


def _man_section(lines: list[str], index: int) -> bool:
    """A manual page's section heading as `man` renders it: a line of capitals at the margin
    ("DESCRIPTION", "SEE ALSO") over an indented line."""
    line = lines[index]
    following = lines[index + 1] if index + 1 < len(lines) else ""
    return (bool(_MAN_SECTION.match(line)) and len(line.split()) <= 3 and any(c.isalpha() for c in line)
            and following[:1].isspace() and bool(following.strip()))


def _title_line(line: str) -> bool:
    """A paragraph of one line that reads as a title, the way PDFs (and plain text) give headings:
    numbered ("2.4 Library Notes"), a few words ("Who should read this") or a title by plain text's
    rule (corpus.ingest.parse.layout.reads_as_title: "What you need to know about Postfix logging",
    as ingestion found it), starting with a capital or a digit, ending in no punctuation, without
    inline markup ("Default: ``None``" and "**Attributes**" in reST are not headings)."""
    first = next((c for c in line if c.isalnum()), "")
    if (not first or first.islower() or _MARKUP.search(line) or _PUNCTUATED_END.search(line)
            or not any(c.isalpha() for c in line)):
        return False
    return (bool(_NUMBERED.match(line)) and len(line.split()) <= TITLE_WORDS or len(line.split()) <= FEW_WORDS
            or reads_as_title(line))


def _line_offsets(text: str) -> list[int]:
    offsets, position = [], 0
    for line in text.splitlines(keepends=True):
        offsets.append(position)
        position += len(line)
    return offsets


def _underlines(current: list[str], line: str) -> bool:
    """A rule ("~~~~~", "=====") right under a one-line paragraph, about as long: a reST heading."""
    stripped = line.strip()
    return (len(current) == 1 and bool(_RULE.match(line))
            and len(stripped) >= len(current[0].strip()) - 1 and not current[0].strip().startswith("```"))


def _closes_table(lines: list[str], index: int) -> bool:
    """A simple-table rule closes the table unless table rows follow it (the rule under the header)."""
    return index + 1 >= len(lines) or not lines[index + 1].strip()


_ROLE = re.compile(r":(?:[\w.-]+:)?([\w.-]+):`([^`]+)`")
_LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`__?")
_REF = re.compile(r"`([^`]+)`_(?!\w)")
_LITERAL = re.compile(r"``(.+?)``")
# A reST reference by a bare word ("SQLite_", "Django__"), not a Markdown _emphasis_, a __dunder__ or a path.
_WORD_REF = re.compile(r"(?<![\w`*/.\\-])([A-Za-z][\w.+-]*?[A-Za-z0-9+])__?(?![\w`*])")
_CODE_SPAN = re.compile(r"(`+)[^`]*\1")
_PLAIN_ROLES = {"doc", "ref", "term", "pep", "rfc", "abbr", "dfn", "download", "numref", "envvar"}


def display_heading(text: str) -> str:
    """A heading as its words read, without Markdown or reST markup ("`asObject` (Boolean)" reads
    "asObject (Boolean)")."""
    return plain(display_text(text))


def display_text(text: str) -> str:
    """reST inline markup as Markdown a reader can read; Markdown's links, images and inline HTML
    as markdown_inline.readable() leaves them (a link stays one only to an absolute URL)."""
    def role(match: re.Match) -> str:
        name, body = match.group(1), match.group(2)
        label = body
        target = re.match(r"^(.*?)\s*<[^>]+>$", body)
        if target:
            label = target.group(1)
        elif label.startswith("~"):
            label = label[1:].rsplit(".", 1)[-1]
        label = label.lstrip("!")
        if name in _PLAIN_ROLES:
            return label
        return f"`{label}`"

    text = _ROLE.sub(role, text)
    text = _LINK.sub(r"\1", text)
    text = _REF.sub(r"\1", text)
    text = _LITERAL.sub(r"`\1`", text)
    text = _outside_code(text, lambda part: _WORD_REF.sub(r"\1", part))
    return readable(text.replace("\\ ", "").strip())


def _outside_code(text: str, change) -> str:
    """`text` with `change` applied to the parts outside `code` spans."""
    parts, last = [], 0
    for match in _CODE_SPAN.finditer(text):
        parts += [change(text[last:match.start()]), match.group(0)]
        last = match.end()
    return "".join(parts) + change(text[last:])
