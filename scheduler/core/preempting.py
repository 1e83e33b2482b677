"""Choosing which admitted workloads to evict so a pending one fits: Kueue's classical preemption, and
the entry points that hand over to fair-sharing preemption (``fairpreempting``) when it is on.

Ported from pkg/scheduler/preemption/preemption.go (classicalPreemptions, fillBackWorkloads),
classical/candidate_generator.go and classical/hierarchical_preemption.go.

Candidates are admitted workloads that use a (flavor, resource) needing preemption:

- in the preemptor's ClusterQueue when ``withinClusterQueue`` allows (``LowerPriority``; or
  ``LowerOrNewerEqualPriority``: also equal priority with a later queue-order timestamp);
- in other queues of the cohort tree, when ``reclaimWithinCohort`` allows (``LowerPriority`` or
  ``Any``), found by walking from the preemptor's cohort to the root: at each Cohort, the subtrees
  not yet seen that borrow one of those (flavor, resource)s, and in them the queues that borrow.
  From the first Cohort whose subtree quota holds the request on (the queue's own nominal quota
  counts as the first), the preemptor has the *hierarchical advantage* over the candidates found and
  may take them while borrowing; before it, ``borrowWithinCohort`` decides: ``Never`` (or absent)
  lets them go only if the preemptor does not borrow afterwards, ``LowerPriority`` also while
  borrowing, for candidates of lower priority than the preemptor and (when set) at most
  ``maxPriorityThreshold``.

Candidates are ordered: already evicted first; then those with the hierarchical advantage, the other
queues', the preemptor's own; lower priority first; most recently admitted first; uid. A pass removes
valid candidates in that order until the request fits (without borrowing in a "no borrowing" pass)
and then adds back, newest removal first, those not needed. A candidate of another queue stays valid
only while its queue, and every Cohort between it and the one where it was found, still borrows.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from scheduler.core import fairpreempting
from scheduler.core.kinds import FAIR_SHARING_OFF, ClusterQueue, FairSharing, FlavorResource, PreemptionPolicy
from scheduler.core.quotas import Node, QuotaBook
from scheduler.core.victims import (
    AdmittedWorkload,
    PreemptionPossibility,
    PreemptionReason,
    PreemptionTarget,
    candidate_order,
    fill_back,
    restore,
    satisfies_policy,
    uses_any,
)
from scheduler.core.workloads import Workload

# Re-exported: callers name them as parts of preemption.
__all__ = ["AdmittedWorkload", "PreemptionPossibility", "PreemptionReason", "PreemptionTarget", "find_targets",
           "satisfies_policy", "simulate_preemption"]


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
class _Candidate:
    record: AdmittedWorkload
    variant: _Variant
    # The Cohort at whose level it was found (Kueue's candidateElem.lca); None in the own queue.
    lca: Node | None = None


def find_targets(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    quotas: QuotaBook,
    fair_sharing: FairSharing = FAIR_SHARING_OFF,
    nodes_fit: Callable[[Sequence[AdmittedWorkload]], bool] | None = None,
) -> list[PreemptionTarget]:
    """The workloads to evict so ``request`` (the whole workload's usage) fits in ``cq``; empty when
    no set works. ``admitted``: the workloads admitted in ``cq``'s cohort tree; ``nodes_fit``: whether
    the workload's pods can be placed with some gone (topology-aware scheduling; classical preemption
    only). Pure: ``quotas`` is not changed."""
    if fair_sharing.enabled:
        return fairpreempting.find_targets(preemptor, cq, request, needs_preemption, admitted, quotas.copy(),
                                           fair_sharing.strategies)
    chosen = _classical(preemptor, cq, request, needs_preemption, admitted, quotas.copy(), nodes_fit)
    return [PreemptionTarget(c.record.workload, c.record.cluster_queue, _REASONS[c.variant]) for c in chosen]


def simulate_preemption(
    preemptor: Workload,
    cq: ClusterQueue,
    flavor_resource: FlavorResource,
    quantity: int,
    admitted: Iterable[AdmittedWorkload],
    quotas: QuotaBook,
    fair_sharing: FairSharing = FAIR_SHARING_OFF,
) -> tuple[PreemptionPossibility, int]:
    """Kueue's PreemptionOracle.SimulatePreemption (preemption_oracle.go): whether preempting could
    make room for ``quantity`` of one (flavor, resource), and the borrowing level afterwards."""
    admitted = list(admitted)
    work = quotas.copy()
    targets = find_targets(preemptor, cq, {flavor_resource: quantity}, (flavor_resource,), admitted, work,
                           fair_sharing)
    if not targets:
        return PreemptionPossibility.NO_CANDIDATES, work.borrowing_level(cq.name, flavor_resource, quantity)
    gone = {t.workload.key for t in targets}
    records = [r for r in admitted if r.workload.key in gone]
    for record in records:
        work.remove_usage(record.cluster_queue, record.usage)
    borrowing = work.borrowing_level(cq.name, flavor_resource, quantity)
    if any(t.cluster_queue == cq.name for t in targets):
        return PreemptionPossibility.PREEMPT, borrowing
    return PreemptionPossibility.RECLAIM, borrowing


def _classical(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    work: QuotaBook,
    nodes_fit: Callable[[Sequence[AdmittedWorkload]], bool] | None = None,
) -> list[_Candidate]:
    """classicalPreemptions on ``work`` (left as it was): the passes, each a removal then a fill back."""
    candidates = _candidates(preemptor, cq, request, needs_preemption, admitted, work)
    if not candidates:
        return []
    # Evicted first, then Kueue's three lists in order, each by CandidatesOrdering.
    candidates.sort(key=lambda c: (not c.record.evicted, _GROUP[c.variant], *candidate_order(c.record, cq.name)[2:]))
    by_record = {id(c.record): c for c in candidates}
    for borrowing in _passes(cq, candidates, needs_preemption, work):
        removed: list[_Candidate] = []
        for candidate in candidates:
            if not _valid(candidate, cq, borrowing, needs_preemption, work):
                continue
            work.remove_usage(candidate.record.cluster_queue, candidate.record.usage)
            removed.append(candidate)
            if work.fits(cq.name, request, allow_borrowing=borrowing) and (
                    nodes_fit is None or nodes_fit([c.record for c in removed])):
                kept = fill_back(cq.name, request, [c.record for c in removed], work, borrowing, nodes_fit)
                restore(work, kept)
                return [by_record[id(r)] for r in kept]
        restore(work, (c.record for c in removed))
    return []


def _candidates(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    work: QuotaBook,
) -> list[_Candidate]:
    """collectSameQueueCandidates and collectCandidatesForHierarchicalReclaim."""
    policy = cq.preemption
    by_queue: dict[str, list[AdmittedWorkload]] = {}
    for record in admitted:
        if uses_any(record, needs_preemption):
            by_queue.setdefault(record.cluster_queue, []).append(record)
    result = []
    if policy.within_cluster_queue is not PreemptionPolicy.NEVER:
        result += [_Candidate(r, _Variant.WITHIN_CLUSTER_QUEUE) for r in by_queue.get(cq.name, ())
                   if satisfies_policy(policy.within_cluster_queue, preemptor, r.workload)]
    node = work.cq_node(cq.name)
    if node.parent is None or policy.reclaim_within_cohort is PreemptionPolicy.NEVER:
        return result
    # The queue's own nominal quota is the first subtree that may hold the request.
    advantage, remaining = work.fits_in_quota(node, request)
    previous: Node | None = None
    for subtree_root in node.path_to_root():
        for queue in _borrowing_queues(subtree_root, previous, node, needs_preemption, work):
            for record in by_queue.get(queue.name, ()):
                if satisfies_policy(policy.reclaim_within_cohort, preemptor, record.workload):
                    variant = _reclaim_variant(cq, preemptor, record.workload, advantage)
                    result.append(_Candidate(record, variant, subtree_root))
        fits, remaining = work.fits_in_quota(subtree_root, remaining)
        # Once a subtree holds the request, the preemptor has the advantage over everything found
        # from there up: it belongs to that subtree.
        advantage = advantage or fits
        previous = subtree_root
    return result


def _borrowing_queues(cohort: Node, skip: Node | None, preemptor: Node, frs: Collection[FlavorResource],
                      work: QuotaBook) -> list[Node]:
    """collectCandidatesInSubtree: the queues under ``cohort`` that borrow one of ``frs``, looking only
    into child Cohorts that borrow, and not into ``skip`` (seen at the level below)."""
    found = []
    for child in cohort.child_cohorts:
        if child is skip or work.within_nominal(child, frs):
            continue
        found += _borrowing_queues(child, skip, preemptor, frs, work)
    for child in cohort.child_cqs:
        if child is not preemptor and not work.within_nominal(child, frs):
            found.append(child)
    return found


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
    """candidateIsValid: own-queue candidates always; others only while their queue, and each Cohort
    between it and where it was found, still borrows, and not in a borrowing pass when they may only
    go if the preemptor does not borrow."""
    if candidate.record.cluster_queue == cq.name:
        return True
    if borrowing and candidate.variant is _Variant.RECLAIM_WITHOUT_BORROWING:
        return False
    node = work.cq_node(candidate.record.cluster_queue)
    if work.within_nominal(node, needs_preemption):
        return False
    for ancestor in node.path_to_root():
        if ancestor is candidate.lca:
            break
        if work.within_nominal(ancestor, needs_preemption):
            return False
    return True
