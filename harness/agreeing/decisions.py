"""What an implementation decided for one case at one settled point, read from API objects.

Pure: it turns listed Workloads, ClusterQueues and visibility pages (plain dicts) into a
``Decisions`` value per case, in the case's own names, so two runs compare with ``==``. Beside the
decisions it keeps when each admitted Workload's quota was reserved: not a decision (the two
clusters' clocks differ), but what tells a tie between preemption candidates (``comparing``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from harness.agreeing import rendering
from scheduler.core import conditions, quantities

Admission = tuple[str, tuple[tuple[str, tuple[tuple[str, str], ...]], ...]]
"""(ClusterQueue, ((pod set, ((resource, flavor), ...)), ...)), sorted."""
CheckStates = tuple[tuple[str, str, int], ...]
"""((AdmissionCheck, state, retryCount), ...) of a Workload's status.admissionChecks, by name."""


@dataclass(frozen=True)
class Decisions:
    admitted: dict[str, Admission] = field(default_factory=dict)
    """Workload -> where it holds quota."""
    evicted: tuple[tuple[str, str], ...] = ()
    """(Workload, reason) for every eviction since the previous settled point, sorted."""
    pending: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """ClusterQueue -> its pending Workloads in the visibility API's order."""
    pending_local: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """namespace/LocalQueue -> its pending Workloads in order."""
    usage: dict[str, tuple[tuple[str, str, str], ...]] = field(default_factory=dict)
    """ClusterQueue -> ((flavor, resource, total), ...) from status.flavorsUsage, zeros left out."""
    deactivated: dict[str, str] = field(default_factory=dict)
    """Workload -> why it is deactivated (spec.active false): its Evicted reason once evicted, else its
    DeactivationTarget reason; active Workloads left out."""
    requeues: dict[str, int] = field(default_factory=dict)
    """Workload -> status.requeueState.count, where above 0 (PodsReady timeouts so far)."""
    checks: dict[str, CheckStates] = field(default_factory=dict)
    """Workload -> its admission check states, where it has any."""
    reserved: dict[str, str] = field(default_factory=dict, compare=False)
    """Workload -> its QuotaReserved lastTransitionTime (whole seconds, as the API stores it), for every
    admitted one; left out of ``==``. Empty in decisions written before it was recorded."""
    evicted_reserved: dict[str, tuple[str, str]] = field(default_factory=dict, compare=False)
    """Workload -> (ClusterQueue, QuotaReserved lastTransitionTime) it held when it was evicted, for every
    eviction of the epoch (the first, if it was evicted twice); left out of ``==``. Empty in decisions
    written before it was recorded."""
    evicted_by: dict[str, str] = field(default_factory=dict, compare=False)
    """Workload -> the Workload whose preemption evicted it (its first eviction of the epoch), where the
    eviction names one; left out of ``==``. Empty in decisions written before it was recorded."""


def admission_of(obj: Mapping) -> Admission | None:
    """Where a Workload holds quota: QuotaReserved=True with an admission, not Finished, else None
    (a finished Workload keeps its admission on record; neither scheduler counts its quota)."""
    status = obj.get("status") or {}
    admission = status.get("admission")
    if not admission or not conditions.is_true(obj, "QuotaReserved") or conditions.is_true(obj, "Finished"):
        return None
    pod_sets = tuple(sorted(
        (psa.get("name", ""), tuple(sorted((r, f) for r, f in (psa.get("flavors") or {}).items()
                                           if r != rendering.GATE_RESOURCE)))
        for psa in admission.get("podSetAssignments") or ()))
    return admission.get("clusterQueue", ""), pod_sets


def holds_evicted_quota(obj: Mapping) -> bool:
    """Evicted, yet still holding its quota: what a job reconciler would release (Kueue only)."""
    return conditions.is_true(obj, "Evicted") and conditions.is_true(obj, "QuotaReserved")


def eviction_of(obj: Mapping) -> tuple[str, str] | None:
    """(lastTransitionTime, reason) of a True Evicted condition; the reason is the Preempted one if any."""
    evicted = conditions.condition(obj, "Evicted")
    if evicted is None or evicted.get("status") != "True":
        return None
    preempted = conditions.condition(obj, "Preempted")
    reason = preempted.get("reason", "") if preempted and preempted.get("status") == "True" else evicted.get("reason", "")
    return evicted.get("lastTransitionTime", ""), reason


def deactivation_of(obj: Mapping) -> str | None:
    """Why a Workload is deactivated (None while spec.active is not false): the Evicted reason the
    deactivation's eviction gave, else (not evicted yet) the DeactivationTarget reason, else ""."""
    if ((obj.get("spec") or {}).get("active", True)) is not False:
        return None
    evicted = conditions.condition(obj, "Evicted")
    if evicted is not None and evicted.get("status") == "True" and evicted.get("reason", "").startswith("Deactivated"):
        return evicted["reason"]
    target = conditions.condition(obj, "DeactivationTarget")
    return target.get("reason", "") if target is not None and target.get("status") == "True" else ""


def requeue_count_of(obj: Mapping) -> int:
    return int(((obj.get("status") or {}).get("requeueState") or {}).get("count") or 0)


def check_states_of(obj: Mapping, prefix: str) -> CheckStates:
    """Its admission check states with the case's own check names."""
    rows = []
    for state in (obj.get("status") or {}).get("admissionChecks") or ():
        name = state.get("name", "")
        rows.append((rendering.local_name(prefix, name) or name, state.get("state", ""),
                     int(state.get("retryCount") or 0)))
    return tuple(sorted(rows))


def lifecycle_by_case(workloads: Iterable[Mapping], prefixes: Iterable[str]
                      ) -> dict[str, tuple[dict[str, str], dict[str, int], dict[str, CheckStates]]]:
    """prefix -> (deactivated, requeues, checks) of its Workloads, as ``Decisions`` holds them."""
    out: dict[str, tuple[dict[str, str], dict[str, int], dict[str, CheckStates]]] = {p: ({}, {}, {}) for p in prefixes}
    for obj in workloads:
        prefix, name = _owner(obj, out)
        if prefix is None:
            continue
        deactivated, requeues, checks = out[prefix]
        if (reason := deactivation_of(obj)) is not None:
            deactivated[name] = reason
        if count := requeue_count_of(obj):
            requeues[name] = count
        if states := check_states_of(obj, prefix):
            checks[name] = states
    return out


def held_when_evicted(obj: Mapping, prefix: str) -> tuple[str, str] | None:
    """(the case's own ClusterQueue name, QuotaReserved lastTransitionTime) an evicted Workload still
    holds: both schedulers keep the quota reserved until the tester releases it."""
    admission = (obj.get("status") or {}).get("admission") or {}
    reserved = conditions.condition(obj, "QuotaReserved")
    if not admission.get("clusterQueue") or reserved is None or reserved.get("status") != "True":
        return None
    cq = admission["clusterQueue"]
    return rendering.local_name(prefix, cq) or cq, reserved.get("lastTransitionTime", "")


PREEMPTOR = re.compile(r"to accommodate (?:a workload \(UID: (?P<uid>[^,)]+)|(?P<namespace>[^/\s]+)/(?P<name>[^\s;,]+))")
"""The preemptor in an eviction's message: Kueue names its UID, the reference scheduler namespace/name."""


def preemptor_of(obj: Mapping, names_by_uid: Mapping[str, str]) -> str | None:
    """The name of the Workload whose preemption evicted this one (its Preempted, else Evicted,
    condition's message), if the message names one that is known."""
    for kind in ("Preempted", "Evicted"):
        found = PREEMPTOR.search((conditions.condition(obj, kind) or {}).get("message", ""))
        if found:
            return names_by_uid.get(found["uid"]) if found["uid"] else found["name"]
    return None


def admitted_by_case(workloads: Iterable[Mapping], prefixes: Iterable[str]) -> dict[str, dict[str, Admission]]:
    """prefix -> {workload: admission} with the case's own ClusterQueue names."""
    out: dict[str, dict[str, Admission]] = {p: {} for p in prefixes}
    for obj in workloads:
        prefix, name = _owner(obj, out)
        admission = admission_of(obj)
        if prefix is None or admission is None:
            continue
        cq, pod_sets = admission
        local = tuple((ps, tuple((r, rendering.local_name(prefix, f) or f) for r, f in flavors))
                      for ps, flavors in pod_sets)
        out[prefix][name] = (rendering.local_name(prefix, cq) or cq, local)
    return out


def reserved_by_case(workloads: Iterable[Mapping], prefixes: Iterable[str]) -> dict[str, dict[str, str]]:
    """prefix -> {workload: QuotaReserved lastTransitionTime} for the Workloads that hold quota."""
    out: dict[str, dict[str, str]] = {p: {} for p in prefixes}
    for obj in workloads:
        prefix, name = _owner(obj, out)
        reserved = conditions.condition(obj, "QuotaReserved")
        if prefix is not None and reserved is not None and admission_of(obj) is not None:
            out[prefix][name] = reserved.get("lastTransitionTime", "")
    return out


def usage_of(cq_obj: Mapping, prefix: str) -> tuple[tuple[str, str, str], ...]:
    rows = []
    for flavor in (cq_obj.get("status") or {}).get("flavorsUsage") or ():
        name = rendering.local_name(prefix, flavor.get("name", ""))
        if name is None or name == rendering.GATE:
            continue
        for resource in flavor.get("resources") or ():
            total = quantities.parse_quantity(resource.get("total", "0"))
            if total:
                rows.append((name, resource.get("name", ""), quantities.format_quantity(total)))
    return tuple(sorted(rows))


def pending_names(page: Mapping) -> tuple[str, ...]:
    return tuple(item["metadata"]["name"] for item in page.get("items") or ())


def _owner(obj: Mapping, prefixes: Mapping[str, object]) -> tuple[str | None, str]:
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace", "")
    prefix = namespace.split("-", 1)[0]
    return (prefix if prefix in prefixes else None), meta.get("name", "")


def from_json(data: Mapping) -> Decisions:
    """A Decisions value back from its JSON form (``dataclasses.asdict`` written by the run; runs
    written before ``reserved``, the eviction details or the lifecycle were recorded lack them)."""
    def admission(value) -> Admission:
        cq, pod_sets = value
        return cq, tuple((ps, tuple((r, f) for r, f in flavors)) for ps, flavors in pod_sets)

    return Decisions(
        admitted={name: admission(value) for name, value in data["admitted"].items()},
        evicted=tuple((name, reason) for name, reason in data["evicted"]),
        pending={k: tuple(v) for k, v in data["pending"].items()},
        pending_local={k: tuple(v) for k, v in data["pending_local"].items()},
        usage={k: tuple(tuple(row) for row in v) for k, v in data["usage"].items()},
        deactivated=dict(data.get("deactivated", {})),
        requeues=dict(data.get("requeues", {})),
        checks={name: tuple((c, state, count) for c, state, count in rows)
                for name, rows in data.get("checks", {}).items()},
        reserved=dict(data.get("reserved", {})),
        evicted_reserved={name: (cq, at) for name, (cq, at) in data.get("evicted_reserved", {}).items()},
        evicted_by=dict(data.get("evicted_by", {})))
