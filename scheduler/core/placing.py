"""Placing a pod set on the domains of a TAS flavor (Kueue v0.17.0's findTopologyAssignment).

Ported from pkg/cache/scheduler/tas_flavor_snapshot.go with Kueue v0.17.0's default feature gates
(TASProfileMixed on, TASBalancedPlacement and TASMultiLayerTopology off):

1. every leaf counts how many pods fit in what is left of it (allocatable less admitted usage less
   what earlier pod sets of the workload take); a leaf that is a node is skipped when it has an
   untolerated NoSchedule/NoExecute taint or does not match the pod set's nodeSelector. Counts add up
   the tree, and at the slice level (the lowest, unless ``podSetSliceRequiredTopology``) they become
   slices;
2. at the requested level the domains are sorted: *BestFit* (most slices first, then fewest pods, then
   by values) for required and preferred requests, *LeastFreeCapacity* (fewest slices first) for
   unconstrained ones; BestFit takes the domain with the fewest slices that still holds them all.
   Required: one domain must hold them, else no fit. Preferred: one domain of the lowest level that
   can (going up a level at a time), else, at the top, as many domains as needed, greedily.
   Unconstrained: greedily at the lowest level;
3. going down, each chosen domain's pods go to its children in the same order, as few as possible.

Phase 1 is not Kueue's count on every node: the counts kept per pod shape (``domaincounts``) are read
where the search goes, so a placement costs the domains of the searched level and the children of the
chosen ones, not the cluster (``full_count`` counts Kueue's way, for tests and benchmarks).
The assignment lists the lowest level only when that is the node (its hostname), else every level.
Pod-set groups (a leader placed with its workers) and failed-node replacement are not modelled.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from sortedcontainers import SortedList

from scheduler.core import domaincounts
from scheduler.core.domaintrees import Domain, DomainTree, Leaf, add_into, count_in
from scheduler.core.kinds import Toleration
from scheduler.core.topologies import DomainAssignment, TopologyAssignment, TopologyRequest


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


@dataclass(slots=True, frozen=True)
class Placement:
    pod_set: str
    assignment: TopologyAssignment | None
    reason: str = ""


@dataclass(slots=True)
class _Exclusions:
    """Why nodes were left out (Kueue's ExclusionStats), for the no-fit message."""

    total: int = 0
    node_selector: int = 0
    taints: dict[str, int] | None = None
    resources: dict[str, int] | None = None

    def reasons(self) -> str:
        parts = []
        if self.node_selector:
            parts.append(f"nodeSelector: {self.node_selector}")
        parts += [f'taint "{t}": {n}' for t, n in sorted((self.taints or {}).items())]
        parts += [f'resource "{r}": {n}' for r, n in sorted((self.resources or {}).items())]
        return ", ".join(sorted(parts))


def place_pod_sets(tree: DomainTree, requests: Sequence[PlacementRequest],
                   simulate_empty: bool = False, full_count: bool = False) -> list[Placement]:
    """Kueue's FindTopologyAssignmentsForFlavor: the pod sets in order, each seeing what the earlier
    ones take; stops at the first that does not fit (the last Placement then has a reason)."""
    assumed: dict[str, dict[str, int]] = {}
    placements = []
    for request in requests:
        placement = place(tree, request, assumed, simulate_empty, full_count)
        placements.append(placement)
        if placement.assignment is None:
            break
        for domain in placement.assignment.domains:
            leaf_id = tree.leaf_id(domain.values)
            add_into(assumed.setdefault(leaf_id, {}), {r: v * domain.count for r, v in request.per_pod.items()})
    return placements


def place(tree: DomainTree, request: PlacementRequest, assumed: Mapping[str, Mapping[str, int]] | None = None,
          simulate_empty: bool = False, full_count: bool = False) -> Placement:
    """One pod set's assignment, or the reason Kueue gives for none; ``full_count``: count every node as
    Kueue does instead of reading the kept counts (the same answer, at the cost of the whole tree)."""
    levels = tree.levels
    topology_request = request.request
    slice_size, reason = _slice_size(topology_request)
    if reason:
        return Placement(request.pod_set, None, reason)
    required = topology_request is not None and topology_request.required is not None
    key = _level_key(tree, topology_request, request.implied)
    slice_key = (topology_request.slice_required if topology_request and topology_request.slice_required
                 else levels[-1])
    unconstrained = request.implied or (topology_request is not None
                                        and (bool(topology_request.unconstrained) or topology_request.slice_only))
    if key is None:
        return Placement(request.pod_set, None, "topology level not specified")
    if key not in levels:
        return Placement(request.pod_set, None, f"no requested topology level: {key}")
    if slice_key not in levels:
        return Placement(request.pod_set, None, f"no requested topology level for slices: {slice_key}")
    level, slice_level = levels.index(key), levels.index(slice_key)
    if level > slice_level:
        return Placement(request.pod_set, None,
                         f"podset slice topology {slice_key} is above the podset topology {key}")
    per_pod = dict(request.per_pod)
    per_pod["pods"] = per_pod.get("pods", 0) + 1000
    tolerations = (*request.tolerations, *tree.tolerations)
    if not full_count:
        # The counts kept per pod shape, read where the search goes (see ``domaincounts``).
        counts = domaincounts.for_shape(tree, per_pod, request.node_selector, tolerations, simulate_empty)
        counts.slicing(slice_level, slice_size)  # kept before the assumed usage goes on, so it moves with it
        assumed_leaves = counts.assume(assumed or {})
        try:
            stats = _Exclusions(len(tree.leaves), counts.by_node_selector, dict(counts.by_taint),
                                {r: n for r, n in counts.full_by_resource.items() if n})
            pods_are_slices = slice_size == 1 and slice_level == len(levels) - 1
            return _search(tree, request, level, slice_level, required, unconstrained, slice_size, stats,
                           lambda domains: counts.load(domains, slice_level, slice_size),
                           counts.ranking if pods_are_slices else None)
        finally:
            counts.give_back(assumed_leaves)
    stats = _Exclusions()
    _fill_in_counts(tree, request, per_pod, tolerations, assumed or {}, slice_size, slice_level, simulate_empty,
                    stats)
    return _search(tree, request, level, slice_level, required, unconstrained, slice_size, stats, _counted)


def _counted(_domains: Iterable[Domain]) -> None:
    """Every domain was counted before the search."""


def _search(tree: DomainTree, request: PlacementRequest, level: int, slice_level: int, required: bool,
            unconstrained: bool, slice_size: int, stats: _Exclusions,
            load: Callable[[Iterable[Domain]], None],
            ranking: Callable[[int], SortedList] | None = None) -> Placement:
    """Phase 2: the domains at the level that hold the pod set, then down to the leaves; ``load`` puts the
    counts of the domains about to be read in place."""
    levels = tree.levels
    fit_level, chosen, reason = _find_level_with_fit_domains(tree, level, required, request.count, slice_size,
                                                             unconstrained, stats, load, ranking)
    if reason:
        return Placement(request.pod_set, None, reason)
    chosen = _update_counts_to_minimum(chosen, request.count, slice_size, unconstrained, slices=True)
    depth = fit_level
    while depth < min(len(levels) - 1, slice_level):
        lower = [child for d in chosen for child in d.children]
        load(lower)
        chosen = _update_counts_to_minimum(_sorted(lower, unconstrained), request.count, slice_size,
                                           unconstrained, slices=True)
        depth += 1
    while depth < len(levels) - 1:
        below = []
        for d in chosen:
            load(d.children)
            below += _update_counts_to_minimum(_sorted(d.children, unconstrained), d.state, 1, unconstrained,
                                               slices=False)
        chosen = below
        depth += 1
    return Placement(request.pod_set, _build_assignment(tree, chosen))


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


def _fill_in_counts(tree: DomainTree, request: PlacementRequest, per_pod: dict[str, int],
                    tolerations: tuple[Toleration, ...], assumed: Mapping[str, Mapping[str, int]], slice_size: int,
                    slice_level: int, simulate_empty: bool, stats: _Exclusions) -> None:
    """Phase 1, Kueue's way: pods (and slices) that fit in each domain, counted on every node."""
    for level in tree.per_level:
        for d in level.values():
            d.state = d.slice_state = 0
    selector = request.node_selector
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
            if any(node.labels.get(k) != v for k, v in selector):
                stats.node_selector += 1
                continue
        left = tree.remaining(leaf, simulate_empty)
        if leaf.id in assumed:
            add_into(left, assumed[leaf.id], -1)
        leaf.state, limiting = count_in(per_pod, left)
        if leaf.state == 0 and limiting:
            stats.resources = stats.resources or {}
            stats.resources[limiting] = stats.resources.get(limiting, 0) + 1
    last = len(tree.levels) - 1
    for depth in range(last, -1, -1):
        for d in tree.per_level[depth].values():
            if depth < last:
                d.state = sum(c.state for c in d.children)
                d.slice_state = sum(c.slice_state for c in d.children)
            if depth == slice_level:
                d.slice_state = _div(d.state, slice_size)


def _sorted(domains: list[Domain], unconstrained: bool) -> list[Domain]:
    """BestFit: most slices first; LeastFreeCapacity (unconstrained): fewest first; then fewest pods."""
    if unconstrained:
        return sorted(domains, key=lambda d: (d.slice_state, d.state, d.values))
    return sorted(domains, key=lambda d: (-d.slice_state, d.state, d.values))


def _best_fit(domains: list[Domain], needed: int, slices: bool) -> Domain:
    """The first domain with the fewest slices (pods) that still holds ``needed``; else the first."""
    best = domains[0]
    best_state = best.slice_state if slices else best.state
    for d in domains:
        state = d.slice_state if slices else d.state
        if needed <= state < best_state:
            best, best_state = d, state
    return best


def _not_fit(tree: DomainTree, fit: int, total: int, slice_size: int, stats: _Exclusions) -> str:
    unit = "pod" if slice_size == 1 else "slice"
    name = tree.topology.name
    if fit == 0:
        message = f'topology "{name}" doesn\'t allow to fit any of {total} {unit}(s)'
    else:
        message = f'topology "{name}" allows to fit only {fit} out of {total} {unit}(s)'
    reasons = stats.reasons()
    return f"{message}. Total nodes: {stats.total}; excluded: {reasons}" if reasons else message


def _find_level_with_fit_domains(tree: DomainTree, level: int, required: bool, count: int, slice_size: int,
                                 unconstrained: bool, stats: _Exclusions,
                                 load: Callable[[Iterable[Domain]], None],
                                 ranking: Callable[[int], SortedList] | None = None) -> tuple[int, list[Domain], str]:
    """Phase 2a: the level and the domains there that hold every slice (Kueue's findLevelWithFitDomains).
    ``ranking``: the level's domains sorted by pods that fit (one pod a slice), which finds the one domain
    both orders pick by bisection: the fewest pods that still hold them all, then the first by values."""
    while True:
        if not tree.per_level[level]:
            return 0, [], f"no topology domains at level: {tree.levels[level]}"
        if ranking is not None:
            ranked = ranking(level)
            most = ranked[-1][0]
            if most >= count:
                _, _, domain_id = ranked[ranked.bisect_left((count,))]
                domain = tree.per_level[level][domain_id]
                load([domain])
                return level, [domain], ""
            if required:
                return 0, [], _not_fit(tree, most, count, slice_size, stats)
            if level > 0 and not unconstrained:
                level -= 1
                continue
        domains = list(tree.per_level[level].values())
        load(domains)
        ordered = _sorted(domains, unconstrained)
        top = ordered[0]
        slice_count = count // slice_size
        if not unconstrained and top.slice_state >= slice_count:
            top = _best_fit(ordered, slice_count, slices=True)
        if unconstrained:
            for candidate in ordered:
                if candidate.slice_state >= slice_count:
                    return level, [candidate], ""
            if required:
                return 0, [], _not_fit(tree, ordered[-1].state, slice_count, slice_size, stats)
        if top.slice_state >= slice_count:
            return level, [top], ""
        if required:
            return 0, [], _not_fit(tree, top.slice_state, slice_count, slice_size, stats)
        if level > 0 and not unconstrained:
            level -= 1
            continue
        chosen: list[Domain] = []
        remaining = slice_count
        index = 0
        while remaining > 0 and index < len(ordered):
            domain = ordered[index]
            if not unconstrained and domain.slice_state >= remaining:
                domain = _best_fit(ordered[index:], remaining, slices=True)
            chosen.append(domain)
            remaining -= domain.slice_state
            index += 1
        if remaining > 0:
            return 0, [], _not_fit(tree, slice_count - remaining, slice_count, slice_size, stats)
        return level, chosen, ""


def _update_counts_to_minimum(domains: list[Domain], count: int, slice_size: int, unconstrained: bool,
                              slices: bool) -> list[Domain]:
    """Phase 2b at one level: give ``count`` pods to as few of ``domains`` (in order) as hold them, the
    last one chosen by BestFit (Kueue's updateCountsToMinimumGeneric without leaders)."""
    chosen: list[Domain] = []
    remaining = count // slice_size if slices else count
    for index, domain in enumerate(domains):
        have = domain.slice_state if slices else domain.state
        if not unconstrained and have >= remaining:
            domain = _best_fit(domains[index:], remaining, slices)
            have = domain.slice_state if slices else domain.state
        if have >= remaining:
            domain.state = remaining * slice_size if slices else remaining
            if slices:
                domain.slice_state = remaining
            chosen.append(domain)
            return chosen
        if slices:
            domain.state = have * slice_size
        remaining -= have
        chosen.append(domain)
    raise AssertionError(f"{remaining} pods left after every domain (Kueue logs 'code assumptions violated')")


def _build_assignment(tree: DomainTree, leaves: list[Domain]) -> TopologyAssignment:
    """Kueue's buildAssignment: leaves with pods, by their values; only the hostname when it is a level."""
    first = len(tree.levels) - 1 if tree.lowest_is_node else 0
    ordered = sorted(leaves, key=lambda d: d.values)
    return TopologyAssignment(
        levels=tree.levels[first:],
        domains=tuple(DomainAssignment(d.values[first:], d.state) for d in ordered if d.state != 0),
    )


__all__ = ["Leaf", "Placement", "PlacementRequest", "place", "place_pod_sets"]
