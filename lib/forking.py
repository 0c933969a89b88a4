"""Run a function in a child forked from this process, without exec, so that the child shares
the memory this process has loaded (copy-on-write): make run's parent loads the model once and forks
the web server and the Celery worker this way (scripts/run.py, docs/scaling.md "Memory").
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable

logger = logging.getLogger(__name__)


class Forked:
    """A child forked from this process without exec; polled and waited for like subprocess.Popen
    (returncode negative when a signal killed it)."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped elsewhere: its status is lost
                pid, status = self.pid, 255 << 8
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout)
            time.sleep(0.05)
        return self.returncode


def ready_to_fork() -> None:
    """What the parent must not hand to a forked child: Django's database connections (a socket two
    processes would talk over at once), closed here, and Python threads (a child gets only the
    forking thread, and the locks the others held stay locked): none of make run's is running
    (corpus.ingest.embed.load_before_fork stops tqdm's), and one that is gets reported. The idle
    server threads that numpy's and scipy's OpenBLAS start on import stop themselves around a fork
    (pthread_atfork), as they did in gunicorn's and Celery's forking parents before."""
    if "django.db" in sys.modules:
        from django.db import connections

        connections.close_all()
    others = [thread.name for thread in threading.enumerate() if thread is not threading.main_thread()]
    if others:
        logger.warning("forking with threads running in the parent (%s); a child may hang on a lock one of them "
                       "held", ", ".join(others))


def fork(target: Callable[[], int | None], *, close: tuple[int, ...] = ()) -> Forked:
    """Run `target()` in a child forked from this process (it shares this process's memory
    copy-on-write), in a session of its own so that its own children go with it; its return value
    (or SystemExit) is the child's exit status. The child closes the file descriptors `close`
    (the run lock: it is this process's to hold) and never returns into the caller's code."""
    ready_to_fork()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return Forked(pid)
    code = 1
    try:
        os.setsid()
        for fd in close:
            os.close(fd)
        # The parent's handlers (make run's SIGTERM raises KeyboardInterrupt) are not the child's.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        code = target() or 0
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
