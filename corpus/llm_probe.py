"""Checking an OpenAI-compatible endpoint before a superuser saves it: the models it offers, and
one real tiny chat completion whose failure is told in plain words.

Both go through the LLM's own client (corpus.llm.openai_client: the guarded outbound client), so
a Test reaches what answering would reach and nothing else. What the endpoint says is never shown
or logged: the outcome is a short reason of our own and the HTTP status (a Test must not become a
way to read another server's pages, nor to echo a key back); only model ids are shown, from a
well-formed model list. Nothing here logs the key.
`openai` is imported when a probe runs, not with the admin that imports this module (corpus.llm).
"""

from __future__ import annotations

import logging
import socket
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from django.conf import settings

from corpus import llm
from outbound.addresses import AddressRefused, NotResolved

if TYPE_CHECKING:
    import openai

logger = logging.getLogger(__name__)

PROBE_TIMEOUT_MAX = 20.0  # seconds; LLM_TIMEOUT if shorter
LIST_TIMEOUT_MAX = 5.0  # the settings page lists the models on every view: a silent endpoint must not hold it long
MODELS_SHOWN = 200
MODEL_ID_MAX_CHARS = 200  # longer ids are not model names: not shown
TEST_PROMPT = [{"role": "user", "content": "Reply with the single word: OK"}]


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    message: str
    # "ok", "unknown-host", "refused", "unreachable", "timeout", "bad-key", "forbidden", "unknown-model",
    # "not-openai", "error"
    kind: str
    status: int | None = None  # the endpoint's HTTP status, when it answered with an error


def _client(base_url: str, api_key: str, timeout: float) -> openai.OpenAI:
    return llm.openai_client(base_url=base_url, api_key=api_key, timeout=timeout, max_retries=0)


def probe_timeout() -> float:
    return min(settings.LLM_TIMEOUT, PROBE_TIMEOUT_MAX)


def list_models(*, base_url: str, api_key: str, timeout: float | None = None) -> list[str]:
    """The model ids `base_url`/models lists, sorted; [] when it lists none or does not answer
    (the model is then typed in by hand)."""
    if not base_url:
        return []
    try:
        page = _client(base_url, api_key, timeout or min(probe_timeout(), LIST_TIMEOUT_MAX)).models.list()
        ids = sorted({m.id for m in page.data if isinstance(getattr(m, "id", None), str)
                      and 0 < len(m.id) <= MODEL_ID_MAX_CHARS and m.id.isprintable()})
    except Exception as exc:  # any failure just means "no list": the test button says why
        logger.info("LLM model list unavailable (%s)", type(exc).__name__)
        return []
    return ids[:MODELS_SHOWN]


def probe_llm(*, base_url: str, model: str, api_key: str, timeout: float | None = None) -> ProbeResult:
    """Send one tiny chat completion to `model` at `base_url`; the outcome in words of our own (the
    endpoint's text is never repeated)."""
    timeout = timeout or probe_timeout()
    started = time.monotonic()
    try:
        response = _client(base_url, api_key, timeout).chat.completions.create(
            model=model, messages=TEST_PROMPT, max_tokens=5, temperature=0)
    except Exception as exc:
        result = _failure(exc, base_url=base_url, model=model, api_key=api_key, timeout=timeout)
    else:
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            result = ProbeResult(False, f"Not OpenAI-compatible: {base_url} answered, but not with an OpenAI "
                                        "chat completion. Check the base URL (it usually ends in /v1).",
                                 "not-openai")
        else:
            ms = round((time.monotonic() - started) * 1000)
            result = ProbeResult(True, f"It works: {model} answered in {ms} ms.", "ok")
    logger.info("LLM test of %s at %s: %s", model, base_url, result.kind)
    return result


def _failure(exc: Exception, *, base_url: str, model: str, api_key: str, timeout: float) -> ProbeResult:
    import openai  # loaded already: the client that raised `exc` was made by _client

    if isinstance(exc, AddressRefused | openai.APIConnectionError):
        # The guard refuses before connecting (outbound.client), outside the openai client's wrapping.
        refused = _cause(exc, AddressRefused)
        if refused is not None and not isinstance(refused, NotResolved):
            return ProbeResult(False, f"Refused: {urlsplit(base_url).hostname} is not a public address. The "
                                      "operator can allow a private LLM host with LLM_PRIVATE_HOSTS.", "refused")
        if refused is not None or _cause(exc, socket.gaierror) is not None:
            host = urlsplit(base_url).hostname or base_url
            return ProbeResult(False, f"Unknown host: the name “{host}” could not be resolved (no DNS answer). "
                                      "Check the spelling of the base URL.", "unknown-host")
    if isinstance(exc, openai.APITimeoutError):
        return ProbeResult(False, f"Timeout: {base_url} did not answer within {timeout:g} seconds.", "timeout")
    if isinstance(exc, openai.APIConnectionError):
        return ProbeResult(False, f"Unreachable: nothing answered at {base_url}. Check the address, and that "
                                  "the server is running and reachable from this machine.", "unreachable")
    if isinstance(exc, openai.AuthenticationError):
        return ProbeResult(False, "Bad key: the endpoint refused the API key (HTTP 401).", "bad-key", 401)
    if isinstance(exc, openai.PermissionDeniedError):
        return ProbeResult(False, f"Refused: this key may not use {model} (HTTP 403).", "forbidden", 403)
    if isinstance(exc, openai.NotFoundError | openai.BadRequestError):
        offered = list_models(base_url=base_url, api_key=api_key, timeout=timeout)
        if offered and model not in offered:
            shown = ", ".join(offered[:10]) + (" …" if len(offered) > 10 else "")
            return ProbeResult(False, f"Unknown model: the endpoint has no model “{model}”. It offers: {shown}.",
                               "unknown-model", exc.status_code)
        # The body decides between "no such model" and "no such API"; it is never shown.
        if isinstance(exc, openai.NotFoundError) and "model" in str(exc).lower():
            return ProbeResult(False, f"Unknown model: the endpoint has no model “{model}”.", "unknown-model", 404)
        if isinstance(exc, openai.NotFoundError):
            return _not_openai(exc, base_url)
        return ProbeResult(False, f"The endpoint refused the request (HTTP {exc.status_code}).", "error",
                           exc.status_code)
    if isinstance(exc, openai.APIStatusError) and exc.status_code in NOT_AN_API:
        return _not_openai(exc, base_url)
    if isinstance(exc, openai.APIStatusError):
        return ProbeResult(False, f"The endpoint answered with an error (HTTP {exc.status_code}).", "error",
                           exc.status_code)
    return ProbeResult(False, f"Not OpenAI-compatible: {base_url} answered something that is not an OpenAI "
                              "API response. Check the base URL (it usually ends in /v1).", "not-openai")


# A web server without the API: no such path (404), or no POST there (405; 501 from a plain static
# server such as `python -m http.server`).
NOT_AN_API = {404, 405, 501}


def _not_openai(exc: openai.APIStatusError, base_url: str) -> ProbeResult:
    """The endpoint's server answered, but not as an OpenAI API: name the URL tried and its status."""
    tried = f"{exc.request.method} {exc.request.url}" if getattr(exc, "request", None) is not None \
        else f"POST {base_url}/chat/completions"
    return ProbeResult(False, f"Not OpenAI-compatible: {tried} answered HTTP {exc.status_code}, so {base_url} "
                              "does not look like an OpenAI-compatible endpoint. The base URL usually ends in /v1.",
                       "not-openai", exc.status_code)


def _cause(exc: BaseException | None, kind: type[BaseException]) -> BaseException | None:
    """The first `kind` in the chain of causes of `exc`, or None (the openai client wraps httpx's
    errors, which wrap the socket's; the guard's refusal is the cause of a connection error)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, kind):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None
