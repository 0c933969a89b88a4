"""No Docker engine runs here, so the production compose file is checked by reading it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from django.core.exceptions import ImproperlyConfigured

from ragweb.env import env_url

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def resolve(value: str) -> str:
    """Expand ${VAR:-default} / ${VAR:?msg} the way compose would with nothing set."""
    value = re.sub(r"\$\{[A-Z_]+:-([^}]*)\}", r"\1", str(value))
    return re.sub(r"\$\{([A-Z_]+):\?[^}]*\}", r"<\1>", value)


def test_it_has_the_production_services(compose):
    services = compose["services"]
    assert {"db", "redis", "web", "worker", "migrate"} <= set(services)
    assert services["db"]["image"].startswith("pgvector/pgvector:")
    assert services["redis"]["image"].startswith("redis:7")
    assert services["web"]["command"][0] == "gunicorn" and "ragweb.wsgi:application" in services["web"]["command"]
    assert services["worker"]["command"][:4] == ["celery", "-A", "ragweb", "worker"]
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]


def test_every_service_has_a_healthcheck_or_is_one_shot(compose):
    for name, service in compose["services"].items():
        if name == "migrate":
            continue
        assert service["healthcheck"]["test"], name


def test_volumes_are_declared_and_used(compose):
    declared = set(compose["volumes"])
    used = {v.split(":")[0] for s in compose["services"].values() for v in s.get("volumes", [])}
    assert used == declared == {"pgdata", "redisdata", "media"}
    assert "media:/data/media" in compose["services"]["web"]["volumes"]
    assert "media:/data/media" in compose["services"]["worker"]["volumes"]


def test_app_environment_matches_settings_and_services(compose):
    settings_source = (ROOT / "ragweb" / "settings.py").read_text()
    db = compose["services"]["db"]["environment"]
    for name in ("web", "worker", "migrate"):
        env = compose["services"][name]["environment"]
        for key in env:
            assert f'"{key}"' in settings_source, f"{key} is set for {name} but settings.py never reads it"
        database = resolve(env["DATABASE_URL"])
        env_url("DATABASE_URL", "", schemes=("postgres", "postgresql"), environ={"DATABASE_URL": database})
        assert database == f"postgres://{db['POSTGRES_USER']}:ragweb@db:5432/{db['POSTGRES_DB']}"
        broker = resolve(env["CELERY_BROKER_URL"])
        env_url("CELERY_BROKER_URL", "", schemes=("redis",), environ={"CELERY_BROKER_URL": broker})
        assert broker.startswith("redis://redis:6379/")
        assert resolve(env["SECRET_KEY"]) == "<SECRET_KEY>", "compose must refuse to start without a SECRET_KEY"
        assert env["DEBUG"] == "0"


def test_app_waits_for_healthy_dependencies(compose):
    services = compose["services"]
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    for name in ("web", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert services[name]["depends_on"]["redis"]["condition"] == "service_healthy"


def test_dockerfile_installs_pinned_requirements_with_cpu_torch():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install -r requirements.txt" in dockerfile
    assert "download.pytorch.org/whl/cpu" in dockerfile
    assert "collectstatic" in dockerfile
    requirements = (ROOT / "requirements.txt").read_text().splitlines()
    pins = [line for line in requirements if line and not line.startswith("#")]
    assert pins and all("==" in line for line in pins), [p for p in pins if "==" not in p]
    assert "torch==2.13.0" in pins


def test_bad_database_url_in_compose_would_be_refused():
    with pytest.raises(ImproperlyConfigured):
        env_url("DATABASE_URL", "", schemes=("postgres",), environ={"DATABASE_URL": "sqlite:///x"})
