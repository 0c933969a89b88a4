"""A document's passage by character range: the page that search results link to (the MCP tools'
`url`s; an answer's citation has its own page, chat.views.passage, which also says why)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from accounts.quotas import wait_seconds
from chat.passages import Highlight, PassageQuota, highlighted_document, window_for
from corpus.models import Document
from corpus.permissions import Denied, document_for
from lib.numbers import parse_int


def passage_throttled(request: HttpRequest) -> HttpResponse | None:
    """A 429 (with Retry-After) when the user has asked for too many passage pages lately, else None."""
    wait = wait_seconds(PassageQuota, request)
    if wait is None:
        return None
    response = HttpResponse(f"Too many passage pages: try again in {wait} seconds.", status=429,
                            content_type="text/plain")
    response["Retry-After"] = str(wait)
    return response


def passage_body(request: HttpRequest, document: Document, highlight: Highlight) -> dict:
    """The template context of a passage page's document: the window around the highlight, or the
    part `?part=N` (chat.passages.window_for), with the links to the parts before and after it."""
    window = window_for(document.text, highlight, parse_int(request.GET.get("part"), minimum=0))

    def link(part: int | None) -> str | None:
        if part is None:
            return None
        query = request.GET.copy()
        query["part"] = str(part)
        return f"?{query.urlencode()}"

    around = request.GET.copy()
    around.pop("part", None)
    return {"body": highlighted_document(document, highlight, window), "window": window,
            "length": len(document.text), "earlier_url": link(window.earlier), "later_url": link(window.later),
            "passage_url": f"?{around.urlencode()}#passage" if "part" in request.GET else None}


@require_GET
@login_required
def document_passage(request: HttpRequest, pk: int) -> HttpResponse:
    """Document `pk` with the characters [start, end) of `?start=&end=` highlighted (the page
    scrolls to them), in a window around them (`?part=N`: another part of the document). 404
    unless the user may read the document; 400 for a range that is not two offsets with start <
    end (an end past the text is cut to it); 429 past the user's PassageQuota."""
    try:
        document = document_for(request.user, pk)
    except Denied as denied:
        raise denied.http_error() from None
    throttled = passage_throttled(request)
    if throttled is not None:
        return throttled
    length = len(document.text)
    start = parse_int(request.GET.get("start"), maximum=length)
    end = parse_int(request.GET.get("end"))
    if start is None or end is None or end <= start:
        return HttpResponseBadRequest(f"Give ?start=&end= as character offsets, 0 <= start < end, start at most "
                                      f"{length} (the document's length).", content_type="text/plain")
    end = min(end, length)
    highlight = Highlight(segment=(start, end), support=())
    return render(request, "chat/document_passage.html", {
        "document": document, "start": start, "end": end, "page": document.page_at(start),
        **passage_body(request, document, highlight)})
