"""Placement against Kueue v0.17.0's own cases: TestFindTopologyAssignments (pkg/cache/scheduler/
tas_cache_test.go), every case with its nodes, levels, pod sets and the assignment or reason Kueue wants.

The cases were dumped from Kueue's test itself, not retyped: a copy of the v0.17.0 module with
tests/fixtures/kueue-tas-dump/zz_dump_test.go.txt added to pkg/cache/scheduler (as zz_dump_test.go) and
one line at the end of the test's t.Run (``dumpCase(t, name, tc.featureGates, tc.nodes, len(tc.pods),
tc.levels, tc.nodeLabels, flavorTASRequests, wantResult)``), run with
``TAS_DUMP=cases.jsonl go test ./pkg/cache/scheduler/ -run 'TestFindTopologyAssignments$'``; a case is
written only when Kueue's own comparison passed. Requests are Kueue's (cpu in milli, the rest in units).

Cases of what is not modelled here are listed by reason in NOT_MODELLED_FILE, which a test holds exact.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from scheduler.core import placing, topologyconversion
from scheduler.core.domaintrees import DomainTree
from scheduler.core.kinds import Toleration
from scheduler.core.topologies import DomainAssignment, Topology, TopologyAssignment

CASES_FILE = Path(__file__).parents[2] / "fixtures" / "kueue-v0.17.0-tas-placement-cases.jsonl.gz"
NOT_MODELLED_FILE = CASES_FILE.with_name("kueue-v0.17.0-tas-placement-not-modelled.yaml")
DEFAULT_GATES = {"TASProfileMixed": True}
"""Gates a case may set that are v0.17.0's defaults anyway."""


def _cases() -> list[dict]:
    with gzip.open(CASES_FILE, "rt") as lines:
        return sorted((json.loads(line) for line in lines), key=lambda c: c["name"])


def _not_modelled(case: dict) -> str:
    gates = {k: v for k, v in case["featureGates"].items() if DEFAULT_GATES.get(k) != v}
    if gates:
        return "feature gates off by default in v0.17.0: " + ", ".join(sorted(gates))
    if case["pods"]:
        return "usage of pods Kueue did not place"
    return ""


CASES = _cases()
MODELLED = [c for c in CASES if not _not_modelled(c)]


def _milli(resource: str, value: int) -> int:
    """Kueue's Requests hold cpu in milli-units and the rest in units; the core holds milli-units."""
    return value if resource == "cpu" else value * 1000


def _tree(case: dict) -> DomainTree:
    nodes = []
    for node in case["nodes"]:
        obj = {"metadata": {"name": node["name"], "labels": node["labels"]},
               "spec": {"unschedulable": node["unschedulable"], "taints": node.get("taints") or []},
               "status": {"allocatable": node["allocatable"],
                          "conditions": [{"type": "Ready", "status": "True" if node["ready"] else "False"}]}}
        read = topologyconversion.node_from_dict(obj)
        if read is not None:
            nodes.append(read)
    return DomainTree(Topology("default", tuple(case["levels"])), nodes, node_labels=case["nodeLabels"] or {})


def _request(pod_set: dict) -> placing.PlacementRequest:
    tolerations = tuple(Toleration(t.get("key", ""), t.get("operator", "Equal"), t.get("value", ""),
                                   t.get("effect", "")) for t in pod_set.get("tolerations") or ())
    return placing.PlacementRequest(
        pod_set=pod_set["name"],
        per_pod={r: _milli(r, v) for r, v in pod_set["requests"].items()},
        count=pod_set["count"],
        # Kueue's test gives the group beside the topologyRequest (as TASPodSetRequests.PodSetGroupName).
        request=topologyconversion.topology_request_from_dict(
            {**(pod_set["topologyRequest"] or {}), **({"podSetGroupName": pod_set["group"]} if pod_set.get("group") else {})}),
        implied=pod_set["implied"],
        node_selector=tuple(sorted((pod_set.get("nodeSelector") or {}).items())),
        tolerations=tolerations,
    )


def _wanted(pod_set: dict) -> tuple[TopologyAssignment | None, str]:
    want = pod_set["wantAssignment"]
    if want is None:
        return None, pod_set["wantReason"]
    domains = tuple(DomainAssignment(tuple(d["Values"]), d["Count"]) for d in want["Domains"] or ())
    return TopologyAssignment(tuple(want["Levels"]), domains), pod_set["wantReason"]


def test_the_fixture_holds_every_case_of_kueues_test():
    assert len(CASES) == 100
    assert len(MODELLED) == 66


@pytest.mark.parametrize("full_count", [False, True], ids=["kept-counts", "full-count"])
@pytest.mark.parametrize("case", MODELLED, ids=[c["name"] for c in MODELLED])
def test_placement_agrees_with_kueue(case, full_count):
    placements = placing.place_pod_sets(_tree(case), [_request(p) for p in case["podSets"]], full_count=full_count)
    got = {p.pod_set: (p.assignment, p.reason) for p in placements}
    for pod_set in case["podSets"]:
        assert got.get(pod_set["name"], (None, "")) == _wanted(pod_set), pod_set["name"]


def test_the_cases_not_modelled_are_exactly_the_ledgers():
    ledger = yaml.safe_load(NOT_MODELLED_FILE.read_text())
    found: dict[str, list[str]] = {}
    for case in CASES:
        if _not_modelled(case):
            found.setdefault(_not_modelled(case), []).append(case["name"])
    assert {reason: sorted(names) for reason, names in found.items()} == {
        reason: sorted(names) for reason, names in ledger.items()}
