"""Pure constructors from Kueue-shaped dicts (``kueue.x-k8s.io/v1beta2`` JSON, as parsed
by orjson) to core objects, and the one way back: an Admission as ``status.admission``.

v1beta1 spellings the controller may still meet are accepted where they differ
(``spec.cohort``, ``spec.parent``, ``priorityClassName``, ``Borrow``/``Preempt``).
Decoding 100k workloads is on the controller's start-up path, so ``WorkloadDecoder``
memoises quantities and pod sets (bounded caches, one decoder per caller, no globals).
"""

from __future__ import annotations

import sys
from datetime import datetime, timezone
from typing import Any

from scheduler.core.kinds import (
    EVERYTHING,
    NOTHING,
    AdmissionCheckStrategyRule,
    BorrowWithinCohort,
    BorrowWithinCohortPolicy,
    ClusterQueue,
    Cohort,
    FlavorFungibility,
    FlavorQuotas,
    FungibilityPolicy,
    FungibilityPreference,
    LabelRequirement,
    LabelSelector,
    LocalQueue,
    Namespace,
    Preemption,
    PreemptionPolicy,
    QueueingStrategy,
    ResourceFlavor,
    ResourceGroup,
    ResourceQuota,
    SelectorOperator,
    Taint,
    Toleration,
    WorkloadPriorityClass,
)
from scheduler.core import admissionchecks, topologyconversion
from scheduler.core.quantities import format_quantity, parse_quantity
from scheduler.core.workloads import (
    REQUEUE_AT_EVICTION_REASONS,
    Admission,
    AdmissionCheckState,
    AdmittedCondition,
    ClearedCondition,
    PodSet,
    PodSetAssignment,
    RequeuingTimestamp,
    Workload,
)

Obj = dict[str, Any]

_FUNGIBILITY_ALIASES = {"Borrow": "MayStopSearch", "Preempt": "MayStopSearch"}
_CACHE_LIMIT = 65_536


def parse_timestamp(text: str | None) -> float:
    """RFC 3339 text (metav1.Time) to POSIX seconds; missing means 0."""
    if not text:
        return 0.0
    return datetime.fromisoformat(text).timestamp()


def format_timestamp(seconds: float) -> str:
    """POSIX seconds to RFC 3339 as the API stores metav1.Time: whole seconds, UTC."""
    return datetime.fromtimestamp(int(seconds), timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def resource_flavor_from_dict(obj: Obj) -> ResourceFlavor:
    spec = obj.get("spec") or {}
    taints = tuple(
        Taint(t.get("key", ""), t.get("value", ""), t.get("effect", "NoSchedule"))
        for t in spec.get("nodeTaints") or ()
    )
    tolerations = tuple(
        Toleration(t.get("key", ""), t.get("operator", "Equal"), t.get("value", ""), t.get("effect", ""))
        for t in spec.get("tolerations") or ()
    )
    return ResourceFlavor(_meta(obj)["name"], dict(spec.get("nodeLabels") or {}), taints,
                          spec.get("topologyName") or "", tolerations)


def _optional_quantity(value: Any) -> int | None:
    return None if value is None else parse_quantity(value)


def _resource_groups(groups: list[Obj] | None) -> tuple[ResourceGroup, ...]:
    result = []
    for group in groups or ():
        flavors = tuple(
            FlavorQuotas(
                flavor["name"],
                tuple(
                    ResourceQuota(
                        r["name"],
                        parse_quantity(r.get("nominalQuota", 0)),
                        _optional_quantity(r.get("borrowingLimit")),
                        _optional_quantity(r.get("lendingLimit")),
                    )
                    for r in flavor.get("resources") or ()
                ),
            )
            for flavor in group.get("flavors") or ()
        )
        result.append(ResourceGroup(tuple(group.get("coveredResources") or ()), flavors))
    return tuple(result)


def cluster_queue_from_dict(obj: Obj) -> ClusterQueue:
    spec = obj.get("spec") or {}
    preemption = spec.get("preemption") or {}
    fungibility = spec.get("flavorFungibility") or {}
    defaults = FlavorFungibility()
    return ClusterQueue(
        name=_meta(obj)["name"],
        resource_groups=_resource_groups(spec.get("resourceGroups")),
        cohort=spec.get("cohortName") or spec.get("cohort") or "",
        queueing_strategy=QueueingStrategy(spec.get("queueingStrategy") or "BestEffortFIFO"),
        preemption=Preemption(
            PreemptionPolicy(preemption.get("withinClusterQueue") or "Never"),
            PreemptionPolicy(preemption.get("reclaimWithinCohort") or "Never"),
            _borrow_within_cohort(preemption.get("borrowWithinCohort")),
        ),
        flavor_fungibility=FlavorFungibility(
            _fungibility(fungibility.get("whenCanBorrow"), defaults.when_can_borrow),
            _fungibility(fungibility.get("whenCanPreempt"), defaults.when_can_preempt),
            FungibilityPreference(fungibility.get("preference") or defaults.preference.value),
        ),
        stopped=(spec.get("stopPolicy") or "None") != "None",
        drain=spec.get("stopPolicy") == "HoldAndDrain",
        namespace_selector=label_selector_from_dict(spec.get("namespaceSelector")),
        fair_weight=fair_weight_from_dict(spec.get("fairSharing")),
        usage_based_admission=(spec.get("admissionScope") or {}).get("admissionMode") == USAGE_BASED_ADMISSION,
        admission_checks=admission_check_rules_from_dict(spec),
    )


def admission_check_rules_from_dict(spec: Obj) -> tuple[AdmissionCheckStrategyRule, ...]:
    """``spec.admissionChecksStrategy.admissionChecks``, or v1beta1's ``spec.admissionChecks`` (names, for every
    flavor), as Kueue's NewAdmissionChecks reads them (the webhook refuses both at once; the strategy wins here)."""
    strategy = (spec.get("admissionChecksStrategy") or {}).get("admissionChecks")
    if strategy:
        return tuple(AdmissionCheckStrategyRule(rule["name"], tuple(rule.get("onFlavors") or ()))
                     for rule in strategy)
    return tuple(AdmissionCheckStrategyRule(name) for name in spec.get("admissionChecks") or ())


def admission_check_from_dict(obj: Obj) -> admissionchecks.AdmissionCheck:
    """An AdmissionCheck object: its controller and whether its Active condition is True."""
    return admissionchecks.AdmissionCheck.of(obj)


def admission_check_states_from_dict(states: list[Obj] | None) -> tuple[AdmissionCheckState, ...]:
    """``status.admissionChecks``, sorted by name as Kueue keeps them."""
    if not states:
        return ()
    return tuple(sorted((AdmissionCheckState(
        s.get("name") or "", s.get("state") or "",
        parse_timestamp(s["lastTransitionTime"]) if s.get("lastTransitionTime") else None,
        s.get("message") or "", _optional_int(s.get("requeueAfterSeconds")), _optional_int(s.get("retryCount")))
        for s in states), key=lambda state: state.name))


def admission_check_states_to_dict(states: tuple[AdmissionCheckState, ...]) -> list[Obj]:
    """``status.admissionChecks`` JSON for these states (podSetUpdates are not modelled: none is written)."""
    out = []
    for state in states:
        entry: Obj = {"name": state.name, "state": state.state.value, "message": state.message,
                      "lastTransitionTime": format_timestamp(state.last_transition or 0.0)}
        if state.requeue_after_seconds is not None:
            entry["requeueAfterSeconds"] = state.requeue_after_seconds
        if state.retry_count is not None:
            entry["retryCount"] = state.retry_count
        out.append(entry)
    return out


def admitted_condition_from_dict(condition: Obj | None) -> AdmittedCondition | None:
    """A Workload's Admitted condition, None when it has none."""
    if condition is None:
        return None
    return AdmittedCondition(condition.get("status") == "True", condition.get("reason") or "",
                             condition.get("message") or "", parse_timestamp(condition.get("lastTransitionTime")))


USAGE_BASED_ADMISSION = "UsageBasedAdmissionFairSharing"
"""spec.admissionScope.admissionMode that turns admission fair sharing on for a ClusterQueue."""


def fair_weight_from_dict(obj: Obj | None) -> float:
    """``spec.fairSharing.weight`` as a number, 1 when unset (Kueue's parseFairWeight). A negative
    weight, which Kueue's webhook refuses, counts as unset rather than reversing the order."""
    weight = (obj or {}).get("weight")
    if weight is None:
        return 1.0
    value = parse_quantity(weight) / 1000
    return value if value >= 0 else 1.0


def label_selector_from_dict(obj: Obj | None) -> LabelSelector:
    """metav1.LabelSelectorAsSelector: null (or absent) selects nothing, ``{}`` everything.

    A selector it would refuse (an unknown operator, In/NotIn without values, Exists/DoesNotExist
    with some) selects nothing: Kueue's webhook refuses such a ClusterQueue, and its cache could not
    build one (pkg/cache/scheduler/clusterqueue.go), so it admits nothing. Label key syntax is not checked.
    """
    if obj is None:
        return NOTHING
    requirements = [
        LabelRequirement(key, SelectorOperator.IN, frozenset((value,)))
        for key, value in (obj.get("matchLabels") or {}).items()
    ]
    for expression in obj.get("matchExpressions") or ():
        try:
            operator = SelectorOperator(expression.get("operator"))
        except ValueError:
            return NOTHING
        values = frozenset(expression.get("values") or ())
        takes_values = operator in (SelectorOperator.IN, SelectorOperator.NOT_IN)
        if bool(values) is not takes_values or not expression.get("key"):
            return NOTHING
        requirements.append(LabelRequirement(expression["key"], operator, values))
    return LabelSelector(tuple(requirements)) if requirements else EVERYTHING


def namespace_from_dict(obj: Obj) -> Namespace:
    meta = _meta(obj)
    return Namespace(sys.intern(meta["name"]), dict(meta.get("labels") or {}))


def _borrow_within_cohort(obj: Obj | None) -> BorrowWithinCohort:
    """``preemption.borrowWithinCohort``; absent and ``{}`` mean policy Never, as the CRD defaults it."""
    obj = obj or {}
    threshold = obj.get("maxPriorityThreshold")
    return BorrowWithinCohort(
        BorrowWithinCohortPolicy(obj.get("policy") or "Never"),
        None if threshold is None else int(threshold),
    )


def _fungibility(value: str | None, default: FungibilityPolicy) -> FungibilityPolicy:
    if not value:
        return default
    return FungibilityPolicy(_FUNGIBILITY_ALIASES.get(value, value))


def cohort_from_dict(obj: Obj) -> Cohort:
    spec = obj.get("spec") or {}
    return Cohort(
        _meta(obj)["name"],
        spec.get("parentName") or spec.get("parent") or "",
        _resource_groups(spec.get("resourceGroups")),
        fair_weight_from_dict(spec.get("fairSharing")),
    )


def local_queue_from_dict(obj: Obj) -> LocalQueue:
    meta = _meta(obj)
    spec = obj.get("spec") or {}
    return LocalQueue(
        sys.intern(meta.get("namespace", "default")),
        sys.intern(meta["name"]),
        spec.get("clusterQueue", ""),
        stopped=(spec.get("stopPolicy") or "None") != "None",
        drain=spec.get("stopPolicy") == "HoldAndDrain",
        fair_weight=fair_weight_from_dict(spec.get("fairSharing")),
    )


def workload_priority_class_from_dict(obj: Obj) -> WorkloadPriorityClass:
    return WorkloadPriorityClass(_meta(obj)["name"], int(obj.get("value", 0)))


def _condition(status: Obj, kind: str) -> Obj | None:
    for condition in status.get("conditions") or ():
        if condition.get("type") == kind:
            return condition
    return None


def _is_true(condition: Obj | None) -> bool:
    return condition is not None and condition.get("status") == "True"


def _held_requeue_reason(condition: Obj | None) -> str:
    if condition is None or condition.get("status") != "False":
        return ""
    return sys.intern(condition.get("reason") or "")


def _optional_int(value: Any) -> int | None:
    return None if value is None else int(value)


def _deactivation_target(condition: Obj | None) -> tuple[str, str] | None:
    if not _is_true(condition):
        return None
    return (sys.intern(condition.get("reason") or ""), condition.get("message") or "")  # type: ignore[union-attr]


def _cleared(conditions: dict[Any, Obj]) -> tuple[ClearedCondition, ...]:
    """The Evicted and Preempted conditions that are False."""
    return tuple(ClearedCondition(kind, c.get("reason") or "", c.get("message") or "",
                                  parse_timestamp(c.get("lastTransitionTime")))
                 for kind in ("Evicted", "Preempted") if (c := conditions.get(kind)) is not None
                 and c.get("status") == "False")


class WorkloadDecoder:
    """Turns Workload dicts into ``Workload`` objects, sharing repeated parts."""

    def __init__(self, requeuing: RequeuingTimestamp = RequeuingTimestamp.EVICTION) -> None:
        self.requeuing = requeuing
        self._quantities: dict[Any, int] = {}
        self._pod_sets: dict[tuple[Any, ...], PodSet] = {}

    def decode(self, obj: Obj) -> Workload:
        """One Workload dict to a core ``Workload`` (admission and state included)."""
        meta = _meta(obj)
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        created = parse_timestamp(meta.get("creationTimestamp"))
        priority = spec.get("priority")
        priority_class = ""
        if priority is None:
            ref = spec.get("priorityClassRef") or {}
            priority_class = ref.get("name") or spec.get("priorityClassName") or ""
        # One pass over the conditions (decoding is on the start-up path of 100k workloads).
        conditions = {c.get("type"): c for c in status.get("conditions") or ()}
        evicted = conditions.get("Evicted")
        queue_timestamp = created
        if _is_true(evicted):
            reason = evicted.get("reason", "")  # type: ignore[union-attr]
            if reason == "AdmissionCheck" or (
                reason in REQUEUE_AT_EVICTION_REASONS and self.requeuing is RequeuingTimestamp.EVICTION
            ):
                queue_timestamp = parse_timestamp(evicted.get("lastTransitionTime"))  # type: ignore[union-attr]
        admission = None
        admitted_at = 0.0
        reserved = conditions.get("QuotaReserved")
        if status.get("admission") and (reserved is None or _is_true(reserved)):
            admission = self._admission(status["admission"])
            admitted_at = parse_timestamp((reserved or {}).get("lastTransitionTime"))
        return Workload(
            namespace=sys.intern(meta.get("namespace", "default")),
            name=meta["name"],
            uid=meta.get("uid") or f"{meta.get('namespace', 'default')}/{meta['name']}",
            queue_name=sys.intern(spec.get("queueName") or ""),
            priority=int(priority or 0),
            creation_timestamp=created,
            pod_sets=tuple(self._pod_set(p) for p in spec.get("podSets") or ()),
            queue_timestamp=queue_timestamp,
            priority_class=priority_class,
            active=spec.get("active", True) is not False,
            finished=_is_true(conditions.get("Finished")),
            evicted=_is_true(evicted),
            preempted=_is_true(conditions.get("Preempted")),
            cleared=_cleared(conditions),
            requeue_held_by=_held_requeue_reason(conditions.get("Requeued")),
            admission=admission,
            admitted_at=admitted_at,
            max_execution_seconds=int(spec.get("maximumExecutionTimeSeconds") or 0),
            accumulated_execution_seconds=_optional_int(status.get("accumulatedPastExecutionTimeSeconds")),
            deactivation_target=_deactivation_target(conditions.get("DeactivationTarget")),
            admission_checks=admission_check_states_from_dict(status.get("admissionChecks")),
            admitted_condition=admitted_condition_from_dict(conditions.get("Admitted")),
        )

    def _quantity(self, value: Any) -> int:
        cached = self._quantities.get(value)
        if cached is None:
            if len(self._quantities) >= _CACHE_LIMIT:
                self._quantities.clear()
            cached = self._quantities[value] = parse_quantity(value)
        return cached

    def _pod_requests(self, pod_spec: Obj) -> dict[str, int]:
        """Effective pod requests: sum of containers, at least each init container, plus overhead."""
        totals: dict[str, int] = {}
        for container in pod_spec.get("containers") or ():
            for resource, milli in self._container_requests(container).items():
                totals[resource] = totals.get(resource, 0) + milli
        for container in pod_spec.get("initContainers") or ():
            for resource, milli in self._container_requests(container).items():
                totals[resource] = max(totals.get(resource, 0), milli)
        for resource, value in (pod_spec.get("overhead") or {}).items():
            totals[resource] = totals.get(resource, 0) + self._quantity(value)
        return totals

    def _container_requests(self, container: Obj) -> dict[str, int]:
        resources = container.get("resources") or {}
        # Limits stand in for missing requests, as the API server defaults them.
        merged = dict(resources.get("limits") or {})
        merged.update(resources.get("requests") or {})
        return {sys.intern(r): self._quantity(v) for r, v in merged.items()}

    def _pod_set(self, obj: Obj) -> PodSet:
        pod_spec = (obj.get("template") or {}).get("spec") or {}
        requests = tuple(sorted(self._pod_requests(pod_spec).items()))
        selector = tuple(sorted((pod_spec.get("nodeSelector") or {}).items()))
        tolerations = tuple(
            Toleration(t.get("key", ""), t.get("operator", "Equal"), t.get("value", ""), t.get("effect", ""))
            for t in pod_spec.get("tolerations") or ()
        )
        topology = topologyconversion.topology_request_from_dict(obj.get("topologyRequest"))
        key = (obj.get("name", "main"), int(obj.get("count", 1)), requests, selector, tolerations, topology)
        pod_set = self._pod_sets.get(key)
        if pod_set is None:
            if len(self._pod_sets) >= _CACHE_LIMIT:
                self._pod_sets.clear()
            pod_set = self._pod_sets[key] = PodSet(sys.intern(key[0]), key[1], requests, selector, tolerations,
                                                   topology)
        return pod_set

    def _admission(self, obj: Obj) -> Admission:
        assignments = tuple(
            PodSetAssignment(
                name=a.get("name", "main"),
                flavors=dict(a.get("flavors") or {}),
                usage={r: self._quantity(v) for r, v in (a.get("resourceUsage") or {}).items()},
                count=int(a.get("count", 0)),
                topology_assignment=(topologyconversion.assignment_from_dict(a["topologyAssignment"])
                                     if a.get("topologyAssignment") else None),
            )
            for a in obj.get("podSetAssignments") or ()
        )
        return Admission(obj.get("clusterQueue", ""), assignments)


def workload_from_dict(obj: Obj, decoder: WorkloadDecoder | None = None) -> Workload:
    """Convenience for one workload; reuse a ``WorkloadDecoder`` when decoding many."""
    return (decoder or WorkloadDecoder()).decode(obj)


def admission_to_dict(admission: Admission, hostname_prefix_runs: bool = False) -> Obj:
    """``status.admission`` JSON for a decided Admission."""
    return {
        "clusterQueue": admission.cluster_queue,
        "podSetAssignments": [_pod_set_assignment_to_dict(a, hostname_prefix_runs) for a in admission.pod_set_assignments],
    }


def _pod_set_assignment_to_dict(assignment: PodSetAssignment, hostname_prefix_runs: bool) -> Obj:
    obj: Obj = {
        "name": assignment.name,
        "flavors": dict(assignment.flavors),
        "resourceUsage": {r: format_quantity(v) for r, v in assignment.usage.items()},
        "count": assignment.count,
    }
    if assignment.topology_assignment is not None:
        obj["topologyAssignment"] = topologyconversion.assignment_to_dict(assignment.topology_assignment,
                                                                          hostname_prefix_runs)
    return obj
