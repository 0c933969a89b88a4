"""A gunicorn worker whose threads never wait for a slow client's request.

gunicorn's gthread worker hands a connection to a thread as soon as its first byte arrives, and the
thread then reads the rest of the request with blocking reads: clients that send a byte a second
hold every thread (2 workers x 16 threads) and the site stops answering. This worker reads each
request, head and body, in its event loop, without a thread, and gives it to a thread only once it
is complete (then the thread parses it from memory). A request not complete within
request_timeout seconds (30) is answered 408 and closed.

Bodies are buffered up to buffer_limit bytes (1 MiB); a larger body (an upload) goes to a
thread once that much has arrived: a client that sent a megabyte is not a byte-a-second client, and
buffering every upload whole would put its size in memory. Used by `make run` and docker-compose
(`--worker-class lib.gunicorn_worker.BufferingThreadWorker`); production also has nginx in front.

Several worker processes share the listening socket, and a kept-alive connection stays with the
process that accepted it: 50 clients split 31/19 between two processes wait for the busier one's
threads far longer (docs/scaling.md, "Searches per second"). So a process whose threads are all busy
takes no new connection (the next one waits in the shared accept queue for whichever process frees a
thread first) and answers with "Connection: close", so the client's next request joins that queue
too. Below saturation connections are kept alive as before.
"""

from __future__ import annotations

import re
import selectors
import socket
import threading
import time
from dataclasses import dataclass, field
from functools import partial

from gunicorn.workers.gthread import TConn, ThreadWorker

HEAD_END = b"\r\n\r\n"
MAX_HEAD_BYTES = 64 * 1024  # beyond gunicorn's own request line and header limits: let it refuse
_CONTENT_LENGTH = re.compile(rb"^content-length:[ \t]*(\d+)[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
_CHUNKED = re.compile(rb"^transfer-encoding:[^\r\n]*chunked", re.IGNORECASE | re.MULTILINE)
_EXPECT_CONTINUE = re.compile(rb"^expect:[ \t]*100-continue[ \t]*\r?$", re.IGNORECASE | re.MULTILINE)
CONTINUE = b"HTTP/1.1 100 Continue\r\n\r\n"
REQUEST_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Type: text/plain\r\n"
                            b"Content-Length: 42\r\n\r\nThe request did not arrive in time (408).\n")


def request_complete(data: bytes, *, buffer_limit: int) -> bool:
    """Whether `data` holds a whole HTTP/1.x request (or as much of one as a thread should wait for)."""
    end = data.find(HEAD_END)
    if end < 0:
        return len(data) > MAX_HEAD_BYTES
    head, body = data[:end + 2], data[end + 4:]
    if len(body) >= buffer_limit:
        return True
    if _CHUNKED.search(head):
        # The last chunk (size 0) and the blank line after it (trailers are not used by the app).
        return body.startswith(b"0\r\n\r\n") or b"\r\n0\r\n\r\n" in body
    match = _CONTENT_LENGTH.search(head)
    return len(body) >= (int(match.group(1)) if match else 0)


@dataclass
class Incoming:
    """A connection whose request is still arriving."""

    conn: TConn
    deadline: float
    data: bytearray = field(default_factory=bytearray)
    continued: bool = False  # "100 Continue" sent


class BufferingThreadWorker(ThreadWorker):
    """gthread, with every request (first or kept-alive) read whole in the event loop first."""

    # Seconds a request may take to arrive whole: an honest client on a slow link sends a search in well
    # under a second, a slow-drip client is cut off (nginx in front buffers bodies in production anyway).
    request_timeout = 30.0
    # Bytes of body buffered before a thread takes the request: the largest API JSON body
    # (settings.API_MAX_JSON_BYTES), so only uploads stream to a thread.
    buffer_limit = 1024 * 1024

    def __init__(self, *args, **kwargs):
        # Requests handed to the thread pool and not finished: counted up by the event loop, down by
        # the request's thread as soon as it is done (the loop learns of it only on its next turn).
        self.in_flight = 0
        self._in_flight_lock = threading.Lock()
        super().__init__(*args, **kwargs)
        self.incoming: dict[int, Incoming] = {}

    @property
    def saturated(self) -> bool:
        """Every request thread is taken (or requests wait for one)."""
        return self.in_flight >= self.cfg.threads

    # gthread answers "Connection: close" when len(keepalived_conns) >= max_keepalived, decided as a
    # request starts: 0 while saturated sends that client back to the shared accept queue.
    @property
    def max_keepalived(self) -> int:
        return 0 if self.saturated else self._max_keepalived

    @max_keepalived.setter
    def max_keepalived(self, value: int) -> None:
        self._max_keepalived = value

    def set_accept_enabled(self, enabled):
        # gthread's loop calls this with True again on every turn while it is off, so accepting
        # resumes as soon as a thread is free.
        super().set_accept_enabled(enabled and not self.saturated)

    def enqueue_req(self, conn):
        with self._in_flight_lock:
            self.in_flight += 1
        if self.saturated and self._accepting:
            super().set_accept_enabled(False)
        super().enqueue_req(conn)

    def handle(self, conn):
        try:
            return super().handle(conn)
        finally:
            with self._in_flight_lock:
                self.in_flight -= 1

    def accept(self, listener):
        try:
            client, address = listener.accept()
        except (BlockingIOError, ConnectionAbortedError, InterruptedError):
            return
        self.nr_conns += 1
        self._buffer(TConn(self.cfg, client, address, listener.getsockname()))

    def on_client_socket_readable(self, conn, client):
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        self._buffer(conn)

    def on_pending_socket_readable(self, conn, client):
        self.poller.unregister(client)
        self.pending_conns.remove(conn)
        self._buffer(conn)

    def _buffer(self, conn: TConn) -> None:
        conn.sock.setblocking(False)
        incoming = Incoming(conn, time.monotonic() + self.request_timeout)
        self.incoming[id(conn)] = incoming
        self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_readable, incoming))

    def _on_readable(self, incoming: Incoming, sock: socket.socket) -> None:
        try:
            chunk = sock.recv(65536)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if not chunk:  # the client went away
            self._drop(incoming)
            return
        incoming.data += chunk
        if request_complete(bytes(incoming.data), buffer_limit=self.buffer_limit):
            self._forget(incoming)
            conn = incoming.conn
            conn.init()  # blocking socket and an HTTP/1 parser (a no-op on a kept-alive connection)
            conn.parser.unreader.unread(bytes(incoming.data))
            conn.data_ready = True
            self.enqueue_req(conn)
        elif not incoming.continued:
            self._continue(incoming)

    def _continue(self, incoming: Incoming) -> None:
        """A client that sent `Expect: 100-continue` waits for this before its body (curl, for large
        uploads): without it the body would only come after the client's own timeout. gunicorn may send
        a second one later; clients take any number of 1xx answers (RFC 9110 15.2)."""
        end = incoming.data.find(HEAD_END)
        if end >= 0 and _EXPECT_CONTINUE.search(bytes(incoming.data[:end + 2])):
            incoming.continued = True
            try:
                incoming.conn.sock.send(CONTINUE)
            except OSError:
                pass

    def _forget(self, incoming: Incoming) -> None:
        self.incoming.pop(id(incoming.conn), None)
        try:
            self.poller.unregister(incoming.conn.sock)
        except (KeyError, ValueError, OSError):
            pass

    def _drop(self, incoming: Incoming, *, answer: bytes = b"") -> None:
        self._forget(incoming)
        if answer:
            try:
                incoming.conn.sock.send(answer)  # best effort: the socket is non-blocking
            except OSError:
                pass
        self.nr_conns -= 1
        incoming.conn.close()

    def murder_pending(self):
        super().murder_pending()
        now = time.monotonic()
        for incoming in [i for i in self.incoming.values() if i.deadline <= now]:
            self._drop(incoming, answer=REQUEST_TIMEOUT_RESPONSE if incoming.data else b"")

    def run(self):
        try:
            super().run()
        finally:
            for incoming in list(self.incoming.values()):
                self._drop(incoming)
