"""Settings load in a fresh interpreter per case: they are read once at import."""

import os
import subprocess
import sys
from pathlib import Path

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
    assert values["conn"] == [0, False]  # runserver starts a thread per request: no persistent connections


def test_persistent_connections_come_with_health_checks(tmp_path):
    import json

    out = load(tmp_path, DB_CONN_MAX_AGE="600")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["conn"] == [600, True]


def test_environment_overrides_are_used(tmp_path):
    import json

    out = load(tmp_path, DATABASE_URL="postgres://app:pw@db.internal:5433/docs",
               REDIS_URL="redis://cache:6379/2", DEBUG="1", ALLOWED_HOSTS="docs.example.com",
               LLM_BASE_URL="http://llm:8080/v1", LLM_MODEL="qwen")
    assert out.returncode == 0, out.stderr
    values = json.loads(out.stdout)
    assert values["db"] == ["db.internal", 5433, "docs"]
    assert values["broker"] == "redis://cache:6379/2"
    assert values["debug"] is True
    assert values["hosts"] == ["docs.example.com"]
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
    # make run's broker is database 0: a test reading or emptying its queue would race a running app.
    assert settings.REDIS_DB == 3
    assert settings.CELERY_BROKER_URL.endswith("/3") and settings.CELERY_RESULT_BACKEND.endswith("/4")
    assert settings.SIGNIN_CACHE_URL.endswith("/5")
