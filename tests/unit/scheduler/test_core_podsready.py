"""waitForPodsReady: the timeout, the backoff, the deactivation, the queue order and blockAdmission
(Kueue v0.19.2: pkg/controller/core/workload_controller.go admittedNotReadyWorkload,
reconcileNotReadyTimeout, triggerDeactivation; pkg/workload/workload.go UpdateRequeueState,
SetRequeueState, Ordering.GetQueueOrderTimestamp; pkg/scheduler/scheduler.go waitForPodsReadyIfNeeded).
Each expectation is worked out by hand from those functions."""

import dataclasses

import pytest

from scheduler.core import activation, podsready, workloads
from scheduler.core.podsready import (
    Action,
    PodsReadyCondition,
    Readiness,
    RequeueState,
    WaitForPodsReady,
)
from scheduler.core.workloads import RequeuingTimestamp
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, admit, manager_with

SHORT = WaitForPodsReady(timeout_seconds=300)


def _waiting(reason=podsready.WAIT_FOR_START, since=1000.0):
    return PodsReadyCondition("False", reason, since)


def _readiness(pods_ready=None, admitted_at=1000.0, count=0, **fields):
    return Readiness(("ns", "w"), admitted_at, pods_ready, RequeueState(count), **fields)


# --- settings -----------------------------------------------------------------------------------------


def test_defaults_are_kueue_v0_19_2s_for_a_v1beta2_configuration():
    # apis/config/v1beta2/defaults.go: the section is defaulted in, timeout 30 min, blockAdmission false,
    # timestamp Eviction, base 60, max 3600, recoveryTimeout = timeout; backoffLimitCount stays nil.
    settings = WaitForPodsReady()
    assert (settings.enable, settings.timeout_seconds, settings.block_admission) == (True, 1800.0, False)
    assert settings.requeuing_timestamp is RequeuingTimestamp.EVICTION
    backoff = (settings.backoff_limit_count, settings.backoff_base_seconds, settings.backoff_max_seconds)
    assert backoff == (None, 60, 3600)
    assert settings.recovery_timeout == 1800.0
    assert not podsready.OFF.enable


@pytest.mark.parametrize("recovery, expected", [
    (None, 300),  # defaults to the timeout
    (0, None),  # core.go waitForPodsReady: only a recoveryTimeout > 0 is kept
    (45, 45),
])
def test_recovery_timeout_defaults_to_the_timeout_and_zero_disables_it(recovery, expected):
    assert WaitForPodsReady(timeout_seconds=300, recovery_timeout_seconds=recovery).recovery_timeout == expected


@pytest.mark.parametrize("fields, field_name", [
    ({"timeout_seconds": 0}, "waitForPodsReady.timeout"),  # field.Required "must be specified"
    ({"timeout_seconds": -1}, "waitForPodsReady.timeout"),
    ({"recovery_timeout_seconds": -1}, "waitForPodsReady.recoveryTimeout"),
    ({"backoff_limit_count": -1}, "requeuingStrategy.backoffLimitCount"),
    ({"backoff_base_seconds": -1}, "requeuingStrategy.backoffBaseSeconds"),
    ({"backoff_max_seconds": -1}, "requeuingStrategy.backoffMaxSeconds"),
    ({"requeuing_timestamp": "Arrival"}, "requeuingStrategy.timestamp"),  # field.NotSupported
])
def test_validation_refuses_what_kueue_refuses_naming_the_field(fields, field_name):
    with pytest.raises(ValueError, match=field_name.replace(".", r"\.")):
        WaitForPodsReady(**fields)


def test_validation_accepts_kueues_edge_values_and_skips_a_disabled_section():
    # validateWaitForPodsReady refuses negatives only; it returns early when the feature is off.
    WaitForPodsReady(backoff_limit_count=0, backoff_base_seconds=0, backoff_max_seconds=0, recovery_timeout_seconds=0)
    WaitForPodsReady(enable=False, timeout_seconds=-1, backoff_limit_count=-1)
    assert WaitForPodsReady(requeuing_timestamp="Creation").requeuing_timestamp is RequeuingTimestamp.CREATION


# --- the timeout --------------------------------------------------------------------------------------


@pytest.mark.parametrize("pods_ready", [
    None,  # no PodsReady condition yet
    _waiting(podsready.WAIT_FOR_START, since=1200.0),  # counts from Admitted, not from this condition
    _waiting(podsready.LEGACY_WAIT_REASON),  # the old "PodsReady" reason reads as WaitForStart
    PodsReadyCondition("Unknown", podsready.WAIT_FOR_START, 1000.0),  # not True
])
@pytest.mark.parametrize("now, action", [
    (1299.999, Action.WAIT),
    (1300.0, Action.EVICT),  # remaining = max(timeout - elapsed, 0) = 0 is not > 0
    (5000.0, Action.EVICT),
])
def test_the_start_timeout_runs_from_the_admission_and_fires_exactly_at_the_deadline(pods_ready, now, action):
    decision = podsready.decide(SHORT, _readiness(pods_ready), now)
    assert (decision.action, decision.cause, decision.deadline) == (action, podsready.WAIT_FOR_START, 1300.0)


def test_an_eviction_writes_kueues_reason_and_message():
    decision = podsready.decide(SHORT, _readiness(), 1300.0)
    assert (decision.reason, decision.message) == ("PodsReadyTimeout", "Exceeded the PodsReady timeout ns/w")


@pytest.mark.parametrize("readiness", [
    _readiness(PodsReadyCondition("True", "Started", 1100.0)),
    _readiness(admitted_at=None),  # quota reserved at most: !IsAdmitted
    _readiness(evicted=True),  # already evicted (by this timeout or anything else)
    _readiness(active=False),
    _readiness(PodsReadyCondition("False", "SomethingElse", 1000.0)),  # neither reason: no timer
])
def test_no_timeout_runs_when_ready_unadmitted_evicted_inactive_or_off(readiness):
    assert podsready.decide(SHORT, readiness, 9999.0) == podsready.NOTHING
    assert podsready.decide(podsready.OFF, _readiness(), 9999.0) == podsready.NOTHING


@pytest.mark.parametrize("recovery, now, action, deadline", [
    (120, 2119.0, Action.WAIT, 2120.0),  # from the condition's transition at 2000
    (120, 2120.0, Action.EVICT, 2120.0),
    (None, 2299.0, Action.WAIT, 2300.0),  # the default: the timeout, 300
    (0, 99999.0, Action.NONE, None),  # disabled: a recovering workload is never timed out
])
def test_the_recovery_timeout_runs_from_pods_ready_turning_false(recovery, now, action, deadline):
    settings = WaitForPodsReady(timeout_seconds=300, recovery_timeout_seconds=recovery)
    # Admitted at 1000: the start timeout (1300) would have fired long before; recovery does not count it.
    decision = podsready.decide(settings, _readiness(_waiting(podsready.WAIT_FOR_RECOVERY, since=2000.0)), now)
    assert (decision.action, decision.deadline) == (action, deadline)
    if action is not Action.NONE:
        assert decision.cause == podsready.WAIT_FOR_RECOVERY


# --- backoff ------------------------------------------------------------------------------------------


def test_the_backoff_doubles_from_the_base_and_stops_at_the_cap():
    # WaitTime(n) keeps step n of apimachinery's Backoff{Duration: 60s, Factor: 2, Cap: 3600s}:
    # 60, 120, 240, 480, 960, 1920, then 3840 > 3600 is capped.
    sequence = [podsready.backoff_seconds(WaitForPodsReady(), n, draw=0.0) for n in range(1, 10)]
    assert sequence == [60, 120, 240, 480, 960, 1920, 3600, 3600, 3600]


@pytest.mark.parametrize("base, cap, count, expected", [
    (100, 50, 1, 100),  # delay(): step 1 returns the initial duration; only the next one is capped
    (100, 50, 2, 50),
    (60, 0, 10, 60 * 2**9),  # backoffMaxSeconds 0: NewBackoff's cap is MaxInt64/2, i.e. none here
    (0, 3600, 5, 0),
])
def test_backoff_edges(base, cap, count, expected):
    settings = WaitForPodsReady(backoff_base_seconds=base, backoff_max_seconds=cap)
    assert podsready.backoff_seconds(settings, count, draw=0.0) == expected


@pytest.mark.parametrize("count, draw, expected_ns", [
    (1, 0.5, 60_003_000_000),  # 60 s + Duration(0.5 * 0.0001 * 60e9 ns) = + 3 ms
    (7, 0.999999, 3_600_359_999_640),  # capped 3600 s + 359,999,640 ns: below 0.01% of the wait
])
def test_the_jitter_adds_at_most_a_ten_thousandth_of_the_wait(count, draw, expected_ns):
    assert podsready.backoff_seconds(WaitForPodsReady(), count, draw) == pytest.approx(expected_ns / 1e9, abs=1e-9)


def test_backoff_refuses_a_draw_outside_the_unit_interval_and_a_zeroth_requeue():
    with pytest.raises(ValueError, match="draw"):
        podsready.backoff_seconds(WaitForPodsReady(), 1, 1.0)
    with pytest.raises(ValueError, match="count"):
        podsready.backoff_seconds(WaitForPodsReady(), 0, 0.0)


@pytest.mark.parametrize("before, expected", [
    (RequeueState(), RequeueState(1, 5060.0)),
    (RequeueState(2, 4000.0), RequeueState(3, 5240.0)),  # third requeue: 240 s
    (RequeueState(0, 9999.0), RequeueState(1, 9999.0)),  # SetRequeueState keeps a later requeueAt
])
def test_the_requeue_state_after_a_timeout_counts_and_moves_requeue_at_only_later(before, expected):
    assert podsready.requeue_after_timeout(WaitForPodsReady(), before, 5000.0, draw=0.0) == expected


@pytest.mark.parametrize("now, over", [(5059.9, False), (5060.0, True)])
def test_the_backoff_is_over_when_requeue_at_is_reached(now, over):
    # Reconcile: requeueAfter = requeueAt - now; > 0 waits, else BackoffFinished.
    assert podsready.backoff_over(RequeueState(1, 5060.0), now) is over
    assert podsready.backoff_over(RequeueState(1, None), now)


# --- the limit ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit, count, action", [
    (2, 0, Action.EVICT),
    (2, 1, Action.EVICT),
    (2, 2, Action.DEACTIVATE),  # 2 + 1 > 2
    (0, 0, Action.DEACTIVATE),  # a limit of 0: the first timeout deactivates
    (None, 1000, Action.EVICT),  # nil: requeued without end
])
def test_the_timeout_deactivates_once_count_plus_one_exceeds_the_limit(limit, count, action):
    settings = WaitForPodsReady(timeout_seconds=300, backoff_limit_count=limit)
    assert podsready.decide(settings, _readiness(count=count), 1300.0).action is action


def test_a_limit_of_three_allows_three_evictions_then_deactivates_with_kueues_condition():
    settings = WaitForPodsReady(timeout_seconds=300, backoff_limit_count=3)
    readiness, now, evictions, waits = _readiness(), 1000.0, 0, []
    while True:
        decision = podsready.decide(settings, readiness, readiness.admitted_at + 300)
        if decision.action is not Action.EVICT:
            break
        evictions += 1
        now = decision.deadline
        requeue = podsready.requeue_after_timeout(settings, readiness.requeue, now, draw=0.0)
        waits.append(requeue.requeue_at - now)
        # admitted again as soon as the backoff ends, and times out again
        readiness = dataclasses.replace(readiness, admitted_at=requeue.requeue_at, requeue=requeue)
    assert (evictions, waits) == (3, [60, 120, 240])
    assert (decision.action, decision.reason, decision.message) == (
        Action.DEACTIVATE, "RequeuingLimitExceeded", "exceeding the maximum number of re-queuing retries")


def test_the_deactivation_then_evicts_with_the_cause_named():
    # workload_controller.go Reconcile, inactive branch: reason Deactivated + "DueTo" + the target's reason.
    target = (podsready.REQUEUING_LIMIT_EXCEEDED, podsready.REQUEUING_LIMIT_MESSAGE)
    stopped = dataclasses.replace(WorkloadBuilder("w").obj(), active=False, deactivation_target=target)
    assert activation.eviction_reason(stopped) == (
        "DeactivatedDueToRequeuingLimitExceeded",
        "The workload is deactivated due to exceeding the maximum number of re-queuing retries")


# --- queue order --------------------------------------------------------------------------------------


@pytest.mark.parametrize("timestamp, first", [
    (RequeuingTimestamp.EVICTION, "b"),  # a queues by its eviction at 500, b by its creation at 200
    (RequeuingTimestamp.CREATION, "a"),  # a keeps its creation at 100
])
def test_the_requeuing_timestamp_orders_a_timed_out_workload(timestamp, first):
    settings = WaitForPodsReady(requeuing_timestamp=timestamp)
    a = WorkloadBuilder("a").created(100.0).obj()
    a = dataclasses.replace(a, queue_timestamp=podsready.queue_timestamp(settings, a, evicted_at=500.0))
    b = WorkloadBuilder("b").created(200.0).obj()
    assert min((a, b), key=workloads.order_key).name == first


# --- blockAdmission -----------------------------------------------------------------------------------

READY = PodsReadyCondition("True", "Started", 1.0)
NOT_READY = PodsReadyCondition("False", podsready.WAIT_FOR_START, 1.0)
BLOCKING = WaitForPodsReady(block_admission=True)


@pytest.mark.parametrize("settings, holding, second_pass, blocked", [
    (BLOCKING, [READY, NOT_READY], False, True),
    (BLOCKING, [READY, None], False, True),  # no condition yet is not ready
    (BLOCKING, [READY, READY], False, False),
    (BLOCKING, [], False, False),
    (BLOCKING, [NOT_READY], True, False),  # v0.19.2: a second pass does not wait
    (WaitForPodsReady(), [NOT_READY], False, False),  # blockAdmission off (the v1beta2 default)
    (WaitForPodsReady(enable=False, block_admission=True), [NOT_READY], False, False),  # blockForPodsReady
])
def test_admission_waits_while_a_workload_holding_quota_is_not_ready(settings, holding, second_pass, blocked):
    assert podsready.admission_blocked(settings, holding, second_pass) is blocked


# --- from a core Workload -----------------------------------------------------------------------------


def test_readiness_of_a_core_workload_reads_its_admission():
    manager = manager_with(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
    admit(manager, WorkloadBuilder("w").obj(), "cq")
    admitted = dataclasses.replace(manager.workload(("ns", "w")), admitted_at=1000.0)
    assert podsready.decide(SHORT, Readiness.of(admitted, None), 1300.0).action is Action.EVICT
    pending = Readiness.of(WorkloadBuilder("w").obj(), None)
    assert pending.admitted_at is None
    assert podsready.decide(SHORT, pending, 1300.0) == podsready.NOTHING
