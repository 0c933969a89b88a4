"""Reading sitemaps (sitemaps.org), bounded so a hostile one cannot run away.

`read_sitemaps(urls, keep=..., max_urls=...)` reads the sitemaps and sitemap indexes at urls (plain
or gzipped XML, fetched through fetch(), so the SSRF guard, robots.txt and the size caps apply) and
returns the page URLs they list that `keep` accepts, normalised, without duplicates, at most
max_urls. A "sitemap bomb" stops at the limits below, each with a note saying which: indexes nested
deeper than MAX_DEPTH, more than MAX_FILES sitemap files, more than MAX_ENTRIES entries in one
file, a file over MAX_INFLATED_BYTES once decompressed (the protocol's own cap is 50 MB and
50,000 URLs), a DOCTYPE (entity bombs; never expanded), or XML that does not parse.
"""

from __future__ import annotations

import io
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from lxml import etree

from corpus.ingest.parse.limits import size_text
from sources.web.errors import FetchError
from sources.web.fetch import fetch
from sources.web.inflate import Corrupt, TooLarge, inflate
from sources.web.scope import normalise

MAX_DEPTH = 3  # a sitemap index may point at indexes, at most this many levels down
MAX_FILES = 50
MAX_ENTRIES = 50_000
MAX_INFLATED_BYTES = 50 * 1024 * 1024
_DOCTYPE = re.compile(rb"<!DOCTYPE", re.IGNORECASE)


class NotASitemap(Exception):
    """The document is XML or text, but not a sitemap (no <urlset> or <sitemapindex>)."""


@dataclass
class SitemapPages:
    urls: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # why reading stopped short, one sentence each
    files: int = 0  # sitemap files read


def _local(tag) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else ""


def parse_sitemap(body: bytes, url: str) -> tuple[str, list[str]]:
    """("urlset" or "sitemapindex", the <loc> values, at most MAX_ENTRIES + 1) of one sitemap file.

    Raises NotASitemap for other XML and ValueError (a readable message) for a file that cannot be
    read within the limits.
    """
    if body[:2] == b"\x1f\x8b":
        try:
            body = inflate(body, limit=MAX_INFLATED_BYTES)
        except TooLarge:
            raise ValueError(f"sitemap {url} is more than {size_text(MAX_INFLATED_BYTES)} once decompressed "
                             "(a gzip bomb?): not read") from None
        except Corrupt as exc:
            raise ValueError(f"sitemap {url} is {exc}") from None
    if _DOCTYPE.search(body[:65536]):
        # Sitemaps never need one; a DOCTYPE is where entity bombs ("billion laughs") live.
        raise ValueError(f"sitemap {url} declares a DOCTYPE (entities are not allowed in sitemaps): not read")
    kind, locs = "", []
    events = etree.iterparse(io.BytesIO(body), events=("start", "end"), resolve_entities=False, no_network=True,
                             load_dtd=False, huge_tree=False)
    try:
        for event, element in events:
            name = _local(element.tag)
            if event == "start":
                if not kind:
                    if name not in ("urlset", "sitemapindex"):
                        raise NotASitemap(f"{url} is XML but not a sitemap (<{name}>)")
                    kind = name
                continue
            if name == "loc" and element.text and element.text.strip():
                locs.append(element.text.strip())
                if len(locs) > MAX_ENTRIES:
                    break
            if name in ("url", "sitemap"):
                element.clear()  # keeps memory flat on a large file
    except etree.XMLSyntaxError as exc:
        if not kind:
            raise NotASitemap(f"{url} is not XML ({exc})") from None
        raise ValueError(f"sitemap {url} is not valid XML ({exc}); read up to the error") from None
    return kind, locs


def read_sitemaps(urls: list[str], *, keep: Callable[[str], bool], max_urls: int) -> SitemapPages:
    """The page URLs listed by the sitemaps at urls (indexes followed), bounded; notes say what was cut."""
    found = SitemapPages()
    seen_pages: set[str] = set()
    seen_files: set[str] = set()
    queue = deque((u, 0) for u in urls)
    while queue and len(found.urls) < max_urls:
        url, level = queue.popleft()
        if url in seen_files:
            continue
        if found.files >= MAX_FILES:
            found.notes.append(f"more than {MAX_FILES} sitemap files: the rest were not read")
            break
        seen_files.add(url)
        found.files += 1
        try:
            fetched = fetch(url)
            kind, locs = parse_sitemap(fetched.body, fetched.url) if fetched else ("urlset", [])
        except FetchError as exc:
            found.notes.append(f"sitemap {url}: {exc.reason}")
            continue
        except (ValueError, NotASitemap) as exc:
            found.notes.append(str(exc))
            continue
        if len(locs) > MAX_ENTRIES:
            found.notes.append(f"sitemap {url} has more than {MAX_ENTRIES:,} entries: only the first were read")
            locs = locs[:MAX_ENTRIES]
        if kind == "sitemapindex":
            if level >= MAX_DEPTH:
                found.notes.append(f"sitemap index {url} is nested more than {MAX_DEPTH} levels deep: "
                                   "its sitemaps were not read")
                continue
            queue.extend((loc, level + 1) for loc in locs)
            continue
        for loc in locs:
            page = normalise(loc)
            if page and page not in seen_pages and keep(page):
                seen_pages.add(page)
                found.urls.append(page)
                if len(found.urls) >= max_urls:
                    break
    return found
