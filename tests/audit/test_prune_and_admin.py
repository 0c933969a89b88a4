"""The trail is bounded (prune_audit, the daily task) and visible, read only, to staff alone."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.utils import timezone

import audit
from audit.models import Action, AuditEvent
from audit.tasks import prune_audit_task

pytestmark = pytest.mark.django_db


def event_aged(days: float) -> AuditEvent:
    event = audit.record(Action.SOURCE_SYNCED, target=f"{days} days old")
    AuditEvent.objects.filter(pk=event.pk).update(time=timezone.now() - timedelta(days=days))
    return event


def test_prune_removes_only_events_past_the_retention(settings):
    settings.AUDIT_RETENTION_DAYS = 30
    old, recent = event_aged(31), event_aged(29)
    out = StringIO()
    call_command("prune_audit", stdout=out)
    assert "Deleted 1 audit event(s)." in out.getvalue()
    assert list(AuditEvent.objects.values_list("pk", flat=True)) == [recent.pk]
    assert not AuditEvent.objects.filter(pk=old.pk).exists()


def test_the_periodic_task_prunes_and_is_scheduled(settings):
    settings.AUDIT_RETENTION_DAYS = 10
    event_aged(11)
    kept = event_aged(1)
    assert prune_audit_task() == 1
    assert list(AuditEvent.objects.values_list("pk", flat=True)) == [kept.pk]
    assert settings.CELERY_BEAT_SCHEDULE["audit-prune"]["task"] == prune_audit_task.name


def test_prune_days_option_refuses_negative_values():
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="0 or more"):
        call_command("prune_audit", "--days", "-1")


def test_only_superusers_and_staff_allowed_to_view_see_the_trail(user, django_user_model):
    audit.record(Action.SHARING_CHANGED, actor=user, target="Recipes")
    plain_staff = django_user_model.objects.create_user("pat", password="pat-password-1", is_staff=True)
    boss = django_user_model.objects.create_superuser("root", password="root-password-1")
    as_plain_staff, as_boss = Client(), Client()
    as_plain_staff.force_login(plain_staff)
    as_boss.force_login(boss)

    assert as_plain_staff.get("/admin/audit/auditevent/").status_code == 403
    assert "/admin/audit/" not in as_plain_staff.get("/admin/").text  # not even listed
    listing = as_boss.get("/admin/audit/auditevent/?q=Recipes")
    assert listing.status_code == 200 and "Recipes" in listing.text
    assert "/admin/audit/auditevent/" in as_boss.get("/admin/").text


def test_staff_allowed_to_view_see_the_trail_read_only_and_others_do_not(user, django_user_model):
    from django.contrib.auth.models import Permission

    event = audit.record(Action.SHARING_CHANGED, actor=user, target="Recipes")
    staff = django_user_model.objects.create_user("sam", password="sam-password-1", is_staff=True)
    staff.user_permissions.add(Permission.objects.get(content_type__app_label="audit", codename="view_auditevent"))
    as_staff, as_user = Client(), Client()
    as_staff.force_login(staff)
    as_user.force_login(user)

    listing = as_staff.get("/admin/audit/auditevent/?action=sharing-changed&q=Recipes")
    assert listing.status_code == 200
    assert "Recipes" in listing.text and "alice" in listing.text
    assert as_staff.get(f"/admin/audit/auditevent/{event.pk}/change/").status_code == 200  # a read-only view
    assert as_staff.get("/admin/audit/auditevent/add/").status_code == 403
    assert as_staff.post(f"/admin/audit/auditevent/{event.pk}/delete/", {"post": "yes"}).status_code == 403
    assert as_staff.post(f"/admin/audit/auditevent/{event.pk}/change/", {"action": "sign-in"}).status_code == 403
    assert AuditEvent.objects.get(pk=event.pk).action == Action.SHARING_CHANGED

    refused = as_user.get("/admin/audit/auditevent/")
    assert refused.status_code == 302 and "/admin/login/" in refused["Location"]
