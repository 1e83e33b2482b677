"""What a scheduling cycle decides for each ClusterQueue head.

The cycle (``scheduling``) produces these; ``QueueManager.apply_decisions`` records them
in memory (Kueue's "assume"), and the controller writes the matching API changes:
``Admit`` -> set status.admission + QuotaReserved/Admitted; ``Preempt`` -> evict the
targets; ``Park`` and ``Wait`` -> optionally a QuotaReserved=False condition message (written
for a namespace mismatch, as Kueue's scheduler does for every head it turns away).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scheduler.core.flavorassigning import LastAssignment
from scheduler.core.preempting import PreemptionTarget
from scheduler.core.workloads import Admission, Workload, WorkloadKey

NAMESPACE_MISMATCH = "NamespaceMismatch"
"""Kueue's RequeueReasonNamespaceMismatch (pkg/cache/queue/cluster_queue.go)."""
NAMESPACE_MISMATCH_MESSAGE = "Workload namespace doesn't match ClusterQueue selector"
"""The QuotaReserved=False message Kueue writes for it (pkg/scheduler/scheduler.go, nominate)."""
OVERLAPPING_TARGETS = "Workload has overlapping preemption targets with another workload"
NO_LONGER_FITS = "Workload no longer fits after processing another workload"
"""Kueue's messages for a head the cycle's walk skips (pkg/scheduler/scheduler.go, setSkipped)."""


CLUSTER_QUEUE_INACTIVE = "ClusterQueueInactive"
"""A head of a ClusterQueue whose cohort chain loops: Kueue's nominate writes "ClusterQueue X is
inactive" on it and sets it aside until the tree changes (its requeue reason has no name)."""

FAILED_CHECKS = "FailedAdmissionChecks"
"""A head with an admission check in Retry or Rejected: Kueue's nominate refuses it first, writing "The workload
has failed admission checks" (scheduler.core.admissionchecks.failed_checks_refusal); no requeue reason."""


@dataclass(slots=True, frozen=True)
class Admit:
    """Reserve quota: the workload is admitted with this flavor assignment."""

    workload: Workload
    cluster_queue: str
    admission: Admission
    borrows: bool


@dataclass(slots=True, frozen=True)
class Preempt:
    """Evict ``targets``; the workload stays at its queue's head until they are gone."""

    workload: Workload
    cluster_queue: str
    targets: tuple[PreemptionTarget, ...]
    admission: Admission
    message: str = ""
    """Why it does not fit as it is (Kueue adds how many evictions it started)."""
    ongoing: frozenset[WorkloadKey] = frozenset()
    """Targets already being evicted when it was decided (a preemptor tried again while its evictions are
    under way): counted in its message as Kueue counts them ("Preemption ongoing"), not evicted again."""

    def to_evict(self) -> tuple[PreemptionTarget, ...]:
        """The targets whose eviction this decision starts."""
        return tuple(t for t in self.targets if t.workload.key not in self.ongoing)


@dataclass(slots=True, frozen=True)
class Park:
    """BestEffortFIFO: set aside as inadmissible until capacity changes; keeps its position.
    Either strategy: a head whose namespace the ClusterQueue does not select (``NAMESPACE_MISMATCH``),
    whose ClusterQueue's cohort chain loops (``CLUSTER_QUEUE_INACTIVE``), or with a failed admission check
    (``FAILED_CHECKS``)."""

    workload: Workload
    cluster_queue: str
    message: str
    reason: str = ""
    """Kueue's requeue reason, "" for a head that did not fit."""
    last_assignment: LastAssignment | None = None
    """Where its flavor search stopped; the next search resumes after it (flavorassigning)."""


@dataclass(slots=True, frozen=True)
class Wait:
    """Stay at the head. ``blocks``: StrictFIFO head that does not fit, retried only
    when capacity changes; otherwise retried next cycle (lost a race in this one, or its
    flavor search has flavors left to try)."""

    workload: Workload
    cluster_queue: str
    message: str
    blocks: bool
    last_assignment: LastAssignment | None = None
    """Where its flavor search stopped; None starts the next search over (Kueue resets it when a
    head is skipped, unless FlavorFungibilityPreserveScanProgress keeps it)."""


Decision = Admit | Preempt | Park | Wait


def describe(decision: Decision, name: Callable[[str], str] = str) -> str:
    """One line for a log or a trace: `Admit w01 -> cq1 ps0{cpu=f0} ps1{cpu=f1}`, `Preempt for w02 in cq1:
    w05 (InCohortReclamation)`, `Wait w03 in cq0: <message>`; ``name`` shortens object names."""
    who, cq = decision.workload.name, name(decision.cluster_queue)
    if isinstance(decision, Admit):
        pod_sets = " ".join(f"{ps.name}{{{','.join(f'{r}={name(f)}' for r, f in sorted(ps.flavors.items()))}}}"
                            for ps in decision.admission.pod_set_assignments)
        return f"Admit {who} -> {cq} {pod_sets}"
    if isinstance(decision, Preempt):
        return f"Preempt for {who} in {cq}: " + ", ".join(f"{t.workload.name} ({t.reason.value})"
                                                         for t in decision.targets)
    return f"{type(decision).__name__} {who} in {cq}: {decision.message}"
