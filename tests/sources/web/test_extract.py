"""page_document(): a page's main text as Markdown, without its navigation, footer or cookie banner."""

from __future__ import annotations

import pytest

from corpus.ingest.parse import limits
from corpus.ingest.parse.base import ParseError
from sources.web.extract import page_document

ARTICLE = """<!doctype html><html><head><meta charset="utf-8"><title>Tomato care | Garden site</title></head><body>
<header><nav><ul><li><a href="/">Home</a></li><li><a href="/shop">Shop our seeds</a></li>
<li><a href="/about">About the garden team</a></li></ul></nav></header>
<div id="cookie-banner" class="cookie-consent">We use cookies to improve your experience on this site.
<button>Accept all cookies</button></div>
<main><article><h1>Growing tomatoes</h1>
<p>Tomatoes need water twice a week, more often in hot weather. Read <a href="/soil">the soil guide</a>
for details on compost and mulch before you plant them out.</p>
<h2>Pruning</h2>
<p>Remove the suckers that grow between the stem and the branches, so the plant puts its energy into fruit.</p>
<h3>When to prune</h3>
<p>Prune in the morning when the plant is dry, every week through the summer season.</p>
</article></main>
<footer><p>Copyright 2026 Garden site. All rights reserved.</p><a href="/privacy">Privacy policy</a></footer>
</body></html>"""


def test_it_keeps_the_main_text_with_its_headings():
    page = page_document(ARTICLE.encode(), "https://garden.example/tomatoes", "text/html")
    assert page.title == "Tomato care | Garden site"  # the page's <title>, as for an uploaded .html file
    lines = page.markdown.splitlines()
    assert "# Growing tomatoes" in lines
    assert "## Pruning" in lines
    assert "### When to prune" in lines
    assert "Tomatoes need water twice a week" in page.markdown
    # A link keeps its text, not its address.
    assert "Read the soil guide for details on compost" in page.markdown
    assert "/soil" not in page.markdown


def test_it_drops_navigation_footer_and_cookie_banner():
    markdown = page_document(ARTICLE.encode(), "https://garden.example/tomatoes", "text/html").markdown
    for chrome in ("Shop our seeds", "About the garden team", "cookies", "Copyright", "Privacy policy"):
        assert chrome not in markdown


def test_the_http_charset_decodes_the_page():
    html = ARTICLE.replace('<meta charset="utf-8">', "").replace("twice a week", "deux fois par semaine, à l'été")
    body = html.encode("iso-8859-1")
    page = page_document(body, "https://garden.example/fr", "text/html; charset=iso-8859-1")
    assert "deux fois par semaine, à l'été" in page.markdown
    assert page_document(body, "https://garden.example/fr", "text/html", charset="iso-8859-1").markdown == \
        page.markdown


def test_the_meta_charset_decodes_the_page_without_a_header_charset():
    html = ARTICLE.replace('<meta charset="utf-8">', '<meta http-equiv="Content-Type" '
                           'content="text/html; charset=windows-1251">').replace("twice a week", "дважды в неделю")
    page = page_document(html.encode("windows-1251"), "https://garden.example/ru", "text/html")
    assert "дважды в неделю" in page.markdown


def test_the_title_comes_from_the_page_when_there_is_no_heading():
    html = ("<html><head><title>Release notes</title></head><body><article><p>Version 2 adds sources: pages, "
            "sites and folders kept in sync, each with its own schedule and counts.</p>"
            "<p>Version 2 also refuses private addresses unless the operator allows them.</p></article></body></html>")
    page = page_document(html.encode(), "https://example.org/notes", "text/html")
    assert page.title == "Release notes"
    assert "Version 2 adds sources" in page.markdown


@pytest.mark.parametrize("body, message", [
    (b"", "is empty"),
    (b"   \n ", "is empty"),
    (b"<html><body></body></html>", "has no main text"),
    (b"\x00\x01\x02binary" * 100, "binary data"),
])
def test_an_empty_or_unreadable_page_is_a_clear_error(body, message):
    with pytest.raises(ParseError, match=message):
        page_document(body, "https://example.org/x", "text/html")


def test_a_markup_bomb_is_refused_before_parsing(settings, monkeypatch):
    monkeypatch.setattr(limits, "MAX_MARKUP_ELEMENTS", 1000)
    with pytest.raises(ParseError, match="more than 1,000 markup elements"):
        page_document(b"<html><body>" + b"<div>" * 5000 + b"</body></html>", "https://example.org/x", "text/html")


def test_a_short_page_keeps_its_structure_and_drops_its_navigation():
    html = ("<html><head><title>Setup</title></head><body><nav><ul><li><a href='/'>Home</a></li>"
            "<li><a href='/docs'>Docs</a></li></ul></nav><main><h2>Setup</h2><p>Set the port.</p>"
            "<ul><li>one</li><li>two</li></ul><pre><code>make run\nmake test</code></pre></main></body></html>")
    markdown = page_document(html.encode(), "https://example.org/setup", "text/html").markdown
    assert "## Setup" in markdown.splitlines()
    assert "- one\n- two" in markdown
    assert "make run\nmake test" in markdown
    assert "Home" not in markdown and "Docs" not in markdown


def test_a_generated_manuals_headings_are_kept():
    """GNU time's texinfo manual: trafilatura alone drops all its <h2>/<h3>."""
    from tests.conftest import ROOT

    body = (ROOT / "chat/evaluation/data/html-guides/docs/gnu-time.html").read_bytes()
    page = page_document(body, "https://www.gnu.org/software/time/manual/time.html", "text/html")
    lines = page.markdown.splitlines()
    assert page.title == "Measuring Program Resource Use"
    for heading in ("## 1 Measuring Program Resource Use", "### 1.1 Setting the Output Format",
                    "### 1.2 The Format String", "### 1.3 Redirecting Output"):
        assert heading in lines
    assert "ragwebheading" not in page.markdown
    # The text under a heading follows it.
    after = page.markdown.split("### 1.1 Setting the Output Format", 1)[1]
    assert after.lstrip().startswith("`time` uses a *format string*")


def test_a_permalink_sign_is_not_part_of_the_heading():
    html = ("<html><body><article><h1>Models<a class='headerlink' href='#models'>¶</a></h1><p>A model is the single, "
            "definitive source of information about your data, with the fields and behaviours you store.</p>"
            "<h2>Fields<a class='headerlink' href='#fields'>¶</a></h2><p>The most important part of a model is "
            "the list of database fields it defines, each a class attribute.</p></article></body></html>")
    page = page_document(html.encode(), "https://docs.example.org/models", "text/html")
    assert page.title == "Models"
    assert "## Fields" in page.markdown.splitlines()


def test_without_a_title_it_is_the_main_texts_h1_not_the_sites_name_in_its_header():
    html = ARTICLE.replace("<header>", "<header><h1>Garden site</h1>").replace(
        "<title>Tomato care | Garden site</title>", "")
    assert page_document(html.encode(), "https://garden.example/tomatoes", "text/html").title == "Growing tomatoes"


def test_a_web_page_and_the_same_page_uploaded_get_the_same_title():
    from corpus.ingest.parse.htmltext import parse_html

    for html in (ARTICLE, ARTICLE.replace("<title>Tomato care | Garden site</title>", "")):
        uploaded = parse_html(html.encode())[2]
        assert page_document(html.encode(), "https://garden.example/tomatoes", "text/html").title == uploaded


def test_a_page_without_a_title_or_h1_is_named_by_its_url():
    html = ("<html><body><article><p>Version 2 adds sources: pages, sites and folders kept in sync, each with "
            "its own schedule.</p></article></body></html>")
    assert page_document(html.encode(), "https://example.org/notes/release-2.html", "text/html").title == "release-2"
    assert page_document(html.encode(), "https://example.org/", "text/html").title == "example.org"


def test_the_stored_page_starts_with_its_title():
    from sources.kinds.web import page_markdown

    assert page_markdown("Tomato care", "# Growing tomatoes\n\nWater them.").startswith(
        "# Tomato care\n\n# Growing tomatoes\n")
    stored = page_markdown("Growing tomatoes", "# Growing tomatoes\n\nWater them.")
    assert stored == "# Growing tomatoes\n\nWater them.\n"
