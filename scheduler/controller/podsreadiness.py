"""waitForPodsReady at the controller's edge: the timers, and the writes ``scheduler.core.podsready`` decides.

Every Workload the controller takes in is shown here (``observe``). An admitted one not yet PodsReady is
timed to its deadline (the timeout from Admitted, or the recovery timeout from PodsReady turning False);
one evicted by the timeout and pending with ``Requeued=False`` (PodsReadyTimeout) is timed to its
``status.requeueState.requeueAt``. When a timer is due the controller asks ``write_for`` for the write:

- the eviction (pkg/controller/core/workload_controller.go ``reconcileNotReadyTimeout``): ``Evicted=True``
  reason ``PodsReadyTimeout`` and ``status.requeueState`` (count + 1, requeueAt after the backoff) in one
  write, as Kueue's Evict with UpdateRequeueState does; unless the controller holds evicted quota, the same
  write also releases the reservation (``QuotaReserved=False``, ``Admitted=False``, ``Requeued=False``
  PodsReadyTimeout, admission removed), which Kueue's job reconciler writes once the Job is stopped;
- the deactivation past backoffLimitCount (``triggerDeactivation``): ``DeactivationTarget=True`` reason
  ``RequeuingLimitExceeded``; the controller's activation path (scheduler.core.activation) goes on from it;
- the end of the backoff (``Reconcile``, active branch): ``Requeued=True`` reason ``BackoffFinished`` and
  requeueAt removed.

The writes are JSON merge patches onto the resourceVersion the decision saw: ``requeueState`` must outlive the
next admission, which an apply by the admission's field manager would remove, and a merge patch is how
Kueue itself clears it (see its Reconcile, "Clear RequeueState using Merge Patch").

A Workload in its backoff (``Requeued=False`` reason PodsReadyTimeout, or AdmissionCheck after a check's Retry
evicted it: Kueue ends both alike) is held by the core as Kueue holds it (pkg/cache/queue/cluster_queue.go
``backoffWaitingTimeExpired``; workloads.REQUEUE_HOLDING_REASONS).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from scheduler.controller import deadlines, statuses
from scheduler.core import admissionchecks, conversion, podsready
from scheduler.core.podsready import Action, PodsReadyCondition, Readiness, RequeueState
from scheduler.core.workloads import Workload, WorkloadKey

FIELD_MANAGER = "kqbench-scheduler-podsready"
RETRY_SECONDS = 1.0
"""How long after a failed write (or one waiting behind another write of the Workload) it is tried again."""


def pods_ready_of(conditions: list[dict]) -> PodsReadyCondition | None:
    """The PodsReady condition among a Workload's conditions, None when it has none."""
    for condition in conditions:
        if condition.get("type") == podsready.PODS_READY:
            return PodsReadyCondition(condition.get("status", ""), condition.get("reason", ""),
                                      conversion.parse_timestamp(condition.get("lastTransitionTime")))
    return None


def requeue_state_of(obj: dict) -> RequeueState:
    """status.requeueState (absent: no timeout so far)."""
    state = (obj.get("status") or {}).get("requeueState") or {}
    at = state.get("requeueAt")
    return RequeueState(int(state.get("count") or 0), conversion.parse_timestamp(at) if at else None)


BACKOFF_REASONS = frozenset({podsready.PODS_READY_TIMEOUT, admissionchecks.EVICTED_BY_ADMISSION_CHECK})
"""Requeued=False reasons Kueue's Reconcile ends with BackoffFinished once requeueAt has passed (one switch case
for both: a PodsReady timeout and an admission check's Retry)."""


def in_backoff(workload: Workload) -> bool:
    """Pending after a PodsReady timeout or an admission check's Retry, held by Requeued=False until its backoff
    ends."""
    return (workload.requeue_held_by in BACKOFF_REASONS and workload.active
            and workload.admission is None and not workload.finished)


_merged = statuses.merged


def _patch(obj: dict, status: dict) -> dict:
    return {"metadata": {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, "status": status}


def eviction_patch(workload: Workload, obj: dict, decision: podsready.Decision, requeue: RequeueState, now: float,
                   release: bool) -> dict:
    """Evicted (PodsReadyTimeout) with the new requeueState; with ``release`` the reservation goes too."""
    previous = statuses.conditions_of(obj)
    evicted = statuses.condition("Evicted", True, decision.reason, decision.message, now)
    status: dict = {"requeueState": {"count": requeue.count, "requeueAt": statuses.rfc3339(requeue.requeue_at or now)}}
    if release:
        released = statuses.eviction_status(workload, decision.reason, decision.message, previous, now)["status"]
        status["conditions"] = _merged(previous, released["conditions"])
        status["admission"] = None
        if statuses.ACCUMULATED in released:
            status[statuses.ACCUMULATED] = released[statuses.ACCUMULATED]
    else:
        status["conditions"] = _merged(previous, [evicted])
    return _patch(obj, status)


def deactivation_patch(obj: dict, decision: podsready.Decision, now: float) -> dict:
    """DeactivationTarget=True (RequeuingLimitExceeded), as SetDeactivationTarget writes it."""
    target = statuses.deactivation_target((decision.reason, decision.message), now)
    return _patch(obj, {"conditions": _merged(statuses.conditions_of(obj), [target])})


def backoff_finished_patch(obj: dict, now: float) -> dict:
    """Requeued=True (BackoffFinished) and requeueAt removed: the Workload queues again."""
    requeued = statuses.condition("Requeued", True, podsready.BACKOFF_FINISHED, podsready.BACKOFF_FINISHED_MESSAGE, now)
    return _patch(obj, {"conditions": _merged(statuses.conditions_of(obj), [requeued]),
                        "requeueState": {"requeueAt": None}})


def needs_tidy(workload: Workload, obj: dict) -> bool:
    """Deactivated and evicted, yet still carrying what the deactivation clears in Kueue: its requeueState,
    or a DeactivationTarget whose cause is past (Kueue's Reconcile, inactive branch, `prepare`; an exceeded
    maximum execution time's target stays, scheduler.core.executiontime.kept_after_eviction)."""
    if workload.active or not workload.evicted or workload.admission is not None or workload.finished:
        return False
    target = workload.deactivation_target
    return bool((obj.get("status") or {}).get("requeueState")) or (
        target is not None and target[0] == podsready.REQUEUING_LIMIT_EXCEEDED)


def tidy_patch(obj: dict) -> dict:
    """The DeactivationTarget (RequeuingLimitExceeded) and requeueState a deactivation leaves, removed: one
    write after the eviction's, where Kueue clears both in the eviction's own write."""
    conditions = statuses.conditions_of(obj)
    kept = [c for c in conditions if not (c.get("type") == "DeactivationTarget"
                                           and c.get("reason") == podsready.REQUEUING_LIMIT_EXCEEDED)]
    return _patch(obj, {"conditions": kept, "requeueState": None})


Write = statuses.Write


@dataclass
class PodsReadiness:
    """The timers of every Workload waitForPodsReady watches, and which Workloads holding quota are not ready."""

    field_manager: ClassVar[str] = FIELD_MANAGER
    retry_seconds: ClassVar[float] = RETRY_SECONDS
    settings: podsready.WaitForPodsReady = podsready.OFF
    draw: Callable[[], float] = random.random
    """A uniform draw in [0, 1) for the backoff's jitter (Kueue's rand.Float64)."""
    hold_evicted_quota: bool = False
    """The eviction leaves the reservation in place (ControllerSettings.hold_evicted_quota)."""
    _timers: deadlines.Deadlines[tuple[Workload, dict]] = field(default_factory=deadlines.Deadlines)
    _not_ready: set[WorkloadKey] = field(default_factory=set)

    def observe(self, workload: Workload, obj: dict, now: float) -> bool:
        """Time one Workload as the API shows it now; True when its timer moved (the loop may wake sooner)."""
        key = workload.key
        if workload.finished:
            self.forget(key)
            return False
        pods_ready = pods_ready_of(statuses.conditions_of(obj))
        if workload.admission is not None and not podsready.is_ready(pods_ready):
            self._not_ready.add(key)
        else:
            self._not_ready.discard(key)
        requeue = requeue_state_of(obj)
        if needs_tidy(workload, obj):
            due: float | None = now
        elif in_backoff(workload):
            # Kueue marks the backoff's end whether or not the feature is on (its Reconcile does not ask).
            due = requeue.requeue_at if requeue.requeue_at is not None else now
        else:
            due = podsready.decide(self.settings, Readiness.of(workload, pods_ready, requeue), now).deadline
        if due is None:
            self._timers.disarm(key)
            return False
        return self._timers.arm(key, due, (workload, obj))

    def forget(self, key: WorkloadKey) -> None:
        self._timers.disarm(key)
        self._not_ready.discard(key)

    def next_due(self) -> float | None:
        """The earliest timer (POSIX seconds), None when none runs."""
        return self._timers.next_due()

    def pop_due(self, now: float) -> list[tuple[Workload, dict]]:
        """The Workloads whose timer is due by ``now`` (their timers disarmed)."""
        return self._timers.pop_due(now)

    def retry(self, workload: Workload, obj: dict, at: float) -> None:
        """Time a Workload again at ``at`` (its write waited or failed)."""
        self._timers.arm(workload.key, at, (workload, obj))

    def assume(self, key: WorkloadKey, admitted: bool) -> None:
        """An admission decided (True) or undone (False) before the API shows it: admitted, it is not ready."""
        if admitted:
            self._not_ready.add(key)
        else:
            self._not_ready.discard(key)

    def blocks_admission(self) -> bool:
        """blockAdmission: a Workload holding quota is not PodsReady (podsready.admission_blocked)."""
        return podsready.admission_blocked(self.settings, [None] if self._not_ready else [])

    @property
    def blocking(self) -> bool:
        """Whether an admission blocks the next ones until it is PodsReady (blockAdmission on)."""
        return self.settings.enable and self.settings.block_admission

    def write_for(self, workload: Workload, obj: dict, now: float) -> Write | None:
        """The write a due timer calls for at ``now``; None when none (re-timed when it is not yet due)."""
        requeue = requeue_state_of(obj)
        if needs_tidy(workload, obj):
            return Write(tidy_patch(obj))
        if in_backoff(workload):
            if podsready.backoff_over(requeue, now):
                return Write(backoff_finished_patch(obj, now))
            self.retry(workload, obj, requeue.requeue_at or now)
            return None
        pods_ready = pods_ready_of(statuses.conditions_of(obj))
        decision = podsready.decide(self.settings, Readiness.of(workload, pods_ready, requeue), now)
        if decision.action is Action.WAIT and decision.deadline is not None:
            self.retry(workload, obj, decision.deadline)
            return None
        if decision.action is Action.DEACTIVATE:
            return Write(deactivation_patch(obj, decision, now))
        if decision.action is Action.EVICT:
            after = podsready.requeue_after_timeout(self.settings, requeue, now, self.draw())
            release = not self.hold_evicted_quota
            cluster_queue = workload.admission.cluster_queue if workload.admission is not None else None
            return Write(eviction_patch(workload, obj, decision, after, now, release), cluster_queue)
        return None
