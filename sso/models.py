"""Who signed in through the identity provider, and which groups the provider manages."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import Group
from django.db import models


class Identity(models.Model):
    """The provider's account (issuer + `sub`) behind a ragweb user.

    Sign-in finds the user by this pair only, never by e-mail or username: an address an IdP user
    can set, or a username a local account already has, must not open someone else's account."""

    user = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sso_identity")
    issuer = models.CharField(max_length=255)
    subject = models.CharField(max_length=255)
    created = models.DateTimeField(auto_now_add=True)
    last_sign_in = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["issuer", "subject"], name="sso_identity_issuer_subject")]
        verbose_name_plural = "identities"

    def __str__(self) -> str:
        return f"{self.subject} at {self.issuer}"


class ManagedGroup(models.Model):
    """A Django group the provider's groups claim has named: sign-in adds and removes SSO users in it.

    Groups never named by the claim (made by staff) are left alone by sign-in."""

    group = models.OneToOneField(Group, on_delete=models.CASCADE, primary_key=True, related_name="sso_managed")
    created = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "group managed by the identity provider"
        verbose_name_plural = "groups managed by the identity provider"

    def __str__(self) -> str:
        return self.group.name
