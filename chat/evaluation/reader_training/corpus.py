"""Documents to make training questions from: the docstrings of permissively licensed Python
packages that `make install-dev` puts in the virtualenv (pinned in requirements*.txt, so the same text
every time), read with `ast` (nothing is imported), and of Python's standard library (PSF licence).

A docstring becomes sections under headings ("numpy.linalg.norm", "numpy.linalg.norm — Parameters"),
each a list of units: a prose sentence, or a term kept with its definition ("axis (int, optional):
Axis along which to compute."), the way the answer's candidates look.

Django's own code is left out: the development evaluation set is Django's documentation.
"""

from __future__ import annotations

import ast
import inspect
import re
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chat.answering.text import split_sentences

# package (import name) -> licence. Every one allows commercial use and redistribution of derived
# work; none is under a non-commercial licence.
PACKAGES = {
    "numpy": "BSD-3-Clause", "scipy": "BSD-3-Clause", "sklearn": "BSD-3-Clause", "celery": "BSD-3-Clause",
    "kombu": "BSD-3-Clause", "requests": "Apache-2.0", "urllib3": "MIT", "click": "BSD-3-Clause",
    "jinja2": "BSD-3-Clause", "pydantic": "MIT", "rich": "MIT", "attr": "MIT", "openpyxl": "MIT",
    "docutils": "BSD-2-Clause / public domain", "pygments": "BSD-2-Clause", "markdown": "BSD-3-Clause",
    "sympy": "BSD-3-Clause", "networkx": "BSD-3-Clause", "matplotlib": "Matplotlib (PSF-based)",
    "torch": "BSD-3-Clause", "transformers": "Apache-2.0", "sentence_transformers": "Apache-2.0",
    "huggingface_hub": "Apache-2.0", "dateutil": "Apache-2.0 / BSD-3-Clause", "babel": "BSD-3-Clause",
    "pypdf": "BSD-3-Clause", "pdfminer": "MIT", "docx": "MIT", "pptx": "MIT", "bs4": "MIT",
    "lxml": "BSD-3-Clause", "PIL": "MIT-CMU (HPND)", "rest_framework": "BSD-3-Clause",
    "hypothesis": "MPL-2.0", "pytest": "MIT", "_pytest": "MIT", "httpx2": "BSD-3-Clause", "anyio": "MIT",
    "trafilatura": "Apache-2.0", "redis": "MIT", "fsspec": "BSD-3-Clause", "joblib": "BSD-3-Clause",
    "mpmath": "BSD-3-Clause", "packaging": "Apache-2.0 / BSD-2-Clause", "yaml": "MIT",
}
STDLIB = "PSF-2.0"

NUMPY_SECTIONS = {"parameters", "other parameters", "returns", "yields", "raises", "attributes", "notes",
                  "warnings", "warns", "see also", "examples", "references", "methods", "keyword arguments"}
GOOGLE_SECTIONS = {"args", "arguments", "parameters", "returns", "return", "yields", "raises", "attributes",
                   "note", "notes", "example", "examples", "keyword args", "kwargs", "warning", "warnings"}
SKIPPED = {"examples", "example", "see also", "references", "methods"}
DEFINITIONS = {"parameters", "other parameters", "args", "arguments", "attributes", "raises", "keyword args",
               "kwargs", "keyword arguments", "warns", "returns", "return", "yields"}

_ROLE = re.compile(r":[\w:.-]+:`~?([^`<]+?)(?:\s*<[^>]*>)?`")
_LITERAL = re.compile(r"``([^`]+)``")
_LINK = re.compile(r"`([^`<]+?)\s*<[^>]+>`_+")
_DIRECTIVE = re.compile(r"^\.\.\s+(versionadded|versionchanged|deprecated)::\s*(\S+)\s*(.*)$")
_NUMPY_TERM = re.compile(r"^([*\w][\w*, ]{0,60}?)\s*:\s*(.{0,120})$")
_GOOGLE_TERM = re.compile(r"^([*\w][\w*]{0,40})\s*(?:\(([^)]{1,80})\))?\s*:\s*(.*)$")


@dataclass
class Section:
    heading: str
    units: list[str] = field(default_factory=list)
    terms: list[str] = field(default_factory=list)  # the term of each unit that defines one, else ""
    kind: str = "prose"  # prose, or the definition section's name ("parameters", "returns"...)


@dataclass
class Doc:
    name: str  # qualified name: numpy.linalg.norm
    package: str
    licence: str
    sections: list[Section]
    function: bool = False


def inline(text: str) -> str:
    """reST inline markup as Markdown: roles and literals in backticks, links as their text."""
    text = _LINK.sub(r"\1", text)
    text = _ROLE.sub(r"`\1`", text)
    return _LITERAL.sub(r"`\1`", text)


def _joined(lines: list[str]) -> str:
    return inline(" ".join(line.strip() for line in lines if line.strip()))


def _paragraphs(lines: list[str]) -> Iterator[list[str]]:
    current: list[str] = []
    for line in lines:
        if line.strip():
            current.append(line)
        elif current:
            yield current
            current = []
    if current:
        yield current


_FIELD = re.compile(r":(param|parameter|arg|argument|key|keyword|returns?|raises?|except|type|rtype|ivar|cvar|var|"
                    r"copyright|license|licence)\b\s*([^:]*):")
_UNDERLINE = re.compile(r"\s*[~=^\-*#]{3,}\s*")


def _fields(text: str) -> tuple[list[str], list[str]]:
    """reST field lists (":param timeout: How long to wait.") as term-with-definition units."""
    units, terms = [], []
    matches = list(_FIELD.finditer(text))
    for match, following in zip(matches, [*matches[1:], None], strict=True):
        kind, name = match.group(1), match.group(2).split()
        body = text[match.end():following.start() if following else len(text)].strip()
        if kind in ("type", "rtype", "copyright", "license", "licence", "except") or len(body.split()) < 3:
            continue
        body = " ".join(split_sentences(body)[:2])
        if kind.startswith("return"):
            term, label = "returns", "Returns"
        elif kind.startswith("raise"):
            term = label = f"Raises {name[-1]}" if name else "Raises"
        elif name:
            term = label = name[-1]
        else:
            continue
        units.append(f"{label}: {body}")
        terms.append(term)
    return units, terms


def _prose_units(lines: list[str]) -> tuple[list[str], list[str]]:
    units: list[str] = []
    terms: list[str] = []
    for paragraph in _paragraphs(lines):
        first = paragraph[0].strip()
        directive = _DIRECTIVE.match(first)
        if directive:
            kind, version, rest = directive.groups()
            rest = _joined([rest, *paragraph[1:]])
            lead = {"versionadded": "New in version", "versionchanged": "Changed in version",
                    "deprecated": "Deprecated since version"}[kind]
            units.append(f"{lead} {version}" + (f": {rest}" if rest else "."))
            terms.append("")
            continue
        if first.startswith((">>>", "..", "::", "|", "+-", "=", "$ ")) or paragraph[0].startswith(("    ", "\t")):
            continue  # code, directives, tables, indented literal blocks
        text = _UNDERLINE.sub(" ", _joined(paragraph)).strip()
        if text.endswith("::"):
            text = text[:-1]
        field = _FIELD.search(text)
        if field:
            text, (more, more_terms) = text[:field.start()], _fields(text[field.start():])
        else:
            more, more_terms = [], []
        for bullet in re.split(r"(?:^|\s)[*•-]\s+(?=\S)", text):
            sentences = [s for s in split_sentences(bullet) if 4 <= len(s.split()) and len(s) <= 400]
            units += sentences
            terms += [""] * len(sentences)
        units += more
        terms += more_terms
    return units, terms


def _definition_units(lines: list[str], style: str) -> tuple[list[str], list[str]]:
    """Term-with-definition units of a Parameters/Args-like section, and each unit's term."""
    entries: list[tuple[str, str, list[str]]] = []
    base = min((len(line) - len(line.lstrip()) for line in lines if line.strip()), default=0)
    for line in lines:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip()) - base
        stripped = line.strip()
        match = (_NUMPY_TERM if style == "numpy" else _GOOGLE_TERM).match(stripped) if indent == 0 else None
        if match:
            if style == "numpy":
                entries.append((match.group(1).strip(), match.group(2).strip(), []))
            else:
                entries.append((match.group(1), (match.group(2) or "").strip(), [match.group(3)]))
        elif entries:
            entries[-1][2].append(stripped)
    units, terms = [], []
    for term, kind, body in entries:
        description = " ".join(split_sentences(_joined(body))[:2])
        if not description or len(description.split()) < 3:
            continue
        label = f"{term} ({inline(kind)})" if kind else term
        unit = f"{label}: {description}"
        if len(unit) <= 450:
            units.append(unit)
            terms.append(term)
    return units, terms


def parse_docstring(docstring: str, name: str) -> list[Section]:
    """The sections of one docstring (inspect.cleandoc'ed), code and examples left out."""
    lines = inspect.cleandoc(docstring).splitlines()
    chunks: list[tuple[str, str, list[str]]] = [("", "", [])]  # (section name, style, lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        title = line.strip().rstrip(":").lower()
        underline = i + 1 < len(lines) and re.fullmatch(r"-{3,}|={3,}", lines[i + 1].strip() or "x")
        if underline and title in NUMPY_SECTIONS:
            chunks.append((title, "numpy", []))
            i += 2
            continue
        if line.strip().endswith(":") and not line.startswith(" ") and title in GOOGLE_SECTIONS:
            chunks.append((title, "google", []))
            i += 1
            continue
        chunks[-1][2].append(line)
        i += 1
    sections = []
    for title, style, body in chunks:
        if title in SKIPPED:
            continue
        heading = f"{name} — {title.title()}" if title else name
        if title in DEFINITIONS:
            units, terms = _definition_units(body, style)
            sections.append(Section(heading, units, terms, kind=title))
        else:
            units, terms = _prose_units(body)
            sections.append(Section(heading, units, terms, kind="fields" if any(terms) else "prose"))
    return [s for s in sections if s.units]


def _module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def module_docs(path: Path, root: Path, package: str, licence: str) -> list[Doc]:
    """The documented module, classes, functions and methods of one source file."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, RecursionError):
        return []
    module = _module_name(path, root)
    docs: list[Doc] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if child.name.startswith("_") and child.name != "__init__":
                    continue
                name = f"{prefix}.{child.name}"
                docstring = ast.get_docstring(child, clean=False)
                if docstring and len(docstring) >= 80:
                    sections = parse_docstring(docstring, name)
                    if sections:
                        docs.append(Doc(name, package, licence, sections,
                                        function=not isinstance(child, ast.ClassDef)))
                if isinstance(child, ast.ClassDef):
                    visit(child, name)

    docstring = ast.get_docstring(tree, clean=False)
    if docstring and len(docstring) >= 200:
        sections = parse_docstring(docstring, module)
        if sections:
            docs.append(Doc(module, package, licence, sections))
    visit(tree, module)
    return docs


def package_docs(*, max_files: int = 400) -> Iterator[Doc]:
    """Docs of every package of PACKAGES found installed, then of the standard library; files in
    sorted order, tests and vendored copies skipped, at most `max_files` files a package."""
    site = Path(sysconfig.get_paths()["purelib"])
    for package, licence in sorted(PACKAGES.items()):
        root = site / package
        if root.is_dir():
            yield from _tree_docs(root, site, package, licence, max_files)
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    skip = {"test", "idlelib", "lib2to3", "tkinter", "turtledemo", "site-packages", "ensurepip", "pydoc_data"}
    for path in sorted(stdlib.glob("*.py")):
        yield from module_docs(path, stdlib, "stdlib", STDLIB)
    for root in sorted(p for p in stdlib.iterdir() if p.is_dir() and p.name not in skip):
        yield from _tree_docs(root, stdlib, "stdlib", STDLIB, max_files)


def _tree_docs(root: Path, base: Path, package: str, licence: str, max_files: int) -> Iterator[Doc]:
    files = [p for p in sorted(root.rglob("*.py"))
             if not any(part in ("tests", "test", "testing", "_vendor", "vendor", "externals")
                        for part in p.relative_to(root).parts)]
    for path in files[:max_files]:
        yield from module_docs(path, base, package, licence)


if __name__ == "__main__":  # a quick look: python -m chat.evaluation.reader_training.corpus numpy
    wanted = set(sys.argv[1:])
    for doc in package_docs(max_files=20):
        if not wanted or doc.package in wanted:
            for section in doc.sections:
                print("##", section.heading, f"[{section.kind}]")
                for unit in section.units:
                    print("   -", unit)
