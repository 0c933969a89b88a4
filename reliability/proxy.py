"""docker-compose's nginx configuration (deploy/nginx.conf), run for real with Debian's nginx in front of
the app under test: only the upstream address, the two listening ports and the certificate folder are
changed (a self-signed certificate). Checks: HTTPS is proxied and HTTP redirected, slow TLS clients wait
in nginx while the app keeps answering, unfinished headers are cut off, oversized bodies refused."""

from __future__ import annotations

import http.client
import shutil
import socket
import ssl
import subprocess
import threading
import time
from pathlib import Path

from reliability.app import ROOT, App, free_port
from reliability.security import SecurityResult
from reliability.slow import trickle

CONF = ROOT / "deploy" / "nginx.conf"


class Nginx:
    """deploy/nginx.conf under Debian's nginx, in `folder`, proxying to `app`."""

    def __init__(self, app: App, folder: Path) -> None:
        self.app, self.folder = app, folder
        self.http_port, self.https_port = free_port(), free_port()
        self.process: subprocess.Popen | None = None

    def site(self) -> str:
        text = CONF.read_text()
        for old, new in (("server web:8000;", f"server 127.0.0.1:{self.app.port};"),
                         ("listen 80 default_server;", f"listen 127.0.0.1:{self.http_port} default_server;"),
                         ("listen 443 ssl default_server;", f"listen 127.0.0.1:{self.https_port} ssl default_server;"),
                         ("/etc/nginx/certs/", f"{self.folder}/certs/")):
            if old not in text:
                raise RuntimeError(f"deploy/nginx.conf no longer has {old!r}: update reliability/proxy.py")
            text = text.replace(old, new)
        return text

    def __enter__(self) -> Nginx:
        if shutil.which("nginx") is None and not Path("/usr/sbin/nginx").exists():
            raise RuntimeError("nginx is not installed (apt-get install nginx-light)")
        if self.folder.exists():
            shutil.rmtree(self.folder)
        (self.folder / "certs").mkdir(parents=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
                        "-days", "1", "-keyout", str(self.folder / "certs" / "privkey.pem"),
                        "-out", str(self.folder / "certs" / "fullchain.pem")], check=True, capture_output=True)
        (self.folder / "site.conf").write_text(self.site())
        (self.folder / "nginx.conf").write_text(
            f"pid {self.folder}/nginx.pid;\nerror_log {self.folder}/error.log;\nevents {{}}\n"
            f"http {{\n  access_log off;\n  client_body_temp_path {self.folder}/body;\n"
            f"  proxy_temp_path {self.folder}/proxy;\n  include {self.folder}/site.conf;\n}}\n")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.process = subprocess.Popen([nginx, "-p", str(self.folder), "-c", str(self.folder / "nginx.conf"),
                                         "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.https_port), timeout=1).close()
                return self
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"nginx did not start: {self.process.stderr.read().decode()[-500:]}") from None
                time.sleep(0.2)
        raise RuntimeError("nginx did not start listening")

    def __exit__(self, *exc) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=20)

    def tls_socket(self) -> ssl.SSLSocket:
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        return context.wrap_socket(socket.create_connection(("127.0.0.1", self.https_port), timeout=20))

    def get(self, path: str, *, https: bool = True, timeout: float = 5) -> tuple[int, dict[str, str]]:
        if https:
            context = ssl._create_unverified_context()
            conn = http.client.HTTPSConnection("127.0.0.1", self.https_port, timeout=timeout, context=context)
        else:
            conn = http.client.HTTPConnection("127.0.0.1", self.http_port, timeout=timeout)
        try:
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            return response.status, {k.lower(): v for k, v in response.getheaders()}
        finally:
            conn.close()


def proxy_checks(app: App, work: Path, *, slow_sockets: int, seconds: float) -> list[SecurityResult]:
    with Nginx(app, work / "nginx") as nginx:
        return [_routing(nginx), _slow_tls_clients(nginx, slow_sockets, seconds), _header_timeout(nginx),
                _body_limit(nginx)]


def _routing(nginx: Nginx) -> SecurityResult:
    result = SecurityResult("nginx (deploy/nginx.conf): HTTPS proxied to the app, HTTP redirected to HTTPS")
    status, _ = nginx.get("/healthz")
    result.checked += 1
    if status not in (200, 503):
        result.failures.append(f"GET https /healthz: HTTP {status}")
    status, headers = nginx.get("/documents/?x=1", https=False)
    result.checked += 1
    if status != 301 or headers.get("location") != "https://127.0.0.1/documents/?x=1":
        result.failures.append(f"GET http /documents/: HTTP {status}, Location {headers.get('location')}")
    result.notes.append("https /healthz and the http redirect as expected" if result.ok else "")
    return result


def _slow_tls_clients(nginx: Nginx, count: int, seconds: float) -> SecurityResult:
    result = SecurityResult(f"nginx: {count} slow TLS clients (a byte a second) for {seconds:.0f} s")
    stop = threading.Event()
    sockets = []
    for _ in range(count):
        try:
            sockets.append(nginx.tls_socket())
        except OSError as exc:
            result.failures.append(f"could not open a TLS connection: {exc}")
    payload = b"POST /api/search/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n" + b"x" * 100
    trickle(sockets, payload, stop)
    slowest = 0.0
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            started = time.monotonic()
            result.checked += 1
            try:
                status, _ = nginx.get("/healthz")
                if status not in (200, 503):
                    result.failures.append(f"/healthz through nginx: HTTP {status}")
            except OSError as exc:
                result.failures.append(f"/healthz through nginx not answered within 5 s: {exc}")
            slowest = max(slowest, time.monotonic() - started)
            time.sleep(1)
    finally:
        stop.set()
        for sock in sockets:
            sock.close()
    result.notes.append(f"{len(sockets)} slow sockets; slowest /healthz {slowest * 1000:.0f} ms")
    return result


def _header_timeout(nginx: Nginx) -> SecurityResult:
    result = SecurityResult("nginx: a request whose headers do not arrive within 10 s is cut off")
    result.checked = 1
    sock = nginx.tls_socket()
    try:
        sock.send(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
        started = time.monotonic()
        try:
            while sock.recv(4096):
                pass
        except (OSError, ssl.SSLError):
            pass
        waited = time.monotonic() - started
    finally:
        sock.close()
    if not 8 <= waited <= 15:
        result.failures.append(f"closed after {waited:.1f} s")
    result.notes.append(f"closed after {waited:.1f} s")
    return result


def _body_limit(nginx: Nginx) -> SecurityResult:
    result = SecurityResult("nginx: a body over client_max_body_size (55 MB) is refused with 413")
    result.checked = 1
    sock = nginx.tls_socket()
    try:
        sock.send(b"POST /api/documents/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 60000000\r\n\r\n")
        answer = sock.recv(4096)
    finally:
        sock.close()
    if not answer.startswith(b"HTTP/1.1 413"):
        result.failures.append(f"answered {answer[:40]!r}")
    result.notes.append(answer.split(b"\r\n", 1)[0].decode(errors="replace"))
    return result
