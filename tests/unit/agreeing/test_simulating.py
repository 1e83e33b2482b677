"""The reference core run in process on a case, as the differential runner drives a cluster."""

from __future__ import annotations

import yaml

from harness.agreeing import cases, simulating

from .test_cases import MINIMAL


def test_a_case_is_decided_epoch_by_epoch():
    raw = yaml.safe_load(MINIMAL)
    raw["epochs"][0]["arrive"].append({"name": "w1", "namespace": "ns-a", "queueName": "lq",
                                       "podSets": [{"count": 2, "requests": {"cpu": "1"}}]})
    lines, admitted = simulating.simulate(cases.parse(raw))
    assert admitted[0] == {"w0": ("cq0", (("main", (("cpu", "f0"),)),))}, "2 CPUs: w1 (2) waits behind w0 (1)"
    assert admitted[1] == {"w1": ("cq0", (("main", (("cpu", "f0"),)),))}, "w0 finished, w1 takes its place"
    assert any("Admit w0" in line for line in lines) and any("finished w0" in line for line in lines)


def test_a_case_with_a_cohort_tree_borrows_through_it():
    from .test_cases import TREE

    raw = yaml.safe_load(TREE)
    # cq0 (2 cpu) in co (1 of its own) under root: 3 cpu in all for w0 (1) and w1 (2).
    raw["epochs"][0]["arrive"].append({"name": "w1", "namespace": "ns-a", "queueName": "lq",
                                       "podSets": [{"count": 2, "requests": {"cpu": "1"}}]})
    _, admitted = simulating.simulate(cases.parse(raw))
    assert set(admitted[0]) == {"w0", "w1"}
    raw["fairSharing"] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare"]}
    _, admitted = simulating.simulate(cases.parse(raw))
    assert set(admitted[0]) == {"w0", "w1"}
