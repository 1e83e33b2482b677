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


def edited(path: str, value, text: str = MINIMAL) -> dict:
    """The case ``text`` (YAML) with the field at the dotted ``path`` set to ``value`` (or dropped: _DROP)."""
    raw = yaml.safe_load(text)
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


def test_required_features_are_in_every_case_and_leave_the_rest_of_a_seed_alone():
    both = frozenset({generating.HIERARCHY, generating.FAIR_SHARING})
    unforced_with_both = 0
    for seed in range(40):
        forced = generating.generate(seed, both)
        cases.check(forced)
        assert forced.cohorts and forced.fairSharing is not None
        assert all(cq.cohort for cq in forced.clusterQueues), "fair sharing puts every queue in a cohort"
        plain = generating.generate(seed)
        if plain.cohorts and plain.fairSharing is not None:
            unforced_with_both += 1
            assert forced == plain
        assert forced.epochs == plain.epochs
    assert unforced_with_both > 0
    with pytest.raises(ValueError, match="unknown case feature.*known are hierarchy, fair-sharing"):
        generating.generate(1, frozenset({"tas"}))


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


TREE = MINIMAL.replace("namespaces: [{name: ns-a}]", """namespaces: [{name: ns-a}]
cohorts:
- name: co
  parentName: root
  fairSharing: {weight: "0.5"}
  resourceGroups:
  - coveredResources: [cpu]
    flavors: [{name: f0, resources: [{name: cpu, nominalQuota: "1", lendingLimit: "3"}]}]
- name: root""")


def test_a_case_with_a_cohort_tree_and_fair_sharing_reads_back_and_renders():
    raw = yaml.safe_load(TREE)
    raw["fairSharing"] = {"preemptionStrategies": ["LessThanInitialShare"]}
    case = cases.parse(raw)
    assert cases.parse(yaml.safe_load(cases.dump(case))) == case
    assert case.cohort_names() == {"co", "root"}
    objects = {(o["kind"], o["metadata"]["name"]): o for o in rendering.setup_objects(case, "c007")}
    co = objects[("Cohort", "c007-co")]["spec"]
    assert co["parentName"] == "c007-root" and co["fairSharing"] == {"weight": "0.5"}
    assert co["resourceGroups"][0]["flavors"][0]["name"] == "c007-f0"
    assert objects[("Cohort", "c007-root")]["spec"] == {}


@pytest.mark.parametrize("path, value, named", [
    ("cohorts.1.resourceGroups", [{"coveredResources": ["cpu"], "flavors": [
        {"name": "f0", "resources": [{"name": "cpu", "nominalQuota": "1", "borrowingLimit": "1"}]}]}], "need a parent"),
    ("cohorts.0.fairSharing", {"weight": "-1"}, "cohorts[0].fairSharing.weight"),
    ("cohorts.0.parentName", "Root", "cohorts[0].parentName"),
    ("fairSharing", {"preemptionStrategies": ["LessThanInitialShare", "LessThanOrEqualToFinalShare"]},
     "fairSharing.preemptionStrategies"),
])
def test_an_invalid_cohort_or_fair_sharing_is_refused(path, value, named):
    raw = yaml.safe_load(TREE)
    target = raw
    keys = path.split(".")
    for key in keys[:-1]:
        target = target[int(key)] if key.isdigit() else target[key]
    target[keys[-1]] = value
    with pytest.raises(cases.CaseError, match=named.replace("[", r"\[").replace("]", r"\]")):
        cases.parse(raw)


def test_the_generator_draws_trees_up_to_three_deep_and_fair_sharing():
    depths, fair = set(), 0
    for seed in range(1, 80):
        case = generating.generate(seed)
        parents = {c.name: c.parentName for c in case.cohorts}
        for name in parents:
            depth, parent = 1, parents[name]
            while parent:
                depth, parent = depth + 1, parents.get(parent)
            depths.add(depth)
        if case.fairSharing is not None:
            fair += 1
            assert all(q.cohort for q in case.clusterQueues)
    assert depths == {1, 2, 3} and 10 < fair < 45


def test_the_new_dimensions_leave_the_rest_of_a_seeds_case_as_it_was():
    # Drawn from a stream of their own: a seed's flavors, queues' policies and quotas, and Workloads
    # are the ones results/agreement/random-300 ran (the first 40 lines of its cases.jsonl, written before
    # the trees; the whole file is in the results store).
    import gzip
    import json
    from pathlib import Path

    stored = Path(__file__).parent / "data" / "random-300-cases-first-40.jsonl.gz"
    for line in gzip.decompress(stored.read_bytes()).decode().splitlines():
        row = json.loads(line)
        row.pop("case")
        before = cases.parse(row)
        now = generating.generate(before.seed)
        assert (now.flavors, now.namespaces, now.localQueues, now.epochs) == \
            (before.flavors, before.namespaces, before.localQueues, before.epochs)
        ignore = {"cohort", "fairSharing"}
        assert [q.model_dump(exclude=ignore) for q in now.clusterQueues] == \
            [q.model_dump(exclude=ignore) for q in before.clusterQueues]


def test_the_command_refuses_an_unknown_kueue_version_before_any_cluster_starts(tmp_path):
    import subprocess
    import sys

    good = tmp_path / "good.yaml"
    good.write_text(yaml.safe_dump(edited("seed", 7)))
    done = subprocess.run([sys.executable, "-m", "harness", "agree", "--case", str(good), "--kueue-version", "v9.9",
                           "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert done.returncode != 0
    assert "Kueue v9.9 is not in harness/versions.toml: known versions are" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists(), "nothing was started or written"
