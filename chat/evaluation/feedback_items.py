"""Rated answers (chat.models.Feedback) as evaluation items in the ../shared/eval format, so that
`manage.py evaluate` runs them as regression cases:

    {"id": "fb-12", "question", "kind": "factoid"|"section", "source", "evidence": [phrases],
     "rating", "comment", "asked", "answer", "cited", "collection", "rated_at"}

The first five keys are the format; the rest say where the item came from (evaluate ignores them).
`question` is the standalone query retrieval searched for (a follow-up's rewrite), since an
evaluation asks each question on its own; `asked` keeps the words the user typed. `source` is the
document the rater (or a reviewer, in the admin) chose; a rating without one cannot be an item
yet and is listed for a person to fill in. `evidence` may be empty: the item then scores ranks
only, not coverage.
"""

from __future__ import annotations

from collections.abc import Iterable

from chat.models import Feedback
from corpus.models import Document

ID_PREFIX = "fb-"
SECTION_MIN_PHRASES = 3  # the development set's section questions have 3-6 phrases, factoids 1-2


def item_id(feedback: Feedback) -> str:
    return f"{ID_PREFIX}{feedback.pk}"


def item_kind(feedback: Feedback) -> str:
    """The kind chosen in the admin, or from the evidence: three or more phrases make a section."""
    if feedback.kind:
        return feedback.kind
    return "section" if len(feedback.evidence) >= SECTION_MIN_PHRASES else "factoid"


def source_collections(feedbacks: Iterable[Feedback]) -> dict[int, str]:
    """Feedback pk → slug of the collection holding its chosen source document (when it still exists)."""
    wanted: dict[int, int] = {}
    for feedback in feedbacks:
        for citation in feedback.sources:
            document = citation.get("document") or {}
            if feedback.source and document.get("source") == feedback.source and document.get("id"):
                wanted[feedback.pk] = document["id"]
                break
    slugs = dict(Document.objects.filter(pk__in=set(wanted.values())).values_list("pk", "collection__slug"))
    return {pk: slugs[doc] for pk, doc in wanted.items() if doc in slugs}


def feedback_item(feedback: Feedback, *, collection: str = "") -> dict:
    """The evaluation item of a rating (its `source` is "" while nobody has chosen one)."""
    cited = []
    for citation in feedback.sources:
        source = (citation.get("document") or {}).get("source", "")
        if citation.get("n") in feedback.cited and source not in cited:
            cited.append(source)
    question = (feedback.query or feedback.question).strip()
    return {
        "id": item_id(feedback),
        "question": question,
        "kind": item_kind(feedback),
        "source": feedback.source,
        "evidence": list(feedback.evidence),
        "rating": feedback.rating,
        "comment": feedback.comment,
        "asked": feedback.question if feedback.question.strip() != question else "",
        "answer": feedback.answer,
        "cited": cited,
        "collection": collection or feedback.collection_slug,
        "rated_at": feedback.created_at.isoformat(timespec="seconds"),
    }


def feedback_items(feedbacks: Iterable[Feedback]) -> tuple[list[dict], list[dict]]:
    """(items ready for evaluate, items still lacking a source or a question) of the ratings, in order."""
    feedbacks = list(feedbacks)
    collections = source_collections(feedbacks)
    ready, incomplete = [], []
    for feedback in feedbacks:
        item = feedback_item(feedback, collection=collections.get(feedback.pk, ""))
        (ready if item["source"] and item["question"] else incomplete).append(item)
    return ready, incomplete
