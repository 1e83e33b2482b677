"""Whether each Job that asked for one domain ran in one, from its pods' nodes (pure).

A class whose `load.mix` entry asks for a `required` topology level (Kueue's
`kueue.x-k8s.io/podset-required-topology`) must run every Job's pods under one value of that level: one
rack, one block. The nodes' levels are known without asking the cluster: a pool with a `topology`
labels its index-th node by ``NodeTopology.labels`` (and every node by its name as hostname). A Job is
judged once every one of its pods was bound; it is kept when its bound pods share the level's value.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from harness.drivers.jobs import plans, recording
from harness.nodes import pools as nodepools, topologies


@dataclass(frozen=True, slots=True)
class Kept:
    judged: int
    """Jobs of the class whose pods were all bound."""
    in_one_domain: int


def node_levels(pools: Sequence[nodepools.NodePool]) -> dict[str, dict[str, str]]:
    """Node name -> its topology labels, for the nodes of pools with a topology."""
    out: dict[str, dict[str, str]] = {}
    for pool in pools:
        if pool.topology is not None:
            for index in range(pool.count):
                name = pool.node_name(index)
                out[name] = {**pool.topology.labels(index), topologies.HOSTNAME_LABEL: name}
    return out


def required_levels(plan: plans.Plan) -> dict[str, str]:
    """Class name -> the level its Jobs require (classes that require none are left out)."""
    out = {}
    for cls in plan.arrivals.classes:
        required = dict(cls.topology_request).get("required")
        if required:
            out[cls.name] = str(required)
    return out


def kept_by_class(jobs: Iterable[recording.JobRecord], pods: Iterable[recording.PodRecord],
                  required: Mapping[str, str], levels: Mapping[str, Mapping[str, str]]) -> dict[str, Kept]:
    nodes_of: dict[tuple[str, str], list[str | None]] = defaultdict(list)
    for pod in pods:
        nodes_of[pod.job].append(pod.node)
    judged: dict[str, int] = defaultdict(int)
    kept: dict[str, int] = defaultdict(int)
    for job in jobs:
        level = required.get(job.job_class)
        nodes = nodes_of.get(job.key, [])
        if level is None or len(nodes) < job.pods or None in nodes:
            continue
        judged[job.job_class] += 1
        values = {(levels.get(node) or {}).get(level) for node in nodes}
        kept[job.job_class] += len(values) == 1 and None not in values
    return {name: Kept(judged[name], kept[name]) for name in required}
