"""Ending the scheduler when the process that started it is gone, however it went (SIGKILL included).

Two schedulers on one cluster both decide, so a starter killed with -9 must not leave its scheduler
running. The starter passes its pid (`--parent-pid`); a daemon thread polls `os.getppid()`: once the
starter is gone the kernel has re-parented us (to init or a subreaper), so our parent pid differs.

Why not Linux's PR_SET_PDEATHSIG: it fires when the *thread* that forked us ends, not the process,
and the harness starts schedulers from threads that end while the scheduler must go on (the fault
injector restarts a killed scheduler from its phase's thread; the next phases need it). The parent
pid names the process, so it changes only when the whole starter is gone. There is no race with a
starter that died before we looked: the first poll, at start, already sees another parent. A thread,
not a task on the event loop, so that a loop busy deciding cannot delay it. Cost: one getppid per
poll; a dead starter is noticed within one poll.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable

log = logging.getLogger("kqbench.scheduler")

POLL_SECONDS = 0.5
GRACE_SECONDS = 15.0
"""From the SIGTERM to ourselves to a hard exit: the clean stop (the same as a starter's SIGTERM)
takes well under a second when the apiserver answers; one stuck on a dead apiserver must not keep
the process alive."""


def orphaned(parent_pid: int, getppid: Callable[[], int] = os.getppid) -> bool:
    """Whether the starter `parent_pid` is no longer our parent (never, when asked not to watch: 0)."""
    return bool(parent_pid) and getppid() != parent_pid


def follow(parent_pid: int, stop: Callable[[], None], exit_now: Callable[[], None],
           sleep: Callable[[float], None] = time.sleep, getppid: Callable[[], int] = os.getppid,
           poll_seconds: float = POLL_SECONDS, grace_seconds: float = GRACE_SECONDS) -> None:
    """Poll until the starter is gone, then `stop()` (a clean stop), wait `grace_seconds`, `exit_now()`.
    Runs for the life of the process: `exit_now` is reached only if the clean stop did not end it."""
    while not orphaned(parent_pid, getppid):
        sleep(poll_seconds)
    log.warning("the process that started the scheduler (pid %d) is gone: stopping", parent_pid)
    stop()
    sleep(grace_seconds)
    log.error("the scheduler did not stop within %.0fs of its starter's death: exiting", grace_seconds)
    exit_now()


def watch(parent_pid: int) -> threading.Thread | None:
    """Start following `parent_pid` in a daemon thread (SIGTERM to ourselves, then a hard exit);
    None when there is no starter to follow (0)."""
    if not parent_pid:
        return None
    thread = threading.Thread(
        target=follow, name="parent-watch", daemon=True,
        args=(parent_pid, lambda: os.kill(os.getpid(), signal.SIGTERM), lambda: os._exit(1)))
    thread.start()
    return thread
