"""The topology ungater's pure part: which gated pod of a topology-placed Job goes to which domain."""

from __future__ import annotations

import pytest

from scheduler.core import jobs, ungating
from scheduler.core.topologies import DomainAssignment, TopologyAssignment

RACKS = TopologyAssignment(("block", "rack"), (DomainAssignment(("b1", "r1"), 2), DomainAssignment(("b1", "r2"), 1)))


def pod(name: str, gated: bool = True, rack: str | None = None, index: int | None = None,
        phase: str = "Pending", workload: str = "wl") -> dict:
    labels = {jobs.POD_SET_LABEL: "main"}
    if index is not None:
        labels[jobs.COMPLETION_INDEX_LABEL] = str(index)
    spec: dict = {"containers": [{"name": "c"}]}
    if gated:
        spec["schedulingGates"] = [{"name": "user/first"}, {"name": jobs.TOPOLOGY_GATE}]
    if rack is not None:
        spec["nodeSelector"] = {"block": "b1", "rack": rack, "pool": "tas"}
    return {"metadata": {"name": name, "namespace": "ns", "resourceVersion": "3", "labels": labels,
                         "annotations": {jobs.WORKLOAD_ANNOTATION: workload}},
            "spec": spec, "status": {"phase": phase}}


def views(*objs: dict) -> list[ungating.GatedPod]:
    return [ungating.gated_pod_from_dict(obj) for obj in objs]


def placed(steps: list[ungating.Ungate]) -> dict[str, str]:
    return {step.pod.name: dict(step.node_labels)["rack"] for step in steps}


def test_a_pod_without_the_workload_annotation_or_the_pod_set_label_is_not_the_ungaters():
    plain = pod("p")
    del plain["metadata"]["annotations"][jobs.WORKLOAD_ANNOTATION]
    assert ungating.gated_pod_from_dict(plain) is None
    unlabelled = pod("p")
    del unlabelled["metadata"]["labels"][jobs.POD_SET_LABEL]
    assert ungating.gated_pod_from_dict(unlabelled) is None
    seen = ungating.gated_pod_from_dict(pod("p", index=4))
    assert (seen.workload, seen.pod_set, seen.gated, seen.rank) == ("wl", "main", True, 4)


def test_greedy_fills_the_domains_in_order_with_the_gated_pods_in_order():
    assert placed(ungating.to_ungate(RACKS, views(pod("a"), pod("b"), pod("c")))) == {"a": "r1", "b": "r1", "c": "r2"}


def test_greedy_counts_the_pods_already_ungated_into_a_domain():
    steps = ungating.to_ungate(RACKS, views(pod("a", gated=False, rack="r1"), pod("b"), pod("c")))
    assert placed(steps) == {"b": "r1", "c": "r2"}


def test_a_finished_pod_gives_its_place_to_its_replacement():
    done = pod("a", gated=False, rack="r2", phase="Failed")
    steps = ungating.to_ungate(RACKS, views(done, pod("b", gated=False, rack="r1"), pod("c", gated=False, rack="r1"),
                                            pod("d")))
    assert placed(steps) == {"d": "r2"}


def test_more_gated_pods_than_room_leaves_the_rest_gated():
    steps = ungating.to_ungate(RACKS, views(*(pod(n) for n in "abcde")))
    assert [s.pod.name for s in steps] == ["a", "b", "c"]


def test_ranks_send_each_index_to_the_domain_of_its_position():
    # rank 0 and 1 -> r1, rank 2 -> r2, whatever order the pods come in
    steps = ungating.to_ungate(RACKS, views(pod("x", index=2), pod("y", index=0), pod("z", index=1)))
    assert placed(steps) == {"x": "r2", "y": "r1", "z": "r1"}


@pytest.mark.parametrize("what, pods", [
    ("a pod without an index", lambda: views(pod("x", index=2), pod("y"))),
    ("two pods with one index", lambda: views(pod("x", index=0), pod("y", index=0))),
    ("an index beyond the pod set", lambda: views(pod("x", index=3), pod("y", index=0))),
    ("an ungated pod outside its rank's domain", lambda: views(pod("x", gated=False, rack="r2", index=0),
                                                               pod("y", index=2))),
])
def test_ranks_fall_back_to_greedy_where_kueue_does(what, pods):
    views_ = pods()
    by_rank_would = {p.name: ("r2" if p.rank == 2 else "r1") for p in views_ if p.gated and p.rank is not None}
    steps = ungating.to_ungate(RACKS, views_)
    greedy = ungating._greedy(RACKS, views_)
    assert placed(steps) == placed(greedy), what
    if what == "an ungated pod outside its rank's domain":
        assert placed(steps) == {"y": "r1"} != by_rank_would


def test_the_patch_removes_only_the_topology_gate_and_adds_the_domain_to_the_selector():
    step = ungating.to_ungate(RACKS, views(pod("a")))[0]
    assert ungating.ungate_patch(step) == {
        "metadata": {"resourceVersion": "3"},
        "spec": {"schedulingGates": [{"name": "user/first"}], "nodeSelector": {"block": "b1", "rack": "r1"}}}
    alone = pod("b")
    alone["spec"]["schedulingGates"] = [{"name": jobs.TOPOLOGY_GATE}]
    step = ungating.to_ungate(RACKS, views(alone))[0]
    assert ungating.ungate_patch(step)["spec"]["schedulingGates"] is None, "the last gate: the field goes"
