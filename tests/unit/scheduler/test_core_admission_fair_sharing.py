"""Admission fair sharing: LocalQueue usage, its decay and entry penalties, and the order they give a
ClusterQueue's pending workloads.

Cases named after a Kueue v0.17.0 test case are ported from it with its numbers: TestFsAdmission
(pkg/cache/queue/cluster_queue_test.go), TestLocalQueueReconcile (pkg/controller/core/
localqueue_controller_test.go), TestScheduleForAFS (pkg/scheduler/scheduler_afs_test.go).
"""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from scheduler.core import admissionfairsharing as afs
from scheduler.core import kinds
from scheduler_builders import WorkloadBuilder, q

MINUTE = 60.0
NOW = 10_000.0


def _config(half_life=0.0, sampling=300.0, weights=()):
    return kinds.AdmissionFairSharing(True, half_life, sampling, tuple(weights))


def _usages(config, consumed):
    usages = afs.LocalQueueUsages(config)
    for name, resources in consumed.items():
        usages.initialize(("default", name), {r: q(v) for r, v in resources.items()}, NOW)
    return usages


# -- the order of pending workloads (TestFsAdmission) ---------------------------------------------

FS_ADMISSION_CASES = [
    pytest.param({"lqA": {"cpu": "2"}, "lqB": {"cpu": "1"}}, {}, (), "wlB-low",
                 id="workloads are ordered by LQ usage, instead of priorities"),
    pytest.param({"lqA": {"cpu": "1", "gpu": "10"}, "lqB": {"cpu": "1000", "gpu": "1"}}, {},
                 (("cpu", 0.0), ("gpu", 1.0)), "wlB-low",
                 id="workloads are ordered by LQ usage with respect to resource weights"),
    pytest.param({"lqA": {"cpu": "10"}, "lqB": {"cpu": "6"}}, {"lqB": 2.0}, (), "wlB-low",
                 id="workloads are ordered by LQ usage with respect to LQs' fair sharing weights"),
]


@pytest.mark.parametrize(("consumed", "queue_weights", "resource_weights", "want"), FS_ADMISSION_CASES)
def test_fs_admission_order(consumed, queue_weights, resource_weights, want):
    usages = _usages(_config(weights=resource_weights), consumed)
    pending = [WorkloadBuilder("wlA-high", "default").queue("lqA").priority(2).obj(),
               WorkloadBuilder("wlB-low", "default").queue("lqB").priority(1).obj()]
    ordered = afs.pending_order(pending, lambda lq: usages.usage(lq, queue_weights.get(lq[1], 1.0)))
    assert ordered[0].name == want


def test_fs_admission_same_usage_is_ordered_by_priority():
    """'workloads with the same LQ usage are ordered by priority'."""
    usages = _usages(_config(), {"lqA": {"cpu": "10"}})
    pending = [WorkloadBuilder("wlA-low", "default").queue("lqA").priority(1).obj(),
               WorkloadBuilder("wlA-high", "default").queue("lqA").priority(2).obj()]
    assert [w.name for w in afs.pending_order(pending, lambda lq: usages.usage(lq, 1.0))] == ["wlA-high", "wlA-low"]


def test_equal_usage_falls_back_to_timestamp_then_uid_and_sticky_wins_only_among_equals():
    pending = [WorkloadBuilder("late", "default").queue("a").created(20).obj(),
               WorkloadBuilder("early", "default").queue("b").created(10).obj(),
               WorkloadBuilder("busy", "default").queue("c").created(1).obj()]
    usage = {("default", "a"): 1.0, ("default", "b"): 1.0, ("default", "c"): 5.0}
    assert [w.name for w in afs.pending_order(pending, usage.__getitem__)] == ["early", "late", "busy"]
    assert [w.name for w in afs.pending_order(pending, usage.__getitem__, sticky=("default", "late"))] == \
        ["late", "early", "busy"]
    # a sticky workload of a busier LocalQueue does not jump the usage order (usage is compared first)
    assert afs.pending_order(pending, usage.__getitem__, sticky=("default", "busy"))[-1].name == "busy"


def test_usage_of_each_local_queue_is_read_once_per_ordering():
    reads = []
    pending = [WorkloadBuilder(f"w{i}", "default").queue("a" if i % 2 else "b").obj() for i in range(10)]
    afs.pending_order(pending, lambda lq: reads.append(lq) or 0.0)
    assert sorted(reads) == [("default", "a"), ("default", "b")]


# -- usage arithmetic ------------------------------------------------------------------------------


def test_usage_is_weighted_sum_in_units_divided_by_queue_weight():
    assert afs.queue_usage({"cpu": q("2"), "memory": q("1Gi")}, {"cpu": q("500m")}, 2.0, {"memory": 0.0}) == 1.25
    assert afs.queue_usage({"cpu": q("4")}, {}, 1.0, {"cpu": 0.5}) == 2.0


def test_weight_zero_gives_go_float_division_and_nan_sorts_first():
    assert afs.queue_usage({"cpu": q("1")}, {}, 0.0, {}) == math.inf
    assert math.isnan(afs.queue_usage({}, {}, 0.0, {}))
    assert [afs.usage_key(u)[0] for u in sorted([3.0, math.nan, 0.0], key=afs.usage_key)] == [0, 1, 1]


def test_scaling_truncates_to_a_milli_unit_like_mul_by_float():
    assert afs.scaled({"cpu": 1001}, 0.5) == {"cpu": 500}
    assert afs.scaled({"cpu": -1001}, 0.5) == {"cpu": -500}


def test_workload_requests_sum_pod_sets_without_the_pods_resource():
    workload = WorkloadBuilder("w").request(2, cpu="1").request(1, name="b", cpu="500m", memory="1Gi").obj()
    assert afs.workload_requests(workload) == {"cpu": q("2500m"), "memory": q("1Gi")}


# -- sampling the consumed resources (TestLocalQueueReconcile) -------------------------------------

RECONCILE_CASES = [
    pytest.param({"cpu": "8"}, {}, 5, 5, {"cpu": "4"},
                 id="local queue decaying usage decays if there is no running workloads"),
    pytest.param({"cpu": "8"}, {"cpu": "4"}, 5, 5, {"cpu": "6"},
                 id="local queue decaying usage sums the previous state and running workloads"),
    # running: cpu 2 in rf-1 and 2 in rf-2, GPU 4 in rf-3; the caller folds flavors
    pytest.param({"cpu": "8", "GPU": "16"}, {"cpu": "4", "GPU": "4"}, 5, 5, {"cpu": "6", "GPU": "10"},
                 id="local queue decaying usage sums the usage from different flavors and resources"),
    pytest.param({"cpu": "8"}, {"cpu": "4"}, 10, 5, {"cpu": "6827m"},
                 id="local queue decaying usage sums the previous state and running workloads half time twice "
                    "larger than sampling"),
    pytest.param({"cpu": "8"}, {}, 24 * 60, 5, {"cpu": "7980m"},
                 id="local queue decaying usage sums the previous state and running workloads with long half time"),
    pytest.param({"GPU": "8"}, {"GPU": "4"}, 10, 5, {"GPU": "6827m"},
                 id="local queue decaying usage sums the previous state and running GPU workloads half time twice "
                    "larger than sampling"),
    pytest.param({"GPU": "8"}, {"GPU": "4"}, 0, 5, {},
                 id="local queue decaying usage resets to 0 when half life is 0"),
]


@pytest.mark.parametrize(("initial", "running", "half_life_min", "elapsed_min", "want"), RECONCILE_CASES)
def test_local_queue_reconcile(initial, running, half_life_min, elapsed_min, want):
    usages = afs.LocalQueueUsages(_config(half_life_min * MINUTE, 5 * MINUTE))
    lq = ("default", "lq")
    usages.initialize(lq, {r: q(v) for r, v in initial.items()}, NOW - elapsed_min * MINUTE)
    now = NOW
    assert usages.sample_due(lq, now)
    written = usages.sample(lq, {r: q(v) for r, v in running.items()}, now)
    assert written == {r: q(v) for r, v in want.items()}
    assert usages.consumed(lq).last_update == now


def test_not_resampled_before_the_interval_unless_a_penalty_was_pushed():
    """'local queue decaying usage is not reconciled if not enough time has passed'."""
    usages = afs.LocalQueueUsages(_config(5 * MINUTE, 5 * MINUTE))
    lq = ("default", "test-queue")
    usages.initialize(lq, {"cpu": q("8")}, NOW - 4 * MINUTE)
    assert not usages.sample_due(lq, NOW)
    assert usages.sample_due(lq, NOW + MINUTE)
    usages.assumed(lq, {"cpu": q("1")})
    assert usages.sample_due(lq, NOW)
    assert not usages.sample_due(("default", "unknown"), NOW + MINUTE)


def test_initialize_takes_the_admitted_usage_once():
    usages = afs.LocalQueueUsages(_config(MINUTE))
    assert usages.initialize(("ns", "lq"), {"cpu": 1000}, NOW)
    assert not usages.initialize(("ns", "lq"), {"cpu": 9000}, NOW + 1)
    assert usages.consumed(("ns", "lq")).resources == {"cpu": 1000}


# -- entry penalties (TestScheduleForAFS: halfLife 10 s, sampling 1 s) -----------------------------

AFS_SCHEDULE = _config(half_life=10.0, sampling=1.0)


def test_entry_penalty_is_requests_times_one_sampling_intervals_decay():
    # 1 - 0.5^(1/10) = 0.06696700846; 8 cpu -> 535.736 milli, truncated
    assert afs.entry_penalty({"cpu": q("8")}, AFS_SCHEDULE) == {"cpu": 535}
    assert afs.entry_penalty({"cpu": q("8")}, _config(half_life=0.0)) == {"cpu": 0}


def test_penalty_of_an_assumed_workload_lets_the_other_local_queue_go_next():
    """'admits one workload from each localqueue when quota is limited': with equal usage the first
    admission's penalty sends the next head to the other LocalQueue."""
    usages = _usages(AFS_SCHEDULE, {"lq-a": {}, "lq-b": {}})
    pending = [WorkloadBuilder(f"wl-{lq}{i}", "default").queue(f"lq-{lq}").created(i).request(cpu="4").obj()
               for lq in "ab" for i in (1, 2)]
    admitted = []
    for _ in range(2):
        head = afs.pending_order(pending, lambda lq: usages.usage(lq, 1.0))[0]
        usages.assumed(head.local_queue, afs.workload_requests(head))
        pending.remove(head)
        admitted.append(head.name)
    assert admitted == ["wl-a1", "wl-b1"]
    assert usages.has_pending_penalties([("default", "lq-a")])


def test_admission_moves_the_penalty_into_consumed_and_a_failed_write_takes_it_back():
    usages = _usages(AFS_SCHEDULE, {"lq-a": {"cpu": "8"}})
    lq, requests = ("default", "lq-a"), {"cpu": q("8")}
    usages.assumed(lq, requests)
    assert usages.penalty(lq) == {"cpu": 535}
    usages.admitted(lq, requests, {"cpu": q("8")}, NOW + 1)
    # consumed 8 cpu decayed 1 s towards 8 cpu stays 8 cpu (7464 + 535), plus the penalty
    assert usages.consumed(lq).resources == {"cpu": 7464 + 535 + 535}
    assert usages.penalty(lq) == {"cpu": 0}
    # an emptied entry still counts as pending: Kueue's IsZero is true only for an empty list
    assert usages.has_pending_penalties([lq])
    usages.assumed(lq, requests)
    usages.admission_failed(lq, requests)
    assert usages.penalty(lq) == {"cpu": 0}
    usages.forget(lq)
    assert usages.consumed(lq) is None and not usages.has_pending_penalties([lq])


def test_admitted_for_an_unknown_queue_starts_from_now():
    usages = afs.LocalQueueUsages(AFS_SCHEDULE)
    usages.admitted(("ns", "new"), {"cpu": q("8")}, {"cpu": q("8")}, NOW)
    # elapsed 0: alpha 0, the old (empty) usage stays, only the penalty goes in
    assert usages.consumed(("ns", "new")).resources == {"cpu": 535}
    assert usages.penalty(("ns", "new")) == {"cpu": -535}


# -- preemption candidates (CandidatesOrdering step 2) ---------------------------------------------


def test_preemption_candidates_of_a_local_queue_with_higher_usage_go_first():
    keys = {name: afs.candidate_usage_key(usage) for name, usage in (("low", 1.0), ("high", 5.0), ("off", None))}
    assert sorted(keys, key=keys.get) == ["high", "low", "off"]
    assert afs.candidate_usage_key(math.nan) == 0.0


def test_configuration_is_validated_as_kueue_does():
    with pytest.raises(ValueError, match="usageHalfLifeTime"):
        kinds.AdmissionFairSharing(True, -1.0)
    with pytest.raises(ValueError, match="usageSamplingInterval"):
        kinds.AdmissionFairSharing(True, 1.0, 0.0)
    with pytest.raises(ValueError, match=r"resourceWeights\[cpu\]"):
        kinds.AdmissionFairSharing(True, 1.0, 1.0, (("cpu", -1.0),))


# -- Kueue's fields ----------------------------------------------------------------------------------


def test_admission_mode_and_local_queue_weight_are_read_from_kueues_fields():
    from scheduler.core import conversion

    on = conversion.cluster_queue_from_dict(
        {"metadata": {"name": "cq"}, "spec": {"admissionScope": {"admissionMode": "UsageBasedAdmissionFairSharing"}}})
    off = conversion.cluster_queue_from_dict(
        {"metadata": {"name": "cq"}, "spec": {"admissionScope": {"admissionMode": "NoAdmissionFairSharing"}}})
    assert on.usage_based_admission and not off.usage_based_admission
    assert not conversion.cluster_queue_from_dict({"metadata": {"name": "cq"}, "spec": {}}).usage_based_admission
    lq = conversion.local_queue_from_dict({"metadata": {"name": "lq", "namespace": "ns"},
                                           "spec": {"clusterQueue": "cq", "fairSharing": {"weight": "500m"}}})
    assert lq.fair_weight == 0.5
    assert conversion.local_queue_from_dict({"metadata": {"name": "lq"}, "spec": {}}).fair_weight == 1.0


def test_our_crds_keep_the_admission_fair_sharing_fields():
    from scheduler.api import crds

    schemas = {c["spec"]["names"]["kind"]: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
               for c in crds.all_crds() if c["spec"]["group"] == "kueue.x-k8s.io"}
    scope = schemas["ClusterQueue"]["spec"]["properties"]["admissionScope"]["properties"]["admissionMode"]
    assert scope["enum"] == ["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"]
    assert "weight" in schemas["LocalQueue"]["spec"]["properties"]["fairSharing"]["properties"]
    status = schemas["LocalQueue"]["status"]["properties"]["fairSharing"]["properties"]
    assert set(status["admissionFairSharingStatus"]["properties"]) == {"consumedResources", "lastUpdate"}


# -- through the queue manager and a cycle (TestScheduleForAFS: cq1 8 cpu, halfLife 10 s, sampling 1 s) --


def _afs_manager(initial_usage, positions="indexed"):
    from scheduler.core.queues import QueueManager
    from scheduler_builders import ClusterQueueBuilder

    manager = QueueManager(positions=positions, requeue_batch_seconds=0.0, admission_fair_sharing=AFS_SCHEDULE)
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    cq = ClusterQueueBuilder("cq1").flavors(("default", {"cpu": "8", "memory": "8Gi"})).obj()
    manager.add_cluster_queue(kinds.ClusterQueue(**{**{f: getattr(cq, f) for f in cq.__slots__},
                                                    "usage_based_admission": True}))
    for lq in ("lq-a", "lq-b", "lq-c"):
        manager.add_local_queue(kinds.LocalQueue("default", lq, "cq1"))
    for lq, cpu in initial_usage.items():
        manager.cache.admission_fairness.usages.initialize(("default", lq), {"cpu": q(cpu)}, NOW)
    return manager


def _cycles(manager, workloads, count):
    from scheduler.core import decisions, scheduling

    for workload in workloads:
        manager.add_workload(workload)
    admitted = []
    for _ in range(count):
        admitted += [d.workload.name for d in scheduling.run_cycle(manager, NOW) if isinstance(d, decisions.Admit)]
    return admitted


def _wl(name, lq, created, cpu):
    return WorkloadBuilder(name, "default").queue(lq).created(NOW + created).request(cpu=cpu).obj()


def test_schedule_admits_workload_from_less_active_local_queue():
    """'admits workload from less active localqueue'."""
    manager = _afs_manager({"lq-a": "8", "lq-b": "2"})
    assert _cycles(manager, [_wl("wl-a1", "lq-a", 0, "8"), _wl("wl-b1", "lq-b", 1, "8")], 2) == ["wl-b1"]


def test_schedule_admits_one_workload_from_each_local_queue_when_quota_is_limited():
    """'admits one workload from each localqueue when quota is limited'."""
    manager = _afs_manager({"lq-a": "4", "lq-b": "4"})
    pending = [_wl("wl-a1", "lq-a", 0, "4"), _wl("wl-a2", "lq-a", 1, "4"), _wl("wl-b1", "lq-b", 2, "4"),
               _wl("wl-b2", "lq-b", 3, "4")]
    assert _cycles(manager, pending, 4) == ["wl-a1", "wl-b1"]


def test_schedule_admits_workload_from_lq_b_with_uninitialized_cache():
    """'admits workload from lq-b with uninitialized cache'."""
    manager = _afs_manager({"lq-a": "8"})
    assert _cycles(manager, [_wl("wl-a1", "lq-a", 0, "8"), _wl("wl-b1", "lq-b", 1, "8")], 2) == ["wl-b1"]


def test_without_the_admission_mode_the_queue_keeps_its_usual_order():
    """'without AFS: classic admission decision ignores queue usage' (here: the ClusterQueue does not ask)."""
    manager = _afs_manager({"lq-a": "8", "lq-b": "2"})
    cq = manager.cache.quotas.cluster_queues["cq1"]
    manager.add_cluster_queue(kinds.ClusterQueue(**{**{f: getattr(cq, f) for f in cq.__slots__},
                                                    "usage_based_admission": False}))
    assert _cycles(manager, [_wl("wl-a1", "lq-a", 0, "8"), _wl("wl-b1", "lq-b", 1, "8")], 2) == ["wl-a1"]


@pytest.mark.parametrize("positions", ["indexed", "snapshot"])
def test_visibility_positions_follow_local_queue_usage_whatever_the_strategy(positions):
    manager = _afs_manager({"lq-a": "8", "lq-b": "2", "lq-c": "4"}, positions=positions)
    for workload in [_wl("a1", "lq-a", 0, "16"), _wl("b1", "lq-b", 1, "16"), _wl("c1", "lq-c", 2, "16"),
                     _wl("b2", "lq-b", 3, "16")]:
        manager.add_workload(workload)
    assert [w.name for w in manager.pending_lists.pending_in_order("cq1")] == ["b1", "b2", "c1", "a1"]
    page = manager.pending_lists.summary_for_cluster_queue("cq1")
    assert [(i.name, i.position_in_cluster_queue, i.position_in_local_queue) for i in page] == \
        [("b1", 0, 0), ("b2", 1, 1), ("c1", 2, 0), ("a1", 3, 0)]
    page = manager.pending_lists.summary_for_local_queue("default", "lq-b")
    assert [(i.name, i.position_in_cluster_queue) for i in page] == [("b1", 0), ("b2", 1)]
    assert manager.pending_lists.position_of(("default", "a1")) == (3, 0)


def test_a_sample_that_moves_the_order_renews_the_queues_generation():
    manager = _afs_manager({"lq-a": "8", "lq-b": "2"})
    manager.add_workload(_wl("a1", "lq-a", 0, "16"))
    assert set(manager.sample_local_queues(NOW)) == {("default", "lq-c")}  # first sight of lq-c only
    before = manager.pending_lists.generation("cq1")
    assert manager.sample_local_queues(NOW + 0.5) == {}  # no workload event, interval not passed
    assert manager.pending_lists.generation("cq1") == before
    written = manager.sample_local_queues(NOW + 1.0)
    # 1 s of a 10 s half-life towards no admitted usage: 8 cpu -> 7464m (truncated), 2 -> 1866m
    assert written[("default", "lq-a")] == {"cpu": 7464} and written[("default", "lq-b")] == {"cpu": 1866}
    assert manager.pending_lists.generation("cq1") != before


def test_admitted_usage_is_folded_per_local_queue_and_released_when_the_workload_leaves():
    manager = _afs_manager({})
    manager.sample_local_queues(NOW)  # first sight: every LocalQueue starts at its admitted usage (none)
    assert _cycles(manager, [_wl("a1", "lq-a", 0, "4")], 1) == ["a1"]
    assert manager.cache.admission_fairness.admitted_usage(("default", "lq-a")) == {"cpu": q("4")}
    manager.mark_finished(("default", "a1"))
    assert manager.cache.admission_fairness.admitted_usage(("default", "lq-a")) == {"cpu": 0}


# -- preemption candidates (TestCandidatesOrdering) -------------------------------------------------


def _record(name, cq, lq, priority, usage, admitted_at=NOW):
    from scheduler.core.victims import AdmittedWorkload

    workload = WorkloadBuilder(name, "default").queue(lq).priority(priority).obj()
    workload.admitted_at = admitted_at
    return AdmittedWorkload(workload, cq, {}, local_queue_usage=usage)


@pytest.mark.parametrize(("records", "want"), [
    pytest.param([("low_lq_usage", "preemptor", "low_usage_lq", 1, 0.1),
                  ("mid_lq_usage", "preemptor", "mid_usage_lq", 10, 0.5)],
                 ["mid_lq_usage", "low_lq_usage"], id="workloads with higher LQ usage first"),
    pytest.param([("mid_lq_usage", "preemptor", "mid_usage_lq", 10, 0.5),
                  ("high_lq_usage_different_cq", "different_cq", "high_usage_lq_different_cq", 1, 1.0)],
                 ["high_lq_usage_different_cq", "mid_lq_usage"],
                 id="workloads from different CQ are sorted based on priority and timestamp"),
])
def test_candidates_ordering(records, want):
    from scheduler.core.victims import candidate_order

    candidates = [_record(*r) for r in records]
    assert [c.workload.name for c in sorted(candidates, key=lambda c: candidate_order(c, "preemptor"))] == want


def test_within_cluster_queue_preemption_takes_from_the_busier_local_queue_first():
    """Same priority: classically the most recently admitted goes first (y); by usage, lq-a's x."""
    from scheduler.core import decisions, scheduling
    from scheduler.core.queues import QueueManager
    from scheduler_builders import ClusterQueueBuilder, admit

    manager = QueueManager(requeue_batch_seconds=0.0, admission_fair_sharing=AFS_SCHEDULE)
    manager.add_resource_flavor(kinds.ResourceFlavor("default"))
    cq = ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).preemption(within="LowerPriority").obj()
    manager.add_cluster_queue(kinds.ClusterQueue(**{**{f: getattr(cq, f) for f in cq.__slots__},
                                                    "usage_based_admission": True}))
    for lq in ("lq-a", "lq-b", "lq-c"):
        manager.add_local_queue(kinds.LocalQueue("default", lq, "cq"))
    manager.cache.admission_fairness.usages.initialize(("default", "lq-a"), {"cpu": q("30")}, NOW)
    # admit() dates the admission at creation: y is the most recently admitted
    admit(manager, WorkloadBuilder("x", "default").queue("lq-a").created(NOW).request(cpu="2").obj(), "cq")
    admit(manager, WorkloadBuilder("y", "default").queue("lq-b").created(NOW + 5).request(cpu="2").obj(), "cq")
    manager.add_workload(WorkloadBuilder("p", "default").queue("lq-c").priority(10).request(cpu="2").obj())
    [decision] = scheduling.decide_cycle(manager)
    assert isinstance(decision, decisions.Preempt)
    assert [t.workload.name for t in decision.targets] == ["x"]


# -- the LocalQueue status Kueue writes at each sample -----------------------------------------------


def test_local_queue_status_carries_its_consumed_resources_once_sampled():
    from scheduler.controller import statuses
    from scheduler.core import queuestatus

    manager = _afs_manager({"lq-a": "8"})
    _, before = queuestatus.queue_statuses(manager)
    assert before[("default", "lq-a")].consumed.resources == (("cpu", 8000),)
    assert before[("default", "lq-b")].consumed is None  # not sampled yet
    manager.sample_local_queues(NOW + 1.0)
    _, after = queuestatus.queue_statuses(manager)
    status = after[("default", "lq-a")]
    assert status.consumed == queuestatus.ConsumedResources((("cpu", 7464),), NOW + 1.0)
    assert status != before[("default", "lq-a")]  # a sample is a change: the status is written again
    body = statuses.queue_status("LocalQueue", "lq-a", "default", status, None, NOW + 2)["status"]
    assert body["fairSharing"] == {"admissionFairSharingStatus": {
        "consumedResources": {"cpu": "7464m"}, "lastUpdate": statuses.rfc3339(NOW + 1.0)}}
    cq_status, _ = queuestatus.queue_statuses(manager)
    cq_body = statuses.queue_status("ClusterQueue", "cq1", None, cq_status["cq1"], None, NOW)["status"]
    assert "fairSharing" not in cq_body


def test_no_fair_sharing_status_where_the_cluster_queue_does_not_order_by_usage():
    from scheduler.core import queuestatus

    manager = _afs_manager({"lq-a": "8"})
    cq = manager.cache.quotas.cluster_queues["cq1"]
    manager.add_cluster_queue(kinds.ClusterQueue(**{**{f: getattr(cq, f) for f in cq.__slots__},
                                                    "usage_based_admission": False}))
    _, local_queues = queuestatus.queue_statuses(manager)
    assert all(status.consumed is None for status in local_queues.values())


# -- the head and the positions tell the same order --------------------------------------------------

_PENDING = st.lists(st.tuples(st.sampled_from(["lq-a", "lq-b", "lq-c"]), st.integers(0, 2), st.integers(0, 5)),
                    min_size=1, max_size=12)
_USAGE = st.dictionaries(st.sampled_from(["lq-a", "lq-b", "lq-c"]), st.sampled_from(["0", "1", "2", "500m"]))


@settings(max_examples=60, deadline=None)
@given(pending=_PENDING, usage=_USAGE, positions=st.sampled_from(["indexed", "snapshot"]))
def test_the_head_is_the_first_of_the_positions_and_pages_agree(pending, usage, positions):
    manager = _afs_manager(usage, positions=positions)
    for i, (lq, priority, created) in enumerate(pending):
        manager.add_workload(WorkloadBuilder(f"w{i}", "default").queue(lq).priority(priority).created(NOW + created)
                             .uid(f"u{i:02d}").request(cpu="16").obj())
    order = [w.name for w in manager.pending_lists.pending_in_order("cq1")]
    [(_, head)] = manager.heads()
    assert head.name == order[0]
    assert [i.name for i in manager.pending_lists.summary_for_cluster_queue("cq1")] == order
    for lq in ("lq-a", "lq-b", "lq-c"):
        mine = [i.name for i in manager.pending_lists.summary_for_local_queue("default", lq)]
        assert mine == [name for name in order if manager.workload(("default", name)).queue_name == lq]
    assert [manager.pending_lists.position_of(("default", name))[0] for name in order] == list(range(len(order)))
