"""Decisions read from API objects, and two runs compared epoch by epoch."""

from __future__ import annotations

import dataclasses

import pytest
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


TIES = """
flavors: [{name: f0}]
namespaces: [{name: ns-a}]
clusterQueues:
- {name: cq0, preemption: {withinClusterQueue: LowerPriority},
   resourceGroups: [{coveredResources: [cpu], flavors: [{name: f0, resources: [{name: cpu, nominalQuota: "3"}]}]}]}
- {name: cq1, resourceGroups: [{coveredResources: [cpu], flavors: [{name: f0, resources: [{name: cpu, nominalQuota: "1"}]}]}]}
localQueues: [{namespace: ns-a, name: lq0, clusterQueue: cq0}, {namespace: ns-a, name: lq1, clusterQueue: cq1}]
epochs:
- arrive:
  - {name: w1, namespace: ns-a, queueName: lq0, podSets: [{count: 1, requests: {cpu: "1"}}]}
  - {name: w2, namespace: ns-a, queueName: lq0, podSets: [{count: 1, requests: {cpu: "1"}}]}
  - {name: w3, namespace: ns-a, queueName: lq0, priority: 5, podSets: [{count: 1, requests: {cpu: "1"}}]}
  - {name: w4, namespace: ns-a, queueName: lq1, podSets: [{count: 1, requests: {cpu: "1"}}]}
- arrive: [{name: p, namespace: ns-a, queueName: lq0, priority: 100, podSets: [{count: 1, requests: {cpu: "1"}}]}]
- finish: [p]
"""
T1, T2 = "2026-01-01T00:00:01Z", "2026-01-01T00:00:02Z"
WHERE = {"w1": "cq0", "w2": "cq0", "w3": "cq0", "w4": "cq1", "p": "cq0"}


def point(held: dict[str, str | None], evicted: tuple[tuple[str, str], ...] = ()) -> Decisions:
    """A settled point: Workload -> the second its quota was reserved (None: not recorded)."""
    return Decisions(admitted={n: (WHERE[n], (("ps0", (("cpu", "f0"),)),)) for n in held},
                     evicted=tuple(sorted(evicted)), reserved={n: s for n, s in held.items() if s})


def compared(a: list[Decisions], b: list[Decisions], tied: bool) -> comparing.Comparison:
    """Two runs of the TIES case compared, a tie found exactly when ``tied``."""
    result = comparing.compare(cases.parse(yaml.safe_load(TIES)), a, b)
    assert (result.tie is not None) is tied
    return result


def preempted(before: dict[str, str | None], victims: tuple[str, ...], reason: str = "InClusterQueue"):
    """The run whose preemptor ``p`` evicted ``victims`` in epoch 1, then finished in epoch 2."""
    after = {n: s for n, s in before.items() if n not in victims}
    return [point(before), point({**after, "p": T2}, tuple((v, reason) for v in victims)), point(after)]


@pytest.mark.parametrize("a, b, tied", [
    pytest.param(preempted({"w1": T1, "w2": T1}, ("w1",)), preempted({"w1": T1, "w2": T1}, ("w2",)), True,
                 id="same second, ClusterQueue and priority on both sides: a tie"),
    pytest.param(preempted({"w1": T1, "w3": T1}, ("w1",)), preempted({"w1": T1, "w3": T1}, ("w3",)), False,
                 id="same second, different priority"),
    pytest.param(preempted({"w1": T1, "w2": T1}, ("w1",)), preempted({"w1": T1, "w2": T2}, ("w2",)), False,
                 id="different seconds on one side"),
    pytest.param(preempted({"w1": T1, "w4": T1}, ("w1",)), preempted({"w1": T1, "w4": T1}, ("w4",)), False,
                 id="different ClusterQueues"),
    pytest.param(preempted({"w1": T1, "w2": T1}, ("w1", "w2")), preempted({"w1": T1, "w2": T1}, ("w2",)), False,
                 id="one side evicts more"),
    pytest.param(preempted({"w1": T1, "w2": T1}, ("w1",)),
                 preempted({"w1": T1, "w2": T1}, ("w2",), reason="InCohortReclamation"), False,
                 id="different reasons"),
    pytest.param(preempted({"w1": None, "w2": None}, ("w1",)), preempted({"w1": None, "w2": None}, ("w2",)), False,
                 id="no reservation seconds recorded"),
])
def test_differing_evictions_are_a_tie_only_among_candidates_kueue_cannot_order(a, b, tied):
    result = compared(a, b, tied)
    if tied:
        assert result.agrees and result.tie == comparing.Tie(1, ("w1",), ("w2",))
        assert result.decisions == 4 and result.agreeing == 4, "epoch 0 only: the tie's epoch on is set aside"
        assert result.decisions_set_aside == 5 + 2 + 5
        assert {result.tie.klass(d) for d in result.set_aside} >= {comparing.TIE, "admission: only b admits"}
        assert {d.epoch for d in result.set_aside} == {1, 2}
    else:
        assert not result.agrees and result.first_epoch == 1 and not result.set_aside
        assert any(d.kind == "eviction" for d in result.differences)


def test_reservation_seconds_are_read_kept_out_of_equality_and_optional_in_old_files():
    obj = workload("w0", "c001-cq0")
    obj["status"]["conditions"][0]["lastTransitionTime"] = T1
    assert decisions.reserved_by_case([obj, workload("w1")], ["c001"]) == {"c001": {"w0": T1}}
    recorded = point({"w1": T1})
    assert recorded == point({"w1": T2}) == point({"w1": None})
    assert decisions.from_json(dataclasses.asdict(recorded)).reserved == {"w1": T1}
    old = {k: v for k, v in dataclasses.asdict(recorded).items() if k != "reserved"}
    assert decisions.from_json(old) == recorded and decisions.from_json(old).reserved == {}


def test_decisions_read_from_old_files_still_compare():
    def old(run):
        return [decisions.from_json({k: v for k, v in dataclasses.asdict(d).items() if k != "reserved"})
                for d in run]
    case = cases.parse(yaml.safe_load(TIES))
    a, b = preempted({"w1": T1, "w2": T1}, ("w1",)), preempted({"w1": T1, "w2": T1}, ("w2",))
    result = comparing.compare(case, old(a), old(b))
    assert result.tie is None and result.first_epoch == 1
    assert [d.klass for d in result.differences if d.kind == "eviction"] == ["eviction: only a evicts",
                                                                              "eviction: only b evicts"]


def test_an_evicted_workload_reads_the_queue_and_second_it_held_its_quota_from():
    obj = workload("w0", "c001-cq0", evicted=True)
    obj["status"]["conditions"][0]["lastTransitionTime"] = T1
    assert decisions.held_when_evicted(obj, "c001") == ("cq0", T1)
    released = workload("w0", "c001-cq0", evicted=True)
    released["status"]["conditions"][0]["status"] = "False"
    assert decisions.held_when_evicted(released, "c001") is None
    recorded = Decisions(evicted=(("w0", "InClusterQueue"),), evicted_reserved={"w0": ("cq0", T1)})
    assert recorded == Decisions(evicted=(("w0", "InClusterQueue"),))
    assert decisions.from_json(dataclasses.asdict(recorded)).evicted_reserved == {"w0": ("cq0", T1)}


def within_one_epoch(victim: str, seconds: dict[str, str], recorded: bool = True) -> list[Decisions]:
    """Epoch 0 admits w1 and w2, then a preemptor of cq0 reclaims ``victim`` in the same epoch; the
    other stays admitted. ``seconds``: when each of w1, w2 had its quota reserved."""
    kept = "w2" if victim == "w1" else "w1"
    point0 = Decisions(admitted={kept: (WHERE[kept], (("ps0", (("cpu", "f0"),)),))},
                       evicted=((victim, "InClusterQueue"),), reserved={kept: seconds[kept]},
                       evicted_reserved={victim: (WHERE[victim], seconds[victim])} if recorded else {})
    return [point0, point({kept: seconds[kept]}), point({kept: seconds[kept]})]


@pytest.mark.parametrize("a, b, tied", [
    pytest.param(within_one_epoch("w1", {"w1": T1, "w2": T1}), within_one_epoch("w2", {"w1": T1, "w2": T1}), True,
                 id="both admitted in the tie's epoch, in one second: a tie"),
    pytest.param(within_one_epoch("w1", {"w1": T1, "w2": T1}), within_one_epoch("w2", {"w1": T1, "w2": T2}), False,
                 id="one side reserved them in two seconds: it had an order"),
    pytest.param(within_one_epoch("w1", {"w1": T1, "w2": T1}, recorded=False),
                 within_one_epoch("w2", {"w1": T1, "w2": T1}, recorded=False), False,
                 id="an evictee's reservation not recorded (old runs)"),
])
def test_a_tie_may_arise_among_workloads_admitted_in_its_own_epoch(a, b, tied):
    result = compared(a, b, tied)
    if tied:
        assert result.tie == comparing.Tie(0, ("w1",), ("w2",)) and result.agrees
        assert result.decisions == 0 and result.decisions_set_aside > 0
    else:
        assert not result.agrees and result.first_epoch == 0


def test_an_eviction_names_its_preemptor_in_either_schedulers_words():
    def evicted_by(message):
        obj = workload("w0", "c001-cq0", evicted=True)
        obj["status"]["conditions"][2]["message"] = message
        return decisions.preemptor_of(obj, {"0b7c-uid": "w16"})
    kueue = ("Preempted to accommodate a workload (UID: 0b7c-uid, JobUID: UNKNOWN) due to prioritization in the "
             "ClusterQueue; preemptor path: /c001-cq0; preemptee path: /c001-cq0")
    assert evicted_by(kueue) == "w16"
    assert evicted_by("Preempted to accommodate c001-ns-b/w17") == "w17"
    assert evicted_by("Preempted to accommodate a workload (UID: unknown-uid, JobUID: UNKNOWN)") is None
    assert evicted_by("Evicted by an admin") is None


def one_flip(victim: str, later: tuple[tuple[str, str], ...] = ()) -> list[Decisions]:
    """Epoch 0 admits w1 and w2 (cq0, one second); in epoch 1 preemptor p evicts ``victim``, and
    ``later`` preemptors evict more, (victim, preemptor)."""
    evicted = ((victim, "p"), *later)
    kept = {n: T1 for n in ("w1", "w2") if n not in {v for v, _ in evicted}}
    epoch1 = Decisions(admitted=point({**kept, "p": T2}).admitted, reserved={**kept, "p": T2},
                       evicted=tuple(sorted((v, "InClusterQueue") for v, _ in evicted)),
                       evicted_by=dict(evicted), evicted_reserved={v: ("cq0", T1) for v, _ in evicted})
    return [point({"w1": T1, "w2": T1}), epoch1, point(kept)]


@pytest.mark.parametrize("a, b, tied", [
    pytest.param(one_flip("w2"), one_flip("w1", later=(("w2", "w3"),)), True,
                 id="one preemptor's tied victims differ, a second preemptor then takes the other"),
    pytest.param(one_flip("w2"), one_flip("w1"), True, id="a plain flip, named by its preemptor"),
    pytest.param(one_flip("w2", later=(("w1", "p"),)), one_flip("w2"), False,
                 id="one preemptor evicts more on one side: not a coin flip"),
])
def test_a_flip_may_leave_the_epoch_with_more_evictions_on_one_side(a, b, tied):
    result = compared(a, b, tied)
    if tied:
        assert result.tie.epoch == 1 and result.tie.a == ("w2",) and result.tie.b == ("w1",)
        assert result.agrees and result.decisions == 4
    else:
        assert not result.agrees and result.first_epoch == 1


def preempting(victims: tuple[str, ...], seconds: dict[str, str]) -> list[Decisions]:
    """Epoch 0 admits w1, w2 and w3 (reserved at ``seconds``); in epoch 1 preemptor p evicts ``victims``
    and is admitted, or with none stays pending."""
    kept = {n: seconds[n] for n in ("w1", "w2", "w3") if n not in victims}
    held = {**kept, "p": T2} if victims else kept
    epoch1 = Decisions(admitted=point(held).admitted, reserved=held,
                       evicted=tuple((v, "InClusterQueue") for v in victims), evicted_by={v: "p" for v in victims},
                       evicted_reserved={v: ("cq0", seconds[v]) for v in victims})
    return [point(seconds), epoch1, point(kept)]


SAME = {"w1": T1, "w2": T1, "w3": T1}


@pytest.mark.parametrize("a, b, tied", [
    pytest.param(preempting(("w1", "w2"), SAME), preempting((), SAME), True,
                 id="two tied victims on one side, no preemption on the other: the order decided"),
    pytest.param(preempting((), SAME), preempting(("w1", "w2"), SAME), True, id="the same, the other way round"),
    pytest.param(preempting(("w1", "w2"), {**SAME, "w2": T2}), preempting((), {**SAME, "w2": T2}), False,
                 id="victims reserved in two seconds: Kueue had an order"),
    pytest.param(preempting(("w1", "w3"), SAME), preempting((), SAME), False,
                 id="victims of two priorities"),
    pytest.param(preempting(("w1",), SAME), preempting((), SAME), False,
                 id="one victim: no order among candidates made the difference"),
])
def test_tied_victims_may_decide_whether_a_preemption_happens_at_all(a, b, tied):
    result = compared(a, b, tied)
    if tied:
        assert result.agrees and result.tie.epoch == 1
        assert {result.tie.a, result.tie.b} == {("w1", "w2"), ()}
    else:
        assert not result.agrees and result.first_epoch == 1
