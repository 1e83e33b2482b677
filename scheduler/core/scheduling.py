"""One scheduling cycle: decide what happens to the head of every ClusterQueue.

Mirrors Kueue's scheduler loop (pkg/scheduler/scheduler.go) on an in-memory snapshot:

1. take the head of each ClusterQueue that can admit (``QueueManager.heads``); park those
   from a namespace the queue's namespaceSelector does not select, and those of a queue whose
   cohort chain loops (Kueue: "ClusterQueue X is inactive");
2. assign flavors to each head against usage at the start of the cycle, resuming its last
   flavor search (``flavorassigning``), and find preemption targets where needed (``preempting``);
3. order the entries: by borrowing level (Kueue's Assignment.Borrowing, after the simulated
   preemptions), then higher priority, then earlier queue-order timestamp, then uid; with fair
   sharing on, one at a time by a tournament over each cohort tree (``fairordering``);
4. walk them, updating a copy of the quota book as admissions are decided. An entry that fits
   or has targets is skipped when one of its targets was claimed by an earlier entry of the
   cycle or when it would not fit once every target claimed so far (its own included) is gone;
   otherwise its request is held back from later entries and it is admitted or preempts.
   A preemptor waiting for its evictions stays in the walk (blocked) and claims them again,
   so no other head preempts more for the quota they free; after a cycle that started evictions
   the next cycle runs even when nothing else changed, as Kueue requeues a preemptor at once
   (RequeueReasonPendingPreemption), and the preemptor may choose more targets in it. Without
   targets, and unless the queue may always reclaim from its cohort, what an entry waits for is
   held back too.
   Entries that cannot fit stay heads while their flavor search has flavors left to try;
   otherwise they are parked (BestEffortFIFO) or block their queue (StrictFIFO).

``decide_cycle`` is pure: it reads the manager and returns decisions. ``run_cycle`` also
applies them in memory.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from scheduler.core import admissionchecks, fairordering, topologyassigning
from scheduler.core.decisions import (
    CLUSTER_QUEUE_INACTIVE,
    FAILED_CHECKS,
    NAMESPACE_MISMATCH,
    NAMESPACE_MISMATCH_MESSAGE,
    NO_LONGER_FITS,
    OVERLAPPING_TARGETS,
    Admit,
    Decision,
    Park,
    Preempt,
    Wait,
)
from scheduler.core.flavorassigning import FlavorAssignment, Mode, assign_flavors
from scheduler.core.kinds import ClusterQueue, FairSharing, FlavorResource, PreemptionPolicy, QueueingStrategy
from scheduler.core.preempting import AdmittedWorkload, PreemptionTarget, find_targets
from scheduler.core.queues import QueueManager
from scheduler.core.quotas import QuotaBook, Usage
from scheduler.core.topologystate import CycleUsage
from scheduler.core.workloads import PODS_RESOURCE, Workload, WorkloadKey


def decide_cycle(manager: QueueManager) -> list[Decision]:
    """Decisions for every schedulable head; reads ``manager`` and changes nothing."""
    quotas = manager.cache.quotas.copy()
    # A queue whose TAS flavor's nodes are still being listed decides nothing yet (its heads stay).
    heads = [(cq, head) for cq, head in manager.heads() if not manager.cache.topologies.awaiting_nodes(cq)]
    # Blocked heads (StrictFIFO heads that do not fit, preemptors waiting for their evictions)
    # take their place in the walk as Kueue's every-cycle retry of them does: they hold back
    # what they wait for and claim the targets they are waiting for.
    held = manager.blocked_heads() if heads or manager.preemptor_retry else []
    # Kueue's nominate turns a head away from a namespace its ClusterQueue does not select before
    # assigning flavors: it is parked in either strategy and takes no part in the walk.
    refused: list[Decision] = [
        _refusal(manager, quotas, cq, head) for cq, head in (*heads, *held) if _refused(manager, quotas, cq, head)
    ]
    if refused:
        heads = [(cq, head) for cq, head in heads if not _refused(manager, quotas, cq, head)]
        held = [(cq, head) for cq, head in held if not _refused(manager, quotas, cq, head)]
    # Kueue nominates every head against the snapshot taken at the start of the cycle (flavors
    # and preemption targets), then walks them; earlier admissions never enlarge a target set.
    entries = [
        _nominate(manager, cq, head, blocked, quotas)
        for blocked, pairs in ((False, heads), (True, held)) for cq, head in pairs
    ]
    decisions = refused
    # Kueue's preemptedWorkloads: every target claimed in this cycle, with the quota it holds.
    claimed: dict[WorkloadKey, AdmittedWorkload] = {}
    placed = CycleUsage(manager.cache.topologies)
    for entry in _order(entries, quotas, manager.fair_sharing):
        decision = _walk(manager, entry, quotas, claimed, placed)
        if decision is not None:
            decisions.append(decision)
    return decisions


def _walk(manager: QueueManager, entry: _Entry, quotas: QuotaBook, claimed: dict[WorkloadKey, AdmittedWorkload],
          placed: CycleUsage) -> Decision | None:
    """One entry's turn in the walk (Kueue's processEntry)."""
    cq, assignment = entry.cq, entry.assignment
    if assignment.mode is Mode.FIT or (assignment.mode is Mode.PREEMPT and entry.targets):
        return _admit_or_preempt(manager, entry, quotas, claimed, placed)
    if assignment.mode is Mode.PREEMPT and cq.preemption.reclaim_within_cohort is not PreemptionPolicy.ANY:
        # Kueue holds back what this head waits for when it cannot be sure to reclaim it
        # later (CanAlwaysReclaim), so lower-priority neighbours do not borrow it first.
        quotas.add_usage(cq.name, _reservation(cq, assignment, quotas))
        if assignment.admission is not None:
            placed.assume(assignment.admission)  # and the nodes it would take on empty ones
    return _cannot_fit(entry)


@dataclass(slots=True, frozen=True)
class _Entry:
    cq: ClusterQueue
    workload: Workload
    assignment: FlavorAssignment
    blocked: bool
    targets: tuple[PreemptionTarget, ...] = ()
    placed_again: bool = False
    """Its pods were placed again in the walk (at most once a cycle, as Kueue's updateAssignmentIfNeeded)."""


def _refused(manager: QueueManager, quotas: QuotaBook, cq: ClusterQueue, head: Workload) -> bool:
    return (_failed_checks(head) is not None or quotas.in_cycle(cq.name)
            or not manager.namespaces.selects(cq, head.namespace))


def _failed_checks(head: Workload) -> tuple[str, str] | None:
    return admissionchecks.failed_checks_refusal(head.admission_checks) if head.admission_checks else None


def _refusal(manager: QueueManager, quotas: QuotaBook, cq: ClusterQueue, head: Workload) -> Park:
    """Kueue's nominate: a head with a failed admission check first; a queue whose cohort chain loops is left
    out of the snapshot, so its heads are told it is inactive (pkg/scheduler/scheduler.go); then the
    namespace check."""
    failed = _failed_checks(head)
    if failed is not None:
        return Park(head, cq.name, failed[1], FAILED_CHECKS)
    if quotas.in_cycle(cq.name):
        return Park(head, cq.name, f"ClusterQueue {cq.name} is inactive", CLUSTER_QUEUE_INACTIVE)
    return Park(head, cq.name, NAMESPACE_MISMATCH_MESSAGE, NAMESPACE_MISMATCH)


def _nominate(manager: QueueManager, cq: ClusterQueue, head: Workload, blocked: bool, quotas: QuotaBook) -> _Entry:
    """Flavors (resuming the head's last search) and, when preemption is needed, targets, against
    ``quotas`` as they are now (Kueue's nominate and getInitialAssignments)."""
    cache = manager.cache
    last = manager.pending_lists.last_assignment(cq.name, head.key, manager.cycle, manager.preserve_scan_progress)
    assignment = assign_flavors(head, cq, cache.flavors, quotas, cache.admitted_in(quotas.neighbours(cq.name)),
                                last, manager.fair_sharing, cache.topologies)
    assignment = topologyassigning.place_workload(head, cq, cache.flavors, cache.topologies, assignment)
    return _with_targets(manager, cq, head, blocked, quotas, assignment)


def _with_targets(manager: QueueManager, cq: ClusterQueue, head: Workload, blocked: bool, quotas: QuotaBook,
                  assignment: FlavorAssignment) -> _Entry:
    """The entry of a placed head; one that needs preemption with its targets (Kueue's getAssignments)."""
    if assignment.mode is not Mode.PREEMPT:
        return _Entry(cq, head, assignment, blocked)
    cache = manager.cache
    nodes_fit = topologyassigning.fits_without(head, cq, cache.topologies, assignment)
    # Kueue's preemption reads the Workload's total requests: with `pods` in v0.17 (its flavor assignment
    # wrote them there), without in v0.19 (it writes a copy).
    request = assignment.usage
    if manager.preemption_ignores_pods:
        request = {fr: quantity for fr, quantity in request.items() if fr[1] != PODS_RESOURCE}
    targets = tuple(find_targets(head, cq, request, assignment.needs_preemption,
                                 cache.admitted_in(quotas.neighbours(cq.name)), quotas, manager.fair_sharing, nodes_fit))
    if nodes_fit is not None:
        gone = [r for t in targets if (r := cache.admitted(t.workload.key)) is not None]
        assignment = topologyassigning.placed_for_preemption(head, cq, cache.topologies, assignment, gone)
    return _Entry(cq, head, assignment, blocked, targets)


def _order(entries: list[_Entry], quotas: QuotaBook, fair_sharing: FairSharing) -> Iterator[_Entry]:
    """The entries in the order the walk takes them; the walk changes ``quotas`` between two."""
    if fair_sharing.enabled:
        yield from fairordering.fair_sharing_order(
            entries, quotas, lambda e: (e.cq.name, e.assignment.usage, e.workload.order_key))
        return
    # makeClassicalIterator: borrowing level, then priority, then queue-order timestamp. Kueue's sort
    # has no further tie-break (and is not stable); ours ends with the uid to stay deterministic.
    yield from sorted(entries, key=lambda e: (e.assignment.borrowing, e.workload.order_key))


def _admit_or_preempt(
    manager: QueueManager, entry: _Entry, quotas: QuotaBook, claimed: dict[WorkloadKey, AdmittedWorkload],
    placed: CycleUsage,
) -> Decision | None:
    """Kueue's walk for a head that fits or has targets: skipped when another entry of the cycle
    claimed one of its targets, or when it no longer fits once every claimed target (its own
    included) is gone; else it claims its targets, holds its request back, and is admitted or
    preempts. A head already waiting for its evictions (blocked) is walked too, as Kueue retries it
    every cycle: it decides nothing unless it fits now or needs a target not yet evicting."""
    cq, workload, assignment, targets, blocked = entry.cq, entry.workload, entry.assignment, entry.targets, entry.blocked
    chosen = [r for t in targets if (r := manager.cache.admitted(t.workload.key)) is not None]
    # Kueue's markSkipped: the next search starts over, or with FlavorFungibilityPreserveScanProgress
    # goes on after this one (the skip was for contention, not for the flavor).
    kept = assignment.last_assignment if manager.preserve_scan_progress else None
    if any(t.workload.key in claimed for t in targets):
        return None if blocked else Wait(workload, cq.name, OVERLAPPING_TARGETS, blocks=False, last_assignment=kept)
    gone = [*claimed.values(), *chosen]
    # Kueue's fits also reads the nodes, less what the cycle's preempted workloads hold.
    if not _fits_once_gone(quotas, cq.name, assignment.usage, gone):
        return None if blocked else Wait(workload, cq.name, NO_LONGER_FITS, blocks=False, last_assignment=kept)
    if assignment.admission and not placed.fits(assignment.admission, (r.workload.admission for r in gone
                                                                      if r.workload.admission)):
        if manager.tas_recompute_in_cycle and assignment.mode is Mode.FIT and not entry.placed_again:
            return _walk(manager, _placed_again(manager, entry, quotas, placed), quotas, claimed, placed)
        return None if blocked else Wait(workload, cq.name, NO_LONGER_FITS, blocks=False, last_assignment=kept)
    claimed.update((r.workload.key, r) for r in chosen)
    # Hold the request back so no later entry takes the quota (and the nodes) being freed.
    quotas.add_usage(cq.name, assignment.usage)
    assert assignment.admission is not None
    placed.assume(assignment.admission)
    if assignment.mode is Mode.FIT:
        return Admit(workload, cq.name, assignment.admission, assignment.borrows)
    ongoing = frozenset(r.workload.key for r in chosen if r.evicted)
    if blocked and len(ongoing) == len(chosen):
        return None  # Kueue's IssuePreemptions skips targets already evicted
    return Preempt(workload, cq.name, targets, assignment.admission, assignment.message, ongoing)


def _placed_again(manager: QueueManager, entry: _Entry, quotas: QuotaBook, placed: CycleUsage) -> _Entry:
    """Kueue's TASRecomputeAssignmentWithinSchedulingCycle (beta, on from v0.19): a head whose quota still
    fits but whose nodes an earlier entry of the cycle took is placed again on the nodes as the cycle left
    them; it may now fit elsewhere, need preemption (its targets found now) or not fit at all. Kueue also
    recomputes a preemptor whose nodes were taken (pkg/scheduler/scheduler.go updateAssignmentIfNeeded);
    here only a head nominated to fit is, a preemptor is skipped as before."""
    with placed.applied():
        cache = manager.cache
        assignment = topologyassigning.placed_again(entry.workload, entry.cq, cache.flavors, cache.topologies,
                                                    entry.assignment)
        again = _with_targets(manager, entry.cq, entry.workload, entry.blocked, quotas, assignment)
    return dataclasses.replace(again, placed_again=True)


def _fits_once_gone(quotas: QuotaBook, cq_name: str, request: Usage, gone: list[AdmittedWorkload]) -> bool:
    """Whether ``request`` fits (borrowing allowed) after the ``gone`` workloads leave (Kueue's fits)."""
    with _without(quotas, gone):
        return quotas.fits(cq_name, request, allow_borrowing=True)


@contextmanager
def _without(quotas: QuotaBook, gone: list[AdmittedWorkload]) -> Iterator[None]:
    """``quotas`` as if the ``gone`` workloads had left, restored on exit."""
    for record in gone:
        quotas.remove_usage(record.cluster_queue, record.usage)
    try:
        yield
    finally:
        for record in gone:
            quotas.add_usage(record.cluster_queue, record.usage)


def _reservation(cq: ClusterQueue, assignment: FlavorAssignment, quotas: QuotaBook) -> dict[FlavorResource, int]:
    """Kueue's quotaResourcesToReserve: up to the borrowing limit when borrowing, else up to nominal."""
    reserved = {}
    for fr, request in assignment.usage.items():
        quota, used = cq.quota(fr), quotas.used(cq.name, fr)
        nominal = 0 if quota is None else quota.nominal
        if assignment.borrowing == 0:
            reserved[fr] = max(0, min(request, nominal - used))
        elif quota is None or quota.borrowing_limit is None:
            reserved[fr] = request
        else:
            reserved[fr] = min(request, nominal + quota.borrowing_limit - used)
    return reserved


def run_cycle(manager: QueueManager, now: float) -> list[Decision]:
    """Decide a cycle and record it in ``manager``; ``now`` is POSIX seconds (injected clock)."""
    manager.retry_parked(now)
    manager.cycle += 1
    decisions = decide_cycle(manager)
    manager.preemptor_retry = False  # until a preemption of this cycle asks for it again
    manager.apply_decisions(decisions, now)
    return decisions


def _cannot_fit(entry: _Entry) -> Decision | None:
    """A head that does not fit, or would need preemption but has no targets. Kueue requeues it
    (requeueIfNotPresent): into the active queue while its flavor search has flavors left to try
    (the next cycle goes on from there) or under StrictFIFO, else among the inadmissible (parked).
    A blocked StrictFIFO head stays as it is; a blocked BestEffortFIFO head is a preemptor whose
    preemption no longer helps, and Kueue parks it too."""
    cq, workload, assignment = entry.cq, entry.workload, entry.assignment
    message = assignment.message
    last = assignment.last_assignment
    if last.pending_flavors():
        return Wait(workload, cq.name, message, blocks=False, last_assignment=last)
    if cq.queueing_strategy is QueueingStrategy.STRICT_FIFO:
        return None if entry.blocked else Wait(workload, cq.name, message, blocks=True, last_assignment=last)
    return Park(workload, cq.name, message, last_assignment=last)
