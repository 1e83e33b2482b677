"""Which gated pod of a topology-placed Job goes to which domain (pure: decides, never writes).

Kueue's topology ungater (pkg/controller/tas/topology_ungater.go) as it treats a Job's pods: a pod a
start gated (``jobs.TOPOLOGY_GATE``) waits until it is given a domain of its Workload's topology
assignment; its gate is then removed and the domain's level values are added to its nodeSelector in
the same write, which kube-scheduler then honours. Facts carried over:

- the pods of a pod set are found by the Workload annotation and the pod set label; pods that ended
  (Succeeded, Failed) do not count, so their replacements take their domains;
- by rank when every pod has one: an Indexed Job's completion index is the rank, and rank r goes to
  the domain holding the r-th pod of the assignment in its order; a pod without an index, two with
  one index, an index beyond the pod set, or an ungated pod outside its rank's domain: greedy instead;
- greedy: each domain gets as many gated pods as it has room for after the ungated pods already
  in it (counted from their nodeSelector), domains in the assignment's order, pods in the order given
  (the caller sorts them by name: Kueue takes the informer's list order, which is not defined).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.core import jobs
from scheduler.core.topologies import TopologyAssignment

Obj = dict[str, Any]
Selector = tuple[tuple[str, str], ...]
TERMINATED_PHASES = frozenset({"Succeeded", "Failed"})


@dataclass(frozen=True, slots=True)
class GatedPod:
    """What the ungater reads of a pod started by a topology-placed Job."""

    namespace: str
    name: str
    resource_version: str
    workload: str
    pod_set: str
    gated: bool
    node_selector: Selector
    terminated: bool
    rank: int | None
    """The completion index (None: the pod has none, or not a number)."""
    gates: tuple[str, ...] = ()

    @property
    def key(self) -> tuple[str, str]:
        return (self.namespace, self.name)


@dataclass(frozen=True, slots=True)
class Ungate:
    pod: GatedPod
    node_labels: Selector


def gated_pod_from_dict(obj: Obj) -> GatedPod | None:
    """The pod as the ungater reads it, or None for a pod no topology-placed start made."""
    meta = obj.get("metadata") or {}
    workload = (meta.get("annotations") or {}).get(jobs.WORKLOAD_ANNOTATION)
    labels = meta.get("labels") or {}
    if not workload or jobs.POD_SET_LABEL not in labels:
        return None
    spec = obj.get("spec") or {}
    gates = tuple(g.get("name", "") for g in spec.get("schedulingGates") or ())
    index = labels.get(jobs.COMPLETION_INDEX_LABEL)
    return GatedPod(
        namespace=meta.get("namespace", "default"), name=meta["name"], resource_version=meta.get("resourceVersion", ""),
        workload=workload, pod_set=labels[jobs.POD_SET_LABEL], gated=jobs.TOPOLOGY_GATE in gates,
        node_selector=tuple(sorted((spec.get("nodeSelector") or {}).items())),
        terminated=(obj.get("status") or {}).get("phase") in TERMINATED_PHASES,
        rank=int(index) if index is not None and index.isdigit() else None, gates=gates)


def _domain_of(levels: Sequence[str], selector: Selector) -> tuple[str, ...]:
    """Kueue's LevelValues: the pod's nodeSelector values of the assignment's levels ("" where absent)."""
    chosen = dict(selector)
    return tuple(chosen.get(level, "") for level in levels)


def _node_labels(levels: Sequence[str], values: Sequence[str]) -> Selector:
    return tuple(sorted(zip(levels, values)))


def _by_rank(assignment: TopologyAssignment, pods: Sequence[GatedPod]) -> list[Ungate] | None:
    """Rank r to the domain of the r-th pod, or None where Kueue falls back to greedy."""
    domains = [d.values for d in assignment.domains for _ in range(d.count)]
    ranked: dict[int, GatedPod] = {}
    for pod in pods:
        if pod.rank is None or pod.rank >= len(domains) or pod.rank in ranked:
            return None
        ranked[pod.rank] = pod
    for rank, pod in ranked.items():
        if not pod.gated and _domain_of(assignment.levels, pod.node_selector) != domains[rank]:
            return None
    return [Ungate(pod, _node_labels(assignment.levels, domains[rank]))
            for rank, pod in sorted(ranked.items()) if pod.gated]


def _greedy(assignment: TopologyAssignment, pods: Sequence[GatedPod]) -> list[Ungate]:
    gated = [pod for pod in pods if pod.gated]
    placed = Counter(_domain_of(assignment.levels, pod.node_selector) for pod in pods if not pod.gated)
    out: list[Ungate] = []
    for domain in assignment.domains:
        room = min(max(domain.count - placed[domain.values], 0), len(gated) - len(out))
        out += [Ungate(pod, _node_labels(assignment.levels, domain.values)) for pod in gated[len(out):len(out) + room]]
    return out


def to_ungate(assignment: TopologyAssignment, pods: Iterable[GatedPod]) -> list[Ungate]:
    """The gated pods of one pod set to ungate now, each with the node labels of its domain."""
    live = [pod for pod in pods if not pod.terminated]
    ranked = _by_rank(assignment, live)
    return ranked if ranked is not None else _greedy(assignment, live)


def ungate_patch(step: Ungate) -> Obj:
    """A merge patch that removes the topology gate and adds the domain's labels to the nodeSelector in one
    write (a gated pod's nodeSelector may only grow), failing (409) if the pod changed since it was read."""
    gates = [{"name": gate} for gate in step.pod.gates if gate != jobs.TOPOLOGY_GATE]
    return {"metadata": {"resourceVersion": step.pod.resource_version},
            "spec": {"schedulingGates": gates or None, "nodeSelector": dict(step.node_labels)}}
