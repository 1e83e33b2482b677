"""A relist replaces what the controller knows: objects deleted while its watch was down (an
apiserver restart, etcd away) are forgotten, so an admitted Workload deleted in that gap releases its
quota. Found by the faults scenario: after a kube-apiserver restart the ClusterQueue's status held
twice the quota the API's Workloads held, for the rest of the run."""

import asyncio

from scheduler.controller import controlling, metering
from scheduler.core.queues import QueueManager

ADMISSION = {"clusterQueue": "cq", "podSetAssignments": [
    {"name": "main", "flavors": {"cpu": "default"}, "resourceUsage": {"cpu": "2"}, "count": 1}]}


def _workload(name: str, admitted: bool) -> dict:
    obj = {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Workload",
           "metadata": {"name": name, "namespace": "team", "uid": f"u-{name}", "resourceVersion": "5",
                        "creationTimestamp": "2024-01-01T00:00:10Z"},
           "spec": {"queueName": "lq", "podSets": [{"name": "main", "count": 1, "template": {"spec": {
               "containers": [{"resources": {"requests": {"cpu": "2"}}}]}}}]}}
    if admitted:
        obj["status"] = {"admission": ADMISSION, "conditions": [
            {"type": "QuotaReserved", "status": "True", "lastTransitionTime": "2024-01-01T00:00:20Z"}]}
    return obj


def _controller() -> tuple[controlling.Controller, dict]:
    async def make():  # asyncio primitives want a running loop on 3.11's first use
        return controlling.Controller(None, QueueManager(), metering.SchedulerMetrics())
    controller = asyncio.run(make())
    return controller, controller._handlers()


def test_a_relist_forgets_workloads_deleted_while_the_watch_was_down():
    controller, handlers = _controller()
    on_list, on_event = handlers["workloads"]
    on_list([_workload("a", admitted=True), _workload("b", admitted=True), _workload("c", admitted=False)])
    assert controller.manager.admitted(("team", "a")) is not None
    assert controller.manager.workload(("team", "c")) is not None
    on_list([_workload("b", admitted=True)])  # a and c were deleted during the gap
    assert controller.manager.admitted(("team", "a")) is None
    assert controller.manager.workload(("team", "c")) is None
    assert controller.manager.admitted(("team", "b")) is not None
    on_event("DELETED", _workload("b", admitted=True))
    on_list([])
    assert controller.manager.admitted(("team", "b")) is None


def test_a_relist_forgets_queue_objects_deleted_while_the_watch_was_down():
    controller, handlers = _controller()
    on_list, _ = handlers["localqueues"]
    lq = {"metadata": {"name": "lq", "namespace": "team"}, "spec": {"clusterQueue": "cq"}}
    on_list([lq, {"metadata": {"name": "other", "namespace": "team"}, "spec": {"clusterQueue": "cq"}}])
    assert set(controller.manager.local_queues) == {("team", "lq"), ("team", "other")}
    on_list([lq])
    assert set(controller.manager.local_queues) == {("team", "lq")}
