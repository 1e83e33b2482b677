"""The reference scheduler's core on a case, in process: every cycle's decisions, for reading why
it decided what a differential run shows (no cluster, no controller; pure).

Follows the epoch protocol of ``running``: each epoch's Workloads are added (one creation second
apart) while the gate flavor is missing, then the gate is added and cycles run until one decides
nothing new; a preemption's targets are evicted at once, as the controller's eviction write does, or
held until the cycles settle (``hold_evictions``).
"""

from __future__ import annotations


from harness.agreeing import cases, decisions, rendering
from scheduler.core import conversion, decisions as core_decisions, kinds, scheduling
from scheduler.core.queues import QueueManager

PREFIX = "sim"
MAX_CYCLES = 500


def trace(case: cases.Case, hold_evictions: bool = False, **settings: bool) -> list[str]:
    """One line per decision, per epoch and cycle: `epoch 0 cycle 3: Admit w01 -> cq1 {...}`."""
    return simulate(case, hold_evictions, **settings)[0]


def simulate(case: cases.Case, hold_evictions: bool = False,
             **settings: bool) -> tuple[list[str], list[dict[str, decisions.Admission]]]:
    """The trace, and where each Workload holds quota after each epoch (as ``decisions`` reads it);
    ``settings``: the core's Kueue-version settings (harness.toolchain.versions.reference_settings).
    ``hold_evictions``: evicted Workloads keep their quota until the cycles settle (as a differential run's
    evictions are released by its runner, not by the scheduler), so a preemptor is tried again meanwhile."""
    manager = manager_with(rendering.setup_objects(case, PREFIX), _fair_sharing(case), **settings)
    lines: list[str] = []
    admitted: list[dict[str, decisions.Admission]] = []
    held: list[tuple[str, str]] = []
    gate = conversion.resource_flavor_from_dict(rendering.gate(PREFIX))
    clock = 1_000_000.0
    for e, epoch in enumerate(case.epochs):
        manager.delete_resource_flavor(gate.name)
        for name in epoch.finish:
            key = (rendering.named(PREFIX, case.namespace_of(name)), name)
            if manager.admitted(key) is not None:
                manager.mark_finished(key)
                lines.append(f"epoch {e}: finished {name}")
        for wl in epoch.arrive:
            clock += 1.0
            obj = rendering.workload(wl, PREFIX)
            obj["metadata"].update(creationTimestamp=conversion.format_timestamp(clock), uid=f"uid-{wl.name}")
            manager.add_workload(conversion.workload_from_dict(obj))
        manager.add_resource_flavor(gate)
        for cycle in range(MAX_CYCLES):
            clock += 0.01
            decided = scheduling.run_cycle(manager, clock)
            changed = [d for d in decided if not isinstance(d, (core_decisions.Wait, core_decisions.Park))]
            for d in decided:
                lines.append(f"epoch {e} cycle {cycle}: {core_decisions.describe(d, _short)}")
            for d in decided:
                if isinstance(d, core_decisions.Preempt):
                    for target in d.to_evict():
                        if hold_evictions:
                            held.append(target.workload.key)
                        else:
                            manager.mark_evicted(target.workload.key, "Preempted", clock)
            if not changed and not manager.has_work() and held:
                for key in held:
                    manager.mark_evicted(key, "Preempted", clock)
                lines.append(f"epoch {e}: released {', '.join(_short(name) for _, name in held)}")
                held.clear()
                continue
            if not changed and not manager.has_work():
                manager.retry_parked(clock)  # times the retries this cycle's changes asked for
                due = manager.next_retry_at()
                if due is None:
                    break
                clock = max(clock, due - 0.01)  # idle until the parked Workloads come back, as the controller sleeps
                continue
            if not changed and cycle > 20:
                break
        admitted.append(_admitted(manager))
    return lines, admitted


def manager_with(objects: list[dict], fair_sharing: kinds.FairSharing = kinds.FAIR_SHARING_OFF,
                 **settings: bool) -> QueueManager:
    """A fresh core holding these queue objects (kinds it does not keep are passed over)."""
    manager = QueueManager(fair_sharing=fair_sharing, **settings)
    adders = {"Namespace": (manager.add_namespace, conversion.namespace_from_dict),
              "ResourceFlavor": (manager.add_resource_flavor, conversion.resource_flavor_from_dict),
              "WorkloadPriorityClass": (manager.add_workload_priority_class,
                                        conversion.workload_priority_class_from_dict),
              "Cohort": (manager.add_cohort, conversion.cohort_from_dict),
              "ClusterQueue": (manager.add_cluster_queue, conversion.cluster_queue_from_dict),
              "LocalQueue": (manager.add_local_queue, conversion.local_queue_from_dict)}
    for obj in objects:
        add, convert = adders.get(obj["kind"], (None, None))
        if add is not None:
            add(convert(obj))
    return manager


def _fair_sharing(case: cases.Case) -> kinds.FairSharing:
    """The core's setting for the case's scheduler configuration."""
    if case.fairSharing is None:
        return kinds.FAIR_SHARING_OFF
    return kinds.FairSharing(True, tuple(kinds.FairSharingStrategy(s) for s in case.fairSharing.preemptionStrategies))


def _admitted(manager: QueueManager) -> dict[str, decisions.Admission]:
    out = {}
    for name in manager.cluster_queue_names():
        for record in manager.admitted_in([name]):
            admission = record.workload.admission
            assert admission is not None
            pod_sets = tuple(sorted((ps.name, tuple(sorted((r, rendering.local_name(PREFIX, f) or f)
                                                           for r, f in ps.flavors.items())))
                                    for ps in admission.pod_set_assignments))
            out[record.workload.name] = (rendering.local_name(PREFIX, name) or name, pod_sets)
    return out


def _short(name: str) -> str:
    return rendering.local_name(PREFIX, name) or name
