"""A ClusterQueue whose cohort chain loops: its head is told so once, with Kueue's message, and nothing
crashes; the Cohorts come from the API as the informer delivers them."""

import asyncio

from scheduler.controller import controlling, metering
from scheduler.core import kinds
from scheduler.core.queues import QueueManager
from scheduler_builders import ClusterQueueBuilder
from test_controller_namespaces import Recording, _namespace, _workload


def _cohort(name: str, parent: str) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name},
            "spec": {"parentName": parent}}


def test_a_head_in_a_cohort_cycle_is_told_its_queue_is_inactive():
    client = Recording(_workload())

    async def scenario():
        manager = QueueManager()
        manager.add_resource_flavor(kinds.ResourceFlavor("default"))
        manager.add_cluster_queue(ClusterQueueBuilder("cq").flavors(("default", {"cpu": "4"})).cohort("a").obj())
        manager.add_local_queue(kinds.LocalQueue("team", "lq", "cq"))
        controller = controlling.Controller(client, manager, metering.SchedulerMetrics())
        handlers = controller.informer_handlers()
        handlers["cohorts"][0]([_cohort("a", "b"), _cohort("b", "a")])
        handlers["namespaces"][0]([_namespace("team")])
        handlers["workloads"][0]([_workload()])
        for _ in range(3):
            controller.run_cycle()
            await asyncio.sleep(0)
        await controller.settle(timeout=5)
        assert manager.cache.quotas.cohort_in_cycle("a")

    asyncio.run(scenario())
    ((method, _, body),) = client.requests
    (condition,) = body["status"]["conditions"]
    assert (method, condition["status"], condition["reason"], condition["message"]) == (
        "PATCH", "False", "Pending", "ClusterQueue cq is inactive")
