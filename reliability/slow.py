"""Slow clients: sockets that send their request a byte a second, held open, while the harness keeps
asking /healthz and searching. Before the buffering worker, 8 such sockets took gunicorn's 2 x 8
threads and /healthz timed out for everyone until they closed."""

from __future__ import annotations

import socket
import threading
import time

from reliability.app import App, Dropped
from reliability.security import SecurityResult

# Seconds: a request slower than this counts as "not answered". Held threads show as no answer at all
# until the slow sockets give up; 10 s leaves room for a 2-core machine shared with the worker's ingestion.
ANSWER_WITHIN = 10.0


def trickle(sockets: list[socket.socket], payload: bytes, stop: threading.Event, *,
            every: float = 1.0) -> threading.Thread:
    """Send `payload` to each socket one byte every `every` seconds, in a daemon thread, until all of it is
    sent or `stop` is set: slow clients, the one helper for them (make reliability's sections and the tests)."""

    def send() -> None:
        for byte in payload:
            if stop.wait(every):
                return
            for sock in sockets:
                try:
                    sock.send(bytes([byte]))
                except OSError:
                    pass

    thread = threading.Thread(target=send, daemon=True)
    thread.start()
    return thread


def _slow_searches(port: int, count: int, stop: threading.Event, opened: list[socket.socket]) -> threading.Thread:
    """`count` connections, each sending a search request one byte a second (never finishing in time)."""
    body = b'{"query": "tomatoes", "k": 3}'
    payload = (b"POST /api/search/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
    for _ in range(count):
        try:
            opened.append(socket.create_connection(("127.0.0.1", port), timeout=5))
        except OSError:
            pass
    return trickle(opened, payload, stop)


def slow_clients(app: App, token: str, *, sockets: int, seconds: float) -> SecurityResult:
    """`sockets` slow clients for `seconds`; every second a /healthz and a search must be answered
    (any complete response within ANSWER_WITHIN seconds; the slowest is reported)."""
    result = SecurityResult(f"{sockets} slow clients (a byte a second) for {seconds:.0f} s: the app keeps answering")
    # Not counted: the first search loads the embedding model in each web process.
    for _ in range(4):
        app.request("POST", "/api/search/", json_body={"query": "water"}, token=token, timeout=180)
    stop = threading.Event()
    opened: list[socket.socket] = []
    thread = _slow_searches(app.port, sockets, stop, opened)
    time.sleep(3)  # every slow client is connected and has sent its first bytes
    slowest = 0.0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            for method, path, body in (("GET", "/healthz", None), ("POST", "/api/search/", {"query": "water"})):
                result.checked += 1
                try:
                    response = app.request(method, path, json_body=body, token=token, timeout=ANSWER_WITHIN)
                except Dropped as exc:
                    result.failures.append(f"{method} {path} not answered within {ANSWER_WITHIN:.0f} s: {exc}")
                    continue
                slowest = max(slowest, response.seconds)
                if response.status >= 500 and path != "/healthz":
                    result.failures.append(f"{method} {path}: HTTP {response.status}")
            time.sleep(1)
    finally:
        stop.set()
        thread.join(timeout=5)
        for sock in opened:
            sock.close()
    result.notes.append(f"{len(opened)} slow sockets opened; slowest answer {slowest * 1000:.0f} ms")
    return result
