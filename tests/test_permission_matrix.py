"""The permission matrix: every role × every surface × every action, in one parametrised test.

The collection `team` is owned by the owner, read by the reader and edited by the editor, read
by the group `readers` (of which the group reader is a member) and edited by the group `editors`
(the group editor); it holds one document. What the issue requires:
- read (list, read, search, ask): reader, editor, group reader, group editor, owner, superuser;
- write (upload, move, delete, re-ingest its documents): editor, group editor, owner, superuser;
- manage (change, share, delete the collection): owner, superuser; adding a group one is not in:
  the superuser only (sharing with a group needs its consent: one of its members shares);
- a share invitation: only the person invited sees and answers it; until they accept they reach
  nothing (the invitee), after declining nothing (the declined invitee), after accepting what an
  editor reaches (the accepted invitee);
- own records (the owner's conversations and ratings, in the chat admin): owner, superuser;
- anyone else can do none of it, and learns nothing: a refusal is 404 for someone who may not
  read the collection, 403 for a reader asking to write, 401 (API) or the login page (web) when
  signed out.

Each action below performs a real request and returns whether it took effect; a refused action
must also have left no trace. Every named user is staff, so the admin rows test the per-object
rules rather than the door. Add a row by adding an Action to ACTIONS.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import Group, Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from chat.models import Conversation, Feedback, Message
from corpus import services, sharing
from corpus.ingest.embed import embed_texts
from corpus.models import Collection, Document
from tests.chat.chat_corpus import GUIDE, make_collection

pytestmark = pytest.mark.django_db

ROLES = ["anonymous", "stranger", "invitee", "declined invitee", "accepted invitee", "reader", "editor",
         "group reader", "group editor", "owner", "superuser"]
READ, WRITE, MANAGE, OWN, INVITED = "read", "write", "manage", "own records", "invited"
ANY_GROUP = "share with a group one is not in"
# The invitee has been invited by the owner to edit `team` and has not answered: until they
# accept, they reach nothing of it (sharing needs consent, corpus.sharing); only they may answer.
# The declined invitee said no (nothing of it reaches them, like a stranger); the accepted invitee
# said yes and is an editor like any other. A group may be added only by its members, and no one
# but the superuser is in `outsiders`.
ALLOWED = {READ: {"reader", "editor", "accepted invitee", "group reader", "group editor", "owner", "superuser"},
           WRITE: {"editor", "accepted invitee", "group editor", "owner", "superuser"},
           MANAGE: {"owner", "superuser"}, OWN: {"owner", "superuser"}, INVITED: {"invitee"},
           ANY_GROUP: {"superuser"}}
QUESTION = "What is the default request timeout?"


@dataclass
class World:
    role: str
    user: object | None
    web: Client
    api: APIClient
    team: Collection
    doc: Document
    own: Collection | None  # a collection the actor may write to (a move target)
    stranger: object

    def refusal(self, *, web: bool = False) -> set[int]:
        """The statuses a refused request may have for this role."""
        if self.user is None:
            return {302} if web else {401}
        return {403} if self.role in ALLOWED[READ] else {404}

    def doc_exists(self) -> bool:
        return Document.objects.filter(pk=self.doc.pk).exists()

    def stranger_invited(self) -> bool:
        """Whether sharing `team` with the stranger took effect: an invitation waiting for them
        (sharing with someone new needs their consent), and nothing shared before they accept."""
        invited = self.team.invitations.filter(user=self.stranger, role="read").exists()
        assert not self.team.readers.filter(pk=self.stranger.pk).exists()
        return invited

    def doc_in(self, collection: Collection) -> bool:
        return Document.objects.filter(pk=self.doc.pk, collection=collection).exists()


def refused_or_ok(world: World, response, ok: int | set[int], *, web: bool = False) -> bool:
    """True if the response is the success `ok`; else it must be the role's refusal."""
    ok = {ok} if isinstance(ok, int) else ok
    if response.status_code in ok:
        return True
    assert response.status_code in world.refusal(web=web), (response.status_code, response.content[:300])
    return False


@dataclass(frozen=True)
class Action:
    surface: str
    name: str
    level: str
    run: Callable[[World], bool]

    def __str__(self) -> str:
        return f"{self.surface}: {self.name}"


# --- chat -------------------------------------------------------------------------------------------

def chat_picker(w: World) -> bool:
    response = w.web.get("/")
    if response.status_code == 302:
        return False
    return 'value="team"' in response.content.decode()


def chat_ask(w: World) -> bool:
    response = w.web.post("/ask/", {"question": QUESTION, "collection": "team"})
    if w.user is None:
        assert response.status_code == 302 and "/login/" in response["Location"]
        return False
    reply = Message.objects.filter(conversation__user=w.user, role=Message.Role.ASSISTANT).order_by("pk").last()
    if reply is not None and reply.status == Message.Status.COMPLETE:
        assert {c["document"]["id"] for c in reply.citations} == {w.doc.pk}
        return True
    # Refused before anything is asked: the page again with the reason, nothing stored.
    assert reply is None and response.status_code == 400
    assert "No collection &#x27;team&#x27; that you may read." in response.content.decode()
    return False


def chat_passage(w: World) -> bool:
    if w.user is None:
        return refused_or_ok(w, w.web.get("/messages/1/sources/1/"), 200, web=True)
    conversation = Conversation.objects.create(user=w.user, title="earlier")
    citation = {"n": 1, "document": {"id": w.doc.pk, "title": w.doc.title, "source": w.doc.source}, "start": 2,
                "end": 3, "char_start": None, "char_end": None, "text": GUIDE[2], "score": 1.0, "page": None}
    message = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, content="See [1].",
                                     citations=[citation], query="timeout", status=Message.Status.COMPLETE)
    response = w.web.get(f"/messages/{message.pk}/sources/1/")
    if response.status_code == 200:
        assert "thirty seconds" in response.content.decode()
        return True
    assert response.status_code == 404
    return False


def _rated_answer(w: World, citation_text: str) -> Message:
    """An answer of the actor's (from when they could read `team`) citing its document, rated down."""
    conversation = Conversation.objects.create(user=w.user, title="earlier")
    citation = {"n": 1, "document": {"id": w.doc.pk, "title": w.doc.title, "source": w.doc.source}, "start": 2,
                "end": 3, "char_start": None, "char_end": None, "text": citation_text, "score": 1.0, "page": None}
    message = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT, content="See [1].",
                                     citations=[citation], query="timeout", status=Message.Status.COMPLETE)
    w.web.post(f"/messages/{message.pk}/feedback/", {"rating": "down"})
    return message


def chat_rating_evidence(w: World) -> bool:
    """Evidence outside the cited passage is checked against the document only for its readers."""
    if w.user is None:
        return refused_or_ok(w, w.web.post("/messages/1/feedback/", {"rating": "down"}), 200, web=True)
    message = _rated_answer(w, "A passage about something else.")
    w.web.post(f"/messages/{message.pk}/feedback/", {"rating": "down", "details": "1", "source": "1",
                                                     "evidence": "Logs are written to standard output"})
    return Feedback.objects.get(message=message).evidence == ["Logs are written to standard output"]


def chat_rating_names_document(w: World) -> bool:
    if w.user is None:
        return refused_or_ok(w, w.web.post("/messages/1/feedback/", {"rating": "down"}), 200, web=True)
    message = _rated_answer(w, GUIDE[2])
    w.web.post(f"/messages/{message.pk}/feedback/", {"rating": "down", "details": "1", "source": "other",
                                                     "document": str(w.doc.pk), "evidence": "thirty seconds"})
    return Feedback.objects.get(message=message).source == w.doc.source


# --- the documents page -----------------------------------------------------------------------------

def page_list(w: World) -> bool:
    response = w.web.get("/documents/", {"collection": "team"})
    if refused_or_ok(w, response, 200, web=True):
        assert w.doc.title in response.content.decode()
        return True
    everything = w.web.get("/documents/")
    assert everything.status_code == 302 or w.doc.title not in everything.content.decode()
    return False


def page_upload(w: World) -> bool:
    response = w.web.post("/documents/upload/", {"collection": "team",
                                                 "files": [SimpleUploadedFile("new.md", b"# New\n\nText.")]})
    created = Document.objects.filter(collection=w.team, source="new.md").exists()
    assert response.status_code == 302
    return created


def page_reingest(w: World) -> bool:
    response = w.web.post(f"/documents/{w.doc.pk}/reingest/")
    done = Document.objects.get(pk=w.doc.pk).status == Document.Status.QUEUED
    assert done == refused_or_ok(w, response, 302, web=True) or w.user is None
    return done


def page_delete(w: World) -> bool:
    response = w.web.post(f"/documents/{w.doc.pk}/delete/")
    assert refused_or_ok(w, response, 302, web=True) == (not w.doc_exists()) or w.user is None
    return not w.doc_exists()


def _collection_form(name: str) -> dict:
    return {"name": name, "slug": "team", "description": "", "chunker": "markdown", "chunk_size": 200,
            "chunk_overlap": 50, "contextualization": "header", "embedding_mode": "neighbours"}


def page_edit_collection(w: World) -> bool:
    response = w.web.post("/documents/collections/team/edit/", _collection_form("Renamed"))
    renamed = Collection.objects.get(pk=w.team.pk).name == "Renamed"
    assert renamed == refused_or_ok(w, response, 302, web=True) or w.user is None
    return renamed


def page_share(w: World) -> bool:
    response = w.web.post("/documents/collections/team/share/", {"readers": "rita sam", "editors": "eddie"})
    shared = w.stranger_invited()
    assert shared == refused_or_ok(w, response, 302, web=True) or w.user is None
    return shared


def page_delete_collection(w: World) -> bool:
    response = w.web.post("/documents/collections/team/delete/")
    gone = not Collection.objects.filter(pk=w.team.pk).exists()
    assert gone == refused_or_ok(w, response, 302, web=True) or w.user is None
    return gone


# --- the admin ----------------------------------------------------------------------------------------

DOCUMENTS_ADMIN = "/admin/corpus/document/"


def admin_changelist(w: World) -> bool:
    response = w.web.get(DOCUMENTS_ADMIN)
    return response.status_code == 200 and f"/admin/corpus/document/{w.doc.pk}/change/" in response.content.decode()


def admin_change_page(w: World) -> bool:
    response = w.web.get(f"{DOCUMENTS_ADMIN}{w.doc.pk}/change/")
    return response.status_code == 200 and w.doc.source in response.content.decode()


def admin_chunks(w: World) -> bool:
    response = w.web.get(f"{DOCUMENTS_ADMIN}{w.doc.pk}/chunks/")
    if response.status_code == 200:
        assert "thirty seconds" in response.content.decode()
        return True
    assert response.status_code in {302, 403, 404}
    return False


def admin_upload(w: World) -> bool:
    w.web.post(f"{DOCUMENTS_ADMIN}add/", {"collection": w.team.pk,
                                          "files": [SimpleUploadedFile("new.md", b"# New\n\nText.")]})
    return Document.objects.filter(collection=w.team, source="new.md").exists()


def _admin_action(w: World, action: str, **extra) -> None:
    w.web.post(DOCUMENTS_ADMIN, {"action": action, "_selected_action": [w.doc.pk], **extra})


def admin_reingest(w: World) -> bool:
    _admin_action(w, "reingest_documents")
    return Document.objects.get(pk=w.doc.pk).status == Document.Status.QUEUED


def _move_audited(w: World) -> bool:
    """Whether the document's move out of `team` is in the audit trail, by the actor, from and to."""
    from audit.models import Action, AuditEvent

    return AuditEvent.objects.filter(action=Action.DOCUMENT_MOVED, target_id=str(w.doc.pk), actor=w.user,
                                     detail__from="team").exists()


def admin_move(w: World) -> bool:
    _admin_action(w, "move_documents", apply="1", target=w.own.pk if w.own else "")
    moved = w.own is not None and w.doc_in(w.own)
    assert moved == _move_audited(w)
    return moved


def admin_delete(w: World) -> bool:
    _admin_action(w, "delete_documents", confirm="yes")
    return not w.doc_exists()


def admin_share(w: World) -> bool:
    data = {**_collection_form("Renamed"), "owner": w.team.owner_id, "semantic_threshold": 0.5,
            "readers": w.stranger.username, "editors": " ".join(w.team.editors.values_list("username", flat=True)),
            "reader_groups": "readers", "editor_groups": "editors"}
    w.web.post(f"/admin/corpus/collection/{w.team.pk}/change/", data)
    shared = w.stranger_invited()
    assert shared == (Collection.objects.get(pk=w.team.pk).name == "Renamed")
    return shared


def admin_delete_collection(w: World) -> bool:
    w.web.post("/admin/corpus/collection/", {"action": "delete_collections", "_selected_action": [w.team.pk],
                                             "confirm": "yes"})
    return not Collection.objects.filter(pk=w.team.pk).exists()


# --- REST API -----------------------------------------------------------------------------------------

def api_list_collections(w: World) -> bool:
    response = w.api.get("/api/collections/")
    if not refused_or_ok(w, response, 200):
        return False
    return "team" in {c["slug"] for c in response.json()["results"]}


def api_read_collection(w: World) -> bool:
    return refused_or_ok(w, w.api.get("/api/collections/team/"), 200)


def api_list_documents(w: World) -> bool:
    everything = w.api.get("/api/documents/")
    listed = everything.status_code == 200 and w.doc.pk in {d["id"] for d in everything.json()["results"]}
    filtered = refused_or_ok(w, w.api.get("/api/documents/", {"collection": "team"}), 200)
    assert listed == filtered
    return listed


def api_read_document(w: World) -> bool:
    return refused_or_ok(w, w.api.get(f"/api/documents/{w.doc.pk}/"), 200)


def api_read_chunks(w: World) -> bool:
    return refused_or_ok(w, w.api.get(f"/api/documents/{w.doc.pk}/chunks/"), 200)


def api_search(w: World) -> bool:
    response = w.api.post("/api/search/", {"query": QUESTION, "collection": "team"}, format="json")
    if refused_or_ok(w, response, 200):
        assert {c["document"]["id"] for c in response.json()["chunks"]} == {w.doc.pk}
        return True
    return False


def api_search_everything(w: World) -> bool:
    response = w.api.post("/api/search/", {"query": QUESTION}, format="json")
    if not refused_or_ok(w, response, 200):
        return False
    return w.doc.pk in {c["document"]["id"] for c in response.json()["chunks"]}


def api_ask(w: World) -> bool:
    response = w.api.post("/api/ask/", {"question": QUESTION, "collection": "team"}, format="json")
    if refused_or_ok(w, response, 200):
        assert {c["document"]["id"] for c in response.json()["citations"]} == {w.doc.pk}
        return True
    return False


def api_upload(w: World) -> bool:
    response = w.api.post("/api/documents/", {"collection": "team", "files": [
        SimpleUploadedFile("new.md", b"# New\n\nText.")]}, format="multipart")
    created = Document.objects.filter(collection=w.team, source="new.md").exists()
    assert refused_or_ok(w, response, 201) == created
    return created


def api_move(w: World) -> bool:
    target = w.own.slug if w.own else "team"
    response = w.api.post(f"/api/documents/{w.doc.pk}/move/", {"collection": target}, format="json")
    moved = w.own is not None and w.doc_in(w.own)
    assert refused_or_ok(w, response, 200) == moved == _move_audited(w)
    return moved


def api_move_by_patch(w: World) -> bool:
    target = w.own.slug if w.own else "team"
    response = w.api.patch(f"/api/documents/{w.doc.pk}/", {"collection": target}, format="json")
    moved = w.own is not None and w.doc_in(w.own)
    assert refused_or_ok(w, response, 200) == moved == _move_audited(w)
    return moved


def api_move_in(w: World) -> bool:
    """Moving one of the actor's own documents into `team` takes write access to `team`."""
    if w.own is None:
        return refused_or_ok(w, w.api.post("/api/documents/1/move/", {"collection": "team"}, format="json"), 200)
    note = Document.objects.create(collection=w.own, source="note.md", title="Note")
    response = w.api.post(f"/api/documents/{note.pk}/move/", {"collection": "team"}, format="json")
    moved = Document.objects.filter(pk=note.pk, collection=w.team).exists()
    assert refused_or_ok(w, response, 200) == moved
    return moved


def api_delete(w: World) -> bool:
    response = w.api.delete(f"/api/documents/{w.doc.pk}/")
    assert refused_or_ok(w, response, 204) == (not w.doc_exists())
    return not w.doc_exists()


def api_reingest(w: World) -> bool:
    response = w.api.post(f"/api/documents/{w.doc.pk}/reingest/", {"force": True}, format="json")
    queued = Document.objects.get(pk=w.doc.pk).status == Document.Status.QUEUED
    assert refused_or_ok(w, response, 202) == queued
    return queued


def api_change_collection(w: World) -> bool:
    response = w.api.patch("/api/collections/team/", {"name": "Renamed"}, format="json")
    renamed = Collection.objects.get(pk=w.team.pk).name == "Renamed"
    assert refused_or_ok(w, response, 200) == renamed
    return renamed


def api_share(w: World) -> bool:
    response = w.api.patch("/api/collections/team/", {"readers": ["rita", "sam"]}, format="json")
    shared = w.stranger_invited()
    assert refused_or_ok(w, response, 200) == shared
    return shared


def _outsiders_shared(w: World) -> bool:
    return w.team.reader_groups.filter(name="outsiders").exists()


def api_share_with_outside_group(w: World) -> bool:
    """Adding a group one is not in is refused even to the owner (400 naming the field)."""
    response = w.api.patch("/api/collections/team/", {"reader_groups": ["readers", "outsiders"]}, format="json")
    shared = _outsiders_shared(w)
    if w.role in ALLOWED[MANAGE] and not shared:
        assert response.status_code == 400 and "groups you belong to" in response.json()["reader_groups"][0]
    else:
        assert refused_or_ok(w, response, 200) == shared
    return shared


def page_share_with_outside_group(w: World) -> bool:
    response = w.web.post("/documents/collections/team/share/", {"readers": "rita", "editors": "eddie ivy abe",
                                                                 "reader_groups": "readers, outsiders",
                                                                 "editor_groups": "editors"})
    shared = _outsiders_shared(w)
    if w.role in ALLOWED[MANAGE] and not shared:
        assert response.status_code == 400
        assert "You may share only with groups you belong to" in response.content.decode()
    elif w.user is not None:
        assert refused_or_ok(w, response, 302, web=True) == shared
    return shared


def api_delete_collection(w: World) -> bool:
    response = w.api.delete("/api/collections/team/")
    gone = not Collection.objects.filter(pk=w.team.pk).exists()
    assert refused_or_ok(w, response, 204) == gone
    return gone


def admin_owner_conversation(w: World) -> bool:
    """The owner's conversation about `team`, its messages and its rating, in the chat admin."""
    owner = w.team.owner
    conversation = Conversation.objects.create(user=owner, title="Olivia asks", collection=w.team)
    message = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT,
                                     content="thirty seconds [1].", status=Message.Status.COMPLETE)
    rating = Feedback.objects.create(message=message, user=owner, rating="up", question="Olivia's question")
    pages = [w.web.get(f"/admin/chat/conversation/{conversation.pk}/change/"),
             w.web.get(f"/admin/chat/message/{message.pk}/change/"),
             w.web.get(f"/admin/chat/feedback/{rating.pk}/change/")]
    shown = [page.status_code == 200 for page in pages]
    lists = [w.web.get(f"/admin/chat/{name}/").content.decode() for name in ("conversation", "feedback")]
    listed = ["Olivia asks" in lists[0], "Olivia&#x27;s question" in lists[1]]
    assert len(set(shown + listed)) == 1, (shown, listed)
    return shown[0]


# --- sources (the collection's sources page, the admin, REST) ----------------------------------------

SOURCE_URL = "https://docs.example.org/team-guide/"


def _source(w: World):
    from sources.models import Source

    return Source.objects.get_or_create(collection=w.team, kind="url", url=SOURCE_URL,
                                        defaults={"schedule": "none"})[0]


def _source_exists(pk: int) -> bool:
    from sources.models import Source

    return Source.objects.filter(pk=pk).exists()


def _source_state(pk: int) -> str:
    from sources.models import Source

    return Source.objects.get(pk=pk).state


def sources_page(w: World) -> bool:
    _source(w)
    response = w.web.get("/sources/team/")
    if response.status_code == 200:
        assert SOURCE_URL in response.content.decode()
        return True
    assert response.status_code in w.refusal(web=True)
    return False


def sources_page_add(w: World) -> bool:
    from sources.models import Source

    response = w.web.post("/sources/team/add/", {"kind": "url", "url": "https://docs.example.org/new/",
                                                 "schedule": "none", "max_pages": 10, "max_depth": 1})
    added = Source.objects.filter(url="https://docs.example.org/new/").exists()
    assert refused_or_ok(w, response, 302, web=True) == added or w.user is None
    return added


def sources_page_sync(w: World) -> bool:
    source = _source(w)
    response = w.web.post(f"/sources/source/{source.pk}/sync/")
    queued = _source_state(source.pk) == "queued"
    assert refused_or_ok(w, response, 302, web=True) == queued or w.user is None
    return queued


def sources_page_delete(w: World) -> bool:
    source = _source(w)
    response = w.web.post(f"/sources/source/{source.pk}/delete/")
    assert refused_or_ok(w, response, 302, web=True) == (not _source_exists(source.pk)) or w.user is None
    return not _source_exists(source.pk)


def admin_sources(w: World) -> bool:
    source = _source(w)
    response = w.web.get("/admin/sources/source/")
    return response.status_code == 200 and f"/admin/sources/source/{source.pk}/change/" in response.content.decode()


def admin_sources_sync(w: World) -> bool:
    source = _source(w)
    w.web.post("/admin/sources/source/", {"action": "sync_now", "_selected_action": [source.pk]})
    return _source_state(source.pk) == "queued"


def api_list_sources(w: World) -> bool:
    source = _source(w)
    response = w.api.get("/api/sources/")
    if not refused_or_ok(w, response, 200):
        return False
    return source.pk in [s["id"] for s in response.json()["results"]]


def api_read_source(w: World) -> bool:
    source = _source(w)
    return refused_or_ok(w, w.api.get(f"/api/sources/{source.pk}/"), 200)


def api_add_source(w: World) -> bool:
    from sources.models import Source

    response = w.api.post("/api/sources/", {"collection": "team", "kind": "url", "url": "https://docs.example.org/n/",
                                            "schedule": "none"}, format="json")
    added = Source.objects.filter(url="https://docs.example.org/n/").exists()
    assert refused_or_ok(w, response, 201) == added
    return added


def api_change_source(w: World) -> bool:
    source = _source(w)
    response = w.api.patch(f"/api/sources/{source.pk}/", {"schedule": "weekly"}, format="json")
    from sources.models import Source

    changed = Source.objects.get(pk=source.pk).schedule == "weekly"
    assert refused_or_ok(w, response, 200) == changed
    return changed


def api_delete_source(w: World) -> bool:
    source = _source(w)
    response = w.api.delete(f"/api/sources/{source.pk}/")
    assert refused_or_ok(w, response, 204) == (not _source_exists(source.pk))
    return not _source_exists(source.pk)


def api_sync_source(w: World) -> bool:
    """POST /api/sources/{id}/sync/ queues the sync only for editors (202; the sync itself is
    tested in tests/sources)."""
    source = _source(w)
    response = w.api.post(f"/api/sources/{source.pk}/sync/")
    queued = _source_state(source.pk) == "queued"
    assert refused_or_ok(w, response, 202) == queued
    return queued


# --- the document passage view (links of MCP results) and MCP tools -----------------------------------

def page_document_passage(w: World) -> bool:
    start = len(GUIDE[0]) + len(GUIDE[1])
    response = w.web.get(f"/passages/{w.doc.pk}/?start={start}&end={start + len(GUIDE[2])}")
    if response.status_code == 200:
        assert "thirty seconds" in response.content.decode()
        return True
    assert response.status_code in ({302} if w.user is None else {404}), response.status_code
    return False


def _mcp_tool(w: World, name: str, **arguments):
    """The JSON-RPC result of calling MCP tool `name` (None when the request itself was refused)."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    response = w.api.post("/mcp", body, format="json", HTTP_ACCEPT="application/json, text/event-stream")
    if not refused_or_ok(w, response, 200):
        return None
    return response.json()["result"]


def mcp_read_passage(w: World) -> bool:
    result = _mcp_tool(w, "read_passage", document=w.doc.pk, start=0, end=20)
    if result is None or result.get("isError"):
        assert result is None or result["content"][0]["text"].endswith(f"No document {w.doc.pk} that you may read.")
        return False
    assert result["structuredContent"]["text"] == GUIDE[0][:20]
    return True


def mcp_search(w: World) -> bool:
    result = _mcp_tool(w, "search", query="request timeout", collection="team")
    if result is None or result.get("isError"):
        assert result is None or result["content"][0]["text"].endswith("No collection 'team' that you may read.")
        return False
    return w.doc.pk in {c["document"]["id"] for c in result["structuredContent"]["chunks"]}


# --- share invitations (only the invited person sees and answers theirs) ---------------------------------

def _invitation(w: World):
    from corpus.models import ShareInvitation

    return ShareInvitation.objects.get(collection=w.team)


def _answered_only_by_the_invitee(w: World, response, ok: int) -> bool:
    if w.user is None:
        assert response.status_code in {302, 401}, response.status_code
        return False
    if response.status_code == ok:
        return True
    assert response.status_code == 404, response.status_code  # someone else's: not even revealed
    return False


def api_list_invitations(w: World) -> bool:
    response = w.api.get("/api/invitations/")
    if w.user is None:
        assert response.status_code == 401
        return False
    assert response.status_code == 200
    listed = [(i["collection"]["slug"], i["invited_by"], i["role"]) for i in response.json()["results"]]
    assert listed in ([], [("team", "olivia", "write")]), listed
    return bool(listed)


def api_accept_invitation(w: World) -> bool:
    invitation = _invitation(w)
    accepted = _answered_only_by_the_invitee(w, w.api.post(f"/api/invitations/{invitation.pk}/accept/"), 200)
    assert accepted == w.team.editors.filter(username="ivy").exists()
    return accepted


def api_decline_invitation(w: World) -> bool:
    invitation = _invitation(w)
    declined = _answered_only_by_the_invitee(w, w.api.post(f"/api/invitations/{invitation.pk}/decline/"), 200)
    assert declined != w.team.invitations.exists() and not w.team.editors.filter(username="ivy").exists()
    return declined


def page_invitations(w: World) -> bool:
    response = w.web.get("/documents/")
    return response.status_code == 200 and "<strong>olivia</strong> invites you to" in response.content.decode()


def page_accept_invitation(w: World) -> bool:
    invitation = _invitation(w)
    accepted = _answered_only_by_the_invitee(w, w.web.post(f"/documents/invitations/{invitation.pk}/accept/"), 302)
    assert accepted == w.team.editors.filter(username="ivy").exists()
    return accepted


# --- re-embedding (admin action: staff who manage the collection) ---------------------------------------

def admin_reembed(w: World) -> bool:
    Collection.objects.filter(pk=w.team.pk).update(embedding_model="an-earlier-model")
    w.web.post("/admin/corpus/collection/", {"action": "reembed_collections", "_selected_action": [w.team.pk]})
    return Collection.objects.get(pk=w.team.pk).reembed_status == "queued"


# --- /v1 (OpenAI-compatible) --------------------------------------------------------------------------

def v1_models(w: World) -> bool:
    response = w.api.get("/v1/models")
    if not refused_or_ok(w, response, 200):
        return False
    listed = "ragweb/team" in {m["id"] for m in response.json()["data"]}
    assert listed == refused_or_ok(w, w.api.get("/v1/models/ragweb/team"), 200)
    return listed


def v1_completion(w: World) -> bool:
    response = w.api.post("/v1/chat/completions", {"model": "ragweb/team", "messages": [
        {"role": "user", "content": QUESTION}]}, format="json")
    if refused_or_ok(w, response, 200):
        assert {c["document"]["id"] for c in response.json()["citations"]} == {w.doc.pk}
        return True
    if w.user is not None:
        assert response.json()["error"]["code"] == "model_not_found"
    return False


def v1_completion_of_everything(w: World) -> bool:
    response = w.api.post("/v1/chat/completions", {"model": "ragweb", "messages": [
        {"role": "user", "content": QUESTION}]}, format="json")
    if not refused_or_ok(w, response, 200):
        return False
    return w.doc.pk in {c["document"]["id"] for c in response.json()["citations"]}


def api_rating_names_document(w: World) -> bool:
    if w.user is None:
        return refused_or_ok(w, w.api.post("/api/messages/1/feedback/", {"rating": "up"}, format="json"), 200)
    message = _rated_answer(w, "A passage about something else.")
    response = w.api.post(f"/api/messages/{message.pk}/feedback/", {
        "rating": "down", "document": w.doc.pk, "evidence": ["Logs are written to standard output"]}, format="json")
    named = Feedback.objects.get(message=message).source == w.doc.source
    assert named == (response.status_code == 200)
    return named


def v1_completion_by_old_slug(w: World) -> bool:
    """After `team` became `team-2`, `ragweb/team` still answers from it, for its readers only."""
    services.collection_update(collection=w.team, slug="team-2")
    return v1_completion(w)


def api_publish_collection(w: World) -> bool:
    response = w.api.patch("/api/collections/team/", {"is_public": True}, format="json")
    public = Collection.objects.get(pk=w.team.pk).is_public
    assert public == refused_or_ok(w, response, 200) or w.user is None
    return public


ACTIONS = [
    Action("chat", "collection picker", READ, chat_picker),
    Action("chat", "ask", READ, chat_ask),
    Action("chat", "passage view", READ, chat_passage),
    Action("chat", "rating evidence checked against the document", READ, chat_rating_evidence),
    Action("chat", "rating names the document as the source", READ, chat_rating_names_document),
    Action("documents page", "list", READ, page_list),
    Action("documents page", "upload", WRITE, page_upload),
    Action("documents page", "re-ingest", WRITE, page_reingest),
    Action("documents page", "delete", WRITE, page_delete),
    Action("documents page", "edit collection", MANAGE, page_edit_collection),
    Action("documents page", "share collection", MANAGE, page_share),
    Action("documents page", "delete collection", MANAGE, page_delete_collection),
    Action("admin", "document changelist", READ, admin_changelist),
    Action("admin", "document page", READ, admin_change_page),
    Action("admin", "chunk view", READ, admin_chunks),
    Action("admin", "upload", WRITE, admin_upload),
    Action("admin", "re-ingest action", WRITE, admin_reingest),
    Action("admin", "move action", WRITE, admin_move),
    Action("admin", "delete action", WRITE, admin_delete),
    Action("admin", "change and share collection", MANAGE, admin_share),
    Action("admin", "delete collection action", MANAGE, admin_delete_collection),
    Action("admin", "the owner's conversation, message and rating", OWN, admin_owner_conversation),
    Action("REST", "list collections", READ, api_list_collections),
    Action("REST", "read collection", READ, api_read_collection),
    Action("REST", "list documents", READ, api_list_documents),
    Action("REST", "read document", READ, api_read_document),
    Action("REST", "read chunks", READ, api_read_chunks),
    Action("REST", "search the collection", READ, api_search),
    Action("REST", "search everything", READ, api_search_everything),
    Action("REST", "ask", READ, api_ask),
    Action("REST", "rating names the document as the source", READ, api_rating_names_document),
    Action("REST", "upload", WRITE, api_upload),
    Action("REST", "move", WRITE, api_move),
    Action("REST", "move (PATCH)", WRITE, api_move_by_patch),
    Action("REST", "move a document in", WRITE, api_move_in),
    Action("REST", "delete", WRITE, api_delete),
    Action("REST", "re-ingest", WRITE, api_reingest),
    Action("REST", "change collection", MANAGE, api_change_collection),
    Action("REST", "share collection", MANAGE, api_share),
    Action("REST", "delete collection", MANAGE, api_delete_collection),
    Action("REST", "share with a group one is not in", ANY_GROUP, api_share_with_outside_group),
    Action("documents page", "share with a group one is not in", ANY_GROUP, page_share_with_outside_group),
    Action("REST", "make collection public (staff)", MANAGE, api_publish_collection),
    Action("sources page", "list", READ, sources_page),
    Action("sources page", "add", WRITE, sources_page_add),
    Action("sources page", "sync now", WRITE, sources_page_sync),
    Action("sources page", "delete", WRITE, sources_page_delete),
    Action("admin", "source changelist", READ, admin_sources),
    Action("admin", "sync sources action", WRITE, admin_sources_sync),
    Action("REST", "list sources", READ, api_list_sources),
    Action("REST", "read source", READ, api_read_source),
    Action("REST", "add source", WRITE, api_add_source),
    Action("REST", "change source", WRITE, api_change_source),
    Action("REST", "delete source", WRITE, api_delete_source),
    Action("REST", "sync source now", WRITE, api_sync_source),
    Action("passage page", "a document's passage (MCP links)", READ, page_document_passage),
    Action("MCP", "read_passage", READ, mcp_read_passage),
    Action("MCP", "search a collection", READ, mcp_search),
    Action("admin", "re-embed action", MANAGE, admin_reembed),
    Action("REST", "list one's share invitations", INVITED, api_list_invitations),
    Action("REST", "accept a share invitation", INVITED, api_accept_invitation),
    Action("REST", "decline a share invitation", INVITED, api_decline_invitation),
    Action("documents page", "one's share invitations", INVITED, page_invitations),
    Action("documents page", "accept a share invitation", INVITED, page_accept_invitation),
    Action("/v1", "models", READ, v1_models),
    Action("/v1", "chat completion", READ, v1_completion),
    Action("/v1", "chat completion of every collection", READ, v1_completion_of_everything),
    Action("/v1", "chat completion by a renamed collection's old slug", READ, v1_completion_by_old_slug),
]


@functools.cache
def _guide_vectors() -> list[list[float]]:
    return [vector.tolist() for vector in embed_texts(GUIDE)]


def _handbook(collection: Collection) -> Document:
    """A ready document whose chunks are GUIDE (embedded once per run)."""
    text = "".join(GUIDE)
    document = Document.objects.create(collection=collection, source="handbook.md", title="Team handbook",
                                       media_type="text/markdown", text=text, status=Document.Status.READY)
    offset = 0
    for index, (part, vector) in enumerate(zip(GUIDE, _guide_vectors(), strict=True)):
        document.chunks.create(chunk_index=index, text=part, start=offset, end=offset + len(part),
                               context=document.title, token_count=len(part.split()), embedding=vector)
        offset += len(part)
    return document


USERNAMES = {"owner": "olivia", "reader": "rita", "editor": "eddie", "stranger": "sam", "group reader": "gina",
             "group editor": "gus", "invitee": "ivy", "declined invitee": "dora", "accepted invitee": "abe",
             "superuser": "root"}


def _build_team(user_model) -> None:
    """The rows every case starts from: the named users, the groups, `team` shared with them and its
    handbook. No passwords (force_login signs in): hashing them would dominate the run."""
    users = {name: user_model.objects.create_user(username=username, password=None, is_staff=True)
             for name, username in USERNAMES.items() if name != "superuser"}
    # The chat admin's view permissions too: what each sees there is then corpus.permissions' call.
    chat_views = list(Permission.objects.filter(content_type__app_label="chat", codename__startswith="view_"))
    for staff in users.values():
        staff.user_permissions.set(chat_views)
    user_model.objects.create_superuser(username=USERNAMES["superuser"], password=None)
    team = make_collection("team", owner=users["owner"])
    team.readers.add(users["reader"])
    team.editors.add(users["editor"])
    readers, editors = Group.objects.create(name="readers"), Group.objects.create(name="editors")
    users["group reader"].groups.add(readers)
    users["group editor"].groups.add(editors)
    team.reader_groups.add(readers)
    team.editor_groups.add(editors)
    Group.objects.create(name="outsiders")  # no one is in it
    sharing.collection_share(collection=team, sharer=users["owner"], editors=[
        users["editor"], users["invitee"], users["declined invitee"], users["accepted invitee"]])
    for name, answer in (("declined invitee", sharing.invitation_decline),
                         ("accepted invitee", sharing.invitation_accept)):
        answer(invitation=team.invitations.get(user=users[name]))
    _handbook(team)


@pytest.fixture(scope="module")
def team_rows(django_db_setup, django_db_blocker):
    """_build_team's rows, written once for the module inside a transaction rolled back at its end.

    Each test's own transaction (pytest-django's `db`, a Django TestCase) nests in it as a savepoint,
    so whatever a case changes is rolled back before the next: every case starts from exactly these
    rows, as when each built them afresh (that building was most of the module's time, ~800 times)."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    with django_db_blocker.unblock(), transaction.atomic():
        _build_team(get_user_model())
        yield
        transaction.set_rollback(True)


@pytest.fixture
def make_world(team_rows, django_user_model, settings, tmp_path, no_llm):
    settings.MEDIA_ROOT = tmp_path  # uploads; their ingestion is only queued (on commit, never run here)

    def build(role: str) -> World:
        # Fresh instances each case: nothing a previous case cached on them (permissions, groups) carries over.
        by_username = django_user_model.objects.in_bulk(USERNAMES.values(), field_name="username")
        users = {name: by_username[username] for name, username in USERNAMES.items()}
        team = Collection.objects.get(slug="team")
        doc = Document.objects.get(collection=team, source="handbook.md")
        user = users.get(role)
        web, api = Client(), APIClient()
        own = None
        if user is not None:
            web.force_login(user)
            api.force_authenticate(user)
            own = make_collection(f"own-{role.replace(' ', '-')}", owner=user)
        return World(role=role, user=user, web=web, api=api, team=team, doc=doc, own=own,
                     stranger=users["stranger"])

    return build


@pytest.mark.parametrize("role", ROLES)
@pytest.mark.parametrize("action", ACTIONS, ids=str)
def test_permission_matrix(make_world, role, action):
    world = make_world(role)
    assert action.run(world) == (role in ALLOWED[action.level])


# --- group membership changes ---------------------------------------------------------------------------

def _access(user, team: Collection) -> tuple[bool, bool]:
    """(reads, writes) `team`, as the REST API and the documents page answer a signed-in `user`."""
    api, web = APIClient(), Client()
    api.force_authenticate(user)
    web.force_login(user)
    read = api.get("/api/collections/team/").status_code
    listed = "team" in {c["slug"] for c in api.get("/api/collections/").json()["results"]}
    page = web.get("/documents/?collection=team").status_code
    assert (read == 200) == listed == (page == 200), (read, listed, page)
    upload = api.post("/api/documents/", {"file": SimpleUploadedFile("x.md", b"# X\n\nText."), "collection": "team"},
                      format="multipart")
    assert upload.status_code in {201, 403, 404}, upload.content
    wrote = upload.status_code == 201
    assert Document.objects.filter(collection=team, source="x.md").exists() == wrote
    Document.objects.filter(source="x.md").delete()
    return read == 200, wrote


def test_a_user_in_two_groups_keeps_what_the_other_gives_until_removed_from_both(make_world,
                                                                                django_capture_on_commit_callbacks):
    world = make_world("stranger")
    sam, team = world.stranger, world.team
    readers, editors = Group.objects.get(name="readers"), Group.objects.get(name="editors")
    with django_capture_on_commit_callbacks(execute=False):
        assert _access(sam, team) == (False, False)
        sam.groups.add(readers, editors)
        assert _access(sam, team) == (True, True)
        sam.groups.remove(editors)  # the reader group still lets them read, no longer write
        assert _access(sam, team) == (True, False)
        sam.groups.add(editors)
        sam.groups.remove(readers)  # the editor group alone gives both
        assert _access(sam, team) == (True, True)
        sam.groups.remove(editors)  # in neither: nothing, and the collection is not even revealed
        assert _access(sam, team) == (False, False)


def test_a_user_in_two_reader_groups_removed_from_one_still_reads(make_world):
    world = make_world("stranger")
    sam, team = world.stranger, world.team
    design = Group.objects.create(name="design")
    team.reader_groups.add(design)
    sam.groups.add(design, Group.objects.get(name="readers"))
    sam.groups.remove(design)
    assert _access(sam, team) == (True, False)
    sam.groups.clear()
    assert _access(sam, team) == (False, False)


def test_the_anonymous_user_gets_nothing_from_groups(make_world):
    from django.contrib.auth.models import AnonymousUser

    from corpus import permissions

    world = make_world("anonymous")
    world.team.reader_groups.add(*Group.objects.all())
    world.team.is_public = True
    world.team.save()
    assert not permissions.readable_collections(AnonymousUser()).exists()
    assert not permissions.writable_collections(AnonymousUser()).exists()
    assert APIClient().get("/api/collections/team/").status_code == 401
    assert Client().get("/documents/?collection=team").status_code == 302


# --- folder sources: staff, and those given the permission in the admin ----------------------------------
# A folder source reads the server's files, so writing to the collection is not enough: the actor must
# be staff or hold "Can add server folder sources" (sources.folders.may_add_folder), given to them or
# to a group of theirs. The admin is staff's whatever their permissions.

FOLDER_ROLES = ["editor", "editor given the permission", "editor in a group given it", "staff editor",
                "staff reader", "superuser"]
FOLDER_ADDERS = {"editor given the permission", "editor in a group given it", "staff editor", "superuser"}
FOLDER_ALLOWED = {"sources page": FOLDER_ADDERS, "REST": FOLDER_ADDERS, "admin": {"staff editor", "superuser"}}


@dataclass
class FolderWorld:
    role: str
    web: Client
    api: APIClient
    team: Collection
    folder: str  # a folder under SOURCES_FOLDERS

    def added(self) -> bool:
        from sources.models import Source

        return Source.objects.filter(collection=self.team, kind="folder", path=self.folder).exists()


def folder_by_page(w: FolderWorld) -> bool:
    from sources.folders import FOLDERS_FOR_STAFF

    page = w.web.get(f"/sources/{w.team.slug}/")
    response = w.web.post(f"/sources/{w.team.slug}/add/", {"kind": "folder", "path": w.folder, "schedule": "none",
                                                 "max_pages": 10, "max_depth": 0})
    if w.role == "staff reader":
        assert response.status_code == 403
    elif response.status_code != 302:  # refused: the form offers no folder, and says who may add one
        html = page.content.decode()
        assert response.status_code == 400 and 'value="folder"' not in html
        assert FOLDERS_FOR_STAFF.split(",")[0] in html
    else:
        assert 'value="folder"' in page.content.decode()
    return w.added()


def folder_by_api(w: FolderWorld) -> bool:
    from sources.folders import FOLDERS_FOR_STAFF

    response = w.api.post("/api/sources/", {"collection": w.team.slug, "kind": "folder", "path": w.folder,
                                            "schedule": "none"}, format="json")
    if response.status_code != 201:
        assert response.status_code == 403 if w.role == "staff reader" else (
            response.status_code == 400 and response.json()["kind"] == [FOLDERS_FOR_STAFF])
    return w.added()


def folder_by_admin(w: FolderWorld) -> bool:
    w.web.post("/admin/sources/source/add/", {"collection": w.team.pk, "kind": "folder", "url": "",
                                              "path": w.folder, "schedule": "none", "max_pages": 10,
                                              "max_depth": 0, "tags_text": ""})
    return w.added()


FOLDER_SURFACES = {"sources page": folder_by_page, "REST": folder_by_api, "admin": folder_by_admin}


@pytest.fixture
def folder_world(django_user_model, settings, tmp_path):
    (tmp_path / "shared" / "handbook").mkdir(parents=True)
    settings.SOURCES_FOLDERS = [str(tmp_path / "shared")]

    def build(role: str) -> FolderWorld:
        # Names of its own: the module's team (team_rows) may be in the database around these cases.
        owner = django_user_model.objects.create_user(username="fiona", password=None)
        team = Collection.objects.create(slug="folder-team", name="Folder team", owner=owner)
        if role == "superuser":
            actor = django_user_model.objects.create_superuser(username="fred", password=None)
        else:
            actor = django_user_model.objects.create_user(username="walt", password=None,
                                                          is_staff=role.startswith("staff"))
            (team.readers if role == "staff reader" else team.editors).add(actor)
        permission = Permission.objects.get(content_type__app_label="sources", codename="add_folder_source")
        if role == "editor given the permission":
            actor.user_permissions.add(permission)
        if role == "editor in a group given it":
            adders = Group.objects.create(name="folder adders")
            adders.permissions.add(permission)
            actor.groups.add(adders)
        web, api = Client(), APIClient()
        web.force_login(actor)
        api.force_authenticate(actor)
        return FolderWorld(role=role, web=web, api=api, team=team,
                           folder=str((tmp_path / "shared" / "handbook").resolve()))

    return build


@pytest.mark.parametrize("role", FOLDER_ROLES)
@pytest.mark.parametrize("surface", FOLDER_SURFACES)
def test_folder_sources_are_added_by_staff_and_those_given_the_permission(folder_world, role, surface):
    world = folder_world(role)
    assert FOLDER_SURFACES[surface](world) == (role in FOLDER_ALLOWED[surface])


# Taking a paused folder source over resumes it in the taker's name: the same people as adding one.
def _paused_folder_source(w: FolderWorld):
    from sources.models import Source

    return Source.objects.create(collection=w.team, kind="folder", path=w.folder, created_by=w.team.owner,
                                 paused_reason="Paused: its owner may no longer change documents.")


def take_over_by_page(w: FolderWorld, source) -> None:
    w.web.post(f"/sources/source/{source.pk}/take-over/")


def take_over_by_api(w: FolderWorld, source) -> None:
    response = w.api.post(f"/api/sources/{source.pk}/take-over/")
    assert response.status_code in (200, 403, 404)


def take_over_by_admin(w: FolderWorld, source) -> None:
    w.web.post("/admin/sources/source/", {"action": "take_over", "_selected_action": [source.pk]})


TAKE_OVER_SURFACES = {"sources page": take_over_by_page, "REST": take_over_by_api, "admin": take_over_by_admin}


@pytest.mark.parametrize("role", FOLDER_ROLES)
@pytest.mark.parametrize("surface", TAKE_OVER_SURFACES)
def test_folder_sources_are_taken_over_by_those_who_may_add_one(folder_world, role, surface):
    world = folder_world(role)
    source = _paused_folder_source(world)
    TAKE_OVER_SURFACES[surface](world, source)
    source.refresh_from_db()
    taken = source.created_by_id != world.team.owner_id
    assert taken == (role in FOLDER_ALLOWED[surface])
    assert bool(source.paused_reason) != taken
