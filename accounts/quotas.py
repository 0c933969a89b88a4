"""Per-user rate limits on operations that cost the server more than a page view: a limit is a
DRF throttle whose rate is a constant next to the code it protects (sources' "sync now", forced
re-ingests, the passage page) or a setting (search and ask, chat.throttles). Counted per user
(per client address when signed out) in Redis (the "quotas" cache), so a limit holds across every
web process and replica, not per process.

A count is a fixed window: at most N requests in each period (a minute, an hour) counted with one
atomic increment, so a burst of parallel requests cannot all read the same count and all pass (a
history read and written back, as DRF's own throttles do, lets them). At a window's edge a user may
send up to 2N within one period; these are budgets against floods, not billing.

DRF views list the throttle class in `throttle_classes` (over the limit: 429 with Retry-After);
plain Django views call `wait_seconds(ThrottleClass, request)`, so a page and the API draw on one
budget per user. When Redis cannot be reached the request is let through (logged): a broker outage
must not refuse every search."""

from __future__ import annotations

import logging
import math

from django.core.cache import caches
from django.http import HttpRequest
from rest_framework.throttling import UserRateThrottle

logger = logging.getLogger(__name__)

CACHE = "quotas"  # settings.CACHES: Redis, shared by every process


class UserQuota(UserRateThrottle):
    """A per-user throttle counted in Redis: subclasses set `scope` and `rate` ("12/hour"), or
    override get_rate."""

    _wait: float | None = None

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        key = self.get_cache_key(request, view)
        if key is None:
            return True
        now = self.timer()
        window = int(now // self.duration)
        key = f"quota:{key}:{window}"
        try:
            cache = caches[CACHE]
            cache.add(key, 0, timeout=self.duration + 1)  # outlives its window, then goes
            count = cache.incr(key)
        except Exception:  # Redis down (or the key expired between the two calls): not counted
            logger.warning("quota %s: the count could not be kept in Redis; request let through", self.scope,
                           exc_info=True)
            return True
        if count <= self.num_requests:
            return True
        self._wait = (window + 1) * self.duration - now
        return False

    def wait(self) -> float | None:
        return self._wait


def wait_seconds(throttle_class: type[UserQuota], request: HttpRequest) -> int | None:
    """None when the user of `request` may go on now (this request is counted); else the seconds
    to wait before the next one is taken."""
    throttle = throttle_class()
    if throttle.allow_request(request, None):
        return None
    return max(1, math.ceil(throttle.wait() or 1))
