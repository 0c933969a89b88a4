"""The audit trail: who did what (sign-ins, tokens, sharing, deletions, sources, the LLM set-up).

The lowest layer: it imports none of ragweb's apps, so every app may record events through the
one function below.
"""

from __future__ import annotations

from typing import Any


def record(action: str, *, actor: Any = None, target: Any = None, detail: dict | None = None,
           request: Any = None):
    """Store one AuditEvent and return it (see audit.services.event_record for the contract).

    `action` is one of audit.models.Action; `actor` a user (default: the request's signed-in user);
    `target` the model instance acted on (recorded by type, id and label, so it may be deleted
    afterwards); `detail` a small JSON object, secrets redacted, cut to AUDIT_DETAIL_MAX_CHARS;
    `request` gives the client address. Call it inside the change's transaction so that a rolled
    back change leaves no event.
    """
    # Imported here: the models can only load once the apps are ready, and callers import `audit` early.
    from audit.services import event_record

    return event_record(action, actor=actor, target=target, detail=detail, request=request)
