"""Through a real Celery worker (a subprocess on the real broker and result backend): POST
/api/sources/{id}/sync/ answers 202 with the source's URL, where the counts of the sync the worker
ran appear; the worker then processes the documents, and a file deleted meanwhile is removed by
the next sync."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from corpus.models import Document
from sources.models import Source
from tests.sources.helpers import write

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def worker(settings, tmp_path, monkeypatch):
    from tests.workers import start_worker, stop_worker

    root = tmp_path / "shared"
    (root / "handbook").mkdir(parents=True)
    settings.SOURCES_FOLDERS = [str(root)]
    monkeypatch.setenv("SOURCES_FOLDERS", str(root))  # the worker reads its own settings from the environment
    handle = start_worker(settings, name="sources")
    try:
        yield root
    finally:
        stop_worker(handle)


def wait_ready(count: int, timeout: float = 180) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if Document.objects.filter(status=Document.Status.READY).count() == count and not Document.objects.exclude(
                status=Document.Status.READY).exists():
            return
        time.sleep(0.5)
    raise AssertionError(list(Document.objects.values_list("source", "status", "error")))


def synced_counts(api, url: str, timeout: float = 120) -> dict:
    """The counts of the source's last sync, once it is no longer queued or syncing."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        shown = api.get(url).json()
        if shown["state"] not in ("queued", "syncing"):
            return {name: shown["last_sync"][name] for name in ("new", "changed", "unchanged", "removed", "failed")}
        time.sleep(0.3)
    raise AssertionError(f"the sync did not finish: {shown}")


def test_sync_now_through_the_worker_shows_its_counts(worker, user, collection):
    write(worker / "handbook" / "a.md", "# A\n\nThe anchor is painted red.\n")
    write(worker / "handbook" / "b.md", "# B\n\nThe boat is painted blue.\n")
    source = Source.objects.create(collection=collection, kind="folder", path=str((worker / "handbook").resolve()),
                                   schedule="none")
    api = APIClient()
    api.force_authenticate(user)

    response = api.post(f"/api/sources/{source.pk}/sync/")
    assert response.status_code == 202, response.json()
    assert synced_counts(api, response.json()["url"]) == {"new": 2, "changed": 0, "unchanged": 0, "removed": 0,
                                                          "failed": 0}
    wait_ready(2)

    (worker / "handbook" / "b.md").unlink()
    response = api.post(f"/api/sources/{source.pk}/sync/")
    assert synced_counts(api, response.json()["url"]) == {"new": 0, "changed": 0, "unchanged": 1, "removed": 1,
                                                          "failed": 0}
    assert list(Document.objects.values_list("source", flat=True)) == ["handbook/a.md"]
    source.refresh_from_db()
    assert source.state == Source.State.IDLE and source.last_removed == 1
