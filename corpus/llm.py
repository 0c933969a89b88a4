"""The one place that decides which LLM answers, and the one OpenAI-compatible client (OpenAI,
vLLM, Ollama, llama.cpp server) built from that decision.

The effective configuration (current()): the environment's LLM_BASE_URL, LLM_MODEL and
LLM_API_KEY when LLM_BASE_URL is set; otherwise what staff saved in the admin (corpus.LLMSettings),
read from the database at most every CACHE_SECONDS per process (so every web and
worker process follows a change within that time; the saving process at once); otherwise none,
and answers are extractive. Answering, query rewriting and contextualisation all go through it.

Every request goes through the guarded outbound client (outbound.client): public addresses, and
the private hosts the operator allows (allowed_hosts()), so whoever saves a URL in the admin cannot
point the server, or the stored key, at the inside of the network.

The client itself retries transient failures (connection errors, timeouts, 429, 5xx) up to
settings.LLM_MAX_RETRIES times with backoff; callers catch llm_errors() for what is left.

The `openai` package (~17 MiB resident, even beside the model) is imported on first use, not when this module is: most
processes (and every process of the embedded default, which has no LLM) never call one, and
this module is imported at start-up by the admin and the answer pipeline (docs/scaling.md, "Memory").
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings

from corpus import llm_secret
from corpus.models import LLMSettings
from outbound.addresses import AddressRefused, AllowList

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)

ENVIRONMENT, ADMIN = "environment", "admin"
# Each process reads the admin's LLM settings again after this long: a change reaches every web and worker
# process within 5 s, for one indexed single-row read per answer at most every 5 s.
CACHE_SECONDS = 5.0


class LLMNotConfigured(RuntimeError):
    pass


def llm_errors() -> tuple[type[Exception], ...]:
    """Every error the client raises (transient ones after its retries, and e.g. a prompt too long
    for the model; the guard's refusal of the endpoint's address, which is never retried), for an
    `except` clause: evaluated only when an exception is being matched, so `openai` is imported
    then (it already is, if the client raised it)."""
    import openai

    return (openai.OpenAIError, AddressRefused)


@dataclass(frozen=True)
class LLMConfig:
    """Which LLM answers: `source` is ENVIRONMENT, ADMIN or "" (none: extractive answers)."""

    base_url: str = ""
    model: str = ""
    api_key: str = field(default="", repr=False)  # never in a repr, so never in a log line
    source: str = ""

    @property
    def configured(self) -> bool:
        return bool(self.base_url and self.model)


NONE = LLMConfig()
_stored: tuple[float, LLMConfig] | None = None  # (monotonic expiry, config) of this process


def environment_config() -> LLMConfig | None:
    """The environment's LLM when LLM_BASE_URL is set (it then wins over the admin's), else None."""
    if not settings.LLM_BASE_URL:
        return None
    return LLMConfig(settings.LLM_BASE_URL, settings.LLM_MODEL, settings.LLM_API_KEY, ENVIRONMENT)


def stored_config() -> LLMConfig:
    """The admin's LLM (NONE when unset), cached for CACHE_SECONDS."""
    global _stored
    now = time.monotonic()
    if _stored is not None and _stored[0] > now:
        return _stored[1]
    row = LLMSettings.objects.filter(pk=LLMSettings.SINGLETON).first()
    config = NONE
    if row is not None and row.base_url and row.model:
        key = llm_secret.decrypt(row.api_key_encrypted)
        if key is None:
            logger.warning("the LLM API key saved in the admin cannot be decrypted (SECRET_KEY changed?)")
        config = LLMConfig(row.base_url, row.model, key or "", ADMIN)
    _stored = (now + CACHE_SECONDS, config)
    return config


def forget_stored() -> None:
    """Drop this process's cached admin settings (after a save, and in tests)."""
    global _stored
    _stored = None


def current() -> LLMConfig:
    """The effective LLM: the environment's, else the admin's, else NONE."""
    return environment_config() or stored_config()


def llm_configured() -> bool:
    return current().configured


def allowed_hosts() -> AllowList:
    """The private hosts the LLM client may reach besides public addresses: LLM_PRIVATE_HOSTS, and
    the host of the environment's LLM_BASE_URL (the operator named it). A URL saved in the admin
    reaches a private host only when the operator listed it."""
    entries = list(settings.LLM_PRIVATE_HOSTS)
    if settings.LLM_BASE_URL and urlsplit(settings.LLM_BASE_URL).hostname:
        entries.append(urlsplit(settings.LLM_BASE_URL).hostname)
    return AllowList.parse(entries)


def openai_client(*, base_url: str, api_key: str, timeout: float, max_retries: int,
                  allowed: AllowList | None = None) -> openai.OpenAI:
    """A new OpenAI-compatible client whose requests go through the guarded outbound client
    (outbound.client: public addresses and `allowed` (default allowed_hosts()) only, no redirects,
    no proxy). The one way ragweb builds an LLM client: answers, the model list and the Test."""
    import openai  # on the first client only (see the module's docstring)

    from outbound.client import http_client

    guarded = http_client(allowed=allowed if allowed is not None else allowed_hosts(), timeout=timeout)
    # Local servers (llama.cpp, Ollama) ignore the key, but the client insists on one.
    return openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                         max_retries=max_retries, http_client=guarded)


@lru_cache(maxsize=4)
def _client(base_url: str, api_key: str, timeout: float, max_retries: int, allowed: AllowList) -> openai.OpenAI:
    return openai_client(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=max_retries, allowed=allowed)


def get_client(config: LLMConfig | None = None) -> openai.OpenAI:
    """The client for `config` (default: current()), cached per configuration."""
    config = config or current()
    if not config.configured:
        raise LLMNotConfigured("No LLM is configured (set LLM_BASE_URL and LLM_MODEL, or choose one in the admin).")
    return _client(config.base_url, config.api_key, settings.LLM_TIMEOUT, settings.LLM_MAX_RETRIES, allowed_hosts())


def complete(messages: list[dict[str, str]], max_tokens: int = 256, *, temperature: float = 0.0,
             config: LLMConfig | None = None) -> str:
    """One non-streaming chat completion with `config` (default: current()); returns the stripped
    text ("" if the model said nothing)."""
    config = config or current()
    response = get_client(config).chat.completions.create(
        model=config.model, messages=messages, max_tokens=max_tokens, temperature=temperature)
    if not response.choices:
        return ""
    return (response.choices[0].message.content or "").strip()
