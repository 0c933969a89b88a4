"""The documents page and the collection pages: upload (per file), filters that survive actions,
collections created, edited, shared and deleted, all behind corpus.permissions."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus import uploads
from corpus.models import Collection, Document
from tests.corpus.ingest_helpers import GUIDE_V1, eager_media  # noqa: F401

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("eager_media")]


@pytest.fixture
def own_collection(user):
    return Collection.objects.create(slug="mine", name="Mine", owner=user)


@pytest.fixture
def foreign_collection(other_user):
    return Collection.objects.create(slug="theirs", name="Theirs", owner=other_user)


@pytest.fixture
def public_collection(other_user):
    return Collection.objects.create(slug="demo", name="Demo", owner=other_user, is_public=True)


def upload_select(page: str) -> str:
    """The upload form's collection <select>."""
    form = page[page.index('action="/documents/upload/'):]
    return form[form.index("<select"):form.index("</select>")]


def selected_options(select: str) -> list[str]:
    return [value for value in re.findall(r'<option value="([^"]*)"[^>]*selected', select) if value]


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_page_requires_login(client):
    response = client.get("/documents/")
    assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_an_empty_collection_says_it_has_no_documents_yet_and_a_search_says_none_match(client, user, own_collection):
    client.force_login(user)
    empty = client.get(f"/documents/?collection={own_collection.slug}").content.decode()
    assert f"No documents in {own_collection.name} yet." in empty and "No documents match." not in empty
    searched = client.get(f"/documents/?collection={own_collection.slug}&q=nothing").content.decode()
    assert "No documents match." in searched
    assert "No documents yet." in client.get("/documents/").content.decode()


def test_upload_ingests_into_a_writable_collection(client, user, own_collection, django_capture_on_commit_callbacks):
    client.force_login(user)
    upload = SimpleUploadedFile("notes.md", b"# Notes\n\nPostgres keeps the vectors.\n", content_type="text/markdown")
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/documents/upload/?collection=mine", {"collection": "mine", "files": [upload]})
    assert response.status_code == 302 and response["Location"] == "/documents/?collection=mine"
    document = Document.objects.get(collection=own_collection, source="notes.md")
    assert document.status == Document.Status.READY, document.error
    assert document.chunks.count() >= 1
    page = client.get("/documents/?collection=mine").content.decode()
    assert "notes.md" in page and "Ready" in page


def test_one_bad_file_does_not_block_the_others_and_each_is_reported_by_name(
        client, user, own_collection, django_capture_on_commit_callbacks):
    client.force_login(user)
    files = [SimpleUploadedFile("empty.txt", b""), SimpleUploadedFile("guide.md", GUIDE_V1),
             SimpleUploadedFile("notes.xyz", b"not a type we read")]

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/documents/upload/", {"collection": "mine", "files": files}, follow=True)

    assert messages_of(response) == [
        "Added to Mine (queued for ingestion): guide.md.",
        uploads.upload_error("empty.txt", 0),
        uploads.upload_error("notes.xyz", 18),
    ]
    assert "empty.txt: the file is empty." in response.content.decode()
    assert list(Document.objects.values_list("source", "status")) == [("guide.md", "ready")]


def test_a_200_character_non_ascii_name_is_accepted(client, user, own_collection, django_capture_on_commit_callbacks):
    client.force_login(user)
    name = ("Обзор садов и огородов " * 9)[:197] + ".md"
    assert len(name) == 200 and len(name.encode()) > 255

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/documents/upload/", {"collection": "mine", "files": [
            SimpleUploadedFile(name, GUIDE_V1)]})

    assert response.status_code == 302
    document = Document.objects.get()
    assert document.source == name and document.status == Document.Status.READY, document.error
    assert len(Path(document.file.path).name.encode()) <= 255 and document.file.name.endswith(".md")


def test_upload_into_someone_elses_collection_is_refused(client, user, own_collection, foreign_collection):
    client.force_login(user)
    upload = SimpleUploadedFile("x.txt", b"hello", content_type="text/plain")
    response = client.post("/documents/upload/", {"collection": "theirs", "files": [upload]}, follow=True)
    assert not Document.objects.exists()
    assert messages_of(response) == ["Choose a collection you may add to."]


def test_upload_without_a_collection_asks_for_one(client, user, own_collection):
    client.force_login(user)
    response = client.post("/documents/upload/", {"files": [SimpleUploadedFile("x.txt", b"hello")]}, follow=True)
    assert messages_of(response) == ["This field is required."]
    assert not Document.objects.exists()


def test_upload_form_defaults_to_the_collection_being_viewed(client, user, own_collection, other_user):
    team = Collection.objects.create(slug="team", name="Team", owner=other_user)
    team.editors.add(user)
    client.force_login(user)

    assert selected_options(upload_select(client.get("/documents/?collection=team").content.decode())) == ["team"]
    assert selected_options(upload_select(client.get("/documents/?collection=mine").content.decode())) == ["mine"]


def test_with_several_writable_and_none_viewed_the_user_must_choose(client, user, own_collection, other_user):
    client.force_login(user)
    # only one writable collection: it is the obvious choice
    assert selected_options(upload_select(client.get("/documents/").content.decode())) == ["mine"]

    Collection.objects.create(slug="aaa", name="Aaa", owner=user)
    select = upload_select(client.get("/documents/").content.decode())
    assert selected_options(select) == []
    assert select.index('<option value="" selected>Choose a collection…') < select.index('value="aaa"')
    assert "required" in select


def test_viewing_a_readable_collection_never_defaults_the_upload_to_another(
        client, user, own_collection, public_collection, django_user_model):
    client.force_login(user)
    page = client.get("/documents/?collection=demo").content.decode()
    assert selected_options(upload_select(page)) == []
    assert "You may read Demo but not add to it" in page

    # a superuser may write everywhere, yet viewing nothing in particular picks nothing
    root = django_user_model.objects.create_superuser(username="root", password="root-password-1")
    Collection.objects.create(slug="aaa-private", name="Aaa private", owner=user)
    client.force_login(root)
    assert selected_options(upload_select(client.get("/documents/").content.decode())) == []
    assert selected_options(upload_select(client.get("/documents/?collection=demo").content.decode())) == ["demo"]


def test_an_unreadable_collection_is_not_found(client, user, foreign_collection):
    client.force_login(user)
    assert client.get("/documents/?collection=theirs").status_code == 404


def test_list_shows_only_readable_documents(client, user, own_collection, foreign_collection):
    Document.objects.create(collection=own_collection, source="a.txt", title="Visible doc")
    Document.objects.create(collection=foreign_collection, source="b.txt", title="Hidden doc")
    client.force_login(user)
    page = client.get("/documents/").content.decode()
    assert "Visible doc" in page and "Hidden doc" not in page


def test_status_and_search_filters(client, user, own_collection, public_collection):
    Document.objects.create(collection=own_collection, source="garden.md", title="Garden guide", status="ready")
    Document.objects.create(collection=own_collection, source="pests.md", title="Pests", status="failed",
                            error="Could not read it")
    Document.objects.create(collection=public_collection, source="demo/garden-plan.md", title="Plan",
                            status="ready")
    client.force_login(user)

    def titles(query):
        response = client.get(f"/documents/?{query}")
        return [d.title for d in response.context["documents"]]

    assert titles("status=failed") == ["Pests"]
    assert titles("q=garden") == ["Plan", "Garden guide"]
    assert titles("q=garden&collection=mine") == ["Garden guide"]
    assert titles("q=garden&status=failed") == []
    assert titles("status=nonsense") == ["Plan", "Pests", "Garden guide"]  # a bad filter is dropped


def test_htmx_request_gets_the_table_partial_that_polls_with_the_same_filters(client, user, own_collection):
    Document.objects.create(collection=own_collection, source="a.txt", title="Busy", status="embedding",
                            progress_done=3, progress_total=10)
    client.force_login(user)
    response = client.get("/documents/?collection=mine&status=embedding&q=busy", headers={"HX-Request": "true"})
    body = response.content.decode()
    assert body.lstrip().startswith('<div id="document-table"')
    assert 'hx-get="/documents/?collection=mine&amp;status=embedding&amp;q=busy"' in body
    assert 'hx-trigger="every 2s"' in body
    assert "3/10" in body and "<html" not in body


def test_reingest_and_delete_return_to_the_same_filters(client, user, own_collection,
                                                        django_capture_on_commit_callbacks):
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/documents/upload/", {"collection": "mine", "files": [
            SimpleUploadedFile("guide.md", GUIDE_V1), SimpleUploadedFile("other.md", GUIDE_V1)]})
    guide, other = Document.objects.order_by("source")
    query = "collection=mine&status=ready&q=guide"
    page = client.get(f"/documents/?{query}").content.decode()
    assert f'action="/documents/{guide.pk}/reingest/?{query.replace("&", "&amp;")}"' in page

    with django_capture_on_commit_callbacks(execute=True):
        reingest = client.post(f"/documents/{guide.pk}/reingest/?{query}")
    delete = client.post(f"/documents/{other.pk}/delete/?{query}", headers={"HX-Request": "true"})

    assert reingest.status_code == delete.status_code == 302
    assert reingest["Location"] == delete["Location"] == f"/documents/?{query}"
    assert list(Document.objects.values_list("source", flat=True)) == ["guide.md"]


def test_cannot_delete_or_reingest_a_document_of_another_user(client, user, foreign_collection):
    document = Document.objects.create(collection=foreign_collection, source="b.txt", title="Theirs")
    client.force_login(user)
    assert client.post(f"/documents/{document.pk}/delete/").status_code == 404
    assert client.post(f"/documents/{document.pk}/reingest/").status_code == 404
    assert Document.objects.filter(pk=document.pk).exists()


def test_reader_of_a_public_collection_cannot_delete(client, user, public_collection):
    document = Document.objects.create(collection=public_collection, source="p.txt", title="Shared")
    client.force_login(user)
    page = client.get("/documents/").content.decode()
    assert "Shared" in page and f"/documents/{document.pk}/delete/" not in page
    assert client.post(f"/documents/{document.pk}/delete/").status_code == 403
    assert Document.objects.filter(pk=document.pk).exists()


# Collections -------------------------------------------------------------------------------------

NEW = {"name": "Team Handbook", "slug": "", "description": "", "chunker": "markdown", "chunk_size": 200,
       "chunk_overlap": 50, "contextualization": "header", "embedding_mode": "neighbours"}


def test_create_collection_makes_user_the_owner_and_derives_the_slug(client, user):
    client.force_login(user)
    response = client.post("/documents/collections/new/", NEW)
    assert response.status_code == 302 and response["Location"] == "/documents/?collection=team-handbook"
    collection = Collection.objects.get(slug="team-handbook")
    assert collection.owner == user and collection.name == "Team Handbook"


def test_the_new_collection_form_fills_the_slug_from_the_name_in_the_browser(client, user):
    client.force_login(user)
    page = client.get("/documents/").content.decode()
    assert 'data-slug-source="id_slug"' in page and "/static/corpus/collection-form.js" in page
    script = client.get("/static/corpus/collection-form.js")
    assert script.status_code == 200 and b"slugify" in b"".join(script.streaming_content)


NO_LLM_HELP = "No LLM is configured: the two LLM options use the contextual chunk header until one is."


def test_the_collection_form_says_the_llm_options_need_an_llm(client, user, settings, monkeypatch):
    from corpus import llm

    client.force_login(user)
    monkeypatch.setattr(llm, "stored_config", lambda: llm.NONE)
    settings.LLM_BASE_URL, settings.LLM_MODEL = "", ""
    assert NO_LLM_HELP in client.get("/documents/").content.decode()
    settings.LLM_BASE_URL, settings.LLM_MODEL = "http://127.0.0.1:9/v1", "some-model"
    assert NO_LLM_HELP not in client.get("/documents/").content.decode()


def test_a_refused_collection_keeps_what_was_typed(client, user, own_collection):
    client.force_login(user)
    response = client.post("/documents/collections/new/", NEW | {
        "name": "My precious notes", "slug": "mine", "description": "Typed with care", "chunk_size": 300})

    assert response.status_code == 400
    form = response.context["form"]
    assert list(form.errors) == ["slug"]
    page = response.content.decode()
    assert 'value="My precious notes"' in page and "Typed with care" in page and 'value="300"' in page
    assert 'value="mine"' in page
    assert Collection.objects.count() == 1


def test_owner_edits_the_collection(client, user, own_collection):
    client.force_login(user)
    assert client.get("/documents/?collection=mine").content.decode().count("/documents/collections/mine/edit/")
    response = client.post("/documents/collections/mine/edit/", NEW | {"name": "Mine, renamed", "slug": "mine-2",
                                                                       "description": "New words"})
    assert response.status_code == 302 and response["Location"] == "/documents/collections/mine-2/edit/"
    own_collection.refresh_from_db()
    assert (own_collection.name, own_collection.slug, own_collection.description) == (
        "Mine, renamed", "mine-2", "New words")

    bad = client.post("/documents/collections/mine-2/edit/", NEW | {"name": "Kept?", "slug": "mine-2",
                                                                     "chunk_size": 10})
    assert bad.status_code == 400 and "Kept?" in bad.content.decode()
    own_collection.refresh_from_db()
    assert own_collection.name == "Mine, renamed"


def test_owner_shares_by_username(client, user, other_user, own_collection, django_user_model):
    django_user_model.objects.create_user(username="carol")
    client.force_login(user)

    response = client.post("/documents/collections/mine/share/", {"readers": "bob, carol", "editors": "carol"})
    assert response.status_code == 302
    # Both are new: invited (carol, listed twice, to edit); nothing is shared before they accept.
    assert not own_collection.readers.exists() and not own_collection.editors.exists()
    invited = set(own_collection.invitations.values_list("user__username", "role"))
    assert invited == {("bob", "read"), ("carol", "write")}
    page = client.get("/documents/collections/mine/edit/").content.decode()
    assert "bob</textarea>" in page and "carol</textarea>" in page and "bob (read)" in page

    unknown = client.post("/documents/collections/mine/share/", {"readers": "bob nobody", "editors": ""})
    assert unknown.status_code == 400 and "is not someone you may share with" in unknown.content.decode()
    assert set(own_collection.invitations.values_list("user__username", "role")) == invited  # nothing changed


def test_delete_asks_for_confirmation_then_deletes(client, user, own_collection, django_capture_on_commit_callbacks):
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/documents/upload/", {"collection": "mine", "files": [SimpleUploadedFile("guide.md", GUIDE_V1)]})
    path = Path(Document.objects.get().file.path)

    confirm = client.get("/documents/collections/mine/delete/")
    assert confirm.status_code == 200 and "its 1 document, its chunks and its stored file." in confirm.content.decode()
    assert Collection.objects.filter(slug="mine").exists()

    with django_capture_on_commit_callbacks(execute=True):
        response = client.post("/documents/collections/mine/delete/")
    assert response.status_code == 302 and response["Location"] == "/documents/"
    assert not Collection.objects.exists() and not Document.objects.exists() and not path.exists()


def test_the_page_lists_collections_with_what_the_user_may_do(client, user, own_collection, public_collection,
                                                               foreign_collection, other_user):
    team = Collection.objects.create(slug="team", name="Team", owner=other_user)
    team.editors.add(user)
    client.force_login(user)
    page = client.get("/documents/").content.decode()
    table = page[page.index('<table class="documents collections">'):]
    rows = re.findall(r'\?collection=([\w-]+)">[^<]*</a>.*?<td[^>]*>([^<]*)</td>\s*<td[^>]*>(.*?)</td>', table,
                      re.S)
    assert rows == [("demo", "read", ""), ("mine", "manage", '<a href="/documents/collections/mine/edit/">Settings '
                                                          'and sharing</a>'), ("team", "add and change documents", "")]


def test_an_editor_changes_documents_but_not_the_collection(client, user, other_user, foreign_collection,
                                                             django_capture_on_commit_callbacks):
    foreign_collection.editors.add(user)
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/documents/upload/", {"collection": "theirs", "files": [SimpleUploadedFile("g.md", GUIDE_V1)]})
    document = Document.objects.get(collection=foreign_collection)
    page = client.get("/documents/?collection=theirs").content.decode()
    assert f"/documents/{document.pk}/delete/" in page and "/collections/theirs/edit/" not in page

    assert client.get("/documents/collections/theirs/edit/").status_code == 403
    assert client.post("/documents/collections/theirs/share/", {"readers": "alice", "editors": ""}).status_code == 403
    assert client.post("/documents/collections/theirs/delete/").status_code == 403
    assert client.post(f"/documents/{document.pk}/reingest/").status_code == 302
    assert client.post(f"/documents/{document.pk}/delete/").status_code == 302
    assert Collection.objects.filter(slug="theirs").exists() and not foreign_collection.readers.exists()


def test_strangers_and_readers_cannot_manage(client, user, foreign_collection, public_collection):
    client.force_login(user)
    for url in ("/documents/collections/theirs/edit/", "/documents/collections/theirs/delete/"):
        assert client.get(url).status_code == 404
    assert client.get("/documents/collections/demo/edit/").status_code == 403
    assert client.post("/documents/collections/demo/delete/").status_code == 403
    assert Collection.objects.count() == 2


def test_an_overlap_not_below_the_chunk_size_is_refused_on_its_field(client, user):
    client.force_login(user)
    response = client.post("/documents/collections/new/", NEW | {"chunk_size": 100, "chunk_overlap": 100})
    assert response.status_code == 400
    assert response.context["form"].errors == {"chunk_overlap": ["The overlap must be smaller than the chunk size."]}
    assert not Collection.objects.filter(name="Team Handbook").exists()


def test_only_staff_make_a_collection_public(client, user, own_collection, django_user_model):
    client.force_login(user)
    page = client.get("/documents/collections/mine/edit/").content.decode()
    assert 'name="is_public"' in page and "Only staff may make a collection public" in page
    client.post("/documents/collections/mine/edit/", NEW | {"name": "Mine", "slug": "mine", "is_public": "on"})
    client.post("/documents/collections/new/", NEW | {"name": "Loud", "slug": "loud", "is_public": "on"})
    assert list(Collection.objects.filter(is_public=True)) == []

    staff = django_user_model.objects.create_user(username="staffer", is_staff=True)
    client.force_login(staff)
    client.post("/documents/collections/new/", NEW | {"name": "Notice board", "slug": "board", "is_public": "on"})
    assert list(Collection.objects.filter(is_public=True).values_list("slug", flat=True)) == ["board"]
