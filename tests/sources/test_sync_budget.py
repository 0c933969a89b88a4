"""A sync run has a budget (wall clock and items): a round that does not fit goes on in the next
run where it stopped, a crawl included (no page fetched twice for the listing), counts add up over
the round, and items gone from the source are removed only once the round is complete. The task
queues the next run itself."""

from __future__ import annotations

import pytest

from corpus.models import Document
from sources import services
from sources.models import Source
from sources.sync import source_sync
from sources.web import pacing, robots
from tests.sources.helpers import allow_folders, write
from tests.sources.http_site import HttpSite

pytestmark = pytest.mark.django_db


@pytest.fixture
def handbook(allowed_root, collection, user):
    for n in range(5):
        write(allowed_root / "handbook" / f"{n}.md", f"# Page {n}\n\nThe text of page {n}.\n")
    return services.source_create(collection=collection, kind="folder", path="handbook", schedule="daily",
                                  created_by=user, sync=False)


def counts(source: Source) -> tuple[int, int, int, int]:
    source.refresh_from_db()
    return source.last_new, source.last_unchanged, source.last_removed, source.last_failed


def test_a_round_larger_than_the_item_budget_goes_on_where_it_stopped(handbook, allowed_root):
    first = source_sync(source_id=handbook.pk, items=2)
    assert first.more and first.counts["new"] == 2
    handbook.refresh_from_db()
    assert handbook.state == Source.State.QUEUED and handbook.sync_round["done"] == 2
    assert handbook.sync_finished_at is None  # the round is not finished
    assert Document.objects.count() == 2

    synced_key = handbook.sync_round["items"][0][0]  # a file the round has synced already
    (allowed_root / "handbook" / synced_key).unlink()  # gone while the round goes on: removed at its end only
    second = source_sync(source_id=handbook.pk, items=2)
    assert second.more and counts(handbook) == (4, 0, 0, 0)  # summed over the round
    third = source_sync(source_id=handbook.pk, items=2)
    assert not third.more and counts(handbook) == (5, 0, 0, 0)
    assert handbook.state == Source.State.IDLE and handbook.sync_round == {} and handbook.next_sync_at is not None
    assert Document.objects.count() == 5  # listed at the round's start, and read before it went

    fresh = source_sync(source_id=handbook.pk, items=10)  # a new round lists again
    assert not fresh.more and counts(handbook) == (0, 4, 1, 0)
    assert Document.objects.count() == 4


def test_the_task_queues_the_next_run_until_the_round_is_done(handbook, monkeypatch, eager_media):
    from sources import tasks

    monkeypatch.setattr(tasks, "SYNC_ITEMS", 2)
    runs = []
    real = tasks.source_sync
    monkeypatch.setattr(tasks, "source_sync", lambda **kw: runs.append(kw["items"]) or real(**kw))
    tasks.sync_source_task.delay(handbook.pk)
    assert runs == [2, 2, 2]
    assert counts(handbook) == (5, 0, 0, 0) and handbook.state == Source.State.IDLE
    assert Document.objects.count() == 5


def test_the_run_budget_is_a_third_of_the_visibility_timeout_at_most(settings):
    from sources.sync import SYNC_SECONDS, sync_slice_seconds

    settings.CELERY_VISIBILITY_TIMEOUT = 600
    assert sync_slice_seconds() == SYNC_SECONDS
    settings.CELERY_VISIBILITY_TIMEOUT = 30
    assert sync_slice_seconds() == 10


@pytest.fixture
def chain(settings, monkeypatch):
    """A site whose pages link one to the next (no sitemap): listing it is a crawl."""
    settings.SOURCES_ALLOW_PRIVATE = True
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 0)
    robots.forget()
    with HttpSite() as served:
        for n in range(4):
            link = f"<a href='/docs/{n + 1}'>next</a>" if n < 3 else ""
            served.pages[f"/docs/{n}"] = (f"<html><head><title>Part {n}</title></head><body><main><h1>Part {n}</h1>"
                                          f"<p>Part {n} of the chain tells of the ferry number {n}.</p>{link}</main>"
                                          "</body></html>")
        yield served
    robots.forget()


def test_a_crawl_out_of_time_goes_on_from_its_frontier_next_run(chain, collection, user):
    source = services.source_create(collection=collection, kind="site", url=chain.url("/docs/0"), schedule="none",
                                    max_depth=5, created_by=user, sync=False)
    runs = 0
    while True:
        runs += 1
        result = source_sync(source_id=source.pk, seconds=0)  # each run: one request, then out of time
        if not result.more:
            break
        assert runs < 20
    source.refresh_from_db()
    assert (source.last_new, source.last_failed, source.state) == (4, 0, Source.State.IDLE)
    assert runs > 4  # the crawl and the reading were cut into runs
    requested = chain.paths_requested()
    # Each page fetched once by the crawl and once to be read: the crawl went on, never restarted.
    assert {f"/docs/{n}": requested.count(f"/docs/{n}") for n in range(4)} == {f"/docs/{n}": 2 for n in range(4)}
    assert sorted(Document.objects.values_list("source", flat=True)) == [chain.url(f"/docs/{n}") for n in range(4)]


@pytest.fixture
def owner_busy(user):
    """Another of `user`'s syncs is running (it holds their one slot, as a worker's session would)."""
    from django.db import connections

    from sources.sync import OWNER_LOCK_CLASS

    other = connections.create_connection("default")
    with other.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [OWNER_LOCK_CLASS, user.pk])
    yield
    other.close()


def test_one_sync_per_owner_runs_at_a_time_and_the_others_wait(handbook, owner_busy, allowed_root, carol,
                                                               collection, eager_media):
    """One person's slow sites cannot take every slot of the sources worker: while one of their
    syncs runs, the task's run of another does nothing and stays queued; other people's run."""
    Source.objects.filter(pk=handbook.pk).update(state=Source.State.QUEUED)
    waiting = source_sync(source_id=handbook.pk, items=10, one_per_owner=True)
    handbook.refresh_from_db()
    assert waiting.waiting and waiting.counts["new"] == 0 and not Document.objects.exists()
    assert handbook.state == Source.State.QUEUED and handbook.sync_started_at is None

    write(allowed_root / "carols" / "a.md", "# A\n\nCarol's page.\n")
    collection.editors.add(carol)
    allow_folders(carol)
    carols = services.source_create(collection=collection, kind="folder", path="carols", schedule="daily",
                                    created_by=carol, sync=False)
    assert source_sync(source_id=carols.pk, items=10, one_per_owner=True).counts["new"] == 1
    # The command line (an operator, no budget) is not held to it.
    assert source_sync(source_id=handbook.pk).counts["new"] == 5


def test_the_task_queues_a_waiting_sync_again_a_little_later(handbook, owner_busy, monkeypatch):
    from sources import tasks

    later = []
    monkeypatch.setattr(tasks.sync_source_task, "apply_async", lambda args, countdown: later.append((args, countdown)))
    result = tasks.sync_source_task.run(handbook.pk)
    assert result["waiting"] and later == [((handbook.pk,), tasks.OWNER_WAIT_SECONDS)]
    assert 0 < tasks.OWNER_WAIT_SECONDS < 60  # well inside the broker's visibility timeout
