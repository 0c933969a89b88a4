"""The admin's LLM settings: saving them (the only writes of corpus.LLMSettings), testing an
endpoint and listing its models, with the rule that keeps the stored key where it was meant to go.

The stored key is sent only to the base URL it was saved with: a Test or a model list for another
URL uses the key typed with it, or none; saving a new URL without a new key removes the stored one.
So nobody who may change the URL can make the server hand the key to a host of their choosing.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import transaction

from audit import record as audit_record
from audit.models import Action
from corpus import llm, llm_probe, llm_secret
from corpus.models import LLMSettings

CREDENTIALS_REFUSED = ("A base URL must not hold a user name or password (user:pass@host): give the secret "
                       "as the API key.")


def has_credentials(url: str) -> bool:
    """Whether `url` carries a user name or password (http://user:pass@host/...)."""
    return "@" in urlsplit(url.strip()).netloc


def llm_settings_get() -> LLMSettings:
    """The saved settings, or an unsaved empty row when nothing was ever saved."""
    return LLMSettings.objects.filter(pk=LLMSettings.SINGLETON).first() or LLMSettings(pk=LLMSettings.SINGLETON)


def key_for(*, base_url: str, typed_key: str = "") -> tuple[str, str]:
    """(the key to send to `base_url`, which one it is: "typed", "stored" or "none"). The stored key
    only when `base_url` is the URL it was saved with."""
    if typed_key.strip():
        return typed_key.strip(), "typed"
    row = llm_settings_get()
    stored = llm_secret.decrypt(row.api_key_encrypted) or ""
    if stored and row.base_url and base_url.strip() == row.base_url:
        return stored, "stored"
    return "", "none"


def llm_settings_save(*, base_url: str, model: str, new_api_key: str = "", clear_api_key: bool = False,
                      request=None) -> LLMSettings:
    """Save the admin's LLM: `new_api_key` replaces the stored key when given, `clear_api_key`
    removes it, otherwise the stored key stays — unless the base URL changes, which removes it (the
    key is sent only to the URL it was saved with). ValueError for a URL with credentials in it.
    Audited ("LLM configuration changed", naming what changed, never the key) when something
    changed; this process uses it at once (others within corpus.llm.CACHE_SECONDS)."""
    base_url, model, new_api_key = base_url.strip(), model.strip(), new_api_key.strip()
    if has_credentials(base_url):
        raise ValueError(CREDENTIALS_REFUSED)
    with transaction.atomic():
        row = LLMSettings.objects.select_for_update().filter(pk=LLMSettings.SINGLETON).first()
        row = row or LLMSettings(pk=LLMSettings.SINGLETON)
        changed = [name for name, before, after in (("base URL", row.base_url, base_url),
                                                    ("model", row.model, model)) if before != after]
        url_changed = row.base_url != base_url
        row.base_url, row.model = base_url, model
        if new_api_key and (url_changed or llm_secret.decrypt(row.api_key_encrypted) != new_api_key):
            row.api_key_encrypted = llm_secret.encrypt(new_api_key)
            changed.append("API key replaced")
        elif row.api_key_encrypted and not new_api_key and (clear_api_key or url_changed):
            row.api_key_encrypted = ""
            changed.append("API key removed" if clear_api_key else "API key removed (new base URL)")
        if request is not None and getattr(request.user, "is_authenticated", False):
            row.updated_by = request.user
        row.save()
        if changed:
            audit_record(Action.LLM_CONFIG_CHANGED, target=row, request=request,
                         detail={"changed": changed, "base_url": base_url, "model": model})
    llm.forget_stored()
    return row


def llm_settings_test(*, base_url: str, model: str, typed_key: str = "", request=None) -> llm_probe.ProbeResult:
    """Send one tiny chat completion to `model` at `base_url` (llm_probe.probe_llm) with the key
    key_for() allows, and audit it ("LLM tested": URL, model, outcome, HTTP status, which key).
    Saves nothing. ValueError for a URL with credentials in it."""
    if has_credentials(base_url):
        raise ValueError(CREDENTIALS_REFUSED)
    key, which = key_for(base_url=base_url, typed_key=typed_key)
    result = llm_probe.probe_llm(base_url=base_url.strip(), model=model.strip(), api_key=key)
    audit_record(Action.LLM_TESTED, target=f"{model.strip()} at {base_url.strip()}", request=request,
                 detail={"base_url": base_url.strip(), "model": model.strip(), "outcome": result.kind,
                         "status": result.status, "sent": f"{which} key" if which != "none" else "no key"})
    return result


def llm_models(*, base_url: str, typed_key: str = "") -> list[str]:
    """The models `base_url` lists (llm_probe.list_models), asked with the key key_for() allows."""
    if not base_url or has_credentials(base_url):
        return []
    return llm_probe.list_models(base_url=base_url.strip(), api_key=key_for(base_url=base_url, typed_key=typed_key)[0])
