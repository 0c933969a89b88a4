"""The pages of a site source: from its sitemap, or by crawling from a start page.

`site_pages(start_url, max_pages=..., max_depth=...)` returns the page URLs (normalised: no fragment,
no duplicates), start page first when crawled:
- start_url is itself a sitemap or sitemap index: the pages it lists on the same host;
- else the site's sitemaps (robots.txt's Sitemap: lines, else /sitemap.xml when it exists): the
  pages they list under start_url's host and path prefix;
- else a breadth-first crawl of the links from start_url, within its host and path prefix, to
  max_depth links away, at most max_pages pages.
Every request goes through fetch() (SSRF guard, robots.txt, rate limit, caps); URLs robots.txt
disallows are left out. The returned list (SitePages) also has `.notes`: why listing stopped short
(a sitemap bomb's limits, pages that failed while crawling). FetchError when the start URL itself
cannot be fetched, or when a sitemap yields no page at all (its notes in the reason).
"""

from __future__ import annotations

import re
import time
from collections import deque
from urllib.parse import urljoin, urlsplit

import lxml.html
from lxml import etree

from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.limits import check_markup
from sources.web import robots
from sources.web.errors import FetchError
from sources.web.fetch import GZIP_TYPES, XML_TYPES, Fetched, fetch
from sources.web.scope import Scope, normalise
from sources.web.sitemaps import NotASitemap, parse_sitemap, read_sitemaps

HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
# Links to these are never pages: not worth a request each.
_ASSET = re.compile(r"\.(css|js|mjs|map|json|ico|png|jpe?g|gif|svg|webp|avif|woff2?|ttf|otf|eot|mp[34]|webm|ogg|"
                    r"wav|avi|mov|zip|gz|tgz|bz2|xz|7z|rar|exe|dmg|iso)$", re.IGNORECASE)


class SitePages(list):
    """A list of page URLs, with `.notes`: why listing stopped short, one sentence each, and
    `.resume`: a crawl stopped at its deadline, the state to pass back to site_pages (else None)."""

    def __init__(self, urls=(), notes=()):
        super().__init__(urls)
        self.notes = list(notes)
        self.resume: dict | None = None


def _robots_allow(url: str) -> bool:
    try:
        robots.check(url)
    except FetchError:
        return False
    return True


def _is_sitemap(fetched: Fetched) -> bool:
    if fetched.media_type not in XML_TYPES | GZIP_TYPES:
        return False
    try:
        parse_sitemap(fetched.body, fetched.url)
    except NotASitemap:
        return False
    except ValueError:
        return True  # a sitemap, but a broken or oversized one: read_sitemaps says why
    return True


def _site_sitemaps(start: str) -> list[str]:
    named = robots.sitemaps(start)
    if named:
        return named
    guess = urljoin(start, "/sitemap.xml")
    try:
        fetched = fetch(guess)
    except FetchError:
        return []
    return [guess] if fetched and _is_sitemap(fetched) else []


def _from_sitemaps(sitemap_urls: list[str], keep, max_pages: int) -> SitePages:
    found = read_sitemaps(sitemap_urls, keep=keep, max_urls=max_pages)
    if not found.urls:
        raise FetchError("the sitemap lists no page that can be fetched" +
                         (f": {'; '.join(found.notes[:3])}" if found.notes else ""), url=sitemap_urls[0])
    if len(found.urls) >= max_pages:
        found.notes.append(f"stopped at {max_pages} pages (max_pages)")
    return SitePages(found.urls, found.notes)


def links(fetched: Fetched) -> list[str]:
    """The absolute URLs of a page's <a href> links, normalised, in page order, without duplicates."""
    try:
        check_markup(fetched.body, "The page")
        root = lxml.html.document_fromstring(fetched.body)
    except (ParseError, etree.ParserError, ValueError):
        return []
    base = root.xpath("string(//base/@href)") or fetched.url
    found = {}
    for href in root.xpath("//a/@href"):
        url = normalise(urljoin(urljoin(fetched.url, base), str(href).strip()))
        if url and not _ASSET.search(urlsplit(url).path):
            found.setdefault(url, None)
    return list(found)


def _crawl(start: str, first: Fetched | None, scope: Scope, *, max_pages: int, max_depth: int,
           deadline: float | None = None, state: dict | None = None) -> SitePages:
    """Breadth-first from `start` (already fetched: `first`), or from a crawl's `state` that
    stopped at its deadline. Past `deadline` (after at least one request of this run), stops and
    sets `.resume` to the state to go on from."""
    if state:
        pages = SitePages(state["pages"], state["notes"])
        seen = set(state["seen"])
        queue = deque((url, depth, None) for url, depth in state["queue"])
    else:
        pages = SitePages()
        seen = {start}
        queue = deque([(start, 0, first)])
    # Links are queued up to a few times max_pages (some fail or are not pages), not the tens of
    # thousands a 10 MB page of links could name: that bounds both memory and the requests sent.
    most_seen = max_pages * 4 + 100
    cut = False
    requested = 0
    while queue and len(pages) < max_pages:
        if requested and deadline is not None and time.monotonic() >= deadline:
            pages.resume = {"crawl": start, "scope": scope.origin + scope.prefix, "pages": list(pages),
                            "notes": pages.notes, "seen": sorted(seen),
                            "queue": [[url, depth] for url, depth, _ in queue]}
            return pages
        url, depth, fetched = queue.popleft()
        if fetched is None:
            requested += 1
            try:
                fetched = fetch(url)
            except FetchError as exc:
                pages.notes.append(f"{url}: {exc.reason}")
                continue
        if fetched is None:  # 304: we sent no validators, so this does not happen; be safe
            continue
        pages.append(url)
        if depth >= max_depth or fetched.media_type not in HTML_TYPES:
            continue
        for link in links(fetched):
            if link not in seen and scope.contains(link):
                if len(seen) >= most_seen:
                    cut = True
                    break
                seen.add(link)
                queue.append((link, depth + 1, None))
    if queue or cut:
        pages.notes.append(f"stopped at {max_pages} pages (max_pages)")
    return pages


def site_pages(start_url: str, *, max_pages: int, max_depth: int, deadline: float | None = None,
               resume: dict | None = None) -> SitePages:
    """The page URLs of the site at start_url (see the module's docstring); FetchError when none.
    A crawl stops past `deadline` (time.monotonic()) with `.resume` set; given back as `resume`,
    the crawl goes on where it stopped."""
    start = normalise(start_url)
    if start is None:
        raise FetchError(f"only http and https URLs can be fetched: {start_url[:200]}", url=start_url)
    max_pages = max(1, max_pages)
    if resume and resume.get("crawl"):
        return _crawl(resume["crawl"], None, Scope.of(resume["scope"]), max_pages=max_pages,
                      max_depth=max(0, max_depth), deadline=deadline, state=resume)
    first = fetch(start)
    if first is None:
        raise FetchError("HTTP 304 to a request that was not conditional", url=start, status=304)
    if _is_sitemap(first):
        origin = Scope.of(first.url).origin
        return _from_sitemaps([first.url], lambda u: u.startswith(origin + "/") and _robots_allow(u), max_pages)
    scope = Scope.of(first.url)
    sitemap_urls = _site_sitemaps(first.url)
    if sitemap_urls:
        try:
            return _from_sitemaps(sitemap_urls, lambda u: scope.contains(u) and _robots_allow(u), max_pages)
        except FetchError:
            pass  # the site's sitemap lists nothing under this prefix: crawl instead
    final = normalise(first.url) or start
    return _crawl(final, first, scope, max_pages=max_pages, max_depth=max(0, max_depth), deadline=deadline)

