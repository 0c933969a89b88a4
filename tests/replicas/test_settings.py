"""DATABASE_REPLICA_URLS: one database alias per URL, used only for reads; bad URLs refused at start."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PRINT = ("import django, json; from django.conf import settings; django.setup(); "
         "from django.db import router; from replicas import health; "
         "print(json.dumps({'aliases': settings.REPLICA_DATABASES, "
         "'hosts': {a: [d['HOST'], d['PORT'], d['NAME'], d['TEST']['MIRROR'], d['OPTIONS']['connect_timeout']] "
         "for a, d in settings.DATABASES.items() if a != 'default'}, "
         "'migrate': [router.allow_migrate(a, 'corpus') for a in settings.DATABASES], "
         "'lag': health.MAX_LAG_SECONDS}))")


def load(tmp_path, **env):
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings", **env)
    return subprocess.run([sys.executable, "-c", PRINT], cwd=ROOT, env=clean, capture_output=True, text=True)


def test_no_replicas_by_default(tmp_path):
    out = load(tmp_path)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"aliases": [], "hosts": {}, "migrate": [True], "lag": 10.0}


def test_each_url_is_a_read_database_that_is_never_migrated(tmp_path):
    out = load(tmp_path, DATABASE_REPLICA_URLS="postgres://r:pw@replica-a:5433/ragweb, postgresql://r:pw@replica-b/ragweb",
               REPLICA_MAX_LAG_SECONDS="2.5")  # a constant now (replicas.health.MAX_LAG_SECONDS): ignored
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "aliases": ["replica0", "replica1"],
        "hosts": {"replica0": ["replica-a", 5433, "ragweb", "default", 2],
                  "replica1": ["replica-b", "", "ragweb", "default", 2]},
        "migrate": [True, False, False], "lag": 10.0}


def test_a_bad_replica_url_is_refused_with_its_setting_name(tmp_path):
    out = load(tmp_path, DATABASE_REPLICA_URLS="mysql://r:pw@replica-a/ragweb")
    assert out.returncode != 0
    assert "DATABASE_REPLICA_URLS must be a URL starting with one of postgres://, postgresql://" in out.stderr


CELERY = ("import django; django.setup(); from celery import signals; import ragweb.celery; "
          "from replicas import health, routing; "
          "before = routing._choose(frozenset({'corpus'})); checked = sorted(health._states); health.forget(); "
          "signals.worker_init.send(sender=None); "
          "after = routing._choose(frozenset({'corpus'})); "
          "print(before, checked, after, sorted(health._states))")


def test_a_celery_worker_never_looks_at_the_replicas(tmp_path):
    """The web process checks the (here unreachable) replica before choosing; a worker does not even look."""
    clean = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    clean.update(RAGWEB_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="ragweb.settings",
                 DATABASE_REPLICA_URLS="postgres://r:pw@127.0.0.1:1/ragweb")
    out = subprocess.run([sys.executable, "-c", CELERY], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[0] == "default ['replica0'] default []"
