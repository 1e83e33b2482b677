"""Queue statuses are written by their own few workers, the latest per queue, as Kueue's ClusterQueue and
LocalQueue controllers write them: at Kueue's large-scale shape (1,000 ClusterQueues and as many
LocalQueues) every round changes every queue, and those writes sharing the decisions' slots held the
admissions back for minutes."""

import asyncio

from scheduler.controller import controlling, metering
from scheduler.core import queuestatus
from scheduler.core.queues import QueueManager


class _SlowApiserver:
    """Answers each request after a delay, counting what is in flight (the network stands in here)."""

    def __init__(self) -> None:
        self.in_flight = 0
        self.most_in_flight = 0
        self.bodies: list[dict] = []

    async def request(self, method, path, body=None, content_type=None):
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        await asyncio.sleep(0.001)
        self.bodies.append(body)
        self.in_flight -= 1
        return {}


def _status(pending: int) -> queuestatus.QueueStatus:
    return queuestatus.QueueStatus(pending=pending, admitted=0, active=queuestatus.Active(True, "Ready", "ready"))


def test_many_queues_are_written_a_few_at_a_time_and_each_queue_once_with_its_latest_counts():
    async def scenario():
        api = _SlowApiserver()
        settings = controlling.ControllerSettings(queue_status_workers=4)
        controller = controlling.Controller(api, QueueManager(), metering.SchedulerMetrics(), settings=settings)
        for round_ in range(2):  # the second round comes before the first is written: it replaces it
            for q in range(200):
                controller.request_queue_status(f"cq-{q}", f"/cq/cq-{q}", "ClusterQueue", f"cq-{q}", None,
                                                _status(round_))
        workers = [asyncio.create_task(controller.queue_status_worker()) for _ in range(4)]
        for _ in range(2000):
            if len(api.bodies) >= 200 and not controller.queue_statuses_waiting:
                break
            await asyncio.sleep(0.001)
        for worker in workers:
            worker.cancel()
        return api
    api = asyncio.run(scenario())
    assert api.most_in_flight <= 4
    assert len(api.bodies) == 200
    assert {b["status"]["pendingWorkloads"] for b in api.bodies} == {1}
