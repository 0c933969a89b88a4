"""Per-user rate limits on operations that cost the server more than a page view: a limit is a
DRF throttle whose rate is a constant next to the code it protects (sources' "sync now", forced
re-ingests, the passage page), not a setting. Counted per user (per client address when signed
out) in each process's cache, as the search and ask throttles (chat.throttles) are.

DRF views list the throttle class in `throttle_classes` (over the limit: 429 with Retry-After);
plain Django views call `wait_seconds(ThrottleClass, request)`, so a page and the API draw on one
budget per user."""

from __future__ import annotations

import math

from django.http import HttpRequest
from rest_framework.throttling import UserRateThrottle


class UserQuota(UserRateThrottle):
    """A per-user throttle: subclasses set `scope` and `rate` ("12/hour")."""


def wait_seconds(throttle_class: type[UserQuota], request: HttpRequest) -> int | None:
    """None when the user of `request` may go on now (this request is counted); else the seconds
    to wait before the next one is taken."""
    throttle = throttle_class()
    if throttle.allow_request(request, None):
        return None
    return max(1, math.ceil(throttle.wait() or 1))
