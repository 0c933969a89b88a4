"""A file's own properties (author, created, modified) where its format states them: PDF
document information, DOCX core properties (docProps/core.xml), HTML <meta> tags, EML headers.

Best effort by design: the text has been read already (corpus.ingest.parse), so a property that
is missing or malformed is simply unknown, never a reason to refuse the file. Each reader looks
at the least it can (the core properties part, the head of an HTML page, the mail headers).
"""

from __future__ import annotations

import io
import logging
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from email import policy
from email.parser import BytesHeaderParser
from email.utils import parseaddr

from corpus.ingest.parse.formats import DOCX, EML, HTML, PDF

logger = logging.getLogger(__name__)

AUTHOR_MAX_CHARS = 200
HTML_HEAD_BYTES = 256 * 1024  # meta tags live in the head; the rest of a large page is not parsed again
CORE_XML_MAX_BYTES = 1024 * 1024
_DC = "{http://purl.org/dc/elements/1.1/}"
_DCTERMS = "{http://purl.org/dc/terms/}"
_HTML_AUTHOR = ("author", "dc.creator", "dcterms.creator", "article:author")
_HTML_CREATED = ("article:published_time", "dcterms.created", "dc.date", "date", "dcterms.date")
_HTML_MODIFIED = ("article:modified_time", "dcterms.modified", "last-modified", "og:updated_time")


@dataclass(frozen=True)
class Properties:
    author: str = ""
    created: datetime | None = None
    modified: datetime | None = None


def read_properties(data: bytes, kind: str) -> Properties:
    """The properties of a file of media type `kind`; empty Properties for other formats or on
    any error."""
    reader = _READERS.get(kind)
    if reader is None:
        return Properties()
    try:
        found = reader(data)
    except Exception:  # noqa: BLE001 - optional information; the parsers report real damage
        logger.info("could not read the %s properties", kind, exc_info=True)
        return Properties()
    return Properties(author=" ".join((found.author or "").split())[:AUTHOR_MAX_CHARS],
                      created=_aware(found.created), modified=_aware(found.modified))


def _aware(moment: object) -> datetime | None:
    if not isinstance(moment, datetime):
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parse_iso(value: str | None) -> datetime | None:
    """An ISO 8601 date or date-time ("2024-05-01", "2024-05-01T10:00:00Z"); None if it is not one."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None


def _pdf(data: bytes) -> Properties:
    from pypdf import PdfReader

    info = PdfReader(io.BytesIO(data)).metadata
    if info is None:
        return Properties()
    author = info.author if isinstance(info.author, str) else ""
    return Properties(author=author, created=_safe(lambda: info.creation_date),
                      modified=_safe(lambda: info.modification_date))


def _safe(read):
    """A pypdf date property; a malformed date string raises, and means unknown."""
    try:
        return read()
    except Exception:  # noqa: BLE001
        return None


def _docx(data: bytes) -> Properties:
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo("docProps/core.xml")
        if info.file_size > CORE_XML_MAX_BYTES:
            return Properties()
        root = etree.fromstring(archive.read(info), parser=etree.XMLParser(resolve_entities=False, no_network=True))

    def text(tag: str) -> str:
        element = root.find(tag)
        return (element.text or "").strip() if element is not None else ""

    return Properties(author=text(f"{_DC}creator"), created=parse_iso(text(f"{_DCTERMS}created")),
                      modified=parse_iso(text(f"{_DCTERMS}modified")))


def _html(data: bytes) -> Properties:
    import lxml.html

    root = lxml.html.document_fromstring(data[:HTML_HEAD_BYTES])
    meta: dict[str, str] = {}
    for element in root.iter("meta"):
        name = (element.get("name") or element.get("property") or element.get("http-equiv") or "").strip().lower()
        content = (element.get("content") or "").strip()
        if name and content:
            meta.setdefault(name, content)

    def first(names: tuple[str, ...]) -> str:
        return next((meta[n] for n in names if n in meta), "")

    return Properties(author=first(_HTML_AUTHOR), created=parse_iso(first(_HTML_CREATED)),
                      modified=parse_iso(first(_HTML_MODIFIED)))


def _eml(data: bytes) -> Properties:
    headers = BytesHeaderParser(policy=policy.default).parsebytes(data)
    sender = str(headers.get("From") or "")
    name, address = parseaddr(sender)
    date = headers.get("Date")
    sent = getattr(date, "datetime", None)
    return Properties(author=name or address, created=sent, modified=sent)


_READERS = {PDF: _pdf, DOCX: _docx, HTML: _html, EML: _eml}
