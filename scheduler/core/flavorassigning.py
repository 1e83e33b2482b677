"""Choosing a ResourceFlavor for every resource of every pod set (Kueue's flavorassigner).

For each pod set and each resource group it needs, flavors are tried in the order the
ClusterQueue lists them. A flavor is skipped when its node labels contradict the pod
set's nodeSelector or its taints are not tolerated. Otherwise it gets a mode:

- ``FIT``: the request fits in what is available now (maybe by borrowing);
- ``PREEMPT``: it does not fit now, but fits in the queue's nominal quota and the
  queue's preemption policy allows evicting someone (targets are found later);
- ``NO_FIT``: neither.

Flavor fungibility decides when to stop: a fit without borrowing always stops;
``whenCanBorrow=MayStopSearch`` stops at a fit that borrows; ``whenCanPreempt=MayStopSearch``
stops at a flavor needing preemption. Otherwise the best flavor seen is kept, ranked by
``preference``. Node affinity and topology-aware scheduling are not modelled.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass

from scheduler.core.kinds import (
    ClusterQueue,
    FlavorResource,
    FungibilityPolicy,
    FungibilityPreference,
    PreemptionPolicy,
    ResourceFlavor,
    ResourceGroup,
)
from scheduler.core.quotas import QuotaBook, Usage
from scheduler.core.workloads import PODS_RESOURCE, Admission, PodSet, PodSetAssignment, Workload


class Mode(enum.IntEnum):
    """Ordered worst to best, so ``min`` gives a pod set's or workload's overall mode."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 2


@dataclass(slots=True, frozen=True)
class FlavorAssignment:
    """The outcome for a whole workload in one ClusterQueue."""

    mode: Mode
    admission: Admission | None
    usage: Usage
    borrows: bool
    # The (flavor, resource) pairs that need preemption to fit.
    needs_preemption: frozenset[FlavorResource]
    message: str = ""


def assign_flavors(
    workload: Workload,
    cq: ClusterQueue,
    flavors: Mapping[str, ResourceFlavor],
    quotas: QuotaBook,
) -> FlavorAssignment:
    """Pick flavors for every pod set of ``workload`` in ``cq`` against current usage."""
    covers_pods = any(PODS_RESOURCE in g.covered_resources for g in cq.resource_groups)
    usage: Usage = {}
    assignments: list[PodSetAssignment] = []
    overall = Mode.FIT
    borrows = False
    needs_preemption: set[FlavorResource] = set()
    for pod_set in workload.pod_sets:
        requests = pod_set.total_requests(with_pods=covers_pods)
        chosen: dict[str, str] = {}
        for resource in requests:
            if resource in chosen:
                continue
            group = _group_covering(cq, resource)
            if group is None:
                return _no_fit(f"resource {resource} is not covered by ClusterQueue {cq.name}")
            group_requests = {r: v for r, v in requests.items() if r in group.covered_resources}
            pick = _pick_flavor(pod_set, group, group_requests, cq, flavors, quotas, usage)
            if pick is None:
                return _no_fit(
                    f"insufficient quota for {', '.join(sorted(group_requests))} "
                    f"in ClusterQueue {cq.name}"
                )
            flavor, mode, flavor_borrows = pick
            overall = min(overall, mode)
            borrows = borrows or flavor_borrows
            for r, milli in group_requests.items():
                chosen[r] = flavor
                usage[(flavor, r)] = usage.get((flavor, r), 0) + milli
                if mode is Mode.PREEMPT:
                    needs_preemption.add((flavor, r))
        assignments.append(PodSetAssignment(pod_set.name, chosen, requests, pod_set.count))
    return FlavorAssignment(
        mode=overall,
        admission=Admission(cq.name, tuple(assignments)),
        usage=usage,
        borrows=borrows,
        needs_preemption=frozenset(needs_preemption),
    )


def _no_fit(message: str) -> FlavorAssignment:
    return FlavorAssignment(Mode.NO_FIT, None, {}, False, frozenset(), message)


def _group_covering(cq: ClusterQueue, resource: str) -> ResourceGroup | None:
    for group in cq.resource_groups:
        if resource in group.covered_resources:
            return group
    return None


def _pick_flavor(
    pod_set: PodSet,
    group: ResourceGroup,
    requests: dict[str, int],
    cq: ClusterQueue,
    flavors: Mapping[str, ResourceFlavor],
    quotas: QuotaBook,
    assigned_so_far: Usage,
) -> tuple[str, Mode, bool] | None:
    """Walk the group's flavors in order; return (flavor, mode, borrows) or None."""
    fungibility = cq.flavor_fungibility
    best: tuple[tuple[bool, bool], str, Mode, bool] | None = None
    for flavor_quotas in group.flavors:
        flavor = flavors.get(flavor_quotas.name)
        if flavor is None or not _flavor_accepts(flavor, pod_set):
            continue
        mode, borrows = _flavor_mode(cq, flavor.name, requests, quotas, assigned_so_far)
        if mode is Mode.NO_FIT:
            continue
        rank = _rank(mode, borrows, fungibility.preference)
        if best is None or rank > best[0]:
            best = (rank, flavor.name, mode, borrows)
        if mode is Mode.FIT and not borrows:
            break
        if mode is Mode.FIT and fungibility.when_can_borrow is FungibilityPolicy.MAY_STOP_SEARCH:
            break
        if (mode is Mode.PREEMPT and fungibility.when_can_preempt is FungibilityPolicy.MAY_STOP_SEARCH
                and can_preempt(cq)):
            break
    if best is None:
        return None
    return best[1], best[2], best[3]


def _rank(mode: Mode, borrows: bool, preference: FungibilityPreference) -> tuple[bool, bool]:
    """Bigger is better; the preference decides whether fitting or not borrowing counts first."""
    if preference is FungibilityPreference.PREEMPTION_OVER_BORROWING:
        return (not borrows, mode is Mode.FIT)
    return (mode is Mode.FIT, not borrows)


def _flavor_accepts(flavor: ResourceFlavor, pod_set: PodSet) -> bool:
    """nodeSelector keys the flavor labels must agree; NoSchedule/NoExecute taints need tolerations."""
    for key, value in pod_set.node_selector:
        if key in flavor.node_labels and flavor.node_labels[key] != value:
            return False
    for taint in flavor.node_taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in pod_set.tolerations):
            return False
    return True


def _flavor_mode(
    cq: ClusterQueue,
    flavor: str,
    requests: dict[str, int],
    quotas: QuotaBook,
    assigned_so_far: Usage,
) -> tuple[Mode, bool]:
    """The worst mode over the group's resources in this flavor, and whether it borrows."""
    mode = Mode.FIT
    borrows = False
    for resource, milli in requests.items():
        fr = (flavor, resource)
        # Earlier pod sets of the same workload may already sit in this flavor.
        value = milli + assigned_so_far.get(fr, 0)
        if value > quotas.potential_available(cq.name, fr):
            return Mode.NO_FIT, False
        if value <= quotas.available(cq.name, fr):
            if quotas.used(cq.name, fr) + value > quotas.nominal(cq.name, fr):
                borrows = True
            continue
        # Within nominal quota it would fit after preempting, even when the policy allows none:
        # Kueue calls that mode Preempt too (no candidates), tries the next flavor, and holds the
        # quota back from borrowing neighbours (scheduling._reservation).
        if value <= quotas.nominal(cq.name, fr):
            mode = min(mode, Mode.PREEMPT)
            continue
        return Mode.NO_FIT, False
    return mode, borrows


def can_preempt(cq: ClusterQueue) -> bool:
    """Whether the queue's preemption policy allows any target at all."""
    return (cq.preemption.within_cluster_queue is not PreemptionPolicy.NEVER
            or cq.preemption.reclaim_within_cohort is not PreemptionPolicy.NEVER)
