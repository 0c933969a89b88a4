"""One HTTP request to an address already checked, with every cap applied.

`exchange(...)` connects to the given address (the one the SSRF guard checked: the host name is not
resolved again; it only goes into the Host header, SNI and the certificate check), sends a GET, and
reads the answer within `timeout` seconds in all (a watchdog closes the socket of a server that
drips bytes) and at most `max_bytes` of body (read in pieces: a larger body is never held in
memory). Redirects are not followed here: fetch.py re-checks every hop.
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
from dataclasses import dataclass
from email.message import Message

from corpus.ingest.parse.limits import size_text
from outbound.addresses import Address
from sources.web.errors import FetchError
from sources.web.inflate import Corrupt, TooLarge, inflate

READ_PIECE = 64 * 1024


@dataclass(frozen=True)
class Response:
    status: int
    headers: Message
    body: bytes  # decoded from Content-Encoding; empty for redirects and 304


class _Pinned:
    """Connects to a fixed address instead of resolving the host name."""

    address: Address
    connect_timeout: float
    read_timeout: float
    # The socket, kept here because http.client forgets it (conn.sock = None) once the response
    # owns it, and the watchdog must still be able to shut it.
    held: socket.socket | None = None

    def _open(self) -> socket.socket:
        sock = socket.create_connection((str(self.address), self.port), self.connect_timeout)
        sock.settimeout(self.read_timeout)
        return sock


class _PinnedHTTP(_Pinned, http.client.HTTPConnection):
    def connect(self) -> None:
        self.sock = self.held = self._open()


class _PinnedHTTPS(_Pinned, http.client.HTTPSConnection):
    def connect(self) -> None:
        # The certificate is checked against the host name, as a browser would, over the pinned socket.
        self.sock = self.held = self._context.wrap_socket(self._open(), server_hostname=self.host)


def tls_context() -> ssl.SSLContext:
    """The system's trusted certificates, host names checked (tests swap in their own authority)."""
    return ssl.create_default_context()


def _connection(scheme: str, host: str, port: int, address: Address, *, connect_timeout: float,
                timeout: float) -> http.client.HTTPConnection:
    conn: http.client.HTTPConnection
    if scheme == "https":
        conn = _PinnedHTTPS(host, port, timeout=timeout, context=tls_context())
    else:
        conn = _PinnedHTTP(host, port, timeout=timeout)
    conn.address, conn.connect_timeout, conn.read_timeout = address, connect_timeout, timeout
    return conn


def exchange(*, scheme: str, host: str, port: int, address: Address, target: str, headers: dict[str, str],
             max_bytes: int, connect_timeout: float, timeout: float, url: str) -> Response:
    """GET target from host:port at address; raises FetchError on any failure or cap."""
    conn = _connection(scheme, host, port, address, connect_timeout=connect_timeout, timeout=timeout)
    expired = threading.Event()

    def expire() -> None:
        expired.set()
        sock = conn.held
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    watchdog = threading.Timer(timeout, expire)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.request("GET", target, headers=headers)
        resp = conn.getresponse()
        if resp.status in (301, 302, 303, 307, 308, 304) or resp.status >= 400:
            return Response(resp.status, resp.headers, b"")
        body = _read_body(resp, max_bytes=max_bytes, url=url)
        if expired.is_set():
            raise FetchError(f"too slow: no complete answer within {timeout:g} s", url=url)
        return Response(resp.status, resp.headers, body)
    except FetchError:
        raise
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            raise FetchError(f"too slow: no complete answer within {timeout:g} s", url=url) from None
        raise FetchError(_network_reason(exc, host), url=url) from None
    finally:
        watchdog.cancel()
        conn.close()


def _read_body(resp: http.client.HTTPResponse, *, max_bytes: int, url: str) -> bytes:
    too_large = f"too large: more than {size_text(max_bytes)}"
    length = resp.getheader("Content-Length", "")
    if length.isdigit() and int(length) > max_bytes:
        raise FetchError(too_large, url=url)
    body = bytearray()
    while piece := resp.read1(READ_PIECE):
        body += piece
        if len(body) > max_bytes:
            raise FetchError(too_large, url=url)
    encoding = (resp.getheader("Content-Encoding") or "identity").strip().lower()
    if encoding in ("gzip", "x-gzip", "deflate"):
        try:
            return inflate(bytes(body), limit=max_bytes, encoding="deflate" if encoding == "deflate" else "gzip")
        except TooLarge:
            raise FetchError(too_large + " once decompressed", url=url) from None
        except Corrupt as exc:
            raise FetchError(f"unreadable body: {exc}", url=url) from None
    if encoding != "identity":
        raise FetchError(f"unsupported Content-Encoding {encoding!r}", url=url)
    return bytes(body)


def _network_reason(exc: BaseException, host: str) -> str:
    if isinstance(exc, ssl.SSLCertVerificationError):
        return f"TLS certificate of {host} not valid: {exc.verify_message}"
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"timed out talking to {host}"
    if isinstance(exc, ConnectionRefusedError):
        return f"cannot connect to {host}: connection refused"
    if isinstance(exc, http.client.HTTPException):
        return f"bad HTTP answer from {host} ({type(exc).__name__})"
    return f"network error with {host}: {exc.strerror or exc}" if isinstance(exc, OSError) else str(exc)
