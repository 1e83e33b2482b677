"""Fair-sharing preemption: which admitted workloads to evict so a pending one fits, when Kueue's
Configuration turns fair sharing on.

Ported from pkg/scheduler/preemption/preemption.go (fairPreemptions, runFirstFsStrategy,
runSecondFsStrategy, findCandidates) and pkg/scheduler/preemption/fairsharing/ (the target queue
ordering, least common ancestors, strategies), Kueue v0.17.0 with its default feature gates
(FairSharingPreemptWithinNominal on).

Candidates: the preemptor's own queue's workloads that ``withinClusterQueue`` allows, and, with
``reclaimWithinCohort`` other than Never, the workloads it allows in every other queue of the cohort
tree that borrows one of the (flavor, resource)s needing preemption; ordered as classical candidates
(evicted first, other queues before the own one, lower priority, newest admission, uid).

With the preemptor's request added to its queue, target queues are visited from the root down: at
each Cohort the child with the largest share (among borrowing queues, borrowing Cohorts, and the
Cohorts on the preemptor's own path), recursively, until a queue. A workload of the preemptor's own
queue is taken outright (InClusterQueue); so is one of another queue while the preemptor stays within
its nominal quota in the contested resources (InCohortReclamation). Otherwise the shares are compared
one level below the queues' least common ancestor: the first strategy takes the queue's first
workload that satisfies it (InCohortFairSharing) and moves on; workloads that do not are retried by
the second strategy, which only asks whether the preemptor's share stays below the target's current
one. Once the request fits, targets not needed are added back (as classical preemption does).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping

from scheduler.core import fairsharing
from scheduler.core.kinds import ClusterQueue, FairSharingStrategy, FlavorResource, PreemptionPolicy
from scheduler.core.quotas import Node, QuotaBook
from scheduler.core.victims import (
    AdmittedWorkload,
    PreemptionReason,
    PreemptionTarget,
    candidate_order,
    fill_back,
    restore,
    satisfies_policy,
    uses_any,
)
from scheduler.core.workloads import Workload

_Targets = list[tuple[AdmittedWorkload, PreemptionReason]]


def find_targets(
    preemptor: Workload,
    cq: ClusterQueue,
    request: Mapping[FlavorResource, int],
    needs_preemption: Collection[FlavorResource],
    admitted: Iterable[AdmittedWorkload],
    work: QuotaBook,
    strategies: tuple[FairSharingStrategy, ...],
) -> list[PreemptionTarget]:
    """fairPreemptions on ``work`` (a copy the caller gives up): the targets, or none when the
    strategies cannot make room."""
    candidates = _candidates(preemptor, cq, needs_preemption, admitted, work)
    if not candidates:
        return []
    candidates.sort(key=lambda r: candidate_order(r, cq.name))
    search = _Search(cq, request, needs_preemption, work)
    work.add_usage(cq.name, request)
    fits, targets, retry = search.first(candidates, strategies[0])
    if not fits and len(strategies) > 1:
        # Kueue's second stage is LessThanInitialShare whatever the second strategy is named.
        fits = search.second(retry, targets)
    work.remove_usage(cq.name, request)
    if not fits:
        restore(work, (record for record, _ in targets))
        return []
    reasons = {id(record): reason for record, reason in targets}
    kept = fill_back(cq.name, request, [record for record, _ in targets], work, borrowing=True)
    restore(work, kept)
    return [PreemptionTarget(r.workload, r.cluster_queue, reasons[id(r)]) for r in kept]


def _candidates(preemptor: Workload, cq: ClusterQueue, needs_preemption: Collection[FlavorResource],
                admitted: Iterable[AdmittedWorkload], work: QuotaBook) -> list[AdmittedWorkload]:
    """findCandidates: the own queue's, and those of every borrowing queue of the tree."""
    policy = cq.preemption
    node = work.cq_node(cq.name)
    borrowing: set[str] = set()
    if node.parent is not None and policy.reclaim_within_cohort is not PreemptionPolicy.NEVER:
        # cqIsBorrowing: above nominal in one of the contested (flavor, resource)s.
        borrowing = {q.name for q in node.root().subtree_queues()
                     if q is not node and any(work.is_borrowing(q.name, fr) for fr in needs_preemption)}
    found = []
    for record in admitted:
        if not uses_any(record, needs_preemption):
            continue
        if record.cluster_queue == cq.name:
            if policy.within_cluster_queue is not PreemptionPolicy.NEVER and satisfies_policy(
                    policy.within_cluster_queue, preemptor, record.workload):
                found.append(record)
        elif record.cluster_queue in borrowing and satisfies_policy(
                policy.reclaim_within_cohort, preemptor, record.workload):
            found.append(record)
    return found


class _Search:
    """The state of one fair preemption: the preemptor's queue, its request, the book being changed."""

    def __init__(self, cq: ClusterQueue, request: Mapping[FlavorResource, int],
                 needs_preemption: Collection[FlavorResource], work: QuotaBook) -> None:
        self.cq, self.request, self.needs_preemption, self.work = cq, request, needs_preemption, work
        self.node = work.cq_node(cq.name)
        self.ancestors = {id(a) for a in self.node.path_to_root()}

    def first(self, candidates: list[AdmittedWorkload], strategy: FairSharingStrategy) \
            -> tuple[bool, _Targets, list[AdmittedWorkload]]:
        """runFirstFsStrategy: the targets taken, whether the request fits, and what to retry."""
        work, targets, retry = self.work, [], []
        # Evaluated with the request added (FairSharingPreemptWithinNominal).
        within_nominal = not any(work.is_borrowing(self.cq.name, fr) for fr in self.needs_preemption)
        ordering = _Ordering(self, candidates)
        for target in ordering:
            if target is self.node or within_nominal:
                record = ordering.pop(target)
                reason = (PreemptionReason.IN_CLUSTER_QUEUE if target is self.node
                          else PreemptionReason.IN_COHORT_RECLAMATION)
                if self._take(record, reason, targets):
                    return True, targets, retry
                continue
            preemptor_new, target_old = self._shares(target)
            while ordering.has_workload(target):
                record = ordering.pop(target)
                target_new = self._share_without(target, record)
                if _satisfies(strategy, preemptor_new, target_old, target_new):
                    if self._take(record, PreemptionReason.IN_COHORT_FAIR_SHARING, targets):
                        return True, targets, retry
                    break
                retry.append(record)
        return False, targets, retry

    def second(self, retry: list[AdmittedWorkload], targets: _Targets) -> bool:
        """runSecondFsStrategy: one workload per queue whose current share is above the preemptor's."""
        ordering = _Ordering(self, retry)
        for target in ordering:
            preemptor_new, target_old = self._shares(target)
            if fairsharing.compare(preemptor_new, target_old) < 0:
                record = ordering.pop(target)
                if self._take(record, PreemptionReason.IN_COHORT_FAIR_SHARING, targets):
                    return True
            ordering.drop(target)
        return False

    def _take(self, record: AdmittedWorkload, reason: PreemptionReason, targets: _Targets) -> bool:
        """Remove ``record`` and tell whether the request fits now (workloadFitsForFairSharing)."""
        work = self.work
        work.remove_usage(record.cluster_queue, record.usage)
        targets.append((record, reason))
        work.remove_usage(self.cq.name, self.request)
        try:
            return work.fits(self.cq.name, self.request, allow_borrowing=True)
        finally:
            work.add_usage(self.cq.name, self.request)

    def _shares(self, target: Node) -> tuple[fairsharing.DRS, fairsharing.DRS]:
        """ComputeShares: the preemptor's and the target's shares, each at the child of their least
        common ancestor on its own path."""
        mine, theirs = self._almost_lcas(target)
        return (fairsharing.dominant_resource_share(self.work, mine),
                fairsharing.dominant_resource_share(self.work, theirs))

    def _share_without(self, target: Node, record: AdmittedWorkload) -> fairsharing.DRS:
        """ComputeTargetShareAfterRemoval."""
        work = self.work
        work.remove_usage(record.cluster_queue, record.usage)
        try:
            return fairsharing.dominant_resource_share(work, self._almost_lcas(target)[1])
        finally:
            work.add_usage(record.cluster_queue, record.usage)

    def _almost_lcas(self, target: Node) -> tuple[Node, Node]:
        """getAlmostLCAs (fairsharing/least_common_ancestor.go)."""
        lca = next(a for a in target.path_to_root() if id(a) in self.ancestors)
        return _below(self.node, lca), _below(target, lca)

    def in_preemptor_path(self, cohort: Node) -> bool:
        return id(cohort) in self.ancestors


def _below(cq: Node, lca: Node) -> Node:
    """The node on ``cq``'s path to the root just below ``lca`` (``cq`` itself when lca is its parent)."""
    node = cq
    for ancestor in cq.path_to_root():
        if ancestor is lca:
            return node
        node = ancestor
    raise AssertionError(f"{lca} is not above {cq}")


def _satisfies(strategy: FairSharingStrategy, preemptor_new: fairsharing.DRS, target_old: fairsharing.DRS,
               target_new: fairsharing.DRS) -> bool:
    """fairsharing/strategy.go."""
    if strategy is FairSharingStrategy.LESS_THAN_OR_EQUAL_TO_FINAL_SHARE:
        return fairsharing.compare(preemptor_new, target_new) <= 0
    return fairsharing.compare(preemptor_new, target_old) < 0


class _Ordering:
    """TargetClusterQueueOrdering: queues to take from, the one with the largest share first, found
    from the root down; a queue without candidates left, or that stopped borrowing, is pruned."""

    def __init__(self, search: _Search, candidates: list[AdmittedWorkload]) -> None:
        self.search = search
        self.by_queue: dict[str, list[AdmittedWorkload]] = {}
        for record in candidates:
            self.by_queue.setdefault(record.cluster_queue, []).append(record)
        self.pruned_queues: set[str] = set()
        self.pruned_cohorts: set[str] = set()

    def __iter__(self) -> Iterator[Node]:
        node = self.search.node
        if node.parent is None:
            # Kueue goes on to the parent's root here and would fail: a queue without a cohort has
            # only its own candidates, and stopping is what is left to do.
            while self.has_workload(node):
                yield node
            return
        root = node.root()
        while root.name not in self.pruned_cohorts:
            target = self._next(root)
            if target is not None:
                yield target

    def has_workload(self, node: Node) -> bool:
        return bool(self.by_queue.get(node.name))

    def pop(self, node: Node) -> AdmittedWorkload:
        return self.by_queue[node.name].pop(0)

    def drop(self, node: Node) -> None:
        self.pruned_queues.add(node.name)

    def _next(self, cohort: Node) -> Node | None:
        """nextTarget (fairsharing/ordering.go)."""
        work, search = self.search.work, self.search
        best_cq: Node | None = None
        best_cq_drs = fairsharing.NEGATIVE
        for cq in cohort.child_cqs:
            if cq.name in self.pruned_queues:
                continue
            drs = fairsharing.dominant_resource_share(work, cq)
            if (not drs.borrowing and cq is not search.node) or not self.has_workload(cq):
                self.pruned_queues.add(cq.name)
                continue
            order = fairsharing.compare(drs, best_cq_drs)
            if order == 0 and best_cq is not None:
                mine, theirs = self.by_queue[cq.name][0], self.by_queue[best_cq.name][0]
                # Kueue compares these without admission fair sharing, evicted first etc.
                if candidate_order(mine, search.cq.name) < candidate_order(theirs, search.cq.name):
                    best_cq = cq
            elif order > 0:
                best_cq, best_cq_drs = cq, drs
        best_cohort: Node | None = None
        best_cohort_drs = fairsharing.NEGATIVE
        for child in cohort.child_cohorts:
            if child.name in self.pruned_cohorts:
                continue
            drs = fairsharing.dominant_resource_share(work, child)
            if not drs.borrowing and not search.in_preemptor_path(child):
                self.pruned_cohorts.add(child.name)
            elif fairsharing.compare(drs, best_cohort_drs) >= 0:
                best_cohort, best_cohort_drs = child, drs
        if best_cohort is None and best_cq is None:
            self.pruned_cohorts.add(cohort.name)
            return None
        if best_cohort is not None and fairsharing.compare(best_cohort_drs, best_cq_drs) >= 0:
            return self._next(best_cohort)
        return best_cq
