"""PositionQuerier: "where is my job?", asked wherever the position strategy under test exposes it."""

from __future__ import annotations

import random

from locust import task

from loadtests import client, naming, workloads
from loadtests.users import pacing
from scheduler.api import groups

VISIBILITY = groups.VISIBILITY_PATH
QUEUE_POSITIONS = "/apis/kqbench.dev/v1alpha1/queuepositions"
"""Where the single-object strategy writes one object per ClusterQueue (scheduler.publishing.POSITIONS_API)."""


class PositionQuerier(client.KubeUser):
    """One query mode per run (QuerySettings.mode); offsets drawn so deep pages are asked too."""

    abstract = False

    def on_start(self) -> None:
        self.rng = random.Random(f"{self.settings.seed}-{self.user_id}")
        self.names: list[str] = []

    def wait_time(self) -> float:
        return pacing.paced(self, self.settings.query.per_second)

    @task
    def ask(self) -> None:
        query = self.settings.query
        if query.mode in ("visibility-cq", "visibility-lq"):
            offset = self.rng.randint(0, query.max_offset) if query.max_offset else 0
            if query.mode == "visibility-cq":
                path = f"{VISIBILITY}/clusterqueues/{query.cluster_queue}/pendingworkloads"
            else:
                path = f"{VISIBILITY}/namespaces/{query.namespace}/localqueues/{query.local_queue}/pendingworkloads"
            self._visibility(f"{path}?offset={offset}&limit={query.limit}", query.mode)
        elif query.mode == "workload-status":
            self._workload_status()
        elif query.mode == "cq-status":
            self.call("GET", f"/apis/{workloads.API_VERSION}/clusterqueues/{query.cluster_queue}", query.mode)
        else:
            path = query.single_object_path or f"{QUEUE_POSITIONS}/{query.cluster_queue}"
            self.call("GET", path, query.mode)

    def _visibility(self, path: str, mode: str) -> None:
        # Until the visibility server is registered the aggregator answers 404 (no such group) or
        # 503 (APIService not available); say that, rather than a bare code.
        name = str(naming.RequestName("GET", naming.resource_of(path), mode))
        with self.client.request("GET", path, name=name, catch_response=True) as response:
            response.request_meta["request_type"] = "GET"
            status = response.status_code or 0
            if status == 200:
                response.success()
            elif status in (404, 503):
                response.failure(f"{status} {naming.VISIBILITY_NOT_SERVED}")
            else:
                response.failure(client.failure_reason(status, response.content, getattr(response, "error", None)))

    def _workload_status(self) -> None:
        query = self.settings.query
        if not self.names or self.rng.random() < 0.05:
            # A user knows its job's name; we learn a page of names now and then to stand in for that.
            reply = self.call("LIST", f"{workloads.collection_path(query.namespace)}?limit={query.limit}",
                              "workload-status-names")
            if reply.ok:
                self.names = [i["metadata"]["name"] for i in reply.json().get("items") or []]
        if self.names:
            name = self.rng.choice(self.names)
            reply = self.call("GET", workloads.object_path(query.namespace, name), query.mode, accept=(404,))
            if reply.status == 404:
                self.names.remove(name)
