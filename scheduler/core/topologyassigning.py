"""Topology-aware scheduling in the flavor assignment (Kueue v0.17.0's flavorassigner TAS steps).

Two steps of pkg/scheduler/flavorassigner (tas_flavorassigner.go, flavorassigner.go ``assignFlavors``):

- while flavors are tried, ``topologymatching`` turns flavors away;
- once quota is assigned, every TAS pod set is placed (``placing``). When the quota fits but a pod
  set does not, the workload needs preemption with that pod set's reason; when it would not fit even
  on empty nodes, it does not fit at all. The pending message is Kueue's ``couldn't assign flavors to
  pod set NAME: REASON``; no pod set is admitted without its assignment.

Preemption then looks for targets whose going lets the pods be placed (``fits_without``), as Kueue's
workloadFits does with its snapshot; fair-sharing preemption does not look at the nodes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from scheduler.core.flavorassigning import FlavorAssignment, Mode
from scheduler.core.kinds import ClusterQueue, ResourceFlavor
from scheduler.core.placing import PlacementRequest, place_pod_sets
from scheduler.core.preempting import AdmittedWorkload
from scheduler.core.topologymatching import explicit, tas_requested
from scheduler.core.topologystate import TopologyState
from scheduler.core.workloads import Admission, Workload


def place_workload(workload: Workload, cq: ClusterQueue, flavors: Mapping[str, ResourceFlavor],
                   state: TopologyState, assignment: FlavorAssignment) -> FlavorAssignment:
    """The flavor assignment with every TAS pod set placed, or downgraded as Kueue does when one cannot be:
    to preemption (of the workloads on the TAS flavor's resources) when the pods would fit on empty
    nodes, else to no fit."""
    if assignment.mode is Mode.NO_FIT or assignment.admission is None:
        return assignment
    requests, error = _requests(workload, cq, state, assignment.admission)
    if error:
        return _downgrade(assignment, Mode.NO_FIT, error)
    if not requests:
        return assignment
    if assignment.mode is Mode.FIT:
        placed, failure = _place(requests, state, simulate_empty=False)
        if failure is None:
            return dataclasses.replace(assignment, admission=_with_assignments(assignment.admission, placed))
        assignment = _downgrade(assignment, Mode.PREEMPT, failure)
    _, failure = _place(requests, state, simulate_empty=True)
    if failure is not None:
        return _downgrade(assignment, Mode.NO_FIT, assignment.message or failure)
    # Kueue marks every TAS pod set's flavors as needing preemption: the quota may fit while the nodes
    # are fragmented, and the targets are looked for on those flavor resources.
    tas = {(flavor, r) for psa in assignment.admission.pod_set_assignments for r, flavor in psa.flavors.items()
           if flavor in requests and (flavor, r) in assignment.usage}
    return dataclasses.replace(assignment, needs_preemption=assignment.needs_preemption | tas)


def placed_again(workload: Workload, cq: ClusterQueue, flavors: Mapping[str, ResourceFlavor], state: TopologyState,
                 assignment: FlavorAssignment) -> FlavorAssignment:
    """Kueue's TASRecomputeAssignmentWithinSchedulingCycle for a head nominated to fit whose nodes an
    earlier entry of the cycle took: its TAS pod sets placed again on ``state`` as it is now (the caller
    records the cycle's admissions in it), its flavors kept (Kueue's NominationMapping)."""
    if assignment.admission is None:
        return assignment
    cleared = dataclasses.replace(assignment.admission, pod_set_assignments=tuple(
        dataclasses.replace(psa, topology_assignment=None) for psa in assignment.admission.pod_set_assignments))
    return place_workload(workload, cq, flavors, state, dataclasses.replace(assignment, admission=cleared))


def placed_for_preemption(workload: Workload, cq: ClusterQueue, state: TopologyState, assignment: FlavorAssignment,
                          targets: Sequence[AdmittedWorkload]) -> FlavorAssignment:
    """Kueue's updateAssignmentForTAS for a preemptor: its pods placed as if its targets were gone (or,
    without targets, on empty nodes), so what it will take can be held back in the cycle."""
    if assignment.admission is None:
        return assignment
    requests, error = _requests(workload, cq, state, assignment.admission)
    if error or not requests:
        return assignment
    removed = [(r.workload.key, r.workload.admission) for r in targets if r.workload.admission is not None]
    for key, _ in removed:
        state.remove_workload(key)
    try:
        placed, failure = _place(requests, state, simulate_empty=not targets)
    finally:
        for key, admission in removed:
            state.add_workload(key, admission)
    if failure is not None:
        return assignment
    return dataclasses.replace(assignment, admission=_with_assignments(assignment.admission, placed))


def fits_without(workload: Workload, cq: ClusterQueue, state: TopologyState,
                 assignment: FlavorAssignment) -> Callable[[Sequence[AdmittedWorkload]], bool] | None:
    """Whether the workload's TAS pod sets could be placed once the given workloads are gone (the TAS half
    of Kueue's workloadFits during preemption); None when it has none. Each call takes their usage out
    of ``state`` and puts it back."""
    if assignment.admission is None:
        return None
    requests, error = _requests(workload, cq, state, assignment.admission)
    if error or not requests:
        return None

    def fits(gone: Sequence[AdmittedWorkload]) -> bool:
        removed = [(r.workload.key, r.workload.admission) for r in gone if r.workload.admission is not None]
        for key, _ in removed:
            state.remove_workload(key)
        try:
            return _place(requests, state, simulate_empty=False)[1] is None
        finally:
            for key, admission in removed:
                state.add_workload(key, admission)
    return fits


def _requests(workload: Workload, cq: ClusterQueue, state: TopologyState,
              admission: Admission) -> tuple[dict[str, list[PlacementRequest]], str]:
    """The TAS pod sets still to place, by their TAS flavor (Kueue's WorkloadsTopologyRequests), or why not."""
    requests: dict[str, list[PlacementRequest]] = {}
    for pod_set, psa in zip(workload.pod_sets, admission.pod_set_assignments):
        if not tas_requested(pod_set, cq, state) or psa.topology_assignment is not None:
            continue
        tas = sorted({f for f in psa.flavors.values() if state.is_tas_flavor(f)})
        error = ("no TAS flavor assigned" if not tas
                 else f"more than one TAS flavor assigned: {', '.join(tas)}" if len(tas) > 1 else "")
        if error:
            return {}, f"failed to assign flavors to pod set {pod_set.name}: {error}"
        requests.setdefault(tas[0], []).append(PlacementRequest(
            pod_set.name, dict(pod_set.requests), psa.count, pod_set.topology_request,
            implied=not explicit(pod_set), node_selector=pod_set.node_selector, tolerations=pod_set.tolerations))
    return requests, ""


def _place(requests: dict[str, list[PlacementRequest]], state: TopologyState,
           simulate_empty: bool) -> tuple[dict, str | None]:
    placed = {}
    for flavor, flavor_requests in requests.items():
        tree = state.tree(flavor)
        if tree is None:
            return placed, f'couldn\'t assign flavors to pod set {flavor_requests[0].pod_set}: Flavor "{flavor}" ' \
                           "information missing in TAS cache"
        for placement in place_pod_sets(tree, flavor_requests, simulate_empty):
            if placement.assignment is None:
                return placed, f"couldn't assign flavors to pod set {placement.pod_set}: {placement.reason}"
            placed[placement.pod_set] = placement.assignment
    return placed, None


def _with_assignments(admission: Admission, placed: dict) -> Admission:
    return dataclasses.replace(admission, pod_set_assignments=tuple(
        dataclasses.replace(psa, topology_assignment=placed[psa.name]) if psa.name in placed else psa
        for psa in admission.pod_set_assignments))


def _downgrade(assignment: FlavorAssignment, mode: Mode, message: str) -> FlavorAssignment:
    """Kueue's updateMode: the workload's mode becomes ``mode``; NO_FIT admits nothing."""
    admission = None if mode is Mode.NO_FIT else assignment.admission
    return dataclasses.replace(assignment, mode=mode, admission=admission, message=message)
