"""Names every request is reported under: `VERB resource[/subresource] mode`.

The verb is the apiserver's own (`apiserver_request_total{verb}`: GET, LIST, WATCH, POST, PUT,
PATCH, DELETE), so Locust's counts line up with the apiserver's without a translation table.
Summaries that are not one HTTP request (all pages of a paginated LIST) use verbs the apiserver
never reports, so they can't be mistaken for requests when counts are compared.
"""

from __future__ import annotations

from dataclasses import dataclass

from scheduler.api import groups

APISERVER_VERBS = ("GET", "LIST", "WATCH", "POST", "PUT", "PATCH", "DELETE")
SUMMARY_VERBS = ("LIST-ALL-PAGES",)
VISIBILITY_NOT_SERVED = f"{groups.VISIBILITY_GROUP} not served (the visibility API server is not registered)"
"""Failure reason of position queries while the aggregated visibility API is absent (404 or 503)."""


@dataclass(frozen=True, slots=True)
class RequestName:
    verb: str
    resource: str
    """Plural resource, with `/status` etc. when a subresource is addressed."""
    mode: str = ""
    """Why this request is made (the user and pattern): `rv0`, `churn`, `visibility-cq`..."""

    def __str__(self) -> str:
        return f"{self.verb} {self.resource} {self.mode}".rstrip()

    @property
    def is_request(self) -> bool:
        """True when one report is one HTTP request the apiserver counts."""
        return self.verb in APISERVER_VERBS


def parse(text: str) -> RequestName:
    """Inverse of str(RequestName): 'LIST pods rv0' -> RequestName('LIST', 'pods', 'rv0')."""
    verb, _, rest = text.partition(" ")
    resource, _, mode = rest.partition(" ")
    return RequestName(verb, resource, mode)


def resource_of(path: str) -> str:
    """The resource (and subresource) a REST path addresses, as apiserver metrics label it.

    /api/v1/namespaces/ns/configmaps/x -> configmaps; .../workloads/x/status -> workloads/status;
    /apis/visibility.kueue.x-k8s.io/v1beta2/clusterqueues/cq/pendingworkloads -> clusterqueues/pendingworkloads.
    """
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if parts[:1] == ["api"]:
        parts = parts[2:]
    elif parts[:1] == ["apis"]:
        parts = parts[3:]
    if parts[:1] == ["namespaces"] and len(parts) > 2:
        parts = parts[2:]
    if not parts:
        return ""
    resource = parts[0]
    return f"{resource}/{parts[2]}" if len(parts) > 2 else resource
