"""robots.txt, read once per site and kept for an hour in this process.

As RFC 9309 says: a robots.txt that does not exist (HTTP 4xx) allows everything; one that cannot be
read (5xx, network error, refused, too large) disallows everything until it can be read again.
`check(url)` raises FetchError when url is disallowed for our User-Agent and returns the site's
Crawl-delay for us (pacing.py waits at least that long between requests); `sitemaps(url)` lists the
Sitemap: lines of url's site.
"""

from __future__ import annotations

import threading
import time
from urllib.robotparser import RobotFileParser

from django.conf import settings

from sources.web import hops
from sources.web.errors import FetchError

KEEP_SECONDS = 3600
KEEP_UNREADABLE_SECONDS = 60  # a server that was down is asked again soon
MAX_SITES = 1000
# A Crawl-delay is obeyed up to this many seconds: a site asking for more still gets a request a minute.
MAX_CRAWL_DELAY = 60.0

_cache: dict[str, tuple[float, RobotFileParser, str]] = {}
_lock = threading.Lock()
_site_locks: dict[str, threading.Lock] = {}


def _origin(url: str) -> str:
    scheme, host, port, _ = hops.split_url(url)
    return f"{scheme}://{host.lower()}:{port}"


def _read(origin: str) -> tuple[RobotFileParser, str, float]:
    """The parsed robots.txt of origin, why nothing may be fetched ("" if it may), its lifetime."""
    parser = RobotFileParser(origin + "/robots.txt")
    try:
        _, response = hops.get(origin + "/robots.txt")
    except FetchError as exc:
        parser.disallow_all = True
        # The site cannot be reached (or is refused): that reason, not robots.txt, is what a person needs.
        return parser, exc.reason, KEEP_UNREADABLE_SECONDS
    if 400 <= response.status < 500:
        parser.allow_all = True
        return parser, "", KEEP_SECONDS
    if response.status >= 500:
        parser.disallow_all = True
        return parser, f"not fetched: robots.txt cannot be read (HTTP {response.status})", KEEP_UNREADABLE_SECONDS
    parser.parse(response.body.decode("utf-8", errors="replace").splitlines())
    return parser, "", KEEP_SECONDS


def robots_for(url: str) -> tuple[RobotFileParser, str]:
    """(parser, reason everything is disallowed or "") for url's site, from the cache when fresh."""
    origin = _origin(url)
    with _lock:
        site_lock = _site_locks.setdefault(origin, threading.Lock())
    with site_lock:  # threads that miss together read robots.txt once
        with _lock:
            cached = _cache.get(origin)
        if cached and cached[0] > time.monotonic():
            return cached[1], cached[2]
        parser, unreadable, lifetime = _read(origin)
        with _lock:
            if len(_cache) >= MAX_SITES:
                _cache.clear()
                _site_locks.clear()
            _cache[origin] = (time.monotonic() + lifetime, parser, unreadable)
    return parser, unreadable


def check(url: str) -> float:
    """The Crawl-delay robots.txt asks of us for url's site (0 when none, at most MAX_CRAWL_DELAY);
    raises FetchError when robots.txt disallows url for our User-Agent."""
    parser, unreadable = robots_for(url)
    if unreadable:
        raise FetchError(unreadable, url=url)
    if not parser.can_fetch(settings.SOURCES_USER_AGENT, url):
        raise FetchError(f"disallowed by robots.txt: {url[:200]}", url=url)
    try:
        delay = float(parser.crawl_delay(settings.SOURCES_USER_AGENT) or 0)
    except (TypeError, ValueError):
        delay = 0.0
    return min(max(delay, 0.0), MAX_CRAWL_DELAY)


def sitemaps(url: str) -> list[str]:
    """The sitemap URLs that url's robots.txt names (none when it names none or cannot be read)."""
    parser, _ = robots_for(url)
    return list(parser.site_maps() or [])


def forget() -> None:
    """Empties the cache (tests, and a site whose robots.txt just changed)."""
    with _lock:
        _cache.clear()
