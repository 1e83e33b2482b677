"""Kueue's own cycles put to the reference core (pure): on the state Kueue was in, would the
reference scheduler have decided what Kueue decided?

A differential run compares two schedulers from the same start; in a long run with arrivals and
finishes in flight, each soon sees states the other never does (one is faster, so its queues are
shorter), and their counts of evictions differ for that reason alone. A replay takes the states
out of the comparison: for every cycle Kueue logged (`harness.implementations.kueue.cycles`), the
Workloads holding quota at its snapshot and the heads it tried go into a fresh reference core,
which decides one cycle; each head's decision is compared with Kueue's.

Verdicts per head: `same` (admitted by both; pending by both; preemption of the same targets, or,
for a preemption still in progress, both waiting on it), `tie-target` (as many targets, equal in
everything Kueue orders candidates by: evicted, in the preemptor's ClusterQueue or not, priority,
quota reserved in the same second; Kueue's last key is the UID, which differs between clusters),
`tie-order` (heads that Kueue's cycle orders by priority and creation second alone; its sort is not
stable, so among equals either may go first), and `differs`.
"""

from __future__ import annotations

import collections
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from harness.agreeing import simulating
from harness.implementations.kueue import cycles as kueue_cycles
from scheduler.core import conversion, decisions as core_decisions, scheduling

VERDICTS = ("same", "tie-target", "tie-order", "differs")


@dataclass(frozen=True, slots=True)
class Head:
    cycle: int
    name: str
    kueue: kueue_cycles.Outcome
    ours: kueue_cycles.Outcome
    verdict: str


@dataclass(frozen=True, slots=True)
class Shape:
    """What a replay needs besides the log: the queue objects and each Workload's spec."""

    objects: list[dict]
    workload: Callable[[str], dict | None]
    """name -> the Workload as created (None: not one of the run's)."""
    ordering_of: Callable[[str], tuple]
    """name -> Kueue's iteration key without its tie-break (priority, creation second)."""
    settings: dict = field(default_factory=dict)
    """The core's settings that decide as the run's Kueue did (fair sharing, the version's defaults)."""



def first_flavors(objects: list[dict]) -> dict[str, dict[str, str]]:
    """ClusterQueue -> resource -> the first flavor that covers it (where a one-flavor run admits)."""
    out: dict[str, dict[str, str]] = {}
    for obj in objects:
        if obj.get("kind") == "ClusterQueue":
            flavors = out.setdefault(obj["metadata"]["name"], {})
            for group in obj["spec"].get("resourceGroups") or []:
                first = (group.get("flavors") or [{}])[0].get("name", "")
                for resource in group.get("coveredResources") or []:
                    flavors.setdefault(resource, first)
    return out


def holder(body: dict, held: kueue_cycles.Holding, flavors: dict[str, str]) -> dict:
    """A created Workload as Kueue's cache holds it: its quota reserved in the queue's first flavor
    per resource (the log does not say which; right for one-flavor queues), the time at Kueue's 1 s
    resolution, Evicted while its release is pending."""
    pod_sets = body["spec"]["podSets"]
    since = conversion.format_timestamp(held.since)
    conditions = [{"type": t, "status": "True", "reason": t, "message": "", "lastTransitionTime": since}
                  for t in ("QuotaReserved", "Admitted")]
    if held.evicted:
        conditions.append({"type": "Evicted", "status": "True", "reason": "Preempted", "message": "",
                           "lastTransitionTime": since})
    return {**body, "status": {"admission": {"clusterQueue": held.cluster_queue, "podSetAssignments": [
        {"name": ps["name"], "count": ps.get("count", 1),
         "flavors": {resource: flavors.get(resource, "") for resource in _requests(ps)},
         "resourceUsage": _requests(ps)} for ps in pod_sets]}, "conditions": conditions}}


def _requests(pod_set: dict) -> dict:
    total: dict[str, str] = {}
    for container in pod_set["template"]["spec"]["containers"]:
        total.update((container.get("resources") or {}).get("requests") or {})
    return total


def _ours(decision) -> kueue_cycles.Outcome:
    if isinstance(decision, core_decisions.Admit):
        return kueue_cycles.Outcome("admit")
    if isinstance(decision, core_decisions.Preempt):
        targets = tuple(t.workload.name for t in decision.targets)
        return kueue_cycles.Outcome("preempt", targets)
    return kueue_cycles.Outcome("other", reason=getattr(decision, "message", ""))


def _verdict(kueue: kueue_cycles.Outcome, ours: kueue_cycles.Outcome, candidate_key: Callable[[str], tuple],
             evicted: set[str]) -> str:
    if kueue.kind == "pending-preemption":
        # Kueue's targets are the evicted Workloads still holding quota; ours picks them first too
        return "same" if ours.kind == "preempt" and set(ours.targets) <= evicted else "differs"
    if kueue.kind != ours.kind:
        return "differs"
    if kueue.kind != "preempt" or sorted(kueue.targets) == sorted(ours.targets):
        return "same"
    tied = sorted(map(candidate_key, kueue.targets)) == sorted(map(candidate_key, ours.targets))
    return "tie-target" if tied else "differs"


def replay_cycle(cycle: kueue_cycles.Cycle, created: dict[str, float], shape: Shape) -> list[Head]:
    manager = simulating.manager_with(shape.objects, **shape.settings)
    flavors = first_flavors(shape.objects)
    queues = cluster_queues_of(shape.objects)
    heads = [name for name in dict.fromkeys(cycle.heads) if shape.workload(name) is not None]
    for name, held in cycle.holding.items():
        body = shape.workload(name)
        if body is not None and name not in heads:
            manager.add_workload(conversion.workload_from_dict(holder(_created(body, name, created), held,
                                                                       flavors.get(held.cluster_queue, {}))))
    for name in heads:
        manager.add_workload(conversion.workload_from_dict(_created(shape.workload(name), name, created)))
    ours = {d.workload.name: _ours(d) for d in scheduling.decide_cycle(manager)}
    evicted = {name for name, held in cycle.holding.items() if held.evicted}
    keys = collections.Counter(shape.ordering_of(name) for name in heads)
    out = []
    for name in heads:
        kueue = cycle.outcomes.get(name, kueue_cycles.Outcome("other"))
        mine = ours.get(name, kueue_cycles.Outcome("other"))
        body = shape.workload(name) or {}
        preemptor_queue = queues.get((body["metadata"].get("namespace", ""), body["spec"].get("queueName", "")), "")

        def candidate_key(target: str) -> tuple:
            held = cycle.holding.get(target)
            if held is None:
                return ("not held", target)
            return ("held", str(held.evicted), str(held.cluster_queue == preemptor_queue),
                    str((shape.workload(target) or {}).get("spec", {}).get("priority", 0)), str(int(held.since)))

        verdict = _verdict(kueue, mine, candidate_key, evicted)
        if verdict == "differs" and keys[shape.ordering_of(name)] > 1:
            verdict = "tie-order"
        out.append(Head(cycle.number, name, kueue, mine, verdict))
    return out


def cluster_queues_of(objects: list[dict]) -> dict[tuple[str, str], str]:
    """(namespace, LocalQueue) -> its ClusterQueue."""
    return {(o["metadata"].get("namespace", ""), o["metadata"]["name"]): o["spec"]["clusterQueue"]
            for o in objects if o.get("kind") == "LocalQueue"}


def _created(body: dict, name: str, created: dict[str, float]) -> dict:
    meta = {**body["metadata"], "uid": f"uid-{name}", "resourceVersion": "1"}
    if name in created:
        meta["creationTimestamp"] = conversion.format_timestamp(created[name])
    return {**body, "metadata": meta}


def replay(cycles: Iterable[kueue_cycles.Cycle], created: dict[str, float], shape: Shape,
           progress: Callable[[int], None] | None = None) -> list[Head]:
    out: list[Head] = []
    for index, cycle in enumerate(cycles):
        if cycle.heads:
            out.extend(replay_cycle(cycle, created, shape))
        if progress is not None:
            progress(index + 1)
    return out


def tally(heads: list[Head]) -> dict:
    """Counts per verdict and per (Kueue's kind, ours) for the differing ones."""
    verdicts = collections.Counter(h.verdict for h in heads)
    pairs = collections.Counter(f"{h.kueue.kind} / {h.ours.kind}" for h in heads if h.verdict == "differs")
    kinds = collections.Counter(h.kueue.kind for h in heads)
    return {"heads": len(heads), "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
            "kueue_kinds": dict(kinds), "differing_pairs": dict(pairs.most_common())}
