"""Which flavors a pod set may use for topology reasons (Kueue v0.17.0's checkPodSetAndFlavorMatchForTAS).

A pod set that asks for a topology (or any pod set of a queue whose flavors are all TAS flavors: TAS
*implied*) skips flavors without one (unless they cover none of its resources), one whose Topology is
missing, and one without the requested levels; a pod set that does not ask skips TAS flavors.
"""

from __future__ import annotations

from scheduler.core.kinds import ClusterQueue, ResourceFlavor, ResourceGroup
from scheduler.core.topologies import TopologyRequest
from scheduler.core.topologystate import TopologyState
from scheduler.core.workloads import PodSet


def tas_requested(pod_set: PodSet, cq: ClusterQueue, state: TopologyState) -> bool:
    """Kueue's isTASRequested: asked for explicitly, or implied by a queue of TAS flavors only."""
    return explicit(pod_set) or state.tas_only(cq)


def explicit(pod_set: PodSet) -> bool:
    """The pod set sets some field of its topologyRequest (Kueue's IsExplicitlyRequestingTAS)."""
    return pod_set.topology_request is not None and pod_set.topology_request.explicit


def flavor_refusal(cq: ClusterQueue, flavor: ResourceFlavor, pod_set: PodSet, group: ResourceGroup,
                   state: TopologyState) -> str | None:
    """Why ``flavor`` cannot hold ``pod_set`` for topology reasons (checkPodSetAndFlavorMatchForTAS), or None."""
    if tas_requested(pod_set, cq, state):
        if not explicit(pod_set):
            return None
        if not flavor.topology_name:
            if not {r for r, _ in pod_set.requests} & set(group.covered_resources):
                return None
            return f'Flavor "{flavor.name}" does not support TopologyAwareScheduling'
        tree = state.tree(flavor.name)
        if tree is None:
            return f'Flavor "{flavor.name}" information missing in TAS cache'
        if not has_level(tree.levels, pod_set.topology_request):
            return f'Flavor "{flavor.name}" does not contain the requested level'
        return None
    if flavor.topology_name:
        return f'Flavor "{flavor.name}" supports only TopologyAwareScheduling'
    return None


def has_level(levels: tuple[str, ...], request: TopologyRequest | None) -> bool:
    """Kueue's HasLevel: the requested level (and the slice level) are levels of the topology."""
    if request is None or not levels:
        return False
    if request.required is not None:
        key = request.required
    elif request.preferred is not None:
        key = request.preferred
    elif request.slice_only:
        key = levels[0]
    elif request.unconstrained:
        key = levels[-1]
    else:
        return False
    return key in levels and (request.slice_required or levels[-1]) in levels
