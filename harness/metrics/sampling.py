"""RSS and CPU seconds of the processes a run involves, read from /proc through psutil."""

from __future__ import annotations

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
