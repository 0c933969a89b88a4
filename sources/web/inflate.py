"""Bounded decompression of gzip/deflate bodies: a small compressed body can hide a huge one."""

from __future__ import annotations

import zlib


class TooLarge(Exception):
    """The decompressed data would be larger than the limit."""


class Corrupt(Exception):
    """The data is not valid gzip/deflate."""


def inflate(data: bytes, *, limit: int, encoding: str = "gzip") -> bytes:
    """data decompressed ("gzip" or "deflate", zlib or raw), never more than limit bytes.

    Raises TooLarge past the limit (without producing more than limit + 1 bytes) and Corrupt on data
    that does not decompress.
    """
    if encoding == "gzip":
        wbits = 16 + zlib.MAX_WBITS
    else:  # "deflate" is zlib-wrapped by the standard, raw by some servers
        wbits = zlib.MAX_WBITS if data[:1] == b"\x78" else -zlib.MAX_WBITS
    decompressor = zlib.decompressobj(wbits)
    try:
        out = decompressor.decompress(data, limit + 1)
    except zlib.error as exc:
        raise Corrupt(f"not valid {encoding} data ({exc})") from None
    if len(out) > limit or decompressor.unconsumed_tail:
        raise TooLarge(f"more than {limit} bytes once decompressed")
    return out
