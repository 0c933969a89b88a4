"""A paged document's text: its pages' texts joined, with the offset where each page starts."""

from __future__ import annotations

PAGE_SEPARATOR = "\n\n"


def joined_pages(page_texts: list[str]) -> tuple[str, list[int]]:
    """(the pages' stripped texts separated by a blank line, the offset where each page starts).
    An empty page adds no separator: its offset is where the next page's text starts."""
    parts: list[str] = []
    pages: list[int] = []
    length = 0
    for page_text in page_texts:
        page_text = page_text.strip()
        if page_text and length:
            parts.append(PAGE_SEPARATOR)
            length += len(PAGE_SEPARATOR)
        pages.append(length)
        parts.append(page_text)
        length += len(page_text)
    return "".join(parts), pages
