"""Checking a ZIP container (.docx, .xlsx, .pptx, .odt, .epub) before anything unpacks it for real.

python-docx reads every part of the package into memory and parses its XML parts with lxml (so do
python-pptx and the OpenDocument and EPUB readers; openpyxl streams a sheet but not the rest), so a
small file whose parts inflate to gigabytes, or whose XML holds millions of elements, would take
the worker's memory with it. check_zip refuses such a file while streaming through it, holding
one block of inflated bytes at a time.
"""

from __future__ import annotations

import io
import struct
import zipfile
import zlib

from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.limits import decompressed_error, markup_error, max_decompressed_bytes, max_markup_elements

# Far more parts than any Word document has; zipfile builds an object per entry before we can look.
MAX_ENTRIES = 10_000
_BLOCK = 1 << 20
_END_OF_CENTRAL_DIRECTORY = b"PK\x05\x06"
_MARKUP_SUFFIXES = (".xml", ".rels")


def entry_count(data: bytes) -> int | None:
    """Entries announced by the archive's end-of-central-directory record (None if none is found)."""
    at = data.rfind(_END_OF_CENTRAL_DIRECTORY, max(0, len(data) - 65_557))
    if at < 0 or at + 12 > len(data):
        return None
    return struct.unpack_from("<H", data, at + 10)[0]


def check_zip(data: bytes, what: str, damaged: str) -> None:
    """Raise ParseError unless every part of the archive `data` inflates, in total, to at most
    MAX_DECOMPRESSED_BYTES, and its XML parts hold at most MAX_MARKUP_ELEMENTS elements.

    The declared sizes are checked first (free), then each part is inflated block by block and
    its actual bytes counted, since a declared size can lie. `what` names the file in messages
    ("The Word file"); `damaged` is the message for an archive that cannot be read at all.
    """
    count = entry_count(data)
    if count is not None and count >= min(MAX_ENTRIES, 0xFFFF):  # 0xFFFF: a ZIP64 count is elsewhere
        raise ParseError(f"{what} holds more than {MAX_ENTRIES:,} parts; it is not a document we can read.")
    limit = max_decompressed_bytes()
    markup_limit = max_markup_elements()
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            infos = archive.infolist()
            if len(infos) > MAX_ENTRIES:
                raise ParseError(f"{what} holds more than {MAX_ENTRIES:,} parts; it is not a document we can read.")
            if sum(info.file_size for info in infos) > limit:
                raise decompressed_error(what)
            inflated = 0
            elements = 0
            for info in infos:
                markup = info.filename.lower().endswith(_MARKUP_SUFFIXES)
                with archive.open(info) as member:
                    while block := member.read(_BLOCK):
                        inflated += len(block)
                        if inflated > limit:
                            raise decompressed_error(what)
                        if markup:
                            elements += block.count(b"<")
                            if elements > markup_limit:
                                raise markup_error(what)
    except ParseError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, NotImplementedError, OSError, EOFError,
            ValueError, RuntimeError) as exc:  # RuntimeError: an encrypted part
        raise ParseError(damaged) from exc
