"""Reusable reads, attached to the models with as_manager()."""

from __future__ import annotations

from django.db import models
from django.db.models import Q


class CollectionQuerySet(models.QuerySet):
    def readable_by(self, user) -> CollectionQuerySet:
        """Collections `user` may read: superusers see all; others (staff included) public, owned,
        or shared with them."""
        if user is None or not user.is_authenticated or not user.is_active:
            return self.none()
        if user.is_superuser:
            return self.all()
        return self.filter(Q(is_public=True) | Q(owner=user) | Q(readers=user) | Q(editors=user)).distinct()

    def writable_by(self, user) -> CollectionQuerySet:
        if user is None or not user.is_authenticated or not user.is_active:
            return self.none()
        if user.is_superuser:
            return self.all()
        return self.filter(Q(owner=user) | Q(editors=user)).distinct()

    def manageable_by(self, user) -> CollectionQuerySet:
        """Collections `user` may rename, share and delete: their own (superusers: all)."""
        if user is None or not user.is_authenticated or not user.is_active:
            return self.none()
        if user.is_superuser:
            return self.all()
        return self.filter(owner=user)
