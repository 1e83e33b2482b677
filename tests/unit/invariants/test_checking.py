"""Each invariant, on constructed objects that keep it and objects that break it."""

from __future__ import annotations

import pytest

from harness.invariants import checking
from harness.invariants.checking import Snapshot

T0, T1, T2 = "2026-01-01T00:00:00Z", "2026-01-01T00:01:00Z", "2026-01-01T00:02:00Z"


def cq(name, cohort="", nominal=10, borrowing=None, lending=None, flavor="default", status=None, stop=None):
    resource = {"name": "cpu", "nominalQuota": nominal}
    if borrowing is not None:
        resource["borrowingLimit"] = borrowing
    if lending is not None:
        resource["lendingLimit"] = lending
    spec = {"resourceGroups": [{"coveredResources": ["cpu"], "flavors": [{"name": flavor, "resources": [resource]}]}]}
    if cohort:
        spec["cohortName"] = cohort
    if stop:
        spec["stopPolicy"] = stop
    return {"metadata": {"name": name}, "spec": spec, **({"status": status} if status is not None else {})}


def cohort(name, parent="", nominal=None):
    spec = {"parentName": parent} if parent else {}
    if nominal is not None:
        spec["resourceGroups"] = [{"coveredResources": ["cpu"],
                                   "flavors": [{"name": "default", "resources": [{"name": "cpu", "nominalQuota": nominal}]}]}]
    return {"metadata": {"name": name}, "spec": spec}


def lq(name, cluster_queue, ns="team", pending=None, stop=None):
    obj = {"metadata": {"name": name, "namespace": ns}, "spec": {"clusterQueue": cluster_queue}}
    if stop:
        obj["spec"]["stopPolicy"] = stop
    if pending is not None:
        obj["status"] = {"pendingWorkloads": pending}
    return obj


def wl(name, queue="lq", ns="team", admitted_to=None, cpu="1", flavor="default", finished=False, reserved_at=T0,
       conditions=(), uid=None, active=True, requeues=None):
    obj = {"metadata": {"name": name, "namespace": ns, "uid": uid or f"uid-{name}"},
           "spec": {"queueName": queue, "active": active}, "status": {"conditions": list(conditions)}}
    if admitted_to:
        obj["status"]["admission"] = {"clusterQueue": admitted_to, "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": flavor}, "resourceUsage": {"cpu": cpu}, "count": 1}]}
        obj["status"]["conditions"].append({"type": "QuotaReserved", "status": "True", "lastTransitionTime": reserved_at})
    if finished:
        obj["status"]["conditions"].append({"type": "Finished", "status": "True", "lastTransitionTime": T1})
    if requeues is not None:
        obj["status"]["requeueState"] = {"count": requeues}
    return obj


def usage_status(total, reserving, pending=0):
    return {"pendingWorkloads": pending, "reservingWorkloads": reserving, "admittedWorkloads": reserving,
            "flavorsReservation": [{"name": "default", "resources": [{"name": "cpu", "total": total, "borrowed": "0"}]}]}


# -- quota within limits --------------------------------------------------------------------


@pytest.mark.parametrize(("queue", "admitted", "broken"), [
    (cq("a", nominal=4), ["2", "2"], False),
    (cq("a", nominal=4), ["2", "2500m"], True),                        # no cohort: nominal is the bound
    (cq("a", cohort="c", nominal=4, borrowing=2), ["3", "3"], False),
    (cq("a", cohort="c", nominal=4, borrowing=2), ["3", "3100m"], True),  # nominal + borrowingLimit
    (cq("a", cohort="c", nominal=4), ["30"], False),                    # no limit: the cohort check bounds it
])
def test_admitted_usage_stays_within_nominal_and_borrowing_limit(queue, admitted, broken):
    snapshot = Snapshot([queue], [cohort("c", nominal=100)], [],
                        [wl(f"w{i}", admitted_to="a", cpu=cpu) for i, cpu in enumerate(admitted)])
    found = checking.check_quota(snapshot)
    assert bool(found) == broken
    if broken:
        assert found[0].objects[:2] == ("ClusterQueue/a", "Workload/team/w0") and "default/cpu" in found[0].detail


def test_finished_and_unreserved_workloads_hold_no_quota():
    evicted = wl("evicted", admitted_to="a", cpu="5")
    evicted["status"]["conditions"][-1]["status"] = "False"
    snapshot = Snapshot([cq("a", nominal=4)], [], [], [wl("done", admitted_to="a", cpu="5", finished=True), evicted,
                                                       wl("running", admitted_to="a", cpu="4")])
    assert checking.check_quota(snapshot) == []


def test_usage_of_a_flavor_the_queue_has_no_quota_for_is_a_violation():
    snapshot = Snapshot([cq("a", nominal=4)], [], [], [wl("w", admitted_to="a", cpu="1", flavor="spot")])
    [found] = checking.check_quota(snapshot)
    assert "spot/cpu: admitted 1 > 0" in found.detail


# -- cohorts --------------------------------------------------------------------------------


def test_cohort_members_borrow_no_more_than_the_others_lend():
    queues = [cq("a", cohort="c", nominal=4), cq("b", cohort="c", nominal=4, lending=1)]
    # b keeps 3 for itself and lends 1; a lends all 4; the cohort has 2 of its own: 7 to lend
    fits = Snapshot(queues, [cohort("c", nominal=2)], [], [wl("w1", admitted_to="a", cpu="6"), wl("w2", admitted_to="b", cpu="1")])
    assert checking.check_cohorts(fits) == []
    over = Snapshot(queues, [cohort("c", nominal=2)], [], [wl("w1", admitted_to="a", cpu="8"), wl("w2", admitted_to="b", cpu="1")])
    [found] = checking.check_cohorts(over)
    assert found.objects == ("Cohort/c", "ClusterQueue/a", "ClusterQueue/b")
    assert "use 8 above their guaranteed quota, the cohort can lend 7" in found.detail


def test_a_cohort_tree_is_checked_at_its_root_and_a_parent_cycle_ends():
    queues = [cq("a", cohort="left", nominal=2), cq("b", cohort="right", nominal=2)]
    tree = [cohort("left", parent="root"), cohort("right", parent="root"), cohort("root", nominal=1)]
    assert checking.check_cohorts(Snapshot(queues, tree, [], [wl("w", admitted_to="a", cpu="5")])) == []
    [found] = checking.check_cohorts(Snapshot(queues, tree, [], [wl("w", admitted_to="a", cpu="5500m")]))
    assert found.objects[0] == "Cohort/root"
    cycle = [cohort("left", parent="right"), cohort("right", parent="left")]
    assert checking.check_cohorts(Snapshot(queues, cycle, [], [wl("w", admitted_to="a", cpu="4")])) == []


# -- finished quota released ------------------------------------------------------------------


def test_a_finished_workload_still_counted_in_the_queue_status_is_named():
    workloads = [wl("running", admitted_to="a", cpu="2"), wl("done", admitted_to="a", cpu="3", finished=True)]
    released = Snapshot([cq("a", status=usage_status("2", 1))], [], [], workloads)
    assert checking.check_released(released) == []
    leaked = Snapshot([cq("a", status=usage_status("5", 2))], [], [], workloads)
    [found] = checking.check_released(leaked)
    assert found.objects == ("ClusterQueue/a", "Workload/team/done")
    assert found.detail == "default/cpu: status 5, held 2; reservingWorkloads 2, holding 1"


def test_a_queue_without_a_status_yet_is_not_judged():
    assert checking.check_released(Snapshot([cq("a")], [], [], [wl("w", admitted_to="a")])) == []


# -- pending counts -------------------------------------------------------------------------


def test_pending_counts_of_cluster_and_local_queues_match_the_waiting_workloads():
    workloads = [wl("p1"), wl("p2"), wl("p3", queue="other"), wl("admitted", admitted_to="a"), wl("done", finished=True),
                 wl("inactive", active=False), wl("held", conditions=[{"type": "Requeued", "status": "False"}]),
                 wl("nowhere", queue="missing")]
    queues = [cq("a", status={"pendingWorkloads": 3})]
    good = Snapshot(queues, [], [lq("lq", "a", pending=2), lq("other", "a", pending=1)], workloads)
    assert checking.check_pending(good) == []
    bad = Snapshot([cq("a", status={"pendingWorkloads": 4})], [], [lq("lq", "a", pending=2), lq("other", "a", pending=0)],
                   workloads)
    found = checking.check_pending(bad)
    assert [v.objects for v in found] == [("ClusterQueue/a",), ("LocalQueue/team/other",)]
    assert found[0].detail == "status.pendingWorkloads 4, pending Workloads 3"


def test_stopped_queues_are_not_judged_and_their_workloads_leave_the_cluster_queue():
    snapshot = Snapshot([cq("a", status={"pendingWorkloads": 1})], [],
                        [lq("lq", "a", pending=5, stop="Hold"), lq("other", "a", pending=1)], [wl("p1"), wl("p2", queue="other")])
    assert checking.check_pending(snapshot) == []


# -- admitted once ----------------------------------------------------------------------------


def test_readmission_without_an_eviction_between_is_a_violation():
    history = checking.AdmissionHistory()
    assert history.observe([wl("w", admitted_to="a", reserved_at=T0)]) == []
    assert history.observe([wl("w", admitted_to="a", reserved_at=T0)]) == []  # the same admission, seen again
    [found] = history.observe([wl("w", admitted_to="a", flavor="spot", reserved_at=T0)])
    assert found.check == checking.ADMITTED_ONCE and found.objects == ("Workload/team/w",)
    history = checking.AdmissionHistory()
    history.observe([wl("w", admitted_to="a", reserved_at=T0)])
    assert len(history.observe([wl("w", admitted_to="a", reserved_at=T2)])) == 1


@pytest.mark.parametrize("evidence", [
    {"conditions": [{"type": "Evicted", "status": "False", "reason": "QuotaReserved", "lastTransitionTime": T1}]},
    {"conditions": [{"type": "Requeued", "status": "True", "lastTransitionTime": T1}]},
    {"requeues": 1},
])
def test_readmission_after_an_eviction_is_fine(evidence):
    history = checking.AdmissionHistory()
    history.observe([wl("w", admitted_to="a", reserved_at=T0)])
    assert history.observe([wl("w", admitted_to="a", reserved_at=T2, **evidence)]) == []


def test_pending_between_two_admissions_or_a_new_uid_is_fine():
    history = checking.AdmissionHistory()
    history.observe([wl("w", admitted_to="a", reserved_at=T0)])
    history.observe([wl("w")])
    assert history.observe([wl("w", admitted_to="a", reserved_at=T2)]) == []
    assert history.observe([wl("w", admitted_to="b", reserved_at=T2, uid="recreated")]) == []
