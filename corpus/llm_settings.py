"""Saving the admin's LLM settings (the only writes of corpus.LLMSettings)."""

from __future__ import annotations

from django.db import transaction

from audit import record as audit_record
from audit.models import Action
from corpus import llm, llm_secret
from corpus.models import LLMSettings


def llm_settings_get() -> LLMSettings:
    """The saved settings, or an unsaved empty row when nothing was ever saved."""
    return LLMSettings.objects.filter(pk=LLMSettings.SINGLETON).first() or LLMSettings(pk=LLMSettings.SINGLETON)


def llm_settings_save(*, base_url: str, model: str, new_api_key: str = "", clear_api_key: bool = False,
                      request=None) -> LLMSettings:
    """Save the admin's LLM: `new_api_key` replaces the stored key when given, `clear_api_key`
    removes it, otherwise the stored key stays. Audited ("LLM configuration changed", naming what
    changed, never the key) when something changed; this process uses it at once (others within
    LLM_SETTINGS_CACHE_SECONDS)."""
    base_url, model, new_api_key = base_url.strip(), model.strip(), new_api_key.strip()
    with transaction.atomic():
        row = LLMSettings.objects.select_for_update().filter(pk=LLMSettings.SINGLETON).first()
        row = row or LLMSettings(pk=LLMSettings.SINGLETON)
        changed = [name for name, before, after in (("base URL", row.base_url, base_url),
                                                    ("model", row.model, model)) if before != after]
        row.base_url, row.model = base_url, model
        if new_api_key and llm_secret.decrypt(row.api_key_encrypted) != new_api_key:
            row.api_key_encrypted = llm_secret.encrypt(new_api_key)
            changed.append("API key replaced")
        elif clear_api_key and row.api_key_encrypted and not new_api_key:
            row.api_key_encrypted = ""
            changed.append("API key removed")
        if request is not None and getattr(request.user, "is_authenticated", False):
            row.updated_by = request.user
        row.save()
        if changed:
            audit_record(Action.LLM_CONFIG_CHANGED, target=row, request=request,
                         detail={"changed": changed, "base_url": base_url, "model": model})
    llm.forget_stored()
    return row
