"""A document's metadata: the JSON object Document.metadata holds and search filters read.

Keys (DESIGN.md "Contracts for sources, filters, tokens and MCP"): `source_kind` ("url" or
"file"), `url` or `path` (the document's source), `media_type`, `title`, `author` (may be
empty), `created` and `modified` (ISO 8601 in UTC, "YYYY-MM-DDTHH:MM:SSZ"; the format's own
dates when the file says them, else the document row's timestamps), `tags` (set by people
through the API, kept across re-ingestion).

Dates are stored in that one fixed form so that the SQL filters can compare their first ten
characters with a "YYYY-MM-DD" day as text, with no cast that a stray value could make fail.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.core.exceptions import ValidationError

TAGS_MAX = 32  # tags per document
TAG_MAX_CHARS = 64


def iso_utc(moment: datetime | None) -> str | None:
    """`moment` as "YYYY-MM-DDTHH:MM:SSZ" in UTC (a naive datetime is taken as UTC); None stays None."""
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def clean_tags(value: object) -> list[str]:
    """The tags as stored: a list of at most TAGS_MAX non-empty strings of at most TAG_MAX_CHARS
    characters, stripped, duplicates dropped (first kept). Raises ValidationError with a message
    for the person who sent them."""
    if not isinstance(value, list):
        raise ValidationError("tags must be a list of strings.")
    if len(value) > TAGS_MAX:
        raise ValidationError(f"At most {TAGS_MAX} tags per document.")
    tags: list[str] = []
    for tag in value:
        if not isinstance(tag, str):
            raise ValidationError("Each tag must be a string.")
        tag = tag.strip()
        if not tag:
            raise ValidationError("A tag cannot be empty.")
        if len(tag) > TAG_MAX_CHARS:
            raise ValidationError(f"A tag is at most {TAG_MAX_CHARS} characters.")
        if tag not in tags:
            tags.append(tag)
    return tags


def merged_tags(current: object, *, add: list[str], remove: list[str] = ()) -> list[str]:
    """`current` tags (hand-set ones included) in their order without `remove`, then those of `add`
    not there yet: how a source's tags join a document's own (sources.sync, a source's tags
    changed). At most TAGS_MAX: `add` always fits, the first of the others are dropped first."""
    tags = [tag for tag in (current if isinstance(current, list) else []) if tag not in remove]
    tags += [tag for tag in add if tag not in tags]
    while len(tags) > TAGS_MAX:
        tags.remove(next(tag for tag in tags if tag not in add))
    return tags


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def build_metadata(*, source: str, media_type: str, title: str, author: str = "",
                   created: datetime | None, modified: datetime | None, tags: list[str] | None = None) -> dict:
    """The metadata object for a document (see the module docstring). `created` and `modified`
    are the best dates known; `modified` falls back to `created`."""
    kind = "url" if is_url(source) else "file"
    return {
        "source_kind": kind,
        "url" if kind == "url" else "path": source,
        "media_type": media_type,
        "title": title,
        "author": author,
        "created": iso_utc(created),
        "modified": iso_utc(modified or created),
        "tags": list(tags or []),
    }
