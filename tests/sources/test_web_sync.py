"""Page and site sources against a real local HTTP server (tests/sources/http_site.py): pages
found, stored as Markdown with their URL as source, unchanged on 304, changed, and removed when
they disappear."""

from __future__ import annotations

import pytest

from corpus.models import Document
from sources import services
from sources.sync import source_sync
from sources.web import pacing, robots
from tests.sources.http_site import HttpSite, Page, sitemap

pytestmark = pytest.mark.django_db


def article(title: str, text: str) -> str:
    paragraphs = "".join(f"<p>{text} Sentence {n} of the article about {title.lower()}.</p>" for n in range(4))
    return (f"<html><head><title>{title}</title></head><body><nav><a href='/'>Home</a> | cookie banner</nav>"
            f"<main><article><h1>{title}</h1>{paragraphs}</article></main><footer>Footer links</footer></body></html>")


@pytest.fixture(autouse=True)
def web_settings(settings, monkeypatch):
    settings.SOURCES_ALLOW_PRIVATE = True
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 0)
    robots.forget()
    yield
    robots.forget()


@pytest.fixture
def site():
    with HttpSite() as served:
        served.pages["/docs/"] = article("Docs", "Start here.")
        served.pages["/docs/tides"] = article("Tides", "High tide comes twice a day.")
        served.pages["/docs/boats"] = article("Boats", "Rowing boats live in the north shed.")
        served.pages["/sitemap.xml"] = sitemap(served.url("/docs/"), served.url("/docs/tides"),
                                               served.url("/docs/boats"))
        yield served


def sync(source, capture):
    with capture(execute=True):
        result = source_sync(source_id=source.pk)
    source.refresh_from_db()
    return result


def test_a_site_is_synced_incrementally_and_a_removed_page_disappears(site, collection, eager_media,
                                                                      django_capture_on_commit_callbacks):
    source = services.source_create(collection=collection, kind="site", url=site.url("/docs/"), tags=["web"],
                                    sync=False)
    first = sync(source, django_capture_on_commit_callbacks)
    assert first.counts == {"new": 3, "changed": 0, "unchanged": 0, "removed": 0, "failed": 0}, first.failures
    tides = Document.objects.get(source=site.url("/docs/tides"))
    assert tides.status == Document.Status.READY and tides.title == "Tides"
    assert "twice a day" in tides.text and "cookie banner" not in tides.text and "Footer" not in tides.text
    assert tides.metadata["source_kind"] == "url" and tides.metadata["url"] == site.url("/docs/tides")
    assert tides.metadata["tags"] == ["web"]

    second = sync(source, django_capture_on_commit_callbacks)
    assert second.counts == {"new": 0, "changed": 0, "unchanged": 3, "removed": 0, "failed": 0}
    conditional = [r for r in site.requests if r.path == "/docs/tides"][-1]
    assert conditional.headers.get("If-None-Match")  # the ETag kept from the first sync was sent

    site.pages["/docs/tides"] = article("Tides", "Low tide uncovers the old wreck.")
    del site.pages["/docs/boats"]  # still in the sitemap: the page answers 404
    third = sync(source, django_capture_on_commit_callbacks)
    assert third.counts == {"new": 0, "changed": 1, "unchanged": 1, "removed": 1, "failed": 0}
    assert "old wreck" in Document.objects.get(pk=tides.pk).text
    assert not Document.objects.filter(source=site.url("/docs/boats")).exists()
    assert source.counts == third.counts


def test_a_page_source_that_fails_lists_the_reason(site, collection, django_capture_on_commit_callbacks):
    site.pages["/teapot"] = Page("<p>no</p>", status=500)
    source = services.source_create(collection=collection, kind="url", url=site.url("/teapot"), sync=False)
    result = sync(source, django_capture_on_commit_callbacks)
    assert result.failed == 1 and source.failures == [{"item": site.url("/teapot"), "reason": "HTTP 500"}]
    assert not Document.objects.exists()


def test_private_addresses_are_refused_at_fetch_time_once_the_setting_is_off(site, collection, settings,
                                                                           django_capture_on_commit_callbacks):
    source = services.source_create(collection=collection, kind="url", url=site.url("/docs/tides"), sync=False)
    settings.SOURCES_ALLOW_PRIVATE = False  # the operator turned it off after the source was added
    result = sync(source, django_capture_on_commit_callbacks)
    assert result.failed == 1 and "SOURCES_ALLOW_PRIVATE" in source.failures[0]["reason"]
    assert not site.requests and not Document.objects.exists()


def test_a_page_source_is_unchanged_on_304_and_removed_when_gone(site, collection, eager_media,
                                                                 django_capture_on_commit_callbacks):
    source = services.source_create(collection=collection, kind="url", url=site.url("/docs/tides"), sync=False)
    assert sync(source, django_capture_on_commit_callbacks).counts["new"] == 1
    document = Document.objects.get(source=site.url("/docs/tides"))
    assert document.title == "Tides" and document.status == Document.Status.READY

    second = sync(source, django_capture_on_commit_callbacks)
    assert second.counts == {"new": 0, "changed": 0, "unchanged": 1, "removed": 0, "failed": 0}
    assert site.requests[-1].path == "/docs/tides" and site.requests[-1].headers.get("If-None-Match")

    site.pages["/docs/tides"] = Page(status=410)
    gone = sync(source, django_capture_on_commit_callbacks)
    assert gone.counts == {"new": 0, "changed": 0, "unchanged": 0, "removed": 1, "failed": 0}
    assert not Document.objects.filter(pk=document.pk).exists()
