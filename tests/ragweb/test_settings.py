"""Settings load in a fresh interpreter per case: they are read once at import."""

import os
import subprocess
import sys
from pathlib import Path

from tests.xdist_redis import FIRST_DATABASE

ROOT = Path(__file__).resolve().parents[2]

PRINT = ("import django, json; from django.conf import settings; django.setup(); "
         "d = settings.DATABASES['default']; "
         "print(json.dumps({'db': [d['HOST'], d['PORT'], d['NAME']], 'broker': settings.CELERY_BROKER_URL, "
         "'debug': settings.DEBUG, 'hosts': settings.ALLOWED_HOSTS, 'llm': settings.LLM_MODEL, "
         "'conn': [d['CONN_MAX_AGE'], d['CONN_HEALTH_CHECKS']]}))")

_PASSTHROUGH = ("PATH", "HOME", "LANG", "RAGWEB_VAR_DIR")


def load(tmp_path, **env):
    clean = {k: v for k, v in os.environ.items() if k in _PASSTHROUGH}
    clean.setdefault("RAGWEB_VAR_DIR", str(tmp_path))
    clean["DJANGO_SETTINGS_MODULE"] = "ragweb.settings"
    clean.update(env)
    return subprocess.run([sys.executable, "-c", PRINT], cwd=ROOT, env=clean, capture_output=True, text=True)


def test_defaults_point_at_embedded_services(tmp_path):
    import json

    out = load(tmp_path)
    assert out.returncode == 0, out.stderr
    values = json.loads(out.stdout)
    assert values["db"] == ["127.0.0.1", 54329, "ragweb"]
    assert values["broker"] == "redis://127.0.0.1:63799/0"
    assert values["debug"] is False
    assert values["conn"] == [600, True]  # persistent connections, with health checks, everywhere


def test_persistent_connections_are_no_longer_a_setting(tmp_path):
    import json

    out = load(tmp_path, DB_CONN_MAX_AGE="0", DATABASE_REPLICA_URLS="postgres://r:pw@replica:5432/ragweb")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["conn"] == [600, True]
    assert ("ragweb: DB_CONN_MAX_AGE is set but no longer read; instead: nothing: every process keeps its "
            "connections 600 s, with health checks (runserver closes each request's itself)") in out.stderr


def test_environment_overrides_are_used(tmp_path):
    import json

    out = load(tmp_path, DATABASE_URL="postgres://app:pw@db.internal:5433/docs",
               REDIS_URL="redis://cache:6379/2", DEBUG="1", PUBLIC_URL="http://docs.example.com",
               LLM_BASE_URL="http://llm:8080/v1", LLM_MODEL="qwen")
    assert out.returncode == 0, out.stderr
    values = json.loads(out.stdout)
    assert values["db"] == ["db.internal", 5433, "docs"]
    assert values["broker"] == "redis://cache:6379/2"
    assert values["debug"] is True
    assert values["hosts"] == ["docs.example.com", "127.0.0.1", "localhost", "[::1]"]
    assert values["llm"] == "qwen"


def test_bad_values_fail_loudly_with_the_variable_name(tmp_path):
    cases = {
        "DEBUG": ("perhaps", "DEBUG must be a boolean"),
        "DATABASE_URL": ("sqlite:///db.sqlite3", "DATABASE_URL must be a URL starting with one of postgres://"),
        "REDIS_URL": ("amqp://guest@rabbit//", "REDIS_URL must be a URL starting with one of redis://"),
        "CELERY_BROKER_URL": ("redis://cache:6379/0", "CELERY_BROKER_URL is no longer read: set REDIS_URL"),
        "RAGWEB_PG_PORT": ("99999", "RAGWEB_PG_PORT must be at most 65535"),
        "CELERY_VISIBILITY_TIMEOUT": ("soon", "CELERY_VISIBILITY_TIMEOUT must be an integer"),
    }
    for name, (value, message) in cases.items():
        out = load(tmp_path, **{name: value})
        assert out.returncode != 0, name
        assert "ImproperlyConfigured" in out.stderr and message in out.stderr, (name, out.stderr[-500:])


def test_llm_base_url_without_model_is_refused(tmp_path):
    out = load(tmp_path, LLM_BASE_URL="http://127.0.0.1:8080/v1")
    assert out.returncode != 0
    assert "LLM_MODEL must be set" in out.stderr


def test_llm_base_url_with_credentials_is_refused_without_repeating_them(tmp_path):
    out = load(tmp_path, LLM_BASE_URL="http://admin:hunter2@llm.internal:8080/v1", LLM_MODEL="m")
    assert out.returncode != 0
    assert "LLM_BASE_URL must not hold a user name or password" in out.stderr and "hunter2" not in out.stderr


def test_llm_private_hosts_must_be_hosts(tmp_path):
    out = load(tmp_path, LLM_PRIVATE_HOSTS="127.0.0.1,http://llm.internal:8080/")
    assert out.returncode != 0
    assert "LLM_PRIVATE_HOSTS: 'http://llm.internal:8080/' is neither a host name nor" in out.stderr
    assert load(tmp_path, LLM_PRIVATE_HOSTS="127.0.0.1, llm.internal, 10.0.0.0/8").returncode == 0


def test_secret_key_is_generated_once_and_kept(tmp_path):
    script = "import django; from django.conf import settings; django.setup(); print(settings.SECRET_KEY)"
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME")}
    env.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings")
    first = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    second = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert len(first.stdout.strip()) >= 40
    assert first.stdout == second.stdout
    assert (tmp_path / "secret_key").stat().st_mode & 0o077 == 0


SEARCH_PRINT = ("import django, json; from django.conf import settings; django.setup(); "
                "print(json.dumps({n: getattr(settings, n) for n in dir(settings) if n.startswith('SEARCH_')}))")


def test_search_settings_are_the_operators_choices_only(tmp_path):
    import json

    clean = {k: v for k, v in os.environ.items() if k in _PASSTHROUGH}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings")

    def run(**env):
        return subprocess.run([sys.executable, "-c", SEARCH_PRINT], cwd=ROOT, env={**clean, **env},
                              capture_output=True, text=True)

    out = run()
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"SEARCH_HNSW_EF": 100}
    # Tuned constants (chat/retrieval/tuning.py), not settings: the environment's values are ignored.
    out = run(SEARCH_HNSW_EF="400", SEARCH_FUSION="rrf", SEARCH_EXACT_MAX_CHUNKS="0", SEARCH_BM25_K1="2.0")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"SEARCH_HNSW_EF": 400}
    for name, value, message in (("SEARCH_HNSW_EF", "0", "SEARCH_HNSW_EF must be at least 1"),
                                 ("SEARCH_HNSW_EF", "many", "SEARCH_HNSW_EF must be an integer")):
        out = run(**{name: value})
        assert out.returncode != 0 and "ImproperlyConfigured" in out.stderr and message in out.stderr, out.stderr[-300:]


def test_redis_databases_follow_ragweb_redis_db(tmp_path):
    import json

    code = ("import django, json; from django.conf import settings; django.setup(); print(json.dumps("
            "[settings.CELERY_BROKER_URL, settings.CELERY_RESULT_BACKEND, settings.SIGNIN_CACHE_URL, "
            "settings.SOURCES_PACING_URL]))")
    clean = {k: v for k, v in os.environ.items() if k in _PASSTHROUGH}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings", RAGWEB_REDIS_DB="6")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [f"redis://127.0.0.1:63799/{n}" for n in (6, 7, 8, 8)]


def test_every_redis_use_derives_from_the_one_redis_url(tmp_path):
    import json

    code = ("import django, json; from django.conf import settings; django.setup(); print(json.dumps("
            "[settings.CELERY_BROKER_URL, settings.CELERY_RESULT_BACKEND, settings.SIGNIN_CACHE_URL, "
            "settings.SOURCES_PACING_URL]))")
    clean = {k: v for k, v in os.environ.items() if k in _PASSTHROUGH}
    # The URLs of before are not read any more: setting them changes nothing.
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings",
                 REDIS_URL="rediss://:secret@cache.internal:6380/4", SIGNIN_CACHE_URL="redis://elsewhere:6379/9",
                 CELERY_RESULT_BACKEND="redis://elsewhere:6379/9", SOURCES_PACING_URL="redis://elsewhere:6379/9")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [f"rediss://:secret@cache.internal:6380/{n}" for n in (4, 5, 6, 6)]
    clean["REDIS_URL"] = "redis://cache.internal:6379/14"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.returncode != 0 and "REDIS_URL must end with a database number from 0 to 13" in out.stderr


def test_the_test_run_uses_redis_databases_of_its_own(settings):
    # make run's broker is database 0: a test reading or emptying its queue would race a running app, and
    # make test's second xdist worker (tests/xdist_redis.py) has databases of its own too.
    first = FIRST_DATABASE.get(os.environ.get("PYTEST_XDIST_WORKER", ""), 3)
    assert settings.REDIS_DB == first and first in (3, 9)
    assert settings.CELERY_BROKER_URL.endswith(f"/{first}")
    assert settings.CELERY_RESULT_BACKEND.endswith(f"/{first + 1}")
    assert settings.SIGNIN_CACHE_URL.endswith(f"/{first + 2}")


HTTPS_PRINT = ("import django, json; from django.conf import settings as s; django.setup(); print(json.dumps({n: "
               "getattr(s, n) for n in ('ALLOWED_HOSTS', 'CSRF_TRUSTED_ORIGINS', 'SECURE_SSL_REDIRECT', "
               "'SECURE_HSTS_SECONDS', 'SECURE_HSTS_INCLUDE_SUBDOMAINS', 'SECURE_HSTS_PRELOAD', "
               "'SESSION_COOKIE_SECURE', 'CSRF_COOKIE_SECURE', 'SECURE_PROXY_SSL_HEADER', 'SOURCES_USER_AGENT', "
               "'MEDIA_ROOT', 'STATIC_ROOT')}, "
               "default=str))")
KEY = "k" + "ey-for-the-https-test-0123456789abcdefghijklmnopqrstuvwxyz"


def settings_of(tmp_path, **env):
    import json

    clean = {k: v for k, v in os.environ.items() if k in _PASSTHROUGH}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings", **env)
    out = subprocess.run([sys.executable, "-c", HTTPS_PRINT], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


def test_an_https_public_url_turns_on_every_https_setting(tmp_path):
    values, _ = settings_of(tmp_path, PUBLIC_URL="https://docs.example.org/", SECRET_KEY=KEY, TRUSTED_PROXY_COUNT="1")
    assert values["ALLOWED_HOSTS"] == ["docs.example.org", "127.0.0.1", "localhost", "[::1]"]
    assert values["CSRF_TRUSTED_ORIGINS"] == ["https://docs.example.org"]
    assert values["SECURE_SSL_REDIRECT"] is True
    assert (values["SECURE_HSTS_SECONDS"], values["SECURE_HSTS_INCLUDE_SUBDOMAINS"]) == (31536000, True)
    assert values["SECURE_HSTS_PRELOAD"] is False
    assert values["SESSION_COOKIE_SECURE"] is values["CSRF_COOKIE_SECURE"] is True
    assert values["SECURE_PROXY_SSL_HEADER"] == ["HTTP_X_FORWARDED_PROTO", "https"]  # behind the counted proxy
    assert values["SOURCES_USER_AGENT"] == "ragweb/1.0 (+https://docs.example.org)"
    # Without a trusted proxy, X-Forwarded-Proto is anyone's to write: the connection itself tells HTTPS.
    values, _ = settings_of(tmp_path, PUBLIC_URL="https://docs.example.org", SECRET_KEY=KEY)
    assert values["SECURE_PROXY_SSL_HEADER"] is None and values["SECURE_SSL_REDIRECT"] is True


def test_without_an_https_public_url_https_stays_off(tmp_path):
    for env in ({}, {"PUBLIC_URL": "http://ragweb.lan:8000,http://10.0.0.5:8000", "TRUSTED_PROXY_COUNT": "1"}):
        values, _ = settings_of(tmp_path, **env)
        assert not values["SECURE_SSL_REDIRECT"] and values["SECURE_HSTS_SECONDS"] == 0
        assert not values["SESSION_COOKIE_SECURE"] and not values["CSRF_COOKIE_SECURE"]
        assert values["SECURE_PROXY_SSL_HEADER"] is None
    assert values["ALLOWED_HOSTS"] == ["ragweb.lan", "10.0.0.5", "127.0.0.1", "localhost", "[::1]"]
    assert values["CSRF_TRUSTED_ORIGINS"] == ["http://ragweb.lan:8000", "http://10.0.0.5:8000"]
    values, _ = settings_of(tmp_path)
    assert values["ALLOWED_HOSTS"] == ["127.0.0.1", "localhost", "[::1]", "testserver"]
    assert values["CSRF_TRUSTED_ORIGINS"] == [] and values["SOURCES_USER_AGENT"] == "ragweb/1.0"


def test_the_data_folders_are_under_ragweb_var_dir(tmp_path):
    values, _ = settings_of(tmp_path)
    assert values["MEDIA_ROOT"] == str(tmp_path / "media")
    assert values["STATIC_ROOT"] == str(tmp_path / "staticfiles")


def test_bad_public_urls_and_a_missing_key_stop_the_start(tmp_path):
    cases = {
        "docs.example.org": "PUBLIC_URL must be a URL starting with one of http://, https://",
        "https://docs.example.org/ragweb": "PUBLIC_URL must be scheme://host[:port] without a path",
        "https://a.example.org,http://b.example.org": "PUBLIC_URL mixes http:// and https://",
        "https://docs.example.org": "SECRET_KEY must be set when PUBLIC_URL is https://",
    }
    for value, message in cases.items():
        out = load(tmp_path, PUBLIC_URL=value)
        assert out.returncode != 0 and message in out.stderr, (value, out.stderr[-400:])


def test_a_retired_variable_still_set_gets_one_warning_line_naming_its_replacement(tmp_path):
    values, stderr = settings_of(tmp_path, SECURE_SSL_REDIRECT="1", MEDIA_ROOT="/srv/elsewhere",
                                 OIDC_SIGN_ALGO="RS256", SOURCES_TIMEOUT="5")
    lines = [line for line in stderr.splitlines() if "no longer read" in line]
    assert lines == [
        "ragweb: MEDIA_ROOT is set but no longer read; instead: RAGWEB_VAR_DIR (the stored documents are its "
        "media/ folder)",
        "ragweb: OIDC_SIGN_ALGO is set but no longer read; instead: the provider's discovery document "
        "(id_token_signing_alg_values_supported)",
        "ragweb: SECURE_SSL_REDIRECT is set but no longer read; instead: PUBLIC_URL with https:// (it turns on the "
        "HTTPS redirect, HSTS and HTTPS-only cookies)",
        "ragweb: SOURCES_TIMEOUT is set but no longer read; instead: nothing: a tuned constant beside its code now "
        "(docs/configuration.md, 'What is not a setting')",
    ]
    # Warned, not obeyed: the values are those of the settings that replace them.
    assert values["SECURE_SSL_REDIRECT"] is False and values["MEDIA_ROOT"] == str(tmp_path / "media")
    _, stderr = settings_of(tmp_path)
    assert "no longer read" not in stderr


REQUESTS = """
import django, json
django.setup()
from django.test import Client
client = Client()
plain = client.get("/login/", HTTP_HOST="docs.example.org")
proxied = client.get("/login/", HTTP_HOST="docs.example.org", HTTP_X_FORWARDED_PROTO="https",
                     HTTP_X_FORWARDED_FOR="203.0.113.9")
other_host = client.get("/login/", HTTP_HOST="evil.example.net", HTTP_X_FORWARDED_PROTO="https")
print(json.dumps({"plain": [plain.status_code, plain.get("Location")],
                  "proxied": [proxied.status_code, proxied.get("Strict-Transport-Security"),
                              proxied.cookies["csrftoken"]["secure"]],
                  "other_host": other_host.status_code}))
"""


def test_behind_the_proxy_an_https_public_url_redirects_and_sends_hsts_and_secure_cookies(tmp_path):
    """The one setting, end to end through Django's middleware: what the browser behind nginx gets."""
    import json

    clean = {k: v for k, v in os.environ.items() if k in (*_PASSTHROUGH, "RAGWEB_PG_PORT", "RAGWEB_REDIS_PORT")}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings", RAGWEB_WARM_UP="0",
                 PUBLIC_URL="https://docs.example.org", SECRET_KEY=KEY, TRUSTED_PROXY_COUNT="1")
    out = subprocess.run([sys.executable, "-c", REQUESTS], cwd=ROOT, env=clean, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    values = json.loads(out.stdout.strip().splitlines()[-1])
    assert values["plain"] == [301, "https://docs.example.org/login/"]
    assert values["proxied"] == [200, "max-age=31536000; includeSubDomains", True]
    assert values["other_host"] == 400  # not PUBLIC_URL's host


FIXED_PRINT = ("import django, json; from django.conf import settings as s; django.setup(); "
               "from corpus.models import Chunk; "
               "print(json.dumps({'dimensions': s.EMBEDDING_DIMENSIONS, "
               "'visibility': s.CELERY_BROKER_TRANSPORT_OPTIONS['visibility_timeout'], "
               "'column': Chunk._meta.get_field('embedding').dimensions}))")


def fixed(tmp_path, **env):
    import json

    clean = {k: v for k, v in os.environ.items() if k in _PASSTHROUGH}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings", **env)
    out = subprocess.run([sys.executable, "-c", FIXED_PRINT], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), [line for line in out.stderr.splitlines() if "no longer read" in line]


def test_the_vector_width_is_the_columns_whatever_the_environment_says(tmp_path):
    values, warnings = fixed(tmp_path, EMBEDDING_DIMENSIONS="768")
    # The column is vector(384) since the migrations made it so: a 768 here only broke the model's check.
    assert values["dimensions"] == values["column"] == 384
    assert warnings == ["ragweb: EMBEDDING_DIMENSIONS is set but no longer read; instead: nothing: the chunk "
                        "table's column is 384 wide (its migrations'); a model of any width goes by "
                        "EMBEDDING_MODEL and manage.py reembed"]


def test_a_dead_workers_task_comes_back_after_ten_minutes_unless_a_test_shortens_it(tmp_path):
    # 600 s everywhere (compose's value: a long OCR ingestion is not handed to a second worker mid-way).
    assert fixed(tmp_path)[0]["visibility"] == 600
    assert fixed(tmp_path, CELERY_VISIBILITY_TIMEOUT="15") == ({"dimensions": 384, "column": 384, "visibility": 15},
                                                               [])
