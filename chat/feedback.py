"""Ratings of answers: thumbs up or down, an optional comment and, to make a rating a regression
case for the evaluation (`manage.py export_feedback`), the source that answers the question with
evidence phrases copied from it. A rating keeps a copy of the question, the sources and the answer,
so it survives the answer being regenerated or its conversation deleted."""

from __future__ import annotations

import re

from django.db import transaction

from chat.answering.citations import cited_numbers
from chat.models import Feedback, Message
from corpus import permissions
from corpus.models import Document

MAX_COMMENT_CHARS = 4000
MAX_PHRASES = 10
MAX_PHRASE_CHARS = 300
_NON_ALNUM = re.compile(r"[^0-9a-z]+")


class FeedbackError(ValueError):
    """Details of a rating that cannot be saved (str(exc) says why, for the rater)."""


def normalise(text: str) -> str:
    """The evaluation's text normalisation (../shared/eval/check_evidence.py): lowercase, every run
    of non-alphanumerics one space. Repeated here: production code never imports chat.evaluation."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether `phrase` occurs in `text` as whole words, after normalisation (as coverage counts it)."""
    return f" {normalise(phrase)} " in f" {normalise(text)} "


def evidence_phrases(text: str) -> list[str]:
    """One phrase per non-empty line, whitespace collapsed, duplicates dropped (order kept)."""
    phrases: list[str] = []
    for line in text.splitlines():
        phrase = " ".join(line.split())
        if phrase and phrase not in phrases:
            phrases.append(phrase)
    return phrases


def question_of(message: Message) -> Message | None:
    """The question an assistant message answers: the user message just before it."""
    return (Message.objects.filter(conversation_id=message.conversation_id, role=Message.Role.USER,
                                   pk__lt=message.pk).order_by("-id").first())


@transaction.atomic
def feedback_rate(*, message: Message, user, rating: str) -> Feedback:
    """Rate the answer `message` up or down (again: the rating changes, the details stay), keeping
    a copy of its question, query, sources and text as they are now."""
    if rating not in Feedback.Rating.values:
        raise FeedbackError("Rate the answer up or down.")
    question = question_of(message)
    feedback, _ = Feedback.objects.select_for_update().get_or_create(
        message=message, defaults={"user": user, "rating": rating})
    feedback.rating = rating
    feedback.question = question.content if question else ""
    feedback.query = message.query
    feedback.answer = message.content
    feedback.error = message.error
    feedback.collection_slug = message.collection_slug
    feedback.sources = message.citations
    feedback.retrieved = message.relevance
    feedback.cited = [n for n in cited_numbers(message.content) if message.citation(n)]
    feedback.save()
    return feedback


def feedback_clear(*, message: Message) -> None:
    """Take the rating of `message` back."""
    Feedback.objects.filter(message=message).delete()


def feedback_describe(*, feedback: Feedback, user, comment: str, source_n: int | None, evidence_text: str,
                      document_id: int | None = None) -> Feedback:
    """Save the rater's comment, the source they say answers the question and the evidence phrases
    they copied from it. The source is one of the answer's numbered sources (`source_n`), or any
    other document `user` may read (`document_id`), or neither ("none of them / not sure").

    Evidence is checked against text `user` may read now: a numbered source's passage as the answer
    got it, or a document's current text only if corpus.permissions lets `user` read it (a reader
    removed from a collection cannot probe what its documents say now). The comment is saved even
    when the evidence is refused; raises FeedbackError naming what is wrong (a phrase not in the
    chosen source, evidence without a source, a document they may not read, too much text)."""
    comment = comment.strip()
    if len(comment) > MAX_COMMENT_CHARS:
        raise FeedbackError(f"The comment is longer than {MAX_COMMENT_CHARS} characters.")
    feedback.comment = comment
    feedback.save(update_fields=["comment", "updated_at"])

    phrases = evidence_phrases(evidence_text)
    if source_n is None and document_id is None:
        if phrases:
            raise FeedbackError("Choose the source the evidence was copied from.")
        feedback.source, feedback.evidence = "", []
        feedback.save(update_fields=["source", "evidence", "updated_at"])
        return feedback
    _check_phrases(phrases)
    if document_id is not None:
        try:
            document = permissions.document_for(user, document_id)
        except permissions.Denied as exc:
            raise FeedbackError(str(exc)) from None
        missing = [p for p in phrases if not contains_phrase(document.text, p)]
        named, source = f"the document {document.source!r}", document.source
    else:
        citation = next((c for c in feedback.sources if c.get("n") == source_n), None)
        if citation is None:
            raise FeedbackError(f"The answer has no source [{source_n}].")
        missing = [p for p in phrases if not _in_citation(p, citation, user)]
        named, source = f"source [{source_n}]", citation["document"].get("source") or ""
    if missing:
        raise FeedbackError(f"“{missing[0]}” is not in {named}; copy the words exactly from it.")
    feedback.source = source
    feedback.evidence = phrases
    feedback.save(update_fields=["source", "evidence", "updated_at"])
    return feedback


def _check_phrases(phrases: list[str]) -> None:
    if len(phrases) > MAX_PHRASES:
        raise FeedbackError(f"Give at most {MAX_PHRASES} evidence phrases.")
    for phrase in phrases:
        if len(phrase) > MAX_PHRASE_CHARS:
            raise FeedbackError(f"An evidence phrase is longer than {MAX_PHRASE_CHARS} characters; "
                                "copy the few words that answer the question.")
        if not normalise(phrase):
            raise FeedbackError(f"“{phrase}” has no words.")


def _in_citation(phrase: str, citation: dict, user) -> bool:
    """In the cited passage as the answer got it, or else anywhere in its document's current text
    (the passage view shows the whole document around the highlight) when `user` may still read it."""
    if contains_phrase(citation.get("text") or "", phrase):
        return True
    document = (permissions.readable_documents(user).filter(pk=citation["document"].get("id"))
                .only("text").first())
    return document is not None and contains_phrase(document.text, phrase)


def feedback_documents(*, user, message: Message, limit: int = 200) -> list[tuple[int, str]]:
    """(id, label) of the documents `user` may name as the answer's source besides the numbered
    ones: readable documents of the collection the answer searched (every readable one when it
    searched them all), by title; at most `limit`."""
    documents = permissions.readable_documents(user).filter(status=Document.Status.READY)
    if message.collection_id is not None:
        documents = documents.filter(collection_id=message.collection_id)
    rows = documents.order_by("title", "source").values_list("id", "title", "source")[:limit]
    return [(pk, f"{title or source} ({source})" if title else source) for pk, title, source in rows]
