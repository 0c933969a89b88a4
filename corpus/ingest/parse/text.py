"""Turning the bytes of a text file into text, refusing what is not text instead of guessing wildly."""

from __future__ import annotations

import codecs
import re

from corpus.ingest.parse.base import ParseError, normalise_newlines

# Longest first: the UTF-32 LE mark begins with the UTF-16 LE one.
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)
# C0 controls other than tab, newline, vertical tab, form feed and carriage return: text files
# have next to none of them, binary files plenty.
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# Above this share of control characters the "text" is really binary data.
_MAX_CONTROL_SHARE = 0.01

# nroff's emphasis for a line printer, as Debian ships it in READMEs (Postfix's) and `man` writes it
# without a pager: bold is a character struck twice ("P\bP"), underline an underscore struck under
# it ("_\bx", or "x\b_"); bold underline chains them ("_\bx\bx").
_OVERSTRIKE = re.compile(r"[^\x08\n](?:\x08[^\x08\n])+")

BINARY_MESSAGE = "The file looks like binary data, not text, so there is nothing to read in it."
UNDECODABLE_MESSAGE = ("The file is not UTF-8 text and its character encoding could not be recognised. "
                       "Save it as UTF-8 and upload it again.")


def decode_text(data: bytes, *, declared: str | None = None) -> str:
    """Decode a text file: a byte-order mark wins, then `declared` (e.g. an HTML meta charset), then
    UTF-8, then Windows-1252 (a superset of Latin-1's printable characters) when that yields clean
    text. Overstruck characters (nroff's bold and underline) come out plain (strip_overstrike), before
    anything judges the text. Newlines come out as \\n. Raises ParseError for binary data or an unknown encoding."""
    for bom, codec, name in _BOMS:
        if data.startswith(bom):
            try:
                text = data[len(bom):].decode(codec)
            except UnicodeDecodeError:
                raise ParseError(f"The file starts with a {name} byte-order mark but is not valid {name} text.") \
                    from None
            return _checked(text)
    if b"\x00" in data[:8192]:
        # No BOM and NUL bytes: binary (or BOM-less UTF-16, which we do not guess at).
        raise ParseError(BINARY_MESSAGE)
    if declared:
        try:
            return _checked(data.decode(codecs.lookup(declared).name))
        except LookupError:
            pass  # an unknown declared charset: fall back to detection
        except UnicodeDecodeError:
            raise ParseError(f"The file says it is {declared} text but is not valid {declared}.") from None
    try:
        return _checked(data.decode("utf-8"))
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        raise ParseError(UNDECODABLE_MESSAGE) from None
    text = strip_overstrike(text)
    if _CONTROL.search(text):
        raise ParseError(UNDECODABLE_MESSAGE)
    return normalise_newlines(text)


def strip_overstrike(text: str) -> str:
    """`text` as the overstruck characters read: "P\\bPo\\bo" is "Po", "_\\bx" and "x\\b_" are "x".
    Characters struck over different ones keep the last one that is not an underscore (what
    `col -b` keeps, underlines aside); a backspace that strikes nothing stays."""
    if "\x08" not in text:
        return text
    return _OVERSTRIKE.sub(_struck, text)


def _struck(match: re.Match) -> str:
    struck = match.group()[::2]  # the characters, without the backspaces between them
    shown = [c for c in struck if c != "_"]
    return shown[-1] if shown else "_"


def _checked(text: str) -> str:
    text = strip_overstrike(text)
    if "\x00" in text or len(_CONTROL.findall(text)) > _MAX_CONTROL_SHARE * len(text):
        raise ParseError(BINARY_MESSAGE)
    return normalise_newlines(text)


# A word `man` (groff) hyphenated at the end of a line: U+2010 HYPHEN, which groff writes for its own
# hyphenation and people rarely type, then the line's end, the next line's indent and the word's rest.
_MAN_HYPHENATION = re.compile(r"(?<=\w)\u2010\n([ \t]*)([a-z]+)")


def rejoin_hyphenated(text: str) -> str:
    """`text` with words groff hyphenated across lines ("inter‐\\n       leaving") whole again on
    the first line ("interleaving\\n       "): a search for the word finds it, a quote reads it.
    Lines stay lines."""
    return _MAN_HYPHENATION.sub(lambda m: f"{m.group(2)}\n{m.group(1)}", text)
