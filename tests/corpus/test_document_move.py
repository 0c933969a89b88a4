"""Moving a document out of a collection takes it from that collection's readers, so it takes the
right to delete it there (corpus.permissions.check_move) and write access to the target, and it
is audited (from, to, who) on every surface: the REST move and PATCH, and the admin action."""

from __future__ import annotations

import pytest

from audit.models import Action, AuditEvent
from corpus import permissions
from corpus.models import Collection, Document

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(user, other_user, carol):
    """alice's collection, read by bob, edited by carol; with one document."""
    team = Collection.objects.create(slug="team", name="Team", owner=user)
    team.readers.add(other_user)
    team.editors.add(carol)
    return team


@pytest.fixture
def handbook(team, user):
    return Document.objects.create(collection=team, source="handbook.md", title="Handbook", uploaded_by=user)


def _moves():
    return list(AuditEvent.objects.filter(action=Action.DOCUMENT_MOVED).values_list(
        "actor_username", "target_id", "detail"))


@pytest.mark.parametrize("how", ["move", "patch"])
def test_an_editor_moving_the_owners_document_away_is_audited(client_of, team, handbook, carol, how,
                                                             django_capture_on_commit_callbacks):
    Collection.objects.create(slug="carols", name="Carol's", owner=carol)
    api = client_of(carol)
    with django_capture_on_commit_callbacks(execute=False):
        if how == "move":
            response = api.post(f"/api/documents/{handbook.pk}/move/", {"collection": "carols"}, format="json")
        else:
            response = api.patch(f"/api/documents/{handbook.pk}/", {"collection": "carols"}, format="json")
    assert response.status_code == 200, response.content
    assert _moves() == [("carol", str(handbook.pk), {"source": "handbook.md", "from": "team", "to": "carols"})]


def test_a_reader_may_not_move_a_document_out_even_into_their_own_collection(client_of, team, handbook, other_user):
    Collection.objects.create(slug="bobs", name="Bob's", owner=other_user)
    response = client_of(other_user).post(f"/api/documents/{handbook.pk}/move/", {"collection": "bobs"},
                                          format="json")
    assert response.status_code == 403
    assert "right to delete" in response.json()["detail"]
    assert Document.objects.get(pk=handbook.pk).collection == team and _moves() == []


def test_moving_into_a_collection_one_only_reads_is_refused(client_of, team, user, carol):
    mine = Collection.objects.create(slug="carols", name="Carol's", owner=carol)
    note = Document.objects.create(collection=mine, source="note.md")
    team.editors.remove(carol)
    team.readers.add(carol)
    response = client_of(carol).post(f"/api/documents/{note.pk}/move/", {"collection": "team"}, format="json")
    assert response.status_code == 403
    assert Document.objects.get(pk=note.pk).collection == mine and _moves() == []


def test_the_admin_move_action_is_audited(client, django_user_model, team, handbook, user,
                                          django_capture_on_commit_callbacks):
    user.is_staff = True
    user.save()
    archive = Collection.objects.create(slug="archive", name="Archive", owner=user)
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=False):
        client.post("/admin/corpus/document/", {"action": "move_documents", "_selected_action": [handbook.pk],
                                                "apply": "1", "target": archive.pk})
    assert Document.objects.get(pk=handbook.pk).collection == archive
    assert _moves() == [("alice", str(handbook.pk), {"source": "handbook.md", "from": "team", "to": "archive"})]


def test_check_move_follows_the_delete_right(team, handbook, user, other_user, carol):
    target = Collection.objects.create(slug="t", name="T", owner=None)
    target.editors.add(user, other_user, carol)
    for person in (user, carol):
        assert permissions.can_delete_document(person, handbook)
        permissions.check_move(person, handbook, target)
    assert not permissions.can_delete_document(other_user, handbook)
    with pytest.raises(permissions.Denied) as refused:
        permissions.check_move(other_user, handbook, target)
    assert refused.value.status == 403


def test_moves_that_rebuild_draw_on_the_forced_reingest_budget(client_of, team, user, monkeypatch,
                                                               django_capture_on_commit_callbacks):
    """Moving a document back and forth between collections of other chunk settings rebuilds it each
    time: such moves count as forced re-ingests (429 past the budget); moves between collections of
    the same settings cost nothing."""
    from django.core.cache import caches

    from corpus.quotas import ForcedReingestQuota

    monkeypatch.setattr(ForcedReingestQuota, "rate", "2/hour")
    caches["quotas"].clear()
    Collection.objects.create(slug="big", name="Big chunks", owner=user, chunk_size=1500)
    Collection.objects.create(slug="twin", name="Twin", owner=user)  # team's settings
    document = Document.objects.create(collection=team, source="plan.md", title="Plan", status="ready",
                                       content_hash="h", built_hash="h", built_signature=team.pipeline_signature())
    api = client_of(user)
    with django_capture_on_commit_callbacks(execute=False):
        same = [api.post(f"/api/documents/{document.pk}/move/", {"collection": slug}, format="json").status_code
                for slug in ("twin", "team", "twin", "team")]
        other = [api.post(f"/api/documents/{document.pk}/move/", {"collection": slug}, format="json").status_code
                 for slug in ("big", "team", "big")]
        patched = api.patch(f"/api/documents/{document.pk}/", {"collection": "big"}, format="json")

    assert same == [200, 200, 200, 200]
    assert other == [200, 200, 429] and patched.status_code == 429
    assert Document.objects.get(pk=document.pk).collection.slug == "team"
    caches["quotas"].clear()


def test_the_admin_move_action_draws_on_the_same_rebuild_budget(client, team, user, monkeypatch,
                                                                django_capture_on_commit_callbacks):
    """The admin's move goes through corpus.quotas.move_rebuild_wait, like the API's: a move that
    rebuilds a document counts as a forced re-ingest; past the budget the document stays, and the
    message says why. A move that rebuilds nothing is not counted."""
    from django.core.cache import caches

    from corpus.quotas import ForcedReingestQuota

    monkeypatch.setattr(ForcedReingestQuota, "rate", "1/hour")
    caches["quotas"].clear()
    user.is_staff = True
    user.save()
    big = Collection.objects.create(slug="big", name="Big chunks", owner=user, chunk_size=1500)
    twin = Collection.objects.create(slug="twin", name="Twin", owner=user)  # team's settings
    built = {"status": "ready", "content_hash": "h", "built_hash": "h", "built_signature": team.pipeline_signature()}
    plan = Document.objects.create(collection=team, source="plan.md", title="Plan", **built)
    memo = Document.objects.create(collection=team, source="memo.md", title="Memo", **built)
    client.force_login(user)

    def move(documents, target):
        with django_capture_on_commit_callbacks(execute=False):
            return client.post("/admin/corpus/document/", {
                "action": "move_documents", "_selected_action": [d.pk for d in documents], "apply": "1",
                "target": target.pk}, follow=True).content.decode()

    page = move([plan, memo], big)
    assert "Moved 1 document to Big chunks" in page
    assert ("Not moved: Plan (moving rebuilds a document under the chunk settings of Big chunks, and you rebuilt "
            "many documents lately); try again in ") in page
    assert {d.source: d.collection.slug for d in Document.objects.all()} == {"plan.md": "team", "memo.md": "big"}
    assert _moves() == [("alice", str(memo.pk), {"source": "memo.md", "from": "team", "to": "big"})]
    assert "Moved 1 document to Twin" in move([plan], twin)  # the same settings: nothing to rebuild
    page = move([memo], team)
    assert "Not moved: Memo" in page and Document.objects.get(pk=memo.pk).collection == big
    caches["quotas"].clear()


def test_the_admin_reingest_action_draws_on_the_forced_reingest_budget(client, team, handbook, user, monkeypatch,
                                                                       django_capture_on_commit_callbacks):
    from django.core.cache import caches

    from corpus.quotas import ForcedReingestQuota

    monkeypatch.setattr(ForcedReingestQuota, "rate", "1/hour")
    caches["quotas"].clear()
    user.is_staff = True
    user.save()
    memo = Document.objects.create(collection=team, source="memo.md", title="Memo")
    Document.objects.filter(pk__in=[handbook.pk, memo.pk]).update(status="ready")
    client.force_login(user)
    with django_capture_on_commit_callbacks(execute=False):
        page = client.post("/admin/corpus/document/", {"action": "reingest_documents",
                                                       "_selected_action": [handbook.pk, memo.pk]},
                           follow=True).content.decode()
    assert "Queued 1 document for re-ingestion." in page and "Not re-ingested: 1" in page
    assert sorted(Document.objects.values_list("status", flat=True)) == ["queued", "ready"]
    caches["quotas"].clear()
