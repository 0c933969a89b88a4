"""Sharing needs consent, and what sharing gave it takes back (make reliability, section "consent"),
against the running app:

- share invitations: an owner shares a collection with two people; until they answer, nothing of it
  reaches them (lists, search, ask, /v1 models); one declines (still nothing), the other accepts
  (now they read it); the owner cannot add a group they are not in;
- un-sharing stops the removed editor's sources: an editor adds a web source, the owner removes
  them; the source is paused with the reason and a sync of it does nothing;
- document move: a reader cannot move the owner's document into their own collection (it takes
  the right to delete it there); an editor's move is audited with where from and where to;
- hard links out of SOURCES_FOLDERS: a folder source holding a hard link to a file outside the
  folder syncs its ordinary file and refuses the link, naming no server path; the linked secret
  is in no document and no search.

Each check returns (scenario, ok, detail) for the summary table.
"""

from __future__ import annotations

import html
import os
import time
from pathlib import Path

from reliability.app import App
from reliability.hostile import upload
from reliability.security import _api, _wait_document, accept_invitations, create_user

Check = tuple[str, bool, str]
SECRET = "The vault combination is 7-1-9-4"


def _visible(app: App, token: str, slug: str, phrase: str) -> dict[str, bool]:
    """What of collection `slug` (holding `phrase`) the token's user reaches, way by way."""
    word = phrase.split()[-1]  # found in the passages and the answer (the question is echoed: not there)
    listed = _api(app, "GET", "/api/collections/", token).json()["results"]
    searched = _api(app, "POST", "/api/search/", token, {"query": phrase}).json()
    asked = _api(app, "POST", "/api/ask/", token, {"question": f"What is {phrase}?"}).json()
    models = _api(app, "GET", "/v1/models", token).json()["data"]
    return {"list": slug in {c["slug"] for c in listed},
            "search": any(word in chunk["text"] for chunk in searched.get("chunks", [])),
            "ask": word in (asked.get("answer") or "") or any(word in c["text"] for c in asked.get("citations", [])),
            "/v1 models": f"ragweb/{slug}" in {m["id"] for m in models}}


def share_invitations(app: App) -> Check:
    name = "share invitations: nothing reaches the invited until they accept"
    stamp = int(time.time())
    slug, phrase = f"consent-{stamp}", "the heron migration code zephyr"
    _, owner = create_user(f"consent-owner-{stamp}")
    _, yes = create_user(f"consent-yes-{stamp}")
    _, no = create_user(f"consent-no-{stamp}")
    made = _api(app, "POST", "/api/collections/", owner, {
        "name": "Consent", "slug": slug, "readers": [f"consent-yes-{stamp}", f"consent-no-{stamp}"]})
    if made.status != 201:
        return name, False, f"creating the shared collection: HTTP {made.status} {made.body[:200]!r}"
    _, document, _ = upload(app, owner, slug, "heron.md", f"# Herons\n\nThe code is {phrase}.\n".encode())
    _wait_document(app, owner, document)
    problems = []
    for who, token in (("yes", yes), ("no", no)):
        seen = [way for way, shown in _visible(app, token, slug, phrase).items() if shown]
        if seen:
            problems.append(f"invited {who} reached it before answering through {', '.join(seen)}")
    declined = _api(app, "GET", "/api/invitations/", no).json()["results"]
    for invitation in declined:
        _api(app, "POST", f"/api/invitations/{invitation['id']}/decline/", no)
    accepted = accept_invitations(app, yes)
    after_no = [way for way, shown in _visible(app, no, slug, phrase).items() if shown]
    after_yes = [way for way, shown in _visible(app, yes, slug, phrase).items() if not shown]
    if after_no:
        problems.append(f"after declining it still reached them through {', '.join(after_no)}")
    if accepted != 1 or after_yes:
        problems.append(f"after accepting ({accepted} accepted) it did not reach them through {', '.join(after_yes)}")
    from django.contrib.auth.models import Group

    Group.objects.get_or_create(name=f"strangers-{stamp}")
    group = _api(app, "PATCH", f"/api/collections/{slug}/", owner, {"reader_groups": [f"strangers-{stamp}"]})
    if group.status != 400:
        problems.append(f"sharing with a group the owner is not in: HTTP {group.status}, not 400")
    return name, not problems, "; ".join(problems) or (
        "invited: nothing in lists, search, ask or /v1 models; declined: still nothing; accepted: all four; "
        "a group the owner is not in: 400")


def unsharing_pauses_sources(app: App) -> Check:
    name = "un-sharing stops the removed editor's sources"
    stamp = int(time.time())
    slug = f"unshare-{stamp}"
    _, owner = create_user(f"unshare-owner-{stamp}")
    _, editor = create_user(f"unshare-editor-{stamp}")
    _api(app, "POST", "/api/collections/", owner, {"name": "Unshare", "slug": slug,
                                                    "editors": [f"unshare-editor-{stamp}"]})
    accept_invitations(app, editor)
    made = _api(app, "POST", "/api/sources/", editor, {"collection": slug, "kind": "url", "schedule": "hourly",
                                                       "url": f"https://example.com/unshare-{stamp}"})
    if made.status != 201:
        return name, False, f"the editor could not add a source: HTTP {made.status} {made.body[:200]!r}"
    source = made.json()["id"]
    _api(app, "PATCH", f"/api/collections/{slug}/", owner, {"editors": []})
    shown = _api(app, "GET", f"/api/sources/{source}/", owner).json()
    problems = []
    if not shown.get("paused_reason"):
        problems.append(f"the source is not paused (state {shown.get('state')})")
    if _api(app, "GET", f"/api/sources/{source}/", editor).status != 404:
        problems.append("the removed editor still reaches the source")
    from reliability.checks import reconnect
    from sources.sync import source_sync

    reconnect()
    # What a worker's run of it does (once the sync queued when it was added, if still running, is done).
    deadline = time.monotonic() + 180
    result = source_sync(source_id=source, items=1)
    while result is not None and result.busy and time.monotonic() < deadline:
        time.sleep(1)
        result = source_sync(source_id=source, items=1)
    if result is None or result.error != html.unescape(shown.get("paused_reason") or "-") or result.new \
            or result.changed:
        problems.append(f"a sync of the paused source ran: {result}")
    from audit.models import Action, AuditEvent

    if not AuditEvent.objects.filter(action=Action.SOURCE_PAUSED, target_id=str(source)).exists():
        problems.append("the pause is not in the audit trail")
    return name, not problems, "; ".join(problems) or (
        f"paused: {shown['paused_reason'][:100]!r} (audited); a worker's run of it does nothing; the removed "
        "editor gets 404")


def document_move(app: App) -> Check:
    name = "document move: needs the right to delete at the origin, audited"
    stamp = int(time.time())
    slug = f"moves-{stamp}"
    _, owner = create_user(f"moves-owner-{stamp}")
    _, reader = create_user(f"moves-reader-{stamp}")
    _, editor = create_user(f"moves-editor-{stamp}")
    _api(app, "POST", "/api/collections/", owner, {"name": "Moves", "slug": slug,
                                                    "readers": [f"moves-reader-{stamp}"],
                                                    "editors": [f"moves-editor-{stamp}"]})
    accept_invitations(app, reader)
    accept_invitations(app, editor)
    for who, token in (("reader", reader), ("editor", editor)):
        _api(app, "POST", "/api/collections/", token, {"name": f"Mine {who}", "slug": f"{slug}-{who}"})
    _, document, _ = upload(app, owner, slug, "plan.md", b"# Plan\n\nThe owner's plan for the garden.\n")
    _wait_document(app, owner, document)
    problems = []
    for way, method, path, body in (("move", "POST", f"/api/documents/{document}/move/", {"collection": None}),
                                    ("PATCH", "PATCH", f"/api/documents/{document}/", {"collection": None})):
        body["collection"] = f"{slug}-reader"
        refused = _api(app, method, path, reader, body)
        if refused.status != 403:
            problems.append(f"a reader's {way} into their own collection: HTTP {refused.status}, not 403")
    still = _api(app, "GET", f"/api/documents/{document}/", owner)
    if still.status != 200 or still.json()["collection"] != slug:
        problems.append(f"after the reader's attempts the owner sees HTTP {still.status}")
    moved = _api(app, "POST", f"/api/documents/{document}/move/", editor, {"collection": f"{slug}-editor"})
    from audit.models import Action, AuditEvent
    from reliability.checks import reconnect

    reconnect()
    audited = list(AuditEvent.objects.filter(action=Action.DOCUMENT_MOVED, target_id=str(document))
                   .values_list("actor_username", "detail"))
    if moved.status != 200:
        problems.append(f"the editor's move: HTTP {moved.status}")
    if audited != [(f"moves-editor-{stamp}", {"source": "plan.md", "from": slug, "to": f"{slug}-editor"})]:
        problems.append(f"the audit trail has {audited}")
    return name, not problems, "; ".join(problems) or (
        "a reader's move and PATCH: 403, the document stays; the editor's move: 200, audited "
        f"({audited[0][1]['from']} -> {audited[0][1]['to']}, by the editor)")


def hard_links(app: App, work: Path) -> Check:
    """Needs the app's SOURCES_FOLDERS to be App.folders (reliability.app sets it)."""
    name = "hard links out of SOURCES_FOLDERS refused"
    stamp = int(time.time())
    folder = app.folders / f"handbook-{stamp}"
    folder.mkdir(parents=True)
    outside = work / f"secret-{stamp}.txt"  # outside the allowed folder, on the same file system
    outside.write_text(f"# Secret\n\n{SECRET}.\n")
    outside.chmod(0o644)
    (folder / "guide.md").write_text("# Guide\n\nThe greenhouse opens at nine.\n")
    os.link(outside, folder / "notes.md")
    _, token = create_user(f"links-{stamp}", staff=True)  # folder sources: staff (the default)
    slug = f"links-{stamp}"
    _api(app, "POST", "/api/collections/", token, {"name": "Links", "slug": slug})
    made = _api(app, "POST", "/api/sources/", token, {"collection": slug, "kind": "folder", "path": str(folder),
                                                      "schedule": "none"})
    if made.status != 201:
        return name, False, f"adding the folder source: HTTP {made.status} {made.body[:300]!r}"
    source = made.json()["id"]
    _api(app, "POST", f"/api/sources/{source}/sync/", token)
    deadline = time.monotonic() + 300
    shown = {}
    while time.monotonic() < deadline:
        shown = _api(app, "GET", f"/api/sources/{source}/", token).json()
        if shown["state"] in ("idle", "failed") and shown["last_sync"]["finished_at"]:
            break
        time.sleep(1)
    documents = _api(app, "GET", f"/api/documents/?collection={slug}", token).json()["results"]
    for document in documents:
        _wait_document(app, token, document["id"])
    found = _api(app, "POST", "/api/search/", token, {"query": "vault combination", "collection": slug})
    failures = shown.get("last_sync", {}).get("failures", [])
    refused = [f for f in failures if f["item"].endswith("notes.md")]
    problems = []
    names = sorted(d["source"].rsplit("/", 1)[-1] for d in documents)
    if names != ["guide.md"]:
        problems.append(f"documents {names}, expected only guide.md")
    if SECRET.split()[-1] in found.body.decode(errors="replace"):
        problems.append("the linked secret is found by a search")
    if not refused:
        problems.append(f"the link is not listed as refused (failures: {failures[:3]})")
    elif str(work) in refused[0]["reason"] or str(outside) in refused[0]["reason"]:
        problems.append(f"the refusal shows a server path: {refused[0]['reason']!r}")
    return name, not problems, "; ".join(problems) or (
        f"guide.md synced; notes.md (a hard link to a file outside) refused: {refused[0]['reason']!r}; the "
        "secret in no document and no search")


def run(app: App, work: Path) -> list[Check]:
    results = []
    checks = (share_invitations, unsharing_pauses_sources, document_move, lambda a: hard_links(a, work))
    names = ("share_invitations", "unsharing_pauses_sources", "document_move", "hard_links")
    for check, label in zip(checks, names, strict=True):
        try:
            results.append(check(app))
        except Exception as exc:  # a check that breaks is a failed row; the others still run
            results.append((label, False, f"{type(exc).__name__}: {exc}"))
    return results
