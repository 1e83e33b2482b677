"""Bulk loading's pure parts: the stored Node objects, batching, refusing existing names, reading
kube-apiserver's answers, and the settings that ask for it."""

import json
from pathlib import Path

import orjson
import pytest
from hypothesis import given, strategies as st

from harness.clusters import bringup, kwokconfig, spec as specs, state
from harness.errors import KqbenchError
from harness.etcd import bulkserving, etcdwriting
from harness.nodes import bulkloading, pools, storing
from harness.scenarios import sections

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "nodes"
CREATED = "2026-12-01T15:39:12Z"


def test_a_stored_node_is_the_node_the_post_path_made_but_for_identity_and_times():
    # Recorded from a real cluster: `kqbench cluster add-nodes --pool post --nodes 2`, then kwok marked it Ready.
    posted = json.loads((FIXTURES / "posted-node-v1.35.4.json").read_text())
    stored = storing.stored_node(pools.NodePool(name="post", count=2), 1, uid="u-1", created=CREATED,
                                 taint_not_ready=True)

    def comparable(node: dict) -> dict:
        node = json.loads(json.dumps(node))
        for field in ("uid", "resourceVersion", "creationTimestamp"):
            node["metadata"].pop(field, None)
        for condition in node["status"]["conditions"]:
            condition["lastHeartbeatTime"] = condition["lastTransitionTime"] = "T"
        # kube-apiserver serialises this Go struct's zero value; it is never stored by anyone.
        node["status"].pop("daemonEndpoints", None)
        return node

    assert comparable(stored) == comparable(posted)
    assert stored["metadata"]["uid"] == "u-1" and stored["metadata"]["creationTimestamp"] == CREATED
    assert {c["lastTransitionTime"] for c in stored["status"]["conditions"]} == {CREATED}


@pytest.mark.parametrize("taint, expected", [
    (True, [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}, kwokconfig.NOT_READY_TAINT]),
    (False, [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}]),
])
def test_the_not_ready_taint_follows_the_apiserver_admission_and_keeps_the_pools_own(taint, expected):
    pool = pools.NodePool(name="g", count=1, gpus=8, taints=(pools.Taint("gpu", "yes"),))
    node = storing.stored_node(pool, 0, uid="u", created=CREATED, taint_not_ready=taint)
    assert node["spec"]["taints"] == expected
    assert node["status"]["allocatable"]["nvidia.com/gpu"] == "8"
    assert "taints" not in storing.stored_node(pools.NodePool(), 0, uid="u", created=CREATED,
                                               taint_not_ready=False)["spec"]


def test_a_stored_node_has_nothing_only_the_server_or_a_field_manager_writes():
    node = storing.stored_node(pools.NodePool(), 0, uid="u", created=CREATED, taint_not_ready=False)
    assert not {"resourceVersion", "managedFields", "generation", "deletionTimestamp"} & set(node["metadata"])


def test_entries_key_every_node_under_the_node_prefix_with_its_own_uid():
    uids = iter(f"uid-{i}" for i in range(10))
    listed = list(storing.entries([pools.NodePool(name="a", count=2), pools.NodePool(name="b", count=1)], CREATED,
                                  False, uids=lambda: next(uids)))
    assert [key for key, _ in listed] == [b"/registry/minions/a-000000", b"/registry/minions/a-000001",
                                          b"/registry/minions/b-000000"]
    decoded = [orjson.loads(value) for _, value in listed]
    assert [n["metadata"]["uid"] for n in decoded] == ["uid-0", "uid-1", "uid-2"]
    assert [n["metadata"]["name"] for n in decoded] == ["a-000000", "a-000001", "b-000000"]
    assert storing.node_names([pools.NodePool(name="a", count=2)]) == ["a-000000", "a-000001"]


@pytest.mark.parametrize("count, size, lengths", [
    (0, 128, []),
    (1, 128, [1]),
    (128, 128, [128]),
    (300, 128, [128, 128, 44]),
    (5, 2, [2, 2, 1]),
])
def test_batches_are_consecutive_slices_of_at_most_the_size(count, size, lengths):
    assert [len(b) for b in etcdwriting.batches(list(range(count)), size)] == lengths


@given(st.lists(st.integers(), max_size=400), st.integers(min_value=1, max_value=200))
def test_batches_keep_every_item_once_in_order(items, size):
    chunks = etcdwriting.batches(items, size)
    assert [x for chunk in chunks for x in chunk] == items
    assert all(0 < len(chunk) <= size for chunk in chunks)


def test_a_batch_size_below_one_is_refused():
    with pytest.raises(ValueError, match=">= 1"):
        etcdwriting.batches([1], 0)


def test_existing_names_are_refused_with_how_many_and_which():
    present = [storing.key(f"kwok-{i:06d}") for i in range(5)]
    with pytest.raises(bulkloading.NamesExist) as raised:
        bulkloading.refuse_existing(present, 200, replace=False)
    message = str(raised.value)
    assert message.startswith("5 of the 200 nodes to load already exist")
    assert "kwok-000000, kwok-000001, kwok-000002, ..." in message and "kwok-000003" not in message
    assert "nothing was written" in message and "--replace" in message


@pytest.mark.parametrize("present, replace", [([], False), ([], True), ([storing.key("kwok-000000")], True)])
def test_nothing_present_or_an_explicit_replace_goes_ahead(present, replace):
    assert bulkloading.refuse_existing(present, 10, replace) is None


def test_the_watch_caches_revision_is_read_from_the_too_large_answer():
    # kube-apiserver v1.35.4's answer to a LIST at a revision its watch cache has not reached.
    body = (b'{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: '
            b'Too large resource version: 99999, current: 340","reason":"Timeout","code":504}')
    assert bulkserving.cache_revision(body) == 340
    assert bulkserving.cache_revision("something else") is None


def test_the_selector_names_every_pool():
    assert bulkloading.pool_selector([pools.NodePool(name="b"), pools.NodePool(name="a")]) == \
        f"{pools.POOL_LABEL} in (a,b)"


@pytest.mark.parametrize("url, expected", [
    ("http://127.0.0.1:2379", ("127.0.0.1", 2379)),
    ("http://localhost:32379", ("localhost", 32379)),
    ("http://[::1]:2379", ("::1", 2379)),
])
def test_etcd_on_loopback_is_accepted(url, expected):
    assert etcdwriting.endpoint(url) == expected


@pytest.mark.parametrize("url, message", [
    ("http://10.0.0.5:2379", "not on a loopback"),
    ("http://etcd.example:2379", "not on a loopback"),
    ("https://127.0.0.1:2379", "not http://HOST:PORT"),
    ("http://127.0.0.1", "not http://HOST:PORT"),
])
def test_etcd_elsewhere_is_refused(url, message):
    with pytest.raises(KqbenchError, match=message):
        etcdwriting.endpoint(url)


@pytest.mark.parametrize("command, taints", [
    (["kube-apiserver", "--etcd-prefix=/registry"], True),
    (["kube-apiserver", "--disable-admission-plugins=TaintNodesByCondition"], False),
    (["kube-apiserver", "--disable-admission-plugins=A,TaintNodesByCondition,B"], False),
    (["kube-apiserver", "--disable-admission-plugins=TaintNodesByCondition", "--disable-admission-plugins=A"], True),
])
def test_the_taint_decision_is_read_from_the_apiservers_flags(command, taints):
    assert kwokconfig.flags_taint_new_nodes(command) is taints


@pytest.mark.parametrize("jobs, heartbeats, taints", [(False, False, True), (True, False, False), (True, True, True)])
def test_the_config_disables_the_taint_exactly_where_it_says(jobs, heartbeats, taints):
    cluster = specs.ClusterSpec(jobs=jobs, heartbeats=specs.Heartbeats(enabled=heartbeats))
    binaries = _binaries()
    ports = kwokconfig.Ports(1, 2, 3, 4, 5, 6)
    config = kwokconfig.kwokctl_documents(cluster, binaries, ports)[0]
    apiserver = next(p for p in config["componentsPatches"] if p["name"] == "kube-apiserver")
    command = [f"--{a['key']}={a['value']}" for a in apiserver["extraArgs"]]
    assert kwokconfig.taints_new_nodes(cluster) is taints
    assert kwokconfig.flags_taint_new_nodes(command) is taints


def _binaries():
    from harness.toolchain import layout

    return layout.Binaries.in_cache("v1.35.4", "v3.6.16", "v0.7.0")


@pytest.mark.parametrize("backend", ["existing", "kind"])
def test_bulk_needs_the_kwok_backend(backend):
    with pytest.raises(specs.SpecError, match="needs the kwok backend"):
        specs.ClusterSpec(backend=backend, bulk=True)


def test_the_scenario_field_reaches_the_cluster_spec():
    section = sections.ClusterSection(nodes=100, bulk=True)
    assert section.cluster_spec("c").bulk is True
    assert sections.ClusterSection(nodes=100).cluster_spec("c").bulk is False


def test_replace_without_bulk_is_refused_before_anything_runs():
    info = state.ClusterInfo(name="c", backend="kwok", kubeconfig="/nonexistent", apiserver_url="https://127.0.0.1:1")
    with pytest.raises(specs.SpecError, match="--replace goes with --bulk"):
        bringup.add_nodes(info, [pools.NodePool(count=1)], lambda *a, **k: None, bulk=False, replace=True)


def test_a_cluster_without_its_own_etcd_cannot_be_bulk_loaded():
    info = state.ClusterInfo(name="c", backend="existing", kubeconfig="/nonexistent", apiserver_url="https://h:1")
    with pytest.raises(KqbenchError, match="no etcd of its own"):
        bulkloading.load(info, [pools.NodePool(count=1)], lambda *a, **k: None)
