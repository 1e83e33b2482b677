"""The controller feeds Namespaces' labels to the core and writes why a head was turned away, once, as
Kueue does (QuotaReserved=False, Pending, "Workload namespace doesn't match ClusterQueue selector")."""

import asyncio
import copy

import pytest

from scheduler.controller import controlling, metering, statuses
from scheduler.core import kinds
from scheduler.core.decisions import NAMESPACE_MISMATCH_MESSAGE
from scheduler.core.queues import QueueManager
from scheduler_builders import ClusterQueueBuilder

MISMATCH = {"type": "QuotaReserved", "status": "False", "reason": "Pending", "message": NAMESPACE_MISMATCH_MESSAGE,
            "lastTransitionTime": "2024-01-01T00:00:30Z"}


def _namespace(name: str, **labels: str) -> dict:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels}}


def _workload(conditions: list[dict] | None = None, cpu: str = "1") -> dict:
    obj = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
           "metadata": {"name": "w", "namespace": "team", "uid": "u-w", "resourceVersion": "5",
                        "creationTimestamp": "2024-01-01T00:00:10Z"},
           "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
               "containers": [{"resources": {"requests": {"cpu": cpu}}}]}}}]}}
    if conditions:
        obj["status"] = {"conditions": conditions}
    return obj


class Recording:
    """A kube client that answers every status apply with the workload carrying the applied conditions."""

    def __init__(self, workload: dict) -> None:
        self.workload = workload
        self.requests: list[tuple[str, str, dict]] = []

    async def request(self, method, path, body=None, content_type="application/json", timeout=60.0):
        self.requests.append((method, path, body))
        result = copy.deepcopy(self.workload)
        result["metadata"]["resourceVersion"] = str(int(result["metadata"]["resourceVersion"]) + 1)
        result["status"] = {"conditions": body["status"]["conditions"]}
        return result


def _run(workload: dict, namespace: dict, cycles: int = 2,
         settings: controlling.ControllerSettings = controlling.ControllerSettings()) -> Recording:
    client = Recording(workload)

    async def scenario():
        manager = QueueManager()
        manager.add_resource_flavor(kinds.ResourceFlavor("default"))
        manager.add_cluster_queue(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"}))
                                  .namespaces({"matchLabels": {"team": "a"}}).obj())
        manager.add_local_queue(kinds.LocalQueue("team", "lq", "cq"))
        controller = controlling.Controller(client, manager, metering.SchedulerMetrics(), settings=settings)
        handlers = controller.informer_handlers()
        handlers["namespaces"][0]([namespace])
        handlers["workloads"][0]([workload])
        for _ in range(cycles):
            await controller.cycle()
            await asyncio.sleep(0)
        await controller.settle(timeout=5)
        return controller

    asyncio.run(scenario())
    return client


def test_a_turned_away_workload_is_told_why_once():
    client = _run(_workload(), _namespace("team", team="b"))
    ((method, path, body),) = client.requests
    assert method == "PATCH" and f"fieldManager={statuses.PENDING_FIELD_MANAGER}" in path
    assert path.startswith("/apis/kueue.x-k8s.io/v1beta2/namespaces/team/workloads/w/status")
    assert body["metadata"]["resourceVersion"] == "5", "only onto the object the decision saw"
    (condition,) = body["status"]["conditions"]
    assert (condition["type"], condition["status"], condition["reason"], condition["message"]) == (
        "QuotaReserved", "False", "Pending", NAMESPACE_MISMATCH_MESSAGE)


@pytest.mark.parametrize(("conditions", "writes"), [
    ([MISMATCH], 0),  # it says so already: Kueue's UnsetQuotaReservationWithCondition changes nothing
    ([{**MISMATCH, "reason": "Preempted", "message": "Preempted to accommodate x"}], 1),
])
def test_the_message_is_written_only_when_it_changes(conditions, writes):
    client = _run(_workload(conditions), _namespace("team", team="b"))
    assert len(client.requests) == writes
    if writes:
        (condition,) = client.requests[0][2]["status"]["conditions"]
        assert condition["lastTransitionTime"] == MISMATCH["lastTransitionTime"], "still False: time kept"


def test_a_selected_namespace_is_admitted_and_nothing_pending_is_written():
    client = _run(_workload(), _namespace("team", team="a"), cycles=1)
    ((_, path, body),) = client.requests
    assert f"fieldManager={statuses.FIELD_MANAGER}&" in path and body["status"]["admission"]["clusterQueue"] == "cq"


def test_namespaces_are_listed_watched_and_forgotten_on_relist():
    async def make():
        return controlling.Controller(None, QueueManager(), metering.SchedulerMetrics())
    controller = asyncio.run(make())
    on_list, on_event = controller.informer_handlers()["namespaces"]
    on_list([_namespace("a", team="a"), _namespace("b")])
    assert controller.manager.namespaces.labels == {"a": {"team": "a"}, "b": {}}
    on_event("MODIFIED", _namespace("b", team="b"))
    assert controller.manager.namespaces.labels["b"] == {"team": "b"}
    on_list([_namespace("b", team="b")])
    assert set(controller.manager.namespaces.labels) == {"b"}
    assert controlling.PATHS["namespaces"] == "/api/v1/namespaces"


EVERY_HEAD = controlling.ControllerSettings(write_pending_reasons=True)


def test_a_head_that_does_not_fit_is_told_why_only_when_pending_reasons_are_written():
    too_big = _workload(cpu="8")
    assert _run(too_big, _namespace("team", team="a")).requests == [], "the reference design: nothing written"
    ((_, path, body),) = _run(too_big, _namespace("team", team="a"), settings=EVERY_HEAD).requests
    assert f"fieldManager={statuses.PENDING_FIELD_MANAGER}" in path
    (condition,) = body["status"]["conditions"]
    assert (condition["status"], condition["reason"]) == ("False", "Pending")
    assert "cpu" in condition["message"], condition["message"]


def test_pending_reasons_are_written_before_the_cycle_returns():
    client = Recording(_workload(cpu="8"))

    async def scenario():
        manager = QueueManager()
        manager.add_resource_flavor(kinds.ResourceFlavor("default"))
        manager.add_cluster_queue(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).obj())
        manager.add_local_queue(kinds.LocalQueue("team", "lq", "cq"))
        controller = controlling.Controller(client, manager, metering.SchedulerMetrics(), settings=EVERY_HEAD)
        controller.informer_handlers()["workloads"][0]([client.workload])
        await controller.cycle()
        return len(client.requests), controller.writes_in_flight

    assert asyncio.run(scenario()) == (1, 0), "written in the cycle, not left in the background"
