"""lib.forking: a function run in a forked child (make run's web server and worker)."""

from __future__ import annotations

import os
import signal
import sys
import time

from lib.forking import fork


def test_a_forked_child_exits_with_its_targets_status_and_never_returns_into_the_parent():
    assert fork(lambda: None).wait(timeout=30) == 0
    assert fork(lambda: sys.exit(4)).wait(timeout=30) == 4
    assert fork(lambda: 1 / 0).wait(timeout=30) == 1  # the traceback printed, the parent's code not run
    sleeper = fork(lambda: time.sleep(60))
    assert sleeper.poll() is None
    os.kill(sleeper.pid, signal.SIGTERM)  # the parent's SIGTERM handler is not the child's
    assert sleeper.wait(timeout=30) == -signal.SIGTERM
