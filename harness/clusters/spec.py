"""What a user asks of a cluster, validated once into typed settings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from harness.errors import KqbenchError

_NAME = re.compile(r"^[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?$")
_GATE = re.compile(r"^[A-Z][A-Za-z0-9]*$")


class SpecError(KqbenchError, ValueError):
    """A cluster setting that cannot work; the message names it and the fix."""


def parse_feature_gates(text: str | None) -> dict[str, bool]:
    """'A=true,B=false' -> {'A': True, 'B': False}; malformed input is a SpecError."""
    gates: dict[str, bool] = {}
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, value = item.partition("=")
        name, value = name.strip(), value.strip().lower()
        if not sep or not _GATE.match(name) or value not in ("true", "false"):
            raise SpecError(
                f"feature gate {item!r} is malformed: use Name=true or Name=false, comma-separated "
                "(e.g. WatchList=true,ListFromCacheSnapshot=false)"
            )
        gates[name] = value == "true"
    return gates


def format_feature_gates(gates: dict[str, bool]) -> str:
    """{'A': True} -> 'A=true' (the flag syntax of every Kubernetes component)."""
    return ",".join(f"{name}={'true' if on else 'false'}" for name, on in sorted(gates.items()))


@dataclass(frozen=True, slots=True)
class Heartbeats:
    """How simulated nodes report liveness.

    Off by default: at 100k nodes, lease renewals and status heartbeats are thousands of writes per
    second that would hide what a queueing design costs. When off, kwok keeps no leases, nodes get
    no periodic status updates, and kube-controller-manager's node-lifecycle controller is disabled
    so that nothing marks the silent nodes NotReady.
    """

    enabled: bool = False
    lease_seconds: int = 600
    """Lease duration when enabled; kwok renews at a quarter of it (kubelet's default is 40)."""
    status_seconds: int = 600
    """Interval of node status heartbeats when enabled (kubelet's default is 10)."""

    def __post_init__(self) -> None:
        if self.enabled and (self.lease_seconds <= 0 or self.status_seconds <= 0):
            raise SpecError("heartbeat lease/status seconds must be > 0 when heartbeats are on")


@dataclass(frozen=True, slots=True)
class ClusterSpec:
    """A local cluster to bring up."""

    name: str = "kqbench"
    backend: str = "kwok"
    k8s_version: str | None = None
    """None means the pinned default (harness/versions.toml)."""
    feature_gates: dict[str, bool] = field(default_factory=dict)
    heartbeats: Heartbeats = Heartbeats()
    apiserver_port: int = 0
    """0 picks a free loopback port."""
    etcd_quota_bytes: int = 8 * 1024**3
    """etcd's backend quota; its 2 GiB default is too small for 100k nodes plus workloads."""
    apiserver_args: tuple[tuple[str, str], ...] = ()
    """Extra kube-apiserver flags (name without dashes, value), e.g. requestheader settings."""
    controller_manager_args: tuple[tuple[str, str], ...] = ()
    """Extra kube-controller-manager flags, e.g. (kube-api-qps, 200): its client limit (20/s by default)
    caps how fast the job controller creates pods."""
    scheduler_args: tuple[tuple[str, str], ...] = ()
    """Extra kube-scheduler flags, e.g. (kube-api-qps, 200) (50/s by default: binds and events)."""
    etcd_args: tuple[tuple[str, str], ...] = ()
    """Extra etcd flags, e.g. (max-request-bytes, 262144): where a too-large object is refused, so that the
    refusal can be met at a scale a test affords (kwok backend)."""
    kwok_parallelism: int = 64
    """Workers kwok-controller uses to mark nodes Ready (its default of 4 takes 20 min for 100k nodes)."""
    max_requests_inflight: int = 400
    """kube-apiserver's own default; with APF on, this plus 200 mutating seats is its total concurrency."""
    jobs: bool = False
    """Run batch Jobs' pods: kube-controller-manager adds the job controller and kube-scheduler binds the
    pods to the simulated nodes, where kwok runs them for their pod annotation
    `pod-complete.stage.kwok.x-k8s.io/delay` (kwokconfig.RUNTIME_ANNOTATION; heartbeats off only).
    Off by default: bare-Workload scenarios have no pods, and both cost a watch on every pod."""
    allow_remote: bool = False
    """The existing backend may adopt an apiserver that is not on a loopback address (--allow-remote)."""
    schedulable_nodes: bool = False
    """Keep the `node.kubernetes.io/not-ready` taint off new nodes, as `jobs` does: without heartbeats
    nothing lifts it, and topology-aware scheduling (Kueue's and ours) skips a node with a taint its
    pods do not tolerate. On for clusters whose nodes have a topology."""
    bulk: bool = False
    """Write the nodes straight into etcd (batched transactions) instead of POSTing them, then wait until
    kube-apiserver serves them all Ready: 100k nodes in seconds rather than minutes, for runs that measure
    something else than node creation. kwok backend only (the others' etcd is not ours to write)."""

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            raise SpecError(
                f"cluster name {self.name!r} is invalid: use 1-40 lowercase letters, digits or '-', "
                "starting and ending with a letter or digit"
            )
        if not 0 <= self.apiserver_port <= 65535:
            raise SpecError(f"--port {self.apiserver_port} is out of range 1-65535 (or 0 for any free port)")
        if self.etcd_quota_bytes < 64 * 1024**2:
            raise SpecError("etcd quota must be at least 64 MiB")
        if self.bulk and self.backend != "kwok":
            raise SpecError(f"bulk loading writes into the cluster's own etcd: it needs the kwok backend "
                            f"(got {self.backend!r}); leave --bulk out to create the nodes through the apiserver")
