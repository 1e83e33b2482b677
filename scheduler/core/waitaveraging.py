"""``moving-average``: a pending Workload is expected to wait as long as recent admissions of its queue did.

Kueue issue #13159 ("Workload wait time estimation") proposes an estimated wait per pending Workload
from an in-memory exponential moving average of admission wait times per ClusterQueue, decayed by a
half-life as admission fair sharing decays usage. The wait is what Kueue's
``kueue_admission_wait_time_seconds`` measures: from creation (or the requeue) to admission. So the
estimate here is anchored at the Workload's own queue entry::

    admission_at = queued_at + average wait      (never earlier than now)

A Workload that has already waited longer than the average gets ``now``, with a note saying so. The
part of the proposal readable here stops at the EMA; anchoring at queue entry rather than at ``now`` is
read from what the averaged metric measures, not quoted.

Scope: per ClusterQueue (the proposal's); with ``per_local_queue`` the Workload's own LocalQueue's
admissions when it has any in the window, else its ClusterQueue's. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass

from scheduler.core import estimates
from scheduler.core.estimates import AdmissionRecord, Estimate, Snapshot
from scheduler.core.workloads import WorkloadKey

NAME = "moving-average"


@dataclass(frozen=True, slots=True)
class MovingAverageSettings:
    window_seconds: float = 3600.0
    """Admissions within this many seconds before now are averaged: an hour follows a working day's
    changes of load without being swayed by a single burst."""
    half_life_seconds: float | None = None
    """Weight each wait by 0.5 ** (age / half-life), the proposal's decay; None: a plain mean of the window."""
    per_local_queue: bool = False
    """Average the Workload's own LocalQueue (falling back to its ClusterQueue when that has no admission)."""

    def __post_init__(self) -> None:
        if self.window_seconds <= 0:
            raise ValueError(f"window_seconds must be > 0 (got {self.window_seconds})")
        if self.half_life_seconds is not None and self.half_life_seconds <= 0:
            raise ValueError(f"half_life_seconds must be > 0 (got {self.half_life_seconds})")


def average_waits(records: Iterable[AdmissionRecord], now: float, settings: MovingAverageSettings,
                  group: Callable[[AdmissionRecord], Hashable]) -> dict[Hashable, float]:
    """The (weighted) mean wait in seconds per group over the admissions in ``(now - window, now]``; a group
    with none there is absent."""
    sums: dict[Hashable, list[float]] = {}
    for record in records:
        age = now - record.admitted_at
        if not 0 <= age < settings.window_seconds:
            continue
        weight = 1.0 if settings.half_life_seconds is None else 0.5 ** (age / settings.half_life_seconds)
        total = sums.setdefault(group(record), [0.0, 0.0])
        total[0] += weight * record.wait
        total[1] += weight
    return {key: weighted / weights for key, (weighted, weights) in sums.items()}


class MovingAverage:
    """The ``moving-average`` estimator."""

    name = NAME

    def __init__(self, settings: MovingAverageSettings | None = None) -> None:
        self.settings = settings or MovingAverageSettings()

    def estimate(self, snapshot: Snapshot) -> dict[WorkloadKey, Estimate]:
        now = snapshot.now
        by_cq = average_waits(snapshot.admissions, now, self.settings, lambda r: r.cluster_queue)
        by_lq = (average_waits(snapshot.admissions, now, self.settings, lambda r: r.local_queue)
                 if self.settings.per_local_queue else {})
        result = {}
        for cq_name, pending in snapshot.pending.items():
            for workload in pending:
                average = by_lq.get(workload.local_queue, by_cq.get(cq_name))
                if average is None:
                    result[workload.key] = estimates.unknown(workload.key, NAME, estimates.NO_ADMISSIONS, now)
                    continue
                expected = workload.queue_timestamp + average
                note = "" if expected >= now else "waited longer than the average already"
                result[workload.key] = estimates.at(workload.key, NAME, max(expected, now), now, note)
        return result
