"""Choosing the domains of a pod set once the pods that fit per domain are counted (placement's phase 2).

Ported from Kueue v0.17.0's pkg/cache/scheduler/tas_flavor_snapshot.go (findLevelWithFitDomains,
updateCountsToMinimumGeneric, consumeWithLeadersGeneric, sortedDomains, sortedDomainsWithLeader,
findBestFitDomain*, buildAssignment), with TASProfileMixed on (LeastFreeCapacity for unconstrained
requests, BestFit otherwise) and balanced placement off. A domain carries the counts ``placing`` (or
``domaincounts``) put there: pods and slices that fit, and with a leader of a pod-set group, whether
the leader fits (``leader_state``) and what is left for workers beside it (``*_with_leader``). The
choice writes into those same fields what each chosen domain gets, as Kueue does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from sortedcontainers import SortedList

from scheduler.core.domaintrees import Domain, DomainTree
from scheduler.core.topologies import DomainAssignment, TopologyAssignment

Load = Callable[[Iterable[Domain]], None]


class AssumptionsViolated(Exception):
    """Pods left after every domain (Kueue logs "code assumptions violated" and assigns nothing)."""


VIOLATED = "topology assignment failed: code assumptions violated"
"""The reason such a pod set gets here: refused, where Kueue v0.17.0 admits it on no domain at all."""


@dataclass(slots=True)
class Exclusions:
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


def not_fit(tree: DomainTree, fit: int, total: int, slice_size: int, stats: Exclusions) -> str:
    unit = "pod" if slice_size == 1 else "slice"
    name = tree.topology.name
    if fit == 0:
        message = f'topology "{name}" doesn\'t allow to fit any of {total} {unit}(s)'
    else:
        message = f'topology "{name}" allows to fit only {fit} out of {total} {unit}(s)'
    reasons = stats.reasons()
    return f"{message}. Total nodes: {stats.total}; excluded: {reasons}" if reasons else message


def sorted_domains(domains: list[Domain], unconstrained: bool) -> list[Domain]:
    """BestFit: most slices first; LeastFreeCapacity (unconstrained): fewest first; then fewest pods."""
    if unconstrained:
        return sorted(domains, key=lambda d: (d.slice_state, d.state, d.values))
    return sorted(domains, key=lambda d: (-d.slice_state, d.state, d.values))


def _sorted_with_leader(domains: list[Domain], unconstrained: bool) -> list[Domain]:
    """Domains that hold a leader first, then as ``sorted_domains`` by what is left beside one."""
    if unconstrained:
        return sorted(domains, key=lambda d: (-d.leader_state, d.slice_state_with_leader, d.state_with_leader,
                                              d.values))
    return sorted(domains, key=lambda d: (-d.leader_state, -d.slice_state_with_leader, d.state_with_leader,
                                          d.values))


def _best_fit(domains: list[Domain], needed: int, slices: bool, leaders: int = 0) -> Domain:
    """The first domain with the fewest slices (pods) that still holds ``needed`` (beside a leader when
    one is still to place); else the first (Kueue's findBestFitDomain / ForSlices)."""
    def state(d: Domain) -> int:
        if slices:
            return d.slice_state_with_leader if leaders > 0 else d.slice_state
        return d.state_with_leader if leaders > 0 else d.state
    best = domains[0]
    best_state = state(best)
    for d in domains:
        have = state(d)
        if needed <= have < best_state:
            best, best_state = d, have
    return best


def find_level_with_fit_domains(tree: DomainTree, level: int, required: bool, count: int, leaders: int,
                                slice_size: int, unconstrained: bool, stats: Exclusions, load: Load,
                                ranking: Callable[[int], SortedList] | None = None) -> tuple[int, list[Domain], str]:
    """Phase 2a: the level and the domains there that hold every slice (and the leader).
    ``ranking``: the level's domains sorted by pods that fit (one pod a slice, no leader), which finds
    the one domain both orders pick by bisection: the fewest pods that still hold them all, the first
    by values among those."""
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
                return 0, [], not_fit(tree, most, count, slice_size, stats)
            if level > 0 and not unconstrained:
                level -= 1
                continue
        domains = list(tree.per_level[level].values())
        load(domains)
        ordered = _sorted_with_leader(domains, unconstrained)
        top = ordered[0]
        slice_count = count // slice_size
        if not unconstrained and top.slice_state_with_leader >= slice_count and top.leader_state >= leaders:
            top = _best_fit(ordered, slice_count, slices=True, leaders=leaders)
        if unconstrained:
            for candidate in ordered:
                if candidate.slice_state >= slice_count:
                    return level, [candidate], ""
            if required:
                return 0, [], not_fit(tree, ordered[-1].state, slice_count, slice_size, stats)
        if top.slice_state_with_leader >= slice_count and top.leader_state >= leaders:
            return level, [top], ""
        if required:
            return 0, [], not_fit(tree, top.slice_state, slice_count, slice_size, stats)
        if level > 0 and not unconstrained:
            level -= 1
            continue
        return _spread(tree, ordered, level, count, leaders, slice_size, unconstrained, stats)


def _spread(tree: DomainTree, ordered: list[Domain], level: int, count: int, leaders: int, slice_size: int,
            unconstrained: bool, stats: Exclusions) -> tuple[int, list[Domain], str]:
    """No one domain holds them: leaders greedily on the domains that hold one, then the workers on the
    rest in ``sorted_domains`` order, as many domains as needed."""
    chosen: list[Domain] = []
    slice_count = count // slice_size
    remaining, leaders_left = slice_count, leaders
    index = 0
    while leaders_left > 0 and index < len(ordered) and ordered[index].leader_state > 0:
        domain = ordered[index]
        if not unconstrained and domain.slice_state_with_leader >= remaining:
            domain = _best_fit(ordered[index:], remaining, slices=True, leaders=leaders_left)
        chosen.append(domain)
        leaders_left -= domain.leader_state
        remaining -= domain.slice_state_with_leader
        index += 1
    if leaders_left > 0:
        return 0, [], not_fit(tree, leaders - leaders_left, slice_count, slice_size, stats)
    rest = sorted_domains(ordered[index:], unconstrained)
    index = 0
    while remaining > 0 and index < len(rest):
        domain = rest[index]
        if not unconstrained and domain.slice_state >= remaining:
            domain = _best_fit(rest[index:], remaining, slices=True)
        chosen.append(domain)
        remaining -= domain.slice_state
        index += 1
    if remaining > 0:
        return 0, [], not_fit(tree, slice_count - remaining, slice_count, slice_size, stats)
    return level, chosen, ""


def update_counts_to_minimum(domains: list[Domain], count: int, leaders: int, slice_size: int,
                             unconstrained: bool, slices: bool) -> list[Domain]:
    """Phase 2b at one level: give ``count`` pods (and ``leaders`` leaders) to as few of ``domains`` (in
    order) as hold them, the last one chosen by BestFit (Kueue's updateCountsToMinimumGeneric)."""
    chosen: list[Domain] = []
    remaining = count // slice_size if slices else count
    leaders_left = leaders
    for index, domain in enumerate(domains):
        if leaders_left > 0:
            domain, done, remaining, leaders_left = _consume_with_leaders(
                domain, domains[index:], remaining, leaders_left, unconstrained, slice_size if slices else 1, slices)
            chosen.append(domain)
            if done:
                return chosen
            continue
        have = domain.slice_state if slices else domain.state
        if not unconstrained and have >= remaining:
            domain = _best_fit(domains[index:], remaining, slices)
            have = domain.slice_state if slices else domain.state
        domain.leader_state = 0
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
    raise AssumptionsViolated(f"{remaining} pods and {leaders_left} leaders left after every domain")


def _consume_with_leaders(domain: Domain, rest: list[Domain], remaining: int, leaders_left: int,
                          unconstrained: bool, slice_size: int, slices: bool) -> tuple[Domain, bool, int, int]:
    """Kueue's consumeWithLeadersGeneric, its quirks kept: the domain's counts beside a leader are spent
    first; returns the domain, whether everything is placed, and the slices (pods) and leaders left."""
    with_leader = "slice_state_with_leader" if slices else "state_with_leader"
    primary = "slice_state" if slices else "state"
    if not unconstrained and getattr(domain, with_leader) >= remaining and domain.leader_state >= leaders_left:
        domain = _best_fit(rest, remaining, slices, leaders_left)
    if getattr(domain, with_leader) >= remaining and domain.leader_state >= leaders_left:
        setattr(domain, primary, remaining)
        domain.leader_state = leaders_left
        domain.state = remaining * slice_size
        return domain, True, 0, 0
    if slices:
        setattr(domain, with_leader, min(getattr(domain, with_leader), remaining))
        domain.leader_state = min(domain.leader_state, leaders_left)
        domain.state = getattr(domain, with_leader) * slice_size
        return domain, False, remaining - getattr(domain, with_leader), leaders_left - domain.leader_state
    # Pods: Kueue subtracts first, then clamps.
    remaining -= getattr(domain, with_leader)
    leaders_left -= domain.leader_state
    setattr(domain, with_leader, min(getattr(domain, with_leader), remaining))
    domain.leader_state = min(domain.leader_state, leaders_left)
    return domain, False, remaining, leaders_left


def descend(tree: DomainTree, chosen: list[Domain], fit_level: int, slice_level: int, count: int, leaders: int,
            slice_size: int, unconstrained: bool, load: Load) -> list[Domain]:
    """Phase 2b: from the chosen domains down to the leaves, as few domains as possible at each level."""
    levels = tree.levels
    chosen = update_counts_to_minimum(chosen, count, leaders, slice_size, unconstrained, slices=True)
    depth = fit_level
    while depth < min(len(levels) - 1, slice_level):
        lower = [child for d in chosen for child in d.children]
        load(lower)
        chosen = update_counts_to_minimum(sorted_domains(lower, unconstrained), count, leaders, slice_size,
                                          unconstrained, slices=True)
        depth += 1
    while depth < len(levels) - 1:
        below = []
        for d in chosen:
            load(d.children)
            below += update_counts_to_minimum(sorted_domains(d.children, unconstrained), d.state, d.leader_state, 1,
                                              unconstrained, slices=False)
        chosen = below
        depth += 1
    return chosen


def build_assignment(tree: DomainTree, leaves: Iterable[Domain], leader: bool = False) -> TopologyAssignment:
    """Kueue's buildAssignment: leaves with pods (leaders, when ``leader``), by their values; only the
    hostname when it is a level."""
    first = len(tree.levels) - 1 if tree.lowest_is_node else 0
    counted = [(d.values, d.leader_state if leader else d.state) for d in leaves]
    return TopologyAssignment(
        levels=tree.levels[first:],
        domains=tuple(DomainAssignment(values[first:], n) for values, n in sorted(counted) if n != 0),
    )
