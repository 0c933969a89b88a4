"""Environment variables ragweb read once and reads no more, each with what replaces it.

A value left set for one of them (an old .env, a copied compose file) would otherwise be ignored in
silence; ragweb/settings.py logs one warning line per such variable at every start instead
(docs/configuration.md, "Changes", tells the same story at more length).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

_HTTPS = "PUBLIC_URL with https:// (it turns on the HTTPS redirect, HSTS and HTTPS-only cookies)"
_TUNED = "nothing: a tuned constant beside its code now (docs/configuration.md, 'What is not a setting')"

RETIRED: dict[str, str] = {
    # Where the site is reached, and over what: one URL says both.
    "ALLOWED_HOSTS": "PUBLIC_URL (its host is the one allowed, with the loopback names)",
    "CSRF_TRUSTED_ORIGINS": "PUBLIC_URL (its origin is the one trusted)",
    "SECURE_SSL_REDIRECT": _HTTPS,
    "SECURE_HSTS_SECONDS": _HTTPS,
    "SECURE_HSTS_INCLUDE_SUBDOMAINS": _HTTPS,
    "SECURE_HSTS_PRELOAD": _HTTPS + "; preloading is the proxy's header to add",
    "SESSION_COOKIE_SECURE": _HTTPS,
    "CSRF_COOKIE_SECURE": _HTTPS,
    "TRUST_X_FORWARDED_PROTO": "TRUSTED_PROXY_COUNT (X-Forwarded-Proto is trusted behind the proxies it counts)",
    "RAGWEB_REQUIRE_SECRET_KEY": "PUBLIC_URL (SECRET_KEY must be set whenever it is https://)",
    "SOURCES_USER_AGENT": "PUBLIC_URL (the sources' User-Agent names it: ragweb/1.0 (+PUBLIC_URL))",
    # Where the data lives: under the one data folder.
    "MEDIA_ROOT": "RAGWEB_VAR_DIR (the stored documents are its media/ folder)",
    "STATIC_ROOT": "RAGWEB_VAR_DIR (collectstatic writes to its staticfiles/ folder)",
    # Single sign-on: the provider's discovery document and common defaults say the rest.
    "OIDC_SIGN_ALGO": "the provider's discovery document (id_token_signing_alg_values_supported)",
    "OIDC_SCOPES": "the provider's discovery document (openid email profile, and groups when it offers it)",
    "OIDC_GROUPS_CLAIM": "nothing: the claim 'groups' is read",
    "OIDC_USERNAME_CLAIM": "nothing: preferred_username, else the e-mail's local part, else sub",
    "OIDC_PROVIDER_NAME": "nothing: the button reads 'Sign in with single sign-on'",
    "CONTENT_SECURITY_POLICY": "nothing: the policy is fixed in ragweb/settings.py (a proxy may add its own)",
    # One Redis URL (issue 41, first round).
    "CELERY_RESULT_BACKEND": "REDIS_URL (results use the database after the broker's)",
    "SIGNIN_CACHE_URL": "REDIS_URL (sign-in counts use the broker's database + 2)",
    "SOURCES_PACING_URL": "REDIS_URL (host pacing uses the broker's database + 2)",
    # Issue 41, third round.
    "DB_CONN_MAX_AGE": "nothing: every process keeps its connections 600 s, with health checks (runserver "
                       "closes each request's itself)",
    "EMBEDDING_DIMENSIONS": "nothing: the chunk table's column is 384 wide (its migrations'); a model of any "
                            "width goes by EMBEDDING_MODEL and manage.py reembed",
    # Issue 41, fourth round.
    "SOURCES_FOLDERS_ANYONE": "the permission 'Can add server folder sources' (sources.add_folder_source), given in "
                              "the admin to users or to a group; staff add folder sources without it",
    "API_THROTTLE_ASK": "API_THROTTLE (questions per user, the same rate)",
    "API_THROTTLE_SEARCH": "API_THROTTLE (searches get five times its rate of questions)",
    "EMBEDDING_COLUMN_MODEL": "nothing: the database records which model the chunk column holds (migration corpus "
                              "0026 took this value, once); change models with EMBEDDING_MODEL and manage.py reembed",
}
# Tuned numbers that became constants beside their code (this round and the last).
RETIRED |= dict.fromkeys((
    "SOURCES_MAX_BYTES", "SOURCES_CONNECT_TIMEOUT", "SOURCES_TIMEOUT", "SOURCES_HOST_INTERVAL",
    "SOURCES_MAX_REDIRECTS", "REPLICA_CHECK_SECONDS", "REEMBED_BATCH_SIZE",
    "SEARCH_FUSION", "SEARCH_EXACT_MAX_CHUNKS", "ANSWER_MIN_RELEVANCE", "ANSWER_MIN_COVERAGE",
    "EMBEDDING_NEIGHBOUR_WEIGHT", "QUERY_EMBEDDING_THREADS", "QUERY_EMBEDDING_BATCH", "MAX_DECOMPRESSED_BYTES",
    "MAX_MARKUP_ELEMENTS", "MAX_SPREADSHEET_CELLS", "MAX_DOCUMENT_CHARS", "MAX_CHUNKS_PER_DOCUMENT", "OCR_DPI",
    "OCR_MAX_PIXELS", "OCR_MAX_IMAGE_PIXELS", "OCR_PAGE_SECONDS", "OCR_MAX_PAGES", "MAX_QUESTION_CHARS",
    "V1_MAX_MESSAGES", "API_MAX_JSON_BYTES", "LOGIN_FAILURE_LIMIT", "LOGIN_FAILURE_LIMIT_PER_ADDRESS",
    "LOGIN_LOCKOUT_SECONDS", "REPLICA_MAX_LAG_SECONDS", "LLM_SETTINGS_CACHE_SECONDS", "AUDIT_DETAIL_MAX_CHARS",
    "OIDC_TIMEOUT", "WEB_REQUEST_TIMEOUT", "WEB_BUFFER_BYTES",
), _TUNED)


def retired_warnings(environ: Mapping[str, str] = os.environ) -> list[str]:
    """One line for each retired variable set in `environ` (even to ""), naming what replaces it."""
    return [f"ragweb: {name} is set but no longer read; instead: {RETIRED[name]}"
            for name in sorted(RETIRED) if name in environ]
