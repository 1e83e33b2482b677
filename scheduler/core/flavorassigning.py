"""Choosing a ResourceFlavor for every resource of every pod set (Kueue's flavorassigner).

Ported from pkg/scheduler/flavorassigner/flavorassigner.go (findFlavorForPodSets, fitsResourceQuota,
isPreferred, shouldTryNextFlavor) with flavor fungibility on, through the cohort tree.

For each pod set and each resource group it needs, flavors are tried in the order the
ClusterQueue lists them, starting after the flavor the workload's last attempt stopped at
(``LastAssignment``). A flavor is skipped when its node labels contradict the pod set's nodeSelector
or its taints are not tolerated. Otherwise each resource gets a *granular mode*, worst to best:

- ``NO_FIT``: more than the queue could ever hold, or beyond its nominal quota where no preemption
  could help: no Cohort above the smallest subtree that holds it to reclaim from, and
  ``borrowWithinCohort`` (or, with fair sharing, ``reclaimWithinCohort``) forbids preempting while
  borrowing;
- ``NO_CANDIDATES``: preempting would be needed but the preemption simulation finds no targets;
- ``PREEMPT``: the simulation finds targets, some in the queue itself;
- ``RECLAIM``: the simulation finds targets, all in other queues of the cohort;
- ``FIT``: it fits in what is available now,

together with a borrowing level (0: within the queue's nominal quota, after the simulated
preemptions for the preempting modes; else the height of the smallest cohort subtree that holds it). A flavor's mode is its worst resource's.
The search stops at the first flavor that fits without borrowing; ``whenCanPreempt: MayStopSearch``
also stops at one with preemption targets and ``whenCanBorrow: MayStopSearch`` at one that borrows;
flavors without candidates are always passed. Otherwise the best flavor seen is kept, ranked by mode
then borrowing (``BorrowingOverPreemption``) or borrowing then mode (``PreemptionOverBorrowing``).
Flavors a pod set cannot take for topology reasons are skipped (``topologymatching``); placing the
pods follows in ``topologyassigning``. Node affinity and partial admission are not modelled.
"""

from __future__ import annotations

import enum
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from scheduler.core.kinds import (
    FAIR_SHARING_OFF,
    ClusterQueue,
    FairSharing,
    FlavorFungibility,
    FlavorResource,
    FungibilityPolicy,
    FungibilityPreference,
    PreemptionPolicy,
    ResourceFlavor,
    ResourceGroup,
)
from scheduler.core import topologymatching
from scheduler.core.preempting import AdmittedWorkload, PreemptionPossibility, simulate_preemption
from scheduler.core.quantities import kueue_quantity
from scheduler.core.quotas import QuotaBook, Usage
from scheduler.core.topologystate import TopologyState
from scheduler.core.workloads import PODS_RESOURCE, Admission, PodSet, PodSetAssignment, Workload


class Mode(enum.IntEnum):
    """Kueue's FlavorAssignmentMode, ordered worst to best so ``min`` gives the overall mode."""

    NO_FIT = 0
    PREEMPT = 1
    FIT = 2


class Possibility(enum.IntEnum):
    """Kueue's preemptionMode, the first half of a granular mode; worst to best."""

    NO_FIT = 0
    NO_CANDIDATES = 1
    PREEMPT = 2
    RECLAIM = 3
    FIT = 4

    @property
    def mode(self) -> Mode:
        return Mode.NO_FIT if self is Possibility.NO_FIT else Mode.FIT if self is Possibility.FIT else Mode.PREEMPT


_FROM_ORACLE = {
    PreemptionPossibility.NO_CANDIDATES: Possibility.NO_CANDIDATES,
    PreemptionPossibility.PREEMPT: Possibility.PREEMPT,
    PreemptionPossibility.RECLAIM: Possibility.RECLAIM,
}


@dataclass(slots=True, frozen=True)
class GranularMode:
    possibility: Possibility
    # 0: within the queue's nominal quota; higher: from further up the cohort tree.
    borrowing: int


_BEST = GranularMode(Possibility.FIT, 0)


@dataclass(slots=True, frozen=True)
class LastAssignment:
    """Kueue's AssignmentClusterQueueState: per pod set, per resource, the index of the last flavor
    the search tried; -1 when it reached the group's last flavor (the next search starts over)."""

    tried: tuple[Mapping[str, int], ...] = ()

    def next_flavor(self, pod_set: int, resource: str) -> int:
        """Where the next search for this pod set's resource group starts (NextFlavorToTryForPodSetResource)."""
        if pod_set >= len(self.tried) or resource not in self.tried[pod_set]:
            return 0
        return self.tried[pod_set][resource] + 1

    def pending_flavors(self) -> bool:
        """Some search stopped before its last flavor (PendingFlavors): Kueue requeues the workload
        into the active queue instead of parking it, so the next cycle goes on from there."""
        return any(index != -1 for pod_set in self.tried for index in pod_set.values())


@dataclass(slots=True, frozen=True)
class FlavorAssignment:
    """The outcome for a whole workload in one ClusterQueue."""

    mode: Mode
    admission: Admission | None
    usage: Usage
    # Kueue's Assignment.Borrowing: the highest borrowing level over the chosen flavors; it orders the
    # cycle's entries and sizes what a head without preemption targets holds back.
    borrowing: int
    # The (flavor, resource) pairs whose own mode is PREEMPT.
    needs_preemption: frozenset[FlavorResource]
    last_assignment: LastAssignment = LastAssignment()
    message: str = ""

    @property
    def borrows(self) -> bool:
        return self.borrowing > 0


@dataclass(slots=True, frozen=True)
class _Pick:
    """One resource group's chosen flavor: per resource (flavor, granular mode), and where the search stopped."""

    flavor: str
    modes: dict[str, GranularMode]
    tried: int


def assign_flavors(
    workload: Workload,
    cq: ClusterQueue,
    flavors: Mapping[str, ResourceFlavor],
    quotas: QuotaBook,
    admitted: Iterable[AdmittedWorkload],
    last: LastAssignment | None = None,
    fair_sharing: FairSharing = FAIR_SHARING_OFF,
    topologies: TopologyState | None = None,
) -> FlavorAssignment:
    """Pick flavors for every pod set of ``workload`` in ``cq`` against ``quotas``; ``admitted``: the
    workloads admitted in ``cq``'s cohort tree (preemption is simulated on them); ``last``: where the
    workload's previous search stopped (None: from each group's first flavor); ``topologies``: the TAS
    flavors, which a pod set takes or skips by its topology request (``topologymatching``)."""
    search = _Search(workload, cq, flavors, quotas, admitted, last or LastAssignment(), fair_sharing,
                     topologies or TopologyState())
    covers_pods = any(PODS_RESOURCE in g.covered_resources for g in cq.resource_groups)
    usage: Usage = {}
    assignments: list[PodSetAssignment] = []
    tried: list[dict[str, int]] = []
    modes: list[GranularMode] = []
    needs_preemption: set[FlavorResource] = set()
    messages: list[str] = []  # Kueue's Assignment.Message, one part per pod set with reasons
    for index, pod_set in enumerate(workload.pod_sets):
        requests = pod_set.total_requests(with_pods=covers_pods)
        picks: dict[str, _Pick] = {}
        reasons: list[str] = []
        for resource, quantity in requests.items():
            if resource in picks:
                continue
            group = _group_covering(cq, resource)
            if group is None:
                if quantity == 0:
                    continue  # Kueue skips a zero request for a resource the queue does not cover
                tried.append({})
                messages.append(pod_set_message(pod_set.name, [f"resource {resource} unavailable in ClusterQueue"]))
                return _no_fit("; ".join(messages), tried, usage)
            group_requests = {r: v for r, v in requests.items() if r in group.covered_resources}
            pick = search.pick(index, pod_set, group, group_requests, resource, usage)
            if pick is None:
                tried.append({})
                # The pod set's status is the failing resource's alone (Kueue's groupStatus = *status).
                messages.append(pod_set_message(pod_set.name, search.reasons))
                return _no_fit("; ".join(messages), tried, usage)
            reasons.extend(search.reasons)
            picks.update((r, pick) for r in group_requests)
        if reasons:
            messages.append(pod_set_message(pod_set.name, reasons))
        tried.append({r: pick.tried for r, pick in picks.items()})
        for resource, pick in picks.items():
            fr = (pick.flavor, resource)
            usage[fr] = usage.get(fr, 0) + requests[resource]
            modes.append(pick.modes[resource])
            # Each resource keeps its own mode: only those needing preemption are searched for targets.
            if pick.modes[resource].possibility.mode is Mode.PREEMPT:
                needs_preemption.add(fr)
        chosen = {r: pick.flavor for r, pick in picks.items()}
        assignments.append(PodSetAssignment(pod_set.name, chosen, requests, pod_set.count))
    return FlavorAssignment(
        mode=min((m.possibility.mode for m in modes), default=Mode.FIT),
        admission=Admission(cq.name, tuple(assignments)),
        usage=usage,
        borrowing=max((m.borrowing for m in modes), default=0),
        needs_preemption=frozenset(needs_preemption),
        last_assignment=LastAssignment(tuple(tried)),
        message="; ".join(messages),
    )


def pod_set_message(pod_set: str, reasons: list[str]) -> str:
    """One pod set's part of Kueue's pending message (Assignment.Message, Status.Message: reasons sorted)."""
    return f"couldn't assign flavors to pod set {pod_set}: {', '.join(sorted(reasons))}"


def _no_fit(message: str, tried: list[dict[str, int]], usage: Usage) -> FlavorAssignment:
    """No fit; ``usage`` holds the pod sets assigned before the one that failed, as Kueue's Assignment
    does (the fair-sharing order reads it)."""
    return FlavorAssignment(Mode.NO_FIT, None, usage, 0, frozenset(), LastAssignment(tuple(tried)), message)


def _group_covering(cq: ClusterQueue, resource: str) -> ResourceGroup | None:
    for group in cq.resource_groups:
        if resource in group.covered_resources:
            return group
    return None


class _Search:
    """The state of one workload's flavor assignment (Kueue's FlavorAssigner)."""

    def __init__(
        self,
        workload: Workload,
        cq: ClusterQueue,
        flavors: Mapping[str, ResourceFlavor],
        quotas: QuotaBook,
        admitted: Iterable[AdmittedWorkload],
        last: LastAssignment,
        fair_sharing: FairSharing,
        topologies: TopologyState,
    ) -> None:
        self.workload, self.cq, self.flavors, self.quotas = workload, cq, flavors, quotas
        self.last, self.fair_sharing, self.topologies = last, fair_sharing, topologies
        # Why the last pick's flavors fell short (Kueue's findFlavorForPodSets status reasons).
        self.reasons: list[str] = []
        self._admitted_source = admitted
        self._admitted: list[AdmittedWorkload] | None = None

    @property
    def admitted(self) -> list[AdmittedWorkload]:
        """The tree's admitted workloads, read only once a preemption simulation needs them (a head
        that fits never walks them: at 1,000 queues in a tree that walk dominated the cycle)."""
        if self._admitted is None:
            self._admitted = list(self._admitted_source)
        return self._admitted

    def pick(
        self,
        index: int,
        pod_set: PodSet,
        group: ResourceGroup,
        requests: dict[str, int],
        resource: str,
        assigned_so_far: Usage,
    ) -> _Pick | None:
        """findFlavorForPodSets: walk the group's flavors from where the last search stopped."""
        fungibility = self.cq.flavor_fungibility
        best: _Pick | None = None
        best_mode = GranularMode(Possibility.NO_FIT, 2**31)
        label_keys = {key for fq in group.flavors if fq.name in self.flavors for key in self.flavors[fq.name].node_labels}
        attempted = -1
        self.reasons = []
        for position in range(self.last.next_flavor(index, resource), len(group.flavors)):
            attempted = position
            name = group.flavors[position].name
            flavor = self.flavors.get(name)
            if flavor is None:
                self.reasons.append(f"flavor {name} not found")
                continue
            refusal = (topologymatching.flavor_refusal(self.cq, flavor, pod_set, group, self.topologies)
                       or _flavor_refusal(flavor, pod_set, label_keys))
            if refusal is not None:
                self.reasons.append(refusal)
                continue
            representative, modes = self._flavor_mode(flavor.name, requests, assigned_so_far)
            candidate = _Pick(flavor.name, modes, -1)
            if not should_try_next_flavor(representative, fungibility):
                best, best_mode = candidate, representative
                break
            if is_preferred(representative, best_mode, fungibility.preference):
                best, best_mode = candidate, representative
        if best is None:
            return None
        # Reaching the group's last flavor means the next search starts over.
        tried = -1 if attempted == len(group.flavors) - 1 else attempted
        return _Pick(best.flavor, best.modes, tried)

    def _flavor_mode(
        self, flavor: str, requests: dict[str, int], assigned_so_far: Usage
    ) -> tuple[GranularMode, dict[str, GranularMode]]:
        """The flavor's representative (worst, by the queue's preference) mode and each resource's."""
        preference = self.cq.flavor_fungibility.preference
        representative = _BEST
        modes: dict[str, GranularMode] = {}
        for resource, value in requests.items():
            fr = (flavor, resource)
            # Earlier pod sets of the same workload may already sit in this flavor.
            mode = self._fits_resource_quota(fr, assigned_so_far.get(fr, 0), value)
            if is_preferred(representative, mode, preference):
                representative = mode
            if representative.possibility is Possibility.NO_FIT:
                break
            modes[resource] = mode
        return representative, modes

    def _fits_resource_quota(self, fr: FlavorResource, assumed: int, request: int) -> GranularMode:
        """fitsResourceQuota for ``request`` on top of ``assumed`` (earlier pod sets' request) of one
        (flavor, resource); why it falls short goes to ``reasons`` in Kueue's words."""
        quotas, cq = self.quotas, self.cq
        value = assumed + request
        flavor, resource = fr
        capacity = quotas.potential_available(cq.name, fr)
        if value > capacity:
            self.reasons.append(
                f"insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests "
                f"({kueue_quantity(resource, assumed)}) + current podset request ({kueue_quantity(resource, request)})"
                f" > maximum capacity ({kueue_quantity(resource, capacity)})")
            return GranularMode(Possibility.NO_FIT, 0)
        borrowing, may_reclaim_in_hierarchy = quotas.lowest_subtree_that_fits(cq.name, fr, value)
        available = quotas.available(cq.name, fr)
        if value <= available:
            return GranularMode(Possibility.FIT, borrowing)
        self.reasons.append(f"insufficient unused quota for {resource} in flavor {flavor}, "
                            f"{kueue_quantity(resource, value - available)} more needed")
        if (value <= quotas.nominal(cq.name, fr) or may_reclaim_in_hierarchy
                or can_preempt_while_borrowing(cq, self.fair_sharing)):
            possibility, after = simulate_preemption(self.workload, cq, fr, value, self.admitted, quotas,
                                                     self.fair_sharing)
            return GranularMode(_FROM_ORACLE[possibility], after)
        return GranularMode(Possibility.NO_FIT, borrowing)


def is_preferred(a: GranularMode, b: GranularMode, preference: FungibilityPreference) -> bool:
    """Whether mode ``a`` is strictly better than ``b`` under the queue's preference (isPreferred)."""
    if a.possibility is Possibility.NO_FIT:
        return False
    if b.possibility is Possibility.NO_FIT:
        return True
    if preference is FungibilityPreference.PREEMPTION_OVER_BORROWING:
        if a.borrowing != b.borrowing:
            return a.borrowing < b.borrowing
        return a.possibility > b.possibility
    if a.possibility != b.possibility:
        return a.possibility > b.possibility
    return a.borrowing < b.borrowing


def should_try_next_flavor(mode: GranularMode, fungibility: FlavorFungibility) -> bool:
    """shouldTryNextFlavor: go on past no fit, no candidates, and what the fungibility policies pass."""
    if mode.possibility in (Possibility.NO_FIT, Possibility.NO_CANDIDATES):
        return True
    if (mode.possibility in (Possibility.PREEMPT, Possibility.RECLAIM)
            and fungibility.when_can_preempt is FungibilityPolicy.TRY_NEXT_FLAVOR):
        return True
    return mode.borrowing > 0 and fungibility.when_can_borrow is FungibilityPolicy.TRY_NEXT_FLAVOR


def _flavor_refusal(flavor: ResourceFlavor, pod_set: PodSet, label_keys: Collection[str]) -> str | None:
    """checkFlavorForPodSets: NoSchedule/NoExecute taints need tolerations, and the nodeSelector, cut
    down to the keys some flavor of the group labels (flavorSelector), must match the flavor's labels.
    Why not, in Kueue's words (the taint as Go prints a corev1.Taint value), or None."""
    for taint in flavor.node_taints:
        if taint.effect not in ("NoSchedule", "NoExecute"):
            continue
        if not any(t.tolerates(taint) for t in pod_set.tolerations):
            return f"untolerated taint {{{taint.key} {taint.value} {taint.effect} <nil>}} in flavor {flavor.name}"
    for key, value in pod_set.node_selector:
        if key in label_keys and flavor.node_labels.get(key) != value:
            return f"flavor {flavor.name} doesn't match node affinity"
    return None


def can_preempt_while_borrowing(cq: ClusterQueue, fair_sharing: FairSharing = FAIR_SHARING_OFF) -> bool:
    """canPreemptWhileBorrowing: ``borrowWithinCohort`` with a policy other than Never, or, with fair
    sharing, ``reclaimWithinCohort`` other than Never."""
    if fair_sharing.enabled and cq.preemption.reclaim_within_cohort is not PreemptionPolicy.NEVER:
        return True
    return not cq.preemption.borrow_within_cohort.forbidden
