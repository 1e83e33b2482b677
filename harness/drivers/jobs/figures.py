"""The jobs figures from the records (pure): throughput per second, latencies, concurrency.

- Pod throughput: per second of the run, how many pods were first seen created, bound to a node,
  Running, Succeeded; *sustained* is the count over the span from the first to the last such
  event, *peak* the best 10 s window. Bound per second is the scheduling throughput kube-scheduler
  delivered.
- Job latencies from the create call's return: to admission (the queue), to the first pod Running
  (queue + job controller + kube-scheduler + kwok), to Complete (adds the runtime).
- Pod latencies: created -> bound (kube-scheduler), bound -> Running (kwok).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.drivers.jobs import recording

POD_EVENTS = ("created", "bound", "running", "succeeded")
JOB_EVENTS = ("created", "admitted", "first_running", "completed")
PEAK_WINDOW_SECONDS = 10
QUANTILES = (0.5, 0.9, 0.99)


@dataclass(frozen=True, slots=True)
class Distribution:
    count: int
    mean: float
    p50: float
    p90: float
    p99: float
    max: float


def quantile(ordered: Sequence[float], q: float) -> float:
    """Nearest rank on sorted values."""
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def distribution(values: Iterable[float]) -> Distribution | None:
    ordered = sorted(values)
    if not ordered:
        return None
    return Distribution(len(ordered), sum(ordered) / len(ordered), quantile(ordered, 0.5), quantile(ordered, 0.9),
                        quantile(ordered, 0.99), ordered[-1])


def per_second(times: Iterable[float], start: float) -> dict[int, int]:
    """Events per whole second after `start`."""
    out: dict[int, int] = {}
    for t in times:
        second = int(math.floor(t - start))
        out[second] = out.get(second, 0) + 1
    return out


def sustained_rate(times: Sequence[float]) -> float | None:
    """Events per second from the first to the last (None with fewer than two)."""
    if len(times) < 2:
        return None
    span = max(times) - min(times)
    return len(times) / span if span > 0 else None


def peak_rate(counts: dict[int, int], window: int = PEAK_WINDOW_SECONDS) -> float:
    """The best `window`-second moving average of per-second counts."""
    if not counts:
        return 0.0
    first, last = min(counts), max(counts)
    best = 0
    for begin in range(first, max(first, last - window + 1) + 1):
        best = max(best, sum(counts.get(s, 0) for s in range(begin, begin + window)))
    return best / window


def most_at_once(intervals: Iterable[tuple[float, float | None]], end: float) -> int:
    """The largest number of (start, stop) intervals open at one instant (stop None: open until `end`)."""
    edges = []
    for begin, stop in intervals:
        edges.append((begin, 1))
        edges.append((stop if stop is not None else end, -1))
    edges.sort(key=lambda e: (e[0], e[1]))  # a stop before a start at the same instant
    best = current = 0
    for _, delta in edges:
        current += delta
        best = max(best, current)
    return best


def pod_times(pods: Iterable[recording.PodRecord], event: str) -> list[float]:
    return [t for t in (getattr(p, event) for p in pods) if t is not None]


def job_waits(jobs: Iterable[recording.JobRecord], until: str) -> list[float]:
    """Seconds from each Job's create to its `until` event, for Jobs that got there."""
    return [getattr(j, until) - j.created for j in jobs if j.created is not None and getattr(j, until) is not None]


@dataclass(frozen=True, slots=True)
class Figures:
    jobs: int
    jobs_completed: int
    jobs_failed: int
    pods: int
    pods_succeeded: int
    wall_seconds: float
    """From the start of generation to the last Job completed (or the end of the phase)."""
    rates: dict[str, dict[int, int]]
    """`pods_<event>` / `jobs_<event>` -> per-second counts."""
    sustained: dict[str, float | None]
    peak: dict[str, float]
    job_latency: dict[str, Distribution | None]
    """`admitted`, `first_running`, `completed` -> seconds after creation."""
    job_latency_by_class: dict[tuple[str, str], Distribution | None]
    pod_latency: dict[str, Distribution | None]
    """`bind` (created -> bound), `start` (bound -> Running)."""
    most_jobs_running: int
    most_pods_running: int
    suspensions: int

    @property
    def complete(self) -> bool:
        return self.jobs > 0 and self.jobs_completed == self.jobs and self.jobs_failed == 0


def compute(recorder: recording.Recorder, start: float, end: float) -> Figures:
    jobs = list(recorder.jobs.values())
    pods = list(recorder.pods.values())
    completions = [j.completed for j in jobs if j.completed is not None]
    last = max(completions) if completions and len(completions) == len(jobs) else end
    rates, sustained, peak = {}, {}, {}
    for event in POD_EVENTS:
        times = pod_times(pods, event)
        rates[f"pods_{event}"] = per_second(times, start)
        sustained[f"pods_{event}"] = sustained_rate(times)
        peak[f"pods_{event}"] = peak_rate(rates[f"pods_{event}"])
    for event in JOB_EVENTS:
        times = [t for t in (getattr(j, event) for j in jobs) if t is not None]
        rates[f"jobs_{event}"] = per_second(times, start)
        sustained[f"jobs_{event}"] = sustained_rate(times)
        peak[f"jobs_{event}"] = peak_rate(rates[f"jobs_{event}"])
    latency = {until: distribution(job_waits(jobs, until)) for until in JOB_EVENTS[1:]}
    by_class = {(name, until): distribution(job_waits([j for j in jobs if j.job_class == name], until))
                for name in sorted({j.job_class for j in jobs}) for until in JOB_EVENTS[1:]}
    pod_latency = {"bind": distribution(p.bound - p.created for p in pods if p.bound is not None),
                   "start": distribution(p.running - p.bound for p in pods
                                         if p.running is not None and p.bound is not None)}
    return Figures(
        jobs=len(jobs), jobs_completed=len(completions), jobs_failed=sum(j.failed for j in jobs), pods=len(pods),
        pods_succeeded=len(pod_times(pods, "succeeded")), wall_seconds=last - start, rates=rates,
        sustained=sustained, peak=peak, job_latency=latency, job_latency_by_class=by_class, pod_latency=pod_latency,
        most_jobs_running=most_at_once(((j.unsuspended, j.completed) for j in jobs if j.unsuspended is not None), end),
        most_pods_running=most_at_once(((p.running, p.succeeded or p.failed) for p in pods if p.running is not None), end),
        suspensions=sum(j.suspensions for j in jobs))
