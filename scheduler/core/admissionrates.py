"""``rate``: a pending Workload is admitted after the Workloads ahead of it, at the rate its queue admits.

KEP-168-2's user story ("knowing the position and assuming stable velocity in the ClusterQueue"), made
a formula: with ``ahead`` Workloads before it in its ClusterQueue's order and the queue's measured
admission rate (admissions per second over a recent window), its own admission is the
``ahead + 1``-th from now::

    admission_at = now + (ahead + 1) / rate

Per flavor: where the queue has several flavors, only admissions that went through the flavors the
Workload could use count towards its rate: for each resource group the Workload requests from, the
admission assigned one of that group's flavors (so a GPU Workload is not timed by a queue's CPU-only
admissions, while a CPU Workload counts the GPU admissions that took CPU from its flavors too).
Workloads ahead are all counted, whatever they request. A queue that admitted nothing in the window
(for those flavors) gives no time. Pure.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from scheduler.core import estimates
from scheduler.core.estimates import AdmissionRecord, Estimate, Snapshot
from scheduler.core.kinds import ClusterQueue
from scheduler.core.workloads import Workload, WorkloadKey

NAME = "rate"


@dataclass(frozen=True, slots=True)
class RateSettings:
    window_seconds: float = 600.0
    """Admissions counted over this many seconds before now: long enough to hold several admissions of a
    busy queue, short enough to follow a change of capacity within the quarter hour."""
    per_flavor: bool = True
    """Count only admissions to a flavor the Workload could use (when its queue has several)."""

    def __post_init__(self) -> None:
        if self.window_seconds <= 0:
            raise ValueError(f"window_seconds must be > 0 (got {self.window_seconds})")


FlavorGroups = tuple[frozenset[str], ...]
"""Per resource group a Workload requests from, the flavors of that group."""


def candidate_flavors(cq: ClusterQueue, workload: Workload) -> FlavorGroups:
    """Per resource group of ``cq`` that covers a resource the Workload requests, that group's flavors."""
    requested = {resource for pod_set in workload.pod_sets for resource, _ in pod_set.requests}
    return tuple(frozenset(flavor.name for flavor in group.flavors) for group in cq.resource_groups
                 if requested & set(group.covered_resources))


def admission_rate(records: Iterable[AdmissionRecord], now: float, window_seconds: float,
                   groups: FlavorGroups | None = None) -> float:
    """Admissions per second in ``(now - window, now]``; with ``groups``, only those that assigned a flavor
    of each group."""
    count = sum(1 for r in records if 0 <= now - r.admitted_at < window_seconds
                and (groups is None or all(r.flavors & group for group in groups)))
    return count / window_seconds


class AdmissionRate:
    """The ``rate`` estimator."""

    name = NAME

    def __init__(self, settings: RateSettings | None = None) -> None:
        self.settings = settings or RateSettings()

    def estimate(self, snapshot: Snapshot) -> dict[WorkloadKey, Estimate]:
        now, window = snapshot.now, self.settings.window_seconds
        by_cq: dict[str, list[AdmissionRecord]] = {}
        for record in snapshot.admissions:
            by_cq.setdefault(record.cluster_queue, []).append(record)
        result = {}
        for cq_name, pending in snapshot.pending.items():
            records = by_cq.get(cq_name, [])
            cq = snapshot.cluster_queues.get(cq_name)
            several = cq is not None and len({f.name for g in cq.resource_groups for f in g.flavors}) > 1
            rates: dict[FlavorGroups | None, float] = {}
            for ahead, workload in enumerate(pending):
                groups = (candidate_flavors(cq, workload)
                          if self.settings.per_flavor and several and cq is not None else None)
                if groups not in rates:
                    rates[groups] = admission_rate(records, now, window, groups)
                rate = rates[groups]
                if rate == 0:
                    result[workload.key] = estimates.unknown(workload.key, NAME, estimates.NO_ADMISSIONS, now)
                else:
                    result[workload.key] = estimates.at(workload.key, NAME, now + (ahead + 1) / rate, now)
        return result
