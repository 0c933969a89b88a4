"""Input limits under attack: one token sends many oversized /v1 conversations at once (by default
12 in parallel, each 200,000 one-word messages, 7.8 MB: under the body cap) while another user
searches. Before the caps each took ~3.7 s, the web process went from 1.6 to 3.7 GB for good and
other users' searches from 0.1 s to 3-7 s. Now each must be refused before it is parsed (413
request_too_large: the body is over API_MAX_JSON_BYTES), the web processes must keep their memory,
and searches their speed."""

from __future__ import annotations

import json
import statistics
import threading
import time
from dataclasses import dataclass, field

from reliability.app import App, Dropped
from reliability.security import create_user

MB = 1024 ** 2
# What passing means (the numbers before the fix in the docstring).
# After the attack, all web processes together. Refused requests still cost each of the 16 request
# threads its own malloc arena: +172 and +234 MB measured in two runs, against +1.8 GB before the fix.
MAX_RSS_GROWTH = 500 * MB
MAX_SEARCH_SECONDS = 1.5  # the slowest bystander search during the attack


@dataclass
class LimitsResult:
    name: str
    statuses: dict[str, int] = field(default_factory=dict)
    refusal_seconds: list[float] = field(default_factory=list)
    rss_before: int = 0
    rss_after: int = 0
    search_before: list[float] = field(default_factory=list)
    search_during: list[float] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def detail(self) -> str:
        slowest = max(self.refusal_seconds, default=0.0)
        before = statistics.median(self.search_before) if self.search_before else 0.0
        during = max(self.search_during, default=0.0)
        text = (f"{sum(self.statuses.values())} requests: {self.statuses}; slowest refusal {slowest:.2f} s; "
                f"web RSS {self.rss_before / MB:.0f} -> {self.rss_after / MB:.0f} MB; bystander search "
                f"median {before * 1000:.0f} ms before, slowest {during * 1000:.0f} ms during "
                f"({len(self.search_during)} searches)")
        return text + (f"; PROBLEM: {'; '.join(self.problems)}" if self.problems else "")


def _web_rss(app: App) -> int:
    total = 0
    for process in app.web_processes():
        try:
            total += process.memory_info().rss
        except Exception:  # a worker restarting between the listing and the read
            pass
    return total


def _search(app: App, token: str) -> float:
    response = app.request("POST", "/api/search/", json_body={"query": "How often should tomatoes be watered?"},
                           token=token, timeout=60)
    if response.status != 200:
        raise RuntimeError(f"bystander search answered {response.status}")
    return response.seconds


def oversized_history(app: App, token: str, *, parallel: int = 12, messages: int = 200_000,
                      rounds: int = 2) -> LimitsResult:
    """`rounds` waves of `parallel` concurrent /v1 requests of `messages` messages each, from one
    token, with a bystander searching throughout."""
    result = LimitsResult(f"/v1 with {messages:,} messages, {parallel} at once x {rounds} (one token)")
    _, bystander = create_user(f"bystander-{int(time.time())}")
    body = json.dumps({"model": "ragweb", "messages": [{"role": "user", "content": "word"}] * messages}).encode()
    for _ in range(3):  # warm-up, then the baseline
        _search(app, bystander)
    result.search_before = [_search(app, bystander) for _ in range(5)]
    result.rss_before = _web_rss(app)

    lock = threading.Lock()

    def attack() -> None:
        try:
            response = app.request("POST", "/v1/chat/completions", body=body, token=token, timeout=120,
                                   headers={"Content-Type": "application/json"})
            code = (response.json().get("error") or {}).get("code") if response.is_json else None
            outcome = f"{response.status} {code}"
            seconds = response.seconds
        except Dropped:
            outcome, seconds = "dropped", 0.0
        with lock:
            result.statuses[outcome] = result.statuses.get(outcome, 0) + 1
            result.refusal_seconds.append(seconds)

    attacking = threading.Event()

    def bystander_searches() -> None:
        while attacking.is_set():
            try:
                result.search_during.append(_search(app, bystander))
            except (Dropped, RuntimeError) as exc:
                result.problems.append(f"bystander search failed: {exc}")
                return

    attacking.set()
    watcher = threading.Thread(target=bystander_searches)
    watcher.start()
    try:
        for _ in range(rounds):
            threads = [threading.Thread(target=attack) for _ in range(parallel)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(180)
    finally:
        attacking.clear()
        watcher.join(120)
    time.sleep(2)  # let the processes settle
    result.rss_after = _web_rss(app)

    expected = "413 request_too_large"
    if result.statuses != {expected: parallel * rounds}:
        result.problems.append(f"expected {parallel * rounds} x {expected}")
    if result.rss_after - result.rss_before > MAX_RSS_GROWTH:
        result.problems.append(f"web RSS grew by {(result.rss_after - result.rss_before) / MB:.0f} MB "
                               f"(limit {MAX_RSS_GROWTH / MB:.0f})")
    if not result.search_during:
        result.problems.append("no bystander search completed during the attack")
    elif max(result.search_during) > MAX_SEARCH_SECONDS:
        result.problems.append(f"a bystander search took {max(result.search_during):.2f} s "
                               f"(limit {MAX_SEARCH_SECONDS} s)")
    return result
