"""``spec.active``: what stopping or resuming a Workload asks of the scheduler (Kueue's semantics).

``kubectl kueue stop workload`` sets ``spec.active: false``, ``resume`` sets it back. Kueue then
(pkg/controller/core/workload_controller.go, and the job reconciler for the admission):

- an inactive Workload is neither queued nor counted against quota, from the moment it is seen;
- one not yet evicted gets ``Evicted=True`` with reason ``Deactivated``;
- one that holds an admission also loses it: ``QuotaReserved=False`` (reason ``Pending``),
  ``Admitted=False`` and ``Requeued=False`` (reason ``Deactivated``). Kueue leaves clearing the
  admission to the owner's job reconciler; a bare Workload has none, so the eviction write does it,
  as the preemption write does;
- made active again after that, it is pending but held (``Requeued=False`` gates admission) until
  it is marked ``Requeued=True`` with reason ``Reactivated``;
- an active Workload with ``DeactivationTarget=True`` (Kueue sets it when the maximum execution time is
  exceeded, scheduler.core.executiontime) is set ``spec.active: false`` before anything else; its
  eviction then names the cause: reason ``DeactivatedDueTo<the target's reason>``, message
  "The workload is deactivated due to <the target's message>", and the Requeued=False the release
  writes carries the same reason, which a resume does not mark Reactivated (Kueue matches
  ``Deactivated`` exactly).

Pure: decides from a decoded Workload; the controller writes.
"""

from __future__ import annotations

import enum

from scheduler.core.workloads import Workload

DEACTIVATED = "Deactivated"
DEACTIVATED_MESSAGE = "The workload is deactivated"
REACTIVATED = "Reactivated"
REACTIVATED_MESSAGE = "The workload was reactivated"
DUE_TO = "DueTo"
"""pkg/workload/patching ReasonWithCause: reason + "DueTo" + underlying cause."""


class Change(enum.Enum):
    EVICT_ADMITTED = "evict-admitted"
    """Inactive and still holding an admission: evict it and clear the admission."""
    MARK_EVICTED = "mark-evicted"
    """Inactive and pending, not yet marked: set Evicted=True (Deactivated)."""
    REACTIVATE = "reactivate"
    """Active again after a deactivation eviction: set Requeued=True (Reactivated)."""
    DEACTIVATE = "deactivate"
    """Active with DeactivationTarget=True: set spec.active to false."""


def change_for(workload: Workload) -> Change | None:
    """The status change a Workload's ``spec.active`` calls for, if any."""
    if workload.finished:
        return None
    if not workload.active:
        # Even when already evicted (say an admission write landed after the stop), an admission
        # on an inactive workload must go.
        if workload.admission is not None:
            return Change.EVICT_ADMITTED
        return None if workload.evicted else Change.MARK_EVICTED
    if workload.deactivation_target is not None:
        return Change.DEACTIVATE
    if workload.requeue_held_by == DEACTIVATED and workload.admission is None:
        return Change.REACTIVATE
    return None


def eviction_reason(workload: Workload) -> tuple[str, str]:
    """(reason, message) of the Evicted condition a deactivation writes, with a DeactivationTarget's cause."""
    if workload.deactivation_target is None:
        return DEACTIVATED, DEACTIVATED_MESSAGE
    cause, message = workload.deactivation_target
    return DEACTIVATED + DUE_TO + cause, f"{DEACTIVATED_MESSAGE} due to {message}"
