"""The kind backend: `kind create cluster` plus kwok's in-cluster controller, as kwok's docs describe.

It needs a container engine, which this project's machines lack, so the commands and manifests
below are unit-tested as data but never exercised here (docs/clusters.md says so).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from harness.clusters import spec as specs
from scheduler import listening

NAME = "kind"
KIND_NODE_IMAGE = "kindest/node"
KWOK_IMAGE = "registry.k8s.io/kwok/kwok"


@dataclass(frozen=True, slots=True)
class KindPlan:
    """Everything the kind backend would run, in order, plus the files it would write first."""

    files: dict[str, str]
    commands: list[list[str]]
    kubeconfig: str


def kind_config(cluster: specs.ClusterSpec) -> dict:
    """kind's Cluster config: loopback API server, feature gates, extra apiserver flags."""
    apiserver_args = {"max-requests-inflight": str(cluster.max_requests_inflight)}
    apiserver_args.update(dict(cluster.apiserver_args))
    config: dict = {
        "kind": "Cluster",
        "apiVersion": "kind.x-k8s.io/v1alpha4",
        "networking": {"apiServerAddress": listening.LOOPBACK},
        "nodes": [{
            "role": "control-plane",
            "kubeadmConfigPatches": [yaml.safe_dump({
                "kind": "ClusterConfiguration",
                "apiServer": {"extraArgs": apiserver_args},
                **({"controllerManager": {"extraArgs": dict(cluster.controller_manager_args)}}
                   if cluster.controller_manager_args else {}),
                **({"scheduler": {"extraArgs": dict(cluster.scheduler_args)}} if cluster.scheduler_args else {}),
                "etcd": {"local": {"extraArgs": {"quota-backend-bytes": str(cluster.etcd_quota_bytes)}}},
            }, sort_keys=True)],
        }],
    }
    if cluster.apiserver_port:
        config["networking"]["apiServerPort"] = cluster.apiserver_port
    if cluster.feature_gates:
        config["featureGates"] = dict(sorted(cluster.feature_gates.items()))
    return config


def plan(cluster: specs.ClusterSpec, k8s_version: str, kwok_version: str, kwok_source: Path, workdir: Path,
         kind_binary: str = "kind", kubectl_binary: str = "kubectl") -> KindPlan:
    """The files and commands that bring up a kind cluster with kwok managing fake nodes.

    kwok_source is the kwok module folder from the Go module cache: its kustomize/ tree holds the
    controller's manifests, so nothing is fetched from the network but the container images.
    """
    config_path = workdir / f"{cluster.name}-kind.yaml"
    kustomization_dir = workdir / f"{cluster.name}-kwok"
    kustomization = {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": [str(kwok_source / "kustomize" / "kwok"), str(kwok_source / "kustomize" / "stage" / "node" / "fast")],
        "images": [{"name": KWOK_IMAGE, "newTag": kwok_version}],
    }
    context = f"kind-{cluster.name}"
    kubeconfig_path = workdir / f"{cluster.name}-kubeconfig.yaml"
    commands = [
        [kind_binary, "create", "cluster", "--name", cluster.name, "--image", f"{KIND_NODE_IMAGE}:{k8s_version}",
         "--config", str(config_path), "--wait", "180s", "--kubeconfig", str(kubeconfig_path)],
        [kubectl_binary, "--kubeconfig", str(kubeconfig_path), "--context", context, "apply", "--server-side", "-k", str(kustomization_dir)],
        [kubectl_binary, "--kubeconfig", str(kubeconfig_path), "--context", context, "-n", "kube-system", "rollout", "status",
         "deployment/kwok-controller", "--timeout=180s"],
    ]
    files = {
        str(config_path): yaml.safe_dump(kind_config(cluster), sort_keys=False),
        str(kustomization_dir / "kustomization.yaml"): yaml.safe_dump(kustomization, sort_keys=False),
    }
    return KindPlan(files=files, commands=commands, kubeconfig=str(kubeconfig_path))


def teardown_commands(name: str, kind_binary: str = "kind") -> list[list[str]]:
    return [[kind_binary, "delete", "cluster", "--name", name]]


def run(kind_plan: KindPlan, kind_binary: str = "kind") -> None:
    """Write the plan's files and run its commands; a missing `kind` or engine is a one-line error."""
    import shutil
    import subprocess

    from harness.errors import KqbenchError

    if shutil.which(kind_binary) is None:
        raise KqbenchError("the kind backend needs `kind` on PATH and a container engine; use --backend kwok here")
    for path, text in kind_plan.files.items():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(text)
    for command in kind_plan.commands:
        result = subprocess.run(command, capture_output=True, text=True, timeout=600)
        if result.returncode != 0:
            last = (result.stderr or result.stdout).strip().splitlines()[-1:] or ["no output"]
            raise KqbenchError(f"`{' '.join(command[:3])}` failed: {last[0]}")
