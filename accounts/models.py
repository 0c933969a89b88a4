"""Personal API tokens, stored hashed: the key is shown once, when it is made, and never again."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.utils import timezone

KEY_PREFIX = "rw_"
PREFIX_CHARS = 8  # shown in lists so a user can tell their tokens apart
# last_used is written at most this often per token, not on every request.
LAST_USED_EVERY = timedelta(minutes=1)


def hash_key(key: str) -> str:
    """The stored form of a key. Keys are 240 random bits, so a fast hash is as good as a slow one."""
    return hashlib.sha256(key.encode()).hexdigest()


def new_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(30)


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    key_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=PREFIX_CHARS)
    # A read-only token may read, search and ask, never change anything (accounts.permissions.TokenScope).
    read_only = models.BooleanField(default=False)
    created = models.DateTimeField(default=timezone.now)
    last_used = models.DateTimeField(null=True, blank=True)
    expires = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created", "-id"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def expired(self) -> bool:
        return self.expires is not None and self.expires <= timezone.now()

    def touch(self) -> None:
        """Record a use, at most once per LAST_USED_EVERY (a conditional update: no write per request)."""
        now = timezone.now()
        if self.last_used is None or now - self.last_used >= LAST_USED_EVERY:
            ApiToken.objects.filter(pk=self.pk).update(last_used=now)
            self.last_used = now
