"""One scheduling cycle: decide what happens to the head of every ClusterQueue.

Mirrors Kueue's scheduler loop (pkg/scheduler/scheduler.go) on an in-memory snapshot:

1. take the head of each ClusterQueue that can admit (``QueueManager.heads``); park those
   from a namespace the queue's namespaceSelector does not select;
2. assign flavors to each head against usage at the start of the cycle;
3. order the entries: those that fit without borrowing first, then higher priority,
   then earlier queue-order timestamp, then uid;
4. walk them, updating a copy of the quota book as admissions are decided, so a later
   entry that no longer fits (a cohort neighbour took the quota) waits for the next cycle;
   entries that need preemption get targets; as in Kueue, an entry is skipped when one of
   them was claimed by an earlier entry of the cycle or when it would not fit even once all
   targets claimed so far are gone; otherwise its request is held back from later entries.
   A preemptor waiting for its evictions stays in the walk (blocked) and claims them again,
   so no other head preempts more for the quota they free. Without targets, and unless the
   queue may always reclaim from its cohort, what an entry waits for is held back too;
   entries that cannot fit are parked (BestEffortFIFO) or block their queue (StrictFIFO).

``decide_cycle`` is pure: it reads the manager and returns decisions. ``run_cycle`` also
applies them in memory. Fair sharing (dominant resource share ordering and preemption,
``fairSharing.weight``) is not implemented yet: entries are ordered as classical Kueue does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from scheduler.core.decisions import (
    NAMESPACE_MISMATCH,
    NAMESPACE_MISMATCH_MESSAGE,
    Admit,
    Decision,
    Park,
    Preempt,
    Wait,
)
from scheduler.core.flavorassigning import FlavorAssignment, Mode, assign_flavors, can_preempt
from scheduler.core.kinds import ClusterQueue, FlavorResource, PreemptionPolicy, QueueingStrategy
from scheduler.core.preempting import AdmittedWorkload, PreemptionTarget, find_targets
from scheduler.core.queues import QueueManager
from scheduler.core.quotas import QuotaBook, Usage
from scheduler.core.workloads import Workload, WorkloadKey


def decide_cycle(manager: QueueManager) -> list[Decision]:
    """Decisions for every schedulable head; reads ``manager`` and changes nothing."""
    quotas = manager.quotas.copy()
    heads = manager.heads()
    # Blocked heads (StrictFIFO heads that do not fit, preemptors waiting for their evictions)
    # take their place in the walk as Kueue's every-cycle retry of them does: they hold back
    # what they wait for and claim the targets they are waiting for.
    held = manager.blocked_heads() if heads else []
    # Kueue's nominate turns a head away from a namespace its ClusterQueue does not select before
    # assigning flavors: it is parked in either strategy and takes no part in the walk.
    refused: list[Decision] = [
        Park(head, cq.name, NAMESPACE_MISMATCH_MESSAGE, NAMESPACE_MISMATCH)
        for cq, head in (*heads, *held) if not manager.namespace_selected(cq, head.namespace)
    ]
    if refused:
        heads = [(cq, head) for cq, head in heads if manager.namespace_selected(cq, head.namespace)]
        held = [(cq, head) for cq, head in held if manager.namespace_selected(cq, head.namespace)]
    # Kueue nominates every head against the snapshot taken at the start of the cycle (flavors
    # and preemption targets), then walks them; earlier admissions never enlarge a target set.
    entries = [
        _nominate(manager, cq, head, blocked, quotas)
        for blocked, pairs in ((False, heads), (True, held)) for cq, head in pairs
    ]
    entries.sort(key=lambda e: (e.assignment.borrows, e.workload.order_key))
    decisions = refused
    # Kueue's preemptedWorkloads: every target claimed in this cycle, with the quota it holds.
    claimed: dict[WorkloadKey, AdmittedWorkload] = {}
    for entry in entries:
        cq, workload, assignment, blocked = entry.cq, entry.workload, entry.assignment, entry.blocked
        if assignment.mode is Mode.FIT:
            if blocked:
                continue
            if quotas.fits(cq.name, assignment.usage, allow_borrowing=True):
                quotas.add_usage(cq.name, assignment.usage)
                assert assignment.admission is not None
                decisions.append(Admit(workload, cq.name, assignment.admission, assignment.borrows))
            else:
                decisions.append(
                    Wait(workload, cq.name, "quota taken by an earlier admission in this cycle", blocks=False)
                )
            continue
        if assignment.mode is Mode.PREEMPT:
            if entry.targets:
                decision = _preempt_or_skip(manager, entry, quotas, claimed)
                if decision is not None:
                    decisions.append(decision)
                continue
            if cq.preemption.reclaim_within_cohort is not PreemptionPolicy.ANY:
                # Kueue holds back what this head waits for when it cannot be sure to reclaim it
                # later, so lower-priority neighbours do not borrow it first (resourcesToReserve).
                quotas.add_usage(cq.name, _reservation(cq, assignment, quotas))
        if blocked:
            continue
        decisions.append(_cannot_fit(cq, workload, assignment.message or "no preemption targets found"))
    return decisions


@dataclass(slots=True, frozen=True)
class _Entry:
    cq: ClusterQueue
    workload: Workload
    assignment: FlavorAssignment
    blocked: bool
    targets: tuple[PreemptionTarget, ...] = ()


def _nominate(manager: QueueManager, cq: ClusterQueue, head: Workload, blocked: bool, quotas: QuotaBook) -> _Entry:
    """Flavors and, when preemption is needed, targets, against ``quotas`` as they are now."""
    assignment = assign_flavors(head, cq, manager.flavors, quotas)
    if assignment.mode is not Mode.PREEMPT:
        return _Entry(cq, head, assignment, blocked)
    targets = tuple(find_targets(
        head, cq, assignment.usage, assignment.needs_preemption,
        manager.admitted_in(quotas.neighbours(cq.name)), quotas,
    )) if can_preempt(cq) else ()
    # Kueue's assignment of a preempting head says whether it still borrows once its targets
    # are gone (borrowAfterPreemptions); that places it among the entries that borrow.
    gone = [record for t in targets if (record := manager.admitted(t.workload.key)) is not None]
    borrows = _borrows_once_gone(quotas, cq.name, assignment.usage, gone)
    return _Entry(cq, head, dataclasses.replace(assignment, borrows=borrows), blocked, targets)


def _borrows_once_gone(quotas: QuotaBook, cq_name: str, request: Usage, gone: list[AdmittedWorkload]) -> bool:
    with _without(quotas, gone):
        return any(quotas.used(cq_name, fr) + value > quotas.nominal(cq_name, fr) for fr, value in request.items())


def _preempt_or_skip(
    manager: QueueManager, entry: _Entry, quotas: QuotaBook, claimed: dict[WorkloadKey, AdmittedWorkload]
) -> Decision | None:
    """Kueue's walk for a head with targets: skipped when another entry of the cycle claimed one
    of them or when it no longer fits once every claimed target is gone; else it claims them and
    holds its request back. A head already waiting for its evictions (blocked) is walked too, as
    Kueue retries it every cycle: it decides nothing unless it needs a target not yet evicting."""
    cq, workload, assignment, targets, blocked = entry.cq, entry.workload, entry.assignment, entry.targets, entry.blocked
    records = [manager.admitted(t.workload.key) for t in targets]
    chosen = [r for r in records if r is not None]
    if any(t.workload.key in claimed for t in targets):
        reason = "preemption targets claimed earlier in this cycle"
        return None if blocked else Wait(workload, cq.name, reason, blocks=False)
    if not _fits_once_gone(quotas, cq.name, assignment.usage, [*claimed.values(), *chosen]):
        reason = "no longer fits after processing another workload"
        return None if blocked else Wait(workload, cq.name, reason, blocks=False)
    claimed.update((r.workload.key, r) for r in chosen)
    # Hold the request back so no later entry takes the quota being freed.
    quotas.add_usage(cq.name, assignment.usage)
    if blocked and all(r.evicting for r in chosen):
        return None  # Kueue's IssuePreemptions skips targets already evicted
    assert assignment.admission is not None
    return Preempt(workload, cq.name, targets, assignment.admission)


def _fits_once_gone(quotas: QuotaBook, cq_name: str, request: Usage, gone: list[AdmittedWorkload]) -> bool:
    """Whether ``request`` fits (borrowing allowed) after the ``gone`` workloads leave."""
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
        if not assignment.borrows:
            reserved[fr] = max(0, min(request, nominal - used))
        elif quota is None or quota.borrowing_limit is None:
            reserved[fr] = request
        else:
            reserved[fr] = min(request, nominal + quota.borrowing_limit - used)
    return reserved


def run_cycle(manager: QueueManager, now: float) -> list[Decision]:
    """Decide a cycle and record it in ``manager``; ``now`` is POSIX seconds (injected clock)."""
    decisions = decide_cycle(manager)
    manager.apply_decisions(decisions, now)
    return decisions


def _cannot_fit(cq: ClusterQueue, workload: Workload, message: str) -> Decision:
    if cq.queueing_strategy is QueueingStrategy.STRICT_FIFO:
        return Wait(workload, cq.name, message, blocks=True)
    return Park(workload, cq.name, message)
