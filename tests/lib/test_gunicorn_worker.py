"""lib.gunicorn_worker: slow clients hold no request thread; whole requests are served as before.

Each test runs a real gunicorn (1 worker x 2 threads) over a tiny WSGI app, so it starts in a second.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lib.gunicorn_worker import BufferingThreadWorker, request_complete
from reliability.slow import trickle

ROOT = Path(__file__).resolve().parents[2]
WORKER = "lib.gunicorn_worker.BufferingThreadWorker"


class QuickTimeoutWorker(BufferingThreadWorker):
    """The worker with a 1 s request timeout (a class attribute, not a setting), for the 408 test."""

    request_timeout = 1.0


def echo_app(environ, start_response):
    """The request's method, path and body length, so a test can see what the app received;
    /sleep/SECONDS waits that long first and adds the serving process's pid."""
    body = environ["wsgi.input"].read()
    text = f"{environ['REQUEST_METHOD']} {environ['PATH_INFO']} {len(body)}"
    if environ["PATH_INFO"].startswith("/sleep/"):
        time.sleep(float(environ["PATH_INFO"].split("/")[2]))
        text += f" pid={os.getpid()}"
    text = text.encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(text)))])
    return [text]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def serve():
    started = []

    def start(worker_class: str, *, workers: int = 1, threads: int = 2, **env: str) -> int:
        port = free_port()
        process = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "tests.lib.test_gunicorn_worker:echo_app", "--bind",
             f"127.0.0.1:{port}", "--worker-class", worker_class, "--workers", str(workers), "--threads", str(threads),
             "--no-control-socket"],
            cwd=ROOT, env={**os.environ, **env}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if b"GET / 0" in request(port, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", timeout=1):
                    # The probe's thread counts as busy until it has finished after its response: on a loaded
                    # machine (make test runs two workers) a test's first request could otherwise find it taken.
                    time.sleep(0.5)
                    return port
            except OSError:
                time.sleep(0.2)
        raise AssertionError("gunicorn did not start")

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=20)


def request(port: int, raw: bytes, *, timeout: float) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as sock:
        sock.sendall(raw)
        data = b""
        while b"\r\n\r\n" not in data or not data.split(b"\r\n\r\n", 1)[1]:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        return data


def read_response(sock: socket.socket) -> bytes:
    """One whole response (head and Content-Length body) from a connection that stays open."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"content-length:\s*(\d+)", head, re.IGNORECASE).group(1))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def slow_clients(port: int, count: int, stop: threading.Event) -> list[socket.socket]:
    """`count` connections that send a request one byte every 0.3 s, never finishing it."""
    sockets = [socket.create_connection(("127.0.0.1", port)) for _ in range(count)]
    payload = b"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"x" * 100000
    trickle(sockets, payload, stop, every=0.3)
    return sockets


def answered_despite_slow_clients(port: int) -> bool:
    stop = threading.Event()
    sockets = slow_clients(port, 8, stop)
    try:
        time.sleep(1.5)  # every slow client has sent its first bytes
        try:
            return b"GET /healthz 0" in request(port, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n", timeout=3)
        except OSError:  # timed out
            return False
    finally:
        stop.set()
        for sock in sockets:
            sock.close()


def test_it_answers_while_slow_clients_trickle_requests(serve):
    assert answered_despite_slow_clients(serve(WORKER))


def test_plain_gthread_is_held_by_the_same_slow_clients(serve):
    # What the worker fixes: the same eight clients take both of gthread's threads.
    assert not answered_despite_slow_clients(serve("gthread"))


def test_it_serves_bodies_chunked_bodies_and_kept_alive_connections(serve):
    # Four threads: the threads of the first two requests may still be finishing when the kept-alive
    # requests arrive (on a loaded machine), and with every thread busy the worker rightly answers
    # "Connection: close" (tested below), which is not what this test is about.
    port = serve(WORKER, threads=4)
    body = b"a" * 3_000_000  # beyond the in-memory buffer: handed to a thread as it streams in
    assert b"POST /big 3000000" in request(
        port, b"POST /big HTTP/1.1\r\nHost: x\r\nContent-Length: 3000000\r\n\r\n" + body, timeout=10)
    chunked = b"POST /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"
    assert b"POST /chunked 5" in request(port, chunked, timeout=5)
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        for path in (b"/one", b"/two"):
            sock.sendall(b"GET " + path + b" HTTP/1.1\r\nHost: x\r\n\r\n")
            answer = read_response(sock)
            assert b"GET " + path + b" 0" in answer
            assert b"Connection: close" not in answer


def test_a_client_expecting_100_continue_is_told_to_send_its_body(serve):
    port = serve(WORKER)
    with socket.create_connection(("127.0.0.1", port), timeout=2) as sock:
        sock.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
        assert sock.recv(65536).startswith(b"HTTP/1.1 100 Continue\r\n\r\n")  # within 2 s, not a timeout
        sock.sendall(b"hello")
        answer = b""
        while b"POST /upload 5" not in answer:
            chunk = sock.recv(65536)
            assert chunk, answer
            answer += chunk


def test_an_unfinished_request_gets_408_after_the_timeout(serve):
    port = serve("tests.lib.test_gunicorn_worker.QuickTimeoutWorker")
    with socket.create_connection(("127.0.0.1", port), timeout=6) as sock:
        sock.sendall(b"GET /never-finished HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        answer = sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 4


def test_a_worker_with_every_thread_busy_closes_connections_after_their_response(serve):
    port = serve(WORKER)  # 1 process x 2 threads
    # Three at once on two threads: the second and the third start with both threads taken. Spaced 0.4 s
    # (each sleeps 1.5 s) so that the first has started before the second comes, even on a loaded machine.
    with ThreadPoolExecutor(3) as pool:
        pending = []
        for _ in range(3):
            pending.append(pool.submit(request, port, b"GET /sleep/1.5 HTTP/1.1\r\nHost: x\r\n\r\n", timeout=10))
            time.sleep(0.4)
        closes = [b"Connection: close" in answer.result() for answer in pending]
    assert closes == [False, True, True]
    time.sleep(0.5)  # the last one's thread is given back
    assert b"Connection: keep-alive" in request(port, b"GET /sleep/0 HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)


def test_a_busy_process_leaves_the_next_connection_to_one_with_a_free_thread(serve):
    port = serve(WORKER, workers=2, threads=1)
    with ThreadPoolExecutor(1) as pool:
        for _ in range(4):  # a process chosen by chance would serve both of a round's requests half the time
            slow = pool.submit(request, port, b"GET /sleep/0.6 HTTP/1.1\r\nHost: x\r\n\r\n", timeout=10)
            time.sleep(0.2)
            quick = request(port, b"GET /sleep/0 HTTP/1.1\r\nHost: x\r\n\r\n", timeout=5)
            slow_pid, quick_pid = (answer.rsplit(b"pid=", 1)[1] for answer in (slow.result(), quick))
            assert slow_pid != quick_pid


@pytest.mark.parametrize(("data", "complete"), [
    (b"GET / HTTP/1.1\r\nHost: x\r\n", False),
    (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", True),
    (b"POST / HTTP/1.1\r\ncontent-length: 4\r\n\r\nabc", False),
    (b"POST / HTTP/1.1\r\nContent-Length: 4\r\n\r\nabcd", True),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", False),
    (b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", True),
    (b"POST / HTTP/1.1\r\nContent-Length: 999999\r\n\r\n" + b"x" * 100, True),  # the buffer limit (100)
    (b"GET /" + b"a" * 70_000, True),  # no end of head in 64 KiB: gunicorn refuses it
])
def test_request_complete(data, complete):
    assert request_complete(data, buffer_limit=100) is complete
