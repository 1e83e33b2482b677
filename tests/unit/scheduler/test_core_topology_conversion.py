"""Topology objects, Nodes and topology requests read, and assignments written in Kueue v0.17.0's
v1beta2 encoding (cases of pkg/util/tas/tas_assignment_test.go bothWaysTestCases)."""

from __future__ import annotations

import pytest

from scheduler.core import conversion, topologyconversion
from scheduler.core.topologies import DomainAssignment, TopologyAssignment, TopologyRequest
from scheduler_builders import q


def _assignment(levels, *domains):
    return TopologyAssignment(tuple(levels), tuple(DomainAssignment(tuple(v), c) for v, c in domains))


@pytest.mark.parametrize("case, internal, v1beta2", [
    ("empty", _assignment("ab"), {"levels": ["a", "b"], "slices": []}),
    ("one domain", _assignment("ab", (("a1", "b1"), 1)),
     {"levels": ["a", "b"], "slices": [{"domainCount": 1, "podCounts": {"universal": 1},
                                        "valuesPerLevel": [{"universal": "a1"}, {"universal": "b1"}]}]}),
    ("multiple domains, same counts, no common prefix", _assignment("ab", (("a1", "b1"), 1), (("a2", "b2"), 1)),
     {"levels": ["a", "b"], "slices": [{"domainCount": 2, "podCounts": {"universal": 1}, "valuesPerLevel": [
         {"individual": {"prefix": "a", "roots": ["1", "2"]}}, {"individual": {"prefix": "b", "roots": ["1", "2"]}}]}]}),
    ("multiple domains, different counts, common prefix and suffix",
     _assignment("ab", (("p.a1.s", "p.b1.s"), 1), (("p.a2.s", "p.b2.s"), 2)),
     {"levels": ["a", "b"], "slices": [{"domainCount": 2, "podCounts": {"individual": [1, 2]}, "valuesPerLevel": [
         {"individual": {"prefix": "p.a", "suffix": ".s", "roots": ["1", "2"]}},
         {"individual": {"prefix": "p.b", "suffix": ".s", "roots": ["1", "2"]}}]}]}),
    ("multiple domains, universal value", _assignment("ab", (("a1", "x"), 1), (("a1", "y"), 2)),
     {"levels": ["a", "b"], "slices": [{"domainCount": 2, "podCounts": {"individual": [1, 2]}, "valuesPerLevel": [
         {"universal": "a1"}, {"individual": {"roots": ["x", "y"]}}]}]}),
    # fillSingleCompactSliceValues keeps prefix and suffix from overlapping ({"ababa", "aba"}): both are
    # "aba", longer together than "aba", so the prefix shrinks to what the suffix leaves: nothing.
    ("overlapping prefix and suffix", _assignment("h", (("ababa",), 1), (("aba",), 1)),
     {"levels": ["h"], "slices": [{"domainCount": 2, "podCounts": {"universal": 1}, "valuesPerLevel": [
         {"individual": {"suffix": "aba", "roots": ["ab", ""]}}]}]}),
])
def test_assignments_encode_as_kueue_and_decode_back(case, internal, v1beta2):
    assert topologyconversion.assignment_to_dict(internal) == v1beta2, case
    assert topologyconversion.assignment_from_dict(v1beta2) == internal, case


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
