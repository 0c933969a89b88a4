"""audit.record: actor from the request, targets by value, secrets redacted, detail bounded."""

from __future__ import annotations

import pytest
from django.test import RequestFactory

import audit
from audit import services as audit_services
from audit.models import Action
from audit.services import REDACTED

pytestmark = pytest.mark.django_db


def test_the_actor_and_address_come_from_the_request(user):
    request = RequestFactory().post("/", REMOTE_ADDR="2001:db8::1")
    request.user = user
    event = audit.record(Action.SOURCE_ADDED, target="https://example.org/docs", request=request)
    assert (event.actor, event.actor_username, event.ip, event.target_label) == (
        user, "alice", "2001:db8::1", "https://example.org/docs")


def test_the_username_copy_outlives_the_account(user):
    event = audit.record(Action.SOURCE_SYNCED, actor=user)
    user.delete()
    event.refresh_from_db()
    assert (event.actor, event.actor_username) == (None, "alice")


def test_secrets_are_redacted_at_any_depth():
    event = audit.record(Action.LLM_CONFIG_CHANGED, detail={
        "api_key": "sk-very-secret", "nested": {"password": "hunter2", "Token": "rw_abc"},
        "key_replaced": True, "model": "gpt-4o-mini"})
    assert event.detail == {"api_key": REDACTED, "nested": {"password": REDACTED, "Token": REDACTED},
                            "key_replaced": True, "model": "gpt-4o-mini"}


def test_a_large_detail_is_cut(settings, monkeypatch):
    monkeypatch.setattr(audit_services, "AUDIT_DETAIL_MAX_CHARS", 300)
    event = audit.record(Action.SOURCE_CHANGED, detail={"pages": ["x" * 50] * 100})
    assert event.detail["truncated"] is True
    assert len(event.detail["preview"]) <= 300


def test_an_unknown_action_is_refused():
    with pytest.raises(ValueError, match="unknown audit action"):
        audit.record("became-king")
