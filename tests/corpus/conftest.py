"""Fixtures of the sharing tests (invitations, declines, enumeration)."""

from __future__ import annotations

import pytest
from django.core.cache import caches

from corpus.models import Collection


@pytest.fixture
def mine(user) -> Collection:
    """A collection `user` owns."""
    return Collection.objects.create(slug="mine", name="Mine", owner=user)


@pytest.fixture
def no_share_budget_spent():
    """The share attempts are counted per user in Redis (corpus.quotas.ShareQuota): each test starts
    and ends with none spent."""
    caches["quotas"].clear()
    yield
    caches["quotas"].clear()
