"""Fetch one web page (or sitemap, or document) safely: the entry point of web sources.

`fetch(url, etag=..., last_modified=...)` returns a Fetched, or None when the server answers 304 Not
Modified to the validators given. It raises FetchError (`.reason` readable, `.status` the HTTP
status when there was one) on anything else: a URL that is not http(s), an address that is not
public (unless SOURCES_ALLOW_PRIVATE), robots.txt disallowing it, too many redirects or a loop,
a body over hops.MAX_BYTES, no complete answer within hops.RESPONSE_TIMEOUT, an HTTP error status, or
a content type that is neither HTML, XML nor one of the document formats ragweb parses. Every
redirect hop is checked again (hops.py); requests to a host are spaced (pacing.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from corpus.ingest.parse.formats import ALIASES, SUPPORTED
from sources.web import hops, robots
from sources.web.errors import FetchError

__all__ = ["ACCEPTED_TYPES", "FetchError", "Fetched", "fetch"]

XML_TYPES = frozenset({"application/xml", "text/xml", "application/rss+xml", "application/atom+xml"})
# Sitemaps are often served gzipped as files of their own (sitemap.xml.gz); site.py inflates them.
GZIP_TYPES = frozenset({"application/gzip", "application/x-gzip"})
ACCEPTED_TYPES = SUPPORTED | frozenset(ALIASES) | XML_TYPES | GZIP_TYPES


@dataclass(frozen=True)
class Fetched:
    url: str  # the final URL, after redirects
    status: int
    content_type: str  # "text/html; charset=utf-8": the media type (lower case, aliases resolved) and charset
    body: bytes
    etag: str | None
    last_modified: str | None
    charset: str | None = None  # from the Content-Type header, when it names one

    @property
    def media_type(self) -> str:
        """The media type alone: "text/html"."""
        return self.content_type.split(";", 1)[0]


def split_content_type(header: str) -> tuple[str, str | None]:
    """("text/html", "utf-8") of "text/html; charset=utf-8": the media type in lower case, the charset."""
    media_type, _, params = header.partition(";")
    charset = None
    for param in params.split(";"):
        name, _, value = param.partition("=")
        if name.strip().lower() == "charset" and value.strip():
            charset = value.strip().strip("\"'")
    return media_type.strip().lower(), charset


def fetch(url: str, *, etag: str | None = None, last_modified: str | None = None) -> Fetched | None:
    """The page at url, or None when it has not changed since etag/last_modified (HTTP 304)."""
    headers = {"Accept": "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    final_url, response = hops.get(url, headers=headers, check=robots.check)
    if response.status == 304:
        if etag or last_modified:
            return None
        raise FetchError("HTTP 304 to a request that was not conditional", url=final_url, status=304)
    if response.status != 200:
        raise FetchError(f"HTTP {response.status}", url=final_url, status=response.status)
    media_type, charset = split_content_type(response.headers.get("Content-Type") or "")
    if media_type not in ACCEPTED_TYPES:
        raise FetchError(f"not a page or a document ragweb reads: {media_type or 'no content type'}",
                         url=final_url, status=200)
    content_type = ALIASES.get(media_type, media_type) + (f"; charset={charset}" if charset else "")
    return Fetched(url=final_url, status=200, content_type=content_type, body=response.body,
                   etag=response.headers.get("ETag"), last_modified=response.headers.get("Last-Modified"),
                   charset=charset)
