"""robots.txt, read once per site and kept for an hour in this process, with its answer for each
URL; its first MAX_BYTES and MAX_RULES rules only, so a huge one costs no more than a normal one.

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
# What of a robots.txt is read: RFC 9309 (2.5) asks crawlers to parse at least 500 KiB, and what is
# past it is ignored (as Google does). urllib's parser tries every rule in turn for each URL, so the
# Allow/Disallow rules kept are capped too: a 10 MB robots.txt of rules cost 40-157 ms per URL.
MAX_BYTES = 500 * 1024
MAX_RULES = 2000
# Answers kept per site (URL -> allowed): a sitemap's URLs are each checked twice (listing, fetching).
MAX_ANSWERS = 20_000

_cache: dict[str, tuple[float, RobotFileParser, str]] = {}
_answers: dict[str, dict[str, bool]] = {}  # per origin, emptied with its cache entry
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
    parser.parse(capped_lines(response.body))
    return parser, "", KEEP_SECONDS


def capped_lines(body: bytes) -> list[str]:
    """The lines of a robots.txt that are parsed: those within its first MAX_BYTES (a line cut
    there is dropped), with at most MAX_RULES Allow/Disallow rules (the later ones are dropped;
    User-agent, Crawl-delay and Sitemap lines are kept)."""
    text = body[:MAX_BYTES].decode("utf-8", errors="replace")
    lines = text.splitlines()
    if len(body) > MAX_BYTES and not text.endswith(("\n", "\r")):
        lines = lines[:-1]
    kept, rules = [], 0
    for line in lines:
        field = line.split(":", 1)[0].strip().lower()
        if field in ("allow", "disallow"):
            rules += 1
            if rules > MAX_RULES:
                continue
        kept.append(line)
    return kept


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
                _answers.clear()
                _site_locks.clear()
            _cache[origin] = (time.monotonic() + lifetime, parser, unreadable)
            _answers[origin] = {}
    return parser, unreadable


def _allowed(parser: RobotFileParser, url: str) -> bool:
    """parser.can_fetch(our User-Agent, url), remembered per site while its robots.txt is kept."""
    origin = _origin(url)
    with _lock:
        answers = _answers.setdefault(origin, {})
        known = answers.get(url)
    if known is not None:
        return known
    allowed = parser.can_fetch(settings.SOURCES_USER_AGENT, url)
    with _lock:
        if len(answers) >= MAX_ANSWERS:
            answers.clear()
        answers[url] = allowed
    return allowed


def check(url: str) -> float:
    """The Crawl-delay robots.txt asks of us for url's site (0 when none, at most MAX_CRAWL_DELAY);
    raises FetchError when robots.txt disallows url for our User-Agent."""
    parser, unreadable = robots_for(url)
    if unreadable:
        raise FetchError(unreadable, url=url)
    if not _allowed(parser, url):
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
        _answers.clear()
