"""The details of a rating: evidence must be copied from the chosen source."""

import pytest

from chat.feedback import (
    FeedbackError,
    contains_phrase,
    evidence_phrases,
    feedback_describe,
    feedback_rate,
)
from chat.services import conversation_start, message_ask
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def feedback(user, no_llm):
    collection = make_collection("guides", owner=user)
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    conversation = conversation_start(user=user)
    reply = list(message_ask(conversation=conversation, question="How are failed requests retried?",
                             stream=False))[-1].message
    return feedback_rate(message=reply, user=user, rating="down")


def deploy_n(feedback) -> int:
    return next(c["n"] for c in feedback.sources if c["document"]["source"] == "deploy.md")


def test_phrases_are_lines_whitespace_collapsed_without_duplicates():
    assert evidence_phrases("  retried   twice \n\nretried twice\n with backoff ") == ["retried twice", "with backoff"]


def test_contains_phrase_matches_whole_words_like_the_evaluation():
    assert contains_phrase("Retried twice, with exponential backoff!", "twice with EXPONENTIAL")
    assert not contains_phrase("Retried twice", "tried twice")


def test_evidence_anywhere_in_the_chosen_document_is_accepted(feedback):
    n = deploy_n(feedback)
    feedback_describe(feedback=feedback, user=feedback.user, comment=" Too long ", source_n=n,
                      evidence_text="retried twice with exponential backoff\nLogs are written to standard output")
    feedback.refresh_from_db()
    assert feedback.comment == "Too long" and feedback.source == "deploy.md"
    assert feedback.evidence == ["retried twice with exponential backoff", "Logs are written to standard output"]


@pytest.mark.parametrize(("source", "evidence", "message"), [
    (None, "retried twice", "Choose the source the evidence was copied from."),
    (99, "retried twice", "The answer has no source [99]."),
    ("deploy", "retried three times", "“retried three times” is not in source"),
    ("deploy", "...", "“...” has no words."),
    ("deploy", "word " * 100, "longer than 300 characters"),
    ("deploy", "\n".join(f"phrase {i}" for i in range(11)), "at most 10 evidence phrases"),
])
def test_bad_evidence_is_refused_but_the_comment_kept(feedback, source, evidence, message):
    n = deploy_n(feedback) if source == "deploy" else source
    with pytest.raises(FeedbackError, match=message.replace("[", r"\[").replace("]", r"\]")):
        feedback_describe(feedback=feedback, user=feedback.user, comment="kept", source_n=n, evidence_text=evidence)
    feedback.refresh_from_db()
    assert feedback.comment == "kept" and feedback.evidence == [] and feedback.source == ""


def test_none_of_them_clears_the_source(feedback):
    feedback_describe(feedback=feedback, user=feedback.user, comment="", source_n=deploy_n(feedback), evidence_text="")
    assert feedback.source == "deploy.md" and feedback.evidence == []
    feedback_describe(feedback=feedback, user=feedback.user, comment="", source_n=None, evidence_text="")
    feedback.refresh_from_db()
    assert feedback.source == ""


def test_a_rating_must_be_up_or_down(feedback):
    with pytest.raises(FeedbackError):
        feedback_rate(message=feedback.message, user=feedback.user, rating="meh")


def test_evidence_is_checked_against_the_document_only_while_the_rater_may_read_it(user, other_user, no_llm):
    """A reader removed from a collection cannot probe what its documents say now by rating an old
    answer with guessed evidence: only the passage the answer was given is checked then."""
    collection = make_collection("guides", owner=other_user)
    collection.readers.add(user)
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)
    reply = list(message_ask(conversation=conversation_start(user=user), question="How are failed requests retried?",
                             stream=False))[-1].message
    feedback = feedback_rate(message=reply, user=user, rating="down")
    n = deploy_n(feedback)
    cited = "Failed requests are retried twice with exponential backoff before giving up."
    # The passage the answer was given: one section, not the whole (small) document.
    feedback.sources = [{**c, "text": cited} if c["n"] == n else c for c in feedback.sources]
    feedback.save()
    elsewhere = "Logs are written to standard output"
    feedback_describe(feedback=feedback, user=user, comment="", source_n=n, evidence_text=elsewhere)
    assert feedback.evidence == [elsewhere]  # still a reader: the whole document counts

    collection.readers.remove(user)
    with pytest.raises(FeedbackError, match="is not in source"):
        feedback_describe(feedback=feedback, user=user, comment="", source_n=n, evidence_text=elsewhere)
    quoted = " ".join(cited.split()[-4:])
    feedback_describe(feedback=feedback, user=user, comment="", source_n=n, evidence_text=quoted)
    assert feedback.evidence == [quoted]  # what the answer was given stays quotable


def test_any_readable_document_can_be_named_as_the_source(feedback, other_user):
    from tests.chat.chat_corpus import COOKING

    mine = make_document(make_collection("kitchen", owner=feedback.user), source="bread.md", parts=COOKING)
    feedback_describe(feedback=feedback, user=feedback.user, comment="", source_n=None, document_id=mine.pk,
                      evidence_text="Knead the dough for ten minutes")
    feedback.refresh_from_db()
    assert feedback.source == "bread.md" and feedback.evidence == ["Knead the dough for ten minutes"]
    with pytest.raises(FeedbackError, match="is not in the document 'bread.md'"):
        feedback_describe(feedback=feedback, user=feedback.user, comment="", source_n=None, document_id=mine.pk,
                          evidence_text="Knead the dough for an hour")

    theirs = make_document(make_collection("secret", owner=other_user), source="plans.md", parts=COOKING)
    with pytest.raises(FeedbackError, match=f"No document {theirs.pk} that you may read"):
        feedback_describe(feedback=feedback, user=feedback.user, comment="", source_n=None, document_id=theirs.pk,
                          evidence_text="Knead the dough for ten minutes")
    feedback.refresh_from_db()
    assert feedback.source == "bread.md"
