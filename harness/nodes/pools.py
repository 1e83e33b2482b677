"""Node pools: what a group of simulated nodes looks like, and their Node manifests (pure)."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

from harness.errors import KqbenchError
from harness.nodes.topologies import NodeTopology

# kwok-controller manages nodes carrying this annotation (in-cluster kwok selects on it).
KWOK_NODE_ANNOTATION = "kwok.x-k8s.io/node"
POOL_LABEL = "kqbench.dev/pool"
_PREFIX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
NAME_STYLES = ("indexed", "cloud")
CLOUD_GROUP_SIZE = 1_000
"""Nodes per instance group in cloud-style names (a group shares its 8-hex-digit part, as GKE's do)."""
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_SPREAD = 1_679_609  # odd and not a multiple of 3: index * _SPREAD mod 36**4 is one-to-one within a group


class PoolError(KqbenchError, ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str = ""
    effect: str = "NoSchedule"

    def __post_init__(self) -> None:
        if self.effect not in _EFFECTS:
            raise PoolError(f"taint effect {self.effect!r} is not one of {', '.join(_EFFECTS)}")


@dataclass(frozen=True, slots=True)
class NodePool:
    """count identical nodes named <name>-<index>; quantities are Kubernetes strings ('32', '256Gi')."""

    name: str = "kwok"
    count: int = 1
    cpu: str = "32"
    memory: str = "256Gi"
    gpus: int = 0
    """nvidia.com/gpu per node (0 leaves the resource out)."""
    pods: int = 110
    labels: dict[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    instance_type: str = "kwok.sim"
    zones: tuple[str, ...] = ("zone-a",)
    """Nodes are spread round-robin over these zones."""
    topology: NodeTopology | None = None
    """Block and rack labels for topology-aware scheduling (None: the nodes have none)."""
    names: str = "indexed"
    """indexed: <pool>-000042. cloud: as a cloud names its VMs, <pool>-<instance group, 8 hex>-<4 characters>
    (GKE's shape): the part that differs between nodes is what a Workload's topology assignment pays per
    host, and indexed names share all but their last digits."""

    def __post_init__(self) -> None:
        if self.count <= 0:
            raise PoolError(f"node pool {self.name!r}: count must be >= 1 (got {self.count})")
        if not _PREFIX.match(self.name) or len(self.name) > 40:
            raise PoolError(f"node pool name {self.name!r} must be a DNS label prefix of at most 40 characters")
        if self.gpus < 0 or self.pods <= 0:
            raise PoolError(f"node pool {self.name!r}: gpus must be >= 0 and pods >= 1")
        if not self.zones:
            raise PoolError(f"node pool {self.name!r}: give at least one zone")
        if self.names not in NAME_STYLES:
            raise PoolError(f"node pool {self.name!r}: names {self.names!r} is not one of {', '.join(NAME_STYLES)}")

    def node_name(self, index: int) -> str:
        if self.names == "indexed":
            return f"{self.name}-{index:06d}"
        group, member = divmod(index, CLOUD_GROUP_SIZE)
        code = hashlib.sha1(f"{self.name}/{group}".encode()).hexdigest()[:8]
        scrambled = (member * _SPREAD + group) % 36**4
        return f"{self.name}-{code}-{''.join(_BASE36[scrambled // 36**k % 36] for k in range(4))}"

    def manifest(self, index: int) -> dict:
        """The Node object for the index-th node of this pool, with status so kwok keeps its capacity."""
        name = self.node_name(index)
        resources = {"cpu": self.cpu, "memory": self.memory, "pods": str(self.pods)}
        if self.gpus:
            resources["nvidia.com/gpu"] = str(self.gpus)
        labels = {
            "type": "kwok",
            "kubernetes.io/hostname": name,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "node.kubernetes.io/instance-type": self.instance_type,
            "topology.kubernetes.io/zone": self.zones[index % len(self.zones)],
            POOL_LABEL: self.name,
            **(self.topology.labels(index) if self.topology else {}),
            **self.labels,
        }
        spec: dict = {}
        if self.taints:
            spec["taints"] = [{"key": t.key, "value": t.value, "effect": t.effect} for t in self.taints]
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": labels, "annotations": {KWOK_NODE_ANNOTATION: "fake"}},
            "spec": spec,
            "status": {"allocatable": resources, "capacity": dict(resources)},
        }


def total_nodes(pools: list[NodePool]) -> int:
    return sum(p.count for p in pools)


def check_distinct(pools: list[NodePool]) -> None:
    names = [p.name for p in pools]
    if len(set(names)) != len(names):
        raise PoolError(f"node pool names must be distinct (got {', '.join(names)})")
