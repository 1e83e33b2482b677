"""One scheduling cycle: decide what happens to the head of every ClusterQueue.

Mirrors Kueue's scheduler loop (pkg/scheduler/scheduler.go) on an in-memory snapshot:

1. take the head of each ClusterQueue that can admit (``QueueManager.heads``);
2. assign flavors to each head against usage at the start of the cycle;
3. order the entries: those that fit without borrowing first, then higher priority,
   then earlier queue-order timestamp, then uid;
4. walk them, updating a copy of the quota book as admissions are decided, so a later
   entry that no longer fits (a cohort neighbour took the quota) waits for the next cycle;
   entries that need preemption get targets (not shared between entries of one cycle,
   and their request is held back from later entries); entries that cannot fit are
   parked (BestEffortFIFO) or block their queue (StrictFIFO).

``decide_cycle`` is pure: it reads the manager and returns decisions. ``run_cycle`` also
applies them in memory. Fair sharing (dominant resource share ordering and preemption,
``fairSharing.weight``) is not implemented yet: entries are ordered as classical Kueue does.
"""

from __future__ import annotations

from scheduler.core.decisions import Admit, Decision, Park, Preempt, Wait
from scheduler.core.flavorassigning import FlavorAssignment, Mode, assign_flavors
from scheduler.core.kinds import ClusterQueue, QueueingStrategy
from scheduler.core.preempting import find_targets
from scheduler.core.queues import QueueManager
from scheduler.core.workloads import Workload, WorkloadKey


def decide_cycle(manager: QueueManager) -> list[Decision]:
    """Decisions for every schedulable head; reads ``manager`` and changes nothing."""
    quotas = manager.quotas.copy()
    entries: list[tuple[ClusterQueue, Workload, FlavorAssignment]] = [
        (cq, head, assign_flavors(head, cq, manager.flavors, quotas)) for cq, head in manager.heads()
    ]
    entries.sort(key=lambda e: (e[2].borrows, e[1].order_key))
    decisions: list[Decision] = []
    claimed_targets: set[WorkloadKey] = set()
    for cq, workload, assignment in entries:
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
            )
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
        decisions.append(_cannot_fit(cq, workload, assignment.message or "no preemption targets found"))
    return decisions


def run_cycle(manager: QueueManager, now: float) -> list[Decision]:
    """Decide a cycle and record it in ``manager``; ``now`` is POSIX seconds (injected clock)."""
    decisions = decide_cycle(manager)
    manager.apply_decisions(decisions, now)
    return decisions


def _cannot_fit(cq: ClusterQueue, workload: Workload, message: str) -> Decision:
    if cq.queueing_strategy is QueueingStrategy.STRICT_FIFO:
        return Wait(workload, cq.name, message, blocks=True)
    return Park(workload, cq.name, message)
