"""Security checks on state that outlives a change, against the running app (make reliability):

- slug takeover: a collection is renamed; another user tries to take its old slug (create or
  rename into it, with a phishing document); the old slug must keep answering from the renamed
  collection, for /v1 clients (`ragweb/<old slug>`) and for a stored conversation regenerated;
- stale permission: a reader asks, then is removed from the collection; rating that old answer with
  evidence guessed from the document (outside the passage the answer was given, or naming the
  document) must be refused, as must opening the passage.
"""

from __future__ import annotations

import time

from reliability.app import App
from reliability.hostile import upload
from reliability.security import Browser, SecurityResult, _api, _wait_document, accept_invitations, create_user

GENUINE = (b"# Release handbook\n\nReleases are signed with the project key and published on Tuesdays. "
           b"The checksum file lists every artifact of the release.\n")
PHISHING = (b"# Release handbook\n\nReleases are published on Tuesdays. Send your API token to "
            b"releases@phish.example to get early access.\n")


def _topics() -> bytes:
    """A long document of distinct sections (some 30 chunks), the vault code in the last one, far
    from the section the reader asks about: the passage an answer cites is not the whole of it."""
    sections = [f"## Section {n}\n\n" + " ".join(f"The {word} of section {n} is kept in drawer {n}." for word in (
        "ledger", "archive", "register", "inventory", "catalogue", "roster", "journal", "record")) + "\n\n"
        for n in range(1, 41)]
    sections.append("## Vault\n\nThe vault code is 4417 and it changes every spring.\n\n")
    return ("# Office guide\n\n" + "".join(sections)).encode()


def _latest_answer(conversation_id: int):
    from reliability.checks import reconnect

    reconnect()
    from chat.models import Message

    return Message.objects.filter(conversation_id=conversation_id, role="assistant").order_by("-id").first()


def _csrf_form(browser: Browser, **fields) -> dict:
    if "csrftoken" not in browser.cookies:
        browser.request("GET", "/")
    return {"csrfmiddlewaretoken": browser.cookies["csrftoken"], **fields}


def slug_takeover(app: App) -> SecurityResult:
    result = SecurityResult("renamed collection's slug cannot be taken over (/v1 and regenerate)")
    stamp = int(time.time())
    old, new = f"releases-{stamp}", f"releases-{stamp}-renamed"
    _, owner = create_user(f"takeover-owner-{stamp}")
    reader_password, reader = create_user(f"takeover-reader-{stamp}")
    _, attacker = create_user(f"takeover-attacker-{stamp}")
    made = _api(app, "POST", "/api/collections/", owner, {"name": "Releases", "slug": old,
                                                           "readers": [f"takeover-reader-{stamp}"]})
    if made.status != 201:
        result.failures.append(f"could not create the collection: HTTP {made.status}")
        return result
    accept_invitations(app, reader)
    _, genuine, _ = upload(app, owner, old, "handbook.md", GENUINE)
    _wait_document(app, owner, genuine)
    question = "When are releases published?"
    asked = _api(app, "POST", "/api/ask/", reader, {"question": question, "collection": old})
    conversation = asked.json().get("conversation") if asked.is_json else None
    if asked.status != 200 or not conversation:
        result.failures.append(f"the reader could not ask: HTTP {asked.status}")
        return result

    renamed = _api(app, "PATCH", f"/api/collections/{old}/", owner, {"slug": new})
    result.checked += 1
    if renamed.status != 200:
        result.failures.append(f"rename: HTTP {renamed.status}")
        return result
    taken = _api(app, "POST", "/api/collections/", attacker, {"name": "Releases", "slug": old})
    result.checked += 1
    if taken.status != 400:
        result.failures.append(f"the attacker created a collection with the old slug: HTTP {taken.status}")
        _, phish, _ = upload(app, attacker, old, "handbook.md", PHISHING)
        if phish:
            _wait_document(app, attacker, phish)
            _api(app, "PATCH", f"/api/collections/{old}/", attacker, {"readers": [f"takeover-reader-{stamp}"]})
    _api(app, "POST", "/api/collections/", attacker, {"name": "Decoy", "slug": f"decoy-{stamp}"})
    moved = _api(app, "PATCH", f"/api/collections/decoy-{stamp}/", attacker, {"slug": old})
    result.checked += 1
    if moved.status != 400:
        result.failures.append(f"the attacker renamed a collection to the old slug: HTTP {moved.status}")

    completion = _api(app, "POST", "/v1/chat/completions", reader, {
        "model": f"ragweb/{old}", "messages": [{"role": "user", "content": question}]})
    result.checked += 1
    cited = {c["document"]["id"] for c in completion.json().get("citations", [])} if completion.is_json else set()
    if completion.status != 200 or cited != {genuine}:
        result.failures.append(f"/v1 ragweb/{old}: HTTP {completion.status}, cites {sorted(cited)} "
                               f"(the renamed collection's document is {genuine})")
    stranger_call = _api(app, "POST", "/v1/chat/completions", attacker, {
        "model": f"ragweb/{old}", "messages": [{"role": "user", "content": question}]})
    result.checked += 1
    if stranger_call.status != 404:
        result.failures.append(f"/v1 ragweb/{old} for the attacker: HTTP {stranger_call.status}, expected 404")

    browser = Browser(app)
    browser.login(f"takeover-reader-{stamp}", reader_password)
    before = _latest_answer(conversation)
    status, _, _ = browser.request("POST", "/ask/", form=_csrf_form(browser, regenerate=str(before.pk)))
    after = _latest_answer(conversation)
    result.checked += 1
    cited = {c["document"]["id"] for c in after.citations} if after else set()
    if status >= 400 or after is None or after.pk == before.pk or cited != {genuine}:
        result.failures.append(f"regenerate: HTTP {status}, cites {sorted(cited)} (expected {genuine})")
    return result


def stale_permission(app: App) -> SecurityResult:
    result = SecurityResult("a removed reader cannot probe a document through ratings or passages")
    stamp = int(time.time())
    slug = f"office-{stamp}"
    _, owner = create_user(f"stale-owner-{stamp}")
    reader_name = f"stale-reader-{stamp}"
    reader_password, reader = create_user(reader_name)
    _api(app, "POST", "/api/collections/", owner, {"name": "Office", "slug": slug, "readers": [reader_name]})
    accept_invitations(app, reader)
    _, document, _ = upload(app, owner, slug, "office.md", _topics())
    _wait_document(app, owner, document)
    asked = _api(app, "POST", "/api/ask/", reader, {"question": "Where is the ledger of section 2 kept?",
                                                    "collection": slug})
    message_id = asked.json().get("message") if asked.is_json else None
    answer = _latest_answer(asked.json()["conversation"]) if message_id else None
    if answer is None or not answer.citations:
        result.failures.append(f"the reader's question got no cited answer: HTTP {asked.status}")
        return result
    cited_text = " ".join(c.get("text") or "" for c in answer.citations)
    probe = "The vault code is 4417"
    if probe in cited_text:
        result.notes.append("the cited passage holds the probe: evidence checks not exercised")
        return result

    browser = Browser(app)
    browser.login(reader_name, reader_password)
    _api(app, "PATCH", f"/api/collections/{slug}/", owner, {"readers": []})
    feedback_url = f"/messages/{message_id}/feedback/"
    browser.request("POST", feedback_url, form=_csrf_form(browser, rating="down"))
    attempts = {"a cited source": {"source": "1"}, "the document by id": {"source": "other", "document": str(document)}}
    for name, fields in attempts.items():
        status, text, _ = browser.request("POST", feedback_url, form=_csrf_form(
            browser, rating="down", details="1", evidence=probe, **fields))
        result.checked += 1
        if status >= 500 or "Thanks, saved." in text:
            result.failures.append(f"evidence guessed through {name}: HTTP {status}, accepted")
    from chat.models import Feedback
    from reliability.checks import reconnect

    reconnect()
    stored = Feedback.objects.filter(message_id=message_id).values_list("evidence", flat=True).first()
    result.checked += 1
    if stored:
        result.failures.append(f"the rating stored the guessed evidence {stored!r}")
    status, text, _ = browser.request("GET", f"/messages/{message_id}/sources/1/")
    result.checked += 1
    if status != 404 or "4417" in text:
        result.failures.append(f"the passage view after removal: HTTP {status}")
    return result
