"""One scheduling cycle: decide what happens to the head of every ClusterQueue.

Mirrors Kueue's scheduler loop (pkg/scheduler/scheduler.go) on an in-memory snapshot:

1. take the head of each ClusterQueue that can admit (``QueueManager.heads``);
2. assign flavors to each head against usage at the start of the cycle;
3. order the entries: those that fit without borrowing first, then higher priority,
   then earlier queue-order timestamp, then uid;
4. walk them, updating a copy of the quota book as admissions are decided, so a later
   entry that no longer fits (a cohort neighbour took the quota) waits for the next cycle;
   entries that need preemption get targets (not shared between entries of one cycle,
   and their request is held back from later entries; without targets, and unless the
   queue may always reclaim from its cohort, what they wait for is held back too);
   entries that cannot fit are parked (BestEffortFIFO) or block their queue (StrictFIFO).

``decide_cycle`` is pure: it reads the manager and returns decisions. ``run_cycle`` also
applies them in memory. Fair sharing (dominant resource share ordering and preemption,
``fairSharing.weight``) is not implemented yet: entries are ordered as classical Kueue does.
"""

from __future__ import annotations

from scheduler.core.decisions import Admit, Decision, Park, Preempt, Wait
from scheduler.core.flavorassigning import FlavorAssignment, Mode, assign_flavors, can_preempt
from scheduler.core.kinds import ClusterQueue, FlavorResource, PreemptionPolicy, QueueingStrategy
from scheduler.core.preempting import find_targets
from scheduler.core.queues import QueueManager
from scheduler.core.quotas import QuotaBook
from scheduler.core.workloads import Workload, WorkloadKey


def decide_cycle(manager: QueueManager) -> list[Decision]:
    """Decisions for every schedulable head; reads ``manager`` and changes nothing."""
    quotas = manager.quotas.copy()
    heads = manager.heads()
    # Blocked StrictFIFO heads decide nothing new, but take their place in the walk to hold
    # back what they wait for, as Kueue's every-cycle retry of them does.
    held = manager.blocked_heads() if heads else []
    entries: list[tuple[ClusterQueue, Workload, FlavorAssignment, bool]] = [
        (cq, head, assign_flavors(head, cq, manager.flavors, quotas), blocked)
        for blocked, pairs in ((False, heads), (True, held)) for cq, head in pairs
    ]
    entries.sort(key=lambda e: (e[2].borrows, e[1].order_key))
    decisions: list[Decision] = []
    claimed_targets: set[WorkloadKey] = set()
    for cq, workload, assignment, blocked in entries:
        if blocked:
            if assignment.mode is Mode.PREEMPT and cq.preemption.reclaim_within_cohort is not PreemptionPolicy.ANY:
                quotas.add_usage(cq.name, _reservation(cq, assignment, quotas))
            continue
        if assignment.mode is Mode.FIT:
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
            admitted = manager.admitted_in(quotas.neighbours(cq.name))
            targets = find_targets(
                workload, cq, assignment.usage, assignment.needs_preemption, admitted, quotas
            ) if can_preempt(cq) else []
            if targets and any(t.workload.key in claimed_targets for t in targets):
                decisions.append(
                    Wait(workload, cq.name, "preemption targets claimed earlier in this cycle", blocks=False)
                )
                continue
            if targets:
                claimed_targets.update(t.workload.key for t in targets)
                # Hold the request back so no later entry takes the quota being freed.
                quotas.add_usage(cq.name, assignment.usage)
                assert assignment.admission is not None
                decisions.append(Preempt(workload, cq.name, tuple(targets), assignment.admission))
                continue
            if cq.preemption.reclaim_within_cohort is not PreemptionPolicy.ANY:
                # Kueue holds back what this head waits for when it cannot be sure to reclaim it
                # later, so lower-priority neighbours do not borrow it first (resourcesToReserve).
                quotas.add_usage(cq.name, _reservation(cq, assignment, quotas))
        decisions.append(_cannot_fit(cq, workload, assignment.message or "no preemption targets found"))
    return decisions


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
