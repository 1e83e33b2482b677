"""Admission checks at the controller's edge: Kueue's workload controller for them, the writes
``scheduler.core.admissionchecks`` decides.

Every Workload the controller takes in is shown here (``observe``); one whose ClusterQueue names checks, or that
carries check states, is looked at in Kueue's order (pkg/controller/core/workload_controller.go ``Reconcile``),
and at most one write is started for it at a time, the next decided from the object that write returns:

- ``requeueAt``: a Retry check's lastTransitionTime + requeueAfterSeconds still ahead and later than
  ``status.requeueState.requeueAt`` is written there first (``NeedsRequeueAtUpdate``); while it is ahead
  nothing else happens to the Workload (the active branch returns), so the Retry eviction waits for it;
- the eviction's reset: a pending Workload marked Evicted whose checks are not all Pending gets them reset
  (Kueue resets them in every eviction's own write; the reference's preemption and deactivation writes are
  applies that leave status.admissionChecks alone, so it follows them); after a deactivation the
  DeactivationTarget an admission check set goes in the same write, as Kueue's eviction removes it;
- the states (``reconcileSyncAdmissionChecks``): the checks the Workload must carry, added Pending or dropped;
- Admitted (``SyncAdmittedCondition``, only while not Admitted): True once quota is reserved and every check
  is Ready;
- failed checks (``reconcileCheckBasedEviction``, only while holding quota): a Rejected one sets
  ``DeactivationTarget=True`` (reason AdmissionCheck; ``scheduler.core.activation`` deactivates and evicts);
  a Retry one evicts (reason AdmissionCheck), the checks reset to Pending, and, as the job reconciler then
  does for a Job, releases the reservation in the same write (``Requeued=False`` AdmissionCheck) unless the
  controller holds evicted quota (Kueue's ``Evict`` leaves the admission to whoever stops the job).

The end of the hold that eviction leaves (``Requeued=True`` BackoffFinished once requeueAt has passed) is
``scheduler.controller.podsreadiness``'s, as Kueue's Reconcile ends both holds in one switch case.

The writes are JSON merge patches onto the resourceVersion the decision saw (status.admissionChecks and the
conditions are replaced whole, so a change since must not be overwritten); a check controller writes the
same lists, so neither this scheduler's apply manager nor anyone else comes to own them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from scheduler.controller import deadlines, podsreadiness, statuses
from scheduler.core import admissionchecks, conversion
from scheduler.core.admissionchecks import Action
from scheduler.core.kinds import ClusterQueue
from scheduler.core.workloads import AdmissionCheckState, CheckState, Workload, WorkloadKey

FIELD_MANAGER = "kqbench-scheduler-admissionchecks"
RETRY_SECONDS = 1.0
"""How long after a failed write (or one waiting behind another write of the Workload) it is tried again."""
DEACTIVATION_TARGET = "DeactivationTarget"


Write = statuses.Write


def _patch(obj: dict, status: dict) -> dict:
    return {"metadata": {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, "status": status}


def _quota_reserved(obj: dict) -> bool | None:
    """The QuotaReserved condition's status (None: absent)."""
    for condition in statuses.conditions_of(obj):
        if condition.get("type") == "QuotaReserved":
            return condition.get("status") == "True"
    return None


def states_patch(obj: dict, states: tuple[AdmissionCheckState, ...]) -> dict:
    return _patch(obj, {"admissionChecks": conversion.admission_check_states_to_dict(states)})


def requeue_at_patch(obj: dict, until: float) -> dict:
    """status.requeueState.requeueAt moved to ``until``, the count untouched (SetRequeueState(..., false))."""
    return _patch(obj, {"requeueState": {"requeueAt": statuses.rfc3339(until)}})


def admitted_patch(obj: dict, synced: admissionchecks.AdmittedSync) -> dict:
    assert synced.condition is not None
    status: dict = {"conditions": statuses.merged(statuses.conditions_of(obj), [statuses.admitted(synced.condition)])}
    if synced.accumulated_seconds is not None:
        status[statuses.ACCUMULATED] = synced.accumulated_seconds
    return _patch(obj, status)


def eviction_patch(workload: Workload, obj: dict, decision: admissionchecks.Decision, now: float,
                   release: bool = True) -> dict:
    """Evicted (AdmissionCheck) and the checks reset, in one write (pkg/workload/evict ``prepareForEviction``);
    with ``release`` the reservation goes too, as the job reconciler then writes for a Job."""
    previous = statuses.conditions_of(obj)
    checks = conversion.admission_check_states_to_dict(admissionchecks.reset_on_eviction(workload.admission_checks, now))
    if not release:
        evicted = statuses.condition("Evicted", True, decision.reason, decision.message, now)
        return _patch(obj, {"conditions": statuses.merged(previous, [evicted]), "admissionChecks": checks})
    released = statuses.eviction_status(workload, decision.reason, decision.message, previous, now)["status"]
    status: dict = {"conditions": statuses.merged(previous, released["conditions"]), "admission": None,
                    "admissionChecks": checks}
    if statuses.ACCUMULATED in released:
        status[statuses.ACCUMULATED] = released[statuses.ACCUMULATED]
    return _patch(obj, status)


def deactivation_patch(obj: dict, decision: admissionchecks.Decision, now: float) -> dict:
    """DeactivationTarget=True (AdmissionCheck), as SetDeactivationTarget writes it."""
    target = statuses.deactivation_target((decision.reason, decision.message), now)
    return _patch(obj, {"conditions": statuses.merged(statuses.conditions_of(obj), [target])})


def _set_by_checks(workload: Workload) -> bool:
    target = workload.deactivation_target
    return target is not None and target[0] == admissionchecks.EVICTED_BY_ADMISSION_CHECK


def _evicted_at(obj: dict) -> float:
    for condition in statuses.conditions_of(obj):
        if condition.get("type") == "Evicted":
            return conversion.parse_timestamp(condition.get("lastTransitionTime"))
    return 0.0


def needs_reset(workload: Workload, obj: dict) -> bool:
    """Evicted and released, yet carrying what Kueue's eviction clears: a check not Pending since before the
    eviction, or (deactivated) the DeactivationTarget a Rejected check set."""
    if not workload.evicted or workload.admission is not None or workload.finished:
        return False
    evicted_at = _evicted_at(obj)
    return (any(state.state is not CheckState.PENDING and (state.last_transition or 0.0) <= evicted_at
                for state in workload.admission_checks)
            or (not workload.active and _set_by_checks(workload)))


def reset_patch(workload: Workload, obj: dict, now: float) -> dict:
    status: dict = {"admissionChecks": conversion.admission_check_states_to_dict(
        admissionchecks.reset_on_eviction(workload.admission_checks, now))}
    if not workload.active and _set_by_checks(workload):
        status["conditions"] = [c for c in statuses.conditions_of(obj) if not (
            c.get("type") == DEACTIVATION_TARGET and c.get("reason") == admissionchecks.EVICTED_BY_ADMISSION_CHECK)]
    return _patch(obj, status)


def plan(workload: Workload, obj: dict, cq: ClusterQueue | None, now: float,
         hold_evicted_quota: bool = False) -> tuple[Write | None, float | None]:
    """The write the checks call for at ``now``, or when to look again (None: only when the object changes);
    ``hold_evicted_quota``: a Retry's eviction leaves the reservation for someone else to release."""
    states = workload.admission_checks
    requeue = podsreadiness.requeue_state_of(obj)
    until = admissionchecks.requeue_at_update(states, requeue.requeue_at, now)
    if until is not None:
        return Write(requeue_at_patch(obj, until)), None
    if needs_reset(workload, obj):
        return Write(reset_patch(workload, obj, now)), None
    if not workload.active or workload.deactivation_target is not None:
        return None, None  # the deactivation (scheduler.core.activation) goes first
    if requeue.requeue_at is not None and requeue.requeue_at > now:
        return None, requeue.requeue_at  # Reconcile's active branch waits for the backoff
    if podsreadiness.in_backoff(workload):
        return None, None  # podsreadiness marks the backoff's end
    if cq is not None:
        synced, changed = admissionchecks.sync_states(states, admissionchecks.checks_for_workload(cq, workload.admission),
                                                      now)
        if changed:
            return Write(states_patch(obj, synced)), None
    admitted = workload.admitted_condition
    if admitted is None or not admitted.status:
        synced_admitted = admissionchecks.sync_admitted(_quota_reserved(obj), states, admitted, now,
                                                        workload.accumulated_execution_seconds)
        if synced_admitted.changed and synced_admitted.condition is not None:
            return Write(admitted_patch(obj, synced_admitted)), None
    if workload.admission is None:
        return None, None
    decision = admissionchecks.check_based_eviction(states, True, workload.evicted)
    if decision.action is Action.DEACTIVATE:
        return Write(deactivation_patch(obj, decision, now)), None
    if decision.action is Action.EVICT:
        return Write(eviction_patch(workload, obj, decision, now, release=not hold_evicted_quota),
                     workload.admission.cluster_queue), None
    return None, None


@dataclass
class AdmissionChecking:
    """The Workloads admission checks concern, each timed to when its next write is due."""

    field_manager: ClassVar[str] = FIELD_MANAGER
    retry_seconds: ClassVar[float] = RETRY_SECONDS
    cluster_queue_of: Callable[[Workload], ClusterQueue | None]
    """The ClusterQueue a Workload queues in through its LocalQueue (None: unknown)."""
    hold_evicted_quota: bool = False
    """A Retry's eviction leaves the reservation in place (ControllerSettings.hold_evicted_quota)."""
    _timers: deadlines.Deadlines[tuple[Workload, dict]] = field(default_factory=deadlines.Deadlines)
    _tracked: dict[WorkloadKey, tuple[Workload, dict]] = field(default_factory=dict)

    def concerns(self, workload: Workload, cq: ClusterQueue | None) -> bool:
        """Whether checks touch this Workload: its queue names some, or it carries states or a target of theirs."""
        return bool(workload.admission_checks or (cq is not None and cq.admission_checks)
                    or _set_by_checks(workload))

    def observe(self, workload: Workload, obj: dict, now: float) -> bool:
        """Look at one Workload as the API shows it now; True when its timer moved (the loop may wake sooner)."""
        key = workload.key
        cq = self.cluster_queue_of(workload)
        if workload.finished or not self.concerns(workload, cq):
            self.forget(key)
            return False
        self._tracked[key] = (workload, obj)
        write, later = plan(workload, obj, cq, now, self.hold_evicted_quota)
        due = now if write is not None else later
        if due is None:
            self._timers.disarm(key)
            return False
        return self._timers.arm(key, due, (workload, obj))

    def cluster_queue_changed(self, name: str, now: float) -> None:
        """A ClusterQueue's checks may have changed: look again at the Workloads seen in it."""
        for workload, obj in list(self._tracked.values()):
            cq = self.cluster_queue_of(workload)
            if cq is not None and cq.name == name:
                self.observe(workload, obj, now)

    def forget(self, key: WorkloadKey) -> None:
        self._timers.disarm(key)
        self._tracked.pop(key, None)

    def next_due(self) -> float | None:
        return self._timers.next_due()

    def pop_due(self, now: float) -> list[tuple[Workload, dict]]:
        return self._timers.pop_due(now)

    def retry(self, workload: Workload, obj: dict, at: float) -> None:
        self._timers.arm(workload.key, at, (workload, obj))

    def write_for(self, workload: Workload, obj: dict, now: float) -> Write | None:
        """The write a due timer calls for at ``now``; None when none (re-timed when one comes later)."""
        write, later = plan(workload, obj, self.cluster_queue_of(workload), now, self.hold_evicted_quota)
        if write is None and later is not None:
            self.retry(workload, obj, later)
        return write
