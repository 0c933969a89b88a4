"""XLSX, CSV, PPTX, ODT, EPUB and EML files made by their libraries, ingested through the real
pipeline by every way in (`manage.py ingest` on a folder, the REST API, the web upload form), then
found by a search whose passage still says what a spreadsheet row's cells mean."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from rest_framework.test import APIClient

from accounts.services import token_create
from corpus.ingest.parse.formats import CSV, EML, EPUB, ODT, PPTX, XLSX
from corpus.models import Collection, Document
from tests import formats
from tests.corpus.ingest_helpers import assert_chunks_tile, eager_media  # noqa: F401

Status = Document.Status
pytestmark = pytest.mark.usefixtures("eager_media")

SAMPLES = {
    "money/budget.xlsx": (formats.budget_xlsx, XLSX, "Household budget", "Sheet: Budget"),
    "money/stock.csv": (lambda: b"Crop,Stock,Shelf\nBeans,3,A\nPeas,14,B\n", CSV, "stock", ""),
    "talks/compost.pptx": (lambda: formats.pptx([("Why compost", "Soil improves and worms thrive.",
                                                   "Mention the worms")]), PPTX, "Why compost",
                           "Slide 1: Why compost"),
    "log.odt": (formats.odt, ODT, "Harvest log", "Harvest"),
    "books/pond.epub": (lambda: formats.epub([("c1.xhtml", "<h1>Frogs</h1><p>Frogs sing at night by the pond.</p>")]),
                        EPUB, "Pond Life", "Frogs"),
    "mail/delivery.eml": (formats.eml, EML, "Compost délivery on Friday", "Attachment: order.txt"),
}


def write_samples(root: Path) -> None:
    for source, (make, *_rest) in SAMPLES.items():
        path = root / source
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(make())


@pytest.mark.django_db(transaction=True)
def test_the_cli_ingests_a_folder_of_every_new_format(tmp_path):
    write_samples(tmp_path / "docs")
    (tmp_path / "docs" / "old.xls").write_bytes(b"\xd0\xcf\x11\xe0 legacy binary workbook")
    out = StringIO()

    call_command("ingest", str(tmp_path / "docs"), "--collection", "formats", "--wait", stdout=out)

    documents = {d.source: d for d in Document.objects.filter(collection__slug="formats")}
    assert set(documents) == set(SAMPLES)
    assert "old.xls: this file type is not supported" in out.getvalue()
    for source, (_make, media_type, title, heading) in SAMPLES.items():
        document = documents[source]
        assert (document.status, document.error) == (Status.READY, ""), source
        assert (document.media_type, document.title) == (media_type, title), source
        chunks = assert_chunks_tile(document)
        if heading:
            assert any(c.heading_path.startswith(heading) for c in chunks), (source, [c.heading_path for c in chunks])
            # The default contextual chunk header carries the section, so a citation says where.
            assert any(f"{title} > {heading}" in c.context for c in chunks), (source, [c.context for c in chunks])
    budget = documents["money/budget.xlsx"]
    assert "| Total | 1212.5 |  |" in budget.text
    delivery = documents["mail/delivery.eml"]
    assert delivery.text.startswith("From: Ada Gardener <ada@example.com>\nTo: Bob Digger <bob@example.com>\n")
    assert "Other attachments (not read): invoice.pdf (application/pdf)" in delivery.text


@pytest.fixture
def api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_create(user=user)[1]}")
    return client


@pytest.mark.django_db
def test_an_uploaded_sheet_is_found_with_its_header(api, user, django_capture_on_commit_callbacks):
    Collection.objects.create(slug="mine", name="Mine", owner=user)  # the default chunker and size
    rows = [["Plot", "Crop", "Kilograms"]] + [[f"P{i}", f"crop {i}", i * 3] for i in range(150)]
    rows[42] = ["P41", "pumpkin", 95]
    data = formats.xlsx({"Harvest": rows}, title="Allotment harvest")

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post("/api/documents/", {"file": SimpleUploadedFile("harvest.xlsx", data),
                                                "collection": "mine"}, format="multipart")
    assert response.status_code == 201, response.content
    document = Document.objects.get(source="harvest.xlsx")
    assert (document.status, document.media_type, document.title) == (Status.READY, XLSX, "Allotment harvest")
    chunks = assert_chunks_tile(document)
    assert len(chunks) > 3
    for chunk in chunks:  # every row is cut into a chunk together with its column names
        assert "| Plot | Crop | Kilograms |" in chunk.text or "| P" not in chunk.text, chunk.text

    listed = api.get(f"/api/documents/{document.pk}/chunks/").json()
    paths = {c["heading_path"] for c in (listed["results"] if isinstance(listed, dict) else listed)}
    assert paths == {"Sheet: Harvest"}

    body = api.post("/api/search/", {"query": "pumpkin", "collection": "mine", "k": 3, "mode": "keyword"},
                    format="json").json()

    found = body["chunks"][0]["text"]
    assert "| P41 | pumpkin | 95 |" in found
    assert "| Plot | Crop | Kilograms |" in found  # the row is quoted under its header


def accept_attribute(page: str) -> set[str]:
    return set(page[page.index('accept="') + 8:].split('"', 1)[0].split(","))


@pytest.mark.django_db
def test_upload_surfaces_offer_and_name_the_new_formats(api, user, client, admin_client,
                                                        django_capture_on_commit_callbacks):
    Collection.objects.create(slug="mine", name="Mine", owner=user)
    client.force_login(user)
    new = {".xlsx", ".csv", ".tsv", ".pptx", ".odt", ".epub", ".eml"}

    page = client.get("/documents/").content.decode()
    assert new | {".docx", ".md", ".pdf"} <= accept_attribute(page)
    assert "PowerPoint (.pptx), OpenDocument text (.odt), EPUB, email (.eml), PNG, JPEG or TIFF." in page
    admin_page = admin_client.get("/admin/corpus/document/add/").content.decode()
    assert new <= accept_attribute(admin_page)
    assert "email (.eml), PNG, JPEG or TIFF. Each file is checked on its own" in admin_page

    refused = api.post("/api/documents/", {"file": SimpleUploadedFile("old.xls", b"\xd0\xcf\x11\xe0"),
                                           "collection": "mine"}, format="multipart")
    assert refused.status_code == 400
    error = refused.json()["files"][0]["error"]
    assert error.startswith("old.xls: this file type is not supported (supported: plain text, Markdown")
    assert "Excel (.xlsx)" in error and ".eml" in error and ".pptx" in error

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/documents/upload/", {"collection": "mine", "files": [
            SimpleUploadedFile("talk.pptx", formats.pptx([("Seed swap", "Bring seeds in paper bags.", "")]))]})
    assert response.status_code == 302
    document = Document.objects.get(source="talk.pptx")
    assert (document.status, document.media_type) == (Status.READY, PPTX)
    assert document.text == "Slide 1: Seed swap\n\nBring seeds in paper bags."
