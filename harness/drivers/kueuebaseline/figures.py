"""The kueue-baseline figures from per-workload records (pure), defined as Kueue defines them.

Kueue's runner (test/performance/scheduler/runner) records, per Workload, the time of its first
watch event (creation) and of the first event with Admitted=True: *time to admission* is the
difference, averaged per workload class. Per ClusterQueue it integrates the CPU in
status.flavorsUsage over time (mCPU x ms) between the queue's first and last event; the checker's
*CQ usage* is that integral summed over the queue class, divided by (summed nominal quota x
monitoring time). *Wall time* is the wall time of the scheduler process (minimalkueue), which the
runner stops once generation is done and no ClusterQueue has pending or reserving workloads.

Ours: times are taken by the generator's clock when it sees the event (sub-second, as Kueue's
recorder does). *CQ usage* is read as Kueue's recorder reads it, from each ClusterQueue's
status.flavorsUsage (first flavor, first resource) as its informer sees it change, held until the
next change, over the window from the first to the last ClusterQueue event; both implementations
write that status, so the figure means the same for both (`usage_from_status`). The usage integral
from the Workloads themselves (sum of cpu x admitted duration, from the start of generation to the
last Finished) stays beside it as `cq_usage_percent_from_workloads`.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

KUEUE_PUBLISHED = {
    "wall_seconds": 351.0,
    "cq_usage_percent": 55.9,
    "time_to_admission_seconds[small]": 215.0,
    "time_to_admission_seconds[medium]": 76.8,
    "time_to_admission_seconds[large]": 16.5,
}
"""The figures issue 8 quotes for Kueue's baseline (5 cohorts x 6 CQs, 15,000 workloads)."""
KUEUE_RANGESPEC = {
    "wall_seconds": 351.1164,
    "cq_usage_percent": 58.7,
    "time_to_admission_seconds[small]": 215.468,
    "time_to_admission_seconds[medium]": 76.768,
    "time_to_admission_seconds[large]": 6.666,
}
"""Averages of 5 trial runs in the comments of kueue's test/performance/scheduler/configs/baseline/rangespec.yaml
(the version read for this port): wall 351116.4 ms, usage 58.7 %, admission 215468 / 76768 / 6666 ms."""
UNITS = {"wall_seconds": "s", "cq_usage_percent": "%", "cq_usage_percent_from_workloads": "%"}


@dataclass(slots=True)
class WorkloadRecord:
    name: str
    cluster_queue: str
    workload_class: str
    cpu_milli: int
    created: float
    """Epoch seconds when the create call returned (the recorder's first event)."""
    admitted: float | None = None
    """First time it was seen admitted."""
    finished: float | None = None
    evictions: int = 0
    admitted_since: float | None = None
    """Start of the current admitted interval (None while not admitted)."""
    admitted_seconds: float = 0.0
    """Total time admitted (holding quota) over all its admitted intervals."""

    def on_admitted(self, now: float) -> None:
        if self.admitted is None:
            self.admitted = now
        if self.admitted_since is None and self.finished is None:
            self.admitted_since = now

    def on_released(self, now: float, finished: bool) -> None:
        """Quota released: by Finished, or by eviction (then it queues again)."""
        if self.admitted_since is not None:
            self.admitted_seconds += max(0.0, now - self.admitted_since)
            self.admitted_since = None
            if not finished:
                self.evictions += 1
        if finished and self.finished is None:
            self.finished = now


@dataclass(frozen=True, slots=True)
class Eviction:
    """One eviction as the informer saw it: who lost its quota, why (the Preempted condition's reason,
    else the Evicted one) and, for a preemption, the Workload it made room for."""

    t: float
    victim: str
    reason: str
    preemptor: str
    """The preemptor's name ('' when the message names none or names one this run did not create)."""


_UID_IN_MESSAGE = re.compile(r"\(UID: ([^,)]+)")
_NAME_IN_MESSAGE = re.compile(r"accommodate (?:[^/\s]+/)?([^\s(]+)")


def preemptor_of(message: str, names_by_uid: dict[str, str]) -> str:
    """The preemptor a Preempted message names: Kueue writes "... a workload (UID: u, JobUID: j) due to
    ...", the reference scheduler "... accommodate <namespace>/<name>"."""
    by_uid = _UID_IN_MESSAGE.search(message)
    if by_uid:
        return names_by_uid.get(by_uid.group(1).strip(), "")
    by_name = _NAME_IN_MESSAGE.search(message)
    return by_name.group(1) if by_name else ""


@dataclass(frozen=True, slots=True)
class QueueEvent:
    """One ClusterQueue as an informer saw it (Kueue's recorder CQEvent, the fields the usage needs)."""

    t: float
    cluster_queue: str
    cpu_used_milli: int
    """status.flavorsUsage[0].resources[0].total (0 when the status has none yet)."""
    cpu_quota_milli: int
    """spec.resourceGroups[0].flavors[0].resources[0].nominalQuota."""


def usage_from_status(events: list[QueueEvent]) -> float | None:
    """CQ usage in percent as Kueue's recorder computes it (None without events or quota).

    Per ClusterQueue, the CPU of one event is held until its next event (mCPU x s); the sum over
    queues is divided by the summed nominal quota (each queue's last event) times the window from
    the first event of any queue to the last event of any queue.
    """
    last: dict[str, QueueEvent] = {}
    used = 0.0
    for event in sorted(events, key=lambda e: e.t):
        before = last.get(event.cluster_queue)
        if before is not None and before.cpu_used_milli > 0:
            used += before.cpu_used_milli * (event.t - before.t)
        last[event.cluster_queue] = event
    if not last:
        return None
    quota = sum(e.cpu_quota_milli for e in last.values())
    window = max(e.t for e in last.values()) - min(e.t for e in events)
    return 100.0 * used / (quota * window) if quota and window > 0 else None


@dataclass(frozen=True, slots=True)
class ClassFigures:
    workload_class: str
    count: int
    admitted: int
    finished: int
    evictions: int
    mean_time_to_admission_seconds: float | None
    p50_time_to_admission_seconds: float | None
    p90_time_to_admission_seconds: float | None
    mean_time_to_finish_seconds: float | None


@dataclass(frozen=True, slots=True)
class Figures:
    workloads: int
    finished: int
    start: float
    end: float
    wall_seconds: float
    cq_usage_percent: float
    """From ClusterQueue status when any queue reported flavorsUsage, else from the Workloads."""
    classes: tuple[ClassFigures, ...] = field(default_factory=tuple)
    cq_usage_percent_from_workloads: float | None = None
    cq_usage_source: str = "workloads"
    """Where cq_usage_percent comes from: `flavorsUsage` (as Kueue's recorder) or `workloads`."""

    @property
    def complete(self) -> bool:
        return self.workloads > 0 and self.finished == self.workloads

    def metrics(self) -> dict[str, float]:
        """The comparable numbers by Kueue's names (time to admission per class)."""
        out = {"wall_seconds": self.wall_seconds, "cq_usage_percent": self.cq_usage_percent}
        if self.cq_usage_percent_from_workloads is not None:
            out["cq_usage_percent_from_workloads"] = self.cq_usage_percent_from_workloads
        for c in self.classes:
            if c.mean_time_to_admission_seconds is not None:
                out[f"time_to_admission_seconds[{c.workload_class}]"] = c.mean_time_to_admission_seconds
        return out


def _quantile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def compute(records: list[WorkloadRecord], nominal_milli: dict[str, int], start: float,
            end: float | None = None, queue_events: list[QueueEvent] | None = None) -> Figures:
    """Figures over records; `start` is when generation began, `end` defaults to the last Finished.

    Workloads still admitted at `end` count as admitted until `end`; never-admitted ones are left out
    of the averages and show in the counts (Kueue would count them as 0 ms, which flatters).
    """
    finishes = [r.finished for r in records if r.finished is not None]
    if end is None:
        end = max(finishes) if finishes else start
    window = max(end - start, 1e-9)
    used = 0.0
    for r in records:
        held = r.admitted_seconds + (max(0.0, end - r.admitted_since) if r.admitted_since is not None else 0.0)
        used += r.cpu_milli * held
    quota = sum(nominal_milli.get(cq, 0) for cq in {r.cluster_queue for r in records} | set(nominal_milli))
    usage = 100.0 * used / (quota * window) if quota else 0.0
    classes = []
    for name in sorted({r.workload_class for r in records}, key=_class_order):
        mine = [r for r in records if r.workload_class == name]
        waits = [r.admitted - r.created for r in mine if r.admitted is not None]
        runs = [r.finished - r.created for r in mine if r.finished is not None]
        classes.append(ClassFigures(
            workload_class=name, count=len(mine), admitted=len(waits), finished=len(runs),
            evictions=sum(r.evictions for r in mine),
            mean_time_to_admission_seconds=statistics.fmean(waits) if waits else None,
            p50_time_to_admission_seconds=_quantile(waits, 0.5), p90_time_to_admission_seconds=_quantile(waits, 0.9),
            mean_time_to_finish_seconds=statistics.fmean(runs) if runs else None))
    mine = [e for e in queue_events or () if e.cluster_queue in nominal_milli]
    from_status = usage_from_status(mine) if any(e.cpu_used_milli for e in mine) else None
    return Figures(workloads=len(records), finished=len(finishes), start=start, end=end, wall_seconds=end - start,
                   cq_usage_percent=usage if from_status is None else from_status, classes=tuple(classes),
                   cq_usage_percent_from_workloads=usage,
                   cq_usage_source="workloads" if from_status is None else "flavorsUsage")


def _class_order(name: str) -> tuple[int, str]:
    known = ("small", "medium", "large")
    return (known.index(name), name) if name in known else (len(known), name)


@dataclass(frozen=True, slots=True)
class KueueReference:
    """What a run is set beside: Kueue's published figures, its rangespec's averages and limits."""

    published: dict[str, float] = field(default_factory=dict)
    averages: dict[str, float] = field(default_factory=dict)
    limits: dict[str, tuple[float, bool]] = field(default_factory=dict)
    """metric -> (limit, True when the figure must not exceed it; False: not fall below it)."""


BASELINE = KueueReference(KUEUE_PUBLISHED, KUEUE_RANGESPEC)
"""The baseline configuration's figures as quoted above (limits: from the module, when it is at hand)."""


def comparison(figures: Figures, reference: KueueReference = BASELINE) -> list[dict]:
    """One row per metric: ours, the published Kueue figure, the rangespec average and limit, whether
    ours is within it, ours / published."""
    ours = figures.metrics()
    rows = []
    for metric in dict.fromkeys([*reference.published, *reference.limits, *ours]):
        value = ours.get(metric)
        published = reference.published.get(metric)
        limit, upper = reference.limits.get(metric, (None, True))
        within = None if value is None or limit is None else (value <= limit if upper else value >= limit)
        rows.append({"metric": metric, "unit": UNITS.get(metric, "s"), "kqbench": value, "kueue_published": published,
                     "kueue_rangespec_average": reference.averages.get(metric),
                     "kueue_rangespec_limit": limit, "within_rangespec": within,
                     "ratio_to_published": (value / published) if value is not None and published else None})
    return rows
