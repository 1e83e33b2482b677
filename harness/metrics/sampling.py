"""RSS, CPU seconds and run-queue wait of the processes a run involves, read from /proc (through
psutil where it has the figure)."""

from __future__ import annotations

import os

import psutil

from harness.metrics import summarising


def sample(pids: dict[str, int], t: float) -> list[summarising.ProcessSample]:
    """One sample per live process; processes that have exited are left out (their gap shows)."""
    found = []
    for component, pid in sorted(pids.items()):
        try:
            process = psutil.Process(pid)
            with process.oneshot():
                times = process.cpu_times()
                rss = process.memory_info().rss
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        found.append(summarising.ProcessSample(t, component, pid, rss, times.user + times.system))
    return found


def thread_waits(pids: list[int]) -> dict[tuple[int, int], float]:
    """Seconds each thread of these processes has spent runnable but waiting for a CPU, by
    (pid, tid) (the second field of each thread's /proc schedstat: time on a run queue, in
    nanoseconds). A process that has exited, or a kernel without schedstat, has no entries."""
    waits = {}
    for pid in pids:
        try:
            tids = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as handle:
                    waits[(pid, int(tid))] = int(handle.read().split()[1]) / 1e9
            except (OSError, IndexError, ValueError):
                continue  # the thread ended between listing and reading
    return waits
