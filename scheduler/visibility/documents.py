"""The JSON the visibility server answers with: discovery, summaries, Status errors (pure)."""

from __future__ import annotations

from collections.abc import Iterable

from scheduler.api import groups

GROUP = groups.VISIBILITY_GROUP
VERSIONS = groups.VISIBILITY_VERSIONS
PREFERRED = VERSIONS[0]


def api_group() -> dict:
    versions = [{"groupVersion": f"{GROUP}/{v}", "version": v} for v in VERSIONS]
    return {"kind": "APIGroup", "apiVersion": "v1", "name": GROUP, "versions": versions,
            "preferredVersion": {"groupVersion": f"{GROUP}/{PREFERRED}", "version": PREFERRED}}


def api_group_list() -> dict:
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [api_group()]}


def api_resource_list(version: str) -> dict:
    def resource(name: str, kind: str, namespaced: bool, singular: str = "") -> dict:
        return {"name": name, "singularName": singular, "namespaced": namespaced, "kind": kind, "verbs": ["get"]}

    return {
        "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{GROUP}/{version}",
        "resources": [
            resource("clusterqueues", "ClusterQueue", False, "clusterqueue"),
            resource("clusterqueues/pendingworkloads", "PendingWorkloadsSummary", False),
            resource("localqueues", "LocalQueue", True, "localqueue"),
            resource("localqueues/pendingworkloads", "PendingWorkloadsSummary", True),
        ],
    }


def pending_workloads_summary(version: str, items: Iterable[dict]) -> dict:
    return {"kind": "PendingWorkloadsSummary", "apiVersion": f"{GROUP}/{version}",
            "metadata": {"creationTimestamp": None}, "items": list(items)}


def queue_object(version: str, kind: str, name: str, namespace: str | None = None) -> dict:
    """The parent object of the pendingworkloads subresource (Kueue serves it as a stub too)."""
    metadata = {"name": name, "creationTimestamp": None}
    if namespace:
        metadata["namespace"] = namespace
    return {"kind": kind, "apiVersion": f"{GROUP}/{version}", "metadata": metadata}


_REASONS = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
            406: "NotAcceptable", 413: "RequestEntityTooLarge", 415: "UnsupportedMediaType", 429: "TooManyRequests",
            503: "ServiceUnavailable"}


def status(code: int, message: str, details: dict | None = None) -> dict:
    """A metav1.Status failure, as kube-apiserver clients expect to parse it."""
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": _REASONS.get(code, "InternalError"), "code": code}
    if details:
        body["details"] = details
    return body
