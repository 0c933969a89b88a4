"""Markdown → sanitized HTML. Everything shown from a document or an LLM goes through here, so
nothing in them can run script: raw HTML is allowed by Markdown but then cleaned by nh3 with a
small allow-list (no on* attributes, no style, no javascript: URLs, no script/style/iframe).

Angle-bracketed text that is no HTML element ("<implementations-keywords>", "<book-title>",
"<file>") is text a document or an answer means to show: it is escaped and shown as written,
never taken for a tag and removed (as_text_unless_html)."""

from __future__ import annotations

import re

import markdown as markdown_lib
import nh3
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

from chat.answering.citations import CITATION

ALLOWED_TAGS = {
    "a", "abbr", "b", "blockquote", "br", "code", "dd", "del", "div", "dl", "dt", "em", "h1", "h2", "h3",
    "h4", "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup",
    "table", "tbody", "td", "tfoot", "th", "thead", "tr", "ul",
}
ALLOWED_ATTRIBUTES = {
    "a": {"href", "title"},
    "abbr": {"title"},
    "td": {"align"},
    "th": {"align"},
    "ol": {"start"},
}
# No <img>: an image URL written by an LLM can leak data to another site when the page loads it.
# Tags removed together with their content (the rest are unwrapped and keep their text).
DROPPED_WITH_CONTENT = {"script", "style", "iframe", "object", "embed", "template", "noscript", "textarea"}
URL_SCHEMES = {"http", "https", "mailto"}
_EXTENSIONS = ["fenced_code", "tables", "sane_lists"]
# The elements of HTML (WHATWG, obsolete ones included) and the roots of inline SVG and MathML:
# a "<name>" of any other name is text.
HTML_ELEMENTS = frozenset(
    "a abbr acronym address area article aside audio b base basefont bdi bdo bgsound big blink blockquote body "
    "br button canvas caption center cite code col colgroup data datalist dd del details dfn dialog dir div dl "
    "dt em embed fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header "
    "hgroup hr html i iframe image img input ins isindex kbd keygen label legend li link listing main map mark "
    "marquee math menu menuitem meta meter multicol nav nextid nobr noembed noframes noscript object ol "
    "optgroup option output p param picture plaintext pre progress q rb rp rt rtc ruby s samp script search "
    "section select slot small source spacer span strike strong style sub summary sup svg table tbody td "
    "template textarea tfoot th thead time title tr track tt u ul var video wbr xmp".split())
# A start or end tag's name as it opens ("<name", "</name"), up to where its name ends.
_TAG_NAME = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9:_.-]*)(?=[\s/>]|$)")


def as_text_unless_html(html: str) -> str:
    """`html` with the "<" of every tag whose name is no HTML element written "&lt;": such a
    tag is text in angle brackets ("<implementations-keywords>"), shown as written."""
    def escape_unknown(match: re.Match) -> str:
        return match.group(0) if match.group(2).lower() in HTML_ELEMENTS else "&lt;" + match.group(0)[1:]

    return _TAG_NAME.sub(escape_unknown, html)


def sanitize_html(html: str) -> str:
    """Clean an HTML fragment with the allow-list; links get rel="noopener noreferrer"."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        clean_content_tags=DROPPED_WITH_CONTENT,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
        strip_comments=True,
    )


def render_markdown(text: str) -> SafeString:
    """Markdown text → sanitized HTML, safe to insert into a page."""
    html = markdown_lib.markdown(text or "", extensions=_EXTENSIONS, output_format="html")
    return mark_safe(sanitize_html(as_text_unless_html(html)))  # noqa: S308 — cleaned by nh3 just above


# Splits sanitized HTML into tags and text: nh3 escapes < and > in attribute values and text, so
# a tag ends at the first >.
TAG_OR_TEXT = re.compile(r"(<[^>]*>)")


def link_citations(html: str, urls: dict[int, str]) -> str:
    """Turn "[n]" (and "[1, 2]") in the text of sanitized HTML into links to the cited passages.

    Only numbers present in `urls` become links; markup (tags, attribute values) is left alone.
    """
    def replace(match: re.Match) -> str:
        numbers = [int(part) for part in match.group(1).split(",")]
        if not all(n in urls for n in numbers):
            return match.group(0)
        return "".join(
            f'<a class="cite" href="{escape(urls[n])}" data-n="{n}">[{n}]</a>' for n in numbers)

    parts = TAG_OR_TEXT.split(html)
    inside_code = 0
    for i, part in enumerate(parts):
        if part.startswith("<"):
            lowered = part.lower()
            if lowered.startswith(("<code", "<pre")):
                inside_code += 1
            elif lowered.startswith(("</code", "</pre")):
                inside_code = max(0, inside_code - 1)
            continue
        if not inside_code:
            parts[i] = CITATION.sub(replace, part)
    return "".join(parts)
