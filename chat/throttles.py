"""Per-user rate limits on the costly operations, from settings.API_THROTTLE_RATES (env
API_THROTTLE: questions, and five times as many searches), counted in Redis like every quota (accounts.quotas).
Read at each request, so a changed setting applies without re-importing DRF. DRF views list them
in `throttle_classes` (over the limit: 429 with a Retry-After header); the chat page's /ask/ calls
ask_wait(), so asking from the page, POST /api/ask/ and /v1/chat/completions draw on one budget
per user."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from accounts.quotas import UserQuota, wait_seconds


class _SettingsRateThrottle(UserQuota):
    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope)


class SearchThrottle(_SettingsRateThrottle):
    scope = "search"


class AskThrottle(_SettingsRateThrottle):
    scope = "ask"


def ask_wait(request: HttpRequest) -> int | None:
    """None when the signed-in user of `request` may ask now (the question is counted); else the
    seconds to wait before the next one is taken."""
    return wait_seconds(AskThrottle, request)
