"""The text rule of every API surface (REST, /v1, MCP, the command line's JSON): a field meant as
Markdown (an answer) is chat.client_markdown.client_markdown's, made inert; every other text field
(titles, sources, passages, names) is plain text, client_text's. Either way a document's markup
(`<img onerror=...>`, `javascript:` links) never runs in a client. A leaf module: the search's
output (chat.retrieval.payload) uses it below the answering layer."""

from __future__ import annotations

import html


def client_text(text: str) -> str:
    """`text` as a plain-text field: "&", "<" and ">" written as HTML entities, so a client that
    puts it into a page shows a document's `<img onerror=...>` as text instead of running it
    (html.unescape gives the text back). Quotes are left as they are: fields are element content,
    never attribute values."""
    return html.escape(text, quote=False)
