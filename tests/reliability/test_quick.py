"""The quick subset of `make reliability` that `make test` runs: a few hostile files through the real
pipeline, XSS payloads on the pages, a short load against a live server, and the harness's own
invariant check. (The full harness: python -m reliability.)"""

from __future__ import annotations

import threading
import time

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from accounts.services import token_create
from corpus import services
from corpus.models import Collection, Document
from reliability import hostile
from reliability.checks import check_collection
from reliability.security import PAYLOAD, UNSAFE
from tests.corpus.ingest_helpers import GUIDE_V1, eager_media  # noqa: F401

QUICK_KINDS = ["empty file", "binary as .pdf", "invalid UTF-8", "UTF-16 with BOM", "DOCX cut in half",
               "script, iframe and javascript: HTML", "HTML nested 100,000 deep", "Markdown with XSS in headings",
               "right-to-left override in the name", "control characters in the name", "PDF without text",
               "XLSX spanning the whole grid (A1:XFD1048576)", "ODT declaring entities (billion laughs)",
               "EPUB with a path-traversal entry", "malformed EML",
               "image decompression bomb (PNG claiming 60,000 × 60,000)", "TIFF cut in half"]


def kinds(names: list[str]) -> list[hostile.Hostile]:
    by_name = {k.kind: k for k in hostile.KINDS}
    return [by_name[name] for name in names]


def test_the_harness_has_35_kinds_of_hostile_files_or_more():
    assert len(hostile.KINDS) >= 35
    assert len({k.kind for k in hostile.KINDS}) == len(hostile.KINDS)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
@pytest.mark.parametrize("kind", kinds(QUICK_KINDS), ids=lambda k: k.kind)
def test_a_hostile_file_ends_ready_or_failed_with_a_message(kind, user):
    collection = Collection.objects.create(slug="hostile", name="Hostile", owner=user)
    upload = SimpleUploadedFile(kind.name, kind.make())

    result = services.document_upload(collection=collection, file=upload, source=kind.source)

    if not result.accepted:
        outcome, message = "refused", result.error
    else:
        document = Document.objects.get(pk=result.document.pk)
        outcome, message = document.status, document.error
    assert not hostile._judge(kind, outcome, message), (outcome, message)
    if result.accepted:
        assert not hostile._check_document(kind, result.document.pk)


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_xss_payloads_stay_escaped_on_the_pages(client, admin_user):
    collection = Collection.objects.create(slug="xss", name=f"Col {PAYLOAD}", description=PAYLOAD, owner=admin_user)
    data = f"---\ntitle: {PAYLOAD}\n---\n# {PAYLOAD}\n\nTomatoes {PAYLOAD} need water.\n".encode()
    result = services.document_upload(collection=collection, file=SimpleUploadedFile(f"{PAYLOAD}.md", data))
    assert Document.objects.get(pk=result.document.pk).status == Document.Status.READY
    client.force_login(admin_user)

    for path in ("/", "/documents/", "/admin/corpus/document/", "/admin/corpus/collection/",
                 f"/admin/corpus/document/{result.document.pk}/change/"):
        response = client.get(path)
        assert response.status_code == 200, path
        page = response.content.decode()
        assert not [p.pattern for p in UNSAFE if p.search(page)], path


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_the_invariant_check_accepts_a_clean_collection_and_names_a_broken_one(user):
    collection = Collection.objects.create(slug="checked", name="Checked", owner=user, chunk_size=32,
                                           chunk_overlap=0)
    for name in ("a.md", "b.md"):
        services.document_upload(collection=collection, file=SimpleUploadedFile(name, GUIDE_V1))

    assert check_collection("checked", ["a.md", "b.md"]).ok
    document = Document.objects.get(source="b.md")
    document.chunks.filter(chunk_index=1).delete()  # a gap
    outcome = check_collection("checked", ["a.md", "b.md", "c.md"])
    assert outcome.missing == ["c.md"]
    assert outcome.bad_chunks and outcome.bad_chunks[0].startswith("b.md: ")


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("eager_media")
def test_a_short_search_load_has_no_server_errors_or_drops(live_server, user):
    import http.client
    import json
    from urllib.parse import urlparse

    collection = Collection.objects.create(slug="garden", name="Garden", owner=user)
    services.document_upload(collection=collection, file=SimpleUploadedFile("guide.md", GUIDE_V1))
    token = token_create(user=user)[1]
    address = urlparse(live_server.url)
    statuses: list[int] = []
    dropped: list[str] = []
    stop = time.monotonic() + 3

    def client() -> None:
        while time.monotonic() < stop:
            conn = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
            try:
                conn.request("POST", "/api/search/", body=json.dumps({"query": "how much sun do tomatoes need"}),
                             headers={"Content-Type": "application/json", "Authorization": f"Token {token}"})
                response = conn.getresponse()
                response.read()
                statuses.append(response.status)
            except (OSError, http.client.HTTPException) as exc:
                dropped.append(repr(exc))
            finally:
                conn.close()

    threads = [threading.Thread(target=client) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert statuses and set(statuses) == {200}, statuses
    assert not dropped
