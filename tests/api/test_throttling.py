"""Rate limits on search and ask (API_THROTTLE: questions, and five times as many searches): 429 with a JSON
message and Retry-After; /v1 answers in OpenAI's error shape. A bad setting stops start-up."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.cache import caches
from rest_framework.test import APIClient

from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def api(user, settings, no_llm):
    make_document(make_collection("guides", owner=user), source="deploy.md", parts=GUIDE)
    settings.API_THROTTLE_RATES = {"search": "2/min", "ask": "1/hour"}
    caches["quotas"].clear()
    client = APIClient()
    client.force_authenticate(user)
    yield client
    caches["quotas"].clear()


def test_search_over_the_limit_is_a_json_429(api, other_user):
    for _ in range(2):
        assert api.post("/api/search/", {"query": "timeout"}, format="json").status_code == 200
    response = api.post("/api/search/", {"query": "timeout"}, format="json")

    assert response.status_code == 429
    assert response.json()["detail"].startswith("Request was throttled. Expected available in")
    assert 0 < int(response["Retry-After"]) <= 60
    other = APIClient()
    other.force_authenticate(other_user)  # the limit is per user
    assert other.post("/api/search/", {"query": "timeout"}, format="json").status_code == 200


def test_ask_and_v1_completions_share_the_ask_limit(api):
    assert api.post("/api/ask/", {"question": "What is the timeout?"}, format="json").status_code == 200
    assert api.post("/api/ask/", {"question": "What is the timeout?"}, format="json").status_code == 429
    response = api.post("/v1/chat/completions", {"model": "ragweb", "messages": [
        {"role": "user", "content": "What is the timeout?"}]}, format="json")

    assert response.status_code == 429
    error = response.json()["error"]
    assert (error["type"], error["code"]) == ("requests", "rate_limit_exceeded") and "throttled" in error["message"]
    assert api.get("/api/documents/").status_code == 200  # other endpoints are not limited


def test_off_means_no_limit(api, settings):
    settings.API_THROTTLE_RATES = {"search": None, "ask": None}
    assert all(api.post("/api/search/", {"query": "timeout"}, format="json").status_code == 200 for _ in range(4))


@pytest.mark.parametrize(("value", "expected"), [("30/min", "30/min 150/min"), ("off", "None None"),
                                               ("5/s", "5/s 25/s"), (None, "120/min 600/min")])
def test_one_rate_for_questions_gives_searches_five_times_as_many(tmp_path, value, expected):
    assert _load(tmp_path, **({} if value is None else {"API_THROTTLE": value})).stdout.strip() == expected


@pytest.mark.parametrize("value", ["fast", "10/week", "-1/min", "ten/min"])
def test_a_bad_rate_stops_start_up_naming_the_variable(tmp_path, value):
    out = _load(tmp_path, API_THROTTLE=value)
    assert out.returncode != 0 and "API_THROTTLE must look like 60/min" in out.stderr


def _load(tmp_path, **env):
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings", **env)
    code = ("from django.conf import settings; rates = settings.API_THROTTLE_RATES; "
            "print(rates['ask'], rates['search'])")
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True)
