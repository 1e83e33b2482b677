"""Invariants of Kueue's objects as the API holds them; pure: dicts in, violations out.

Which Workloads hold quota follows Kueue's cache: `status.admission` is set, `QuotaReserved` is not
False and `Finished` is not True (a Finished Workload keeps its admission, its quota is released).

Checks on one snapshot (they hold at every instant, a LIST is one consistent resourceVersion):
- `quota-within-limits`: per ClusterQueue, flavor and resource, the usage of the Workloads admitted
  to it <= nominal (no cohort) or nominal + borrowingLimit (in a cohort, when a limit is set);
- `cohort-within-lendable`: per cohort tree (root found through `spec.parentName`), what its queues
  use above their guaranteed quota (nominal - lendingLimit) <= what the members can lend plus the
  cohorts' own quota;
- `admitted-once` (needs the previous snapshot, `AdmissionHistory`): a Workload that held quota at
  the previous check and holds a different admission now (another assignment, or a newer
  QuotaReserved transition) must show an eviction in between: a newer Evicted, Preempted or Requeued
  transition, or a larger `status.requeueState.count`. Admissions made and undone between two checks
  are not seen: the history is the conditions, not a watch (a watch is one more watcher on the
  apiserver under measurement).
Checks of statuses the scheduler refreshes periodically (`reading` re-reads before calling them failed,
and calls a disagreement `unsettled`, not failed, when the objects kept changing between its reads, as
under churn: only a status that disagrees with objects that held still for a refresh is a violation):
- `finished-quota-released`: a ClusterQueue's `status.flavorsReservation` (else `flavorsUsage`) and
  `reservingWorkloads` equal what its quota-holding Workloads sum to: a Finished (or deleted) one still
  counted shows as a surplus;
- `pending-counts`: `status.pendingWorkloads` of every ClusterQueue and LocalQueue equals the
  Workloads that wait in it (active, not Finished, holding no quota, requeue not held). Queues with a
  stopPolicy are skipped (what Kueue counts for them differs by version).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from scheduler.core.quantities import format_quantity, parse_quantity

Obj = Mapping
FlavorResource = tuple[str, str]

QUOTA = "quota-within-limits"
COHORT = "cohort-within-lendable"
ADMITTED_ONCE = "admitted-once"
RELEASED = "finished-quota-released"
PENDING = "pending-counts"
INSTANT_CHECKS = (QUOTA, COHORT, ADMITTED_ONCE)
STATUS_CHECKS = (RELEASED, PENDING)
CHECKS = INSTANT_CHECKS + STATUS_CHECKS
_MAX_COHORT_DEPTH = 64


@dataclass(frozen=True, slots=True)
class Violation:
    check: str
    objects: tuple[str, ...]
    """Kind/namespace/name of every object the violation is about."""
    detail: str


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The objects of one read; each list as the API returned its items."""

    cluster_queues: list[Obj] = field(default_factory=list)
    cohorts: list[Obj] = field(default_factory=list)
    local_queues: list[Obj] = field(default_factory=list)
    workloads: list[Obj] = field(default_factory=list)


# -- reading the objects ----------------------------------------------------------------------


def _name(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("name", "")


def _namespace(obj: Obj) -> str:
    return (obj.get("metadata") or {}).get("namespace", "default")


def workload_ref(obj: Obj) -> str:
    return f"Workload/{_namespace(obj)}/{_name(obj)}"


def _conditions(obj: Obj) -> dict[str, Obj]:
    return {c.get("type"): c for c in (obj.get("status") or {}).get("conditions") or () if isinstance(c, Mapping)}


def _is(conditions: Mapping[str, Obj], kind: str, status: str) -> bool:
    return (conditions.get(kind) or {}).get("status") == status


def holds_quota(obj: Obj) -> bool:
    conditions = _conditions(obj)
    return (bool((obj.get("status") or {}).get("admission")) and not _is(conditions, "QuotaReserved", "False")
            and not _is(conditions, "Finished", "True"))


def is_pending(obj: Obj) -> bool:
    """Waits in its queue: active, not Finished, holding no quota, its requeue not held back."""
    conditions = _conditions(obj)
    if (obj.get("spec") or {}).get("active", True) is False or _is(conditions, "Finished", "True"):
        return False
    if _is(conditions, "Requeued", "False"):
        return False
    return not holds_quota(obj) and bool((obj.get("spec") or {}).get("queueName"))


def admission_usage(obj: Obj) -> dict[FlavorResource, int]:
    """(flavor, resource) -> milli-units a Workload's `status.admission` takes."""
    usage: dict[FlavorResource, int] = {}
    for assignment in ((obj.get("status") or {}).get("admission") or {}).get("podSetAssignments") or ():
        flavors = assignment.get("flavors") or {}
        for resource, value in (assignment.get("resourceUsage") or {}).items():
            key = (flavors.get(resource, ""), resource)
            usage[key] = usage.get(key, 0) + parse_quantity(value)
    return usage


def admitted_queue(obj: Obj) -> str:
    return ((obj.get("status") or {}).get("admission") or {}).get("clusterQueue", "")


@dataclass(frozen=True, slots=True)
class Quota:
    nominal: int = 0
    borrowing_limit: int | None = None
    lending_limit: int | None = None

    @property
    def guaranteed(self) -> int:
        """Kept for the queue itself; the rest is lent to its cohort."""
        return 0 if self.lending_limit is None else max(0, self.nominal - self.lending_limit)


def quotas(obj: Obj) -> dict[FlavorResource, Quota]:
    """(flavor, resource) -> the quota a ClusterQueue's or Cohort's spec.resourceGroups give."""
    out: dict[FlavorResource, Quota] = {}
    for group in (obj.get("spec") or {}).get("resourceGroups") or ():
        for flavor in group.get("flavors") or ():
            for resource in flavor.get("resources") or ():
                limit = lambda key: None if resource.get(key) is None else parse_quantity(resource[key])  # noqa: E731
                out[(flavor.get("name", ""), resource.get("name", ""))] = Quota(
                    parse_quantity(resource.get("nominalQuota", 0)), limit("borrowingLimit"), limit("lendingLimit"))
    return out


def _cohort_of(cq: Obj) -> str:
    spec = cq.get("spec") or {}
    return spec.get("cohortName") or spec.get("cohort") or ""


def _stopped(obj: Obj) -> bool:
    return ((obj.get("spec") or {}).get("stopPolicy") or "None") != "None"


def usage_by_queue(workloads: Iterable[Obj]) -> tuple[dict[str, dict[FlavorResource, int]], dict[str, list[Obj]]]:
    """Per ClusterQueue: the summed usage and the Workloads of those holding quota."""
    usage: dict[str, dict[FlavorResource, int]] = {}
    holders: dict[str, list[Obj]] = {}
    for obj in workloads:
        if not holds_quota(obj):
            continue
        queue = admitted_queue(obj)
        holders.setdefault(queue, []).append(obj)
        book = usage.setdefault(queue, {})
        for key, milli in admission_usage(obj).items():
            book[key] = book.get(key, 0) + milli
    return usage, holders


def _amount(milli: int) -> str:
    return format_quantity(milli)


def _refs(objs: Iterable[Obj], limit: int = 10) -> tuple[str, ...]:
    refs = [workload_ref(o) for o in objs]
    return tuple(refs[:limit]) + ((f"... {len(refs) - limit} more",) if len(refs) > limit else ())


# -- checks on one snapshot -------------------------------------------------------------------


def check_quota(snapshot: Snapshot) -> list[Violation]:
    usage, holders = usage_by_queue(snapshot.workloads)
    specs = {_name(cq): cq for cq in snapshot.cluster_queues}
    out = []
    for queue, used in sorted(usage.items()):
        cq = specs.get(queue)
        if cq is None:
            continue  # a deleted ClusterQueue: Kueue keeps its Workloads' admissions, there is no limit to compare
        limits = quotas(cq)
        in_cohort = bool(_cohort_of(cq))
        for (flavor, resource), milli in sorted(used.items()):
            quota = limits.get((flavor, resource), Quota())
            if in_cohort and quota.borrowing_limit is None:
                continue  # bounded by the cohort check only
            bound = quota.nominal + ((quota.borrowing_limit or 0) if in_cohort else 0)
            if milli > bound:
                out.append(Violation(QUOTA, (f"ClusterQueue/{queue}",) + _refs(holders[queue]),
                                     f"{flavor}/{resource}: admitted {_amount(milli)} > {_amount(bound)} "
                                     f"(nominal {_amount(quota.nominal)}"
                                     + (f" + borrowingLimit {_amount(quota.borrowing_limit or 0)})" if in_cohort else ")")))
    return out


def _root(cohort: str, parents: Mapping[str, str]) -> str:
    """The top of a cohort's tree; a cycle of parents (invalid, but the API may hold one) is one tree."""
    path = [cohort]
    for _ in range(_MAX_COHORT_DEPTH):
        parent = parents.get(path[-1], "")
        if not parent:
            return path[-1]
        if parent in path:
            return min(path[path.index(parent):])
        path.append(parent)
    return path[-1]


def check_cohorts(snapshot: Snapshot) -> list[Violation]:
    usage, _ = usage_by_queue(snapshot.workloads)
    parents = {_name(c): (c.get("spec") or {}).get("parentName") or (c.get("spec") or {}).get("parent") or ""
               for c in snapshot.cohorts}
    lendable: dict[str, dict[FlavorResource, int]] = {}
    borrowed: dict[str, dict[FlavorResource, int]] = {}
    members: dict[str, list[str]] = {}
    for cohort in snapshot.cohorts:
        pool = lendable.setdefault(_root(_name(cohort), parents), {})
        for key, quota in quotas(cohort).items():
            pool[key] = pool.get(key, 0) + quota.nominal
    for cq in snapshot.cluster_queues:
        if not _cohort_of(cq):
            continue
        root = _root(_cohort_of(cq), parents)
        members.setdefault(root, []).append(_name(cq))
        pool, taken = lendable.setdefault(root, {}), borrowed.setdefault(root, {})
        limits = quotas(cq)
        for key, quota in limits.items():
            pool[key] = pool.get(key, 0) + quota.nominal - quota.guaranteed
        for key, milli in usage.get(_name(cq), {}).items():
            above = max(0, milli - limits.get(key, Quota()).guaranteed)
            taken[key] = taken.get(key, 0) + above
    out = []
    for root, taken in sorted(borrowed.items()):
        for (flavor, resource), milli in sorted(taken.items()):
            can = lendable.get(root, {}).get((flavor, resource), 0)
            if milli > can:
                out.append(Violation(COHORT, (f"Cohort/{root}",) + tuple(f"ClusterQueue/{m}" for m in sorted(members[root])),
                                     f"{flavor}/{resource}: members use {_amount(milli)} above their guaranteed quota, "
                                     f"the cohort can lend {_amount(can)}"))
    return out


# -- checks of periodically refreshed statuses ------------------------------------------------


def _reported_usage(cq: Obj) -> dict[FlavorResource, int] | None:
    status = cq.get("status") or {}
    flavors = status.get("flavorsReservation") or status.get("flavorsUsage")
    if flavors is None:
        return None
    return {(f.get("name", ""), r.get("name", "")): parse_quantity(r.get("total", 0))
            for f in flavors for r in f.get("resources") or ()}


def check_released(snapshot: Snapshot) -> list[Violation]:
    usage, holders = usage_by_queue(snapshot.workloads)
    finished: dict[str, list[Obj]] = {}
    for obj in snapshot.workloads:
        if (obj.get("status") or {}).get("admission") and _is(_conditions(obj), "Finished", "True"):
            finished.setdefault(admitted_queue(obj), []).append(obj)
    out = []
    for cq in snapshot.cluster_queues:
        name, status = _name(cq), cq.get("status") or {}
        reported = _reported_usage(cq)
        if reported is None and "reservingWorkloads" not in status:
            continue  # no status written yet
        truth = usage.get(name, {})
        wrong = [f"{f}/{r}: status {_amount(reported.get((f, r), 0))}, held {_amount(truth.get((f, r), 0))}"
                 for f, r in sorted(set(reported or {}) | set(truth))
                 if reported is not None and reported.get((f, r), 0) != truth.get((f, r), 0)]
        count = status.get("reservingWorkloads", status.get("admittedWorkloads"))
        if count is not None and count != len(holders.get(name, [])):
            wrong.append(f"reservingWorkloads {count}, holding {len(holders.get(name, []))}")
        if wrong:
            out.append(Violation(RELEASED, (f"ClusterQueue/{name}",) + _refs(finished.get(name, [])), "; ".join(wrong)))
    return out


def pending_truth(snapshot: Snapshot) -> tuple[dict[str, int], dict[tuple[str, str], int]]:
    """Pending Workloads per ClusterQueue and per (namespace, LocalQueue) as the API holds them."""
    local_queues = {(_namespace(lq), _name(lq)): lq for lq in snapshot.local_queues}
    by_lq: dict[tuple[str, str], int] = {key: 0 for key in local_queues}
    for obj in snapshot.workloads:
        key = (_namespace(obj), (obj.get("spec") or {}).get("queueName", ""))
        if key in local_queues and is_pending(obj):
            by_lq[key] += 1
    by_cq: dict[str, int] = {_name(cq): 0 for cq in snapshot.cluster_queues}
    for key, count in by_lq.items():
        cq = (local_queues[key].get("spec") or {}).get("clusterQueue", "")
        if cq in by_cq and not _stopped(local_queues[key]):
            by_cq[cq] += count
    return by_cq, by_lq


def check_pending(snapshot: Snapshot) -> list[Violation]:
    by_cq, by_lq = pending_truth(snapshot)
    out = []
    for cq in snapshot.cluster_queues:
        reported = (cq.get("status") or {}).get("pendingWorkloads")
        if reported is not None and not _stopped(cq) and reported != by_cq[_name(cq)]:
            out.append(Violation(PENDING, (f"ClusterQueue/{_name(cq)}",),
                                 f"status.pendingWorkloads {reported}, pending Workloads {by_cq[_name(cq)]}"))
    for lq in snapshot.local_queues:
        key = (_namespace(lq), _name(lq))
        reported = (lq.get("status") or {}).get("pendingWorkloads")
        if reported is not None and not _stopped(lq) and reported != by_lq[key]:
            out.append(Violation(PENDING, (f"LocalQueue/{key[0]}/{key[1]}",),
                                 f"status.pendingWorkloads {reported}, pending Workloads {by_lq[key]}"))
    return out


def status_truth(snapshot: Snapshot) -> tuple:
    """What the status checks compare against (pending per queue, usage and holders per ClusterQueue):
    equal in two reads a refresh apart means the objects held still for the scheduler to catch up."""
    by_cq, by_lq = pending_truth(snapshot)
    usage, holders = usage_by_queue(snapshot.workloads)
    return (sorted(by_cq.items()), sorted(by_lq.items()), sorted((q, sorted(u.items())) for q, u in usage.items()),
            sorted((q, len(h)) for q, h in holders.items()))


def check_instant(snapshot: Snapshot) -> list[Violation]:
    return check_quota(snapshot) + check_cohorts(snapshot)


def check_statuses(snapshot: Snapshot) -> list[Violation]:
    return check_released(snapshot) + check_pending(snapshot)


# -- admission history ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Seen:
    holding: bool
    admission: str
    reserved_at: str
    evictions: tuple[str, ...]
    """Evicted, Preempted and Requeued transition times and the requeue count: any change is an eviction."""


def _seen(obj: Obj) -> _Seen:
    conditions = _conditions(obj)
    admission = (obj.get("status") or {}).get("admission") or {}
    signature = repr((admission.get("clusterQueue", ""), sorted(
        repr((a.get("name", ""), sorted((a.get("flavors") or {}).items()), a.get("count")))
        for a in admission.get("podSetAssignments") or ())))
    marks = tuple(f"{(conditions.get(kind) or {}).get('status')}@{(conditions.get(kind) or {}).get('lastTransitionTime')}"
                  for kind in ("Evicted", "Preempted", "Requeued"))
    count = str(((obj.get("status") or {}).get("requeueState") or {}).get("count", 0))
    return _Seen(holds_quota(obj), signature, str((conditions.get("QuotaReserved") or {}).get("lastTransitionTime")),
                 marks + (count,))


class AdmissionHistory:
    """What each Workload (by uid) looked like at the previous check; `observe` finds re-admissions
    without an eviction between."""

    def __init__(self) -> None:
        self._seen: dict[str, _Seen] = {}

    def observe(self, workloads: Iterable[Obj]) -> list[Violation]:
        seen: dict[str, _Seen] = {}
        out = []
        for obj in workloads:
            uid = (obj.get("metadata") or {}).get("uid") or workload_ref(obj)
            now = seen[uid] = _seen(obj)
            before = self._seen.get(uid)
            if before is None or not (before.holding and now.holding):
                continue
            readmitted = before.admission != now.admission or before.reserved_at != now.reserved_at
            if readmitted and before.evictions == now.evictions:
                out.append(Violation(ADMITTED_ONCE, (workload_ref(obj),),
                                     f"admitted again (QuotaReserved at {before.reserved_at} then {now.reserved_at}) "
                                     "with no eviction, preemption or requeue between"))
        self._seen = seen
        return out
