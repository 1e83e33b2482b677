"""Choosing which admitted workloads to evict so a pending one fits (Kueue's classical preemption).

Ported from pkg/scheduler/preemption/preemption.go (classicalPreemptions, fillBackWorkloads),
classical/candidate_generator.go and classical/hierarchical_preemption.go, for flat cohorts.

Candidates are admitted workloads that use a (flavor, resource) needing preemption:

- in the preemptor's ClusterQueue when ``withinClusterQueue`` allows (``LowerPriority``; or
  ``LowerOrNewerEqualPriority``: also equal priority with a later queue-order timestamp);
- in another queue of the cohort that borrows one of those (flavor, resource)s, when
  ``reclaimWithinCohort`` allows (``LowerPriority`` or ``Any``). If the whole request fits in the
  preemptor's nominal quota, the preemptor has the *hierarchical advantage* and may take them while
  borrowing; otherwise ``borrowWithinCohort`` decides: ``Never`` (or absent) lets them go only if the
  preemptor does not borrow afterwards, ``LowerPriority`` also while borrowing, for candidates of lower
  priority than the preemptor and (when set) at most ``maxPriorityThreshold``.

Candidates are ordered: already evicted first; then other queues' (hierarchical, then by priority)
before the preemptor's own; lower priority first; most recently admitted first; uid. A pass removes
valid candidates in that order until the request fits (without borrowing in a "no borrowing" pass)
and then adds back, newest removal first, those not needed. A candidate of another queue stays valid
only while that queue still borrows. Fair-sharing preemption is not modelled.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from scheduler.core.kinds import ClusterQueue, FlavorResource, PreemptionPolicy
from scheduler.core.quotas import QuotaBook, Usage
from scheduler.core.workloads import Workload


class PreemptionReason(enum.Enum):
    """The Preempted condition's reason (Kueue's classical.preemptionVariant.PreemptionReason)."""

    IN_CLUSTER_QUEUE = "InClusterQueue"
    IN_COHORT_RECLAMATION = "InCohortReclamation"
    IN_COHORT_RECLAIM_WHILE_BORROWING = "InCohortReclaimWhileBorrowing"


class PreemptionPossibility(enum.IntEnum):
    """What simulating preemption for one (flavor, resource) found (Kueue's preemptioncommon)."""

    NO_CANDIDATES = 0
    # Targets found, at least one in the preemptor's own queue.
    PREEMPT = 1
    # Targets found, all in other queues of the cohort.
    RECLAIM = 2


class _Variant(enum.Enum):
    """How a candidate may be preempted (Kueue's classical.preemptionVariant, Never left out)."""

    WITHIN_CLUSTER_QUEUE = enum.auto()
    HIERARCHICAL_RECLAIM = enum.auto()
    RECLAIM_WITHOUT_BORROWING = enum.auto()
    RECLAIM_WHILE_BORROWING = enum.auto()


_REASONS = {
    _Variant.WITHIN_CLUSTER_QUEUE: PreemptionReason.IN_CLUSTER_QUEUE,
    _Variant.HIERARCHICAL_RECLAIM: PreemptionReason.IN_COHORT_RECLAMATION,
    _Variant.RECLAIM_WITHOUT_BORROWING: PreemptionReason.IN_COHORT_RECLAMATION,
    _Variant.RECLAIM_WHILE_BORROWING: PreemptionReason.IN_COHORT_RECLAIM_WHILE_BORROWING,
}
# Kueue concatenates the three sorted lists in this order (NewCandidateIterator).
_GROUP = {
    _Variant.HIERARCHICAL_RECLAIM: 0,
    _Variant.RECLAIM_WITHOUT_BORROWING: 1,
    _Variant.RECLAIM_WHILE_BORROWING: 1,
    _Variant.WITHIN_CLUSTER_QUEUE: 2,
}


@dataclass(slots=True, frozen=True)
class AdmittedWorkload:
    """An admitted workload as preemption sees it."""

    workload: Workload
    cluster_queue: str
    usage: Usage
    evicting: bool = False

    @property
    def evicted(self) -> bool:
        """Kueue's workload.IsEvicted: our eviction is under way, or the API says Evicted."""
        return self.evicting or self.workload.evicted


@dataclass(slots=True, frozen=True)
class PreemptionTarget:
    workload: Workload
    cluster_queue: str
    reason: PreemptionReason


@dataclass(slots=True, frozen=True)
class _Candidate:
    record: AdmittedWorkload
    variant: _Variant


def find_targets(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    quotas: QuotaBook,
) -> list[PreemptionTarget]:
    """The workloads to evict so ``request`` (the whole workload's usage) fits in ``cq``; empty when
    no set works. ``admitted``: the workloads admitted in ``cq`` and its cohort. Pure: ``quotas`` is
    not changed."""
    chosen = _classical(preemptor, cq, request, needs_preemption, admitted, quotas.copy())
    return [PreemptionTarget(c.record.workload, c.record.cluster_queue, _REASONS[c.variant]) for c in chosen]


def simulate_preemption(
    preemptor: Workload,
    cq: ClusterQueue,
    flavor_resource: FlavorResource,
    quantity: int,
    admitted: Iterable[AdmittedWorkload],
    quotas: QuotaBook,
) -> tuple[PreemptionPossibility, int]:
    """Kueue's PreemptionOracle.SimulatePreemption (preemption_oracle.go): whether preempting could
    make room for ``quantity`` of one (flavor, resource), and the borrowing level afterwards."""
    work = quotas.copy()
    chosen = _classical(preemptor, cq, {flavor_resource: quantity}, (flavor_resource,), admitted, work)
    if not chosen:
        return PreemptionPossibility.NO_CANDIDATES, work.borrowing_level(cq.name, flavor_resource, quantity)
    for candidate in chosen:
        work.remove_usage(candidate.record.cluster_queue, candidate.record.usage)
    borrowing = work.borrowing_level(cq.name, flavor_resource, quantity)
    if any(c.record.cluster_queue == cq.name for c in chosen):
        return PreemptionPossibility.PREEMPT, borrowing
    return PreemptionPossibility.RECLAIM, borrowing


def satisfies_policy(policy: PreemptionPolicy, preemptor: Workload, candidate: Workload) -> bool:
    """Kueue's preemptioncommon.SatisfiesPreemptionPolicy (without the optional timestamp buffer)."""
    if policy is PreemptionPolicy.LOWER_PRIORITY:
        return candidate.priority < preemptor.priority
    if policy is PreemptionPolicy.LOWER_OR_NEWER_EQUAL_PRIORITY:
        return candidate.priority < preemptor.priority or (
            candidate.priority == preemptor.priority and preemptor.queue_timestamp < candidate.queue_timestamp
        )
    return policy is PreemptionPolicy.ANY


def _classical(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    work: QuotaBook,
) -> list[_Candidate]:
    """classicalPreemptions on ``work`` (left as it was): the passes, each a removal then a fill back."""
    candidates = _candidates(preemptor, cq, request, needs_preemption, admitted, work)
    if not candidates:
        return []
    candidates.sort(key=lambda c: _order(c, preemptor))
    for borrowing in _passes(cq, candidates, needs_preemption, work):
        removed: list[_Candidate] = []
        for candidate in candidates:
            if not _valid(candidate, cq, borrowing, needs_preemption, work):
                continue
            work.remove_usage(candidate.record.cluster_queue, candidate.record.usage)
            removed.append(candidate)
            if work.fits(cq.name, request, allow_borrowing=borrowing):
                kept = _fill_back(cq.name, request, removed, work, borrowing)
                _restore(work, kept)
                return kept
        _restore(work, removed)
    return []


def _candidates(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    work: QuotaBook,
) -> list[_Candidate]:
    """collectSameQueueCandidates and collectCandidatesForHierarchicalReclaim, flat cohort."""
    policy = cq.preemption
    reclaim = cq.cohort and policy.reclaim_within_cohort is not PreemptionPolicy.NEVER
    # Only queues of the cohort borrowing one of the (flavor, resource)s hold candidates.
    borrowing = {
        name for name in (work.cohort_members(cq.cohort) if reclaim else ())
        if name != cq.name and _borrows_any(work, name, needs_preemption)
    }
    # QuantitiesFitInQuota on the preemptor's queue: the whole request within its nominal quota.
    advantage = all(
        work.used(cq.name, fr) + value <= work.nominal(cq.name, fr) for fr, value in request.items() if value > 0
    )
    result = []
    for record in admitted:
        if not any(fr in record.usage for fr in needs_preemption):
            continue
        if record.cluster_queue == cq.name:
            if satisfies_policy(policy.within_cluster_queue, preemptor, record.workload):
                result.append(_Candidate(record, _Variant.WITHIN_CLUSTER_QUEUE))
            continue
        if record.cluster_queue not in borrowing:
            continue
        if satisfies_policy(policy.reclaim_within_cohort, preemptor, record.workload):
            result.append(_Candidate(record, _reclaim_variant(cq, preemptor, record.workload, advantage)))
    return result


def _reclaim_variant(cq: ClusterQueue, preemptor: Workload, candidate: Workload, advantage: bool) -> _Variant:
    """classifyPreemptionVariant for a candidate of another queue, with isAboveBorrowingThreshold."""
    if advantage:
        return _Variant.HIERARCHICAL_RECLAIM
    borrow = cq.preemption.borrow_within_cohort
    if borrow.forbidden or candidate.priority >= preemptor.priority:
        return _Variant.RECLAIM_WITHOUT_BORROWING
    threshold = borrow.max_priority_threshold
    if threshold is not None and candidate.priority > threshold:
        return _Variant.RECLAIM_WITHOUT_BORROWING
    return _Variant.RECLAIM_WHILE_BORROWING


def _order(candidate: _Candidate, preemptor: Workload) -> tuple[bool, int, int, float, str]:
    """CandidatesOrdering within each list, then the lists' concatenation (evicted ones first)."""
    wl = candidate.record.workload
    return (not candidate.record.evicted, _GROUP[candidate.variant], wl.priority, -wl.admitted_at, wl.uid)


def _passes(
    cq: ClusterQueue, candidates: list[_Candidate], needs_preemption: Collection[FlavorResource], work: QuotaBook
) -> list[bool]:
    """The borrowing settings tried, in order (classicalPreemptions' attemptPossibleOpts)."""
    others = [c for c in candidates if c.variant is not _Variant.WITHIN_CLUSTER_QUEUE]
    hierarchical = any(c.variant is _Variant.HIERARCHICAL_RECLAIM for c in others)
    forbidden = cq.preemption.borrow_within_cohort.forbidden
    # queueUnderNominalInResourcesNeedingPreemption: strictly below nominal in every one of them.
    under_nominal = all(work.used(cq.name, fr) < work.nominal(cq.name, fr) for fr in needs_preemption)
    if not others or (forbidden and not under_nominal):
        return [True]
    if forbidden and not hierarchical:
        return [False, True]
    return [True, False]


def _valid(
    candidate: _Candidate, cq: ClusterQueue, borrowing: bool, needs_preemption: Collection[FlavorResource],
    work: QuotaBook,
) -> bool:
    """candidateIsValid: own-queue candidates always; others only while their queue still borrows,
    and not in a borrowing pass when they may only go if the preemptor does not borrow."""
    if candidate.record.cluster_queue == cq.name:
        return True
    if borrowing and candidate.variant is _Variant.RECLAIM_WITHOUT_BORROWING:
        return False
    return _borrows_any(work, candidate.record.cluster_queue, needs_preemption)


def _borrows_any(work: QuotaBook, cq_name: str, frs: Collection[FlavorResource]) -> bool:
    """Not Kueue's IsWithinNominalInResources: above nominal in at least one of ``frs``."""
    return any(work.is_borrowing(cq_name, fr) for fr in frs)


def _fill_back(
    cq_name: str, request: Mapping[FlavorResource, int], removed: list[_Candidate], work: QuotaBook, borrowing: bool
) -> list[_Candidate]:
    """fillBackWorkloads: add back, newest removal first, each candidate the request fits without.
    The last removal is needed by construction. ``work`` keeps the kept ones removed."""
    kept = list(removed)
    for candidate in reversed(removed[:-1]):
        work.add_usage(candidate.record.cluster_queue, candidate.record.usage)
        if work.fits(cq_name, request, allow_borrowing=borrowing):
            kept.remove(candidate)
        else:
            work.remove_usage(candidate.record.cluster_queue, candidate.record.usage)
    return kept


def _restore(work: QuotaBook, removed: Iterable[_Candidate]) -> None:
    for candidate in removed:
        work.add_usage(candidate.record.cluster_queue, candidate.record.usage)
