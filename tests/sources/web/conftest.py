"""Web-source tests talk to a real local server (tests/sources/http_site.py) on 127.0.0.1, so they
allow private addresses; the tests of the refusals turn that off again."""

from __future__ import annotations

import pytest

from sources.web import hops, pacing, robots
from tests.sources.http_site import HttpSite


@pytest.fixture(autouse=True)
def web_settings(settings, monkeypatch):
    settings.SOURCES_ALLOW_PRIVATE = True
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 0)
    monkeypatch.setattr(hops, "RESPONSE_TIMEOUT", 10)
    robots.forget()
    yield settings
    robots.forget()


@pytest.fixture
def site():
    with HttpSite() as served:
        yield served


@pytest.fixture
def resolve_to(monkeypatch):
    """resolve_to({"docs.example.com": ["127.0.0.1"]}): names resolve to these addresses only."""

    def install(table: dict[str, list[str]]):
        def resolver(host: str, port: int) -> list[str]:
            if host not in table:
                raise OSError(f"unknown host {host}")
            return table[host]

        monkeypatch.setattr(hops, "resolver", resolver)

    return install
