"""A signed-in test client, for the tests that use the web pages."""

from __future__ import annotations

from django.test import Client


def signed_in(user) -> Client:
    web = Client()
    web.force_login(user)
    return web


def admin_collection_form(collection, **sharing: str) -> dict:
    """The admin's change form for `collection` as it stands, with the sharing fields (readers,
    editors, reader_groups, editor_groups: comma-separated names) set from `sharing`, the rest empty."""
    form = {"name": collection.name, "slug": collection.slug, "description": "",
            "chunker": collection.chunker, "chunk_size": collection.chunk_size,
            "chunk_overlap": collection.chunk_overlap, "semantic_threshold": 0.5,
            "contextualization": collection.contextualization, "embedding_mode": collection.embedding_mode,
            "readers": "", "editors": "", "reader_groups": "", "editor_groups": ""}
    return form | sharing
