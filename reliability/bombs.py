"""Generated files that cost far more to unpack or parse than their size suggests."""

from __future__ import annotations

import io
import struct
import zipfile
import zlib
from pathlib import Path

from tests import formats

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "files"
_BLOCK = 1 << 20


def docx_bomb(inflated: int = 1_100_000_000, *, base: bytes | None = None) -> bytes:
    """A real .docx (the fixture report.docx) whose word/document.xml inflates to about `inflated`
    bytes: blank space between the XML's elements, which is still well-formed XML."""
    base = base if base is not None else (FIXTURES / "report.docx").read_bytes()
    return _padded(base, "word/document.xml", b"<w:body>", inflated)


def xlsx_bomb(inflated: int = 1_100_000_000) -> bytes:
    """A real .xlsx (openpyxl) whose first worksheet inflates to about `inflated` bytes of blank space."""
    return _padded(formats.xlsx({"Sheet": [["Item", "Cost"], ["Rent", 1200]]}), "xl/worksheets/sheet1.xml",
                   b"<sheetData>", inflated)


def _padded(base: bytes, part: str, after: bytes, inflated: int) -> bytes:
    """The ZIP `base` with blank space inserted after `after` in `part`, to about `inflated` bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as source, \
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename != part:
                target.writestr(info, data)
                continue
            head, tail = data.split(after, 1)
            with target.open(part, "w") as member:  # the archive's deflate, level 9
                member.write(head + after)
                block = b" " * _BLOCK
                for _ in range(max(0, inflated - len(data)) // _BLOCK):
                    member.write(block)
                member.write(tail)
    return out.getvalue()


def _replaced(base: bytes, part: str, old: bytes, new: bytes) -> bytes:
    """The ZIP `base` with the first `old` in `part` replaced by `new`."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as source, \
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == part:
                assert old in data, (part, old)
                data = data.replace(old, new, 1)
            target.writestr(info, data)
    return out.getvalue()


def xlsx_cells(rows: int, columns: int) -> bytes:
    """A real .xlsx whose first sheet holds rows x columns numeric cells (written as raw XML: openpyxl
    would take minutes to write a million cells)."""
    row = b"<row>" + b"<c><v>1</v></c>" * columns + b"</row>"
    return _replaced(formats.xlsx({"Sheet": [["x"]]}), "xl/worksheets/sheet1.xml",
                     b"<sheetData>", b"<sheetData>" + row * rows)


def xlsx_claiming_everything() -> bytes:
    """An .xlsx with two cells, at A1 and XFD1048576: read naively, 17 billion cells."""
    return _replaced(formats.xlsx({"Sheet": [["corner"]]}), "xl/worksheets/sheet1.xml", b"</sheetData>",
        b'<row r="1048576"><c r="XFD1048576" t="inlineStr"><is><t>far</t></is></c></row></sheetData>')


def pptx_huge_slide(paragraphs: int) -> bytes:
    """A real .pptx (python-pptx) whose first slide's body holds `paragraphs` empty paragraphs."""
    return _replaced(formats.pptx([("Title", "Body", "")]), "ppt/slides/slide1.xml", b"</p:txBody>",
                     b"<a:p/>" * paragraphs + b"</p:txBody>")


def odt_with_content(content: bytes) -> bytes:
    """An .odt (odfpy) whose content.xml is `content`."""
    base = formats.odt()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            target.writestr(info, content if info.filename == "content.xml" else source.read(info))
    return out.getvalue()


def epub_path_traversal() -> bytes:
    """An EPUB whose spine points out of the book: at a ../../ entry it holds and at /etc/passwd."""
    return formats.epub([("c1.xhtml", "<h1>Inside</h1><p>The only chapter inside the book.</p>")],
                        hrefs=["../../../etc/passwd", "../../evil.xhtml", "c1.xhtml"],
                        extra={"../../evil.xhtml": b"<html><body><p>Escaped the book!</p></body></html>"})


def eml_nested(depth: int) -> bytes:
    """An email whose multipart parts nest `depth` deep."""
    head = b"From: a@example.com\nSubject: Deep\nMIME-Version: 1.0\n"
    opening = b"".join(b'Content-Type: multipart/mixed; boundary="b%d"\n\n--b%d\n' % (i, i) for i in range(depth))
    closing = b"".join(b"\n--b%d--\n" % i for i in reversed(range(depth)))
    return head + opening + b"Content-Type: text/plain\n\ndeep text\n" + closing


def docx_lying_sizes(inflated: int = 200_000_000) -> bytes:
    """A .docx bomb whose headers declare word/document.xml to be 1 KB."""
    data = bytearray(docx_bomb(inflated))
    name = b"word/document.xml"
    # Central directory entries ("PK\1\2"): the uncompressed size is at offset 24 of the entry.
    at = 0
    while (at := data.find(b"PK\x01\x02", at)) >= 0:
        name_length = struct.unpack_from("<H", data, at + 28)[0]
        if bytes(data[at + 46: at + 46 + name_length]) == name:
            struct.pack_into("<I", data, at + 24, 1024)
            local = struct.unpack_from("<I", data, at + 42)[0]
            struct.pack_into("<I", data, local + 22, 1024)
        at += 4
    return bytes(data)


def docx_many_paragraphs(paragraphs: int) -> bytes:
    """A small .docx with `paragraphs` empty paragraphs (each an element in lxml's tree)."""
    base = (FIXTURES / "report.docx").read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as source, \
            zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                head, tail = data.split(b"<w:body>", 1)
                data = head + b"<w:body>" + b"<w:p/>" * paragraphs + tail
            target.writestr(info, data)
    return out.getvalue()


def pdf_pages(contents: list[bytes], *, raw: bool = False) -> bytes:
    """A minimal, valid PDF with one page per content stream (FlateDecode compressed; `raw`: each
    is already compressed)."""
    streams = [content if raw else zlib.compress(content, 9) for content in contents]
    pages = len(streams)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [" + b" ".join(b"%d 0 R" % (4 + 2 * i) for i in range(pages))
        + b"] /Count %d >>" % pages,
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, stream in enumerate(streams):
        objects.append(b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
                       b"/Contents %d 0 R >>" % (5 + 2 * i))
        objects.append(b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream")
    out = bytearray(b"%PDF-1.7\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def pdf_text(text: str, *, pages: int = 1) -> bytes:
    """A PDF whose pages each show `text` on one line."""
    escaped = text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")
    return pdf_pages([b"BT /F1 12 Tf 72 720 Td (" + escaped + b") Tj ET"] * pages)


def _deflated_blank(size: int) -> bytes:
    compressor = zlib.compressobj(9)
    parts = [compressor.compress(b" " * _BLOCK) for _ in range(size // _BLOCK)]
    parts.append(compressor.flush())
    return b"".join(parts)


def pdf_bomb(inflated: int = 500_000_000, *, pages: int = 1) -> bytes:
    """A PDF whose pages' content streams each inflate to `inflated` bytes of blank space."""
    stream = _deflated_blank(inflated)
    return pdf_pages([stream] * pages, raw=True)


def png_claiming(width: int, height: int) -> bytes:
    """A PNG whose header claims width × height pixels over a few bytes of data: a decompression
    bomb's header (decoded, 60,000 × 60,000 grey pixels would take 3.6 GB)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    data = zlib.compress(b"\x00" * 1000)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", data) + _png_chunk(b"IEND", b"")


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def scanned_pdf(pages: int) -> bytes:
    """An image-only PDF of `pages` pages (each a small grey image, as a scanner writes), made by Pillow."""
    from PIL import Image

    page = Image.new("L", (200, 280), 230)
    out = io.BytesIO()
    page.save(out, "PDF", save_all=True, append_images=[page] * (pages - 1), resolution=25)
    return out.getvalue()


def tiff_truncated() -> bytes:
    """A two-page TIFF (deflate-compressed) cut in half."""
    from PIL import Image, ImageDraw

    page = Image.new("L", (600, 200), 255)
    ImageDraw.Draw(page).text((20, 80), "A scanned page that was cut short.", fill=0)
    out = io.BytesIO()
    page.save(out, "TIFF", save_all=True, append_images=[page], compression="tiff_deflate")
    return out.getvalue()[: len(out.getvalue()) // 2]
