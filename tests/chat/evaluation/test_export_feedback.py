"""Rated answers become evaluation items that `manage.py evaluate` runs as regression cases."""

import json
from io import StringIO

import pytest
from django.core.management import call_command

from chat.evaluation.feedback_items import feedback_item, feedback_items
from chat.evaluation.metrics import load_items
from chat.feedback import feedback_describe, feedback_rate
from chat.models import Feedback
from chat.services import conversation_start, message_ask
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def corpus(user, no_llm):
    guides = make_collection("guides", owner=user)
    make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    kitchen = make_collection("kitchen", owner=user)
    make_document(kitchen, source="bread.md", title="Bread", parts=COOKING)
    return guides


def rated(user, question, rating, *, source=None, evidence="", comment="", collection=None):
    conversation = conversation_start(user=user)
    reply = list(message_ask(conversation=conversation, question=question, collection_slug=collection,
                             stream=False))[-1].message
    feedback = feedback_rate(message=reply, user=user, rating=rating)
    if source or comment:
        n = next(c["n"] for c in feedback.sources if c["document"]["source"] == source) if source else None
        feedback_describe(feedback=feedback, user=feedback.user, comment=comment, source_n=n, evidence_text=evidence)
    return feedback


def export(*args) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("export_feedback", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_an_item_has_the_evaluation_format_and_where_it_came_from(user, corpus):
    feedback = rated(user, "How are failed requests retried?", "down", source="deploy.md", comment="Too vague",
                     evidence="retried twice with exponential backoff")
    item = feedback_item(feedback, collection="guides")
    assert list(item)[:5] == ["id", "question", "kind", "source", "evidence"]
    assert item["id"] == f"fb-{feedback.pk}" and item["question"] == "How are failed requests retried?"
    assert (item["kind"], item["source"], item["evidence"]) == ("factoid", "deploy.md",
                                                               ["retried twice with exponential backoff"])
    assert (item["rating"], item["comment"], item["asked"], item["collection"]) == ("down", "Too vague", "", "guides")
    assert item["answer"] == feedback.answer and "deploy.md" in item["cited"]


def test_the_standalone_query_is_the_question_and_the_kind_follows_the_evidence(user, corpus):
    feedback = rated(user, "How are failed requests retried?", "down", source="deploy.md",
                     evidence="retried twice\nexponential backoff\nbefore giving up")
    Feedback.objects.filter(pk=feedback.pk).update(query="How does the deployment retry failed requests?")
    feedback.refresh_from_db()
    item = feedback_item(feedback)
    assert item["question"] == "How does the deployment retry failed requests?"
    assert item["asked"] == "How are failed requests retried?"
    assert item["kind"] == "section"
    feedback.kind = "factoid"
    assert feedback_item(feedback)["kind"] == "factoid"


def test_ratings_without_a_source_wait_for_a_person(user, corpus, tmp_path):
    complete = rated(user, "How are failed requests retried?", "down", source="deploy.md")
    waiting = rated(user, "Where do the logs go?", "down", comment="Wrong document")
    ready, incomplete = feedback_items(Feedback.objects.order_by("pk"))
    assert [i["id"] for i in ready] == [f"fb-{complete.pk}"] and ready[0]["evidence"] == []
    assert [i["id"] for i in incomplete] == [f"fb-{waiting.pk}"] and incomplete[0]["source"] == ""
    out, err = export("--todo", str(tmp_path / "todo.jsonl"))
    assert [json.loads(line)["id"] for line in out.splitlines()] == [f"fb-{complete.pk}"]
    assert f"1 rating(s) have no source chosen yet (fb-{waiting.pk})" in err
    todo = [json.loads(line) for line in (tmp_path / "todo.jsonl").read_text().splitlines()]
    assert [(t["id"], t["source"], t["comment"]) for t in todo] == [(f"fb-{waiting.pk}", "", "Wrong document")]


def test_thumbs_up_only_when_asked_and_filtered_by_collection(user, corpus, tmp_path):
    down = rated(user, "How are failed requests retried?", "down", source="deploy.md")
    up = rated(user, "How long do I knead the dough?", "up", source="bread.md", evidence="ten minutes")
    out, err = export()
    assert [json.loads(line)["id"] for line in out.splitlines()] == [f"fb-{down.pk}"]
    assert "1 evaluation item(s) written to standard output (1 thumbs-down)." in err
    export("--include-positive", "--out", str(tmp_path / "all.jsonl"))
    assert [i.id for i in load_items(tmp_path / "all.jsonl")] == [f"fb-{down.pk}", f"fb-{up.pk}"]
    out, _ = export("--include-positive", "--collection", "kitchen")
    assert [json.loads(line)["id"] for line in out.splitlines()] == [f"fb-{up.pk}"]


def test_exported_items_run_through_evaluate(user, corpus, tmp_path):
    feedbacks = [
        rated(user, "How are failed requests retried?", "down", source="deploy.md",
              evidence="retried twice with exponential backoff"),
        rated(user, "What is the default request timeout?", "up", source="deploy.md",
              evidence="The request timeout is thirty seconds by default"),
        rated(user, "Where are logs written?", "down", source="deploy.md"),  # no evidence: ranks only
    ]
    path = tmp_path / "feedback.jsonl"
    export("--include-positive", "--collection", "guides", "--out", str(path))
    out = StringIO()
    call_command("evaluate", str(path), "--collection", "guides", "--report", str(tmp_path / "report"),
                 "--runs", "hybrid", "hybrid+rse:balanced", stdout=out, stderr=StringIO())
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    rows = {row["id"]: row for row in report["items"]["hybrid"]}
    assert set(rows) == {f"fb-{f.pk}" for f in feedbacks}
    assert all(row["rank"] == 1 for row in rows.values())  # the only document of the collection
    rse = {row["id"]: row for row in report["items"]["hybrid+rse:balanced"]}
    assert rse[f"fb-{feedbacks[0].pk}"]["coverage_own"] == 1.0
    assert rse[f"fb-{feedbacks[2].pk}"]["coverage_own"] is None
    assert "MRR@10 with 95% bootstrap intervals over the 3 questions" in out.getvalue()


def test_staff_list_and_review_ratings_in_the_admin(admin_client, user, corpus):
    feedback = rated(user, "How are failed requests retried?", "down", comment="Missed the backoff")
    listing = admin_client.get("/admin/chat/feedback/?rating__exact=down").content.decode()
    assert "How are failed requests retried?" in listing
    page = admin_client.get(f"/admin/chat/feedback/{feedback.pk}/change/").content.decode()
    assert "Missed the backoff" in page and "deploy.md" in page
    assert admin_client.get("/admin/chat/feedback/add/").status_code == 403
