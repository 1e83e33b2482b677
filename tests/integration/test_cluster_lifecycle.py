"""A real kube-apiserver + etcd + kwok cluster: nodes Ready, versions right, bad input refused, nothing left behind."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import pytest
from kubernetes import client, config

from harness.clusters import kwok, state
from harness.toolchain import versions

from .conftest import leftover_processes, run_cli, unique_name

pytestmark = pytest.mark.integration


def _ready(node: dict) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions", []))


def test_200_nodes_are_ready_through_kubectl(cluster_200, binaries):
    info, report = cluster_200
    out = subprocess.run([str(binaries.kubectl), "--kubeconfig", info.kubeconfig, "get", "nodes", "-o", "json"],
                         capture_output=True, text=True, timeout=60, check=True)
    nodes = json.loads(out.stdout)["items"]
    assert len(nodes) == 200
    assert all(_ready(n) for n in nodes)
    assert report.nodes_ready == 200 and report.nodes_per_second > 0


def test_nodes_are_ready_through_the_python_client(cluster_200):
    info, _ = cluster_200
    api = client.CoreV1Api(config.new_client_from_config(config_file=info.kubeconfig))
    nodes = api.list_node(label_selector="type=kwok").items
    assert len(nodes) == 200
    ready = [n for n in nodes if any(c.type == "Ready" and c.status == "True" for c in n.status.conditions)]
    assert len(ready) == 200
    assert nodes[0].status.allocatable["cpu"] == "32"


def test_version_is_the_requested_release(cluster_200, binaries):
    info, _ = cluster_200
    api = client.VersionApi(config.new_client_from_config(config_file=info.kubeconfig))
    assert api.get_code().git_version == versions.load_pins().kubernetes_default
    out = subprocess.run([str(binaries.kube_apiserver), "--version"], capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == f"Kubernetes {versions.load_pins().kubernetes_default}"


def test_status_reports_processes_and_nodes(cluster_200):
    info, _ = cluster_200
    result = run_cli("cluster", "status", "--name", info.name, "--json", timeout=60)
    assert result.returncode == 0, result.stderr
    status = json.loads(result.stdout)[0]
    assert status["nodes"] == 200 and status["reachable"]
    assert {"etcd", "kube-apiserver", "kwok-controller"} <= set(status["processes"])
    assert all(p["alive"] and p["rss_bytes"] > 0 for p in status["processes"].values())
    assert status["etcd_db_size_bytes"] > 0


def test_taken_name_is_refused_in_one_line(cluster_200):
    info, _ = cluster_200
    result = run_cli("cluster", "up", "--name", info.name, "--nodes", "1", timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0
    assert "is taken" in result.stderr


@pytest.mark.parametrize("args, message", [
    (["--nodes", "0"], "--nodes"),
    (["--nodes", "-3"], "--nodes"),
    (["--feature-gates", "WatchList"], "Name=true"),
    (["--k8s-version", "latest"], "vMAJOR.MINOR.PATCH"),
    (["--name", "Bad_Name"], "cluster name"),
])
def test_bad_input_is_one_line(args, message, state_dir):
    result = run_cli("cluster", "up", *args, timeout=60)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_unpublished_version_is_refused(binaries, state_dir):
    result = run_cli("toolchain", "build", "--k8s-version", "v1.99.0", timeout=180)
    assert result.returncode == 2
    assert "v1.99.0 is not published" in result.stderr


def test_port_in_use_is_refused(binaries, state_dir):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        result = run_cli("cluster", "up", "--name", unique_name("port"), "--port", str(port), timeout=60)
    assert result.returncode == 2
    assert f"port {port}" in result.stderr and "in use" in result.stderr


def test_unknown_feature_gate_fails_cleanly_and_leaves_nothing(binaries, state_dir):
    name = unique_name("gate")
    result = run_cli("cluster", "up", "--name", name, "--feature-gates", "NoSuchGateAnywhere=true", timeout=300)
    assert result.returncode == 2
    assert "NoSuchGateAnywhere" in result.stderr, result.stderr
    assert leftover_processes(name) == []
    assert not state.info_path(name).exists()


def test_down_after_a_killed_up_stops_every_process(binaries, state_dir):
    name = unique_name("crash")
    up = subprocess.Popen([sys.executable, "-m", "harness", "cluster", "up", "--name", name, "--nodes", "3000"],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=dict(os.environ))
    try:
        deadline = time.monotonic() + 120
        # Wait until the control plane runs, then kill `up` without giving it a chance to clean up.
        while time.monotonic() < deadline and not (kwok.cluster_dir(name) / "pids" / "kube-apiserver.pid").exists():
            time.sleep(0.5)
        time.sleep(2)
        assert leftover_processes(name), "the cluster never started"
        up.send_signal(signal.SIGKILL)
        up.wait(timeout=30)
    finally:
        if up.poll() is None:
            up.kill()
        result = run_cli("cluster", "down", "--name", name, timeout=120)
    assert result.returncode == 0, result.stderr
    assert leftover_processes(name) == []
    assert not kwok.cluster_dir(name).exists()


@pytest.mark.parametrize("version", [v for v in versions.load_pins().kubernetes_known
                                     if v != versions.load_pins().kubernetes_default])
def test_other_known_versions_build_and_run(version, state_dir):
    """Every version the pins call known builds from the module proxy and serves /version (first run builds)."""
    from harness.clusters import bringup, spec as specs
    from harness.nodes import pools
    from harness.progress import LineProgress

    name = unique_name("ver")
    try:
        info, report = bringup.up(specs.ClusterSpec(name=name, k8s_version=version), [pools.NodePool(count=20)],
                                  LineProgress(interval=30.0))
        api = client.VersionApi(config.new_client_from_config(config_file=info.kubeconfig))
        assert api.get_code().git_version == version
        assert report.nodes_ready == 20
    finally:
        bringup.down(name)
    assert leftover_processes(name) == []
