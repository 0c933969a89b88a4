"""EPUB: the chapters of the spine in reading order, each read by the HTML parser (htmltext.py),
each a section: its own headings, or, when it has none, a heading from its <title> (or "Section N"
when that is missing or only repeats the book's title).

An EPUB is a ZIP: archive.check_zip bounds it; container.xml and the package document (OPF) are
read by xmlparts (no DTDs, no entities). Chapter paths come from the package document, so they
are resolved against its folder and must name a part inside the archive: a path that climbs out
("../../etc/passwd") or is absolute is skipped. Nothing is ever written to disk.
"""

from __future__ import annotations

import io
import posixpath
import zipfile
from urllib.parse import unquote

from corpus.ingest.parse.archive import check_zip
from corpus.ingest.parse.base import Heading, ParseError
from corpus.ingest.parse.htmltext import parse_html
from corpus.ingest.parse.sections import Sections
from corpus.ingest.parse.xmlparts import parse_xml, read_part

DAMAGED_MESSAGE = "The EPUB book is damaged or is not an .epub file and could not be read."
_WHAT = "The EPUB book"
_CONTAINER = "{urn:oasis:names:tc:opendocument:xmlns:container}"
_OPF = "{http://www.idpf.org/2007/opf}"
_DC = "{http://purl.org/dc/elements/1.1/}"
_CHAPTER_TYPES = frozenset({"application/xhtml+xml", "text/html"})


def parse_epub(data: bytes) -> tuple[str, list[Heading], str | None]:
    """(text, headings, dc:title of the package or None). Raises ParseError when no chapter
    of the spine has text."""
    check_zip(data, _WHAT, DAMAGED_MESSAGE)
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            return _parse(archive)
    except ParseError:
        raise
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, EOFError) as exc:
        raise ParseError(DAMAGED_MESSAGE) from exc


def _parse(archive: zipfile.ZipFile) -> tuple[str, list[Heading], str | None]:
    names = set(archive.namelist())
    container = parse_xml(read_part(archive, "META-INF/container.xml", DAMAGED_MESSAGE), what=_WHAT,
                          damaged=DAMAGED_MESSAGE)
    rootfile = container.find(f".//{_CONTAINER}rootfile")
    package_path = _inside("", rootfile.get("full-path", "") if rootfile is not None else "")
    if package_path is None or package_path not in names:
        raise ParseError(DAMAGED_MESSAGE)
    package = parse_xml(archive.read(package_path), what=_WHAT, damaged=DAMAGED_MESSAGE)
    base = posixpath.dirname(package_path)
    manifest = {item.get("id"): item for item in package.iter(f"{_OPF}item")}
    title_element = package.find(f".//{_DC}title")
    title = " ".join((title_element.text or "").split()) if title_element is not None else ""
    sections = Sections()
    number = 0
    read: set[str] = set()  # each part once: a spine may list one part a million times
    for itemref in package.iter(f"{_OPF}itemref"):
        item = manifest.get(itemref.get("idref"))
        if item is None or item.get("media-type") not in _CHAPTER_TYPES:
            continue
        path = _inside(base, item.get("href", ""))
        if path is None or path not in names or path in read:
            continue  # outside the book, missing, or read already
        read.add(path)
        chapter = archive.read(path)
        if not chapter.strip():
            continue
        try:
            text, headings, chapter_title = parse_html(chapter)
        except ParseError as exc:
            raise ParseError(f"{_WHAT}'s chapter {path}: {exc}") from None
        if not text.strip():
            continue  # a cover image or a blank page
        number += 1
        if not headings:  # a heading all the same, so citations say where: its own title, not the book's
            sections.add(chapter_title if chapter_title and chapter_title != title else f"Section {number}", level=1)
        sections.extend(text, headings)
    if not number:
        raise ParseError(f"{_WHAT} has no chapter with text.")
    return sections.text(), sections.headings, title or None


def _inside(base: str, href: str) -> str | None:
    """The archive path of `href` relative to the folder `base`, or None if it leaves the archive
    (absolute, a URL, or climbing above its root)."""
    href = unquote(href.split("#", 1)[0])
    if not href or href.startswith("/") or "\\" in href or ":" in href:
        return None
    path = posixpath.normpath(posixpath.join(base, href))
    if path == ".." or path.startswith("../") or path.startswith("/"):
        return None
    return path
