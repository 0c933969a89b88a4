"""A GET that follows redirects, each hop checked as if it were the first request.

`get(url, headers=..., check=...)` is the one way web fetching talks to a server: for every hop it
checks the scheme (http/https only), calls `check(url)` (robots.txt and its Crawl-delay, for pages), resolves and checks
the host's addresses (SSRF guard, outbound.addresses) and connects to the checked address, waits its turn
for the host (pacing.py), and sends the request with the caps of transport.py. At most
MAX_REDIRECTS redirects; a redirect back to a URL already visited is a loop.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import quote, urljoin, urlsplit

from django.conf import settings

from outbound import addresses
from sources.web import pacing
from sources.web.errors import FetchError
from sources.web.transport import Response, exchange

logger = logging.getLogger(__name__)

REDIRECTS = (301, 302, 303, 307, 308)
ALLOW_HINT = "set SOURCES_ALLOW_PRIVATE=1 to allow"
# Redirects followed for one GET. A constant: it was a setting whose maximum was its default. Five covers
# the usual chains (http -> https -> www -> a trailing slash -> a moved page); each hop is a checked connection.
MAX_REDIRECTS = 5
# Characters left as they are in a request target (RFC 3986's reserved and unreserved ones, and "%").
_URL_SAFE = "/?#[]@!$&'()*+,;=:%-._~"
# What one request may cost. Constants, not settings: they bound a worker's time and memory per page,
# which the sync's budget (sources/sync.py) and the reliability harness's web section are measured against.
# The largest body read (decompressed): 10 MB holds a long HTML manual page many times over; a bigger
# answer is refused, not cut, so a document is never half a page.
MAX_BYTES = 10 * 1024 * 1024
# Seconds to connect to one address: a host that is up answers in well under a second from anywhere.
CONNECT_TIMEOUT = 10.0
# Seconds for a whole response, headers and body: a server that drips bytes cannot hold a worker
# (reliability: "slow drip"); 30 s reads 10 MB at ~350 KB/s.
RESPONSE_TIMEOUT = 30.0
# Addresses of one name tried in turn when the first cannot be reached (each with its connect timeout).
MAX_ADDRESSES = 3
# Replaced by tests that need a host name to resolve to an address of their choosing.
resolver: addresses.Resolver = addresses.system_resolver


def split_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path?query) of an http(s) URL; FetchError for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise FetchError(f"not a valid URL: {exc}", url=url) from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise FetchError(f"only http and https URLs can be fetched, not {scheme or 'this'}: {url[:200]}", url=url)
    if not parts.hostname:
        raise FetchError(f"not a valid URL (no host): {url[:200]}", url=url)
    if parts.username or parts.password:
        raise FetchError("URLs with a user name or password are not fetched", url=url)
    try:  # http.client sends ASCII only: an international name in its IDNA form, the path percent-encoded
        host = parts.hostname if ":" in parts.hostname else parts.hostname.encode("idna").decode("ascii")
    except UnicodeError:
        raise FetchError(f"not a valid host name: {parts.hostname[:200]}", url=url) from None
    target = quote((parts.path or "/") + (f"?{parts.query}" if parts.query else ""), safe=_URL_SAFE)
    return scheme, host, port or (443 if scheme == "https" else 80), target


@dataclass(frozen=True)
class _Hop:
    url: str
    scheme: str
    host: str
    port: int
    target: str
    addresses: list[addresses.Address]


def _checked(url: str) -> _Hop:
    scheme, host, port, target = split_url(url)
    try:
        checked = addresses.checked_addresses(host, port, allow_private=settings.SOURCES_ALLOW_PRIVATE,
                                              resolver=resolver)
    except addresses.NotResolved as exc:
        raise FetchError(str(exc), url=url) from None
    except addresses.AddressRefused as exc:
        logger.info("web fetch of %s %s", url[:200], exc.detail)  # what it resolved to: for the operator only
        raise FetchError(f"{exc} ({ALLOW_HINT})", url=url) from None
    return _Hop(url, scheme, host, port, target, checked)


def _send(hop: _Hop, headers: dict[str, str], *, crawl_delay: float = 0.0) -> Response:
    pacing.wait_turn(f"{hop.host}:{hop.port}", at_least=crawl_delay)
    headers = {"User-Agent": settings.SOURCES_USER_AGENT, "Accept-Encoding": "gzip, identity", **headers}
    error: FetchError | None = None
    for address in hop.addresses[:MAX_ADDRESSES]:  # the next checked address when one cannot be reached
        try:
            return exchange(scheme=hop.scheme, host=hop.host, port=hop.port, address=address, target=hop.target,
                            headers=headers, max_bytes=MAX_BYTES,
                            connect_timeout=CONNECT_TIMEOUT, timeout=RESPONSE_TIMEOUT,
                            url=hop.url)
        except FetchError as exc:
            if not exc.reason.startswith("cannot connect"):
                raise
            error = exc
    assert error is not None
    raise error


def get(url: str, *, headers: dict[str, str] | None = None,
        check: Callable[[str], float] | None = None) -> tuple[str, Response]:
    """(final URL, response) of a GET of url, redirects followed and re-checked; FetchError otherwise.

    check(url) raises FetchError to refuse a hop, or returns the seconds the host asks between
    requests (robots.txt's Crawl-delay; 0 for none).
    """
    visited = set()
    for _ in range(MAX_REDIRECTS + 1):
        url = url.split("#", 1)[0]
        if url in visited:
            raise FetchError(f"redirect loop: {url[:200]} redirects back to itself", url=url)
        visited.add(url)
        hop = _checked(url)  # the address first: robots.txt is not fetched from a refused one
        crawl_delay = check(url) if check is not None else 0.0
        response = _send(hop, headers or {}, crawl_delay=crawl_delay)
        if response.status not in REDIRECTS:
            return url, response
        location = response.headers.get("Location")
        if not location:
            raise FetchError(f"HTTP {response.status} redirect without a Location", url=url, status=response.status)
        url = urljoin(url, location.strip())
    raise FetchError(f"too many redirects (more than {MAX_REDIRECTS})", url=url)
