"""Finding and stopping the processes of a cluster, also after `up` itself crashed.

kwokctl daemonises its components, so they outlive the command that started them. Every one of
them has the cluster's work folder in its command line; that is how we find them even when the
pid files were never written.
"""

from __future__ import annotations

import collections
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil


@dataclass(frozen=True, slots=True)
class ProcessInfo:
    pid: int
    name: str
    rss_bytes: int
    cpu_seconds: float


def _alive(process: psutil.Process) -> bool:
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def find_by_path(marker: str) -> list[psutil.Process]:
    """Live processes (not zombies, not us) whose command line mentions marker."""
    found = []
    for process in psutil.process_iter(["pid", "cmdline"]):
        if process.info["pid"] == os.getpid():
            continue
        cmdline = " ".join(process.info.get("cmdline") or [])
        if marker in cmdline and _alive(process):
            found.append(process)
    return found


def describe(pid: int) -> ProcessInfo | None:
    try:
        process = psutil.Process(pid)
        if not _alive(process):
            return None
        with process.oneshot():
            times = process.cpu_times()
            return ProcessInfo(pid, process.name(), process.memory_info().rss, times.user + times.system)
    except psutil.NoSuchProcess:
        return None


def stop(processes: list[psutil.Process], grace_seconds: float = 10.0,
         sig: signal.Signals = signal.SIGTERM) -> list[int]:
    """`sig` (SIGTERM), wait up to grace_seconds, then SIGKILL. Returns pids still alive at the end."""
    for process in processes:
        try:
            process.send_signal(sig)
        except psutil.NoSuchProcess:
            pass
    deadline = time.monotonic() + grace_seconds
    remaining = [p for p in processes if _alive(p)]
    while remaining and time.monotonic() < deadline:
        time.sleep(0.2)
        remaining = [p for p in remaining if _alive(p)]
    for process in remaining:
        try:
            process.kill()
        except psutil.NoSuchProcess:
            pass
    time.sleep(0.2)
    return [p.pid for p in remaining if _alive(p)]


PR_SET_PDEATHSIG = 1
"""prctl(2) option: the signal this process gets when the thread that forked it ends (linux/prctl.h)."""


def dying_with_this_process(sig: signal.Signals = signal.SIGKILL) -> Callable[[], None] | None:
    """A Popen `preexec_fn` that makes a child we start get `sig` when this process dies, SIGKILL
    included (for children whose code we cannot change, such as Kueue's manager; ours watch their
    parent themselves: scheduler.parentwatching). None where that cannot hold, and the child is then
    started as before:
    - not Linux (prctl is Linux's);
    - not on the main thread: PR_SET_PDEATHSIG fires when the *thread* that forked the child ends,
      so a child started from a worker thread would die with that thread, not with us.
    The signal survives exec (the manager is not set-uid). A parent that died between fork and prctl
    is caught by comparing the child's parent pid with ours after setting it."""
    if not sys.platform.startswith("linux") or threading.current_thread() is not threading.main_thread():
        return None
    prctl = ctypes.CDLL(None, use_errno=True).prctl  # looked up here: the forked child only calls it
    parent = os.getpid()

    def in_child() -> None:
        if prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
        if os.getppid() != parent:  # we died before it was set: the signal will not come
            os.kill(os.getpid(), sig)

    return in_child


def terminate(process: subprocess.Popen, grace_seconds: float = 15.0) -> int:
    """Stop a child we started: SIGTERM, wait, then SIGKILL; safe to call twice; returns its exit code."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace_seconds)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    return process.returncode


def log_tail(path: Path, lines: int) -> str:
    """The last `lines` lines of a process's log, without the final newline ("" when there is none yet)."""
    try:
        with path.open(errors="replace") as handle:
            return "".join(collections.deque(handle, maxlen=lines)).rstrip()
    except OSError:
        return ""
