"""The attack round after issue 40's fixes: a document a source brought keeps its link to the
source when it is moved to another collection, so the source's owner (or any editor of the
source's collection) still deletes it there, where they have no rights at all."""

from __future__ import annotations

import pytest
from django.utils import timezone

from corpus.models import Collection, Document
from sources.models import Source, SourceDocument
from tests.chat.chat_corpus import make_document

pytestmark = pytest.mark.django_db


def test_deleting_a_source_does_not_delete_a_document_moved_out_of_its_collection(client_of, user, carol, dave):
    team = Collection.objects.create(slug="team", name="Team", owner=user)  # alice's; carol and dave edit it
    team.editors.add(carol, dave)
    carols = Collection.objects.create(slug="carols", name="Carol's", owner=carol)  # dave cannot read it
    source = Source.objects.create(collection=team, kind="url", url="https://docs.example.org/a.html",
                                   schedule="daily", next_sync_at=timezone.now(), created_by=user)
    page = make_document(team, source="https://docs.example.org/a.html", parts=["A page about deployment.\n"])
    SourceDocument.objects.create(source=source, document=page, key="https://docs.example.org/a.html")

    moved = client_of(carol).post(f"/api/documents/{page.pk}/move/", {"collection": "carols"}, format="json")
    assert moved.status_code == 200
    assert client_of(dave).get(f"/api/documents/{page.pk}/").status_code == 404  # out of dave's reach

    assert client_of(dave).delete(f"/api/sources/{source.pk}/").status_code == 204
    assert Document.objects.filter(pk=page.pk, collection=carols).exists()  # carol's document stays
