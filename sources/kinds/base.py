"""The values and errors every kind of source exchanges with sources.sync (see the package docstring)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Item:
    """`key`: the page's URL or the file's path in the folder; `source`: the Document.source it gets."""

    key: str
    source: str


@dataclass(frozen=True)
class Listing:
    items: list[Item]
    truncated: bool = False  # more than max_pages were found: the first ones are kept
    notes: list[str] = field(default_factory=list)  # why listing stopped short (a sitemap's limits...)
    # Listing ran out of time (a crawl under a slow Crawl-delay): what to pass back as `resume` to go
    # on, JSON-serialisable; `items` is then empty.
    resume: dict | None = None
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (item, why it is not read): links...


@dataclass(frozen=True)
class Unchanged:
    """The item has not changed; `validators` (SourceDocument fields) to keep for the next sync."""

    validators: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Content:
    """The item's current content: `data` stored as the document's file named `filename`."""

    data: bytes
    filename: str
    validators: dict = field(default_factory=dict)


class SourceUnavailable(Exception):
    """The whole source cannot be read now; str(exc) says why."""


class ItemFailed(Exception):
    """This item could not be read; str(exc) says why."""


class ItemGone(Exception):
    """This item no longer exists (a file deleted, a page answering 404 or 410)."""
