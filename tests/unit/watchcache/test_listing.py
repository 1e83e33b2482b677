"""Pure parts of populating, listing and the ModeLister's rules."""

import pytest

from harness.clusters import state
from harness.scenarios import loading
from harness.drivers.watchcache import listing, populating
from loadtests import listgroups


@pytest.mark.parametrize("size", [0, 1, 19, 100_000])
def test_configmap_value_has_exactly_the_asked_size(size):
    manifest = populating.configmap_manifest("ns", 7, size)
    assert len(manifest["data"]["value"].encode()) == size
    assert manifest["metadata"] == {"name": "cm-000007", "namespace": "ns", "labels": {"kqbench.dev/list": "data"}}


def test_namespaces_carry_the_group_label_modelisters_look_for():
    manifest = populating.namespace_manifest(3)
    assert manifest["metadata"]["name"] == "kqb-list-3"
    assert manifest["metadata"]["labels"] == {listgroups.GROUP_LABEL: populating.GROUP}
    assert "kqbench.dev/list-group%3Dwatchcache" == listgroups.group_selector(populating.GROUP)


@pytest.mark.parametrize("names, index, expected", [
    (["b", "a", "c"], 0, "a"), (["b", "a", "c"], 4, "b"), ([], 3, None),
])
def test_clients_spread_round_robin_over_the_sorted_group(names, index, expected):
    assert listgroups.member(names, index) == expected


@pytest.mark.parametrize("list_modes, watch_modes, expected", [
    (("consistent",), ("watchlist",), "consistent"), ((), ("watchlist",), "watchlist"),
])
def test_mode_of(list_modes, watch_modes, expected):
    assert listgroups.mode_of(list_modes, watch_modes) == expected


def test_mode_of_needs_a_mode():
    with pytest.raises(ValueError):
        listgroups.mode_of((), ("list-watch",))


def _cluster(tmp_path):
    kubeconfig = tmp_path / "kubeconfig.yaml"
    kubeconfig.write_text("""apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: true}}]
users: [{name: u, user: {token: abc}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
""")
    return state.ClusterInfo(name="c", backend="kwok", kubeconfig=str(kubeconfig), apiserver_url="https://127.0.0.1:6443",
                             versions={"kubernetes": "v1.35.4"})


@pytest.mark.parametrize("phase, namespace, list_modes", [
    ("list-rv0", "watchcache", ("rv0",)), ("list-watchlist", "watchcache", ()), ("cluster-consistent", None, ("consistent",)),
])
def test_plan_of_a_list_phase(tmp_path, phase, namespace, list_modes):
    scenario = loading.load("list-configmaps", ["sweep.arm=[no-snapshot]"]).cases[0].scenario
    plan = listing.plan(_cluster(tmp_path), scenario, scenario.phases[phase]).validate()
    assert plan.locustfile == listgroups.LOCUSTFILE and plan.user_weights == {"ModeLister": plan.users}
    assert plan.settings.listwatch.namespace == namespace
    assert plan.settings.listwatch.list_modes == list_modes
    assert plan.settings.client.gzip is False
    row = listing.phase_row(_cluster(tmp_path), scenario, phase, scenario.phases[phase], {"stopped_by": "time"})
    assert row["arm"] == "no-snapshot" and row["feature_gates"] == "ListFromCacheSnapshot=false"
    assert set(row) == set(listing.LIST_PHASE_COLUMNS)


def test_the_harness_side_never_imports_locust():
    import subprocess
    import sys

    code = ("import sys; from harness.drivers.watchcache import listing, populating, reporting, tabulating; "
            "from harness.drivers import registry; registry.drivers(); print('locust' in sys.modules or 'gevent' in sys.modules)")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
