"""The one OpenAI-compatible client (OpenAI, vLLM, Ollama, llama.cpp server), built from settings.

The client itself retries transient failures (connection errors, timeouts, 429, 5xx) up to
settings.LLM_MAX_RETRIES times with backoff; callers catch TRANSIENT_ERRORS for what is left.
"""

from __future__ import annotations

from functools import lru_cache

import openai
from django.conf import settings

# Errors worth retrying or degrading gracefully on; anything else is a bug or a misconfiguration.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    openai.APIConnectionError,  # includes APITimeoutError
    openai.APITimeoutError,
    openai.RateLimitError,
    openai.InternalServerError,
)
# Every error the client raises (transient ones after its retries, and e.g. a prompt too long for the model).
LLM_ERRORS: tuple[type[Exception], ...] = (openai.OpenAIError,)


class LLMNotConfigured(RuntimeError):
    pass


def llm_configured() -> bool:
    return bool(settings.LLM_BASE_URL and settings.LLM_MODEL)


@lru_cache(maxsize=4)
def _client(base_url: str, api_key: str, timeout: float, max_retries: int) -> openai.OpenAI:
    # Local servers (llama.cpp, Ollama) ignore the key, but the client insists on one.
    return openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                         max_retries=max_retries)


def get_client() -> openai.OpenAI:
    """The client for the current settings (cached per settings, so tests may override them)."""
    if not llm_configured():
        raise LLMNotConfigured("No LLM is configured (set LLM_BASE_URL and LLM_MODEL).")
    return _client(settings.LLM_BASE_URL, settings.LLM_API_KEY, settings.LLM_TIMEOUT, settings.LLM_MAX_RETRIES)


def complete(messages: list[dict[str, str]], max_tokens: int = 256, *, temperature: float = 0.0) -> str:
    """One non-streaming chat completion; returns the stripped text ("" if the model said nothing)."""
    response = get_client().chat.completions.create(
        model=settings.LLM_MODEL, messages=messages, max_tokens=max_tokens, temperature=temperature)
    if not response.choices:
        return ""
    return (response.choices[0].message.content or "").strip()
