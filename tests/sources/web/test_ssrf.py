"""The SSRF guard, with SOURCES_ALLOW_PRIVATE off: what a user must not make the server fetch, and
what the refusal says (never what a name resolves to: that is for the server's log)."""

from __future__ import annotations

import ipaddress
import logging

import pytest

from outbound import addresses
from sources.web.fetch import FetchError, fetch
from tests.sources.http_site import Page


@pytest.fixture
def guarded(settings):
    settings.SOURCES_ALLOW_PRIVATE = False
    return settings


@pytest.fixture
def local_is_public(monkeypatch):
    """Treats 127.0.0.1 (the test server) as a public address, so a first hop can be allowed."""
    original = addresses.refusal
    monkeypatch.setattr(addresses, "refusal", lambda a: None if str(a) == "127.0.0.1" else original(a))


@pytest.mark.parametrize("url, shown, kind", [
    ("http://127.0.0.1:5432/", "127.0.0.1", "a loopback address"),
    ("http://[::1]/", "::1", "a loopback address"),
    ("http://0x7f000001/", "0x7f000001 (127.0.0.1)", "a loopback address"),
    ("http://2130706433/", "2130706433 (127.0.0.1)", "a loopback address"),
    ("http://0177.0.0.1/", "0177.0.0.1 (127.0.0.1)", "a loopback address"),
    ("http://127.1/", "127.1 (127.0.0.1)", "a loopback address"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254", "a link-local address"),
    ("http://10.1.2.3/", "10.1.2.3", "a private address"),
    ("http://192.168.0.1/", "192.168.0.1", "a private address"),
    ("http://172.16.5.4/", "172.16.5.4", "a private address"),
    ("http://100.64.0.1/", "100.64.0.1", "not a public address"),
    ("http://0.0.0.0/", "0.0.0.0", "a private address"),
    ("http://224.0.0.1/", "224.0.0.1", "a multicast address"),
    ("http://240.0.0.1/", "240.0.0.1", "a private address"),
    ("http://[::ffff:127.0.0.1]/", "::ffff:127.0.0.1", "a loopback address wrapped in IPv6 (127.0.0.1)"),
    ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254", "a link-local address"),
    ("http://[64:ff9b::a00:1]/", "64:ff9b::a00:1", "a private address wrapped in IPv6 (10.0.0.1)"),
    ("http://[fe80::1]/", "fe80::1", "a link-local address"),
    ("http://[fc00::1]/", "fc00::1", "a private address"),
    ("http://[ff02::1]/", "ff02::1", "a multicast address"),
])
def test_non_public_addresses_are_refused(guarded, url, shown, kind, caplog):
    caplog.set_level(logging.INFO, logger="sources.web.hops")
    with pytest.raises(FetchError) as caught:
        fetch(url)
    host = shown.split(" (")[0]
    assert caught.value.reason == f"refused: {host} is not a public address (set SOURCES_ALLOW_PRIVATE=1 to allow)"
    assert f"refused: {shown} is {kind}" in caplog.text  # the operator's log says which address and why


def refused(host: str) -> str:
    return rf"^refused: {host} is not a public address \(set SOURCES_ALLOW_PRIVATE=1 to allow\)$"


def test_localhost_is_refused(guarded):
    with pytest.raises(FetchError, match=refused("localhost")):
        fetch("http://localhost:8000/admin/")


def test_a_public_looking_name_that_resolves_to_loopback_is_refused_without_saying_where_it_leads(
        guarded, resolve_to, caplog):
    caplog.set_level(logging.INFO, logger="sources.web.hops")
    resolve_to({"docs.localtest.me": ["127.0.0.1"]})
    with pytest.raises(FetchError, match=refused("docs.localtest.me")) as caught:
        fetch("http://docs.localtest.me/")
    assert "127.0.0.1" not in caught.value.reason and "loopback" not in caught.value.reason
    assert "docs.localtest.me (127.0.0.1) is a loopback address" in caplog.text


def test_a_name_with_one_private_answer_among_public_ones_is_refused(guarded, resolve_to):
    resolve_to({"mixed.example": ["93.184.216.34", "10.0.0.7"]})
    with pytest.raises(FetchError, match=refused("mixed.example")):
        fetch("http://mixed.example/")


def test_a_redirect_to_a_refused_address_is_refused(guarded, local_is_public, site):
    site.pages["/go"] = Page(status=302, location="http://169.254.169.254/latest/meta-data/iam/")
    with pytest.raises(FetchError, match=refused("169.254.169.254")):
        fetch(site.url("/go"))
    assert "/go" in site.paths_requested()  # the first hop was allowed and sent


def test_a_redirect_to_a_name_resolving_to_a_refused_address_is_refused(guarded, local_is_public, resolve_to,
                                                                         site):
    resolve_to({"allowed.example": ["127.0.0.1"], "internal.example": ["192.168.10.10"]})
    site.pages["/go"] = Page(status=301, location="http://internal.example/")
    with pytest.raises(FetchError, match=refused("internal.example")) as caught:
        fetch(f"http://allowed.example:{site.port}/go")
    assert "192.168" not in caught.value.reason


def test_the_connection_goes_to_the_checked_address_not_a_new_lookup(guarded, local_is_public, resolve_to, site,
                                                                      monkeypatch):
    """DNS rebinding: the name is resolved once per hop, and the socket connects to that answer.

    rebind.example exists only in the injected resolver: a second lookup by the system would fail,
    and a second answer from the injected one would be refused."""
    answers = iter([["127.0.0.1"], ["127.0.0.1"], ["10.0.0.1"], ["10.0.0.1"]])
    calls = []

    def rebinding(host, port):
        calls.append(host)
        return next(answers)

    from sources.web import hops

    monkeypatch.setattr(hops, "resolver", rebinding)
    site.pages["/"] = "<p>public</p>"
    fetched = fetch(f"http://rebind.example:{site.port}/")
    assert fetched.body == b"<p>public</p>"
    assert calls == ["rebind.example", "rebind.example"]  # robots.txt's hop and the page's hop, once each
    assert site.requests[-1].headers["Host"] == f"rebind.example:{site.port}"


def test_allowed_when_the_operator_says_so(settings, site):
    settings.SOURCES_ALLOW_PRIVATE = True
    site.pages["/"] = "<p>intranet</p>"
    assert fetch(site.url("/")).body == b"<p>intranet</p>"


@pytest.mark.parametrize("address", ["93.184.216.34", "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8"])
def test_public_addresses_pass(address):
    assert addresses.refusal(ipaddress.ip_address(address)) is None


def test_an_unresolvable_name_is_a_clear_error(guarded, resolve_to):
    resolve_to({})
    with pytest.raises(FetchError, match=r"cannot resolve nowhere.invalid"):
        fetch("http://nowhere.invalid/")


def test_a_dns_lookup_that_never_answers_is_given_up(monkeypatch):
    import socket
    import time

    monkeypatch.setattr(socket, "getaddrinfo", lambda *args, **kwargs: time.sleep(3))
    started = time.monotonic()
    with pytest.raises(OSError, match=r"no answer from DNS within 0.2 s"):
        addresses.system_resolver("slow-dns.example", 80, timeout=0.2)
    assert time.monotonic() - started < 1


def test_the_next_checked_address_is_tried_when_one_refuses_connections(resolve_to, site):
    resolve_to({"two.example": ["127.0.0.2", "127.0.0.1"]})  # the server listens on 127.0.0.1 only
    site.pages["/"] = "<p>second address</p>"
    assert fetch(f"http://two.example:{site.port}/").body == b"<p>second address</p>"
