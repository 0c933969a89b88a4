"""What each kind of source contributes to a sync: the list of its items, and each item's content.

A kind is a module with two functions (sources.sync calls them; it alone writes):
- `list_items(source, *, deadline=None, resume=None) -> Listing`: the items the source has now;
  raises SourceUnavailable when the source as a whole cannot be read (its folder gone, its site
  down): a sync then removes nothing. Listing that takes requests (a crawl) stops once
  `deadline` (time.monotonic()) has passed, returning a Listing whose `resume` is passed back
  next time to go on.
- `read_item(source, item, link) -> Unchanged | Content`: the item's content, or Unchanged when the
  validators kept in `link` (a SourceDocument, or None for an item never synced) show it has not
  changed; raises ItemGone (the page or file no longer exists) or ItemFailed (a reason to show).
"""

from __future__ import annotations

from sources.kinds.base import Content, Item, ItemFailed, ItemGone, Listing, SourceUnavailable, Unchanged

__all__ = ["Content", "Item", "ItemFailed", "ItemGone", "Listing", "SourceUnavailable", "Unchanged", "kind_module"]


def kind_module(kind: str):
    """The module implementing `kind` (Source.Kind)."""
    if kind == "folder":
        from sources.kinds import folder

        return folder
    from sources.kinds import web

    return web
