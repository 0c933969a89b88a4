"""The stored LLM key kept from a staff member, against the running app (make reliability, security):

a superuser saves an LLM (a local fake endpoint, allowed by LLM_PRIVATE_HOSTS) with its key; then
- a staff member who is not a superuser opens the LLM settings, presses Test and Save with a URL of
  their own: refused, and their endpoint receives nothing;
- the superuser presses Test with another URL and no key: that endpoint never sees the stored key,
  and the page never shows what it answered (an error body planted there);
- the superuser saves another URL without typing the key: refused, the stored URL stays;
- a Test of an address the operator did not allow (::1) is refused as "not a public address";
- every Test is in the audit trail.
The LLM settings are emptied again at the end (the other sections answer without an LLM).
"""

from __future__ import annotations

import re
import time

from reliability.app import App
from reliability.security import Browser, SecurityResult, create_user

URL = "/admin/corpus/llmsettings/"
KEY = "sk-reliability-stored-key-7f3c"
PLANTED = "internal-only page: root:x:0:0"


def _form(browser: Browser, **fields) -> dict:
    if "csrftoken" not in browser.cookies:
        browser.request("GET", "/")
    return {"csrfmiddlewaretoken": browser.cookies["csrftoken"], **fields}


def _messages(page: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", m).strip() for m in re.findall(r'<li class="[^"]*">(.*?)</li>', page, re.S)]


def _staff_member(username: str) -> str:
    from django.contrib.auth import get_user_model

    password = f"{username}-Pass-{int(time.time())}"
    get_user_model().objects.create_user(username=username, password=password, is_staff=True)
    return password


def _keys_seen(fake) -> list[str]:
    return [r["_headers"].get("authorization", "") for r in fake.requests] + \
        [g.get("authorization", "") for g in fake.gets]


def llm_key_kept(app: App) -> SecurityResult:
    from audit.models import Action, AuditEvent
    from reliability.checks import reconnect
    from tests.chat.fake_openai import FakeOpenAI

    result = SecurityResult("the stored LLM key kept from a staff member (Test, Save, model list, audit)")
    stamp = int(time.time())
    root_password, _ = create_user(f"llm-root-{stamp}", staff=True)  # a superuser
    staff_password = _staff_member(f"llm-staff-{stamp}")
    root, staff = Browser(app), Browser(app)
    root.login(f"llm-root-{stamp}", root_password)
    staff.login(f"llm-staff-{stamp}", staff_password)
    with FakeOpenAI(reply="OK") as genuine, FakeOpenAI(reply="OK") as theirs:
        genuine.models, genuine.api_key = ["small-model"], KEY
        theirs.models = ["small-model"]
        try:
            status, page, _ = root.request("POST", URL, form=_form(
                root, base_url=genuine.base_url, model="small-model", new_api_key=KEY, _save="Save"))
            result.checked += 1
            if status != 302:
                result.failures.append(f"the superuser could not save the LLM: HTTP {status}")
                return result

            for button in ("_test", "_save"):
                status, _, _ = staff.request("POST", URL, form=_form(staff, base_url=theirs.base_url,
                                                                     model="small-model", **{button: "1"}))
                result.checked += 1
                if status != 403:
                    result.failures.append(f"a staff member's {button[1:]} answered HTTP {status}, not 403")
            status, _, _ = staff.request("GET", URL)
            result.checked += 1
            if status != 403:
                result.failures.append(f"a staff member opened the LLM settings: HTTP {status}")
            if theirs.requests or theirs.gets:
                result.failures.append("the staff member's endpoint was sent a request")

            theirs.status, theirs.error_message = 500, PLANTED
            status, page, _ = root.request("POST", URL, form=_form(root, base_url=theirs.base_url,
                                                                   model="small-model", _test="Test"))
            result.checked += 1
            if any(KEY in header for header in _keys_seen(theirs)):
                result.failures.append("the stored key was sent to another URL by a Test")
            if PLANTED in page:
                result.failures.append("the Test showed what the other endpoint answered")
            if "The endpoint answered with an error (HTTP 500)." not in _messages(page):
                result.failures.append(f"unexpected Test message: {_messages(page)[:2]}")

            status, page, _ = root.request("POST", URL, form=_form(root, base_url=theirs.base_url,
                                                                   model="small-model", _save="Save"))
            result.checked += 1
            if status != 400 or "type the API key again" not in page:
                result.failures.append(f"a new URL was saved without the key typed again (HTTP {status})")

            port = genuine.base_url.rsplit(":", 1)[1]
            status, page, _ = root.request("POST", URL, form=_form(root, base_url=f"http://[::1]:{port}",
                                                                   model="small-model", _test="Test"))
            result.checked += 1
            if not any(m.startswith("Refused: ::1 is not a public address.") for m in _messages(page)):
                result.failures.append(f"an address the operator did not allow was not refused: {_messages(page)[:2]}")

            reconnect()
            tests = AuditEvent.objects.filter(action=Action.LLM_TESTED, actor_username=f"llm-root-{stamp}").count()
            result.checked += 1
            if tests != 2:
                result.failures.append(f"{tests} audited Tests, not 2")
            result.notes.append(f"the stored key reached the other endpoint 0 times in {len(_keys_seen(theirs))} "
                                "requests" if not any(KEY in h for h in _keys_seen(theirs)) else "key leaked")
        finally:
            root.request("POST", URL, form=_form(root, base_url="", model="", clear_api_key="on", _save="Save"))
            time.sleep(6)  # every process's cached LLM settings (corpus.llm.CACHE_SECONDS, 5 s) are gone
    return result
