"""Node pools, the kind backend's plan, ports, cluster state and progress lines: pure or local-only."""

import io
import socket
from pathlib import Path

import pytest
import yaml

from harness.clusters import kind, ports, spec as specs, state
from harness.nodes import pools
from harness.progress import LineProgress
from scheduler import listening


def test_node_manifest_carries_kwok_annotation_capacity_and_labels():
    pool = pools.NodePool(name="gpu", count=3, cpu="96", memory="1Ti", gpus=8, zones=("a", "b"),
                          labels={"flavor": "h100"}, taints=(pools.Taint("nvidia.com/gpu", "present"),))
    node = pool.manifest(1)
    assert node["metadata"]["name"] == "gpu-000001"
    assert node["metadata"]["annotations"][pools.KWOK_NODE_ANNOTATION] == "fake"
    labels = node["metadata"]["labels"]
    assert labels["topology.kubernetes.io/zone"] == "b"
    assert labels["flavor"] == "h100" and labels[pools.POOL_LABEL] == "gpu"
    assert node["status"]["allocatable"] == {"cpu": "96", "memory": "1Ti", "pods": "110", "nvidia.com/gpu": "8"}
    assert node["spec"]["taints"] == [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    assert "nvidia.com/gpu" not in pools.NodePool().manifest(0)["status"]["allocatable"]


@pytest.mark.parametrize("kwargs, message", [
    ({"count": 0}, "count must be >= 1"),
    ({"count": -5}, "count must be >= 1"),
    ({"name": "Bad Name"}, "DNS label"),
    ({"gpus": -1}, "gpus"),
    ({"zones": ()}, "zone"),
    ({"names": "random"}, "names 'random' is not one of indexed, cloud"),
])
def test_bad_pools_fail_with_a_named_field(kwargs, message):
    with pytest.raises(pools.PoolError, match=message):
        pools.NodePool(**kwargs)


def test_bad_taint_effect():
    with pytest.raises(pools.PoolError, match="NoSchedule"):
        pools.Taint("k", effect="Sometimes")


def test_cloud_style_node_names_are_distinct_stable_dns_labels_sharing_a_part_per_instance_group():
    pool = pools.NodePool(name="gpu", count=5_000, names="cloud")
    names = [pool.node_name(i) for i in range(pool.count)]
    assert len(set(names)) == len(names)
    assert all(pools._PREFIX.match(name) and len(name) <= 63 for name in names)
    assert names == [pools.NodePool(name="gpu", count=5_000, names="cloud").node_name(i) for i in range(5_000)]
    groups = {name.split("-")[1] for name in names}  # gpu-<group>-<node>
    assert len(groups) == 5_000 // pools.CLOUD_GROUP_SIZE and all(len(g) == 8 for g in groups)
    assert pool.manifest(7)["metadata"]["name"] == names[7] == pool.manifest(7)["metadata"]["labels"]["kubernetes.io/hostname"]
    assert pools.NodePool(count=3).node_name(2) == "kwok-000002"


def test_pool_names_must_be_distinct():
    with pytest.raises(pools.PoolError, match="distinct"):
        pools.check_distinct([pools.NodePool(name="a"), pools.NodePool(name="a")])
    assert pools.total_nodes([pools.NodePool(count=2), pools.NodePool(name="b", count=3)]) == 5


def test_kind_plan_runs_kind_then_kwok_from_the_module_cache(tmp_path):
    cluster = specs.ClusterSpec(name="k1", backend="kind", feature_gates={"WatchList": False}, apiserver_port=7443)
    source = Path("/modcache/sigs.k8s.io/kwok@v0.7.0")
    plan = kind.plan(cluster, "v1.35.4", "v0.7.0", source, tmp_path)
    create, apply, rollout = plan.commands
    assert create[:5] == ["kind", "create", "cluster", "--name", "k1"]
    assert "kindest/node:v1.35.4" in create
    assert apply[-3:] == ["--server-side", "-k", str(tmp_path / "k1-kwok")]
    assert "deployment/kwok-controller" in rollout
    config = yaml.safe_load(plan.files[str(tmp_path / "k1-kind.yaml")])
    assert config["networking"] == {"apiServerAddress": "127.0.0.1", "apiServerPort": 7443}
    assert config["featureGates"] == {"WatchList": False}
    kubeadm = yaml.safe_load(config["nodes"][0]["kubeadmConfigPatches"][0])
    assert kubeadm["etcd"]["local"]["extraArgs"]["quota-backend-bytes"] == str(8 * 1024**3)
    kustomization = yaml.safe_load(plan.files[str(tmp_path / "k1-kwok" / "kustomization.yaml")])
    assert kustomization["resources"] == [str(source / "kustomize/kwok"), str(source / "kustomize/stage/node/fast")]
    assert kustomization["images"] == [{"name": kind.KWOK_IMAGE, "newTag": "v0.7.0"}]
    assert kind.teardown_commands("k1") == [["kind", "delete", "cluster", "--name", "k1"]]


def test_busy_port_is_refused_and_free_ports_are_distinct():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        busy = sock.getsockname()[1]
        assert not listening.is_free(busy)
        with pytest.raises(ports.PortInUseError, match=f"port {busy}"):
            ports.require_free(busy, "kube-apiserver")
    picked = listening.pick_free(6)
    assert len(set(picked)) == 6


def test_cluster_state_round_trips_and_refuses_newer_formats(tmp_path):
    info = state.ClusterInfo(name="c", backend="kwok", kubeconfig="/k", apiserver_url="https://127.0.0.1:1",
                             pids={"etcd": 12}, feature_gates={"WatchList": True})
    state.save(info, tmp_path)
    assert state.load("c", tmp_path) == info
    assert state.known_names(tmp_path) == ["c"]
    newer = info.to_json().replace('"version": 1', '"version": 99')
    with pytest.raises(Exception, match="newer kqbench"):
        state.ClusterInfo.from_json(newer)
    state.forget("c", tmp_path)
    with pytest.raises(Exception, match="no cluster named 'c'"):
        state.load("c", tmp_path)


def test_progress_prints_at_most_once_per_interval_unless_forced():
    now = [0.0]
    out = io.StringIO()
    progress = LineProgress(interval=2.0, stream=out, clock=lambda: now[0])
    progress("nodes", "a")
    progress("nodes", "b")
    now[0] = 2.5
    progress("nodes", "c")
    progress("nodes", "d", True)
    progress("build", "e")
    assert out.getvalue().splitlines() == ["[nodes] a", "[nodes] c", "[nodes] d", "[build] e"]
