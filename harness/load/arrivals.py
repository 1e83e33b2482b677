"""A fixed arrival schedule (pure): which object is created when, in which queue, of which class.

Kueue's scheduler performance test defines it; the kueue-baseline (Workloads) and jobs (Jobs)
drivers both create on it.

Kueue's generator runs one creator per (ClusterQueue, workload set): it waits one creation interval,
creates, and repeats `count` times, so workload i of a class is due at (i + 1) x interval after the
start. We keep the due times fixed from the start (no drift when a create is slow).
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import PositiveFloat, PositiveInt

from harness.errors import KqbenchError
from harness.scenarios import base, sections


class TopologyRequestSpec(base.Model):
    """A pod set's topologyRequest, in Kueue's field names."""

    required: str | None = None
    preferred: str | None = None
    unconstrained: bool | None = None
    podSetSliceRequiredTopology: str | None = None
    podSetSliceSize: PositiveInt | None = None

    def as_api(self) -> dict:
        return self.model_dump(exclude_none=True)


class ArrivalFields(base.Model):
    """The fields of a load.mix entry that only a fixed schedule reads: the drivers that create on it
    (kueue-baseline, jobs) add them to the scenario's mix."""

    per_second: PositiveFloat | None = None
    """Arrival rate of this kind per ClusterQueue; Locust's open-ended load goes by load.rates instead."""
    count: PositiveInt | None = None
    """Total of this kind per ClusterQueue; None means unbounded (Locust's load, which refuses a count)."""
    topology: TopologyRequestSpec | None = None
    """The pod set's topologyRequest (kueue-baseline's TAS classes)."""


@dataclass(frozen=True, slots=True)
class WorkloadClass:
    name: str
    cpu: str
    """Per pod."""
    cpu_milli: int
    """The whole Workload's (every pod's), what its admission holds of the queue's quota."""
    runtime_seconds: float
    priority: int
    priority_class: str | None
    count: int
    """Per ClusterQueue."""
    interval_seconds: float
    """Between two creations of this class in one ClusterQueue."""
    pods: int = 1
    topology_request: tuple[tuple[str, object], ...] = ()
    """The pod set's topologyRequest fields (Kueue's names); none: no topology asked for."""


@dataclass(frozen=True, slots=True)
class Queue:
    namespace: str
    local_queue: str
    cluster_queue: str


@dataclass(frozen=True, slots=True)
class Creation:
    at: float
    """Seconds after the start of the generation."""
    name: str
    queue: Queue
    workload_class: WorkloadClass


@dataclass(frozen=True, slots=True)
class Plan:
    classes: tuple[WorkloadClass, ...]
    queues: tuple[Queue, ...]
    nominal_milli: dict[str, int]
    """ClusterQueue -> nominal CPU quota in millicores (the denominator of Kueue's usage)."""

    @property
    def total(self) -> int:
        return len(self.queues) * sum(c.count for c in self.classes)


def cpu_milli(quantity: str | int | float) -> int:
    """'1' -> 1000, '500m' -> 500, 20 -> 20000 (CPU quantities only)."""
    text = str(quantity).strip()
    try:
        if text.endswith("m"):
            return int(round(float(text[:-1])))
        return int(round(float(text) * 1000))
    except ValueError:
        raise KqbenchError(f"CPU quantity {quantity!r} is not a number of cores or millicores") from None


def _class_name(mix: sections.WorkloadMixFields, index: int) -> str:
    return mix.priority_class or f"class-{index}"


def from_scenario(scenario: sections.ScenarioFields) -> Plan:
    """The plan of a scenario whose load.mix entries each give `count` and `per_second` (per ClusterQueue)."""
    classes = []
    for index, mix in enumerate(scenario.load.mix):
        if mix.count is None or mix.per_second is None:
            raise KqbenchError(f"load.mix[{index}]: the kueue-baseline run needs both count and per_second "
                               "(per ClusterQueue)")
        classes.append(WorkloadClass(name=_class_name(mix, index), cpu=mix.cpu, cpu_milli=cpu_milli(mix.cpu) * mix.pods,
                                     runtime_seconds=mix.runtime_seconds, priority=mix.priority,
                                     priority_class=mix.priority_class, count=mix.count,
                                     interval_seconds=round(1.0 / mix.per_second, 3), pods=mix.pods,
                                     topology_request=tuple(sorted(mix.topology.as_api().items()))
                                     if mix.topology else ()))
    queues = tuple(Queue(ns, lq, cq) for spec in scenario.queues.local_queues for ns, lq, cq in spec.expanded())
    if not queues:
        raise KqbenchError("queues.local_queues: the kueue-baseline run needs at least one LocalQueue")
    nominal: dict[str, int] = {}
    for cq in scenario.queues.cluster_queues:
        milli = sum(cpu_milli(r.nominal) for g in cq.resource_groups for f in g.flavors for r in f.resources
                    if r.name == "cpu")
        for name, _ in cq.expanded():
            nominal[name] = milli
    return Plan(tuple(classes), queues, nominal)


def schedule(plan: Plan) -> list[Creation]:
    """Every creation of the run, ordered by due time (ties: queue order, then class order)."""
    out = []
    for qi, queue in enumerate(plan.queues):
        for ci, cls in enumerate(plan.classes):
            for i in range(cls.count):
                name = f"{cls.name}-{queue.local_queue}-{i}"
                out.append(((round((i + 1) * cls.interval_seconds, 6), qi, ci, i),
                            Creation(round((i + 1) * cls.interval_seconds, 6), name, queue, cls)))
    out.sort(key=lambda pair: pair[0])
    return [creation for _, creation in out]
