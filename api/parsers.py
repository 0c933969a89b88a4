"""The API's JSON parser: DRF's, plus a size cap and the two bodies that parse but cannot be used
and would otherwise be 500s later. A body over settings.API_MAX_JSON_BYTES is a 413 before it is
parsed (the parse is the costly part: memory a process keeps); nesting deeper than Python's
recursion limit (2 KB of "[" raises RecursionError, which DRF does not catch) and a lone surrogate
("\\ud800": valid JSON, not text that UTF-8, Postgres or the tokenizer can take) are a 400
ParseError. Set as DEFAULT_PARSER_CLASSES, so every API and /v1 view uses it."""

from __future__ import annotations

import io
import re

from django.conf import settings
from rest_framework import status
from rest_framework.exceptions import APIException, ParseError
from rest_framework.parsers import JSONParser

_SURROGATE = re.compile("[\ud800-\udfff]")
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


class JSONTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "request_too_large"


class SafeJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        limit = settings.API_MAX_JSON_BYTES
        raw = stream.read(limit + 1) if stream is not None else b""
        if len(raw) > limit:
            raise JSONTooLarge(f"The JSON body is over {limit} bytes (API_MAX_JSON_BYTES).")
        try:
            data = super().parse(io.BytesIO(raw), media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        # A surrogate can only come from a \uD800-\uDFFF escape (raw ones are not UTF-8): walk the
        # data (~1 s for 200,000 small objects) only when the body has one.
        if _SURROGATE_ESCAPE.search(raw) and has_lone_surrogate(data):
            raise ParseError("JSON parse error - a string holds a lone surrogate (\\ud800-\\udfff), which is not text.")
        return data


def has_lone_surrogate(data) -> bool:
    """Whether a string (key or value) anywhere in parsed JSON holds a surrogate code point: json
    joins escaped pairs into one character, so any left is unpaired. Iterative: `data` may be as
    deep as the parser allowed."""
    pending = [data]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False
