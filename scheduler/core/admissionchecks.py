"""Admission checks: which a Workload must pass, when it is Admitted, and what a Retry or a Rejected does
(Kueue v0.19.2's semantics; v0.17.0 decides alike except where docs/lifecycle.md notes).

A ClusterQueue names AdmissionChecks in ``spec.admissionChecksStrategy`` (each for some flavors or, with
no ``onFlavors``, for all of them). A Workload holding quota is ``Admitted`` only once every entry of its
``status.admissionChecks`` is ``Ready``; check controllers write ``Pending``/``Ready``/``Retry``/``Rejected``.

- *which checks* (pkg/workload/workload.go ``AdmissionChecksForWorkload``): with an admission, every check
  whose flavors meet a flavor the admission assigned; without one, only those covering every flavor of the
  ClusterQueue. The workload controller writes them as ``Pending`` (``syncAdmissionCheckConditions``),
  drops the rest and keeps the list sorted by name. The scheduler writes no check state when it reserves
  quota: it turns Admitted True in the same write only when the Workload already carries every check its
  admission needs and all are Ready (``prepareWorkload``);
- *Admitted* (pkg/workload/admissionchecks.go ``SyncAdmittedCondition``): True when quota is reserved, every
  check is Ready and no delayed topology request is pending; turning False adds the whole seconds it was
  True to ``accumulatedPastExecutionTimeSeconds``;
- *Retry* (pkg/controller/core/workload_controller.go ``reconcileCheckBasedEviction``): a Workload holding
  quota is evicted, reason ``AdmissionCheck``, message "Evicted due to AdmissionCheck(s) in Retry state:
  ...". Every eviction (any reason) resets each check that is not Pending to Pending and counts a Retry in
  its ``retryCount`` (pkg/workload/evict ``resetChecksOnEviction``). A check's ``requeueAfterSeconds``
  (the provisioning controller's ``UpdateAdmissionCheckRequeueState``: base x 2^(n-1), capped, jittered,
  whole seconds) holds the Workload: ``status.requeueState.requeueAt`` moves to the latest
  lastTransitionTime + requeueAfterSeconds of a Retry check (``NeedsRequeueAtUpdate``); while it is ahead,
  Kueue's Reconcile returns before it evicts, and the Requeued=False ``AdmissionCheck`` it leaves is marked
  ``BackoffFinished`` once it has passed (as scheduler.core.podsready ``backoff_over``);
- *Rejected*: ``DeactivationTarget=True`` reason ``AdmissionCheck``, message "AdmissionCheck(s) in Rejected
  state: ..."; scheduler.core.activation deactivates and evicts it as ``DeactivatedDueToAdmissionCheck``;
- *the ClusterQueue* (pkg/cache/scheduler/clusterqueue.go ``updateWithAdmissionChecks``, ``inactiveReason``):
  a check that does not exist, or whose controller has not set its ``Active`` condition True, makes the
  queue inactive (``AdmissionCheckNotFound``, ``AdmissionCheckInactive``), as do misused MultiKueue checks.

Pure: decides from the states, conditions and times the caller passes; the controller keeps the timers,
draws the jitter and writes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from scheduler.core import conditions
from scheduler.core.kinds import ClusterQueue
from scheduler.core.backoffs import NS as _NS, wait_time_ns
from scheduler.core.podsready import RequeueState
from scheduler.core.workloads import Admission, AdmissionCheckState, AdmittedCondition, CheckState


# AdmissionCheck kind (apis/kueue/v1beta2/admissioncheck_types.go, multikueue_types.go,
# provisioningrequestconfig_types.go).
ACTIVE = "Active"
"""kueue.AdmissionCheckActive: the condition a check's controller sets True once it evaluates the check."""
MULTIKUEUE_CONTROLLER = "kueue.x-k8s.io/multikueue"
PROVISIONING_CONTROLLER = "kueue.x-k8s.io/provisioning-request"
DEFAULT_BACKOFF_BASE_SECONDS = 60
"""ProvisioningRequestRetryStrategy's defaults: base 60 s, cap 1800 s, 3 retries before Rejected."""
DEFAULT_BACKOFF_MAX_SECONDS = 1800
DEFAULT_BACKOFF_LIMIT_COUNT = 3

# Workload conditions (apis/kueue/v1beta2/workload_types.go and SyncAdmittedCondition's literals).
EVICTED_BY_ADMISSION_CHECK = "AdmissionCheck"
"""kueue.WorkloadEvictedByAdmissionCheck: the Evicted and Requeued=False reason, the DeactivationTarget reason."""
ADMITTED = "Admitted"
ADMITTED_MESSAGE = "The workload is admitted"
NO_RESERVATION = "NoReservation"
NO_RESERVATION_MESSAGE = "The workload has no reservation"
NO_RESERVATION_UNSATISFIED_CHECKS = "NoReservationUnsatisfiedChecks"
NO_RESERVATION_UNSATISFIED_CHECKS_MESSAGE = "The workload has no reservation and not all checks ready"
UNSATISFIED_CHECKS = "UnsatisfiedChecks"
"""The reason without the UnadmittedWorkloadsObservability gate (v0.19: beta, off by default)."""
UNSATISFIED_ADMISSION_CHECKS = "UnsatisfiedAdmissionChecks"
"""kueue.WorkloadAdmittedReasonUnsatisfiedAdmissionChecks: the reason with the gate on."""
UNSATISFIED_CHECKS_MESSAGE = "The workload has not all checks ready"
PENDING_DELAYED_TOPOLOGY_REQUESTS = "PendingDelayedTopologyRequests"
PENDING_DELAYED_TOPOLOGY_REQUESTS_MESSAGE = "There are pending delayed topology requests"
RESET_MESSAGE = "Reset to Pending after eviction. Previously: "
"""resetChecksOnEviction's message, followed by the state the check had."""
FAILED_CHECKS_MESSAGE = "The workload has failed admission checks"
"""The scheduler's QuotaReserved=False message for a head with a Retry or Rejected check (nominate)."""
PENDING = "Pending"
PENDING_EVALUATION = "PendingEvaluation"

# ClusterQueue Active=False reasons (apis/kueue/v1beta2/clusterqueue_types.go).
CHECK_NOT_FOUND = "AdmissionCheckNotFound"
CHECK_INACTIVE = "AdmissionCheckInactive"
MULTIPLE_MULTIKUEUE = "MultipleMultiKueueAdmissionChecks"
MULTIKUEUE_PER_FLAVOR = "MultiKueueAdmissionCheckAppliedPerFlavor"
MULTIKUEUE_WITH_PROVISIONING = "MultiKueueWithProvisioningRequest"
INACTIVE_PREFIX = "Can't admit new workloads"

MAX_CONDITION_MESSAGE = 32 * 1024
"""pkg/util/api TruncateConditionMessage: longer messages are cut to this many bytes, ending " ..."."""
_INT32 = 2**31


@dataclass(slots=True, frozen=True)
class AdmissionCheck:
    """An AdmissionCheck object, reduced to what Kueue's cache keeps (pkg/cache/scheduler ``AdmissionCheck``)."""

    name: str
    controller_name: str
    active: bool = False
    """Its ``Active`` condition is True; only its controller sets it (Kueue's own sets nothing)."""

    def __post_init__(self) -> None:
        if not self.controller_name:
            raise ValueError(f"AdmissionCheck {self.name!r}: spec.controllerName must not be empty "
                             "(the CRD's minLength is 1: the API server refuses such a check)")

    @classmethod
    def of(cls, obj: Mapping[str, Any]) -> AdmissionCheck:
        """From an AdmissionCheck object as the API returns it."""
        spec = obj.get("spec") or {}
        return cls(obj["metadata"]["name"], spec.get("controllerName") or "", conditions.is_true(obj, ACTIVE))


# --- which checks a Workload carries -------------------------------------------------------------------


def checks_by_flavor(cq: ClusterQueue) -> dict[str, frozenset[str]]:
    """Each check of the ClusterQueue and the flavors it runs for (pkg/util/admissioncheck NewAdmissionChecks)."""
    every_flavor = frozenset(cq.flavor_names())
    return {rule.name: frozenset(rule.on_flavors) if rule.on_flavors else every_flavor
            for rule in cq.admission_checks}


def checks_for_admission(checks: Mapping[str, frozenset[str]], admission: Admission) -> frozenset[str]:
    """The checks an admission needs: those sharing a flavor with it (admissionChecksForAdmission)."""
    assigned = {flavor for assignment in admission.pod_set_assignments for flavor in assignment.flavors.values()}
    return frozenset(name for name, flavors in checks.items() if flavors & assigned)


def checks_for_workload(cq: ClusterQueue, admission: Admission | None) -> frozenset[str]:
    """The checks a Workload in this ClusterQueue must carry (AdmissionChecksForWorkload).

    Without an admission its flavors are unknown, so only checks covering every flavor of the queue apply
    (a queue without flavors: every check).
    """
    checks = checks_by_flavor(cq)
    if admission is not None:
        return checks_for_admission(checks, admission)
    every_flavor = cq.flavor_names()
    return frozenset(name for name, flavors in checks.items() if flavors >= every_flavor)


def has_all_required_checks(states: Iterable[AdmissionCheckState], required: Iterable[str]) -> bool:
    """Whether every required check has a state, whatever it is (HasAllRequiredChecks)."""
    return set(required) <= {state.name for state in states}


def all_ready(states: Iterable[AdmissionCheckState]) -> bool:
    """Whether every state the Workload carries is Ready, required or not (HasAllChecksReady)."""
    return all(state.state is CheckState.READY for state in states)


def sync_states(states: Iterable[AdmissionCheckState], required: Iterable[str],
                now: float) -> tuple[tuple[AdmissionCheckState, ...], bool]:
    """status.admissionChecks after the workload controller syncs them with the required checks, and
    whether it writes (syncAdmissionCheckConditions).

    A missing check is added Pending at ``now`` with no message; one no longer required is dropped; the rest
    keep everything. The result is sorted by name, but a reorder alone is not written.
    """
    current = list(states)
    wanted = set(required)
    if not wanted:
        return (), bool(current)
    changed = False
    present = {state.name for state in current}
    for name in sorted(wanted - present):
        current.append(AdmissionCheckState(name, CheckState.PENDING, now))
        changed = True
    if len(current) > len(wanted):
        changed = True
        current = [state for state in current if state.name in wanted]
    return tuple(sorted(current, key=_name)), changed


def _name(state: AdmissionCheckState) -> str:
    return state.name


# --- Admitted ----------------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class AdmittedSync:
    """What SyncAdmittedCondition leaves: the condition, the accumulated seconds, and whether it changed."""

    changed: bool
    condition: AdmittedCondition | None
    accumulated_seconds: int | None
    """status.accumulatedPastExecutionTimeSeconds (None: absent)."""


def sync_admitted(quota_reserved: bool | None, states: Iterable[AdmissionCheckState],
                  admitted: AdmittedCondition | None, now: float, accumulated_seconds: int | None = None,
                  topology_pending: bool = False, observability: bool = False,
                  explicit_status: bool = False) -> AdmittedSync:
    """The Admitted condition at ``now`` (SyncAdmittedCondition).

    ``quota_reserved`` is the QuotaReserved condition's status (None: absent); ``topology_pending`` a
    DelayedTopologyRequest still Pending. The gates are UnadmittedWorkloadsObservability and
    UnadmittedWorkloadsExplicitStatus (v0.19, both off by default): without the first, nothing is written
    unless admitted-ness flips; with it, the reason is refreshed whenever a condition exists.
    """
    checks = tuple(states)
    reserved = quota_reserved is True
    ready = all_ready(checks)
    was_admitted = admitted is not None and admitted.status
    unchanged = AdmittedSync(False, admitted, accumulated_seconds)
    if observability:
        if quota_reserved is None and admitted is None and not explicit_status:
            return unchanged
    elif was_admitted == (reserved and ready and not topology_pending):
        return unchanged
    if not reserved and not ready:
        status, reason, message = False, NO_RESERVATION_UNSATISFIED_CHECKS, NO_RESERVATION_UNSATISFIED_CHECKS_MESSAGE
        if observability:
            reason, message = NO_RESERVATION, NO_RESERVATION_MESSAGE
    elif not reserved:
        status, reason, message = False, NO_RESERVATION, NO_RESERVATION_MESSAGE
    elif not ready:
        status, reason = False, UNSATISFIED_ADMISSION_CHECKS if observability else UNSATISFIED_CHECKS
        message = UNSATISFIED_CHECKS_MESSAGE
    elif topology_pending:
        status, reason, message = False, PENDING_DELAYED_TOPOLOGY_REQUESTS, PENDING_DELAYED_TOPOLOGY_REQUESTS_MESSAGE
    else:
        status, reason, message = True, ADMITTED, ADMITTED_MESSAGE
    if was_admitted and not status:
        assert admitted is not None
        # int32(now.Sub(lastTransition).Seconds()): truncated toward zero, negative if the clock went back.
        accumulated_seconds = (accumulated_seconds or 0) + _int32(int(now - admitted.last_transition))
    if admitted is None:
        return AdmittedSync(True, AdmittedCondition(status, reason, message, now), accumulated_seconds)
    # apimeta.SetStatusCondition: the transition time moves only with the status.
    since = admitted.last_transition if admitted.status == status else now
    condition = AdmittedCondition(status, reason, message, since)
    return AdmittedSync(condition != admitted, condition, accumulated_seconds)


def admitted_at_reservation(states: Iterable[AdmissionCheckState], required: Iterable[str],
                            admitted: AdmittedCondition | None, now: float, accumulated_seconds: int | None = None,
                            topology_pending: bool = False, observability: bool = False) -> AdmittedSync | None:
    """The Admitted condition the scheduler writes with the reservation at ``now``; None when it writes none
    (scheduler.go ``prepareWorkload``).

    It syncs Admitted only if the Workload already carries every check the admission needs (``required``,
    ``checks_for_admission``), and writes no check state: the workload controller adds the missing ones next.
    Without checks this is Admitted=True in the reservation's own write.
    """
    checks = tuple(states)
    if not has_all_required_checks(checks, required):
        return None
    return sync_admitted(True, checks, admitted, now, accumulated_seconds, topology_pending, observability)


def failed_checks_refusal(states: Iterable[AdmissionCheckState], observability: bool = False) -> tuple[str, str] | None:
    """(QuotaReserved=False reason, message) the scheduler gives a head with a Retry or Rejected check, or
    None (scheduler.go ``nominate``, checked before the ClusterQueue being inactive)."""
    if not any(state.state in (CheckState.RETRY, CheckState.REJECTED) for state in states):
        return None
    return (PENDING_EVALUATION if observability else PENDING), FAILED_CHECKS_MESSAGE


# --- Retry and Rejected ------------------------------------------------------------------------------


class Action(enum.Enum):
    NONE = "none"
    """Nothing failed, or it is already evicted (or holds no quota)."""
    EVICT = "evict"
    """Evicted=True, reason AdmissionCheck: quota released, checks reset to Pending, requeued."""
    DEACTIVATE = "deactivate"
    """DeactivationTarget=True, reason AdmissionCheck: scheduler.core.activation deactivates and evicts it."""


@dataclass(slots=True, frozen=True)
class Decision:
    action: Action
    reason: str = ""
    message: str = ""


NOTHING = Decision(Action.NONE)


def check_based_eviction(states: Iterable[AdmissionCheckState], reserved: bool, evicted: bool) -> Decision:
    """What failed checks do to a Workload (reconcileCheckBasedEviction, run only while it holds quota).

    A Rejected check wins over Retry ones. The DeactivationTarget message is not truncated (SetDeactivationTarget);
    the Evicted one is (SetEvictedCondition).
    """
    checks = tuple(states)
    if not reserved or evicted:
        return NOTHING
    rejected = [state for state in checks if state.state is CheckState.REJECTED]
    if rejected:
        return Decision(Action.DEACTIVATE, EVICTED_BY_ADMISSION_CHECK, checks_message(rejected, CheckState.REJECTED))
    retry = [state for state in checks if state.state is CheckState.RETRY]
    if not retry:
        return NOTHING
    message = truncate_condition_message("Evicted due to " + checks_message(retry, CheckState.RETRY))
    return Decision(Action.EVICT, EVICTED_BY_ADMISSION_CHECK, message)


def checks_message(states: Iterable[AdmissionCheckState], state: CheckState) -> str:
    """``AdmissionCheck(s) in <state> state: "a" (message); "b"``, by name (buildAdmissionChecksMessage)."""
    ordered = sorted(states, key=_name)
    parts = [f"{_go_quote(s.name)} ({s.message})" if s.message else _go_quote(s.name) for s in ordered]
    noun = "AdmissionChecks" if len(ordered) > 1 else "AdmissionCheck"
    return f"{noun} in {state.value} state: {'; '.join(parts)}"


def reset_on_eviction(states: Iterable[AdmissionCheckState], now: float) -> tuple[AdmissionCheckState, ...]:
    """status.admissionChecks after any eviction at ``now`` (pkg/workload/evict resetChecksOnEviction).

    Pending ones are kept as they are; the others turn Pending with the reset message, keep their
    requeueAfterSeconds, and keep a retryCount only as a Retry's count + 1 (a Ready or Rejected check loses it).
    """
    reset = []
    for state in states:
        if state.state is CheckState.PENDING:
            reset.append(state)
            continue
        retries = (state.retry_count or 0) + 1 if state.state is CheckState.RETRY else None
        reset.append(AdmissionCheckState(state.name, CheckState.PENDING, now, RESET_MESSAGE + state.state.value,
                                         state.requeue_after_seconds, retries))
    return tuple(reset)


def retry_after_seconds(retry_count: int | None, base_seconds: int, max_seconds: int, draw: float) -> int:
    """requeueAfterSeconds for a check turning Retry after ``retry_count`` retries (UpdateAdmissionCheckRequeueState).

    The (retry_count + 1)-th step of ``wait_time_ns``, truncated to whole seconds toward zero. Kueue computes
    a negative value from a negative base (nothing validates ProvisioningRequestConfig's retryStrategy); the
    API server then refuses the write (``AdmissionCheckState`` refuses it too).
    """
    nanoseconds = wait_time_ns(base_seconds, max_seconds, (retry_count or 0) + 1, draw)
    seconds = abs(nanoseconds) // _NS * (1 if nanoseconds >= 0 else -1)  # Duration.Truncate(time.Second)
    return _int32(seconds)


def with_retry_backoff(state: AdmissionCheckState, base_seconds: int, max_seconds: int,
                       draw: float) -> AdmissionCheckState:
    """The check state with its requeueAfterSeconds set for its next retry (UpdateAdmissionCheckRequeueState).

    The retryCount is not incremented here: the eviction that follows does it (``reset_on_eviction``).
    """
    return replace(state, requeue_after_seconds=retry_after_seconds(state.retry_count, base_seconds,
                                                                    max_seconds, draw))


def retry_time(states: Iterable[AdmissionCheckState]) -> float | None:
    """The latest lastTransitionTime + requeueAfterSeconds of a Retry check, None if none (GetMaxRetryTime)."""
    times = [state.last_transition + state.requeue_after_seconds for state in states
             if state.state is CheckState.RETRY and state.requeue_after_seconds is not None
             and state.last_transition is not None]
    return max(times, default=None)


def requeue_at_update(states: Iterable[AdmissionCheckState], requeue_at: float | None, now: float) -> float | None:
    """The requeueAt the workload controller writes before anything else, or None (NeedsRequeueAtUpdate).

    Only a retry time still ahead of ``now`` and later than the current requeueAt is written; the count is
    not touched (SetRequeueState(..., false)).
    """
    until = retry_time(states)
    if until is None or until <= now:
        return None
    if requeue_at is not None and requeue_at >= until:
        return None
    return until


def requeue_state_after(requeue: RequeueState, until: float) -> RequeueState:
    """status.requeueState once a check's retry time is written (SetRequeueState without incrementing)."""
    if requeue.requeue_at is not None and requeue.requeue_at >= until:
        return requeue
    return RequeueState(requeue.count, until)


# --- the ClusterQueue --------------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Problem:
    """One reason the ClusterQueue is inactive because of its checks, and its part of the message."""

    reason: str
    message: str


def cluster_queue_problems(cq: ClusterQueue, known: Mapping[str, AdmissionCheck]) -> tuple[Problem, ...]:
    """Why the ClusterQueue's checks keep it inactive, in Kueue's order (updateWithAdmissionChecks, inactiveReason).

    ``known`` holds every AdmissionCheck by name. Names in each message are sorted. In ``inactiveReason``
    these come after ``Stopped`` and ``FlavorNotFound`` and before ``TopologyNotFound``.
    """
    checks = checks_by_flavor(cq)
    every_flavor = frozenset(cq.flavor_names())
    missing, inactive, per_flavor = [], [], []
    multikueue, provisioning = set(), set()
    for name, flavors in checks.items():
        check = known.get(name)
        if check is None:
            missing.append(name)
            continue
        if not check.active:
            inactive.append(name)
        if check.controller_name == PROVISIONING_CONTROLLER:
            provisioning.add(name)
        if check.controller_name == MULTIKUEUE_CONTROLLER:
            multikueue.add(name)
            if flavors != every_flavor:
                per_flavor.append(name)
    problems = []
    if missing:
        problems.append(Problem(CHECK_NOT_FOUND, f"references missing AdmissionCheck(s): {_joined(missing)}"))
    if inactive:
        problems.append(Problem(CHECK_INACTIVE, f"references inactive AdmissionCheck(s): {_joined(inactive)}"))
    if len(multikueue) > 1:
        problems.append(Problem(MULTIPLE_MULTIKUEUE, "Cannot use multiple MultiKueue AdmissionChecks on the same "
                                                     f"ClusterQueue, found: {_joined(multikueue)}"))
    if per_flavor:
        problems.append(Problem(MULTIKUEUE_PER_FLAVOR,
                                f"Cannot specify MultiKueue AdmissionCheck per flavor, found: {_joined(per_flavor)}"))
    if multikueue and provisioning:
        problems.append(Problem(MULTIKUEUE_WITH_PROVISIONING, "Cannot use both MultiKueue and ProvisioningRequest "
                                f"AdmissionChecks together, found: {_joined(multikueue)}, {_joined(provisioning)}"))
    return tuple(problems)


def inactive_reason(problems: Iterable[Problem]) -> tuple[str, str] | None:
    """(reason, message) of the Active=False condition these problems alone give, or None (inactiveReason).

    The reason is the first problem's; the message joins all of them.
    """
    found = list(problems)
    if not found:
        return None
    message = f"{INACTIVE_PREFIX}: {', '.join(p.message for p in found)}."
    return found[0].reason, truncate_condition_message(message)


# --- helpers -----------------------------------------------------------------------------------------


def truncate_condition_message(message: str) -> str:
    """A condition message as Kueue writes it: at most 32 KiB of UTF-8, cut ending " ..." (TruncateConditionMessage)."""
    encoded = message.encode()
    if len(encoded) <= MAX_CONDITION_MESSAGE:
        return message
    suffix = " ..."
    return encoded[:MAX_CONDITION_MESSAGE - len(suffix)].decode(errors="ignore") + suffix


def _joined(names: Iterable[str]) -> str:
    return ",".join(sorted(names))


def _int32(value: int) -> int:
    # Go's int32(float64) outside the range is implementation-defined: refuse rather than guess.
    if not -_INT32 <= value < _INT32:
        raise ValueError(f"{value} does not fit Kueue's int32 field")
    return value


_GO_ESCAPES = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v",
               "\\": "\\\\", '"': '\\"'}


def _go_quote(text: str) -> str:
    """fmt's %q of a string (strconv.Quote): printable runes kept, the rest escaped."""
    out = []
    for char in text:
        if char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        elif ord(char) < 0x80:
            out.append(f"\\x{ord(char):02x}")
        elif ord(char) <= 0xFFFF:
            out.append(f"\\u{ord(char):04x}")
        else:
            out.append(f"\\U{ord(char):08x}")
    return '"' + "".join(out) + '"'
