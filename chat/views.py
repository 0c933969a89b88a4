"""The chat page: conversations, asking (streamed with JS, a plain POST + redirect without), the
stop button and the cited passage view."""

from __future__ import annotations

import logging
from collections.abc import Iterator

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.core.exceptions import RequestDataTooBig
from django.db import DataError, InterfaceError, OperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_GET, require_POST

from chat import questions
from chat.answering.citations import citation_url, cited_numbers
from chat.document_views import passage_body, passage_throttled
from chat.errors import log_failure, server_failure_message
from chat.export import answer_markdown
from chat.feedback import feedback_documents
from chat.filter_form import MEDIA_TYPE_CHOICES, filters_from_post, filters_summary
from chat.markdown import link_citations, render_markdown
from chat.models import Conversation, Message
from chat.passages import chunk_similarities, highlight_for
from chat.questions import InvalidQuestion, clean_question
from chat.relevance_chart import relevance_svg
from chat.retrieval.filters import FilterError
from chat.selectors import listed_conversations
from chat.services import (
    CannotRegenerate,
    conversation_start,
    message_ask,
    message_record_failure,
    message_regenerate,
    message_request_stop,
    run_to_end,
)
from chat.sse import sse_event, sse_response
from chat.throttles import ask_wait
from corpus import sharing
from corpus.models import Document
from corpus.permissions import Denied, collection_for, document_for, readable_collections
from lib.numbers import parse_int

logger = logging.getLogger(__name__)

def answer_html(message: Message) -> str:
    """The answer as sanitized HTML with its [n] linked to the passages."""
    urls = {c["n"]: citation_url(message.pk, c["n"]) for c in message.citations}
    return link_citations(str(render_markdown(message.content)), urls)


def sources_of(message: Message) -> list[dict]:
    """The sources listed under an answer: those it cites (none when it cites none)."""
    cited = cited_numbers(message.content)
    chosen = [c for c in message.citations if c["n"] in cited]
    return [{**c, "url": citation_url(message.pk, c["n"])} for c in chosen]


def message_context(request: HttpRequest, message: Message, *, latest: bool = False,
                    feedback_open: bool = False) -> dict:
    """What the message partial shows; for an answer also its actions (copy, regenerate when it is
    the `latest` answer, rating)."""
    context = {"msg": message, "html": "", "sources": []}
    if message.role == Message.Role.ASSISTANT:
        sources = sources_of(message)
        feedback = getattr(message, "feedback", None)
        context.update(html=answer_html(message), sources=sources, latest=latest,
                       feedback=feedback, feedback_open=feedback_open,
                       feedback_documents=feedback_documents(user=request.user, message=message) if feedback else [],
                       copy_text=answer_markdown(message, sources, absolute=request.build_absolute_uri),
                       search_all=_search_all_question(message), filtered=filters_summary(message.filters or {}))
    return context


def _search_all_question(message: Message) -> str:
    """For a "not found" answer searched in one collection: its question, so the page can offer to
    ask it of every collection the user may read ("" otherwise)."""
    if message.status != Message.Status.NOT_FOUND or not message.collection_slug:
        return ""
    asked = (message.conversation.messages.filter(role=Message.Role.USER, pk__lt=message.pk)
             .order_by("-pk").values_list("content", flat=True).first())
    return asked or ""


def render_message(request: HttpRequest, message: Message) -> str:
    """An answer that just finished (so the latest of its conversation), for the stream's last event."""
    return render_to_string("chat/index.html#message", message_context(request, message, latest=True),
                            request=request)


def _page(request: HttpRequest, conversation: Conversation | None, *, question: str = "",
          status: int = 200) -> HttpResponse:
    query = request.GET.get("q", "").strip()
    others = request.GET.get("from") == "elsewhere"
    listing = {"conversations": listed_conversations(request.user, query=query, others=others),
               "conversation": conversation, "q": query, "others": others}
    if request.htmx and request.htmx.target == "conversation-list":
        response = render(request, "chat/index.html#conversation-list", listing)
        # Same URL as the page: keep the fragment out of the cache so "back" never shows it alone.
        response["Cache-Control"] = "no-store"
        patch_vary_headers(response, ["HX-Request", "HX-Target"])
        return response
    items = []
    if conversation:
        messages = list(conversation.messages.select_related("feedback"))
        opened = request.GET.get("feedback", "")
        items = [message_context(request, m, latest=m is messages[-1], feedback_open=opened == str(m.pk))
                 for m in messages]
    collections = readable_collections(request.user).only("slug", "name")
    # The filter control starts as the conversation's latest answer was filtered.
    answers = [item["msg"] for item in items if item["msg"].role == Message.Role.ASSISTANT]
    filters = (answers[-1].filters or {}) if answers else {}
    response = render(request, "chat/index.html", {
        **listing, "items": items, "collections": collections, "question": question,
        "filters": filters, "filters_on": filters_summary(filters), "media_type_choices": MEDIA_TYPE_CHOICES,
        "max_question_chars": questions.MAX_QUESTION_CHARS,
        "picked": conversation.collection if conversation else None,
        "elsewhere": not others and Conversation.objects.others_of(request.user).exists(),
        # Where a user lands after logging in: collections shared with them wait for their answer there.
        "invitations": () if conversation else sharing.invitations_pending(user=request.user)[:3],
    }, status=status)
    patch_vary_headers(response, ["HX-Request", "HX-Target"])
    return response


@require_GET
@login_required
def index(request: HttpRequest) -> HttpResponse:
    return _page(request, None)


def own_conversation(request: HttpRequest, pk: int) -> Conversation:
    """The request user's conversation `pk`, or 404."""
    return get_object_or_404(Conversation, pk=pk, user=request.user)


@require_GET
@login_required
def conversation(request: HttpRequest, pk: int) -> HttpResponse:
    return _page(request, own_conversation(request, pk))


def _wants_stream(request: HttpRequest) -> bool:
    return "text/event-stream" in request.headers.get("Accept", "")


@require_POST
@login_required
def ask(request: HttpRequest) -> HttpResponse:
    """Ask a question. With "Accept: text/event-stream" (chat.js) the answer streams as SSE;
    otherwise the answer is computed and the browser is redirected to the conversation.

    Refused before any work, with the reason (JSON {"error"} to chat.js, the page without JS): over
    the ask throttle shared with the API (429, Retry-After), a question that chat.questions refuses
    (400: too long, a NUL). An unexpected failure is logged with an error id and told as a server
    failure quoting it: JSON with HTTP 500 to chat.js, the page again (with the question in the
    box) without JS."""
    try:
        return _ask(request)
    except (Http404, RequestDataTooBig, OperationalError, InterfaceError, DataError):
        raise  # a 404, the service's state (413, 503) or a value it cannot take (400): the middleware answers
    except Exception:
        error_id = log_failure(logger, "POST /ask/ by user %s failed", request.user.pk)
        message = server_failure_message(error_id)
        if _wants_stream(request):
            return JsonResponse({"error": message, "error_id": error_id}, status=500)
        flash.error(request, message)
        conv_id = parse_int(request.POST.get("conversation", "").strip(), minimum=1)
        conv = Conversation.objects.filter(pk=conv_id, user=request.user).first() if conv_id else None
        typed = request.POST.get("question", "")[:questions.MAX_QUESTION_CHARS]
        return _page(request, conv, question=typed, status=500)


def _ask(request: HttpRequest) -> HttpResponse:
    question = request.POST.get("question", "").strip()
    slug = request.POST.get("collection", "").strip() or None
    conv_field = request.POST.get("conversation", "").strip()
    conv = None
    if conv_field:
        conv_id = parse_int(conv_field, minimum=1)
        if conv_id is None:
            raise Http404("No such conversation.")
        conv = get_object_or_404(Conversation, pk=conv_id, user=request.user)

    wait = ask_wait(request)  # questions and regenerates alike: each is a search and an answer
    if wait is not None:
        response = _refused(request, conv, f"Too many questions: try again in {wait} seconds.", status=429)
        response["Retry-After"] = str(wait)
        return response
    if request.POST.get("regenerate"):
        return _regenerate(request, request.POST["regenerate"].strip())
    if not question:
        notice = "Please type a question."
        if _wants_stream(request):
            return sse_response([sse_event("notice", {"message": notice})])
        flash.error(request, notice)
        return redirect(conv.get_absolute_url() if conv else reverse("chat:index"))
    try:
        question = clean_question(question)
    except InvalidQuestion as exc:
        return _refused(request, conv, str(exc), status=400)
    try:
        filters = filters_from_post(request.POST)
    except FilterError as exc:
        return _refused(request, conv, "Filters: " + " ".join(m for ms in exc.errors.values() for m in ms), status=400)

    if conv is None:
        try:
            picked = collection_for(request.user, slug) if slug else None
        except Denied as exc:
            # Nothing was asked yet: no empty conversation is left behind, the question stays in the box.
            if _wants_stream(request):
                return sse_response([sse_event("notice", {"message": str(exc)})])
            flash.error(request, str(exc))
            return _page(request, None, question=question, status=400)
        conv = new = conversation_start(user=request.user, collection=picked)
    else:
        new = None
    try:
        events = message_ask(conversation=conv, question=question, collection_slug=slug,
                             stream=_wants_stream(request), filters=filters)
        first = next(events)  # stores the question; raises before that on a collection we may not read
    except Denied as exc:
        reply = message_record_failure(conversation=conv, question=question, error=str(exc))
        if _wants_stream(request):
            return sse_response(_failure_events(request, conv, reply, new=new is not None))
        return redirect(f"{conv.get_absolute_url()}#m{reply.pk}")
    except Exception:
        if new is not None and not new.messages.exists():
            new.delete()  # no empty conversation is left behind by a failure
        raise
    return _answer_response(request, conv, first, events, new=new is not None)


def _refused(request: HttpRequest, conv: Conversation | None, message: str, *, status: int) -> HttpResponse:
    """A question refused before any work (too long, unstorable, too many): JSON {"error"} with
    `status` to chat.js, the page with the message (and an empty box) without JS."""
    if _wants_stream(request):
        return JsonResponse({"error": message}, status=status)
    flash.error(request, message)
    return _page(request, conv, status=status)


def _regenerate(request: HttpRequest, pk: str) -> HttpResponse:
    """Ask the question of the latest answer `pk` again (the Regenerate button posts to /ask/)."""
    message_id = parse_int(pk, minimum=1)
    if message_id is None:
        raise Http404("No such answer.")
    message = get_object_or_404(Message.objects.select_related("conversation"), pk=message_id,
                                 conversation__user=request.user, role=Message.Role.ASSISTANT)
    conv = message.conversation
    try:
        events = message_regenerate(message=message, stream=_wants_stream(request))
        first = next(events)
    except (CannotRegenerate, Denied) as exc:
        if _wants_stream(request):
            return sse_response([sse_event("notice", {"message": str(exc)})])
        flash.error(request, str(exc))
        return redirect(f"{conv.get_absolute_url()}#m{message.pk}")
    return _answer_response(request, conv, first, events)


def _answer_response(request: HttpRequest, conv: Conversation, first, events, *, new: bool = False) -> HttpResponse:
    """The answer streamed as SSE, or (without JS) computed and then shown in the conversation;
    `new`: the question started the conversation."""
    if not _wants_stream(request):
        final = run_to_end(events)
        return redirect(f"{conv.get_absolute_url()}#m{final.message.pk}")
    return sse_response(_stream_events(request, conv, first, events, new=new))


def _start_payload(request: HttpRequest, conv: Conversation, reply: Message, *, new: bool = False) -> dict:
    """The stream's "start" event. For a conversation this question started (`new`) also its title
    and the page's head (title and actions), which chat.js puts in place of "New conversation"."""
    payload = {"conversation": conv.pk, "conversation_url": conv.get_absolute_url(), "message": reply.pk,
               "stop_url": reverse("chat:stop", args=[reply.pk])}
    if new:
        payload["title"] = str(conv)
        payload["head"] = render_to_string("chat/index.html#chat-head",
                                           {"conversation": conv, "items": conv.messages.only("pk")}, request=request)
    return payload


def _done_payload(request: HttpRequest, reply: Message) -> dict:
    """The stream's "done" event: the finished answer's HTML, its status and the summary of the filters
    it was searched with ("" for none), which chat.js shows on the closed filter line."""
    return {"html": render_message(request, reply), "status": reply.status,
            "filters_on": filters_summary(reply.filters or {})}


def _failure_events(request: HttpRequest, conv: Conversation, reply: Message, *, new: bool = False) -> Iterator[str]:
    yield sse_event("start", _start_payload(request, conv, reply, new=new))
    yield sse_event("done", _done_payload(request, reply))


def _stream_events(request: HttpRequest, conv: Conversation, first, events, *, new: bool = False) -> Iterator[str]:
    try:
        yield sse_event("start", _start_payload(request, conv, first.message, new=new))
        for event in events:
            if event.kind == "token":
                yield sse_event("token", {"text": event.text})
            elif event.kind == "done":
                yield sse_event("done", _done_payload(request, event.message))
    except Exception:
        error_id = log_failure(logger, "streaming the answer %s failed", first.message.pk)
        yield sse_event("error", {"message": server_failure_message(error_id), "error_id": error_id})
    finally:
        events.close()  # the browser went away: save the partial answer now, not at garbage collection


@require_POST
@login_required
def stop(request: HttpRequest, pk: int) -> HttpResponse:
    message = get_object_or_404(Message, pk=pk, conversation__user=request.user, role=Message.Role.ASSISTANT)
    message_request_stop(message=message)
    if request.htmx or request.headers.get("Accept", "").startswith("application/json"):
        return HttpResponse(status=204)
    return redirect(f"{message.conversation.get_absolute_url()}#m{message.pk}")


@require_GET
@login_required
def passage(request: HttpRequest, pk: int, n: int) -> HttpResponse:
    """Citation [n] of an answer: the document with the cited segment shown, the sentences that
    support the answer highlighted, and why the segment was chosen. 404 unless the answer is the
    user's and the document is readable by them now; 410 with a page saying so when the document
    has been deleted since."""
    message = get_object_or_404(Message, pk=pk, conversation__user=request.user, role=Message.Role.ASSISTANT)
    throttled = passage_throttled(request)
    if throttled is not None:
        return throttled
    citation = message.citation(n)
    if citation is None:
        raise Http404("No such citation.")
    back_url = f"{message.conversation.get_absolute_url()}#m{message.pk}"
    if not Document.objects.filter(pk=citation["document"]["id"]).exists():
        return render(request, "chat/passage_deleted.html", {"citation": citation, "back_url": back_url},
                      status=410)
    try:
        document = document_for(request.user, citation["document"]["id"])
    except Denied as denied:
        raise denied.http_error() from None
    highlight = highlight_for(document, citation, message.content)
    similarity = chunk_similarities(document, message.query)
    retrieved = {int(i): v for i, v in (message.relevance.get(str(document.pk)) or {}).items()}
    chart = None
    if similarity or retrieved:
        count = max(len(similarity), max(retrieved, default=-1) + 1, citation["end"])
        chart = relevance_svg(similarity + [None] * (count - len(similarity)),
                              selected=(citation["start"], citation["end"]), retrieved=retrieved)
    return render(request, "chat/passage.html", {
        "message": message, "citation": citation, "document": document, "page": document.page_at(highlight.focus),
        "supported": bool(highlight.support), **passage_body(request, document, highlight),
        "chart": chart, "back_url": back_url,
    })
