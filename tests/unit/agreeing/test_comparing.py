"""Decisions read from API objects, and two runs compared epoch by epoch."""

from __future__ import annotations

import yaml

from harness.agreeing import cases, comparing, decisions
from harness.agreeing.decisions import Decisions

from .test_cases import MINIMAL


def workload(name, cq=None, flavor="c001-f0", evicted=False, namespace="c001-ns-a"):
    conditions = []
    obj = {"metadata": {"name": name, "namespace": namespace}, "status": {"conditions": conditions}}
    if cq:
        obj["status"]["admission"] = {"clusterQueue": cq, "podSetAssignments": [
            {"name": "main", "flavors": {"cpu": flavor, "kqbench.io/agreement-gate": "c001-gate"}}]}
        conditions.append({"type": "QuotaReserved", "status": "True"})
    if evicted:
        conditions += [{"type": "Evicted", "status": "True", "reason": "Preempted", "lastTransitionTime": "t1"},
                       {"type": "Preempted", "status": "True", "reason": "InCohortReclamation"}]
    return obj


def test_admissions_are_read_in_the_cases_own_names():
    got = decisions.admitted_by_case([workload("w0", "c001-cq0"), workload("w1"), workload("x", "c002-cq0",
                                                                                            namespace="c002-ns")],
                                     ["c001"])
    assert got == {"c001": {"w0": ("cq0", (("main", (("cpu", "f0"),)),))}}


def test_an_eviction_reads_its_preemption_reason_and_held_quota():
    obj = workload("w0", "c001-cq0", evicted=True)
    assert decisions.eviction_of(obj) == ("t1", "InCohortReclamation")
    assert decisions.holds_evicted_quota(obj)
    assert not decisions.holds_evicted_quota(workload("w0", "c001-cq0"))


def test_runs_that_decide_alike_agree_and_a_difference_names_its_epoch():
    case = cases.parse(yaml.safe_load(MINIMAL))
    admitted = Decisions(admitted={"w0": ("cq0", (("main", (("cpu", "f0"),)),))}, pending={"cq0": ()})
    pending = Decisions(admitted={}, pending={"cq0": ("w0",)})
    same = comparing.compare(case, [admitted, Decisions()], [admitted, Decisions()])
    assert same.agrees and same.decisions == 2 and same.agreeing == 2
    differ = comparing.compare(case, [admitted, Decisions()], [pending, Decisions()])
    assert differ.first_epoch == 0
    assert [d.klass for d in differ.differences] == ["admission: only a admits", "pending"]
    assert differ.agreeing == 1


def test_evictions_count_as_decisions_on_either_side():
    case = cases.parse(yaml.safe_load(MINIMAL))
    a = Decisions(evicted=(("w0", "InClusterQueue"),))
    b = Decisions(evicted=(("w0", "InCohortReclamation"),))
    result = comparing.compare(case, [a], [b])
    assert result.decisions == 2 and [d.klass for d in result.differences] == ["eviction: different reason"]


def test_each_row_of_workloads_starts_in_a_later_second_than_the_last_one_ended(monkeypatch):
    """The creation-order guarantee, with a fake clock: a row that takes 1.3 s pushes the next one
    two seconds on, never into the second its own last creation fell in."""
    from harness.agreeing import driving

    now = [100.6]
    starts, ends = [], []

    def apply_all(creds, row):
        starts.append(now[0])
        now[0] += row[0]["took"]
        ends.append(now[0])

    monkeypatch.setattr(driving, "apply_all", apply_all)
    driving.create_in_order(None, [[{"took": 0.4}], [{"took": 1.3}], [{"took": 0.2}]],
                            clock=lambda: now[0], sleep=lambda s: now.__setitem__(0, now[0] + s))
    for previous_end, start in zip(ends, starts[1:]):
        assert int(start) > int(previous_end)
