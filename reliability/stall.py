"""One user cannot stall the others (`make reliability`, section "stall"), against the running app:

- a site whose robots.txt asks for `Crawl-delay: 60`, being synced, beside another user's small
  upload: the upload is ready as soon as it would be alone (syncs have their own queue and worker);
- a flood of "sync now" (40 at once from one user): each answered at once (202 or 429), and another
  user's request meanwhile as fast as usual;
- a flood of passage pages of a 600,000-character document (24 at once): another user's page
  meanwhile as fast as usual (the page renders a window, and is rate-limited).

Each check returns (scenario, ok, detail) for the summary table.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from reliability.app import App

Check = tuple[str, bool, str]
QUIET_SECONDS = 2.0  # another user's request during a flood must answer within this


def _api(app: App, method: str, path: str, token: str, body=None):
    return app.request(method, path, json_body=body, token=token)


def _ready(app: App, token: str, document_id: int, timeout: float = 300) -> tuple[str, float]:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        status = _api(app, "GET", f"/api/documents/{document_id}/", token).json()["status"]
        if status in ("ready", "failed"):
            return status, time.monotonic() - started
        time.sleep(0.3)
    return "timeout", time.monotonic() - started


def crawl_delay_beside_upload(app: App) -> Check:
    from reliability.hostile import upload
    from reliability.security import create_user
    from tests.sources.http_site import HttpSite, Page

    name = "crawl-delay site beside another user's upload"
    _, crawler = create_user("stall-crawler")
    _, uploader = create_user("stall-uploader")
    _api(app, "POST", "/api/collections/", crawler, {"name": "Slow site", "slug": "stall-site"})
    _api(app, "POST", "/api/collections/", uploader, {"name": "Notes", "slug": "stall-notes"})
    with HttpSite() as site:
        site.pages["/robots.txt"] = Page("User-agent: *\nCrawl-delay: 60\n", content_type="text/plain")
        for n in range(20):
            site.pages[f"/docs/{n}"] = (f"<html><body><main><h1>Page {n}</h1><p>Page {n} of a slow site.</p>"
                                        f"<a href='/docs/{n + 1}'>next</a></main></body></html>")
        sources = []
        for n in range(4):  # more syncs than the workers have slots
            made = _api(app, "POST", "/api/sources/", crawler,
                        {"collection": "stall-site", "kind": "site", "url": site.url(f"/docs/{n * 5}"),
                         "schedule": "none", "max_depth": 10})
            if made.status != 201:
                return name, False, f"adding a source: HTTP {made.status} {made.body[:200]!r}"
            sources.append(made.json()["id"])
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(
                _api(app, "GET", f"/api/sources/{pk}/", crawler).json()["state"] == "syncing" for pk in sources):
            time.sleep(0.5)
        _, document_id, error = upload(app, uploader, "stall-notes", "note.md", b"# Note\n\nThe boat is blue.\n")
        if document_id is None:
            return name, False, f"upload refused: {error}"
        status, seconds = _ready(app, uploader, document_id)
        states = [_api(app, "GET", f"/api/sources/{pk}/", crawler).json()["state"] for pk in sources]
    ok = status == "ready" and seconds < 60
    return name, ok, (f"the upload was {status} after {seconds:.1f} s while 4 syncs of a Crawl-delay: 60 site "
                      f"were {', '.join(states)} (before: 175 s behind one such sync)")


def _timed_beside(app: App, flood, quiet) -> tuple[list, float]:
    """Run `flood` (a list of callables) all at once, and `quiet` once in the middle of it; returns
    the flood's results and how long `quiet` took."""
    with ThreadPoolExecutor(max_workers=len(flood) + 1) as pool:
        futures = [pool.submit(call) for call in flood]
        time.sleep(0.2)
        started = time.monotonic()
        quiet()
        quiet_seconds = time.monotonic() - started
        return [f.result() for f in futures], quiet_seconds


def sync_endpoint_flood(app: App) -> Check:
    from reliability.security import create_user

    name = "sync-endpoint flood (40 at once, one user)"
    _, flooder = create_user("stall-flooder")
    _, other = create_user("stall-other")
    _api(app, "POST", "/api/collections/", flooder, {"name": "Flood", "slug": "stall-flood"})
    made = _api(app, "POST", "/api/sources/", flooder, {"collection": "stall-flood", "kind": "url",
                                                        "url": "https://example.com/flood", "schedule": "none"})
    if made.status != 201:
        return name, False, f"adding a source: HTTP {made.status}"
    path = f"/api/sources/{made.json()['id']}/sync/"
    flood = [lambda: _api(app, "POST", path, flooder) for _ in range(40)]
    answers, quiet = _timed_beside(app, flood, lambda: _api(app, "GET", "/api/collections/", other))
    codes = sorted({r.status for r in answers})
    slowest = max(r.seconds for r in answers)
    ok = set(codes) <= {202, 429} and slowest < QUIET_SECONDS and quiet < QUIET_SECONDS
    return name, ok, (f"answers {codes}, {sum(r.status == 202 for r in answers)} accepted, slowest "
                      f"{slowest:.2f} s; another user's request {quiet:.2f} s meanwhile (before: 17.5 s)")


def passage_page_flood(app: App) -> Check:
    from reliability.hostile import upload
    from reliability.security import Browser, create_user

    name = "passage page flood (24 at once, a 600,000-character document)"
    password, reader = create_user("stall-reader")
    _, other = create_user("stall-bystander")
    _api(app, "POST", "/api/collections/", reader, {"name": "Long", "slug": "stall-long"})
    text = "".join(f"Line {n:06d} of a very long manual about valves and pumps.\n" for n in range(10_000))
    _, document_id, error = upload(app, reader, "stall-long", "manual.txt", text.encode())
    if document_id is None:
        return name, False, f"upload refused: {error}"
    status, _ = _ready(app, reader, document_id, timeout=600)
    if status != "ready":
        return name, False, f"the document was {status}"
    browser = Browser(app)
    browser.login("stall-reader", password)
    middle = len(text) // 2
    path = f"/passages/{document_id}/?start={middle}&end={middle + 60}"

    def one_page():
        started = time.monotonic()
        code, page, _ = browser.request("GET", path)
        return code, len(page), time.monotonic() - started

    pages, quiet = _timed_beside(app, [one_page] * 24, lambda: _api(app, "GET", "/api/collections/", other))
    codes = sorted({code for code, _, _ in pages})
    largest = max(size for _, size, _ in pages)
    ok = set(codes) <= {200, 429} and quiet < QUIET_SECONDS and largest < len(text) // 4
    return name, ok, (f"answers {codes}, largest page {largest // 1000} kB of a {len(text) // 1000} kB document, "
                      f"slowest {max(s for _, _, s in pages):.2f} s; another user's request {quiet:.2f} s "
                      "meanwhile (before: 7.4 s)")


def run(app: App) -> list[Check]:
    """The checks; the app is restarted with SOURCES_ALLOW_PRIVATE for the crawl (its site is local)."""
    results = []
    for check in (sync_endpoint_flood, passage_page_flood):
        try:
            results.append(check(app))
        except Exception as exc:  # a check that breaks is a failed row; the others still run
            results.append((check.__name__, False, f"{type(exc).__name__}: {exc}"))
    saved = dict(app.extra_env)
    app.restart(**saved, SOURCES_ALLOW_PRIVATE="1")
    try:
        results.append(crawl_delay_beside_upload(app))
    except Exception as exc:
        results.append(("crawl_delay_beside_upload", False, f"{type(exc).__name__}: {exc}"))
    finally:
        app.restart(**saved)
    return results
