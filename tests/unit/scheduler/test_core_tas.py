"""Topology-aware scheduling through whole cycles: cases of Kueue v0.17.0's scheduler_tas_test.go
(TestScheduleForTAS, TestScheduleForTASCohorts), with their topologies, flavors and messages."""

from __future__ import annotations

import dataclasses

import pytest

from scheduler.core import kinds, topologies, workloads
from scheduler.core.decisions import NO_LONGER_FITS, Admit, Park, Preempt, Wait
from scheduler.core.scheduling import run_cycle
from scheduler.core.topologies import HOSTNAME_LABEL, DomainAssignment, TopologyAssignment
from scheduler_builders import ClusterQueueBuilder, WorkloadBuilder, manager_with, q

BLOCK = "cloud.com/topology-block"
RACK = "cloud.provider.com/rack"
SINGLE_LEVEL = topologies.Topology("tas-single-level", (HOSTNAME_LABEL,))
THREE_LEVELS = topologies.Topology("tas-three-level", (BLOCK, RACK, HOSTNAME_LABEL))
TAS_FLAVOR = kinds.ResourceFlavor("tas-default", {"tas-node": "true"}, topology_name=SINGLE_LEVEL.name)


def _node(name: str, cpu: str = "1", memory: str = "1Gi", pods: str = "10", **levels: str) -> topologies.Node:
    labels = {"tas-node": "true", HOSTNAME_LABEL: name, **{k.replace("_", "/"): v for k, v in levels.items()}}
    return topologies.Node(name, labels, {"cpu": q(cpu), "memory": q(memory), "pods": q(pods)})


SINGLE_NODE = [_node("x1")]


def _manager(cq, nodes=SINGLE_NODE, flavors=(TAS_FLAVOR,), topology_list=(SINGLE_LEVEL,), **settings):
    manager = manager_with(cq, flavors=(), **settings)
    for topology in topology_list:
        manager.cache.topologies.set_topology(topology)
    for node in nodes:
        manager.cache.topologies.set_node(node.name, node)
    for flavor in flavors:
        manager.add_resource_flavor(flavor)
    return manager


def _tas_queue(*flavors: str):
    return ClusterQueueBuilder("tas-main").flavors(*((f, {"cpu": "50"}) for f in flavors)).obj()


def _on(*hosts: tuple[str, int]) -> TopologyAssignment:
    return TopologyAssignment((HOSTNAME_LABEL,), tuple(DomainAssignment((h,), n) for h, n in hosts))


def _only(decisions, kind):
    [decision] = decisions
    assert isinstance(decision, kind), decision
    return decision


def test_workload_required_tas_gets_scheduled():
    manager = _manager(_tas_queue("tas-default"))
    manager.add_workload(WorkloadBuilder("foo").request(1, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj())
    [assignment] = _only(run_cycle(manager, now=1), Admit).admission.pod_set_assignments
    assert assignment.flavors == {"cpu": "tas-default"}
    assert assignment.topology_assignment == _on(("x1", 1))


def test_workload_which_does_not_specify_tas_uses_the_only_tas_flavor():
    manager = _manager(_tas_queue("tas-default"), flavors=(TAS_FLAVOR, kinds.ResourceFlavor("default")))
    manager.add_workload(WorkloadBuilder("foo").request(1, "one", cpu="1").obj())
    [assignment] = _only(run_cycle(manager, now=1), Admit).admission.pod_set_assignments
    assert assignment.topology_assignment == _on(("x1", 1))


def test_workload_requiring_tas_skips_the_non_tas_flavor():
    manager = _manager(_tas_queue("default", "tas-default"), flavors=(TAS_FLAVOR, kinds.ResourceFlavor("default")))
    manager.add_workload(WorkloadBuilder("foo").request(1, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj())
    [assignment] = _only(run_cycle(manager, now=1), Admit).admission.pod_set_assignments
    assert assignment.flavors == {"cpu": "tas-default"} and assignment.topology_assignment == _on(("x1", 1))


def test_workload_which_does_not_need_tas_skips_the_tas_flavor():
    manager = _manager(_tas_queue("tas-default", "default"), flavors=(TAS_FLAVOR, kinds.ResourceFlavor("default")))
    manager.add_workload(WorkloadBuilder("foo").request(1, "one", cpu="1").obj())
    [assignment] = _only(run_cycle(manager, now=1), Admit).admission.pod_set_assignments
    assert assignment.flavors == {"cpu": "default"} and assignment.topology_assignment is None


def test_workload_with_mixed_pod_sets():
    manager = _manager(_tas_queue("tas-default", "default"), flavors=(TAS_FLAVOR, kinds.ResourceFlavor("default")))
    manager.add_workload(WorkloadBuilder("foo").request(1, "launcher", cpu="500m")
                         .request(1, "worker", cpu="500m").topology(required=HOSTNAME_LABEL).obj())
    launcher, worker = _only(run_cycle(manager, now=1), Admit).admission.pod_set_assignments
    assert (launcher.flavors, launcher.topology_assignment) == ({"cpu": "default"}, None)
    assert (worker.flavors, worker.topology_assignment) == ({"cpu": "tas-default"}, _on(("x1", 1)))


@pytest.mark.parametrize("case, pods, topology_request, admitted, message", [
    ("requests topology level which is not present in topology", 1, {"required": "cloud.com/non-existing"}, (),
     "couldn't assign flavors to pod set one: Flavor \"tas-default\" does not contain the requested level"),
    ("does not fit within the node capacity", 2, {"required": HOSTNAME_LABEL}, (),
     "couldn't assign flavors to pod set one: topology \"tas-single-level\" allows to fit only 1 out of 2 pod(s)"),
    ("the node capacity is already used by another TAS workload", 1, {"required": HOSTNAME_LABEL}, (("x1", 1),),
     "couldn't assign flavors to pod set one: topology \"tas-single-level\" doesn't allow to fit any of 1 pod(s). "
     "Total nodes: 1; excluded: resource \"cpu\": 1"),
])
def test_a_pod_set_that_cannot_be_placed_is_pending_with_kueues_message(case, pods, topology_request, admitted, message):
    manager = _manager(_tas_queue("tas-default"))
    if admitted:
        bar = WorkloadBuilder("bar-admitted").request(1, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj()
        psa = workloads.PodSetAssignment("one", {"cpu": "tas-default"}, {"cpu": q("1")}, 1, _on(*admitted))
        manager.add_workload(dataclasses.replace(bar, admission=workloads.Admission("tas-main", (psa,)), admitted_at=1.0))
    manager.add_workload(WorkloadBuilder("foo").request(pods, "one", cpu="1").topology(**topology_request).obj())
    decision = _only(run_cycle(manager, now=2), Park)
    assert decision.message == message, case
    assert manager.cache.admitted(("ns", "foo")) is None


def _racks():
    """b1: r1 {x1}, r2 {x2, x3, x4}; b2: r1 {x5}, r2 {x6} (TestScheduleForTAS's defaultNodes), 1 cpu each."""
    places = {"x1": ("b1", "r1"), "x2": ("b1", "r2"), "x3": ("b1", "r2"), "x4": ("b1", "r2"),
              "x5": ("b2", "r1"), "x6": ("b2", "r2")}
    return [_node(h, **{"cloud.com/topology-block": b, "cloud.provider.com/rack": r}) for h, (b, r) in places.items()]


THREE_LEVEL_FLAVOR = kinds.ResourceFlavor("tas-default", {"tas-node": "true"}, topology_name=THREE_LEVELS.name)


def test_rack_required_takes_the_rack_that_holds_the_pods_best():
    manager = _manager(_tas_queue("tas-default"), _racks(), (THREE_LEVEL_FLAVOR,), (THREE_LEVELS,))
    manager.add_workload(WorkloadBuilder("foo").request(3, "one", cpu="1").topology(required=RACK).obj())
    [assignment] = _only(run_cycle(manager, now=1), Admit).admission.pod_set_assignments
    assert assignment.topology_assignment == _on(("x2", 1), ("x3", 1), ("x4", 1))


@pytest.mark.parametrize("recompute, second", [(False, "Wait"), (True, "Park")])
def test_two_workloads_of_one_cycle_cannot_take_the_same_node(recompute, second):
    """TestScheduleForTASCohorts "two workloads considered; there is enough space only for the first":
    both are placed on x1 against the cycle's start; the second no longer fits once the first is, and
    waits for the next cycle, or, placed again in the cycle (from Kueue v0.19), fits nowhere and is told why."""
    manager = _manager(_tas_queue("tas-default"), tas_recompute_in_cycle=recompute)
    manager.add_local_queue(kinds.LocalQueue("ns", "lq-b", "tas-b"))
    manager.add_cluster_queue(ClusterQueueBuilder("tas-b").flavors(("tas-default", {"cpu": "50"})).obj())
    manager.add_workload(WorkloadBuilder("a").created(1).request(1, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj())
    manager.add_workload(WorkloadBuilder("b").created(2).queue("lq-b").request(1, "one", cpu="1")
                         .topology(required=HOSTNAME_LABEL).obj())
    decisions = run_cycle(manager, now=1)
    assert [(type(d).__name__, d.workload.name) for d in decisions] == [("Admit", "a"), (second, "b")]
    expected = "doesn't allow to fit any of 1 pod(s)" if recompute else NO_LONGER_FITS
    assert expected in decisions[1].message
    assert manager.cache.admitted(("ns", "b")) is None


def _two_nominated_to_x1(recompute: bool):
    """Kueue v0.19.2's scheduler_tas_test.go "two small workloads considered; there is only space for one of
    them on the initial node": x1 (3 CPU) and y1 (5 CPU); a1 (1 pod, priority 2) and b1 (3 pods, another
    queue of the cohort), both preferring one host and both placed on x1, the tightest, against the cycle's start."""
    cq_a = (ClusterQueueBuilder("tas-cq-a").flavors(("tas-default", {"cpu": "4", "memory": "4Gi"}))
            .cohort("tas-cohort-main").preemption(within="LowerPriority", reclaim="Any").obj())
    cq_b = (ClusterQueueBuilder("tas-cq-b").flavors(("tas-default", {"cpu": "4", "memory": "4Gi"}))
            .cohort("tas-cohort-main").preemption(reclaim="Any").obj())
    manager = _manager(cq_a, nodes=[_node("x1", cpu="3", memory="5Gi"), _node("y1", cpu="5", memory="3Gi")],
                       tas_recompute_in_cycle=recompute)
    manager.add_cluster_queue(cq_b)
    manager.add_local_queue(kinds.LocalQueue("ns", "lq-a", "tas-cq-a"))
    manager.add_local_queue(kinds.LocalQueue("ns", "lq-b", "tas-cq-b"))
    manager.add_workload(WorkloadBuilder("a1").queue("lq-a").priority(2).request(1, "one", cpu="1")
                         .topology(preferred=HOSTNAME_LABEL).obj())
    manager.add_workload(WorkloadBuilder("b1").queue("lq-b").priority(1).request(3, "one", cpu="1")
                         .topology(preferred=HOSTNAME_LABEL).obj())
    return run_cycle(manager, now=1)


def test_a_head_whose_node_was_taken_is_placed_again_in_the_cycle_from_kueue_v0_19():
    """TASRecomputeAssignmentWithinSchedulingCycle (on from v0.19): b1 lands on y1 in the same cycle."""
    decisions = _two_nominated_to_x1(recompute=True)
    assert [(type(d).__name__, d.workload.name) for d in decisions] == [("Admit", "a1"), ("Admit", "b1")]
    assert [psa.topology_assignment for d in decisions for psa in d.admission.pod_set_assignments] == [
        _on(("x1", 1)), _on(("y1", 3))]


def test_without_the_recompute_a_head_whose_node_was_taken_waits_for_the_next_cycle():
    decisions = _two_nominated_to_x1(recompute=False)
    assert [(type(d).__name__, d.workload.name) for d in decisions] == [("Admit", "a1"), ("Wait", "b1")]
    assert decisions[1].message == NO_LONGER_FITS


def test_a_finished_workload_gives_its_nodes_back():
    manager = _manager(_tas_queue("tas-default"))
    manager.add_workload(WorkloadBuilder("a").created(1).request(1, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj())
    manager.add_workload(WorkloadBuilder("b").created(2).request(1, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj())
    assert isinstance(_only(run_cycle(manager, now=1), Admit), Admit)
    assert isinstance(_only(run_cycle(manager, now=2), Park), Park)
    manager.mark_finished(("ns", "a"))
    [assignment] = _only(run_cycle(manager, now=3), Admit).admission.pod_set_assignments
    assert assignment.topology_assignment == _on(("x1", 1))


def test_a_node_that_goes_away_takes_its_capacity_and_a_new_one_brings_some():
    manager = _manager(_tas_queue("tas-default"))
    manager.cache.topologies.set_node("x1", None)
    manager.topology_changed()
    manager.add_workload(WorkloadBuilder("a").request(1, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj())
    # Kueue's message when the flavor has no node at all.
    assert _only(run_cycle(manager, now=1), Park).message == (
        "couldn't assign flavors to pod set one: no topology domains at level: kubernetes.io/hostname")
    manager.cache.topologies.set_node("x9", _node("x9"))
    manager.topology_changed()
    [assignment] = _only(run_cycle(manager, now=2), Admit).admission.pod_set_assignments
    assert assignment.topology_assignment == _on(("x9", 1))


def _admitted_on(manager, name: str, priority: int, cpu: str, host: str) -> None:
    workload = WorkloadBuilder(name).priority(priority).request(1, "one", cpu=cpu).topology(required=HOSTNAME_LABEL).obj()
    psa = workloads.PodSetAssignment("one", {"cpu": "tas-default"}, {"cpu": q(cpu)}, 1, _on((host, 1)))
    manager.add_workload(dataclasses.replace(workload, admission=workloads.Admission("tas-main", (psa,)),
                                             admitted_at=1.0))


def _preempting_queue():
    return (ClusterQueueBuilder("tas-main").flavors(("tas-default", {"cpu": "50", "memory": "50Gi"}))
            .preemption(within="LowerPriority").obj())


def test_a_lower_priority_workload_is_preempted_when_the_nodes_are_fragmented():
    """TestScheduleForTASPreemption "low priority workload is preempted even though there is enough
    capacity, but fragmented": two nodes 4/5 full leave 2 CPU, but both pods need one node."""
    manager = _manager(_preempting_queue(), nodes=[_node("x1", cpu="5", memory="5Gi"), _node("y1", cpu="5", memory="5Gi")])
    _admitted_on(manager, "mid-priority-admitted", 2, "4", "x1")
    _admitted_on(manager, "low-priority-admitted", 1, "4", "y1")
    manager.add_workload(WorkloadBuilder("foo").priority(3).request(2, "one", cpu="1")
                         .topology(required=HOSTNAME_LABEL).obj())
    decision = _only(run_cycle(manager, now=2), Preempt)
    assert [t.workload.name for t in decision.targets] == ["low-priority-admitted"]
    # The controller adds ". Pending the preemption of 1 workload(s)", as Kueue writes it.
    assert decision.message == ("couldn't assign flavors to pod set one: topology \"tas-single-level\" allows to "
                                "fit only 1 out of 2 pod(s)")


def test_no_target_of_lower_priority_frees_a_node_and_nothing_is_preempted():
    manager = _manager(_preempting_queue(), nodes=[_node("x1", cpu="5", memory="5Gi"), _node("y1", cpu="5", memory="5Gi")])
    _admitted_on(manager, "mid-x", 2, "4", "x1")
    _admitted_on(manager, "mid-y", 2, "4", "y1")
    manager.add_workload(WorkloadBuilder("foo").priority(2).request(2, "one", cpu="1")
                         .topology(required=HOSTNAME_LABEL).obj())
    decision = _only(run_cycle(manager, now=2), Park)
    assert "allows to fit only 1 out of 2 pod(s)" in decision.message


def test_targets_are_the_ones_whose_going_frees_a_node_not_the_first_in_order():
    """Quota alone would take the lowest priority first; its node would still hold only one pod, so the
    next candidate goes, and the first is filled back."""
    manager = _manager(_preempting_queue(), nodes=[_node("x1", cpu="5", memory="5Gi"), _node("y1", cpu="5", memory="5Gi")])
    _admitted_on(manager, "small-low", 0, "500m", "x1")
    _admitted_on(manager, "big-high", 2, "3500m", "x1")
    _admitted_on(manager, "big-mid", 1, "4", "y1")
    manager.add_workload(WorkloadBuilder("foo").priority(3).request(2, "one", cpu="1")
                         .topology(required=HOSTNAME_LABEL).obj())
    decision = _only(run_cycle(manager, now=2), Preempt)
    assert [t.workload.name for t in decision.targets] == ["big-mid"]


def test_a_flavor_whose_topology_levels_no_node_has_is_named():
    manager = _manager(_tas_queue("tas-default"), topology_list=(topologies.Topology("tas-single-level",
                                                                                    ("cloud.com/missing",)),))
    assert manager.cache.topologies.flavors_without_nodes() == ["tas-default"]
    manager.cache.topologies.set_topology(SINGLE_LEVEL)
    assert manager.cache.topologies.flavors_without_nodes() == []


def test_a_preemptor_holds_back_the_nodes_its_targets_free_from_a_later_entry():
    """TestScheduleForTASCohorts "preempting workload with targets reserves capacity so that lower priority
    workload cannot use it": a2 preempts a1 for 4 pods on y1; b1 (3 pods, another queue) would fit on y1
    as the cycle found it, but not once a2's pods are held there."""
    cq_a = (ClusterQueueBuilder("tas-cq-a").flavors(("tas-default", {"cpu": ("8", "0", None), "memory": ("4Gi", "0", None)}))
            .cohort("tas-cohort-main").preemption(within="LowerPriority", reclaim="Any").obj())
    cq_b = (ClusterQueueBuilder("tas-cq-b").flavors(("tas-default", {"cpu": "4", "memory": "4Gi"}))
            .cohort("tas-cohort-main").preemption(reclaim="Any").obj())
    manager = _manager(cq_a, nodes=[_node("y1", cpu="5", memory="3Gi")])
    manager.add_cluster_queue(cq_b)
    manager.add_local_queue(kinds.LocalQueue("ns", "lq-b", "tas-cq-b"))
    a1 = WorkloadBuilder("a1-admitted").priority(1).request(2, "one", cpu="1").topology(required=HOSTNAME_LABEL).obj()
    psa = workloads.PodSetAssignment("one", {"cpu": "tas-default"}, {"cpu": q("2")}, 2, _on(("y1", 2)))
    manager.add_workload(dataclasses.replace(a1, admission=workloads.Admission("tas-cq-a", (psa,)), admitted_at=1.0))
    manager.add_workload(WorkloadBuilder("a2").priority(2).created(2).request(4, "one", cpu="1")
                         .topology(preferred=HOSTNAME_LABEL).obj())
    manager.add_workload(WorkloadBuilder("b1").priority(1).created(3).queue("lq-b").request(3, "one", cpu="1")
                         .topology(preferred=HOSTNAME_LABEL).obj())
    decisions = {d.workload.name: d for d in run_cycle(manager, now=5)}
    assert isinstance(decisions["a2"], Preempt) and [t.workload.name for t in decisions["a2"].targets] == ["a1-admitted"]
    assert decisions["a2"].message == ("couldn't assign flavors to pod set one: topology \"tas-single-level\" allows "
                                       "to fit only 3 out of 4 pod(s)")
    assert isinstance(decisions["b1"], Wait) and decisions["b1"].message == NO_LONGER_FITS
