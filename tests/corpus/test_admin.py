"""corpus.admin: live status and progress, multi-file upload with a per-file report, re-ingest,
move and delete actions through the services, chunk list and preview, and what staff may see."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus import services, uploads
from corpus.models import Chunk, Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, GUIDE_V2, eager_media  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]


@pytest.fixture
def admin_client(client, django_user_model):
    admin = django_user_model.objects.create_superuser(username="root", password="root-password-1")
    client.force_login(admin)
    return client


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_user(username="staffer", password="staff-password-1", is_staff=True)


@pytest.fixture
def garden() -> Collection:
    return Collection.objects.create(slug="garden", name="Garden", chunk_size=32, chunk_overlap=0)


def ingest(collection, source, data, capture) -> Document:
    with capture(execute=True):
        document = services.document_ingest(collection=collection, source=source, data=data, filename=source)
    document.refresh_from_db()
    return document


@pytest.fixture
def document(garden, django_capture_on_commit_callbacks) -> Document:
    return ingest(garden, "guide.md", GUIDE_V1, django_capture_on_commit_callbacks)


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_document_list_shows_status_progress_chunks_and_polls_while_busy(admin_client, document, garden):
    busy = Document.objects.create(collection=garden, source="busy.md", status="embedding", progress_done=3,
                                   progress_total=10)
    chunks = Chunk.objects.filter(document=document).count()

    page = admin_client.get("/admin/corpus/document/").content.decode()

    assert "Garden guide" in page
    assert f'<progress max="{chunks}" value="{chunks}"></progress> <span class="doc-count">{chunks}/{chunks}' in page
    assert re.search(rf'class="doc-progress" data-document="{busy.pk}" data-status="embedding" '
                     r'data-url="/admin/corpus/document/progress/"', page)
    assert '<progress max="10" value="3">' in page
    assert "/static/corpus/admin-progress.js" in page
    for view in ("chunks", "preview"):
        assert f"/admin/corpus/document/{document.pk}/{view}/" in page


def test_progress_endpoint_reports_current_state_of_readable_documents_only(client, admin_client, staff, garden):
    busy = Document.objects.create(collection=garden, source="busy.md", status="embedding", progress_done=3,
                                   progress_total=10)
    failed = Document.objects.create(collection=garden, source="bad.md", status="failed", error="Could not parse")

    data = admin_client.get(f"/admin/corpus/document/progress/?ids={busy.pk},{failed.pk},x").json()
    assert sorted(data["documents"], key=lambda d: d["id"]) == [
        {"id": busy.pk, "status": "embedding", "status_display": "Embedding", "progress_done": 3,
         "progress_total": 10, "error": "", "error_short": "", "chunk_count": 0},
        {"id": failed.pk, "status": "failed", "status_display": "Failed", "progress_done": 0, "progress_total": 0,
         "error": "Could not parse", "error_short": "Could not parse", "chunk_count": 0}]

    client.force_login(staff)  # garden is not theirs: nothing to report
    assert client.get(f"/admin/corpus/document/progress/?ids={busy.pk}").json() == {"documents": []}


def test_multi_file_upload_reports_each_file_and_ingests_the_good_ones(admin_client, garden,
                                                                       django_capture_on_commit_callbacks):
    files = [SimpleUploadedFile("empty.md", b""), SimpleUploadedFile("guide.md", GUIDE_V1),
             SimpleUploadedFile("notes.xyz", b"some notes"), SimpleUploadedFile("more.md", GUIDE_V2)]

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/admin/corpus/document/add/", {"collection": garden.pk, "files": files})

    assert response.status_code == 302
    assert response["Location"] == f"/admin/corpus/document/?collection__id__exact={garden.pk}"
    listing = admin_client.get(response["Location"])
    assert messages_of(listing) == ["Added to Garden (queued for ingestion): guide.md, more.md.",
                                    uploads.upload_error("empty.md", 0), uploads.upload_error("notes.xyz", 10)]
    assert sorted(Document.objects.values_list("source", "status")) == [("guide.md", "ready"), ("more.md", "ready")]


def test_upload_page_offers_only_writable_collections_and_starts_on_the_asked_one(client, staff, user, garden):
    mine = Collection.objects.create(slug="staff-own", name="Staff own", owner=staff)
    other = Collection.objects.create(slug="staff-other", name="Staff other", owner=staff)
    Collection.objects.create(slug="public", name="Public", owner=user, is_public=True)
    client.force_login(staff)

    page = client.get(f"/admin/corpus/document/add/?collection={mine.pk}").content.decode()
    options = re.findall(r'<option value="(\d*)"( selected)?', page)
    assert options == [("", ""), (str(other.pk), ""), (str(mine.pk), " selected")]  # by name
    assert 'multiple' in page and 'enctype="multipart/form-data"' in page

    refused = client.post("/admin/corpus/document/add/", {"collection": garden.pk,
                                                          "files": [SimpleUploadedFile("a.md", GUIDE_V1)]})
    assert refused.status_code == 400 and "Choose a collection you may add to." in refused.content.decode()
    assert not Document.objects.exists()


def test_reingest_action_rebuilds_through_the_services(admin_client, document, django_capture_on_commit_callbacks):
    old_ids = set(Chunk.objects.filter(document=document).values_list("pk", flat=True))

    with django_capture_on_commit_callbacks(execute=True):
        response = admin_client.post("/admin/corpus/document/", {
            "action": "reingest_documents", "_selected_action": [document.pk]})

    assert response.status_code == 302
    document.refresh_from_db()
    assert document.status == Document.Status.READY
    assert not old_ids & set(Chunk.objects.filter(document=document).values_list("pk", flat=True))


def test_delete_action_confirms_then_removes_chunks_and_file(admin_client, document,
                                                           django_capture_on_commit_callbacks):
    path = Path(document.file.path)
    asked = admin_client.post("/admin/corpus/document/", {"action": "delete_documents",
                                                          "_selected_action": [document.pk]})
    page = asked.content.decode()
    assert asked.status_code == 200 and "Delete this document with its chunks" in page and 'value="Yes, delete"' in page
    assert Document.objects.filter(pk=document.pk).exists() and path.exists()  # nothing deleted yet

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/corpus/document/", {"action": "delete_documents", "confirm": "yes",
                                                      "_selected_action": [document.pk]})

    assert not Document.objects.exists() and not Chunk.objects.exists() and not path.exists()


def test_move_action_asks_for_the_target_then_moves(admin_client, document, garden,
                                                    django_capture_on_commit_callbacks):
    large = Collection.objects.create(slug="large", name="Large", chunk_size=256, chunk_overlap=0)
    clash = ingest(garden, "other.md", GUIDE_V2, django_capture_on_commit_callbacks)
    ingest(large, "other.md", GUIDE_V2, django_capture_on_commit_callbacks)
    selected = {"action": "move_documents", "_selected_action": [document.pk, clash.pk]}

    ask = admin_client.post("/admin/corpus/document/", selected)
    assert ask.status_code == 200 and "Move to" in ask.content.decode()
    assert Document.objects.get(pk=document.pk).collection == garden

    with django_capture_on_commit_callbacks(execute=True):
        moved = admin_client.post("/admin/corpus/document/", selected | {"apply": "1", "target": large.pk},
                                  follow=True)

    assert messages_of(moved) == [
        "Moved 1 document to Large; documents built under other settings are re-ingested.",
        "other.md: the collection 'Large' already has a document with this source."]
    document.refresh_from_db()
    assert document.collection == large and document.built_signature == large.pipeline_signature()
    assert Document.objects.get(pk=clash.pk).collection == garden


def test_chunk_view_shows_text_context_and_whether_embedded(admin_client, document):
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))
    Chunk.objects.filter(pk=chunks[-1].pk).update(embedding=None)

    page = admin_client.get(f"/admin/corpus/document/{document.pk}/chunks/").content.decode()

    assert page.count('data-embedded="yes"') == len(chunks) - 1 and page.count('data-embedded="no"') == 1
    pests = next(c for c in chunks if "Aphids" in c.text)
    section = page[page.index(f'id="chunk-{pests.chunk_index}"'):]
    assert section.index("Garden guide &gt; Pests") < section.index("Aphids gather under the leaves")
    listing = admin_client.get("/admin/corpus/chunk/").content.decode()
    assert "icon-no.svg" in listing and "icon-yes.svg" in listing


def test_preview_marks_every_chunk_boundary_and_keeps_the_text(admin_client, document):
    chunks = list(Chunk.objects.filter(document=document).order_by("chunk_index"))

    page = admin_client.get(f"/admin/corpus/document/{document.pk}/preview/").content.decode()

    preview = page[page.index('<div class="chunk-preview">'):]
    preview = preview[:preview.index("</div>")]
    assert re.findall(r'title="chunk (\d+) starts here">#\1</a>', preview) == [str(c.chunk_index) for c in chunks]
    text = unescape(re.sub(r"<a [^>]*>#\d+</a>|<[^>]+>", "", preview))
    assert text == document.text
    assert "shade-0" in preview and "shade-1" in preview


def test_chunks_are_read_only(admin_client, document):
    chunk = Chunk.objects.filter(document=document).first()

    assert admin_client.get("/admin/corpus/chunk/add/").status_code == 403
    page = admin_client.get(f"/admin/corpus/chunk/{chunk.pk}/change/")
    assert page.status_code == 200 and b'name="text"' not in page.content


def test_staff_filters_list_only_collections_they_may_read(client, staff, user, document, garden):
    """Django's own related filter lists every collection: staff would see the names and ids of
    other people's private collections in the document and chunk lists."""
    garden.owner = user
    garden.save()  # garden: private, someone else's
    Collection.objects.create(slug="secret-plans", name="Secret plans", owner=user)
    own = Collection.objects.create(slug="staff-own", name="Staff own", owner=staff)
    shared = Collection.objects.create(slug="shared", name="Shared with staff", owner=user)
    shared.readers.add(staff)
    client.force_login(staff)

    for url in ("/admin/corpus/document/", "/admin/corpus/chunk/"):
        page = client.get(url).content.decode()
        assert "Staff own" in page and "Shared with staff" in page, url
        assert "Secret plans" not in page and "Garden" not in page, url
        lookups = set(re.findall(r"collection__id__exact=(\d+)", page))
        assert lookups == {str(own.pk), str(shared.pk)}, url
        assert "you see and may change every collection" not in page


def test_a_superuser_is_told_they_see_every_collection(admin_client, document):
    for url in ("/admin/corpus/document/", "/admin/corpus/chunk/", "/admin/corpus/collection/",
                "/admin/corpus/document/add/"):
        assert "You are a superuser: you see and may change every collection" in admin_client.get(url).content.decode()


def test_staff_see_only_readable_documents_and_cannot_open_others(client, staff, document):
    client.force_login(staff)
    assert "Garden guide" not in client.get("/admin/corpus/document/").content.decode()
    for url in (f"/admin/corpus/document/{document.pk}/chunks/", f"/admin/corpus/document/{document.pk}/preview/"):
        assert client.get(url).status_code == 403


def test_an_editor_may_not_change_or_share_the_collection_in_the_admin(client, staff, user, garden):
    garden.owner = user
    garden.save()
    garden.editors.add(staff)
    client.force_login(staff)

    page = client.get(f"/admin/corpus/collection/{garden.pk}/change/").content.decode()
    assert 'name="readers"' not in page and 'name="name"' not in page  # view only
    client.post(f"/admin/corpus/collection/{garden.pk}/change/", {"name": "Hijacked", "slug": "garden"})
    assert client.post("/admin/corpus/collection/", {"action": "delete_collections", "_selected_action": [garden.pk],
                                                     "confirm": "yes"}).status_code == 302
    garden.refresh_from_db()
    assert garden.name == "Garden" and list(garden.editors.all()) == [staff]


def test_owner_edits_and_shares_in_the_admin_through_the_services(client, staff, user, document, garden,
                                                                 django_capture_on_commit_callbacks):
    garden.owner = staff
    garden.save()
    client.force_login(staff)
    form = {"name": "Garden", "slug": "garden", "description": "", "chunker": "markdown", "chunk_size": 256,
            "chunk_overlap": 0, "semantic_threshold": 0.5, "contextualization": "header",
            "embedding_mode": "neighbours", "readers": user.username, "editors": ""}

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/corpus/collection/{garden.pk}/change/", form)

    assert response.status_code == 302, response.content.decode()[:3000]
    garden.refresh_from_db()
    document.refresh_from_db()
    assert garden.chunk_size == 256 and not garden.readers.exists()  # invited: shared once they accept
    assert list(garden.invitations.values_list("user__username", "role")) == [(user.username, "read")]
    assert document.built_signature == garden.pipeline_signature()  # re-ingested under the new settings


def test_delete_collections_action_confirms_then_removes_documents_and_files(
        admin_client, document, garden, django_capture_on_commit_callbacks):
    path = Path(document.file.path)
    selected = {"action": "delete_collections", "_selected_action": [garden.pk]}

    confirm = admin_client.post("/admin/corpus/collection/", selected)
    assert confirm.status_code == 200 and "this collection with its 1 document," in confirm.content.decode()
    assert Collection.objects.exists()

    with django_capture_on_commit_callbacks(execute=True):
        admin_client.post("/admin/corpus/collection/", selected | {"confirm": "yes"})
    assert not Collection.objects.exists() and not Document.objects.exists() and not path.exists()


def test_adding_a_collection_in_the_admin_makes_the_staff_user_the_owner(client, staff):
    client.force_login(staff)
    response = client.post("/admin/corpus/collection/add/", {
        "name": "Team", "slug": "team", "description": "", "chunker": "markdown", "chunk_size": 200,
        "chunk_overlap": 50, "semantic_threshold": 0.5, "contextualization": "header",
        "embedding_mode": "neighbours", "readers": "", "editors": ""})

    assert response.status_code == 302, response.content.decode()[:3000]
    assert Collection.objects.get(slug="team").owner == staff


def test_an_overlap_not_below_the_chunk_size_is_refused_in_the_admin(client, staff):
    client.force_login(staff)
    response = client.post("/admin/corpus/collection/add/", {
        "name": "Team", "slug": "team", "description": "", "chunker": "markdown", "chunk_size": 64,
        "chunk_overlap": 64, "semantic_threshold": 0.5, "contextualization": "header",
        "embedding_mode": "neighbours", "readers": "", "editors": ""})

    assert response.status_code == 200
    assert response.context["adminform"].form.errors == {
        "chunk_overlap": ["The overlap must be smaller than the chunk size."]}
    assert not Collection.objects.filter(slug="team").exists()


def test_the_sharing_fields_name_the_collections_users_not_every_account(client, staff, user, garden,
                                                                         django_user_model):
    django_user_model.objects.create_user(username="zelda-elsewhere")
    garden.owner = staff
    garden.save()
    garden.readers.add(user)
    client.force_login(staff)
    page = client.get(f"/admin/corpus/collection/{garden.pk}/change/").content.decode()
    assert re.search(r'<textarea name="readers"[^>]*>\s*alice</textarea>', page)
    assert "zelda-elsewhere" not in page
    refused = client.post(f"/admin/corpus/collection/{garden.pk}/change/", {
        "name": "Garden", "slug": "garden", "description": "", "chunker": "markdown", "chunk_size": 32,
        "chunk_overlap": 0, "semantic_threshold": 0.5, "contextualization": "header",
        "embedding_mode": "neighbours", "readers": "alice nobody", "editors": ""})
    assert refused.status_code == 200 and "is not someone you may share with" in refused.content.decode()


def test_progress_and_upload_skip_ids_that_are_not_plain_numbers(admin_client, document):
    data = admin_client.get(f"/admin/corpus/document/progress/?ids={document.pk},²,①,{'9' * 30}").json()
    assert [d["id"] for d in data["documents"]] == [document.pk]

    assert admin_client.get("/admin/corpus/document/add/?collection=²").status_code == 200


def test_action_messages_and_confirmations_say_document_or_documents(admin_client, document, garden,
                                                                     django_capture_on_commit_callbacks):
    other = ingest(garden, "other.md", GUIDE_V2, django_capture_on_commit_callbacks)
    one = admin_client.post("/admin/corpus/document/", {"action": "reingest_documents",
                                                        "_selected_action": [document.pk]}, follow=True)
    assert messages_of(one) == ["Queued 1 document for re-ingestion."]
    two = admin_client.post("/admin/corpus/document/", {"action": "reingest_documents",
                                                        "_selected_action": [document.pk, other.pk]}, follow=True)
    assert messages_of(two) == ["Queued 2 documents for re-ingestion."]
    asked = admin_client.post("/admin/corpus/document/", {"action": "delete_documents",
                                                          "_selected_action": [document.pk, other.pk]})
    assert "Delete these 2 documents with their chunks" in asked.content.decode()
    confirm = admin_client.post("/admin/corpus/collection/", {"action": "delete_collections",
                                                              "_selected_action": [garden.pk]}).content.decode()
    assert "Delete this collection with its 2 documents, chunks" in confirm and "(s)" not in confirm
