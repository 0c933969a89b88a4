"""Two regenerates of one answer at once (a double click, two tabs) leave one new question and
answer, not two: real concurrent transactions on the real Postgres."""

from __future__ import annotations

import threading
import time

import pytest
from django.db import connection

from chat import services
from chat.models import Message
from chat.services import CannotRegenerate, conversation_start, message_ask, message_regenerate
from tests.chat.chat_corpus import GUIDE, make_collection, make_document

pytestmark = pytest.mark.django_db(transaction=True)
QUESTION = "What is the default request timeout?"


def test_concurrent_regenerates_of_one_answer_leave_one_pair(user, no_llm, monkeypatch):
    make_document(make_collection("guides", owner=user), source="deploy.md", parts=GUIDE)
    conversation = conversation_start(user=user)
    old = list(message_ask(conversation=conversation, question=QUESTION, stream=False))[-1].message
    # Slow the new pair's storing down, so both requests are past their first look before either commits.
    history_of = services.history_of
    monkeypatch.setattr(services, "history_of", lambda *a, **k: (time.sleep(0.5), history_of(*a, **k))[1])
    start = threading.Barrier(2)
    outcomes: list[str] = []

    def regenerate() -> None:
        try:
            message = Message.objects.get(pk=old.pk)
            start.wait(10)
            done = list(message_regenerate(message=message, stream=False))[-1]
            outcomes.append(done.message.status)
        except CannotRegenerate as exc:
            outcomes.append(str(exc))
        finally:
            connection.close()

    threads = [threading.Thread(target=regenerate) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)

    assert sorted(outcomes) == ["This answer has just been regenerated or deleted.", "complete"]
    messages = list(conversation.messages.order_by("id").values_list("role", "content"))
    assert [role for role, _ in messages] == ["user", "assistant"]
    assert messages[0][1] == QUESTION and "thirty seconds" in messages[1][1]
