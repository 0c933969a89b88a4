"""POST|DELETE /api/messages/{id}/feedback/: rating an answer through the API, with the source named
among the answer's sources or as any document the rater may read."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from chat.models import Feedback
from tests.chat.chat_corpus import COOKING, GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def answer(api, user, no_llm):
    guides = make_collection("guides", owner=user)
    make_document(guides, source="deploy.md", title="Deployment guide", parts=GUIDE)
    response = api.post("/api/ask/", {"question": "What is the default request timeout?", "collection": "guides"},
                        format="json")
    assert response.status_code == 200
    return response.json()


def test_rate_with_a_cited_source_or_any_readable_document(api, user, other_user, answer):
    url = f"/api/messages/{answer['message']}/feedback/"
    n = next(c["n"] for c in answer["citations"] if c["document"]["source"] == "deploy.md")
    response = api.post(url, {"rating": "down", "comment": "Too long.", "source": n,
                              "evidence": ["thirty seconds by default"]}, format="json")
    assert response.status_code == 200
    assert response.json() == {"rating": "down", "comment": "Too long.", "source": "deploy.md",
                               "evidence": ["thirty seconds by default"]}

    bread = make_document(make_collection("kitchen", owner=user), source="bread.md", parts=COOKING)
    named = api.post(url, {"rating": "down", "document": bread.pk, "evidence": ["Knead the dough"]}, format="json")
    assert named.status_code == 200 and named.json()["source"] == "bread.md"

    hidden = make_document(make_collection("secret", owner=other_user), source="plans.md", parts=COOKING)
    refused = api.post(url, {"rating": "down", "document": hidden.pk, "evidence": ["Knead the dough"]},
                       format="json")
    assert refused.status_code == 400 and refused.json() == {"detail": f"No document {hidden.pk} that you may read."}
    assert Feedback.objects.get().source == "bread.md"

    both = api.post(url, {"rating": "down", "source": n, "document": bread.pk}, format="json")
    assert both.status_code == 400
    assert api.delete(url).status_code == 204 and not Feedback.objects.exists()


def test_only_the_asker_rates_their_answer(answer, other_user):
    theirs = APIClient()
    theirs.force_authenticate(other_user)
    response = theirs.post(f"/api/messages/{answer['message']}/feedback/", {"rating": "up"}, format="json")
    assert response.status_code == 404 and not Feedback.objects.exists()
    assert APIClient().post(f"/api/messages/{answer['message']}/feedback/", {"rating": "up"},
                            format="json").status_code == 401
