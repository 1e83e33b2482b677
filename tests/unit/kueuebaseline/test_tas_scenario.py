"""Kueue's TAS performance configuration as a scenario: its nodes, Topology, TAS flavor, and Workloads whose
pod sets ask for racks as Kueue's generator writes them."""

from __future__ import annotations

import collections

import pytest

from harness.drivers.kueuebaseline import generating
from harness.load import arrivals
from harness.nodes import topologies
from harness.scenarios import loading, queueobjects

RACK = topologies.RACK_LABEL


def _scenario():
    return loading.load("kueue-tas").scenario


def test_nodes_are_one_block_of_ten_racks_of_64_with_96_cpu():
    [pool] = _scenario().cluster.node_pools()
    labels = [pool.manifest(i)["metadata"]["labels"] for i in range(pool.count)]
    assert pool.count == 640 and pool.cpu == "96"
    assert collections.Counter(label[RACK] for label in labels) == {f"block-0-rack-{r}": 64 for r in range(10)}
    assert {label["tas-node-group"] for label in labels} == {"tas"}
    assert _scenario().cluster.cluster_spec("x").schedulable_nodes


def test_the_topology_comes_before_the_flavor_that_names_it():
    manifests = queueobjects.manifests(_scenario().queues)
    kinds = [obj["kind"] for _, obj in manifests]
    assert kinds.index("Topology") < kinds.index("ResourceFlavor")
    path, topology = next((p, o) for p, o in manifests if o["kind"] == "Topology")
    assert path.endswith("/topologies/default-topology")
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == list(topologies.LEVELS)
    flavor = next(o for _, o in manifests if o["kind"] == "ResourceFlavor")
    assert flavor["spec"] == {"nodeLabels": {"tas-node-group": "tas"}, "topologyName": "default-topology"}


def test_nine_classes_of_15000_workloads_ask_for_racks_as_kueues_generator_does():
    plan = arrivals.from_scenario(_scenario())
    assert plan.total == 15_000 and len(plan.classes) == 9
    by_name = {c.name: c for c in plan.classes}
    large = by_name["large-balanced-rack"]
    assert (large.pods, large.cpu, large.cpu_milli) == (8, "2500m", 20_000)  # the Workload holds 20 CPU
    body = generating.workload_body(arrivals.Creation(0.1, "w", plan.queues[0], large))
    [pod_set] = body["spec"]["podSets"]
    assert pod_set["count"] == 8
    assert pod_set["topologyRequest"] == {"podSetSliceRequiredTopology": RACK, "podSetSliceSize": 4}
    assert pod_set["template"]["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "2500m"}
    required = generating.workload_body(arrivals.Creation(0.1, "w", plan.queues[0], by_name["small-required-rack"]))
    assert required["spec"]["podSets"][0]["topologyRequest"] == {"required": RACK}


def test_a_flavor_naming_a_topology_not_defined_is_refused():
    with pytest.raises(loading.ScenarioError, match="names topology 'dc', which is not in topologies"):
        loading.load("kueue-tas", ["queues.flavors=[{name: tas-flavor, topology_name: dc}]"])


def test_the_run_is_judged_by_kueues_tas_rangespec_whose_classes_are_ours():
    scenario = _scenario()
    [phase] = scenario.phases.values() if isinstance(scenario.phases, dict) else scenario.phases
    assert phase.kueue_config == "tas"
    names = {c.name for c in arrivals.from_scenario(scenario).classes}
    assert names == {f"{size}-{kind}-rack" for size in ("small", "medium", "large")
                     for kind in ("required", "preferred", "balanced")}


def test_the_tas_rangespecs_means_are_read_from_its_mean_stddev_cv_comments():
    from pathlib import Path

    from harness.drivers.kueuebaseline import rangespecs

    copy = Path(__file__).resolve().parents[3] / "results" / "tas" / "kueue-v0.17.0-tas-rangespec.yaml"
    bounds = {b.metric: b for b in rangespecs.parse(copy.read_text())}
    assert bounds["wall_seconds"].average == pytest.approx(401.472)  # "# 401472 / 5737 / 1.43%" in ms
    assert bounds["cq_usage_percent"].average == 62.41 and bounds["cq_usage_percent"].limit == 58.0
    assert bounds["time_to_admission_seconds[large-balanced-rack]"].average == pytest.approx(37.862)
    assert bounds["time_to_admission_seconds[small-required-rack]"].limit == 297.0
