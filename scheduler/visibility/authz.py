"""May this user read this queue's pending workloads? Delegated to kube-apiserver (SubjectAccessReview).

Results are cached briefly, as Kubernetes' delegating authorizer does, so that a query storm costs
the apiserver one review per user and queue every few seconds, not one per request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from scheduler.api import groups
from scheduler.kube import client as kube
from scheduler.visibility.authn import User

GROUP = groups.VISIBILITY_GROUP


@dataclass(frozen=True, slots=True)
class Attributes:
    resource: str
    name: str
    namespace: str = ""
    subresource: str = "pendingworkloads"
    verb: str = "get"


def review(user: User, attributes: Attributes) -> dict:
    """The SubjectAccessReview body for one request."""
    resource = {"group": GROUP, "resource": attributes.resource, "subresource": attributes.subresource,
                "verb": attributes.verb, "name": attributes.name}
    if attributes.namespace:
        resource["namespace"] = attributes.namespace
    spec = {"user": user.name, "groups": list(user.groups), "resourceAttributes": resource}
    if user.extra:
        spec["extra"] = {k: list(v) for k, v in user.extra.items()}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


class AllowAll:
    """Authorization off (a documented choice for experiments where only authentication matters)."""

    async def allowed(self, user: User, attributes: Attributes) -> bool:
        return True


class DelegatingAuthorizer:
    def __init__(self, client: kube.KubeClient, ttl_seconds: float = 10.0, clock: Callable[[], float] = time.monotonic,
                 max_entries: int = 10_000) -> None:
        self.client = client
        self.ttl = ttl_seconds
        self.clock = clock
        self.max_entries = max_entries
        self._cache: dict[tuple, tuple[float, bool]] = {}

    async def allowed(self, user: User, attributes: Attributes) -> bool:
        key = (user.name, user.groups, attributes)
        now = self.clock()
        hit = self._cache.get(key)
        if hit and now - hit[0] < self.ttl:
            return hit[1]
        result = await self.client.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
                                           review(user, attributes))
        allowed = bool((result.get("status") or {}).get("allowed"))
        if len(self._cache) >= self.max_entries:
            self._cache.clear()
        self._cache[key] = (now, allowed)
        return allowed
