"""Choosing which admitted workloads to evict so a pending one fits (classical preemption).

Follows Kueue's classical strategy (pkg/scheduler/preemption): candidates are admitted
workloads using a (flavor, resource) that needs preemption —

- in the same ClusterQueue when ``withinClusterQueue`` allows: lower priority
  (``LowerPriority``), or also equal priority but newer (``LowerOrNewerEqualPriority``);
- in other queues of the cohort when ``reclaimWithinCohort`` allows, and only while those
  queues borrow: lower priority (``LowerPriority``) or any priority (``Any``).

Candidates are ordered: already being evicted first, other queues before our own, lower
priority first, most recently admitted first, uid. The minimal set is found by removing
candidates in that order until the workload fits, then adding back (in reverse) those
not needed. Reclaiming from the cohort is tried without borrowing first; own-queue
candidates with borrowing come last. ``borrowWithinCohort`` and fair-sharing preemption
are not modelled yet.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from scheduler.core.kinds import ClusterQueue, FlavorResource, PreemptionPolicy
from scheduler.core.quotas import QuotaBook, Usage
from scheduler.core.workloads import Workload


class PreemptionReason(enum.Enum):
    IN_CLUSTER_QUEUE = "InClusterQueue"
    IN_COHORT_RECLAMATION = "InCohortReclamation"


@dataclass(slots=True, frozen=True)
class AdmittedWorkload:
    """An admitted workload as preemption sees it."""

    workload: Workload
    cluster_queue: str
    usage: Usage
    evicting: bool = False


@dataclass(slots=True, frozen=True)
class PreemptionTarget:
    workload: Workload
    cluster_queue: str
    reason: PreemptionReason


def find_targets(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    quotas: QuotaBook,
) -> list[PreemptionTarget]:
    """The workloads to evict so ``request`` fits in ``cq``; empty when no set works."""
    candidates = _candidates(preemptor, cq, needs_preemption, admitted, quotas)
    if not candidates:
        return []
    candidates.sort(key=lambda c: _candidate_order(c, cq.name))
    own = [c for c in candidates if c.cluster_queue == cq.name]
    work = quotas.copy()
    if len(own) == len(candidates):
        return _minimal(cq.name, request, needs_preemption, candidates, work, allow_borrowing=True)
    if _under_nominal(cq.name, needs_preemption, work):
        targets = _minimal(cq.name, request, needs_preemption, candidates, work, allow_borrowing=False)
        if targets:
            return targets
    return _minimal(cq.name, request, needs_preemption, own, work, allow_borrowing=True)


def _candidates(
    preemptor: Workload,
    cq: ClusterQueue,
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    quotas: QuotaBook,
) -> list[AdmittedWorkload]:
    within = cq.preemption.within_cluster_queue
    reclaim = cq.preemption.reclaim_within_cohort
    result = []
    for candidate in admitted:
        if not any(fr in candidate.usage for fr in needs_preemption):
            continue
        wl = candidate.workload
        if candidate.cluster_queue == cq.name:
            if within is PreemptionPolicy.LOWER_PRIORITY and wl.priority < preemptor.priority:
                result.append(candidate)
            elif within is PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY and (
                wl.priority < preemptor.priority
                or (
                    wl.priority == preemptor.priority
                    and wl.queue_timestamp > preemptor.queue_timestamp
                )
            ):
                result.append(candidate)
            continue
        if reclaim is PreemptionPolicy.NEVER:
            continue
        if not any(
            quotas.is_borrowing(candidate.cluster_queue, fr) for fr in needs_preemption
        ):
            continue
        if reclaim is PreemptionPolicy.ANY or wl.priority < preemptor.priority:
            result.append(candidate)
    return result


def _candidate_order(candidate: AdmittedWorkload, cq_name: str) -> tuple[bool, bool, int, float, str]:
    wl = candidate.workload
    return (
        not candidate.evicting,
        candidate.cluster_queue == cq_name,
        wl.priority,
        -wl.admitted_at,
        wl.uid,
    )


def _under_nominal(cq_name: str, needs_preemption: Collection[FlavorResource], quotas: QuotaBook) -> bool:
    return all(quotas.used(cq_name, fr) < quotas.nominal(cq_name, fr) for fr in needs_preemption)


def _minimal(
    cq_name: str,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    candidates: list[AdmittedWorkload],
    quotas: QuotaBook,
    allow_borrowing: bool,
) -> list[PreemptionTarget]:
    removed: list[AdmittedWorkload] = []
    fits = False
    for candidate in candidates:
        same_queue = candidate.cluster_queue == cq_name
        if not same_queue and not any(
            quotas.is_borrowing(candidate.cluster_queue, fr) for fr in needs_preemption
        ):
            # Reclaim only from queues still borrowing after earlier removals.
            continue
        quotas.remove_usage(candidate.cluster_queue, candidate.usage)
        removed.append(candidate)
        if quotas.fits(cq_name, request, allow_borrowing):
            fits = True
            break
    if not fits:
        _restore(quotas, removed)
        return []
    # Add back, newest removal first (the last one is needed by construction).
    kept = list(removed)
    for candidate in reversed(removed[:-1]):
        quotas.add_usage(candidate.cluster_queue, candidate.usage)
        if quotas.fits(cq_name, request, allow_borrowing):
            kept.remove(candidate)
        else:
            quotas.remove_usage(candidate.cluster_queue, candidate.usage)
    _restore(quotas, kept)
    return [
        PreemptionTarget(
            c.workload,
            c.cluster_queue,
            PreemptionReason.IN_CLUSTER_QUEUE
            if c.cluster_queue == cq_name
            else PreemptionReason.IN_COHORT_RECLAMATION,
        )
        for c in kept
    ]


def _restore(quotas: QuotaBook, removed: Iterable[AdmittedWorkload]) -> None:
    for candidate in removed:
        quotas.add_usage(candidate.cluster_queue, candidate.usage)
