"""What both preemption algorithms share: admitted workloads as preemption sees them, the targets they
choose, the policy check, the candidate order and the fill-back of a target set.

Kept apart from the algorithms (classical in ``preempting``, fair sharing in ``fairpreempting``) so
that each imports it and neither imports the other.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from scheduler.core import admissionfairsharing
from scheduler.core.kinds import FlavorResource, PreemptionPolicy
from scheduler.core.quotas import QuotaBook, Usage
from scheduler.core.workloads import Workload


class PreemptionReason(enum.Enum):
    """The Preempted condition's reason (Kueue's kueue.InClusterQueueReason and its siblings)."""

    IN_CLUSTER_QUEUE = "InClusterQueue"
    IN_COHORT_RECLAMATION = "InCohortReclamation"
    IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"
    IN_COHORT_FAIR_SHARING = "InCohortFairSharing"


class PreemptionPossibility(enum.IntEnum):
    """What simulating preemption for one (flavor, resource) found (Kueue's preemptioncommon)."""

    NO_CANDIDATES = 0
    # Targets found, at least one in the preemptor's own queue.
    PREEMPT = 1
    # Targets found, all in other queues of the cohort.
    RECLAIM = 2


@dataclass(slots=True, frozen=True)
class AdmittedWorkload:
    """An admitted workload as preemption sees it."""

    workload: Workload
    cluster_queue: str
    usage: Usage
    evicting: bool = False
    # Its LocalQueue's usage as the cycle reads it, when its ClusterQueue orders by usage (admission
    # fair sharing; Kueue's workload.Info.LocalQueueFSUsage), else None.
    local_queue_usage: float | None = None

    @property
    def evicted(self) -> bool:
        """Kueue's workload.IsEvicted: our eviction is under way, or the API says Evicted."""
        return self.evicting or self.workload.evicted


@dataclass(slots=True, frozen=True)
class PreemptionTarget:
    workload: Workload
    cluster_queue: str
    reason: PreemptionReason


def satisfies_policy(policy: PreemptionPolicy, preemptor: Workload, candidate: Workload) -> bool:
    """Kueue's preemptioncommon.SatisfiesPreemptionPolicy (without the optional timestamp buffer)."""
    if policy is PreemptionPolicy.LOWER_PRIORITY:
        return candidate.priority < preemptor.priority
    if policy is PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY:
        return candidate.priority < preemptor.priority or (
            candidate.priority == preemptor.priority and preemptor.queue_timestamp < candidate.queue_timestamp
        )
    return policy is PreemptionPolicy.ANY


def uses_any(record: AdmittedWorkload, frs: Collection[FlavorResource]) -> bool:
    """classical.WorkloadUsesResources: the workload holds one of ``frs``."""
    return any(fr in record.usage for fr in frs)


def candidate_order(record: AdmittedWorkload, preemptor_cq: str) -> tuple[bool, bool, float, int, float, str]:
    """preemptioncommon.CandidatesOrdering: evicted first, other queues' before the preemptor's own,
    (admission fair sharing) higher LocalQueue usage, lower priority, most recently admitted, uid.

    Kueue compares usage only between two candidates of one ClusterQueue from different LocalQueues,
    which is no total order once the other queues' candidates come from several ClusterQueues; a key
    is exact for the preemptor's own candidates (one ClusterQueue), so usage counts for those only."""
    wl = record.workload
    own = record.cluster_queue == preemptor_cq
    usage = admissionfairsharing.candidate_usage_key(record.local_queue_usage) if own else 0.0
    return (not record.evicted, own, usage, wl.priority, -wl.admitted_at, wl.uid)


def fill_back(cq_name: str, request: Mapping[FlavorResource, int], removed: list[AdmittedWorkload],
              work: QuotaBook, borrowing: bool,
              nodes_fit: Callable[[Sequence[AdmittedWorkload]], bool] | None = None) -> list[AdmittedWorkload]:
    """fillBackWorkloads: add back, newest removal first, each target the request fits without (on the
    nodes too, when ``nodes_fit`` says so for the ones still gone). The last removal is needed by
    construction. ``work`` keeps the kept ones removed."""
    kept = list(removed)
    for record in reversed(removed[:-1]):
        work.add_usage(record.cluster_queue, record.usage)
        if work.fits(cq_name, request, allow_borrowing=borrowing) and (
                nodes_fit is None or nodes_fit([r for r in kept if r is not record])):
            kept.remove(record)
        else:
            work.remove_usage(record.cluster_queue, record.usage)
    return kept


def restore(work: QuotaBook, removed: Iterable[AdmittedWorkload]) -> None:
    for record in removed:
        work.add_usage(record.cluster_queue, record.usage)
