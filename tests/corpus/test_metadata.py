"""Document metadata: tag validation, the file's own properties (PDF, DOCX, HTML, EML) read at
parsing, the metadata written at ingestion (tags kept), and the migration's backfill."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from corpus import services
from corpus.ingest.parse import parse_document
from corpus.metadata import TAG_MAX_CHARS, TAGS_MAX, build_metadata, clean_tags, iso_utc
from corpus.models import Document
from tests import formats
from tests.chat.factories import make_collection
from tests.corpus.ingest_helpers import GUIDE_V1, eager_media  # noqa: F401

FILES = Path(__file__).parent.parent / "fixtures" / "files"


def test_tags_are_stripped_and_deduplicated_in_order():
    assert clean_tags([" garden ", "compost", "garden", "Compost"]) == ["garden", "compost", "Compost"]
    assert clean_tags([]) == []


@pytest.mark.parametrize(("value", "message"), [
    ("garden", "tags must be a list of strings."),
    ([1], "Each tag must be a string."),
    (["  "], "A tag cannot be empty."),
    (["x" * (TAG_MAX_CHARS + 1)], f"A tag is at most {TAG_MAX_CHARS} characters."),
    ([f"t{i}" for i in range(TAGS_MAX + 1)], f"At most {TAGS_MAX} tags per document."),
])
def test_bad_tags_are_refused_with_a_message(value, message):
    with pytest.raises(ValidationError) as caught:
        clean_tags(value)
    assert caught.value.messages == [message]


def test_dates_are_stored_in_one_utc_form():
    from datetime import timedelta, timezone
    paris = timezone(timedelta(hours=2))
    assert iso_utc(datetime(2024, 5, 1, 1, 30, tzinfo=paris)) == "2024-04-30T23:30:00Z"
    assert iso_utc(datetime(2024, 5, 1, 1, 30)) == "2024-05-01T01:30:00Z"  # naive: taken as UTC
    meta = build_metadata(source="https://example.com/a", media_type="text/html", title="A",
                          created=datetime(2024, 1, 2, tzinfo=UTC), modified=None)
    assert meta == {"source_kind": "url", "url": "https://example.com/a", "media_type": "text/html", "title": "A",
                    "author": "", "created": "2024-01-02T00:00:00Z", "modified": "2024-01-02T00:00:00Z",
                    "tags": []}


def _pdf_with_info() -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter()
    writer.append(PdfReader(FILES / "two_pages.pdf"))
    writer.add_metadata({"/Title": "Two Page Report", "/Author": "Grace Hopper", "/CreationDate": "D:20230405060708Z",
                         "/ModDate": "D:20240102030405+01'00'"})
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def _docx_with_core_properties() -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph("Sowing beans in spring.")
    document.core_properties.author = "Ada Gardener"
    document.core_properties.created = datetime(2022, 3, 4, 5, 6, 7)
    document.core_properties.modified = datetime(2023, 8, 9, 10, 11, 12)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


HTML_PAGE = (b'<html><head><title>Beans</title><meta name="author" content="Tom  Thumb">'
             b'<meta property="article:published_time" content="2021-06-01T08:00:00+02:00">'
             b'<meta property="article:modified_time" content="2021-07-01">'
             b"</head><body><p>Beans like sun.</p></body></html>")


@pytest.mark.parametrize(("name", "make", "author", "created", "modified"), [
    ("report.pdf", _pdf_with_info, "Grace Hopper", "2023-04-05T06:07:08Z", "2024-01-02T02:04:05Z"),
    ("beans.docx", _docx_with_core_properties, "Ada Gardener", "2022-03-04T05:06:07Z", "2023-08-09T10:11:12Z"),
    ("beans.html", lambda: HTML_PAGE, "Tom Thumb", "2021-06-01T06:00:00Z", "2021-07-01T00:00:00Z"),
    ("mail.eml", formats.eml, "Ada Gardener", "2025-03-03T10:00:00Z", "2025-03-03T10:00:00Z"),
])
def test_the_parser_reads_author_and_dates_where_the_format_says_them(name, make, author, created, modified):
    parsed = parse_document(make(), filename=name)
    assert (parsed.author, iso_utc(parsed.created), iso_utc(parsed.modified)) == (author, created, modified)


def test_formats_without_properties_and_malformed_dates_leave_them_unknown():
    parsed = parse_document(b"# Beans\n\nSun.\n", filename="beans.md")
    assert (parsed.author, parsed.created, parsed.modified) == ("", None, None)
    page = HTML_PAGE.replace(b"2021-06-01T08:00:00+02:00", b"last tuesday")
    parsed = parse_document(page, filename="beans.html")
    assert (parsed.author, parsed.created, iso_utc(parsed.modified)) == ("Tom Thumb", None, "2021-07-01T00:00:00Z")


@pytest.mark.django_db
@pytest.mark.usefixtures("eager_media")
def test_ingestion_writes_the_metadata_and_keeps_the_tags(django_capture_on_commit_callbacks):
    collection = make_collection("meta", chunk_size=32, chunk_overlap=0)
    with django_capture_on_commit_callbacks(execute=True):
        document = services.document_ingest(collection=collection, source="notes/report.pdf", data=_pdf_with_info(),
                                            filename="report.pdf")
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    assert document.metadata == {
        "source_kind": "file", "path": "notes/report.pdf", "media_type": "application/pdf",
        "title": "Two Page Report", "author": "Grace Hopper", "created": "2023-04-05T06:07:08Z",
        "modified": "2024-01-02T02:04:05Z", "tags": []}

    services.document_set_tags(document=document, tags=["reports", "2024"])
    with django_capture_on_commit_callbacks(execute=True):
        services.document_reingest(document=document, force=True)
    document.refresh_from_db()
    assert document.metadata["tags"] == ["reports", "2024"] and document.metadata["author"] == "Grace Hopper"

    # A file that states no dates: created is the document's own creation, modified the ingestion.
    with django_capture_on_commit_callbacks(execute=True):
        guide = services.document_ingest(collection=collection, source="guide.md", data=GUIDE_V1, filename="guide.md")
    guide.refresh_from_db()
    assert guide.metadata["created"] == iso_utc(guide.created_at)
    assert guide.metadata["modified"] == iso_utc(guide.ingested_at)
    assert (guide.metadata["author"], guide.metadata["media_type"]) == ("", "text/markdown")


def _migrate(target):
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([target] if isinstance(target, tuple) else target)


@pytest.mark.django_db(transaction=True)
def test_the_migration_fills_existing_documents_from_what_they_hold():
    try:
        _migrate(("corpus", "0010_collection_old_slugs"))
        apps = MigrationExecutor(connection).loader.project_state(("corpus", "0010_collection_old_slugs")).apps
        OldCollection, OldDocument = apps.get_model("corpus", "Collection"), apps.get_model("corpus", "Document")
        collection = OldCollection.objects.create(slug="old", name="Old")
        old = OldDocument.objects.create(collection=collection, source="https://example.com/beans", title="Beans",
                                         media_type="text/html", status="ready")
    finally:
        executor = MigrationExecutor(connection)
        executor.loader.build_graph()
        executor.migrate(executor.loader.graph.leaf_nodes())
    document = Document.objects.get(pk=old.pk)
    assert document.metadata == {
        "source_kind": "url", "url": "https://example.com/beans", "media_type": "text/html", "title": "Beans",
        "author": "", "created": iso_utc(document.created_at), "modified": iso_utc(document.updated_at),
        "tags": []}


def test_merged_tags_keep_the_documents_own_and_always_fit_the_added_ones():
    from corpus.metadata import TAGS_MAX, merged_tags

    assert merged_tags(["mine", "old"], add=["new", "mine"], remove=["old"]) == ["mine", "new"]
    assert merged_tags(None, add=["a"]) == ["a"]
    own = [f"own-{n}" for n in range(TAGS_MAX)]
    assert merged_tags(own, add=["src"]) == own[1:] + ["src"]
