"""Web page and site sources, over sources.web (fetch with its SSRF guard, robots.txt, rate limit
and caps; main-text extraction; sitemap or crawl).

A page is stored as Markdown (its main text, headings kept, the title as the first heading), its
URL as Document.source so citations open the page. Other document types the parser registry
reads (a PDF linked from the site) are stored as fetched. A 304 answer to the ETag /
Last-Modified kept from the last sync means unchanged; a 404 or 410 means the page is gone.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from corpus.ingest.parse.base import ParseError
from corpus.ingest.parse.formats import EXTENSIONS, HTML
from sources.kinds.base import Content, Item, ItemFailed, ItemGone, Listing, SourceUnavailable, Unchanged
from sources.web.errors import FetchError
from sources.web.extract import page_document
from sources.web.fetch import fetch
from sources.web.site import site_pages

_EXTENSION_OF = {}
for _extension, _media_type in EXTENSIONS.items():
    _EXTENSION_OF.setdefault(_media_type, _extension)


def list_items(source, *, deadline: float | None = None, resume: dict | None = None) -> Listing:
    if source.kind == "url":
        return Listing([Item(source.url, source.url)])

    try:
        # One more than kept, to tell the person the limit was reached.
        urls = site_pages(source.url, max_pages=source.max_pages + 1, max_depth=source.max_depth,
                          deadline=deadline, resume=resume)
    except FetchError as exc:
        raise SourceUnavailable(f"{source.url}: {exc.reason}") from None
    if urls.resume is not None:
        return Listing([], resume=urls.resume)
    unique = list(dict.fromkeys(urls))
    return Listing([Item(url, url) for url in unique[:source.max_pages]], truncated=len(unique) > source.max_pages,
                   notes=list(getattr(urls, "notes", [])))


def _media_type(content_type: str) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def page_markdown(title: str, markdown: str) -> str:
    """The page as stored: its title as the first heading (the Markdown parser takes the title
    from it), unless the main text already starts with that heading."""
    markdown = markdown.strip()
    title = " ".join((title or "").split())
    if title and markdown.split("\n", 1)[0].strip() != f"# {title}":
        markdown = f"# {title}\n\n{markdown}"
    return markdown + "\n"


def read_item(source, item: Item, link) -> Content | Unchanged:
    try:
        fetched = fetch(item.key, etag=(link.etag or None) if link else None,
                        last_modified=(link.last_modified or None) if link else None)
    except FetchError as exc:
        if exc.gone:
            raise ItemGone(exc.reason) from None
        raise ItemFailed(exc.reason) from None
    if fetched is None:
        return Unchanged()
    validators = {"etag": (fetched.etag or "")[:500], "last_modified": (fetched.last_modified or "")[:100]}
    media_type = _media_type(fetched.content_type)
    if media_type in (HTML, "application/xhtml+xml"):
        try:
            page = page_document(fetched.body, fetched.url, fetched.content_type)
        except ParseError as exc:
            raise ItemFailed(str(exc)) from None
        return Content(page_markdown(page.title, page.markdown).encode("utf-8"), "page.md", validators)
    extension = _EXTENSION_OF.get(media_type)
    if extension is None:
        raise ItemFailed(f"not a page or a document type ragweb reads ({media_type or 'no content type'})")
    name = urlsplit(fetched.url).path.rstrip("/").rsplit("/", 1)[-1]
    return Content(fetched.body, name if name.lower().endswith(extension) else f"document{extension}", validators)
