"""Topology objects, Nodes and topology requests read, and assignments written in Kueue v0.17.0's
v1beta2 encoding (cases of pkg/util/tas/tas_assignment_test.go bothWaysTestCases)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scheduler.core import conversion, topologyconversion
from scheduler.core.topologies import DomainAssignment, TopologyAssignment, TopologyRequest
from scheduler_builders import q


def _assignment(levels, *domains):
    return TopologyAssignment(tuple(levels), tuple(DomainAssignment(tuple(v), c) for v, c in domains))


ENCODINGS = json.loads((Path(__file__).parents[2] / "fixtures" / "kueue-v0.17.0-tas-assignment-encodings.json").read_text())
"""pkg/util/tas/tas_assignment_test.go's bothWaysTestCases and oneWayTestCases, dumped by a test added to a
copy of the v0.17.0 module (json.Marshal of each case's internal and v1beta2 assignment)."""


def _internal(obj: dict) -> TopologyAssignment:
    return _assignment(obj["Levels"], *((d["Values"], d["Count"]) for d in obj["Domains"] or ()))


@pytest.mark.parametrize("case", ENCODINGS, ids=[c["name"] for c in ENCODINGS])
def test_assignments_encode_as_kueue_and_decode_back(case):
    internal = _internal(case["internal"])
    if case["bothWays"]:  # the others are encodings Kueue reads but does not write
        assert topologyconversion.assignment_to_dict(internal) == case["v1beta2"]
    assert topologyconversion.assignment_from_dict(case["v1beta2"]) == internal


def test_the_encodings_fixture_holds_kueues_cases():
    assert len(ENCODINGS) == 12 and sum(c["bothWays"] for c in ENCODINGS) == 10


def test_hostnames_share_their_prefix_once():
    hosts = [(f"kwok-{i:06d}",) for i in range(1000)]
    encoded = topologyconversion.assignment_to_dict(_assignment(["kubernetes.io/hostname"], *((h, 4) for h in hosts)))
    [level] = encoded["slices"][0]["valuesPerLevel"]
    assert level["individual"]["prefix"] == "kwok-000" and len(level["individual"]["roots"]) == 1000


def test_a_topology_and_a_node_are_read_and_a_node_not_ready_or_cordoned_is_none():
    topology = topologyconversion.topology_from_dict(
        {"metadata": {"name": "dc"}, "spec": {"levels": [{"nodeLabel": "block"}, {"nodeLabel": "rack"}]}})
    assert (topology.name, topology.levels) == ("dc", ("block", "rack"))
    node = {"metadata": {"name": "n1", "labels": {"rack": "r1"}},
            "spec": {"taints": [{"key": "gpu", "effect": "NoSchedule"}]},
            "status": {"allocatable": {"cpu": "4", "memory": "1Gi", "pods": "110"},
                       "conditions": [{"type": "Ready", "status": "True"}]}}
    read = topologyconversion.node_from_dict(node)
    assert read.allocatable == {"cpu": q("4"), "memory": q("1Gi"), "pods": q("110")}
    assert [t.key for t in read.taints] == ["gpu"] and read.labels == {"rack": "r1"}
    assert topologyconversion.node_from_dict({**node, "spec": {"unschedulable": True}}) is None
    not_ready = {**node, "status": {**node["status"], "conditions": [{"type": "Ready", "status": "False"}]}}
    assert topologyconversion.node_from_dict(not_ready) is None


@pytest.mark.parametrize("obj, expected", [
    (None, None),
    ({}, None),
    ({"required": "rack"}, TopologyRequest(required="rack")),
    ({"preferred": "block", "podSetSliceRequiredTopology": "rack", "podSetSliceSize": 4},
     TopologyRequest(preferred="block", slice_required="rack", slice_size=4)),
    # A present false still asks for TAS (Kueue reads the pointer), with no level: placement says so.
    ({"unconstrained": False}, TopologyRequest(unconstrained=False)),
])
def test_topology_requests_are_read_from_the_pod_set(obj, expected):
    assert topologyconversion.topology_request_from_dict(obj) == expected


def test_a_workload_round_trips_its_topology_request_and_assignment():
    assignment = _assignment(["kubernetes.io/hostname"], (("x1",), 2), (("x2",), 1))
    obj = {"metadata": {"name": "w", "namespace": "ns", "uid": "u", "creationTimestamp": "2026-01-01T00:00:00Z"},
           "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 3, "topologyRequest": {"required": "rack"},
                                                     "template": {"spec": {"containers": [
                                                         {"resources": {"requests": {"cpu": "1"}}}]}}}]},
           "status": {"admission": {"clusterQueue": "cq", "podSetAssignments": [
               {"name": "main", "count": 3, "flavors": {"cpu": "tas"}, "resourceUsage": {"cpu": "3"},
                "topologyAssignment": topologyconversion.assignment_to_dict(assignment)}]}}}
    workload = conversion.workload_from_dict(obj)
    assert workload.pod_sets[0].topology_request == TopologyRequest(required="rack")
    [psa] = workload.admission.pod_set_assignments
    assert psa.topology_assignment == assignment
    written = conversion.admission_to_dict(workload.admission)["podSetAssignments"][0]["topologyAssignment"]
    assert written == obj["status"]["admission"]["podSetAssignments"][0]["topologyAssignment"]
