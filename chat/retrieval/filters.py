"""Search filters on document metadata: parsed and validated here, and nowhere else, then
applied inside the candidate statement (chat/retrieval/candidates.py) as conditions on the
document row, beside the collection restriction.

The filter object (DESIGN.md "Contracts for sources, filters, tokens and MCP"):

    {"media_type": ["application/pdf", ...],  # the document's media type is one of these
     "tags": ["garden", ...],                  # the document has at least one of these tags
     "source_prefix": "handbook/",             # its source (path or URL) starts with this
     "after": "2024-01-01",                    # its date is on or after this day
     "before": "2025-01-01"}                   # its date is before this day

Every key is optional; the conditions combine with AND. A document's date is its metadata's
`modified`, else `created` (corpus.metadata: UTC, "YYYY-MM-DDTHH:MM:SSZ"), compared by its day.
Filtering inside the statement matters: the HNSW iterative scan then keeps reading the index
until enough chunks pass the filter, and the keyword side reads the postings of matching
chunks only, instead of a top-k cut being filtered down to nothing afterwards.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from django.core.exceptions import ValidationError

from corpus.metadata import clean_tags

MAX_VALUES = 32  # media types or tags in one filter
MAX_PREFIX_CHARS = 1024  # Document.source's length
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
KEYS = ("media_type", "tags", "source_prefix", "after", "before")


class FilterError(ValueError):
    """A bad filter object; `errors` maps each offending key to messages for the person who sent it."""

    def __init__(self, errors: dict[str, list[str]]):
        super().__init__(" ".join(f"filters.{key}: {' '.join(messages)}" for key, messages in errors.items()))
        self.errors = errors


@dataclass(frozen=True)
class SearchFilters:
    media_types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    source_prefix: str | None = None
    after: date | None = None
    before: date | None = None

    def __bool__(self) -> bool:
        return bool(self.media_types or self.tags or self.source_prefix or self.after or self.before)

    def document_condition(self, alias: str = "d") -> str:
        """SQL conditions on the corpus_document row `alias`, each starting with AND ("" without
        filters). Values travel as the %(filter_*)s parameters of parameters(); the text depends
        only on which keys are set, so a statement built from it can be cached by it."""
        parts = []
        if self.media_types:
            parts.append(f"{alias}.media_type = ANY(%(filter_media_types)s::text[])")
        if self.tags:
            parts.append(f"({alias}.metadata -> 'tags') ?| %(filter_tags)s::text[]")
        if self.source_prefix:
            parts.append(f"starts_with({alias}.source, %(filter_source_prefix)s::text)")
        day = f"left(coalesce({alias}.metadata ->> 'modified', {alias}.metadata ->> 'created'), 10)"
        if self.after:
            parts.append(f"{day} >= %(filter_after)s::text")
        if self.before:
            parts.append(f"{day} < %(filter_before)s::text")
        return "".join(f" AND {part}" for part in parts)

    def described(self) -> str:
        """The filters in words, for a message that says what was searched ("" without filters):
        "documents of type application/pdf, tagged garden or shed, whose source starts with
        "handbook/", dated on or after 2024-01-01 and before 2025-01-01"."""
        parts = []
        if self.media_types:
            parts.append(f"of type {' or '.join(self.media_types)}")
        if self.tags:
            parts.append(f"tagged {' or '.join(self.tags)}")
        if self.source_prefix:
            parts.append(f'whose source starts with "{self.source_prefix}"')
        dates = ([f"on or after {self.after.isoformat()}"] if self.after else []) + (
            [f"before {self.before.isoformat()}"] if self.before else [])
        if dates:
            parts.append("dated " + " and ".join(dates))
        return "documents " + ", ".join(parts) if parts else ""

    def as_json(self) -> dict:
        """The filter object as a client sends it, with the keys that are set only ({} without
        filters): parse_filters(f.as_json()) == f."""
        found = {"media_type": list(self.media_types), "tags": list(self.tags), "source_prefix": self.source_prefix,
                 "after": self.after.isoformat() if self.after else None,
                 "before": self.before.isoformat() if self.before else None}
        return {key: value for key, value in found.items() if value}

    def parameters(self) -> dict:
        """The parameters document_condition() refers to."""
        return {
            "filter_media_types": list(self.media_types),
            "filter_tags": list(self.tags),
            "filter_source_prefix": self.source_prefix or "",
            "filter_after": self.after.isoformat() if self.after else "",
            "filter_before": self.before.isoformat() if self.before else "",
        }


NO_FILTERS = SearchFilters()


def parse_filters(value: object) -> SearchFilters:
    """The SearchFilters for a filter object as a client sends it (JSON: see the module
    docstring); None or {} is no filter. Raises FilterError naming every bad key."""
    if value is None:
        return NO_FILTERS
    if not isinstance(value, dict):
        raise FilterError({"filters": ["filters must be an object with the keys " + ", ".join(KEYS) + "."]})
    errors: dict[str, list[str]] = {}
    for key in sorted(set(value) - set(KEYS)):
        errors[str(key)] = [f"Unknown filter; use {', '.join(KEYS)}."]
    found: dict = {}
    for key, read in (("media_type", _media_types), ("tags", _tags), ("source_prefix", _prefix),
                      ("after", _date), ("before", _date)):
        if value.get(key) is None:
            continue
        try:
            found[key] = read(value[key])
        except ValueError as exc:
            errors[key] = [str(exc)]
    if not errors and found.get("after") and found.get("before") and found["after"] >= found["before"]:
        errors["before"] = ["before must be a later day than after."]
    if errors:
        raise FilterError(errors)
    return SearchFilters(media_types=found.get("media_type", ()), tags=found.get("tags", ()),
                         source_prefix=found.get("source_prefix"), after=found.get("after"),
                         before=found.get("before"))


def _strings(value: object, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]  # one value needs no list
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError(f"Give a list of {what} (strings).")
    if not 1 <= len(value) <= MAX_VALUES:
        raise ValueError(f"Give from 1 to {MAX_VALUES} {what}.")
    return tuple(value)


def _media_types(value: object) -> tuple[str, ...]:
    types = tuple(t.strip().lower() for t in _strings(value, "media types"))
    if any("/" not in t or len(t) > 100 for t in types):
        raise ValueError("A media type looks like type/subtype, e.g. application/pdf.")
    return types


def _tags(value: object) -> tuple[str, ...]:
    try:
        return tuple(clean_tags(list(_strings(value, "tags"))))
    except ValidationError as exc:
        raise ValueError(" ".join(exc.messages)) from None


def _prefix(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise ValueError("source_prefix must be a non-empty string.")
    if len(value) > MAX_PREFIX_CHARS:
        raise ValueError(f"source_prefix is at most {MAX_PREFIX_CHARS} characters.")
    return value


def _date(value: object) -> date:
    if isinstance(value, str) and _DAY.fullmatch(value.strip()):
        try:
            return date.fromisoformat(value.strip())
        except ValueError:
            pass  # 2024-02-30
    raise ValueError(f"{value!r} is not a day as YYYY-MM-DD.")
