"""Stopping a child process we started: SIGTERM first, SIGKILL when it will not go."""

from __future__ import annotations

import subprocess, sys
from harness.clusters import processes
def test_terminate_stops_a_child_that_ignores_nothing_and_is_idempotent():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    code = processes.terminate(child, grace_seconds=5)
    assert child.poll() is not None and code == child.returncode
    assert processes.terminate(child) == code
def test_terminate_kills_a_child_that_ignores_sigterm():
    child = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); print('ready', flush=True); time.sleep(60)"], stdout=subprocess.PIPE)
    child.stdout.readline()
    assert processes.terminate(child, grace_seconds=0.5) == -9
