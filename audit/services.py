"""Writing and pruning the audit trail (the only writes of AuditEvent)."""

from __future__ import annotations

import ipaddress
import json
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from audit.models import Action, AuditEvent

REDACTED = "[redacted]"
# A detail entry whose name contains one of these is never stored (token keys, passwords, API keys).
SECRET_NAMES = ("password", "secret", "key", "token", "authorization", "credential")
# An event's detail whose JSON is longer is kept as a cut preview: room for every field an event records
# (a changed-fields list, a URL, a message), while no event can grow the table without bound.
AUDIT_DETAIL_MAX_CHARS = 2000
LABEL_CHARS = AuditEvent._meta.get_field("target_label").max_length


def event_record(action: str, *, actor: Any = None, target: Any = None, detail: dict | None = None,
                 request: Any = None) -> AuditEvent:
    """Store one event. `action` must be an Action value (ValueError otherwise). `actor` defaults to
    the request's signed-in user; `target` is a model instance or a plain label (str); `detail` is
    redacted (redacted_detail) and bounded (bounded_detail); the client address comes from the request."""
    if action not in Action.values:
        raise ValueError(f"unknown audit action {action!r}")
    if actor is None and request is not None:
        actor = getattr(request, "user", None)
    if actor is not None and not getattr(actor, "is_authenticated", False):
        actor = None  # AnonymousUser
    target_type = target_id = label = ""
    if isinstance(target, models.Model):
        target_type, target_id, label = target._meta.label_lower, str(target.pk), str(target)
    elif target is not None:
        label = str(target)
    return AuditEvent.objects.create(
        action=action, actor=actor, actor_username=actor.get_username() if actor is not None else "",
        target_type=target_type, target_id=target_id, target_label=label[:LABEL_CHARS],
        detail=bounded_detail(redacted_detail(detail or {})), ip=client_address(request))


def redacted_detail(value: Any) -> Any:
    """`value` with every entry named like a secret (SECRET_NAMES) replaced by REDACTED, at any depth.
    Booleans stay (e.g. whether a key was replaced), as they reveal nothing."""
    if isinstance(value, dict):
        return {str(name): REDACTED if _secret(str(name), item) else redacted_detail(item)
                for name, item in value.items()}
    if isinstance(value, list | tuple):
        return [redacted_detail(item) for item in value]
    return value


def _secret(name: str, value: Any) -> bool:
    return not isinstance(value, bool) and value is not None and any(s in name.lower() for s in SECRET_NAMES)


def bounded_detail(detail: dict) -> dict:
    """`detail` as JSON-ready data, or, when its JSON is over AUDIT_DETAIL_MAX_CHARS, a cut preview
    of it ({"truncated": true, "preview": "..."}) so that no event grows the table without bound."""
    text = json.dumps(detail, default=str, ensure_ascii=False)
    limit = AUDIT_DETAIL_MAX_CHARS
    if len(text) <= limit:
        return json.loads(text)
    return {"truncated": True, "preview": text[:max(limit - 40, 0)]}


def client_address(request: Any) -> str | None:
    """The request's client address, or None: REMOTE_ADDR, or behind TRUSTED_PROXY_COUNT proxies
    the X-Forwarded-For entry that many from the right (what the outermost trusted proxy saw; the
    entries left of it are the client's to write). The one rule of the audit trail and the
    sign-in throttle, the same as DRF's throttles (NUM_PROXIES)."""
    if request is None:
        return None
    address = request.META.get("REMOTE_ADDR", "")
    proxies = settings.TRUSTED_PROXY_COUNT
    forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if proxies and forwarded:
        entries = forwarded.split(",")
        address = entries[-min(proxies, len(entries))].strip()
    try:
        return str(ipaddress.ip_address(address))
    except ValueError:
        return None


def events_prune(*, days: int | None = None, now: datetime | None = None) -> int:
    """Delete the events older than `days` (default AUDIT_RETENTION_DAYS) days; returns how many."""
    days = settings.AUDIT_RETENTION_DAYS if days is None else days
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = AuditEvent.objects.older_than(cutoff).delete()
    return deleted
