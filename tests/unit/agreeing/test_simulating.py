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


def _kueue_evicted(case_number: int) -> set[str]:
    """What Kueue v0.19.2 evicted in the preempting epoch of one committed preempting-state case."""
    import gzip
    import json
    from pathlib import Path

    path = Path("results/agreement/preempting-states/decisions.jsonl.gz")
    for line in gzip.open(path, "rt"):
        run = json.loads(line)
        if run["case"] == case_number and run["implementation"] == "kueue":
            return {name for name, _ in run["epochs"][1]["evicted"]}
    raise AssertionError(f"no Kueue run of case {case_number} in {path}")


def test_a_preemptor_tried_again_while_its_targets_hold_quota_evicts_as_kueue_did():
    """Kueue tries a preemptor again in the next cycle; with its first targets now evicted (ordered first),
    its search ends on another Workload each time, and it evicts that one too. Case 5 of the committed
    preempting states (a fair-sharing state from a run): Kueue v0.19.2's large head evicted four Workloads,
    then one more in each of four later cycles, eight in all (its cycle log, case-5-logged/)."""
    from pathlib import Path

    from harness.toolchain import versions

    case = cases.load(Path("results/agreement/preempting-states/case-5.yaml"))
    settings = versions.reference_settings("v0.19.2")

    def preemptions(lines: list[str]) -> list[list[str]]:
        return [[target.split(" (")[0] for target in line.split(": ", 2)[2].split(", ")]
                for line in lines if line.startswith("epoch 1 ") and "Preempt for large-lq-1-h2-0" in line]

    held = preemptions(simulating.trace(case, hold_evictions=True, **settings))
    chosen = {name for targets in held for name in targets}
    assert len(held) == 5 and len(chosen) == 8
    assert all(len(set(targets) - set(held[0])) <= 1 for targets in held), "one new target a try"
    assert chosen <= _kueue_evicted(5)
    # Evictions released at once: the first try's targets free enough, no second try.
    assert len(preemptions(simulating.trace(case, **settings))) == 1
