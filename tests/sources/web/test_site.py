"""site_pages(): a site's pages from its sitemap, or by a bounded crawl, against a real local server."""

from __future__ import annotations

import gzip

import pytest

from sources.web import sitemaps
from sources.web.fetch import FetchError
from sources.web.site import site_pages
from tests.sources.http_site import Page, sitemap


def html(*links: str, text: str = "Some text") -> str:
    anchors = "".join(f'<li><a href="{href}">link</a></li>' for href in links)
    return f"<html><body><p>{text}</p><ul>{anchors}</ul></body></html>"


def test_a_sitemap_url_lists_its_pages_on_the_same_host(site):
    u = site.url
    site.pages["/sitemap.xml"] = sitemap(u("/a"), u("/b#part"), u("/b"), "https://elsewhere.example/c", u("/d?x=1"))
    assert site_pages(u("/sitemap.xml"), max_pages=100, max_depth=3) == [u("/a"), u("/b"), u("/d?x=1")]


def test_a_sitemap_index_is_followed(site):
    u = site.url
    site.pages["/index.xml"] = sitemap(u("/s1.xml"), u("/s2.xml.gz"), index=True)
    site.pages["/s1.xml"] = sitemap(u("/a"), u("/b"))
    site.pages["/s2.xml.gz"] = Page(gzip.compress(sitemap(u("/c")).body), content_type="application/gzip")
    assert site_pages(u("/index.xml"), max_pages=100, max_depth=0) == [u("/a"), u("/b"), u("/c")]


def test_a_start_page_uses_the_sites_sitemap_within_its_path_prefix(site):
    u = site.url
    site.pages["/docs/"] = html("/docs/never-crawled")
    site.pages["/sitemap.xml"] = sitemap(u("/docs/"), u("/docs/intro"), u("/blog/post"), u("/docs/api/x"))
    assert site_pages(u("/docs/"), max_pages=100, max_depth=3) == [u("/docs/"), u("/docs/intro"), u("/docs/api/x")]
    assert "/docs/never-crawled" not in site.paths_requested()


def test_robots_txt_names_the_sitemap_and_its_disallowed_pages_are_left_out(site):
    u = site.url
    site.pages["/robots.txt"] = Page(f"User-agent: *\nDisallow: /private/\nSitemap: {u('/maps/pages.xml')}\n",
                                     content_type="text/plain")
    site.pages["/"] = html()
    site.pages["/maps/pages.xml"] = sitemap(u("/"), u("/a"), u("/private/b"))
    assert site_pages(u("/"), max_pages=100, max_depth=3) == [u("/"), u("/a")]
    assert "/sitemap.xml" not in site.paths_requested()


def test_max_pages_cuts_a_sitemap(site):
    u = site.url
    site.pages["/sitemap.xml"] = sitemap(*(u(f"/p{n}") for n in range(20)))
    pages = site_pages(u("/sitemap.xml"), max_pages=5, max_depth=3)
    assert pages == [u(f"/p{n}") for n in range(5)]
    assert pages.notes == ["stopped at 5 pages (max_pages)"]


def test_without_a_sitemap_it_crawls_breadth_first_within_the_prefix(site):
    u = site.url
    site.pages["/docs/"] = html("intro", "/docs/guide/#top", "/docs/guide/", "/blog/", "https://elsewhere.example/",
                                "mailto:x@example.org", "/docs/style.css", "/docs/manual.pdf")
    site.pages["/docs/intro"] = html("/docs/", "/docs/deep/1")
    site.pages["/docs/guide/"] = html("/docs/guide/2")
    site.pages["/docs/guide/2"] = html("/docs/guide/3")
    site.pages["/docs/deep/1"] = html()
    site.pages["/docs/manual.pdf"] = Page(b"%PDF-1.4", content_type="application/pdf")
    site.pages["/blog/"] = html()
    pages = site_pages(u("/docs/"), max_pages=100, max_depth=2)
    assert pages == [u("/docs/"), u("/docs/intro"), u("/docs/guide/"), u("/docs/manual.pdf"), u("/docs/deep/1"),
                     u("/docs/guide/2")]
    requested = site.paths_requested()
    assert "/blog/" not in requested and "/docs/guide/3" not in requested and "/docs/style.css" not in requested
    assert requested.count("/docs/guide/") == 1


def test_a_crawl_stops_at_max_pages(site):
    u = site.url
    site.pages["/"] = html(*(f"/p{n}" for n in range(30)))
    for n in range(30):
        site.pages[f"/p{n}"] = html()
    pages = site_pages(u("/"), max_pages=4, max_depth=5)
    assert pages == [u("/"), u("/p0"), u("/p1"), u("/p2")]
    assert pages.notes == ["stopped at 4 pages (max_pages)"]
    assert len([p for p in site.paths_requested() if p.startswith("/p")]) == 3


def test_a_crawl_obeys_robots_txt_and_notes_failed_pages(site):
    u = site.url
    site.pages["/robots.txt"] = Page("User-agent: *\nDisallow: /secret\n", content_type="text/plain")
    site.pages["/"] = html("/secret/x", "/missing", "/ok")
    site.pages["/ok"] = html()
    site.pages["/secret/x"] = html()
    pages = site_pages(u("/"), max_pages=10, max_depth=2)
    assert pages == [u("/"), u("/ok")]
    assert "/secret/x" not in site.paths_requested()
    assert f"{u('/missing')}: HTTP 404" in pages.notes
    assert any(note.startswith(f"{u('/secret/x')}: disallowed by robots.txt") for note in pages.notes)


def test_an_unreachable_start_url_is_a_fetch_error(site):
    with pytest.raises(FetchError, match="HTTP 404"):
        site_pages(site.url("/nothing-here"), max_pages=10, max_depth=2)


def test_a_sitemap_that_lists_nothing_fetchable_says_why(site):
    site.pages["/sitemap.xml"] = Page(b'<?xml version="1.0"?><sitemapindex xmlns="x"><sitemap><loc>'
                                      + site.url("/gone.xml").encode() + b"</loc></sitemap></sitemapindex>",
                                      content_type="application/xml")
    with pytest.raises(FetchError, match="lists no page that can be fetched: sitemap .*/gone.xml: HTTP 404"):
        site_pages(site.url("/sitemap.xml"), max_pages=10, max_depth=2)


# --- sitemap bombs: each limit stops reading with a note ---

def test_nesting_deeper_than_the_limit_is_not_followed(site):
    u = site.url
    for level in range(6):
        site.pages[f"/level{level}.xml"] = sitemap(u(f"/level{level + 1}.xml"), u(f"/leaf{level}.xml"), index=True)
        site.pages[f"/leaf{level}.xml"] = sitemap(u(f"/page{level}"))
    pages = site_pages(u("/level0.xml"), max_pages=100, max_depth=3)
    assert pages == [u("/page0"), u("/page1"), u("/page2")]
    assert any("nested more than 3 levels deep" in note for note in pages.notes)
    assert "/level5.xml" not in site.paths_requested()


def test_a_gzip_bomb_sitemap_is_not_inflated_past_the_limit(site, monkeypatch):
    monkeypatch.setattr(sitemaps, "MAX_INFLATED_BYTES", 1024 * 1024)
    u = site.url
    bomb = gzip.compress(b'<?xml version="1.0"?><urlset>' + b" " * (30 * 1024 * 1024) + b"</urlset>")
    site.pages["/index.xml"] = sitemap(u("/bomb.xml.gz"), u("/fine.xml"), index=True)
    site.pages["/bomb.xml.gz"] = Page(bomb, content_type="application/x-gzip")
    site.pages["/fine.xml"] = sitemap(u("/a"))
    pages = site_pages(u("/index.xml"), max_pages=100, max_depth=3)
    assert pages == [u("/a")]
    assert any("more than 1 MB once decompressed (a gzip bomb?)" in note for note in pages.notes)


def test_too_many_sitemap_files_stop_reading(site, monkeypatch):
    monkeypatch.setattr(sitemaps, "MAX_FILES", 4)
    u = site.url
    site.pages["/index.xml"] = sitemap(*(u(f"/s{n}.xml") for n in range(10)), index=True)
    for n in range(10):
        site.pages[f"/s{n}.xml"] = sitemap(u(f"/p{n}"))
    pages = site_pages(u("/index.xml"), max_pages=100, max_depth=3)
    assert pages == [u("/p0"), u("/p1"), u("/p2")]  # the index is the first of the 4 files
    assert "more than 4 sitemap files: the rest were not read" in pages.notes


def test_too_many_entries_in_one_file_are_cut(site, monkeypatch):
    monkeypatch.setattr(sitemaps, "MAX_ENTRIES", 10)
    u = site.url
    site.pages["/sitemap.xml"] = sitemap(*(u(f"/p{n}") for n in range(50)))
    pages = site_pages(u("/sitemap.xml"), max_pages=100, max_depth=3)
    assert pages == [u(f"/p{n}") for n in range(10)]
    assert any("more than 10 entries" in note for note in pages.notes)


def test_an_entity_bomb_is_not_expanded(site):
    u = site.url
    laughs = (b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">'
              + b"".join(b'<!ENTITY lol%d "%s">' % (n, (b"&lol%d;" % (n - 1)) * 10) for n in range(1, 10))
              + b"]><urlset><url><loc>" + u("/a").encode() + b"&lol9;</loc></url></urlset>")
    site.pages["/bomb.xml"] = Page(laughs, content_type="application/xml")
    site.pages["/index.xml"] = sitemap(u("/bomb.xml"), u("/fine.xml"), index=True)
    site.pages["/fine.xml"] = sitemap(u("/b"))
    pages = site_pages(u("/index.xml"), max_pages=100, max_depth=3)
    assert pages == [u("/b")]
    assert any("declares a DOCTYPE (entities are not allowed in sitemaps): not read" in n for n in pages.notes)


def test_max_depth_zero_lists_the_start_page_only(site):
    site.pages["/"] = html("/a", "/b")
    site.pages["/a"] = html()
    assert site_pages(site.url("/"), max_pages=10, max_depth=0) == [site.url("/")]
    assert "/a" not in site.paths_requested()


def test_a_start_url_that_redirects_is_crawled_from_where_it_lands(site):
    u = site.url
    site.pages["/start"] = Page(status=301, location="/docs/")
    site.pages["/docs/"] = html("/docs/a#x", "/other/")
    site.pages["/docs/a"] = html()
    site.pages["/other/"] = html()
    assert site_pages(u("/start"), max_pages=10, max_depth=2) == [u("/docs/"), u("/docs/a")]


def test_a_page_of_many_links_queues_only_a_few_times_max_pages(site):
    u = site.url
    site.pages["/"] = html(*(f"/p{n}" for n in range(2000)))  # none of them exists: each would be a request
    pages = site_pages(u("/"), max_pages=5, max_depth=3)
    assert pages == [u("/")]
    assert len(site.requests) <= 2 + 5 * 4 + 100  # robots.txt, the start page, the queued links
    assert "stopped at 5 pages (max_pages)" in pages.notes
