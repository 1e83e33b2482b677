"""Workloads, their pod sets and admissions, and the order a ClusterQueue keeps them in.

Objects are slotted dataclasses so a pending workload stays well under 1 KiB. They are
treated as immutable: a change (priority, eviction, admission) makes a new object with
``dataclasses.replace``, so an index holding the old object can still find and remove it
by its old order key.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from scheduler.core.kinds import FlavorResource, Toleration
from scheduler.core.topologies import TopologyAssignment, TopologyRequest

# (namespace, name), the identity Kueue uses (workload.Key is "namespace/name").
WorkloadKey = tuple[str, str]
# (-priority, queue-order timestamp, uid): ascending order is Kueue's queue order.
OrderKey = tuple[int, float, str]

PODS_RESOURCE = "pods"


class RequeuingTimestamp(enum.Enum):
    """Which time orders a workload that comes back after an eviction.

    Kueue's default (``waitForPodsReady.requeuingStrategy.timestamp``) is Eviction: a
    workload evicted by the PodsReady timeout, or by an admission check, queues by its
    eviction time; a preempted workload keeps its creation time.
    """

    EVICTION = "Eviction"
    CREATION = "Creation"


# Requeued=False reasons that keep a pending workload from admission until this scheduler marks it
# Requeued=True (resumed workload, restarted queue, the backoff after a PodsReady timeout or an admission
# check's Retry ended: scheduler.controller.podsreadiness marks both BackoffFinished, as Kueue's Reconcile
# does in one switch case). Kueue holds any Requeued=False workload.
REQUEUE_HOLDING_REASONS = frozenset({"Deactivated", "ClusterQueueStopped", "LocalQueueStopped", "PodsReadyTimeout",
                                     "AdmissionCheck"})
# A deactivation with a cause (DeactivatedDueToMaximumExecutionTimeExceeded) holds too; Kueue never marks it
# Requeued=True (it reactivates only reason Deactivated), and neither does this scheduler.
REQUEUE_HOLDING_PREFIX = "DeactivatedDueTo"

# Eviction reasons that move the queue-order timestamp under RequeuingTimestamp.EVICTION.
REQUEUE_AT_EVICTION_REASONS = frozenset({"PodsReadyTimeout", "AdmissionCheck"})


class CheckState(enum.Enum):
    """An admission check's state in status.admissionChecks (apis/kueue/v1beta2 CheckState)."""

    PENDING = "Pending"
    READY = "Ready"
    RETRY = "Retry"
    REJECTED = "Rejected"


@dataclass(slots=True, frozen=True)
class AdmissionCheckState:
    """One entry of status.admissionChecks (decided by scheduler.core.admissionchecks). Times in POSIX seconds.

    Refuses what the Workload CRD refuses, so a state Kueue could never write cannot be modelled.
    """

    name: str
    state: CheckState
    last_transition: float | None
    """None stands for Go's zero time (GetMaxRetryTime skips such a state)."""
    message: str = ""
    requeue_after_seconds: int | None = None
    retry_count: int | None = None

    def __post_init__(self) -> None:
        if not self.name:
            raise ValueError("status.admissionChecks[].name must not be empty (the CRD's minLength is 1)")
        if not isinstance(self.state, CheckState):
            try:
                object.__setattr__(self, "state", CheckState(self.state))
            except ValueError:
                raise ValueError(f"status.admissionChecks[].state must be Pending, Ready, Retry or Rejected "
                                 f"(got {self.state!r})") from None
        for api_name, value in (("requeueAfterSeconds", self.requeue_after_seconds), ("retryCount", self.retry_count)):
            if value is not None and value < 0:
                raise ValueError(f"status.admissionChecks[].{api_name} must be >= 0 (got {value}): "
                                 "the API server refuses the write (the CRD's minimum is 0)")


@dataclass(slots=True, frozen=True)
class AdmittedCondition:
    """A Workload's Admitted condition (scheduler.core.admissionchecks); lastTransitionTime in POSIX seconds."""

    status: bool
    reason: str
    message: str
    last_transition: float


@dataclass(slots=True, frozen=True)
class ClearedCondition:
    """An Evicted or Preempted condition that is False, as the API holds it; lastTransitionTime in POSIX seconds."""

    kind: str
    reason: str
    message: str
    last_transition: float


@dataclass(slots=True, frozen=True)
class PodSet:
    """A homogeneous group of pods: ``count`` pods each requesting ``requests`` (milli-units)."""

    name: str
    count: int
    requests: tuple[tuple[str, int], ...]
    node_selector: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    topology_request: TopologyRequest | None = None

    def total_requests(self, with_pods: bool) -> dict[str, int]:
        """Requests of all pods in the set; adds Kueue's implicit ``pods`` resource if asked."""
        totals = {resource: milli * self.count for resource, milli in self.requests}
        if with_pods:
            totals[PODS_RESOURCE] = totals.get(PODS_RESOURCE, 0) + self.count * 1000
        return totals


@dataclass(slots=True, frozen=True)
class PodSetAssignment:
    """Flavors chosen per resource for one pod set, and the quota it uses (milli-units)."""

    name: str
    flavors: dict[str, str]
    usage: dict[str, int]
    count: int
    # Where the pods go in a TAS flavor (None: not placed by topology).
    topology_assignment: TopologyAssignment | None = None


@dataclass(slots=True, frozen=True)
class Admission:
    cluster_queue: str
    pod_set_assignments: tuple[PodSetAssignment, ...]

    def usage(self) -> dict[FlavorResource, int]:
        """Quota used per (flavor, resource), summed over pod sets."""
        totals: dict[FlavorResource, int] = {}
        for assignment in self.pod_set_assignments:
            for resource, milli in assignment.usage.items():
                flavor = assignment.flavors.get(resource)
                if flavor is None:
                    continue  # not quota-managed by the ClusterQueue
                flavor_resource = (flavor, resource)
                totals[flavor_resource] = totals.get(flavor_resource, 0) + milli
        return totals


@dataclass(slots=True, eq=False)
class Workload:
    """One Kueue Workload. Timestamps are POSIX seconds (UTC)."""

    namespace: str
    name: str
    uid: str
    queue_name: str
    priority: int
    creation_timestamp: float
    pod_sets: tuple[PodSet, ...]
    # Creation time unless an eviction moved it (see RequeuingTimestamp).
    queue_timestamp: float = -1.0
    # Used to resolve ``priority`` when spec.priority is absent; "" when none.
    priority_class: str = ""
    # spec.active=false: never admitted, not counted as pending, holds no quota.
    active: bool = True
    finished: bool = False
    # An Evicted condition is True (any reason); deactivation writes it once.
    evicted: bool = False
    # A Preempted condition is True: the admission that follows turns it False (an eviction of another cause
    # has none, and Kueue adds none).
    preempted: bool = False
    # The Evicted and Preempted conditions that are False (an admission turned them): the scheduler's status
    # applies carry them as they are, or server-side apply strips the fields it wrote to a condition without
    # status, which the API refuses (Kueue applies the whole status).
    cleared: tuple[ClearedCondition, ...] = ()
    # Reason of a Requeued=False condition ("" if none): Deactivated, ClusterQueueStopped or
    # LocalQueueStopped hold the requeue until the workload or its queue is resumed.
    requeue_held_by: str = ""
    admission: Admission | None = None
    # When quota was reserved (POSIX seconds); orders preemption candidates. Without admission checks Kueue
    # turns Admitted True in the same write, so it is also when the execution time started counting.
    admitted_at: float = 0.0
    # spec.maximumExecutionTimeSeconds (0: no limit) and status.accumulatedPastExecutionTimeSeconds (None:
    # absent), the seconds it was admitted before (see scheduler.core.executiontime).
    max_execution_seconds: int = 0
    accumulated_execution_seconds: int | None = None
    # (reason, message) of a DeactivationTarget=True condition: Kueue deactivates such a Workload.
    deactivation_target: tuple[str, str] | None = None
    # status.admissionChecks, sorted by name as Kueue keeps them (scheduler.core.admissionchecks).
    admission_checks: tuple[AdmissionCheckState, ...] = ()
    # The Admitted condition (None: none). With admission checks it turns True after the reservation.
    admitted_condition: AdmittedCondition | None = None
    key: WorkloadKey = field(init=False)
    order_key: OrderKey = field(init=False)

    def __post_init__(self) -> None:
        if self.queue_timestamp < 0:
            self.queue_timestamp = self.creation_timestamp
        self.key = (self.namespace, self.name)
        self.order_key = (-self.priority, self.queue_timestamp, self.uid)

    @property
    def requeue_held(self) -> bool:
        """Pending but not admissible until its Requeued condition turns True."""
        held = self.requeue_held_by
        return held in REQUEUE_HOLDING_REASONS or held.startswith(REQUEUE_HOLDING_PREFIX)

    @property
    def admitted_since(self) -> float | None:
        """When it turned Admitted (the Admitted=True condition's lastTransitionTime); None while not admitted.

        An object holding quota with no Admitted condition at all and no admission checks (written by a tool
        that sets QuotaReserved alone) counts as admitted at its reservation, as it would be without checks.
        """
        condition = self.admitted_condition
        if condition is not None:
            return condition.last_transition if condition.status and self.admission is not None else None
        if self.admission is not None and not self.admission_checks:
            return self.admitted_at
        return None

    @property
    def local_queue(self) -> tuple[str, str]:
        """(namespace, LocalQueue name) this workload was submitted to."""
        return (self.namespace, self.queue_name)


def order_key(workload: Workload) -> OrderKey:
    """Sort key: higher priority first, then earlier queue-order timestamp, then uid."""
    return workload.order_key


def queue_timestamp_after_eviction(
    workload: Workload, reason: str, evicted_at: float, policy: RequeuingTimestamp
) -> float:
    """The queue-order timestamp a workload gets back with after an eviction."""
    if reason == "AdmissionCheck":
        return evicted_at
    if reason in REQUEUE_AT_EVICTION_REASONS and policy is RequeuingTimestamp.EVICTION:
        return evicted_at
    # Kueue reads the latest Evicted condition: any other reason means creation time.
    return workload.creation_timestamp
