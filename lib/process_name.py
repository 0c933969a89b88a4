"""Name the current process in `ps`, `top` and /proc/PID/comm.

A process forked without exec (make run's web server and worker, Celery's embedded scheduler)
keeps its parent's command line, so nothing tells it from its siblings; Linux's prctl(PR_SET_NAME)
gives it a name of its own (at most 15 bytes) without a package such as setproctitle.
"""

from __future__ import annotations

import ctypes
import ctypes.util

# make run's processes (scripts/run.py): the parent that loads the model and supervises, and the three
# children it forks without exec (the web server, the ingestion worker, the source syncs' worker), whose
# command lines are the parent's. What they fork in turn (the web workers, the pool processes) keeps its
# parent's name; the scheduler names itself (ragweb.celery).
RUN = "ragweb-run"
WEB_SERVER = "ragweb-web"
WORKER = "ragweb-worker"
SOURCES_WORKER = "ragweb-sources"  # the source syncs' worker

PR_SET_NAME = 15  # <linux/prctl.h>
MAX_BYTES = 15  # the kernel keeps 16 bytes, the last a NUL


def set_process_name(name: str) -> bool:
    """Set this process's name (`name`, cut to 15 bytes); False where the system has no prctl."""
    library = ctypes.util.find_library("c")
    try:
        prctl = ctypes.CDLL(library, use_errno=True).prctl if library else None
    except (OSError, AttributeError):  # not Linux
        return False
    if prctl is None:
        return False
    return prctl(PR_SET_NAME, ctypes.c_char_p(name.encode()[:MAX_BYTES]), 0, 0, 0) == 0
