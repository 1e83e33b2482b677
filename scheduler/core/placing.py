"""Placing a pod set on the domains of a TAS flavor (Kueue v0.17.0's findTopologyAssignment).

Ported from pkg/cache/scheduler/tas_flavor_snapshot.go with Kueue v0.17.0's default feature gates
(TASProfileMixed on, TASBalancedPlacement and TASMultiLayerTopology off):

1. every leaf counts how many pods fit in what is left of it (allocatable less admitted usage less
   what earlier pod sets of the workload take); a leaf that is a node is skipped when it has an
   untolerated NoSchedule/NoExecute taint or does not match the pod set's nodeSelector. Counts add up
   the tree, and at the slice level (the lowest, unless ``podSetSliceRequiredTopology``) they become
   slices. With a pod-set group (``podSetGroupName``: a leader and its workers, placed together) each
   leaf also says whether the leader fits and how many workers fit beside it;
2. at the requested level the domains are sorted: *BestFit* (most slices first, then fewest pods, then
   by values) for required and preferred requests, *LeastFreeCapacity* (fewest slices first) for
   unconstrained ones; BestFit takes the domain with the fewest slices that still holds them all.
   Required: one domain must hold them, else no fit. Preferred: one domain of the lowest level that
   can (going up a level at a time), else, at the top, as many domains as needed, greedily.
   Unconstrained: greedily at the lowest level;
3. going down, each chosen domain's pods go to its children in the same order, as few as possible
   (``domainchoosing`` does 2 and 3).

Phase 1 is not Kueue's count on every node: the counts kept per pod shape (``domaincounts``) are read
where the search goes, so a placement costs the domains of the searched level and the children of the
chosen ones, not the cluster (``full_count`` counts Kueue's way, for tests and benchmarks; groups are
always counted that way). The assignment lists the lowest level only when that is the node (its
hostname), else every level. Failed-node replacement is not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from sortedcontainers import SortedList

from scheduler.core import domaincounts, domainchoosing
from scheduler.core.domainchoosing import Exclusions
from scheduler.core.domaintrees import Domain, DomainTree, add_into, count_in
from scheduler.core.kinds import Toleration
from scheduler.core.topologies import TopologyAssignment, TopologyRequest

Usage = Mapping[str, Mapping[str, int]]


@dataclass(slots=True, frozen=True)
class PlacementRequest:
    """One pod set to place (Kueue's TASPodSetRequests): per-pod requests in milli-units, no ``pods``."""

    pod_set: str
    per_pod: Mapping[str, int]
    count: int
    request: TopologyRequest | None
    # No topologyRequest, in a ClusterQueue whose flavors are all TAS flavors: placed as unconstrained.
    implied: bool = False
    node_selector: tuple[tuple[str, str], ...] = ()
    tolerations: tuple[Toleration, ...] = ()

    @property
    def group(self) -> str | None:
        return self.request.group if self.request is not None else None


@dataclass(slots=True, frozen=True)
class Placement:
    pod_set: str
    assignment: TopologyAssignment | None
    reason: str = ""


def place_pod_sets(tree: DomainTree, requests: Sequence[PlacementRequest],
                   simulate_empty: bool = False, full_count: bool = False) -> list[Placement]:
    """Kueue's FindTopologyAssignmentsForFlavor: the pod sets in order (a group's together), each seeing
    what the earlier ones take; stops at the first that does not fit (its Placements then have a reason)."""
    groups: dict[object, list[PlacementRequest]] = {}
    for index, request in enumerate(requests):
        groups.setdefault(request.group if request.group is not None else index, []).append(request)
    assumed: dict[str, dict[str, int]] = {}
    placements: list[Placement] = []
    for members in groups.values():
        workers, leader = _leader_and_workers(members)
        got, reason = _place(tree, workers, leader, assumed, simulate_empty, full_count)
        placements += [Placement(m.pod_set, got.get(m.pod_set), reason) for m in members]
        if reason:
            break
        for member in members:
            for domain in got[member.pod_set].domains if member.pod_set in got else ():
                add_into(assumed.setdefault(tree.leaf_id(domain.values), {}),
                         {r: v * domain.count for r, v in member.per_pod.items()})
    return placements


def _leader_and_workers(members: list[PlacementRequest]) -> tuple[PlacementRequest, PlacementRequest | None]:
    """Kueue's findLeaderAndWorkers: of a group's first two pod sets, the smaller is the leader."""
    if len(members) == 1:
        return members[0], None
    workers, leader = members[0], members[1]
    if leader.count > workers.count:
        workers, leader = leader, workers
    return workers, leader


def place(tree: DomainTree, request: PlacementRequest, assumed: Usage | None = None,
          simulate_empty: bool = False, full_count: bool = False) -> Placement:
    """One pod set's assignment, or the reason Kueue gives for none; ``full_count``: count every node as
    Kueue does instead of reading the kept counts (the same answer, at the cost of the whole tree)."""
    got, reason = _place(tree, request, None, assumed or {}, simulate_empty, full_count)
    return Placement(request.pod_set, got.get(request.pod_set), reason)


def _place(tree: DomainTree, workers: PlacementRequest, leader: PlacementRequest | None, assumed: Usage,
           simulate_empty: bool, full_count: bool) -> tuple[dict[str, TopologyAssignment], str]:
    """Assignments by pod set name, or none and the reason."""
    levels = tree.levels
    topology_request = workers.request
    slice_size, reason = _slice_size(topology_request)
    if reason:
        return {}, reason
    required = topology_request is not None and topology_request.required is not None
    key = _level_key(tree, topology_request, workers.implied)
    slice_key = (topology_request.slice_required if topology_request and topology_request.slice_required
                 else levels[-1])
    unconstrained = workers.implied or (topology_request is not None
                                        and (bool(topology_request.unconstrained) or topology_request.slice_only))
    if key is None:
        return {}, "topology level not specified"
    if key not in levels:
        return {}, f"no requested topology level: {key}"
    if slice_key not in levels:
        return {}, f"no requested topology level for slices: {slice_key}"
    level, slice_level = levels.index(key), levels.index(slice_key)
    if level > slice_level:
        return {}, f"podset slice topology {slice_key} is above the podset topology {key}"
    per_pod = _with_pod(workers.per_pod)
    tolerations = (*workers.tolerations, *tree.tolerations)
    if not full_count and leader is None:
        # The counts kept per pod shape, read where the search goes (see ``domaincounts``).
        counts = domaincounts.for_shape(tree, per_pod, workers.node_selector, tolerations, simulate_empty)
        counts.slicing(slice_level, slice_size)  # kept before the assumed usage goes on, so it moves with it
        assumed_leaves = counts.assume(assumed)
        try:
            stats = Exclusions(len(tree.leaves), counts.by_node_selector, dict(counts.by_taint),
                               {r: n for r, n in counts.full_by_resource.items() if n})
            pods_are_slices = slice_size == 1 and slice_level == len(levels) - 1
            return _search(tree, workers, None, level, slice_level, required, unconstrained, slice_size, stats,
                           lambda domains: counts.load(domains, slice_level, slice_size),
                           counts.ranking if pods_are_slices else None)
        finally:
            counts.give_back(assumed_leaves)
    stats = Exclusions()
    leader_per_pod = _with_pod(leader.per_pod) if leader is not None else None
    _fill_in_counts(tree, workers.node_selector, per_pod, leader_per_pod, tolerations, assumed, slice_size,
                    slice_level, simulate_empty, stats)
    return _search(tree, workers, leader, level, slice_level, required, unconstrained, slice_size, stats,
                   _counted)


def _with_pod(per_pod: Mapping[str, int]) -> dict[str, int]:
    """Requests of one pod with the pod itself (Kueue counts ``pods`` against the node's allocatable)."""
    out = dict(per_pod)
    out["pods"] = out.get("pods", 0) + 1000
    return out


def _counted(_domains: object) -> None:
    """Every domain was counted before the search."""


def _search(tree: DomainTree, workers: PlacementRequest, leader: PlacementRequest | None, level: int,
            slice_level: int, required: bool, unconstrained: bool, slice_size: int, stats: Exclusions,
            load: domainchoosing.Load,
            ranking: Callable[[int], SortedList] | None = None) -> tuple[dict[str, TopologyAssignment], str]:
    """Phase 2 (``domainchoosing``); ``load`` puts the counts of the domains about to be read in place."""
    leaders = 1 if leader is not None else 0
    fit_level, chosen, reason = domainchoosing.find_level_with_fit_domains(
        tree, level, required, workers.count, leaders, slice_size, unconstrained, stats, load, ranking)
    if reason:
        return {}, reason
    try:
        leaves = domainchoosing.descend(tree, chosen, fit_level, slice_level, workers.count, leaders, slice_size,
                                        unconstrained, load)
    except domainchoosing.AssumptionsViolated as error:
        return {}, f"{domainchoosing.VIOLATED} ({error})"
    if leader is None:
        return {workers.pod_set: domainchoosing.build_assignment(tree, leaves)}, ""
    return {leader.pod_set: domainchoosing.build_assignment(tree, [d for d in leaves if d.leader_state > 0],
                                                            leader=True),
            workers.pod_set: domainchoosing.build_assignment(tree, [d for d in leaves if d.state > 0])}, ""


def _slice_size(request: TopologyRequest | None) -> tuple[int, str]:
    if request is None or request.slice_required is None:
        return 1, ""
    if request.slice_size is None:
        return 0, "slice topology requested, but slice size not provided"
    return request.slice_size, ""


def _level_key(tree: DomainTree, request: TopologyRequest | None, implied: bool) -> str | None:
    """Kueue's levelKeyWithImpliedFallback."""
    if request is not None:
        if request.required is not None:
            return request.required
        if request.preferred is not None:
            return request.preferred
        if request.slice_only:
            return tree.levels[0]
        if request.unconstrained:
            return tree.levels[-1]
    return tree.levels[-1] if implied else None


def _div(a: int, b: int) -> int:
    """Go's int32 division (towards zero)."""
    return a // b if a >= 0 else -(-a // b)


def _fill_in_counts(tree: DomainTree, node_selector: tuple[tuple[str, str], ...], per_pod: dict[str, int],
                    leader_per_pod: dict[str, int] | None, tolerations: tuple[Toleration, ...], assumed: Usage,
                    slice_size: int, slice_level: int, simulate_empty: bool, stats: Exclusions) -> None:
    """Phase 1, Kueue's way (fillInCounts): pods (and slices) that fit in each domain, counted on every
    node; with a leader, whether it fits and what fits beside it."""
    for level in tree.per_level:
        for d in level.values():
            d.state = d.slice_state = d.leader_state = d.state_with_leader = d.slice_state_with_leader = 0
    for leaf in tree.leaves.values():
        stats.total += 1
        if tree.lowest_is_node:
            node = leaf.node
            assert node is not None
            taint = domaincounts.untolerated(node.taints, tolerations)
            if taint is not None:
                stats.taints = stats.taints or {}
                text = domaincounts.taint_text(taint)
                stats.taints[text] = stats.taints.get(text, 0) + 1
                continue
            if any(node.labels.get(k) != v for k, v in node_selector):
                stats.node_selector += 1
                continue
        left = tree.remaining(leaf, simulate_empty)
        if leaf.id in assumed:
            add_into(left, assumed[leaf.id], -1)
        leaf.state, limiting = count_in(per_pod, left)
        if leaf.state == 0 and limiting:
            stats.resources = stats.resources or {}
            stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
        if leader_per_pod is not None and count_in(leader_per_pod, left)[0] > 0:
            leaf.leader_state = 1
            add_into(left, leader_per_pod, -1)
        leaf.state_with_leader = count_in(per_pod, left)[0]
    last = len(tree.levels) - 1
    for depth in range(last, -1, -1):
        for d in tree.per_level[depth].values():
            if depth < last:
                _add_up(d)
            if depth == slice_level:
                d.slice_state = _div(d.state, slice_size)
                d.slice_state_with_leader = _div(d.state_with_leader, slice_size)


def _add_up(domain: Domain) -> None:
    """Kueue's fillInCountsHelper for a parent: sums, and beside a leader the sum less the smallest
    loss a leader causes in one child."""
    children = domain.children
    domain.state = sum(c.state for c in children)
    slices = sum(c.slice_state for c in children)
    domain.state_with_leader = domain.state - min(c.state - c.state_with_leader for c in children)
    domain.slice_state = slices
    domain.slice_state_with_leader = slices - min(c.slice_state - c.slice_state_with_leader for c in children)
    domain.leader_state = max(c.leader_state for c in children)


__all__ = ["Placement", "PlacementRequest", "place", "place_pod_sets"]
