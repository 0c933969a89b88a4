"""What each kind of source contributes to a sync: the list of its items, and each item's content.

A kind is a module with two functions (sources.sync calls them; it alone writes):
- `list_items(source) -> Listing`: the items the source has now; raises SourceUnavailable when the
  source as a whole cannot be read (its folder gone, its site down): a sync then removes nothing.
- `read_item(source, item, link) -> Unchanged | Content`: the item's content, or Unchanged when the
  validators kept in `link` (a SourceDocument, or None for an item never synced) show it has not
  changed; raises ItemGone (the page or file no longer exists) or ItemFailed (a reason to show).
"""

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


def kind_module(kind: str):
    """The module implementing `kind` (Source.Kind)."""
    if kind == "folder":
        from sources.kinds import folder

        return folder
    from sources.kinds import web

    return web
