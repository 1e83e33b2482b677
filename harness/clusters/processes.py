"""Finding and stopping the processes of a cluster, also after `up` itself crashed.

kwokctl daemonises its components, so they outlive the command that started them. Every one of
them has the cluster's work folder in its command line; that is how we find them even when the
pid files were never written.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass

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
