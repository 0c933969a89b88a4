"""AuditEvent: one thing someone did, kept AUDIT_RETENTION_DAYS (audit.services.events_prune)."""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db import models
from django.utils import timezone


class Action(models.TextChoices):
    SIGN_IN = "sign-in", "Signed in"
    SIGN_IN_FAILED = "sign-in-failed", "Sign-in failed"
    SIGN_OUT = "sign-out", "Signed out"
    TOKEN_CREATED = "token-created", "Token created"
    TOKEN_REVOKED = "token-revoked", "Token revoked"
    SHARING_CHANGED = "sharing-changed", "Sharing changed"
    COLLECTION_DELETED = "collection-deleted", "Collection deleted"
    DOCUMENT_DELETED = "document-deleted", "Document deleted"
    SOURCE_ADDED = "source-added", "Source added"
    SOURCE_CHANGED = "source-changed", "Source changed"
    SOURCE_DELETED = "source-deleted", "Source deleted"
    SOURCE_SYNCED = "source-synced", "Source synced"
    LLM_CONFIG_CHANGED = "llm-config-changed", "LLM configuration changed"
    LLM_TESTED = "llm-tested", "LLM tested"
    TOKEN_CHANGED = "token-changed", "Token changed"
    GROUPS_CHANGED = "groups-changed", "Group membership changed"
    ROLE_CHANGED = "role-changed", "Staff or superuser status changed"
    PASSWORD_CHANGED = "password-changed", "Password changed"
    DOCUMENT_MOVED = "document-moved", "Document moved"
    SHARE_ACCEPTED = "share-accepted", "Share invitation accepted"
    SHARE_DECLINED = "share-declined", "Share invitation declined"
    SOURCE_PAUSED = "source-paused", "Source paused"
    SOURCE_TAKEN_OVER = "source-taken-over", "Source taken over"


class AuditEventQuerySet(models.QuerySet):
    def older_than(self, moment: datetime) -> AuditEventQuerySet:
        return self.filter(time__lt=moment)


class AuditEvent(models.Model):
    time = models.DateTimeField(default=timezone.now, db_index=True)
    # The account may be deleted later: the username copy keeps the event readable.
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    actor_username = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=32, choices=Action.choices, db_index=True)
    # What was acted on, by value (it may be deleted by the very action recorded).
    target_type = models.CharField(max_length=100, blank=True)
    target_id = models.CharField(max_length=64, blank=True)
    target_label = models.CharField(max_length=200, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)

    objects = AuditEventQuerySet.as_manager()

    class Meta:
        ordering = ["-time", "-id"]
        indexes = [models.Index(fields=["actor", "-time"], name="audit_actor_time")]

    def __str__(self) -> str:
        who = self.actor_username or "someone"
        what = f" {self.target_label}" if self.target_label else ""
        return f"{who}: {self.get_action_display()}{what}"
