"""Worker processes a master starts on its own machine (`--workers N`), stopped by the same master.

They are the same `loadtests.worker` a user starts on another host, so local and remote workers get
their settings, say hello and report the same way.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from scheduler import listening

WILDCARDS = ("0.0.0.0", "*", "::", "")


def reachable_address(bind: str) -> str:
    """Where a worker on this machine reaches a master bound to `bind` (a wildcard: loopback)."""
    return listening.LOOPBACK if bind in WILDCARDS else bind


def start(count: int, locustfile: str, bind: str, port: int, log_dir: Path) -> list[subprocess.Popen]:
    """`count` worker processes connecting to the master; each logs to log_dir/worker-N.log."""
    workers = []
    for index in range(count):
        with open(log_dir / f"worker-{index}.log", "wb") as out:
            workers.append(subprocess.Popen(
                [sys.executable, "-m", "loadtests.worker", "--master-host", reachable_address(bind),
                 "--master-port", str(port), "--locustfile", locustfile, "--connect-timeout", "30"],
                stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL))
    return workers


def exited(workers: list[subprocess.Popen]) -> int:
    return sum(worker.poll() is not None for worker in workers)


def stop(workers: list[subprocess.Popen], grace: float = 15.0) -> None:
    """Wait for workers to end after the master's quit; terminate, then kill, those that do not."""
    deadline = time.monotonic() + grace
    for worker in workers:
        try:
            worker.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            worker.terminate()
    for worker in workers:
        try:
            worker.wait(timeout=5)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=5)
