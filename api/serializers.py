"""Output shapes shared by several endpoints (one serializer per concept): a document reference,
a scored chunk, a segment and a citation. They read the retrieval types' attributes
(chat.retrieval: DocumentRef, the scored chunk, Segment) or the same keys of a dict, so the
OpenAPI schema is what clients receive. Strict input fields live here too."""

from __future__ import annotations

from rest_framework import serializers

from chat.client_text import client_text
from chat.questions import InvalidQuestion, clean_question
from chat.retrieval.filters import NO_FILTERS, FilterError, parse_filters


class StrictCharField(serializers.CharField):
    """A string and nothing else (DRF would turn 5 into "5")."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer and nothing else (DRF would accept "5", 5.0 and true)."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class QuestionField(serializers.CharField):
    """A question, checked by chat.questions.clean_question (the cap and characters every way of
    asking shares); its message is the field's error."""

    def __init__(self, **kwargs):
        super().__init__(trim_whitespace=True, **kwargs)

    def to_internal_value(self, data) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        try:
            return clean_question(data)
        except InvalidQuestion as exc:
            raise serializers.ValidationError(str(exc), code="invalid") from exc


class FiltersField(serializers.JSONField):
    """The search filter object (chat.retrieval.filters), parsed by parse_filters into a
    SearchFilters (null: NO_FILTERS; absent: not in validated_data); a bad one is a 400 naming each
    bad key under the field, e.g. {"filters": {"after": ["..."]}}."""

    def __init__(self, **kwargs):
        kwargs.setdefault("required", False)
        kwargs.setdefault("allow_null", True)
        kwargs.setdefault("help_text", 'Only documents matching all of: {"media_type": [...], "tags": [...] (any '
                                       'of them), "source_prefix": "...", "after": "YYYY-MM-DD" (on or after), '
                                       '"before": "YYYY-MM-DD"} (each optional).')
        super().__init__(**kwargs)

    def validate_empty_values(self, data):
        if data is None:
            return True, NO_FILTERS  # null is no filter
        return super().validate_empty_values(data)

    def to_internal_value(self, data):
        try:
            return parse_filters(data)
        except FilterError as exc:
            raise serializers.ValidationError(exc.errors) from exc

    def to_representation(self, value):
        return value


# The text rule of every API surface (chat.client_markdown): Markdown where Markdown is meant (an
# answer), made inert; every other text field plain text with its markup escaped.
PLAIN_TEXT = 'Plain text: "&", "<" and ">" are written as HTML entities (html.unescape gives the text back).'
MARKDOWN = ("Markdown citing [n], made inert: no raw HTML (tags removed, their text kept), no links other than "
            "http(s)/mailto, no images.")


def plain_text(help_text: str = "", **kwargs) -> serializers.CharField:
    """A text field of an output whose value is already plain text (the search and answer payloads
    escape theirs, chat.client_text.client_text): the schema says so."""
    return serializers.CharField(help_text=f"{help_text} {PLAIN_TEXT}".strip(), **kwargs)


class PlainTextField(serializers.CharField):
    """A text field of an output read from a model (a title, a name, an error): written out as plain
    text, its markup escaped (chat.client_text.client_text); the schema says so."""

    def __init__(self, help_text: str = "", **kwargs):
        kwargs.setdefault("read_only", True)
        super().__init__(help_text=f"{help_text} {PLAIN_TEXT}".strip(), **kwargs)

    def to_representation(self, value) -> str:
        return client_text(str(value))


def plain_json(value):
    """`value` (a JSON value: a document's metadata) with every string in it, keys included, written
    as plain text (client_text)."""
    if isinstance(value, str):
        return client_text(value)
    if isinstance(value, list):
        return [plain_json(item) for item in value]
    if isinstance(value, dict):
        return {client_text(str(key)): plain_json(item) for key, item in value.items()}
    return value


class PlainJSONField(serializers.JSONField):
    """A JSON output whose strings are plain text (plain_json); the schema says so."""

    def __init__(self, help_text: str = "", **kwargs):
        kwargs.setdefault("read_only", True)
        super().__init__(help_text=f"{help_text} Its strings are plain text: {PLAIN_TEXT}".strip(), **kwargs)

    def to_representation(self, value):
        return plain_json(super().to_representation(value))


class DocumentRefOutput(serializers.Serializer):
    id = serializers.IntegerField()
    title = plain_text()
    source = plain_text("Path relative to the ingested folder, file name or URL.")


class RanksOutput(serializers.Serializer):
    vector = serializers.IntegerField(allow_null=True, help_text="1-based rank on the vector side, or null.")
    keyword = serializers.IntegerField(allow_null=True, help_text="1-based rank on the BM25 side, or null.")


class ScoredChunkOutput(serializers.Serializer):
    chunk_id = serializers.IntegerField()
    document = DocumentRefOutput()
    chunk_index = serializers.IntegerField()
    text = plain_text()
    start = serializers.IntegerField(help_text="Character offset in the document text.")
    end = serializers.IntegerField(help_text="Character offset, exclusive.")
    score = serializers.FloatField(
        help_text="Hybrid: the fused score (0-1, a weighted average of the min-max normalised similarity and BM25 "
                  "over the candidates; the RRF score when the search is fused by RRF; with several queries, "
                  "1 / (60 + the chunk's best rank)); vector: cosine similarity; keyword: BM25.")
    relevance = serializers.FloatField(help_text="Calibrated 0-1 relevance used by RSE.")
    ranks = RanksOutput()


class SegmentOutput(serializers.Serializer):
    document = DocumentRefOutput()
    start = serializers.IntegerField(help_text="First chunk index.")
    end = serializers.IntegerField(help_text="Chunk index after the segment (exclusive).")
    char_start = serializers.IntegerField(help_text="Character offset in the document text.")
    char_end = serializers.IntegerField(help_text="Character offset, exclusive.")
    text = plain_text()
    score = serializers.FloatField()
    page = serializers.IntegerField(allow_null=True, help_text="PDF page of the segment's start.")


class SourceOutput(serializers.Serializer):
    """Source [n] of an answer: a segment of a document (chunks start..end-1) and its text."""

    n = serializers.IntegerField(help_text="The number the answer cites as [n].")
    document = DocumentRefOutput()
    start = serializers.IntegerField(help_text="First chunk index of the segment.")
    end = serializers.IntegerField(help_text="Chunk index after the segment (exclusive).")
    text = plain_text()
    page = serializers.IntegerField(allow_null=True, help_text="PDF page of the segment's start.")


class CitationOutput(SourceOutput):
    """A source of a stored answer (/api/ask/), with the web page that shows it."""

    url = serializers.CharField(help_text="The passage in its document, highlighted (web UI, signed in).")
