"""Actions on an answer of the chat page: rating it (thumbs up or down, with optional details).
Copy is done in the browser; regenerate posts to /ask/ (chat.views.ask)."""

from __future__ import annotations

from django.contrib import messages as flash
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from chat.feedback import FeedbackError, feedback_clear, feedback_describe, feedback_rate
from chat.models import Message
from chat.views import message_context
from lib.numbers import parse_int


@require_POST
@login_required
def rate(request: HttpRequest, pk: int) -> HttpResponse:
    """Rate answer `pk`: rating=up|down (the same again takes it back: rating=clear), and with
    details=1 the comment, the source that answers the question (source=<n> of the answer's sources,
or source=other with document=<id> of any document the rater may read) and evidence copied from it.
    htmx gets the answer's actions back; without JS the browser returns to the answer."""
    message = get_object_or_404(Message.objects.select_related("conversation"), pk=pk,
                                conversation__user=request.user, role=Message.Role.ASSISTANT)
    rating = request.POST.get("rating", "")
    error = ""
    try:
        if rating == "clear":
            feedback_clear(message=message)
        else:
            feedback = feedback_rate(message=message, user=request.user, rating=rating)
            if request.POST.get("details"):
                source, document = request.POST.get("source", ""), parse_int(request.POST.get("document", ""))
                if source == "other" and document is None:
                    raise FeedbackError("Choose the document that holds the answer.")
                feedback_describe(feedback=feedback, user=request.user, comment=request.POST.get("comment", ""),
                                  source_n=parse_int(source),
                                  document_id=document if source == "other" else None,
                                  evidence_text=request.POST.get("evidence", ""))
    except FeedbackError as exc:
        error = str(exc)
    message = Message.objects.select_related("feedback", "conversation").get(pk=message.pk)
    # The details stay open after a rating (to add them) and after an error (to fix them).
    keep_open = bool(error) or (rating != "clear" and not request.POST.get("details"))
    if request.htmx:
        latest = not message.conversation.messages.filter(pk__gt=message.pk).exists()
        context = message_context(request, message, latest=latest, feedback_open=keep_open)
        context.update(feedback_error=error, posted=request.POST if error else None,
                       saved=bool(request.POST.get("details")) and not error)
        return render(request, "chat/_answer_actions.html", context)  # htmx swaps 2xx only: the error is inside
    if error:
        flash.error(request, error)
    url = message.conversation.get_absolute_url()
    return redirect(f"{url}?feedback={message.pk}#m{message.pk}" if keep_open else f"{url}#m{message.pk}")
