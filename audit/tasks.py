from celery import shared_task

from audit.services import events_prune


@shared_task(name="audit.prune")
def prune_audit_task() -> int:
    """Delete audit events past AUDIT_RETENTION_DAYS (scheduled daily by celery beat)."""
    return events_prune()
