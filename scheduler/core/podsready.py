"""``waitForPodsReady``: when an admitted Workload is evicted because its pods are not ready, how long
it backs off before it queues again, when it is deactivated instead, and when admission waits
(Kueue v0.19.2's semantics; v0.17.0 decides alike except where noted).

- *timeout* (pkg/controller/core/workload_controller.go ``admittedNotReadyWorkload``,
  ``reconcileNotReadyTimeout``): an active, not evicted Workload with ``Admitted=True`` whose
  ``PodsReady`` condition is absent or False with reason ``WaitForStart`` (or the old ``PodsReady``)
  has ``timeout`` from the Admitted condition's lastTransitionTime; one False with reason
  ``WaitForRecovery`` (its pods were ready, one failed) has ``recoveryTimeout`` from the PodsReady
  condition's lastTransitionTime. Once none is left (``remaining > 0`` is false: exactly at the
  deadline) it is evicted: ``Evicted=True``, reason ``PodsReadyTimeout``, message "Exceeded the
  PodsReady timeout <namespace>/<name>" (the reason or the underlying cause goes to metrics and
  schedulingStats, not the condition);
- *backoff* (pkg/workload/workload.go ``UpdateRequeueState``, ``SetRequeueState``;
  pkg/util/wait/backoff.go ``WaitTime`` over apimachinery's ``Backoff.Step``): the same write sets
  ``status.requeueState``: count + 1, and requeueAt = now + the count-th step of base x 2^(n-1) capped
  at backoffMaxSeconds, jittered, unless requeueAt is already later;
- *deactivation* (``triggerDeactivation``): at a deadline where count + 1 > backoffLimitCount the
  Workload is not evicted but gets ``DeactivationTarget=True``, reason ``RequeuingLimitExceeded``;
  scheduler.core.activation takes it from there (evicted as ``DeactivatedDueToRequeuingLimitExceeded``,
  requeueState cleared). So a limit of N allows N evictions; the (N+1)th timeout deactivates;
- *requeue* (``Reconcile``, active branch): a Workload held by ``Requeued=False`` reason
  ``PodsReadyTimeout`` is marked ``Requeued=True`` reason ``BackoffFinished`` once requeueAt has passed;
  it then queues by the time ``RequeuingTimestamp`` names (scheduler.core.workloads);
- *blockAdmission* (pkg/scheduler/scheduler.go ``waitForPodsReadyIfNeeded``, pkg/cache/scheduler
  ``podsReadyForAllAdmittedWorkloads``): the scheduler does not admit while any Workload holding
  quota in any ClusterQueue lacks ``PodsReady=True``.

Pure: decides from times and conditions the caller passes; the controller keeps the timers, draws
the jitter and writes.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass

from scheduler.core import backoffs, workloads
from scheduler.core.workloads import RequeuingTimestamp, Workload, WorkloadKey

# Condition types and reasons, as apis/kueue/v1beta2/workload_types.go spells them.
PODS_READY = "PodsReady"
WAIT_FOR_START = "WaitForStart"
WAIT_FOR_RECOVERY = "WaitForRecovery"
LEGACY_WAIT_REASON = "PodsReady"
"""A PodsReady=False reason older Kueue wrote; read as WaitForStart (admittedNotReadyWorkload)."""
PODS_READY_TIMEOUT = "PodsReadyTimeout"
"""kueue.WorkloadEvictedByPodsReadyTimeout: the Evicted reason, and the Requeued=False reason after it."""
REQUEUING_LIMIT_EXCEEDED = "RequeuingLimitExceeded"
REQUEUING_LIMIT_MESSAGE = "exceeding the maximum number of re-queuing retries"
BACKOFF_FINISHED = "BackoffFinished"
BACKOFF_FINISHED_MESSAGE = "The workload backoff was finished"
# QuotaReserved=False while blockAdmission waits: "Waiting" unless the UnadmittedWorkloadsObservability
# gate (v0.19, beta, off by default) is on, then "WaitingForPodsReady" (UnadmittedWorkloadReasonWithFallback).
WAITING = "Waiting"
WAITING_FOR_PODS_READY = "WaitingForPodsReady"
WAITING_MESSAGE = "waiting for all admitted workloads to be in PodsReady condition"



@dataclass(slots=True, frozen=True)
class WaitForPodsReady:
    """Kueue's Configuration ``waitForPodsReady``, after Kueue's defaulting. Durations in seconds.

    Defaults are v0.19.2's for a config.kueue.x-k8s.io/v1beta2 Configuration: the section is defaulted
    in even when absent, so the feature is on with a 30-minute timeout unless the DisableWaitForPodsReady
    gate is set (apis/config/v1beta2/defaults.go). v0.17.0 turns it on only when the section is
    present, and has no default timeout (``OFF`` is its absent section).
    """

    enable: bool = True
    timeout_seconds: float = 1800.0
    """timeout: from Admitted=True to PodsReady=True (DefaultWaitForPodsReadyTimeout, 30 min)."""
    block_admission: bool = False
    """blockAdmission: no admission while a Workload holding quota is not ready (v1beta1 defaulted it to enable)."""
    requeuing_timestamp: RequeuingTimestamp = RequeuingTimestamp.EVICTION
    """requeuingStrategy.timestamp: what orders a Workload back after a PodsReady timeout."""
    backoff_limit_count: int | None = None
    """requeuingStrategy.backoffLimitCount: evictions allowed before deactivation; None never deactivates."""
    backoff_base_seconds: int = 60
    """requeuingStrategy.backoffBaseSeconds: the first backoff (DefaultRequeuingBackoffBaseSeconds)."""
    backoff_max_seconds: int = 3600
    """requeuingStrategy.backoffMaxSeconds: the cap on a backoff; 0 leaves it uncapped (NewBackoff's cmp.Or)."""
    recovery_timeout_seconds: float | None = None
    """recoveryTimeout: from PodsReady turning False after it was True; None takes the timeout, 0 disables it."""

    def __post_init__(self) -> None:
        # pkg/config/validation.go validateWaitForPodsReady. The timestamp is read even with the feature
        # off (cmd/kueue/main.go podsReadyRequeuingTimestamp), so it is always checked; the rest only when on.
        if not isinstance(self.requeuing_timestamp, RequeuingTimestamp):
            try:
                object.__setattr__(self, "requeuing_timestamp", RequeuingTimestamp(self.requeuing_timestamp))
            except ValueError:
                raise ValueError("waitForPodsReady.requeuingStrategy.timestamp must be Eviction or Creation "
                                 f"(got {self.requeuing_timestamp!r})") from None
        if not self.enable:
            return
        # Kueue refuses 0 as "must be specified" (v1beta2 defaulting turns a 0 into 30 min first).
        if self.timeout_seconds <= 0:
            raise ValueError(f"waitForPodsReady.timeout must be greater than 0 (got {self.timeout_seconds}): "
                             "leave it out for Kueue's 30 minutes")
        if self.recovery_timeout_seconds is not None and self.recovery_timeout_seconds < 0:
            raise ValueError(f"waitForPodsReady.recoveryTimeout must not be negative "
                             f"(got {self.recovery_timeout_seconds}): 0 disables it, None takes the timeout")
        if self.backoff_limit_count is not None and self.backoff_limit_count < 0:
            raise ValueError("waitForPodsReady.requeuingStrategy.backoffLimitCount must not be negative "
                             f"(got {self.backoff_limit_count}): None requeues without limit")
        if self.backoff_base_seconds < 0:
            raise ValueError("waitForPodsReady.requeuingStrategy.backoffBaseSeconds must not be negative "
                             f"(got {self.backoff_base_seconds}): leave it out for Kueue's 60")
        if self.backoff_max_seconds < 0:
            raise ValueError("waitForPodsReady.requeuingStrategy.backoffMaxSeconds must not be negative "
                             f"(got {self.backoff_max_seconds}): leave it out for Kueue's 3600")

    @property
    def recovery_timeout(self) -> float | None:
        """The recovery timeout in force (seconds), None when there is none (core.go waitForPodsReady)."""
        effective = self.timeout_seconds if self.recovery_timeout_seconds is None else self.recovery_timeout_seconds
        return effective if effective > 0 else None


OFF = WaitForPodsReady(enable=False)


@dataclass(slots=True, frozen=True)
class PodsReadyCondition:
    """A Workload's PodsReady condition: status "True"/"False"/"Unknown", reason, lastTransitionTime (s)."""

    status: str
    reason: str
    last_transition: float


@dataclass(slots=True, frozen=True)
class RequeueState:
    """status.requeueState: PodsReady-timeout evictions so far, and when the backoff ends (None: over).

    Kueue stores requeueAt as metav1.Time, whole seconds (scheduler.core.conversion writes it so), so the
    jitter (at most 6 ms at 60 s) mostly does not survive the write.
    """

    count: int = 0
    requeue_at: float | None = None


@dataclass(slots=True, frozen=True)
class Readiness:
    """What the timeout reads of one Workload."""

    key: WorkloadKey
    admitted_at: float | None
    """The Admitted=True condition's lastTransitionTime; None when not admitted."""
    pods_ready: PodsReadyCondition | None = None
    requeue: RequeueState = RequeueState()
    active: bool = True
    evicted: bool = False

    @classmethod
    def of(cls, workload: Workload, pods_ready: PodsReadyCondition | None,
           requeue: RequeueState = RequeueState()) -> Readiness:
        """From a core Workload: the timeout counts from the Admitted condition (later than the reservation
        when admission checks run)."""
        return cls(workload.key, workload.admitted_since, pods_ready, requeue, workload.active, workload.evicted)


class Action(enum.Enum):
    NONE = "none"
    """No timeout runs: off, not admitted, ready, inactive or already evicted."""
    WAIT = "wait"
    """A timeout runs: look again at ``Decision.deadline``."""
    EVICT = "evict"
    """Evicted=True (PodsReadyTimeout), with ``requeue_after_timeout`` in the same write."""
    DEACTIVATE = "deactivate"
    """DeactivationTarget=True (RequeuingLimitExceeded) instead of an eviction."""


@dataclass(slots=True, frozen=True)
class Decision:
    action: Action
    cause: str = ""
    """WaitForStart or WaitForRecovery: which timeout ran (Kueue's eviction underlying cause)."""
    deadline: float | None = None
    reason: str = ""
    message: str = ""


NOTHING = Decision(Action.NONE)


def is_ready(condition: PodsReadyCondition | None) -> bool:
    """PodsReady=True."""
    return condition is not None and condition.status == "True"


def decide(settings: WaitForPodsReady, workload: Readiness, now: float) -> Decision:
    """What the PodsReady timeout asks of one Workload at ``now`` (reconcileNotReadyTimeout)."""
    if not settings.enable or not workload.active or workload.evicted or workload.admitted_at is None:
        return NOTHING
    condition = workload.pods_ready
    if is_ready(condition):
        return NOTHING
    if condition is None or condition.reason in (WAIT_FOR_START, LEGACY_WAIT_REASON):
        cause, deadline = WAIT_FOR_START, workload.admitted_at + settings.timeout_seconds
    elif condition.reason == WAIT_FOR_RECOVERY and settings.recovery_timeout is not None:
        cause, deadline = WAIT_FOR_RECOVERY, condition.last_transition + settings.recovery_timeout
    else:
        return NOTHING
    if deadline - now > 0:
        return Decision(Action.WAIT, cause, deadline)
    if limit_reached(settings, workload.requeue):
        return Decision(Action.DEACTIVATE, cause, deadline, REQUEUING_LIMIT_EXCEEDED, REQUEUING_LIMIT_MESSAGE)
    namespace, name = workload.key
    return Decision(Action.EVICT, cause, deadline, PODS_READY_TIMEOUT,
                    f"Exceeded the PodsReady timeout {namespace}/{name}")


def limit_reached(settings: WaitForPodsReady, requeue: RequeueState) -> bool:
    """Whether the next timeout deactivates rather than evicts: count + 1 > limit (triggerDeactivation)."""
    limit = settings.backoff_limit_count
    return limit is not None and requeue.count + 1 > limit


def backoff_seconds(settings: WaitForPodsReady, count: int, draw: float) -> float:
    """The backoff before the ``count``-th requeue (1-based), in seconds, with Kueue's jitter for a uniform
    ``draw`` in [0, 1) (scheduler.core.backoffs)."""
    if count < 1:
        raise ValueError(f"count must be >= 1 (got {count}): the first requeue is count 1")
    return backoffs.wait_time_ns(settings.backoff_base_seconds, settings.backoff_max_seconds, count, draw) / backoffs.NS


def requeue_after_timeout(settings: WaitForPodsReady, requeue: RequeueState, now: float, draw: float) -> RequeueState:
    """status.requeueState after a PodsReady-timeout eviction at ``now`` (UpdateRequeueState).

    The count always grows; requeueAt moves only later (SetRequeueState: an admission check may have
    set a later one).
    """
    count = requeue.count + 1
    until = now + backoff_seconds(settings, count, draw)
    if requeue.requeue_at is not None and requeue.requeue_at >= until:
        until = requeue.requeue_at
    return RequeueState(count, until)


def backoff_over(requeue: RequeueState, now: float) -> bool:
    """Whether a Workload held after a timeout is marked Requeued=True (BackoffFinished) at ``now``."""
    return requeue.requeue_at is None or requeue.requeue_at - now <= 0


def queue_timestamp(settings: WaitForPodsReady, workload: Workload, evicted_at: float) -> float:
    """The queue-order timestamp after a PodsReady-timeout eviction at ``evicted_at`` (GetQueueOrderTimestamp)."""
    return workloads.queue_timestamp_after_eviction(workload, PODS_READY_TIMEOUT, evicted_at,
                                                    settings.requeuing_timestamp)


def admission_blocked(settings: WaitForPodsReady, holding_quota: Iterable[PodsReadyCondition | None],
                      second_pass: bool = False) -> bool:
    """Whether the scheduler waits before admitting: blockAdmission on and a Workload holding quota not ready.

    ``holding_quota`` is the PodsReady condition of every Workload holding quota, in every ClusterQueue,
    not counting the one being admitted. Kueue does not refuse it: the scheduler writes QuotaReserved=False
    (``WAITING``) and waits until the rest are ready. A second pass (v0.19: delayed topology assignment,
    failed-node replacement) already holds its quota and does not wait; v0.17.0 had no such exemption.
    """
    if not (settings.enable and settings.block_admission) or second_pass:
        return False
    return not all(is_ready(condition) for condition in holding_quota)

