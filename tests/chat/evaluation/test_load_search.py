import json
import re
import sys

import pytest

from accounts.services import token_create
from chat.evaluation import load_search
from corpus.ingest.embed import embed_texts
from tests.chat.factories import make_collection, make_document

PARTS = ["Knead the dough for ten minutes. ", "Bake the loaf at 230 degrees. ", "Patch the inner tube. "]


@pytest.mark.django_db(transaction=True)  # the live server's threads see committed rows only
def test_clients_search_the_running_app_and_report_what_they_saw(live_server, user, tmp_path, monkeypatch, capsys):
    collection = make_collection("guides", owner=user)
    make_document(collection, "guide.md", PARTS, embeddings=embed_texts(PARTS))
    questions = tmp_path / "q.jsonl"
    questions.write_text("".join(json.dumps({"question": q}) + "\n" for q in ("How long do I knead?", "Oven?")))
    token = token_create(user=user)[1]
    monkeypatch.setattr(sys, "argv", ["load_search", live_server.url, token, str(questions), "--clients", "2",
                                      "--seconds", "4", "--warm-up", "1", "--collection", "guides"])
    load_search.main()
    out = capsys.readouterr().out
    requests = int(re.search(r"(\d+) requests", out).group(1))
    assert requests > 0 and f"statuses {{200: {requests}}}" in out
    assert re.search(r"p50 \d+, p95 \d+, p99 \d+", out)
    assert re.search(r"search\(\) total inside the app, ms: p50 [\d.]+", out)
