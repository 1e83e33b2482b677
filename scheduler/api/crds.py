"""CustomResourceDefinitions for kueue.x-k8s.io/v1beta2, written here (not copied from Kueue).

Structural schemas cover the fields the core reads; everything else is preserved, so real Kueue
manifests apply unchanged. Status is a subresource everywhere: the controller writes only there.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.api import groups

GROUP = groups.GROUP
VERSION = groups.VERSION

_OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
_STRING = {"type": "string"}
_INT = {"type": "integer", "format": "int32"}
_QUANTITY = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
_CONDITIONS = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["type", "status"],
        "properties": {
            "type": _STRING, "status": _STRING, "reason": _STRING, "message": _STRING,
            "lastTransitionTime": {"type": "string", "format": "date-time"},
            "observedGeneration": {"type": "integer", "format": "int64"},
        },
    },
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
}


# A Workload's conditions bounded as in Kueue's CRD (at most 16; type and status short), which keeps the
# estimated cost of the rules that read them (_WORKLOAD_RULES) within the apiserver's budget.
_WORKLOAD_CONDITIONS = {
    **_CONDITIONS, "maxItems": 16,
    "items": {**_CONDITIONS["items"], "properties": {
        **_CONDITIONS["items"]["properties"],
        "type": {**_STRING, "maxLength": 316}, "status": {**_STRING, "enum": ["True", "False", "Unknown"]}}},
}
# Kueue's rule, word for word (apis/kueue/v1beta2/workload_types.go, v0.17.0 and v0.19.2 alike); its other
# immutability rules (queueName, priorityClassRef, podSets while reserved) are not copied.
_WORKLOAD_RULES = [{
    "rule": "((has(oldSelf.status) && has(oldSelf.status.conditions) && oldSelf.status.conditions.exists(c, "
            "c.type == 'Admitted' && c.status == 'True')) && (has(self.status) && has(self.status.conditions) "
            "&& self.status.conditions.exists(c, c.type == 'Admitted' && c.status == 'True')))"
            "?((has(oldSelf.spec.maximumExecutionTimeSeconds)?oldSelf.spec.maximumExecutionTimeSeconds:0) ==  "
            "(has(self.spec.maximumExecutionTimeSeconds)?self.spec.maximumExecutionTimeSeconds:0)):true",
    "message": "maximumExecutionTimeSeconds is immutable while workload quota reserved",
}]


def _object(properties: dict | None = None, **extra) -> dict:
    return {**_OPEN, "properties": properties or {}, **extra}


def _array(items: dict, max_items: int | None = None) -> dict:
    return {"type": "array", "items": items, **({} if max_items is None else {"maxItems": max_items})}


def _validated(schema: dict, rule: str, message: str) -> dict:
    # a bound on the text is what keeps a rule's estimated cost within the apiserver's budget
    return {**schema, "maxLength": 64, "x-kubernetes-validations": [{"rule": rule, "message": message}]}


# What Kueue's validating webhook refuses (pkg/webhooks: validateResourceQuantity, validateFairSharing),
# refused here by the apiserver with Kueue's messages: this project runs no webhook, and an object the
# scheduler cannot read sensibly must not exist rather than be read as something else.
# (the CEL quantity library in kube-apiserver v1.35's CRD rules has isLessThan/isGreaterThan, not sign)
_Q = "quantity(string(self))"
_NON_NEGATIVE_QUANTITY = _validated(_QUANTITY, f"!{_Q}.isLessThan(quantity('0'))", "must be greater than or equal to 0")
_WEIGHT = _validated(
    _QUANTITY,
    f"{_Q}.isGreaterThan(quantity('1n')) || (!{_Q}.isLessThan(quantity('0')) && !{_Q}.isGreaterThan(quantity('0')))",
    "must be greater than or equal to 0; when not 0, weight must be > 10e-9")
_RESOURCE_QUOTA = _object({
    "name": _STRING, "nominalQuota": _NON_NEGATIVE_QUANTITY, "borrowingLimit": _NON_NEGATIVE_QUANTITY,
    "lendingLimit": _NON_NEGATIVE_QUANTITY,
})
# maxItems as Kueue's CRDs (bounded lists also keep the rules' estimated cost within budget).
_RESOURCE_GROUPS = _array(_object({
    "coveredResources": _array(_STRING, 64),
    "flavors": _array(_object({"name": _STRING, "resources": _array(_RESOURCE_QUOTA, 64)}), 64),
}), 16)
# metav1.LabelSelector. No default and not nullable, as in Kueue's CRD: null is pruned to absent, which
# selects no namespace, while {} (every namespace) is kept. Operators as Kueue's webhook accepts them.
_LABEL_SELECTOR = _object({
    "matchLabels": {"type": "object", "additionalProperties": _STRING},
    "matchExpressions": _array(_object({
        "key": _STRING, "operator": {"type": "string", "enum": ["In", "NotIn", "Exists", "DoesNotExist"]},
        "values": _array(_STRING),
    }, required=["key", "operator"])),
}, **{"x-kubernetes-map-type": "atomic"})
_FAIR_SHARING = _object({"weight": _WEIGHT})
# A pod set's topologyRequest as Kueue v0.17.0 names its fields (what topologyconversion reads, and the
# pod index fields a Job's Workload carries, which the topology ungater reads).
_TOPOLOGY_REQUEST = _object({
    "required": _STRING, "preferred": _STRING, "unconstrained": {"type": "boolean"},
    "podSetSliceRequiredTopology": _STRING, "podSetSliceSize": _INT, "podSetGroupName": _STRING,
    "podIndexLabel": _STRING, "subGroupIndexLabel": _STRING, "subGroupCount": _INT,
})
_POD_SET = _object({"name": _STRING, "count": _INT, "minCount": _INT, "template": _OPEN,
                    "topologyRequest": _TOPOLOGY_REQUEST})
# Kueue v0.17.0's v1beta2 encoding: levels, then slices of domains (topologyconversion writes one).
_TOPOLOGY_ASSIGNMENT = _object({
    "levels": _array(_STRING),
    "slices": _array(_object({"domainCount": _INT, "valuesPerLevel": _array(_OPEN), "podCounts": _OPEN})),
})
_ADMISSION = _object({
    "clusterQueue": _STRING,
    "podSetAssignments": _array(_object({
        "name": _STRING, "count": _INT,
        "flavors": {"type": "object", "additionalProperties": _STRING},
        "resourceUsage": {"type": "object", "additionalProperties": _QUANTITY},
        "topologyAssignment": _TOPOLOGY_ASSIGNMENT,
    })),
})
# Admission checks as Kueue's v1beta2 CRDs bound them (what the API server refuses, it refuses here too).
_ADMISSION_CHECK_SPEC = _object({
    "controllerName": {**_STRING, "minLength": 1, "maxLength": 253,
                       "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "field is immutable"}]},
    "parameters": _object({"apiGroup": _STRING, "kind": _STRING, "name": _STRING}),
}, required=["controllerName"])
_CHECK_NAME = {**_STRING, "minLength": 1, "maxLength": 316}
_ADMISSION_CHECKS_STRATEGY = _object({"admissionChecks": {
    **_array(_object({"name": _CHECK_NAME, "onFlavors": _array(_STRING, 64)}, required=["name"]), 64),
    "minItems": 1, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]}})
_ADMISSION_CHECK_STATES = {
    **_array(_object({
        "name": _CHECK_NAME, "state": {"type": "string", "enum": ["Pending", "Ready", "Retry", "Rejected"]},
        "lastTransitionTime": {"type": "string", "format": "date-time"}, "message": {**_STRING, "maxLength": 32768},
        "requeueAfterSeconds": {**_INT, "minimum": 0}, "retryCount": {**_INT, "minimum": 0},
        "podSetUpdates": _array(_OPEN),
    }, required=["lastTransitionTime", "message", "name", "state"]), 8),
    "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
}


@dataclass(frozen=True, slots=True)
class Kind:
    kind: str
    plural: str
    namespaced: bool
    short_names: tuple[str, ...]
    spec: dict
    status: dict
    columns: tuple[tuple[str, str, str], ...] = ()
    """Printer columns (name, type, JSONPath)."""
    rules: tuple[dict, ...] = ()
    """CEL validation rules on the whole object (x-kubernetes-validations at the schema's root)."""


KINDS = (
    Kind("AdmissionCheck", "admissionchecks", False, ("ac",), _ADMISSION_CHECK_SPEC,
         _object({"conditions": _CONDITIONS})),
    Kind("ResourceFlavor", "resourceflavors", False, ("flavor", "flavors", "rf"),
         _object({"nodeLabels": {"type": "object", "additionalProperties": _STRING},
                  "nodeTaints": _array(_OPEN), "tolerations": _array(_OPEN), "topologyName": _STRING}), _object()),
    Kind("Topology", "topologies", False, (),
         _object({"levels": _array(_object({"nodeLabel": _STRING}))}), _object()),
    Kind("Cohort", "cohorts", False, (),
         _object({"parentName": _STRING, "resourceGroups": _RESOURCE_GROUPS, "fairSharing": _FAIR_SHARING}),
         _object({"fairSharing": _object({"weightedShare": {"type": "integer", "format": "int64"}})}),
         (("Parent", "string", ".spec.parentName"),)),
    Kind("ClusterQueue", "clusterqueues", False, ("cq",),
         _object({
             "cohortName": _STRING,
             "queueingStrategy": {"type": "string", "enum": ["StrictFIFO", "BestEffortFIFO"]},
             "namespaceSelector": _LABEL_SELECTOR, "resourceGroups": _RESOURCE_GROUPS,
             "preemption": _object({"withinClusterQueue": _STRING, "reclaimWithinCohort": _STRING,
                                    "borrowWithinCohort": _OPEN}),
             "flavorFungibility": _object({"whenCanBorrow": _STRING, "whenCanPreempt": _STRING}),
             "stopPolicy": _STRING, "fairSharing": _FAIR_SHARING,
             "admissionChecks": _array(_CHECK_NAME), "admissionChecksStrategy": _ADMISSION_CHECKS_STRATEGY,
             "admissionScope": _object({"admissionMode": {
                 "type": "string", "enum": ["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"]}},
                 required=["admissionMode"]),
         }),
         _object({"pendingWorkloads": _INT, "reservingWorkloads": _INT, "admittedWorkloads": _INT,
                  "conditions": _CONDITIONS, "flavorsUsage": _array(_OPEN), "flavorsReservation": _array(_OPEN),
                  "pendingWorkloadsStatus": _OPEN}),
         (("Cohort", "string", ".spec.cohortName"), ("Strategy", "string", ".spec.queueingStrategy"),
          ("Pending", "integer", ".status.pendingWorkloads"), ("Admitted", "integer", ".status.admittedWorkloads"))),
    Kind("LocalQueue", "localqueues", True, ("queue", "queues", "lq"),
         _object({"clusterQueue": _STRING, "stopPolicy": _STRING, "fairSharing": _FAIR_SHARING}),
         _object({"pendingWorkloads": _INT, "reservingWorkloads": _INT, "admittedWorkloads": _INT,
                  "conditions": _CONDITIONS,
                  # what admission fair sharing writes at each sample (admissionfairsharing.LocalQueueUsages)
                  "fairSharing": _object({"admissionFairSharingStatus": _object({
                      "consumedResources": {"type": "object", "additionalProperties": _QUANTITY},
                      "lastUpdate": {"type": "string", "format": "date-time"}})})}),
         (("ClusterQueue", "string", ".spec.clusterQueue"), ("Pending", "integer", ".status.pendingWorkloads"),
          ("Admitted", "integer", ".status.admittedWorkloads"))),
    Kind("WorkloadPriorityClass", "workloadpriorityclasses", False, (),
         _object(), _object()),
    Kind("Workload", "workloads", True, ("wl",),
         _object({"queueName": _STRING, "priority": _INT, "priorityClassName": _STRING,
                  "priorityClassSource": _STRING, "active": {"type": "boolean"}, "podSets": _array(_POD_SET),
                  # as Kueue's CRD (a kubebuilder Minimum=1 marker; no webhook checks it)
                  "maximumExecutionTimeSeconds": {**_INT, "minimum": 1}}),
         _object({"admission": _ADMISSION, "conditions": _WORKLOAD_CONDITIONS, "requeueState": _OPEN,
                  "accumulatedPastExecutionTimeSeconds": _INT, "admissionChecks": _ADMISSION_CHECK_STATES,
                  "positionInClusterQueue": {"type": "integer", "format": "int64"},
                  "positionInLocalQueue": {"type": "integer", "format": "int64"}}),
         (("Queue", "string", ".spec.queueName"), ("Admitted by", "string", ".status.admission.clusterQueue"),
          ("Age", "date", ".metadata.creationTimestamp")),
         tuple(_WORKLOAD_RULES)),
)


def crd(kind: Kind) -> dict:
    """The CustomResourceDefinition object for one kind."""
    schema = {
        "type": "object",
        "properties": {"apiVersion": _STRING, "kind": _STRING, "metadata": {"type": "object"},
                       "spec": kind.spec, "status": kind.status},
    }
    if kind.kind == "WorkloadPriorityClass":
        # Like PriorityClass, the value sits at the top level, not under spec.
        schema["properties"].update({"value": _INT, "description": _STRING})
    if kind.rules:
        schema["x-kubernetes-validations"] = list(kind.rules)
    version = {
        "name": VERSION, "served": True, "storage": True,
        "schema": {"openAPIV3Schema": schema},
        "subresources": {"status": {}},
    }
    if kind.columns:
        version["additionalPrinterColumns"] = [{"name": n, "type": t, "jsonPath": p} for n, t, p in kind.columns]
    names = {"kind": kind.kind, "listKind": kind.kind + "List", "plural": kind.plural,
             "singular": kind.kind.lower(), "categories": ["kueue"]}
    if kind.short_names:
        names["shortNames"] = list(kind.short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{kind.plural}.{GROUP}"},
        "spec": {"group": GROUP, "scope": "Namespaced" if kind.namespaced else "Cluster",
                 "names": names, "versions": [version]},
    }


def queue_positions_crd() -> dict:
    """kqbench's own kind for the single-object strategy: a ClusterQueue's whole ordered list.

    A custom resource rather than a ConfigMap: a ConfigMap is refused at 1 MiB by validation,
    while this grows until etcd's request limit, which is the failure the experiment is about.
    """
    entry = _object({"name": _STRING, "namespace": _STRING, "localQueue": _STRING, "priority": _INT,
                     "positionInLocalQueue": {"type": "integer", "format": "int64"}})
    schema = {"type": "object", "properties": {
        "apiVersion": _STRING, "kind": _STRING, "metadata": {"type": "object"},
        "clusterQueue": _STRING, "pending": {"type": "integer", "format": "int64"}, "positions": _array(entry)}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "queuepositions.kqbench.dev"},
        "spec": {"group": "kqbench.dev", "scope": "Cluster",
                 "names": {"kind": "QueuePositions", "listKind": "QueuePositionsList", "plural": "queuepositions",
                           "singular": "queuepositions"},
                 "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                               "schema": {"openAPIV3Schema": schema},
                               "additionalPrinterColumns": [{"name": "Pending", "type": "integer",
                                                             "jsonPath": ".pending"}]}]},
    }


def all_crds() -> list[dict]:
    return [crd(k) for k in KINDS] + [queue_positions_crd()]
