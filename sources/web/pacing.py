"""A rate limit per host: requests to one host are spaced by HOST_INTERVAL seconds.

`wait_turn(host)` blocks until this process may send its next request to host. The slots are
booked in Redis (SOURCES_PACING_URL), so every worker and web process shares one schedule per host;
when Redis cannot be reached the spacing falls back to this process alone (logged), because a
sync should slow down, not fail, when the pacing store is away.
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from django.conf import settings

log = logging.getLogger(__name__)

# Seconds between two requests to one host, from every process together: one page a second is the common
# courtesy of crawlers that give no Crawl-delay of their own; a robots.txt Crawl-delay may ask for more.
HOST_INTERVAL = 1.0

# Books the next free slot of a host atomically: returns the slot's time; the key expires soon after.
_BOOK = """
local now = tonumber(ARGV[1])
local gap = tonumber(ARGV[2])
local slot = math.max(now, tonumber(redis.call('GET', KEYS[1]) or '0'))
redis.call('SET', KEYS[1], tostring(slot + gap), 'PX', math.ceil((slot - now + gap) * 1000) + 1000)
return tostring(slot)
"""

_local_slots: dict[str, float] = {}
_local_lock = threading.Lock()
_client: redis.Redis | None = None
_client_url = ""


def _redis() -> redis.Redis:
    global _client, _client_url
    if _client is None or _client_url != settings.SOURCES_PACING_URL:
        _client = redis.Redis.from_url(settings.SOURCES_PACING_URL, socket_connect_timeout=2, socket_timeout=2)
        _client_url = settings.SOURCES_PACING_URL
    return _client


def _book_local(host: str, now: float, gap: float) -> float:
    with _local_lock:
        slot = max(now, _local_slots.get(host, 0.0))
        _local_slots[host] = slot + gap
    return slot


def book_slot(host: str, *, at_least: float = 0.0) -> float:
    """Books this process's next request to host; returns the wall-clock time it may be sent.

    The gap after it is HOST_INTERVAL, or at_least (a robots.txt Crawl-delay) when longer.
    """
    gap = max(HOST_INTERVAL, at_least)
    now = time.time()
    if gap <= 0:
        return now
    try:
        return float(_redis().eval(_BOOK, 1, f"ragweb:sources:pace:{host.lower()}", now, gap))
    except redis.RedisError as exc:
        log.warning("web sources: pacing per process only, Redis unavailable (%s)", exc)
        return _book_local(host.lower(), now, gap)


def wait_turn(host: str, *, at_least: float = 0.0) -> None:
    """Sleeps until a request to host keeps the spacing HOST_INTERVAL (or at_least) asks for."""
    delay = book_slot(host, at_least=at_least) - time.time()
    if delay > 0:
        time.sleep(delay)
