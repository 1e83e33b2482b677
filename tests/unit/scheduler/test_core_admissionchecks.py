"""Admission checks: which checks a Workload carries, Admitted, Retry, Rejected, the backoff and the
ClusterQueue's Active condition (Kueue v0.19.2). Each expectation is worked out by hand from the function a
test names, most of them from Kueue's own cases: pkg/workload/admissionchecks_test.go (TestSyncAdmittedCondition,
TestGetMaxRetryTime), pkg/workload/workload_test.go (TestAdmissionChecksForWorkload),
pkg/controller/core/workload_controller_test.go (TestSyncCheckStates), workload_controller_eviction_test.go
(TestReconcileEviction), workload_controller_requeue_test.go, pkg/cache/scheduler clusterqueue_test.go and
cache_test.go, and the integration tests delayed_admission_test.go and clusterqueue_controller_test.go."""

import dataclasses

import pytest

from scheduler.core import activation, admissionchecks, backoffs, podsready, workloads
from scheduler.core.admissionchecks import (
    Action,
    AdmissionCheck,
    AdmittedCondition,
    AdmittedSync,
)
from scheduler.core.kinds import AdmissionCheckStrategyRule
from scheduler.core.podsready import RequeueState, WaitForPodsReady
from scheduler.core.workloads import Admission, AdmissionCheckState, CheckState, PodSetAssignment
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder

NOW = 1_735_732_800.0  # 2025-01-01T12:00:00Z, GetMaxRetryTime's baseTime
PENDING, READY, RETRY, REJECTED = CheckState.PENDING, CheckState.READY, CheckState.RETRY, CheckState.REJECTED


def _state(name, state, since=NOW, message="", requeue_after=None, retries=None):
    return AdmissionCheckState(name, state, since, message, requeue_after, retries)


def _cq(*rules, flavors=("flavor1", "flavor2")):
    builder = ClusterQueueBuilder("cq")
    if flavors:
        builder.flavors(*((flavor, {"cpu": "1", "memory": "1Gi"}) for flavor in flavors))
    return dataclasses.replace(builder.obj(), admission_checks=tuple(
        AdmissionCheckStrategyRule(name, tuple(on)) for name, *on in rules))


def _admission(**flavor_per_resource):
    return Admission("cq", (PodSetAssignment("main", dict(flavor_per_resource), {}, 1),))


# TestAdmissionChecksForWorkload's ClusterQueue: flavor1, flavor2 and six rules.
KUEUE_CQ = _cq(("ac1", "flavor1"), ("ac2", "flavor2"), ("ac3", "flavor1", "flavor2"),
               ("ac4", "flavor1", "flavor2", "non-existent-flavor"), ("ac5", "non-existent-flavor"), ("ac6",))


# --- bad input, refused as the API server refuses it --------------------------------------------------


def test_a_check_naming_no_controller_is_refused_as_the_crd_refuses_it():
    # AdmissionCheckSpec.controllerName: +required, MinLength=1.
    with pytest.raises(ValueError, match=r"spec\.controllerName"):
        AdmissionCheck("check", "")
    with pytest.raises(ValueError, match=r"spec\.controllerName"):
        AdmissionCheck.of({"metadata": {"name": "check"}, "spec": {}})


@pytest.mark.parametrize("status_conditions, active", [
    ([{"type": "Active", "status": "True", "reason": "Active"}], True),
    ([{"type": "Active", "status": "False", "reason": "Inactive"}], False),
    ([], False),  # no controller ever marked it: inactive (cache.AddOrUpdateAdmissionCheck)
])
def test_an_admission_check_is_active_only_with_its_active_condition_true(status_conditions, active):
    obj = {"metadata": {"name": "c"}, "spec": {"controllerName": "example.com/ctl"},
           "status": {"conditions": status_conditions}}
    assert AdmissionCheck.of(obj) == AdmissionCheck("c", "example.com/ctl", active)


@pytest.mark.parametrize("fields, match", [
    ({"requeue_after_seconds": -1}, "requeueAfterSeconds must be >= 0"),  # +kubebuilder:validation:Minimum=0
    ({"retry_count": -1}, "retryCount must be >= 0"),
    ({"name": ""}, "name must not be empty"),  # AdmissionCheckReference MinLength=1
    ({"state": "Failed"}, "must be Pending, Ready, Retry or Rejected"),  # the state's Enum
])
def test_a_check_state_refuses_what_the_workload_crd_refuses(fields, match):
    with pytest.raises(ValueError, match=match):
        AdmissionCheckState(**{"name": "c", "state": PENDING, "last_transition": NOW, **fields})


def test_a_check_state_reads_kueues_spelling_and_a_workload_carries_none_by_default():
    assert AdmissionCheckState("c", "Ready", NOW).state is READY
    assert WorkloadBuilder("w").obj().admission_checks == ()


# --- which checks a Workload carries ------------------------------------------------------------------


@pytest.mark.parametrize("admission, expected", [
    # TestAdmissionChecksForWorkload "Only relevant checks returned for an admitted workload"
    (_admission(cpu="flavor1", memory="flavor2"), {"ac1", "ac2", "ac3", "ac4", "ac6"}),
    # "... covering all relevant flavors returned for Workload without Quota Reserved": a superset of both
    (None, {"ac3", "ac4", "ac6"}),
    (_admission(cpu="flavor1"), {"ac1", "ac3", "ac4", "ac6"}),  # only flavor1 assigned
    (_admission(cpu="flavor2"), {"ac2", "ac3", "ac4", "ac6"}),
])
def test_checks_for_a_workload_follow_its_admitted_flavors(admission, expected):
    assert admissionchecks.checks_for_workload(KUEUE_CQ, admission) == expected


def test_a_rule_without_flavors_runs_for_every_flavor_of_every_resource_group():
    # NewAdmissionChecks: empty onFlavors -> queue.AllFlavors(cq.Spec.ResourceGroups).
    two_groups = ClusterQueueBuilder("cq").flavors(("a", {"cpu": "1"})).flavors(("g", {"gpu": "1"})).obj()
    rules = (AdmissionCheckStrategyRule("all"), AdmissionCheckStrategyRule("on-g", ("g",)))
    cq = dataclasses.replace(two_groups, admission_checks=rules)
    assert admissionchecks.checks_by_flavor(cq) == {"all": {"a", "g"}, "on-g": {"g"}}


@pytest.mark.parametrize("cq, admission, expected", [
    (_cq(), None, set()),  # no checks at all
    (_cq(), _admission(cpu="flavor1"), set()),
    (_cq(("ac",), ("per", "x"), flavors=()), None, {"ac", "per"}),  # no flavors: every set is a superset
    (_cq(("ac",)), Admission("cq", ()), set()),  # an admission assigning no flavor meets no check
])
def test_checks_for_a_workload_edges(cq, admission, expected):
    assert admissionchecks.checks_for_workload(cq, admission) == expected


# --- syncing the states -------------------------------------------------------------------------------


@pytest.mark.parametrize("states, required, expected, changed", [
    ((), (), (), False),  # TestSyncCheckStates "nil conditions, nil list"
    ((), ("ac1", "ac2"), (_state("ac1", PENDING, NOW + 5), _state("ac2", PENDING, NOW + 5)), True),  # "add to nil"
    # "add and remove": ac1 keeps its transition time, ac2 is added at now, ac0 goes
    ((_state("ac0", PENDING), _state("ac1", PENDING)), ("ac1", "ac2"),
     (_state("ac1", PENDING), _state("ac2", PENDING, NOW + 5)), True),
    ((_state("ac0", PENDING), _state("ac1", PENDING)), (), (), True),  # "cleanup"
    # "preserve conditions data"
    ((_state("ac0", READY, message="Message one"), _state("ac1", PENDING)), ("ac0", "ac1"),
     (_state("ac0", READY, message="Message one"), _state("ac1", PENDING)), False),
    # sorted by name, but a reorder alone is no reason to write
    ((_state("b", READY), _state("a", PENDING)), ("a", "b"), (_state("a", PENDING), _state("b", READY)), False),
])
def test_the_workload_controller_syncs_states_with_the_required_checks(states, required, expected, changed):
    assert admissionchecks.sync_states(states, required, NOW + 5) == (expected, changed)


# --- Admitted -----------------------------------------------------------------------------------------

ADMITTED_SINCE = AdmittedCondition(True, "Admitted", "The workload is admitted", NOW - 1)


@pytest.mark.parametrize("case, reserved, states, admitted, accumulated, expected", [
    ("empty", None, (), None, None, AdmittedSync(False, None, None)),
    ("reservation no checks", True, (), None, None,
     AdmittedSync(True, AdmittedCondition(True, "Admitted", "The workload is admitted", NOW), None)),
    ("reservation, checks not ready", True, (_state("check1", PENDING), _state("check2", READY)), None, None,
     AdmittedSync(False, None, None)),
    ("reservation, checks ready", True, (_state("check1", READY), _state("check2", READY)), None, None,
     AdmittedSync(True, AdmittedCondition(True, "Admitted", "The workload is admitted", NOW), None)),
    ("reservation lost", None, (_state("check1", READY),), ADMITTED_SINCE, None,
     AdmittedSync(True, AdmittedCondition(False, "NoReservation", "The workload has no reservation", NOW), 1)),
    ("check lost", True, (_state("check1", READY), _state("check2", PENDING)), ADMITTED_SINCE, None,
     AdmittedSync(True, AdmittedCondition(False, "UnsatisfiedChecks", "The workload has not all checks ready", NOW),
                  1)),
    ("reservation and check lost", None, (_state("check2", PENDING),), ADMITTED_SINCE, None,
     AdmittedSync(True, AdmittedCondition(False, "NoReservationUnsatisfiedChecks",
                                          "The workload has no reservation and not all checks ready", NOW), 1)),
    ("reservation lost with past admitted time (add)", False, (), ADMITTED_SINCE, 1,
     AdmittedSync(True, AdmittedCondition(False, "NoReservation", "The workload has no reservation", NOW), 2)),
])
def test_sync_admitted_matches_kueues_table(case, reserved, states, admitted, accumulated, expected):
    assert admissionchecks.sync_admitted(reserved, states, admitted, NOW, accumulated) == expected, case


@pytest.mark.parametrize("admitted, changed, reason", [
    # "pending delayed topology request; flip from Admitted=true"
    (ADMITTED_SINCE, True, "PendingDelayedTopologyRequests"),
    # "...; already Admitted=false": nothing flips, nothing is written
    (AdmittedCondition(False, "UnsatisfiedChecks", "The workload has not all checks ready", NOW - 9), False,
     "UnsatisfiedChecks"),
])
def test_a_pending_delayed_topology_request_keeps_it_unadmitted(admitted, changed, reason):
    sync = admissionchecks.sync_admitted(True, (_state("check1", READY),), admitted, NOW, topology_pending=True)
    assert (sync.changed, sync.condition.status, sync.condition.reason) == (changed, False, reason)
    if changed:
        assert sync.condition.message == "There are pending delayed topology requests"


@pytest.mark.parametrize("case, reserved, states, admitted, explicit, expected_reason", [
    ("reservation, checks not ready with observability", True, (_state("c1", PENDING),), None, False,
     "UnsatisfiedAdmissionChecks"),
    ("reservation and check lost with observability", None, (_state("c2", PENDING),), ADMITTED_SINCE, False,
     "NoReservation"),  # the gate folds NoReservationUnsatisfiedChecks into NoReservation
    ("no reservation, no condition initially with observability", None, (_state("c1", PENDING),), None, False, None),
    ("the same with UnadmittedWorkloadsExplicitStatus", None, (_state("c1", PENDING),), None, True, "NoReservation"),
])
def test_the_observability_gate_writes_tiered_reasons(case, reserved, states, admitted, explicit, expected_reason):
    sync = admissionchecks.sync_admitted(reserved, states, admitted, NOW, observability=True, explicit_status=explicit)
    if expected_reason is None:
        assert sync == AdmittedSync(False, None, None), case
    else:
        assert (sync.changed, sync.condition.status, sync.condition.reason) == (True, False, expected_reason), case


def test_with_the_gate_a_reason_is_refreshed_without_moving_the_transition_time():
    # Gate on: no early return when admitted-ness holds; SetStatusCondition keeps lastTransitionTime.
    before = AdmittedCondition(False, "NoReservation", "The workload has no reservation", NOW - 30)
    sync = admissionchecks.sync_admitted(True, (_state("c", PENDING),), before, NOW, observability=True)
    assert sync == AdmittedSync(True, AdmittedCondition(False, "UnsatisfiedAdmissionChecks",
                                                        "The workload has not all checks ready", NOW - 30), None)
    # gate off: admitted-ness did not flip, so the stale NoReservation stays
    assert not admissionchecks.sync_admitted(True, (_state("c", PENDING),), before, NOW).changed


@pytest.mark.parametrize("admitted_for, accumulated", [
    (2.9, 7 + 2),  # int32(d.Seconds()) truncates
    (-2.5, 7 - 2),  # a transition time ahead of now (clock skew) subtracts, toward zero
])
def test_the_accumulated_time_adds_the_whole_seconds_admitted(admitted_for, accumulated):
    admitted = dataclasses.replace(ADMITTED_SINCE, last_transition=NOW - admitted_for)
    assert admissionchecks.sync_admitted(False, (), admitted, NOW, 7).accumulated_seconds == accumulated


# --- at quota reservation -----------------------------------------------------------------------------


def test_without_checks_the_reservation_write_turns_admitted_true():
    sync = admissionchecks.admitted_at_reservation((), frozenset(), None, NOW)
    assert sync.condition == AdmittedCondition(True, "Admitted", "The workload is admitted", NOW)


def test_the_reservation_write_skips_admitted_while_a_required_check_is_not_yet_carried():
    # prepareWorkload: HasAllRequiredChecks false -> no SyncAdmittedCondition; the workload controller then adds
    # the per-flavor check (sync_states) and no check state is written by the scheduler itself.
    admission = _admission(cpu="flavor1")
    required = admissionchecks.checks_for_admission(admissionchecks.checks_by_flavor(KUEUE_CQ), admission)
    carried = tuple(_state(name, READY) for name in sorted(admissionchecks.checks_for_workload(KUEUE_CQ, None)))
    assert admissionchecks.admitted_at_reservation(carried, required, None, NOW) is None
    states, changed = admissionchecks.sync_states(carried, required, NOW)
    assert changed and [s.name for s in states] == ["ac1", "ac3", "ac4", "ac6"] and states[0].state is PENDING


@pytest.mark.parametrize("states, observability, expected", [
    ((_state("a", READY),), False, AdmittedCondition(True, "Admitted", "The workload is admitted", NOW)),
    ((_state("a", PENDING),), False, None),  # no flip: nothing written with the gate off
    ((_state("a", PENDING),), True,
     AdmittedCondition(False, "UnsatisfiedAdmissionChecks", "The workload has not all checks ready", NOW)),
    # HasAllChecksReady reads every state, so one the CQ no longer requires still blocks
    ((_state("a", READY), _state("stale", PENDING)), False, None),
])
def test_the_reservation_write_admits_only_when_every_carried_check_is_ready(states, observability, expected):
    sync = admissionchecks.admitted_at_reservation(states, {"a"}, None, NOW, observability=observability)
    assert sync.condition == expected


@pytest.mark.parametrize("states, observability, expected", [
    ((_state("a", RETRY),), False, ("Pending", "The workload has failed admission checks")),
    ((_state("a", READY), _state("b", REJECTED)), True,
     ("PendingEvaluation", "The workload has failed admission checks")),
    ((_state("a", PENDING), _state("b", READY)), False, None),
])
def test_the_scheduler_refuses_a_head_with_failed_checks(states, observability, expected):
    assert admissionchecks.failed_checks_refusal(states, observability) == expected


# --- Retry and Rejected -------------------------------------------------------------------------------


@pytest.mark.parametrize("states, action, message", [
    # TestReconcileEviction "admitted workload with rejected checks gets deactivated"
    ((_state("check", REJECTED),), Action.DEACTIVATE, 'AdmissionCheck in Rejected state: "check"'),
    # "..., with message"
    ((_state("check", REJECTED, message="quota exceeded"),), Action.DEACTIVATE,
     'AdmissionCheck in Rejected state: "check" (quota exceeded)'),
    # "workload with retry checks should be evicted and checks should be pending"
    ((_state("check-1", RETRY), _state("check-2", READY)), Action.EVICT,
     'Evicted due to AdmissionCheck in Retry state: "check-1"'),
    # "..., with message": by name, whatever their order in the status
    ((_state("check-3", RETRY, message="budget exhausted"), _state("check-2", READY),
      _state("check-1", RETRY, message="infrastructure not prepared")), Action.EVICT,
     'Evicted due to AdmissionChecks in Retry state: "check-1" (infrastructure not prepared); '
     '"check-3" (budget exhausted)'),
    # a Rejected check wins: deactivation, and only the rejected ones are named
    ((_state("a", RETRY), _state("b", REJECTED)), Action.DEACTIVATE, 'AdmissionCheck in Rejected state: "b"'),
])
def test_failed_checks_evict_or_deactivate_with_kueues_reason_and_message(states, action, message):
    assert admissionchecks.check_based_eviction(states, reserved=True, evicted=False) == \
        admissionchecks.Decision(action, "AdmissionCheck", message)


@pytest.mark.parametrize("states, reserved, evicted", [
    ((_state("a", RETRY),), True, True),  # IsEvicted: already evicted (by anything)
    ((_state("a", REJECTED),), False, False),  # run only while quota is reserved
    ((_state("a", PENDING), _state("b", READY)), True, False),
    ((), True, False),
])
def test_nothing_is_evicted_without_a_failed_check_or_quota_or_when_already_evicted(states, reserved, evicted):
    assert admissionchecks.check_based_eviction(states, reserved, evicted) == admissionchecks.NOTHING


def test_a_rejection_deactivates_through_the_deactivation_target():
    # "workload with deactivation target condition should be deactivated and admission checks reset"
    states = (_state("check-1", REJECTED), _state("check-2", RETRY))
    decision = admissionchecks.check_based_eviction(states, reserved=True, evicted=False)
    targeted = dataclasses.replace(WorkloadBuilder("wl").obj(), deactivation_target=(decision.reason, decision.message))
    assert activation.change_for(targeted) is activation.Change.DEACTIVATE  # spec.active: false first
    stopped = dataclasses.replace(targeted, active=False)
    assert activation.eviction_reason(stopped) == (
        "DeactivatedDueToAdmissionCheck",
        'The workload is deactivated due to AdmissionCheck in Rejected state: "check-1"')


def test_check_names_are_quoted_as_gos_percent_q_and_long_messages_truncated():
    assert admissionchecks.checks_message([_state('a"b\\c\n', RETRY)], RETRY) == \
        'AdmissionCheck in Retry state: "a\\"b\\\\c\\n"'
    long = admissionchecks.check_based_eviction((_state("c", RETRY, message="x" * 40_000),), True, False).message
    assert len(long.encode()) == 32 * 1024 and long.endswith("x ...")


def test_an_eviction_resets_every_check_that_is_not_pending():
    # resetChecksOnEviction; cases of TestReconcileEviction and delayed_admission_test.go
    pending = _state("p", PENDING, since=NOW - 50, message="waiting", retries=3)
    before = (_state("retry", RETRY, requeue_after=120, message="capacity"),
              _state("again", RETRY, retries=1, requeue_after=60),
              _state("ready", READY, retries=2), _state("rejected", REJECTED), pending)
    assert admissionchecks.reset_on_eviction(before, NOW + 10) == (
        _state("retry", PENDING, NOW + 10, "Reset to Pending after eviction. Previously: Retry", 120, 1),
        _state("again", PENDING, NOW + 10, "Reset to Pending after eviction. Previously: Retry", 60, 2),
        _state("ready", PENDING, NOW + 10, "Reset to Pending after eviction. Previously: Ready"),  # count dropped
        _state("rejected", PENDING, NOW + 10, "Reset to Pending after eviction. Previously: Rejected"),
        pending,  # untouched
    )


# --- the retry backoff --------------------------------------------------------------------------------


def test_the_retry_backoff_doubles_from_the_base_to_the_cap():
    # Provisioning defaults (base 60, max 1800); the n-th Retry uses retryCount + 1.
    sequence = [admissionchecks.retry_after_seconds(count, 60, 1800, draw=0.0) for count in (None, 0, 1, 2, 3, 4, 5, 9)]
    assert sequence == [60, 60, 120, 240, 480, 960, 1800, 1800]


@pytest.mark.parametrize("retries, base, cap, draw, expected", [
    (None, 60, 1800, 0.999999, 60),  # +6 ms of jitter does not survive Truncate(time.Second)
    (13, 60, 0, 0.999999, 491_569),  # uncapped: 60 x 2^13 = 491520 s, +49.15 s of jitter kept
    (3, 0, 1800, 0.5, 0),  # base 0: every step is 0, a retry right away
    (2, 60, 0, 0.0, 240),  # max 0: no cap (cmp.Or to MaxInt64/2)
    (2, 60, -1, 0.0, 240),  # a negative cap never applies (cap > 0 && next > cap)
    (1, 100, 50, 0.0, 50),  # step 1 is the base even above the cap; step 2 is capped
    (None, 100, 50, 0.0, 100),
    (None, -60, 1800, 0.5, -60),  # Kueue computes it; Truncate goes toward zero
    (1, -60, 1800, 0.0, -120),
])
def test_retry_backoff_edges_computed_as_kueue_computes_them(retries, base, cap, draw, expected):
    assert admissionchecks.retry_after_seconds(retries, base, cap, draw) == expected


def test_a_negative_base_cannot_be_written_as_the_api_server_refuses_it():
    state = _state("c", RETRY)
    with pytest.raises(ValueError, match="requeueAfterSeconds must be >= 0"):
        admissionchecks.with_retry_backoff(state, -60, 1800, draw=0.0)


def test_setting_the_backoff_keeps_the_retry_count_for_the_eviction_to_raise():
    state = admissionchecks.with_retry_backoff(_state("c", RETRY, retries=2), 60, 1800, draw=0.0)
    assert (state.requeue_after_seconds, state.retry_count) == (240, 2)


@pytest.mark.parametrize("retries, draw, match", [
    (30, 0.0, "int32"),  # uncapped 2^62 ns is 4611686018 s: Go's int32() of it is implementation-defined
    (None, 1.0, "draw"),
])
def test_the_backoff_refuses_what_it_cannot_compute_as_kueue_would(retries, draw, match):
    with pytest.raises(ValueError, match=match):
        admissionchecks.retry_after_seconds(retries, 60, 0, draw)


@pytest.mark.parametrize("base, cap, iteration, draw", [
    (60, 3600, 1, 0.5), (60, 3600, 7, 0.999999), (100, 50, 2, 0.3), (60, 0, 10, 0.7), (0, 3600, 5, 0.1),
    (1, 1, 40, 0.0),
])
def test_the_backoff_agrees_with_the_pods_ready_one_they_share_wait_time(base, cap, iteration, draw):
    settings = WaitForPodsReady(backoff_base_seconds=base, backoff_max_seconds=cap)
    assert backoffs.wait_time_ns(base, cap, iteration, draw) / 1e9 == \
        pytest.approx(podsready.backoff_seconds(settings, iteration, draw), abs=1e-9)
    assert backoffs.wait_time_ns(base, cap, 0, draw) == 0  # WaitTime(0) steps nothing


# --- requeueAt ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("states, expected", [
    ((), None),  # TestGetMaxRetryTime "no admission checks"
    ((_state("c1", RETRY),), None),  # "nil RequeueAfterSeconds"
    ((_state("c1", RETRY, since=None, requeue_after=60),), None),  # "zero LastTransitionTime"
    ((_state("c1", RETRY, requeue_after=60),), NOW + 60),  # "single admission check with valid retry time"
    ((_state("c1", RETRY, requeue_after=60), _state("c2", RETRY, requeue_after=120),
      _state("c3", RETRY, requeue_after=30)), NOW + 120),  # "multiple ..., returns max retry time"
    ((_state("c1", RETRY), _state("c2", RETRY, requeue_after=90),
      _state("c3", RETRY, since=None, requeue_after=180)), NOW + 90),  # "mixed nil and valid values"
    ((_state("c1", RETRY, requeue_after=60), _state("c2", RETRY, since=NOW + 30, requeue_after=60)), NOW + 90),
    ((_state("c1", PENDING, requeue_after=600), _state("c2", READY, requeue_after=600)), None),  # Retry only
])
def test_the_retry_time_is_the_latest_transition_plus_requeue_after(states, expected):
    assert admissionchecks.retry_time(states) == expected


@pytest.mark.parametrize("states, requeue_at, expected", [
    # workload_controller_requeue_test.go "should update requeueState.requeueAt when admission check sets a delay"
    ((_state("check", RETRY, requeue_after=10),), NOW + 5, NOW + 10),
    # "should not update requeueState.requeueAt when admission check delay is smaller"
    ((_state("check", RETRY, requeue_after=5),), NOW + 10, None),
    ((_state("check1", RETRY, requeue_after=5), _state("check2", RETRY, requeue_after=7)), None, NOW + 7),
    # "should use the biggest total time not the biggest RequeueAfterSeconds"
    ((_state("check1", RETRY, since=NOW + 10, requeue_after=5), _state("check2", RETRY, requeue_after=10)), None,
     NOW + 15),
    ((_state("check", RETRY, since=NOW - 20, requeue_after=10),), None, None),  # already over
    ((_state("check", RETRY, requeue_after=0),), None, None),  # base 0: not after now
    ((_state("check", RETRY, requeue_after=10),), NOW + 10, None),  # equal: nothing to move
])
def test_requeue_at_moves_only_to_a_later_retry_time_still_ahead(states, requeue_at, expected):
    assert admissionchecks.requeue_at_update(states, requeue_at, NOW) == expected


def test_the_requeue_state_keeps_its_count_when_a_check_sets_requeue_at():
    assert admissionchecks.requeue_state_after(RequeueState(2, NOW + 5), NOW + 10) == RequeueState(2, NOW + 10)
    assert admissionchecks.requeue_state_after(RequeueState(2, NOW + 50), NOW + 10) == RequeueState(2, NOW + 50)


def test_a_retry_waits_for_its_requeue_at_then_evicts_and_backs_off_no_further():
    # Reconcile's order: NeedsRequeueAtUpdate first; the active branch returns while requeueAt is ahead, so
    # reconcileCheckBasedEviction runs only once it has passed; the reset leaves no Retry to wait for.
    retry = admissionchecks.with_retry_backoff(_state("prov", RETRY, since=NOW), 60, 1800, draw=0.0)
    until = admissionchecks.requeue_at_update((retry,), None, NOW)
    requeue = admissionchecks.requeue_state_after(RequeueState(), until)
    assert requeue == RequeueState(0, NOW + 60)
    assert not podsready.backoff_over(requeue, NOW + 59)  # Reconcile returns RequeueAfter: no eviction yet
    assert podsready.backoff_over(requeue, NOW + 60)
    decision = admissionchecks.check_based_eviction((retry,), reserved=True, evicted=False)
    assert decision.action is Action.EVICT
    reset = admissionchecks.reset_on_eviction((retry,), NOW + 60)
    assert (reset[0].state, reset[0].retry_count, reset[0].requeue_after_seconds) == (PENDING, 1, 60)
    assert admissionchecks.requeue_at_update(reset, None, NOW + 60) is None
    # it queues by the eviction's time whatever the requeuing timestamp (GetQueueOrderTimestamp)
    wl = WorkloadBuilder("w").created(100.0).obj()
    assert workloads.queue_timestamp_after_eviction(wl, decision.reason, NOW + 60,
                                                    workloads.RequeuingTimestamp.CREATION) == NOW + 60
    # the next Retry backs off twice as long
    assert admissionchecks.with_retry_backoff(reset[0], 60, 1800, draw=0.0).requeue_after_seconds == 120


# --- the ClusterQueue's Active condition --------------------------------------------------------------

ACTIVE_CHECK = AdmissionCheck("check1", "example.com/ctl", active=True)


@pytest.mark.parametrize("rules, known, expected", [
    # clusterqueue_controller_test.go: "references missing AdmissionCheck(s): check1,check2." (sorted)
    ((("check2",), ("check1",)), {},
     ("AdmissionCheckNotFound", "Can't admit new workloads: references missing AdmissionCheck(s): check1,check2.")),
    # clusterqueue_test.go: an inactive check (its controller has not set Active=True)
    ((("check3",),), {"check3": AdmissionCheck("check3", "example.com/ctl")},
     ("AdmissionCheckInactive", "Can't admit new workloads: references inactive AdmissionCheck(s): check3.")),
    # both: the first reason, every message
    ((("gone",), ("idle",)), {"idle": AdmissionCheck("idle", "example.com/ctl")},
     ("AdmissionCheckNotFound", "Can't admit new workloads: references missing AdmissionCheck(s): gone, "
                                "references inactive AdmissionCheck(s): idle.")),
    ((("check1",),), {"check1": ACTIVE_CHECK}, None),
    ((), {}, None),
])
def test_missing_or_inactive_checks_make_the_cluster_queue_inactive(rules, known, expected):
    problems = admissionchecks.cluster_queue_problems(_cq(*rules), known)
    assert admissionchecks.inactive_reason(problems) == expected


MK = "kueue.x-k8s.io/multikueue"
PROV = "kueue.x-k8s.io/provisioning-request"


@pytest.mark.parametrize("rules, known, reasons, message", [
    ((("mk1",), ("mk2",)), {"mk1": AdmissionCheck("mk1", MK, True), "mk2": AdmissionCheck("mk2", MK, True)},
     ["MultipleMultiKueueAdmissionChecks"],
     "Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: mk1,mk2"),
    ((("mk", "flavor1"),), {"mk": AdmissionCheck("mk", MK, True)}, ["MultiKueueAdmissionCheckAppliedPerFlavor"],
     "Cannot specify MultiKueue AdmissionCheck per flavor, found: mk"),
    ((("mk",), ("pr",)), {"mk": AdmissionCheck("mk", MK, True), "pr": AdmissionCheck("pr", PROV, True)},
     ["MultiKueueWithProvisioningRequest"],
     "Cannot use both MultiKueue and ProvisioningRequest AdmissionChecks together, found: mk, pr"),
    # listing every flavor is not "per flavor"; an inactive MultiKueue check is only inactive
    ((("mk", "flavor2", "flavor1"),), {"mk": AdmissionCheck("mk", MK)}, ["AdmissionCheckInactive"],
     "references inactive AdmissionCheck(s): mk"),
])
def test_misused_multikueue_checks_make_the_cluster_queue_inactive(rules, known, reasons, message):
    problems = admissionchecks.cluster_queue_problems(_cq(*rules), known)
    assert [p.reason for p in problems] == reasons
    assert problems[-1].message == message
