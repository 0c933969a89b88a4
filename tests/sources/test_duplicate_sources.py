"""A collection holds a location once: the database says so (source_unique_location, with the
migration that merges earlier duplicates), and adding it again is a 400 or a form error naming the
existing source on every surface (web form, REST API, admin), never a 500."""

from __future__ import annotations

import importlib
from unittest import mock

import pytest
from django.apps import apps
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction

from corpus.models import Collection, Document
from sources import services
from sources.models import Source, SourceDocument

pytestmark = pytest.mark.django_db

URL = "https://docs.example.org/guide/"


@pytest.fixture
def team(user):
    return Collection.objects.create(slug="team", name="Team", owner=user)


@pytest.fixture
def existing(team, user):
    return Source.objects.create(collection=team, kind="url", url=URL, schedule="none", created_by=user)


def test_the_database_refuses_a_second_source_at_the_same_location(team, existing):
    with pytest.raises(IntegrityError), transaction.atomic():
        Source.objects.create(collection=team, kind="url", url=URL, schedule="none")
    other = Collection.objects.create(slug="other", name="Other")
    Source.objects.create(collection=other, kind="url", url=URL, schedule="none")  # another collection may
    Source.objects.create(collection=team, kind="site", url=URL, schedule="none")  # and another kind


def test_the_web_form_names_the_existing_source(client, team, user, existing):
    client.force_login(user)
    response = client.post("/sources/team/add/", {"kind": "url", "url": URL, "schedule": "daily",
                                                   "max_pages": 10, "max_depth": 1})
    assert response.status_code == 400
    assert f"already has this source: Web page: {URL} (source {existing.pk})" in response.content.decode()
    assert Source.objects.count() == 1


def test_the_api_answers_400_naming_the_existing_source(client_of, team, user, existing):
    response = client_of(user).post("/api/sources/", {"collection": "team", "kind": "url", "url": URL},
                                    format="json")
    assert response.status_code == 400
    assert f"(source {existing.pk})" in str(response.json())
    assert Source.objects.count() == 1


def test_the_admin_shows_a_form_error_naming_the_existing_source(client, django_user_model, team, existing):
    staff = django_user_model.objects.create_superuser(username="root", password=None)
    client.force_login(staff)
    response = client.post("/admin/sources/source/add/", {
        "collection": team.pk, "kind": "url", "url": URL, "path": "", "schedule": "none", "max_pages": 10,
        "max_depth": 1, "tags_text": ""})
    assert response.status_code == 200
    assert f"(source {existing.pk})" in response.content.decode()
    assert Source.objects.count() == 1


def test_a_source_added_meanwhile_is_a_validation_error_not_a_500(team, user, existing):
    """The check found nothing (another request had not committed yet); the constraint decides."""
    with mock.patch.object(services, "existing_source", side_effect=[None, existing]):
        with pytest.raises(ValidationError) as refused:
            services.source_create(collection=team, kind="url", url=URL, schedule="none", sync=False)
    assert f"(source {existing.pk})" in str(refused.value)
    assert Source.objects.count() == 1


def test_the_migration_merges_duplicates_into_the_oldest(team, user):
    merge = importlib.import_module("sources.migrations.0002_source_merge_duplicates").merge_duplicates
    with connection.cursor() as cursor:  # as before the constraint (rolled back with the test)
        cursor.execute("DROP INDEX source_unique_location")  # expressions: a unique index
    first, second = (Source.objects.create(collection=team, kind="url", url=URL, schedule="none")
                     for _ in range(2))
    other = Source.objects.create(collection=team, kind="url", url="https://docs.example.org/other/",
                                  schedule="none")
    page = Document.objects.create(collection=team, source="guide.html")
    SourceDocument.objects.create(source=second, document=page, key=URL)

    merge(apps, None)

    assert set(Source.objects.values_list("pk", flat=True)) == {first.pk, other.pk}
    assert SourceDocument.objects.get(document=page).source_id == first.pk
