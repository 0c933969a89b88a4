"""The chat page's filter control: its choices, and its form fields read into the one filter
object (chat.retrieval.filters.parse_filters validates it, as it does for the API and /v1).

Fields: `media_type` (checkboxes, any number), `tags` (comma-separated), `source_prefix`, `after`
and `before` (dates, YYYY-MM-DD). Empty fields are no filter.
"""

from __future__ import annotations

from django.http import QueryDict

from chat.retrieval.filters import SearchFilters, parse_filters
from corpus.ingest.parse.formats import FORMATS

# (media type, name) for the checkboxes, in the order the formats are listed everywhere else.
MEDIA_TYPE_CHOICES = [(f.media_type, f.name) for f in FORMATS]
_NAMES = dict(MEDIA_TYPE_CHOICES)


def filters_from_post(data: QueryDict) -> SearchFilters:
    """The SearchFilters the chat form's fields ask for. Raises FilterError (chat.retrieval.filters)."""
    value: dict = {}
    media_types = [t for t in data.getlist("media_type") if t.strip()]
    if media_types:
        value["media_type"] = media_types
    tags = [t.strip() for t in data.get("tags", "").split(",") if t.strip()]
    if tags:
        value["tags"] = tags
    for key in ("source_prefix", "after", "before"):
        field = data.get(key, "").strip()
        if field:
            value[key] = field
    return parse_filters(value)


def filters_summary(filters: dict) -> str:
    """A filter object (Message.filters) for people: "PDF, Markdown · tags garden · under
    handbook/ · from 2024-01-01 · before 2025-01-01"; "" without filters."""
    parts = []
    if filters.get("media_type"):
        parts.append(", ".join(_NAMES.get(t, t) for t in filters["media_type"]))
    if filters.get("tags"):
        parts.append("tags " + ", ".join(filters["tags"]))
    if filters.get("source_prefix"):
        parts.append(f"under {filters['source_prefix']}")
    if filters.get("after"):
        parts.append(f"from {filters['after']}")
    if filters.get("before"):
        parts.append(f"before {filters['before']}")
    return " · ".join(parts)
