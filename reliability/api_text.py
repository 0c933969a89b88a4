"""HTML in every API text field (make reliability, section "consent"): a collection, a group, a
document (file name, title, headings, text), a source's tags and an invitation, all carrying live
markup; every API answer that shows them (REST, /v1 streamed and not, MCP) is walked string by
string, and none may hold a tag or a `javascript:` link. Text fields are plain text (markup
escaped); the Markdown fields (an answer) are inert Markdown (tags removed): the one rule of
chat.client_text."""

from __future__ import annotations

import json
import re
import time

from reliability.app import App
from reliability.hostile import upload
from reliability.security import SecurityResult, _api, _wait_document, create_user

IMG = '<img src=x onerror=alert("xss")>'
SVG = "<svg onload=alert(1)>"
LINK = '[click](javascript:alert("xss"))'
# Live markup: a tag start, in any string; in a Markdown field (an answer, /v1's message content) also
# a Markdown or HTML link to javascript:. (In a plain-text field "[x](javascript:...)" is only text.)
TAG = re.compile(r"<[a-z!/?]", re.IGNORECASE)
MARKDOWN_LINK = re.compile(r"\]\(\s*<?\s*javascript:|href\s*=\s*[\"']?\s*javascript:", re.IGNORECASE)
MARKDOWN_FIELDS = {"answer", "content"}


def _live(value, path: str = "", key: str = "") -> list[str]:
    """Where in the JSON value `value` a string holds live markup ("path: excerpt")."""
    if isinstance(value, str):
        patterns = (TAG, MARKDOWN_LINK) if key in MARKDOWN_FIELDS else (TAG,)
        match = next((m for m in (p.search(value) for p in patterns) if m), None)
        return [f"{path}: {value[max(0, match.start() - 20):match.end() + 20]!r}"] if match else []
    if isinstance(value, list):
        return [hit for n, item in enumerate(value) for hit in _live(item, f"{path}[{n}]", key)]
    if isinstance(value, dict):
        return [hit for name, item in value.items()
                for hit in _live(name, f"{path}.{name}") + _live(item, f"{path}.{name}", name)]
    return []


def _mcp(app: App, token: str, tool: str, **arguments):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": tool, "arguments": arguments}}
    return app.request("POST", "/mcp", json_body=body, headers={"Authorization": f"Bearer {token}",
                                                              "Accept": "application/json, text/event-stream"})


def _events(body: bytes) -> list:
    """The JSON objects of an event stream's `data:` lines."""
    found = []
    for line in body.decode(errors="replace").splitlines():
        if line.startswith("data: {"):
            found.append(json.loads(line[len("data: "):]))
    return found


def api_text_fields(app: App) -> SecurityResult:
    result = SecurityResult("HTML in every API text field (REST, /v1, MCP)")
    stamp = int(time.time())
    slug = f"markup-{stamp}"
    owner_name, invitee_name = f"markup-owner-{stamp}", f"markup-invitee-{stamp}"
    _, owner = create_user(owner_name)
    _, invitee = create_user(invitee_name)
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    group = Group.objects.create(name=f"{SVG} team {stamp}")
    group.user_set.add(get_user_model().objects.get(username=owner_name))
    made = _api(app, "POST", "/api/collections/", owner, {
        "name": f"Garden {IMG}", "slug": slug, "description": f"About {SVG} {LINK}", "readers": [invitee_name],
        "reader_groups": [group.name]})
    if made.status != 201:
        result.failures.append(f"creating the collection: HTTP {made.status} {made.body[:200]!r}")
        return result
    text = (f"---\ntitle: Watering {IMG}\nauthor: {SVG}\n---\n# Watering {SVG}\n\nTomatoes need water twice a week "
            f"{IMG}. Read {LINK} for the details.\n").encode()
    response, document, error = upload(app, owner, slug, f"{IMG}.md", text)
    if document is None:
        result.failures.append(f"upload: HTTP {response.status} {error}")
        return result
    _wait_document(app, owner, document)
    _api(app, "POST", "/api/sources/", owner, {"collection": slug, "kind": "url", "schedule": "none",
                                              "url": f"https://example.com/markup-{stamp}", "tags": [IMG]})
    question = "How often do tomatoes need water?"
    answers = {
        "GET /api/collections/": _api(app, "GET", "/api/collections/", owner),
        f"GET /api/collections/{slug}/": _api(app, "GET", f"/api/collections/{slug}/", owner),
        "GET /api/documents/": _api(app, "GET", f"/api/documents/?collection={slug}", owner),
        "GET /api/documents/{id}/": _api(app, "GET", f"/api/documents/{document}/", owner),
        "GET /api/documents/{id}/chunks/": _api(app, "GET", f"/api/documents/{document}/chunks/", owner),
        "GET /api/sources/": _api(app, "GET", "/api/sources/", owner),
        "GET /api/invitations/": _api(app, "GET", "/api/invitations/", invitee),
        "POST /api/search/": _api(app, "POST", "/api/search/", owner, {"query": question, "collection": slug}),
        "POST /api/ask/": _api(app, "POST", "/api/ask/", owner, {"question": question, "collection": slug}),
        "GET /v1/models": _api(app, "GET", "/v1/models", owner),
        "POST /v1/chat/completions": _api(app, "POST", "/v1/chat/completions", owner, {
            "model": f"ragweb/{slug}", "messages": [{"role": "user", "content": question}]}),
        "MCP list_collections": _mcp(app, owner, "list_collections"),
        "MCP search": _mcp(app, owner, "search", query=question, collection=slug),
        "MCP ask": _mcp(app, owner, "ask", question=question, collection=slug),
        "MCP read_passage": _mcp(app, owner, "read_passage", document=document, start=0, end=400),
    }
    streamed = _api(app, "POST", "/v1/chat/completions", owner, {
        "model": f"ragweb/{slug}", "stream": True, "messages": [{"role": "user", "content": question}]})
    cited = False
    for what, answer in answers.items():
        result.checked += 1
        if answer.status != 200:
            result.failures.append(f"{what}: HTTP {answer.status}")
            continue
        body = _events(answer.body) if "event-stream" in answer.headers.get("content-type", "") else answer.json()
        result.failures.extend(f"{what} {hit}" for hit in _live(body))
        cited = cited or (what == "POST /api/ask/" and bool(body.get("citations")))
    result.checked += 1
    events = _events(streamed.body)
    content = "".join(e["choices"][0]["delta"].get("content", "") for e in events if e.get("choices"))
    result.failures.extend(f"/v1 streamed {hit}" for hit in _live({"content": content, "events": events}))
    if not cited:
        result.failures.append("/api/ask/ cited nothing: the answer's fields were not exercised")
    result.notes.append(f"{len(answers) + 1} answers walked string by string: no tag anywhere, no javascript: link "
                        "in an answer")
    return result
