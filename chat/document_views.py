"""A document's passage by character range: the page that search results link to (the MCP tools'
`url`s; an answer's citation has its own page, chat.views.passage, which also says why)."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import render
from django.views.decorators.http import require_GET

from chat.passages import Highlight, highlighted_document
from corpus.permissions import Denied, document_for
from lib.numbers import parse_int


@require_GET
@login_required
def document_passage(request: HttpRequest, pk: int) -> HttpResponse:
    """Document `pk` with the characters [start, end) of `?start=&end=` highlighted (the page
    scrolls to them). 404 unless the user may read the document; 400 for a range that is not two
    offsets with start < end (an end past the text is cut to it)."""
    try:
        document = document_for(request.user, pk)
    except Denied as denied:
        raise denied.http_error() from None
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
        "body": highlighted_document(document, highlight)})
