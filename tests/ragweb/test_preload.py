"""The model is loaded once before forking (make run's parent, gunicorn --preload, Celery's prefork
parent), and the processes forked after that embed: no torch deadlock, no thread left running, the
master's model really shared. make run's one tree (its web workers and pool processes sharing the
parent's pages) is tested in tests/scripts/test_run.py."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from accounts.services import token_create
from tests.chat.chat_corpus import GUIDE, make_collection, make_document
from tests.workers import worker_env

ROOT = Path(__file__).resolve().parents[2]

FORK_AFTER_LOAD = """
import os, sys
os.environ["DJANGO_SETTINGS_MODULE"] = "ragweb.settings"
import django; django.setup()
from corpus.ingest.embed import embed_texts, load_before_fork
load_before_fork()
children = []
for i in range(2):
    pid = os.fork()
    if pid == 0:
        vectors = embed_texts([f"sentence number {j} of child {i}" for j in range(40)], threads=2)
        os._exit(0 if vectors.shape == (40, 384) else 3)
    children.append(pid)
sys.exit(max(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) for pid in children))
"""


def test_processes_forked_after_the_model_is_loaded_embed_on_several_threads():
    # Before the fix in load_before_fork's docstring (a forward pass in the parent) the children hang here.
    done = subprocess.run([sys.executable, "-c", FORK_AFTER_LOAD], cwd=ROOT, capture_output=True, text=True,
                          timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]


LOAD_THEN_COUNT_THREADS = """
import os, threading
os.environ["DJANGO_SETTINGS_MODULE"] = "ragweb.settings"
import django; django.setup()
from corpus.ingest.embed import load_before_fork
load_before_fork()
print(threading.active_count())
"""


def test_loading_the_model_before_forking_leaves_no_thread_running():
    # The weights' progress bar would leave tqdm's monitor thread running in the forking parent.
    done = subprocess.run([sys.executable, "-c", LOAD_THEN_COUNT_THREADS], cwd=ROOT, capture_output=True, text=True,
                          timeout=240, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[-1] == "1"


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _children(pid: int) -> list[int]:
    import psutil

    return [child.pid for child in psutil.Process(pid).children()]


@pytest.mark.django_db(transaction=True)
def test_preloaded_web_workers_serve_searches_with_the_masters_model(settings, user, tmp_path):
    from scripts.run import web_command  # the command `make run` starts the web server with

    collection = make_collection("preload", owner=user)
    make_document(collection, source="guide.md", parts=GUIDE)
    _, key = token_create(user=user)
    port = _free_port()
    env = {**worker_env(settings), "RAGWEB_WARM_UP": "1", "WEB_WORKERS": "2", "PYTHONPATH": str(ROOT)}
    command = web_command(str(port))
    assert "--preload" in command
    log = tmp_path / "gunicorn.log"
    server = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log.open("w"), stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 180
        while len(_children(server.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        # The master loaded the model (the int8 graph on ONNX Runtime) before forking: its own memory maps
        # ONNX Runtime, and never torch, which the default model does not need.
        maps = Path(f"/proc/{server.pid}/maps").read_text()
        assert "libonnxruntime" in maps and "libtorch_cpu" not in maps, log.read_text()[-2000:]
        answered = 0
        while time.monotonic() < deadline and answered < 6:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)  # a new connection each time
            try:
                conn.request("POST", "/api/search/", body=json.dumps({"query": "request timeout", "k": 3}),
                             headers={"Authorization": f"Token {key}", "Content-Type": "application/json"})
                response = conn.getresponse()
                body = json.loads(response.read())
            except (OSError, http.client.HTTPException):
                time.sleep(0.5)
                continue
            finally:
                conn.close()
            assert response.status == 200, body
            assert "thirty seconds" in body["chunks"][0]["text"]
            answered += 1
        assert answered == 6, log.read_text()[-2000:]
        assert server.poll() is None and len(_children(server.pid)) == 2  # no worker died or hung
    finally:
        server.terminate()
        server.wait(timeout=30)
