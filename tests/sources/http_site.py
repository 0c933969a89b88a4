"""A real local HTTP server whose pages a test changes while it runs: the web site of source tests.

    with HttpSite() as site:
        site.pages["/"] = Page("<html>...</html>")          # 200, with an ETag and Last-Modified
        site.pages["/docs/a"] = "<h1>A</h1>"                 # a str or bytes is an HTML page
        site.pages["/sitemap.xml"] = sitemap(site.url("/"), site.url("/docs/a"))
        site.pages["/old"] = Page(status=301, location="/docs/a")
        site.pages["/gone"] = Page(status=410)              # a path missing from pages answers 404
        site.pages["/zeros"] = Page(endless=True)            # streams zero bytes until the client leaves
        site.pages["/slow"] = Page("<p>x</p>", drip_seconds=0.5)  # one byte every half second
        fetch(site.url("/docs/a"))
        site.requests                                        # every request: path, headers, time

Pages answer conditional requests (If-None-Match / If-Modified-Since) with 304 when unchanged; a
page's ETag is derived from its body, so changing the body changes it. Serves on 127.0.0.1 (fetching
it needs SOURCES_ALLOW_PRIVATE); `site.url(path)` and `site.base_url` give its addresses.
"""

from __future__ import annotations

import hashlib
import ssl
import threading
import time
from dataclasses import dataclass, field
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from xml.sax.saxutils import escape

HTML = "text/html; charset=utf-8"


@dataclass
class Page:
    body: bytes | str = b""
    content_type: str = HTML
    status: int = 200
    location: str | None = None  # for 3xx
    etag: str | None = None  # None: derived from the body; "" for none
    last_modified: str | None = None  # None: when the page object was made; "" for none
    headers: dict[str, str] = field(default_factory=dict)
    endless: bool = False  # stream zero bytes (no Content-Length) until the client hangs up
    drip_seconds: float = 0.0  # send the body one byte at a time, this far apart

    def __post_init__(self):
        if isinstance(self.body, str):
            self.body = self.body.encode("utf-8")
        if self.etag is None:
            self.etag = '"' + hashlib.sha1(self.body).hexdigest()[:16] + '"'
        if self.last_modified is None:
            self.last_modified = formatdate(time.time(), usegmt=True)


@dataclass(frozen=True)
class Request:
    path: str
    headers: dict[str, str]
    time: float  # time.monotonic() when it arrived


def sitemap(*urls: str, index: bool = False) -> Page:
    """A sitemap (or, with index=True, a sitemap index) listing urls."""
    tag, item = ("sitemapindex", "sitemap") if index else ("urlset", "url")
    entries = "".join(f"<{item}><loc>{escape(u)}</loc></{item}>" for u in urls)
    xml = f'<?xml version="1.0" encoding="UTF-8"?><{tag} xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
    return Page(xml + entries + f"</{tag}>", content_type="application/xml")


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format, *args):  # quiet: the tests read site.requests instead
        pass

    def do_GET(self):
        site = self.server.site
        site.requests.append(Request(self.path, dict(self.headers.items()), time.monotonic()))
        page = site.pages.get(self.path)
        if isinstance(page, str | bytes):
            page = site.pages[self.path] = Page(page)
        if page is None:
            return self._send(404, b"not found", "text/plain")
        if page.status in (301, 302, 303, 307, 308):
            self.send_response(page.status)
            self.send_header("Location", page.location or "/")
            self.send_header("Content-Length", "0")
            return self.end_headers()
        if page.status != 200:
            return self._send(page.status, b"error", "text/plain")
        if self._unchanged(page):
            self.send_response(304)
            self.send_header("ETag", page.etag)
            return self.end_headers()
        if page.endless:
            return self._stream_zeros(page)
        self.send_response(200)
        self.send_header("Content-Type", page.content_type)
        if page.etag:
            self.send_header("ETag", page.etag)
        if page.last_modified:
            self.send_header("Last-Modified", page.last_modified)
        for name, value in page.headers.items():
            self.send_header(name, value)
        if "Content-Length" not in page.headers:
            self.send_header("Content-Length", str(len(page.body)))
        self.end_headers()
        if page.drip_seconds:
            for i in range(len(page.body)):
                if site.stopping.is_set():
                    return
                self.wfile.write(page.body[i:i + 1])
                self.wfile.flush()
                time.sleep(page.drip_seconds)
        else:
            self.wfile.write(page.body)

    def _unchanged(self, page: Page) -> bool:
        match = self.headers.get("If-None-Match")
        if match is not None:
            return bool(page.etag) and page.etag in [m.strip() for m in match.split(",")]
        since = self.headers.get("If-Modified-Since")
        return bool(since and page.last_modified and since == page.last_modified)

    def _send(self, status: int, body: bytes, content_type: str):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _stream_zeros(self, page: Page):
        self.send_response(200)
        self.send_header("Content-Type", page.content_type)
        self.end_headers()
        zeros = bytes(64 * 1024)
        try:
            while not self.server.site.stopping.is_set():
                self.wfile.write(zeros)
                self.server.site.streamed += len(zeros)
        except OSError:  # the client hung up: what a capped fetch does
            pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    site: HttpSite


class HttpSite:
    """The server (a context manager): pages, requests, base_url, url(path)."""

    def __init__(self, host: str = "127.0.0.1", *, tls: tuple[str, str] | None = None):
        """tls=(certificate file, key file) serves HTTPS."""
        self.pages: dict[str, Page | str | bytes] = {}
        self.requests: list[Request] = []
        self.streamed = 0  # bytes sent by endless pages
        self.stopping = threading.Event()
        self._server = _Server((host, 0), _Handler)
        self._server.site = self
        if tls:
            context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            context.load_cert_chain(*tls)
            self._server.socket = context.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self.base_url = f"{'https' if tls else 'http'}://{host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return self.base_url + path

    def paths_requested(self) -> list[str]:
        return [r.path for r in self.requests]

    def __enter__(self) -> HttpSite:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stopping.set()
        self._server.shutdown()
        self._server.server_close()
