"""fetch() against a real local server: pages, validators, redirects, caps, robots.txt, pacing."""

from __future__ import annotations

import gzip
import threading
import time

import pytest

from sources.web import hops, pacing, robots
from sources.web.fetch import FetchError, fetch
from tests.sources.http_site import Page
from tests.sources.web.test_pacing import assert_slotted


def test_it_fetches_a_page_with_its_validators(site):
    site.pages["/docs/a"] = Page("<h1>A</h1>", last_modified="Wed, 01 Jan 2025 00:00:00 GMT")
    fetched = fetch(site.url("/docs/a"))
    assert fetched.url == site.url("/docs/a")
    assert (fetched.status, fetched.media_type, fetched.charset) == (200, "text/html", "utf-8")
    assert fetched.content_type == "text/html; charset=utf-8"  # what page_document reads the charset from
    assert fetched.body == b"<h1>A</h1>"
    assert fetched.etag == site.pages["/docs/a"].etag
    assert fetched.last_modified == "Wed, 01 Jan 2025 00:00:00 GMT"


def test_it_returns_none_when_the_page_has_not_changed(site):
    site.pages["/a"] = Page("<p>one</p>")
    first = fetch(site.url("/a"))
    assert fetch(site.url("/a"), etag=first.etag) is None
    assert fetch(site.url("/a"), last_modified=first.last_modified) is None
    site.pages["/a"] = Page("<p>two</p>")
    changed = fetch(site.url("/a"), etag=first.etag)
    assert changed.body == b"<p>two</p>" and changed.etag != first.etag
    assert site.requests[-1].headers["If-None-Match"] == first.etag


@pytest.mark.parametrize("status", [404, 410, 500])
def test_an_error_status_is_a_fetch_error_with_the_status(site, status):
    if status != 404:
        site.pages["/p"] = Page(status=status)
    with pytest.raises(FetchError) as caught:
        fetch(site.url("/p"))
    assert caught.value.reason == f"HTTP {status}"
    assert caught.value.status == status
    assert caught.value.gone is (status in (404, 410))


def test_redirects_are_followed_and_the_final_url_kept(site):
    site.pages["/old"] = Page(status=301, location="/mid")
    site.pages["/mid"] = Page(status=302, location=site.url("/new"))
    site.pages["/new"] = "<p>new</p>"
    assert fetch(site.url("/old")).url == site.url("/new")


def test_a_redirect_loop_is_refused(site):
    site.pages["/a"] = Page(status=302, location="/b")
    site.pages["/b"] = Page(status=302, location="/a")
    with pytest.raises(FetchError, match="redirect loop"):
        fetch(site.url("/a"))
    assert site.paths_requested().count("/a") == 1


def test_more_than_five_redirects_are_refused(site):
    for n in range(10):
        site.pages[f"/r{n}"] = Page(status=302, location=f"/r{n + 1}")
    site.pages["/r10"] = "<p>end</p>"
    with pytest.raises(FetchError, match=r"too many redirects \(more than 5\)"):
        fetch(site.url("/r0"))
    assert "/r6" not in site.paths_requested()


def test_an_oversized_body_is_refused_while_streaming(site, monkeypatch):
    monkeypatch.setattr(hops, "MAX_BYTES", 1024 * 1024)
    site.pages["/zeros"] = Page(endless=True)
    started = time.monotonic()
    with pytest.raises(FetchError) as caught:
        fetch(site.url("/zeros"))
    assert caught.value.reason == "too large: more than 1 MB"
    assert time.monotonic() - started < 5
    # The server could push a little past the cap into socket buffers, not megabytes more.
    time.sleep(0.2)
    assert site.streamed < 12 * 1024 * 1024


def test_a_declared_length_over_the_cap_is_refused_before_reading(site, monkeypatch):
    monkeypatch.setattr(hops, "MAX_BYTES", 2048)
    site.pages["/big"] = Page("x" * 5000)
    with pytest.raises(FetchError, match="too large: more than 2 KB"):
        fetch(site.url("/big"))


def test_a_gzip_bomb_is_refused(site, monkeypatch):
    monkeypatch.setattr(hops, "MAX_BYTES", 1024 * 1024)
    bomb = gzip.compress(bytes(50 * 1024 * 1024))
    site.pages["/bomb"] = Page(bomb, headers={"Content-Encoding": "gzip"})
    with pytest.raises(FetchError, match="too large: more than 1 MB once decompressed"):
        fetch(site.url("/bomb"))


def test_a_gzipped_page_is_decoded(site):
    site.pages["/z"] = Page(gzip.compress(b"<p>zipped</p>"), headers={"Content-Encoding": "gzip"})
    assert fetch(site.url("/z")).body == b"<p>zipped</p>"


def test_a_slow_drip_is_cut_at_the_total_timeout(site, monkeypatch):
    monkeypatch.setattr(hops, "RESPONSE_TIMEOUT", 1.5)
    site.pages["/slow"] = Page("<p>" + "x" * 100 + "</p>", drip_seconds=0.2)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"too slow: no complete answer within 1.5 s"):
        fetch(site.url("/slow"))
    assert time.monotonic() - started < 4


def test_an_unknown_content_type_is_refused(site):
    site.pages["/img"] = Page(b"\x89PNG....", content_type="image/x-unknown")
    with pytest.raises(FetchError, match="not a page or a document ragweb reads: image/x-unknown"):
        fetch(site.url("/img"))


def test_documents_the_parser_registry_reads_are_accepted(site):
    site.pages["/manual.pdf"] = Page(b"%PDF-1.4 ...", content_type="application/pdf")
    site.pages["/sitemap.xml"] = Page(b"<urlset/>", content_type="text/xml")
    assert fetch(site.url("/manual.pdf")).content_type == "application/pdf"
    assert fetch(site.url("/sitemap.xml")).content_type == "text/xml"


def test_it_sends_the_user_agent(site, settings):
    settings.SOURCES_USER_AGENT = "ragweb/1.0 (+https://docs.example.org)"
    site.pages["/"] = "<p>x</p>"
    fetch(site.url("/"))
    assert {r.headers["User-Agent"] for r in site.requests} == {"ragweb/1.0 (+https://docs.example.org)"}


def test_robots_txt_is_obeyed_and_read_once(site):
    site.pages["/robots.txt"] = Page("User-agent: *\nDisallow: /private/\n", content_type="text/plain")
    site.pages["/private/x"] = "<p>secret</p>"
    site.pages["/public"] = "<p>open</p>"
    with pytest.raises(FetchError, match="disallowed by robots.txt"):
        fetch(site.url("/private/x"))
    assert fetch(site.url("/public")).body == b"<p>open</p>"
    assert "/private/x" not in site.paths_requested()
    assert site.paths_requested().count("/robots.txt") == 1


def test_robots_txt_for_our_agent_only(site):
    site.pages["/robots.txt"] = Page("User-agent: ragweb\nDisallow: /\n\nUser-agent: *\nAllow: /\n",
                                     content_type="text/plain")
    site.pages["/a"] = "<p>a</p>"
    with pytest.raises(FetchError, match="disallowed by robots.txt"):
        fetch(site.url("/a"))


def test_a_huge_robots_txt_is_read_up_to_its_caps_and_each_url_is_checked_once(site, monkeypatch):
    """A 6 MB robots.txt of rules: only its first MAX_BYTES and MAX_RULES rules are parsed, so a URL
    costs what it costs with a normal one, and a URL asked about again is not checked again."""
    from urllib.robotparser import RobotFileParser

    rules = "".join(f"Disallow: /nowhere/{n:07d}/\n" for n in range(200_000))
    site.pages["/robots.txt"] = Page("User-agent: *\nDisallow: /private/\n" + rules + "Disallow: /late/\n",
                                     content_type="text/plain")
    site.pages["/a"] = "<p>a</p>"
    site.pages["/late/x"] = "<p>past the caps: ignored, as RFC 9309 allows</p>"
    checks = []
    real = RobotFileParser.can_fetch
    monkeypatch.setattr(RobotFileParser, "can_fetch", lambda self, agent, url: checks.append(url) or real(
        self, agent, url))

    with pytest.raises(FetchError, match="disallowed by robots.txt"):
        robots.check(site.url("/private/x"))
    for _ in range(3):
        assert robots.check(site.url("/a")) == 0.0
    assert robots.check(site.url("/late/x")) == 0.0
    assert checks == [site.url("/private/x"), site.url("/a"), site.url("/late/x")]
    parser, _ = robots.robots_for(site.url("/a"))
    kept = sum(len(entry.rulelines) for entry in [*parser.entries, parser.default_entry] if entry)
    assert kept == robots.MAX_RULES


def test_capped_lines_drop_a_line_cut_at_the_byte_cap_and_the_rules_past_the_cap():
    body = b"User-agent: *\n" + b"Disallow: /x/\n" * (robots.MAX_RULES + 5) + b"Sitemap: https://e.org/s.xml\n"
    lines = robots.capped_lines(body)
    assert lines[0] == "User-agent: *" and lines[-1] == "Sitemap: https://e.org/s.xml"
    assert sum(line.startswith("Disallow") for line in lines) == robots.MAX_RULES
    cut = robots.capped_lines(b"User-agent: *\n" + b"Disallow: /aaaa\n" * robots.MAX_BYTES)
    assert all(line in ("User-agent: *", "Disallow: /aaaa") for line in cut)


def test_an_unreadable_robots_txt_disallows_everything(site):
    site.pages["/robots.txt"] = Page(status=503)
    site.pages["/a"] = "<p>a</p>"
    with pytest.raises(FetchError, match=r"robots.txt cannot be read \(HTTP 503\)"):
        fetch(site.url("/a"))


def test_requests_to_one_host_are_spaced(site, monkeypatch):
    monkeypatch.setattr(pacing, "HOST_INTERVAL", 0.4)
    for n in range(3):
        site.pages[f"/{n}"] = f"<p>{n}</p>"
    threads = [threading.Thread(target=fetch, args=(site.url(f"/{n}"),)) for n in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    times = sorted(r.time for r in site.requests)  # robots.txt and the three pages
    assert len(times) == 4
    assert_slotted(times, interval=0.4)


def test_only_http_and_https(settings):
    for url in ("ftp://example.org/a", "file:///etc/passwd", "gopher://example.org/", "javascript:alert(1)"):
        with pytest.raises(FetchError, match="only http and https"):
            fetch(url)


def test_a_path_with_spaces_and_accents_is_sent_percent_encoded(site):
    site.pages["/guide%20d%C3%A9but?q=a%20b"] = "<p>ok</p>"
    assert fetch(site.url("/guide début?q=a b")).body == b"<p>ok</p>"


def test_the_header_charset_reaches_the_page_extraction(site):
    from sources.web.extract import page_document

    text = "Les tomates ont besoin d'eau deux fois par semaine en été, et plus souvent quand il fait chaud."
    site.pages["/fr"] = Page(f"<html><body><article><h1>Tomates</h1><p>{text}</p></article></body></html>"
                             .encode("iso-8859-1"), content_type="text/html; charset=ISO-8859-1")
    fetched = fetch(site.url("/fr"))
    assert fetched.content_type == "text/html; charset=ISO-8859-1"
    assert text in page_document(fetched.body, fetched.url, fetched.content_type).markdown


def test_an_international_host_name_is_resolved_and_sent_in_its_idna_form(site, resolve_to):
    resolve_to({"xn--bcher-kva.example": ["127.0.0.1"]})
    site.pages["/"] = "<p>Bücher</p>"
    assert fetch(f"http://bücher.example:{site.port}/").body == "<p>Bücher</p>".encode()
    assert site.requests[-1].headers["Host"] == f"xn--bcher-kva.example:{site.port}"


def test_robots_txt_crawl_delay_spaces_the_requests(site):
    site.pages["/robots.txt"] = Page("User-agent: *\nCrawl-delay: 1\n", content_type="text/plain")
    site.pages["/a"] = "<p>a</p>"
    site.pages["/b"] = "<p>b</p>"
    fetch(site.url("/a"))
    fetch(site.url("/b"))
    times = {r.path: r.time for r in site.requests}
    assert times["/b"] - times["/a"] >= 0.95  # (urllib.robotparser reads whole seconds only)
