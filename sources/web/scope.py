"""Which URLs belong to a site source: one host (scheme and port included) and a path prefix.

`normalise(url)` is the one spelling of a URL that crawls and sitemaps compare: scheme and host in
lower case, no default port, no fragment, "/" for an empty path, the query kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

DEFAULT_PORTS = {"http": 80, "https": 443}


def normalise(url: str) -> str | None:
    """url in its one spelling, or None when it is not an http(s) URL with a host."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port in (None, DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", parts.query, ""))


@dataclass(frozen=True)
class Scope:
    """The URLs under start's host and path prefix (its folder: /docs/intro.html -> /docs/)."""

    origin: str  # "https://docs.example.com"
    prefix: str  # "/docs/"

    @classmethod
    def of(cls, start_url: str) -> Scope:
        start = normalise(start_url)
        if start is None:
            raise ValueError(f"not an http(s) URL: {start_url[:200]}")
        parts = urlsplit(start)
        return cls(f"{parts.scheme}://{parts.netloc}", parts.path[: parts.path.rfind("/") + 1])

    def contains(self, url: str) -> bool:
        parts = urlsplit(url)
        return f"{parts.scheme}://{parts.netloc}" == self.origin and parts.path.startswith(self.prefix)
