"""The `openai` client and the MCP SDK (~37 and ~28 MiB resident) are not imported when a process
starts (the web server's URLconf and admin, the worker's tasks), only by what needs them: most
processes never call an LLM or serve /mcp (docs/scaling.md, "Memory"), and an extractive answer (the
embedded default) needs neither."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from chat.services import conversation_start, message_ask
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

ROOT = Path(__file__).resolve().parents[2]

# What a process imports at start-up: Django's apps and admin, the URLconf (the web master with
# --preload, ragweb.wsgi) and every app's tasks (the Celery worker and its scheduler); then one LLM
# client, as the first LLM answer makes it.
STARTUP = """
import json, os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "ragweb.settings"
import django; django.setup()
from importlib import import_module
from django.conf import settings
import_module(settings.ROOT_URLCONF)
from ragweb.celery import app
app.loader.import_default_modules()
started = {name: name in sys.modules for name in ("openai", "mcp")}
from corpus import llm
llm.get_client(llm.LLMConfig("http://127.0.0.1:9/v1", "some-model", "", llm.ENVIRONMENT))
from mcp_server import transport
print(json.dumps({"started": started, "after": {name: name in sys.modules for name in ("openai", "mcp")}}))
"""


def test_openai_and_mcp_are_imported_by_their_first_use_not_at_start_up():
    done = subprocess.run([sys.executable, "-c", STARTUP], cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    imported = json.loads(done.stdout.splitlines()[-1])
    assert imported["started"] == {"openai": False, "mcp": False}
    assert imported["after"] == {"openai": True, "mcp": True}  # the names above are the real modules' names


@pytest.mark.django_db
def test_an_extractive_answer_imports_neither_openai_nor_mcp(user, no_llm, monkeypatch):
    # None in sys.modules makes any `import openai` (or mcp) raise ImportError: the answer would fail.
    monkeypatch.setitem(sys.modules, "openai", None)
    monkeypatch.setitem(sys.modules, "mcp", None)
    collection = make_collection("guides", owner=user)
    make_document(collection, source="deploy.md", title="Deployment guide", parts=GUIDE)

    events = list(message_ask(conversation=conversation_start(user=user),
                              question="What is the default request timeout?", stream=False))

    reply = events[-1].message
    assert events[-1].kind == "done" and reply.status == "complete" and reply.mode == "extractive"
    assert reply.citations
