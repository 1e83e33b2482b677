"""Expected admission times of pending Workloads: the contract every estimator keeps (pure).

An estimator reads a ``Snapshot`` (pending Workloads per ClusterQueue in the core's order, recent
admissions, and for the simulator a copy of the world) and answers one ``Estimate`` per pending
Workload: a time, or no time with the reason. It never makes a number up: a queue that has admitted
nothing yet, a runtime nobody declared, or a forecast cut short by its budget are said as such.

The members (``waitaveraging``, ``admissionrates``, ``forecasting``) import this module only; the
registry that lists them by name is ``estimators``. Times are POSIX seconds (UTC), clocks injected.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

from scheduler.core import worlds
from scheduler.core.kinds import ClusterQueue, LocalQueueKey
from scheduler.core.queues import QueueManager
from scheduler.core.workloads import Workload, WorkloadKey

NO_RUNTIME = "no runtime declared"
"""The forecast depends on how long some Workload runs, and nothing declares it."""
NO_ADMISSIONS = "no admissions measured yet"
"""The queue admitted nothing in the window the estimator measures over."""
BEYOND_BUDGET = "beyond budget"
"""The forecast ran out of its events or CPU time before reaching this Workload, and none came before."""
NOT_ADMITTED = "not admitted in the forecast"
"""The forecast ended (nothing left to finish) with the Workload still pending: it never fits as the
world stands (a request above the quota, a queue that is stopped, a TAS flavor the forecast omits)."""


@dataclass(frozen=True, slots=True)
class Estimate:
    """When one pending Workload is expected to be admitted (quota reserved), or why that is not known."""

    workload: WorkloadKey
    estimator: str
    admission_at: float | None
    """POSIX seconds; None when not known (``reason`` says why)."""
    reason: str
    """"" with a time; one of the module's reasons without."""
    computed_at: float
    """The time of the snapshot it was computed from."""
    served_at: float
    """When it was handed out; later than ``computed_at`` for an estimate served again (``age``)."""
    note: str = ""
    """What qualifies the time (the Workload already waited longer than the average, say)."""

    def __post_init__(self) -> None:
        if (self.admission_at is None) == (not self.reason):
            raise ValueError("an estimate has either a time or a reason, never both or neither")

    @property
    def age(self) -> float:
        """Seconds since the snapshot this estimate was computed from."""
        return self.served_at - self.computed_at

    def served(self, now: float) -> Estimate:
        """The same estimate handed out again at ``now`` (its age grows)."""
        return dataclasses.replace(self, served_at=now)


def at(workload: WorkloadKey, estimator: str, admission_at: float, now: float, note: str = "") -> Estimate:
    """A fresh estimate with a time."""
    return Estimate(workload, estimator, admission_at, "", now, now, note)


def unknown(workload: WorkloadKey, estimator: str, reason: str, now: float) -> Estimate:
    """A fresh estimate without a time, saying why."""
    return Estimate(workload, estimator, None, reason, now, now)


@dataclass(frozen=True, slots=True)
class AdmissionRecord:
    """One past admission, as the moving average and the rate read it."""

    workload: WorkloadKey
    cluster_queue: str
    local_queue: LocalQueueKey
    queued_at: float
    """When it entered the queue: creation, or the requeue that moved its queue-order timestamp."""
    admitted_at: float
    flavors: frozenset[str]
    """The flavors its admission assigned (one per resource of each pod set)."""

    @property
    def wait(self) -> float:
        """Seconds from entering the queue to the admission (Kueue's admission wait time)."""
        return self.admitted_at - self.queued_at


def record_of(workload: Workload) -> AdmissionRecord:
    """The admission record of an admitted Workload (its queue-order timestamp and ``admitted_at``)."""
    if workload.admission is None:
        raise ValueError(f"workload {workload.namespace}/{workload.name} is not admitted")
    flavors = frozenset(f for psa in workload.admission.pod_set_assignments for f in psa.flavors.values())
    return AdmissionRecord(workload.key, workload.admission.cluster_queue, workload.local_queue,
                           workload.queue_timestamp, workload.admitted_at, flavors)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """What estimators read, taken at one time."""

    now: float
    pending: Mapping[str, tuple[Workload, ...]]
    """Per ClusterQueue, its pending Workloads (parked included) in the core's queue order."""
    cluster_queues: Mapping[str, ClusterQueue]
    admissions: tuple[AdmissionRecord, ...] = ()
    """Recent admissions; each estimator keeps only those inside its own window."""
    world: worlds.World | None = None
    """A copy of the scheduler's objects, for the simulator; None when not taken."""


def snapshot_of(manager: QueueManager, admissions: Iterable[AdmissionRecord], now: float,
                with_world: bool = True) -> Snapshot:
    """A snapshot of a live manager: its pending lists in order (``PendingReader.pending_in_order``)."""
    reader = manager.pending_lists
    pending = {name: tuple(reader.pending_in_order(name)) for name in reader.cluster_queue_names()}
    return Snapshot(now, pending, dict(manager.cache.quotas.cluster_queues), tuple(admissions),
                    worlds.world_of(manager) if with_world else None)


class Estimator(Protocol):
    """A strategy that estimates admission times; selectable by ``name`` (``estimators``)."""

    name: str

    def estimate(self, snapshot: Snapshot) -> dict[WorkloadKey, Estimate]:
        """One estimate per pending Workload of the snapshot."""
        ...
