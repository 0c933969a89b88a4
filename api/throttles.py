"""Per-user rate limits on the costly endpoints, from settings.API_THROTTLE_RATES (env
API_THROTTLE_SEARCH / API_THROTTLE_ASK). Read at each request, so a changed setting applies
without re-importing DRF. Over the limit DRF answers 429 with a Retry-After header."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import UserRateThrottle


class _SettingsRateThrottle(UserRateThrottle):
    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_RATES.get(self.scope)


class SearchThrottle(_SettingsRateThrottle):
    scope = "search"


class AskThrottle(_SettingsRateThrottle):
    scope = "ask"
