"""What every way in accepts as a document: the web page, the admin, the REST API and
`manage.py ingest` call upload_error with the same rules, so each refuses the same files with the
same message, naming the file."""

from __future__ import annotations

from pathlib import PurePosixPath

from django.conf import settings

from corpus.ingest.parse.formats import SUPPORTED_EXTENSIONS, SUPPORTED_NAMES

__all__ = ["SUPPORTED_EXTENSIONS", "SUPPORTED_HELP", "accept_attribute", "clean_name", "limit_text", "supported",
           "upload_error"]

# The formats for people, under the upload forms' file fields: "Plain text, Markdown, ... JPEG or TIFF."
SUPPORTED_HELP = SUPPORTED_NAMES[:1].upper() + SUPPORTED_NAMES[1:] + "."


def clean_name(name: str) -> str:
    """`name` without the characters that could make it display as something else: control
    characters and invisible format characters such as U+202E (right-to-left override, which
    shows "evil\u202etxt.exe" as "evilexe.txt") are dropped, other spaces become plain spaces,
    and the ends are stripped. Django's upload parser drops the same characters from an uploaded
    file's name; every way in (the CLI included) goes through this."""
    return "".join(" " if char.isspace() else char for char in name
                   if char.isprintable() or char.isspace()).strip()


def accept_attribute() -> str:
    """The file inputs' `accept` attribute: every supported extension."""
    return ",".join(sorted(SUPPORTED_EXTENSIONS))


def supported(name: str) -> bool:
    return PurePosixPath(name).suffix.lower() in SUPPORTED_EXTENSIONS


def size_text(size: int) -> str:
    """A byte count for people: "512 bytes", "12.3 KB", "50.0 MB"."""
    if size < 1000:
        return f"{size} bytes"
    if size < 1_000_000:
        return f"{size / 1e3:.1f} KB"
    return f"{size / 1e6:.1f} MB"


def limit_text() -> str:
    return size_text(settings.MAX_UPLOAD_BYTES)


def upload_error(name: str, size: int) -> str | None:
    """Why the file `name` of `size` bytes cannot be ingested (a message naming it), or None."""
    if not supported(name):
        return (f"{name}: this file type is not supported (supported: {SUPPORTED_NAMES}: "
                f"{', '.join(sorted(SUPPORTED_EXTENSIONS))}).")
    if size == 0:
        return f"{name}: the file is empty."
    if size > settings.MAX_UPLOAD_BYTES:
        return f"{name}: the file is {size_text(size)}; the limit is {limit_text()}."
    return None
