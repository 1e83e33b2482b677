"""The watch-cache scenarios: arms merge into the cluster, list phases validate, cases are per arm."""

import pytest

from harness.drivers.watchcache import phases
from harness.scenarios import loading

BASE = """
name: t
cluster: {nodes: 0, feature_gates: {WatchList: true}}
scheduler: {enabled: false}
phases:
  populate: {namespaces: 2, per_namespace: 3, bytes: 10}
  list-a: {kind: list, mode: rv0, workers: 2, seconds: 1}
arms:
  default: {}
  snapshot-off: {feature_gates: {ListFromCacheSnapshot: false}}
  old: {k8s_version: "1.37.2", apiserver_args: {emulated-version: "1.33"}}
sweep:
  arm: [default, snapshot-off, old]
"""


def test_one_case_per_arm_with_its_cluster():
    loaded = loading.parse(BASE, "t.yaml")
    specs = {c.id: c.scenario.cluster.cluster_spec("x") for c in loaded.cases}
    assert list(specs) == ["arm=default,r0", "arm=snapshot-off,r0", "arm=old,r0"]
    assert specs["arm=default,r0"].feature_gates == {"WatchList": True}
    assert specs["arm=snapshot-off,r0"].feature_gates == {"WatchList": True, "ListFromCacheSnapshot": False}
    assert specs["arm=old,r0"].k8s_version == "1.37.2"
    assert specs["arm=old,r0"].apiserver_args == (("emulated-version", "1.33"),)


def test_unknown_arm_is_an_error_naming_the_arms():
    with pytest.raises(loading.ScenarioError, match="arm 'nope' is not one of arms"):
        loading.parse(BASE, "t.yaml", ["sweep.arm=[nope]"])


@pytest.mark.parametrize("body, message", [
    ("{kind: list, mode: fastest}", "mode"),
    ("{kind: list, scope: everywhere}", "scope"),
    ("{kind: list, workers: 0}", "workers"),
])
def test_bad_list_phases_are_refused(body, message):
    with pytest.raises(loading.ScenarioError, match=message):
        loading.parse(BASE, "t.yaml", [f"phases.list-a={body}"])


@pytest.mark.parametrize("name", ["list-configmaps", "list-nodes"])
def test_shipped_scenarios_have_list_phases_and_no_scheduler(name):
    loaded = loading.load(name)
    assert not loaded.scenario.scheduler.enabled
    modes = {p.mode for p in loaded.scenario.phases.values() if p.kind == "list"}
    assert modes == set(phases.LIST_MODES)
    assert len(loaded.cases) == len(loaded.scenario.arms)


def test_ci_size_overrides_scale_the_populate_phase():
    loaded = loading.load("list-configmaps", ["phases.populate.namespaces=2", "phases.populate.per_namespace=100",
                                              "phases.populate.bytes=10000", "sweep.arm=[default]"])
    populate = loaded.cases[0].scenario.phases["populate"]
    assert (populate.namespaces, populate.per_namespace, populate.bytes) == (2, 100, 10000)
