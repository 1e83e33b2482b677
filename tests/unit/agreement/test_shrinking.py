"""Shrinking keeps what makes a case disagree and drops the rest."""

from __future__ import annotations

from harness.agreeing import cases, generating
from harness.drivers.agreement import shrinking


def test_every_candidate_is_valid_and_smaller():
    case = generating.generate(11)
    options = list(shrinking.candidates(case))
    assert options
    for option in options:
        cases.check(option)
        assert option != case
        assert sum(option.size()) <= sum(case.size())


def test_shrinking_finds_the_workload_that_matters():
    """A predicate standing for "the two implementations still disagree": a chosen Workload arrives."""
    case = generating.generate(5)
    culprit = case.epochs[1].arrive[0].name
    calls = []

    def still_fails(options):
        calls.append(len(options))
        return [culprit in {w.name for w in o.workloads()} for o in options]

    minimal = shrinking.shrink(case, still_fails, max_rounds=40)
    many = shrinking.shrink_many([case], lambda options: still_fails([o for _, o in options]), max_rounds=40)
    assert many == [minimal]
    assert [w.name for w in minimal.workloads()] == [culprit] or (
        len(minimal.workloads()) == 2 and minimal.epochs[0].arrive), "epoch 0 needs a Workload of its own"
    assert len(minimal.clusterQueues) == 1 and len(minimal.flavors) == 1
    assert len(calls) <= 40
