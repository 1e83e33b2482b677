"""Case files: what is refused before any cluster starts, and the generator's output."""

from __future__ import annotations

import pytest
import yaml

from harness.agreeing import cases, generating, rendering

MINIMAL = """
flavors: [{name: f0}]
namespaces: [{name: ns-a}]
clusterQueues:
- name: cq0
  cohort: co
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f0, resources: [{name: cpu, nominalQuota: "2", lendingLimit: "1"}]}]
localQueues: [{namespace: ns-a, name: lq, clusterQueue: cq0}]
epochs:
- arrive: [{name: w0, namespace: ns-a, queueName: lq, podSets: [{count: 1, requests: {cpu: "1"}}]}]
- finish: [w0]
"""


def edited(path: str, value) -> dict:
    raw = yaml.safe_load(MINIMAL)
    target = raw
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if key.isdigit() else target[key]
    last = keys[-1]
    if value is _DROP:
        del target[last]
    elif last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return raw


_DROP = object()


def test_a_valid_case_reads_back_from_its_own_dump():
    case = cases.parse(yaml.safe_load(MINIMAL))
    assert cases.parse(yaml.safe_load(cases.dump(case))) == case


@pytest.mark.parametrize("path, value, named", [
    ("clusterQueues.0.resourceGroups.0.flavors.0.name", "f9", "clusterQueues[0].resourceGroups[0].flavors[0].name"),
    ("localQueues.0.clusterQueue", "nope", "localQueues[0].clusterQueue"),
    ("epochs.0.arrive.0.queueName", "other", "epochs[0].arrive[0].queueName"),
    ("epochs.1.finish", ["w7"], "epochs[1].finish"),
    ("clusterQueues.0.resourceGroups.0.flavors.0.resources.0.lendingLimit", "3", "lendingLimit"),
    ("clusterQueues.0.resourceGroups.0.flavors.0.resources.0.nominalQuota", "two", "nominalQuota"),
    ("clusterQueues.0.cohort", None, "need a cohort"),
    ("clusterQueues.0.queueingStrategy", "LIFO", "clusterQueues.0.queueingStrategy"),
    ("epochs.0.arrive.0.podSets.0.count", 0, "count"),
    ("flavors.0.name", "F0", "flavors[0].name"),
])
def test_an_invalid_case_is_refused_naming_the_field(path, value, named):
    with pytest.raises(cases.CaseError, match="^case: .*" + named.replace("[", r"\[").replace("]", r"\]")):
        cases.parse(edited(path, value))


def test_the_generator_is_reproducible_and_its_cases_valid():
    assert generating.generate(7) == generating.generate(7)
    assert generating.generate(7) != generating.generate(8)
    seen_policies = set()
    for seed in range(60):
        case = generating.generate(seed)
        cases.check(case)
        seen_policies |= {cq.preemption.reclaimWithinCohort for cq in case.clusterQueues}
        assert case.epochs[1].arrive, "every case has preemptors"
    assert seen_policies == {"Never", "LowerPriority", "Any"}


def test_rendering_prefixes_names_and_gates_every_queue():
    case = cases.parse(yaml.safe_load(MINIMAL))
    objects = rendering.setup_objects(case, "c004")
    names = {(o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects}
    assert ("ClusterQueue", None, "c004-cq0") in names and ("LocalQueue", "c004-ns-a", "lq") in names
    cq = next(o for o in objects if o["kind"] == "ClusterQueue")
    assert cq["spec"]["cohortName"] == "c004-co"
    assert cq["spec"]["resourceGroups"][-1]["flavors"][0]["name"] == "c004-gate"
    assert not any(o["metadata"]["name"] == "c004-gate" for o in objects), "the gate starts closed"
    assert cq["spec"]["namespaceSelector"] == {}
    assert rendering.local_name("c004", "c004-cq0") == "cq0" and rendering.local_name("c005", "c004-cq0") is None


def test_a_null_selector_is_left_out_as_kueue_reads_it():
    raw = edited("clusterQueues.0.namespaceSelector", None)
    cq = next(o for o in rendering.setup_objects(cases.parse(raw), "c000") if o["kind"] == "ClusterQueue")
    assert "namespaceSelector" not in cq["spec"]


def test_the_command_refuses_a_bad_case_file_before_any_cluster_starts(tmp_path):
    import subprocess
    import sys

    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(edited("localQueues.0.clusterQueue", "missing")))
    done = subprocess.run([sys.executable, "-m", "harness", "agree", "--case", str(bad), "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"error: {bad}: localQueues[0].clusterQueue: 'missing' is not in clusterQueues"]
    assert not (tmp_path / "out").exists(), "nothing was started or written"
