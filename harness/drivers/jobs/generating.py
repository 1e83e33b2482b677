"""Creating the Jobs on schedule and watching what the cluster makes of them (the I/O edge).

The engine (harness.load.creating) POSTs each Job at its due time; three informers (Jobs and pods
by our class label, Workloads by their owner) feed the Recorder, which times every step in the
cluster's revision order at the end. Nothing here writes to a Workload or a pod: admission is the
scheduler's, pods are the job controller's and kube-scheduler's, Running and Succeeded are kwok's,
the Workload's Finished is the scheduler's once the Job completed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from harness.drivers.jobs import plans, recording
from harness.load import arrivals, creating
from scheduler.api import groups
from scheduler.controller import informing
from scheduler.kube import client as kube

NAME = "jobs"
BATCH = "/apis/batch/v1"
JOBS = f"{BATCH}/jobs"
PODS = "/api/v1/pods"
WORKLOADS = f"{groups.PATH}/workloads"


@dataclass(slots=True)
class Outcome:
    recorder: recording.Recorder
    creating: creating.Result


class Generator:
    """The engine's member: what a Job is, what is watched, when every Job is done."""

    def __init__(self, client: kube.KubeClient, plan: plans.Plan, settings: creating.Settings,
                 clock: Callable[[], float] = time.time, say: Callable[[str], None] = print,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self.plan = plan
        self.clock = clock
        self.recorder = recording.Recorder()
        self.engine = creating.Engine(client, self, plan.schedule(), settings, NAME, clock, say, sleep)

    def _handler(self, fold: Callable[[dict, float], object]):
        def on_event(kind: str, obj: dict) -> None:
            if kind != "DELETED":
                fold(obj, self.clock())
                self.engine.check_done()

        def on_list(items: list[dict]) -> None:
            for obj in items:
                on_event("ADDED", obj)
        return on_list, on_event

    def informers(self, client: kube.KubeClient) -> list[informing.Informer]:
        recorder, selector = self.recorder, plans.CLASS_LABEL
        return [informing.Informer(client, JOBS, *self._handler(recorder.on_job), label_selector=selector),
                informing.Informer(client, PODS, *self._handler(recorder.on_pod), label_selector=selector),
                informing.Informer(client, WORKLOADS, *self._handler(recorder.on_workload))]

    def planned(self, creation: arrivals.Creation, now: float) -> None:
        cls = creation.workload_class
        record = recording.JobRecord(creation.queue.namespace, creation.name, cls.name,
                                     creation.queue.cluster_queue, self.plan.shapes[cls.name].pods)
        self.recorder.jobs[record.key] = record

    def request(self, creation: arrivals.Creation) -> tuple[str, dict]:
        return (f"{BATCH}/namespaces/{creation.queue.namespace}/jobs",
                plans.job_manifest(creation, self.plan.shapes[creation.workload_class.name]))

    def created(self, creation: arrivals.Creation, stored: dict, now: float) -> None:
        self.recorder.on_created(self.recorder.jobs[(creation.queue.namespace, creation.name)], stored, now)

    def refused(self, creation: arrivals.Creation) -> None:
        self.recorder.jobs.pop((creation.queue.namespace, creation.name), None)

    def done(self) -> bool:
        return self.recorder.done()

    def progress(self) -> str:
        jobs, pods = self.recorder.jobs.values(), self.recorder.pods.values()
        return (f"created {sum(j.created is not None for j in jobs)}/{self.plan.total_jobs}, "
                f"admitted {sum(j.admitted is not None for j in jobs)}, complete {sum(j.completed is not None for j in jobs)}; "
                f"pods {len(pods)} created, {sum(p.running is not None for p in pods)} ran, "
                f"{sum(p.succeeded is not None for p in pods)} succeeded")

    async def run(self) -> Outcome:
        result = await self.engine.run()
        self.recorder.settle()
        return Outcome(self.recorder, result)


def generate(creds, plan: plans.Plan, settings: creating.Settings, say: Callable[[str], None] = print) -> Outcome:
    """The whole generation in a fresh event loop; returns when every Job completed or at the deadline."""
    return creating.generate(creds, settings, NAME, lambda client: Generator(client, plan, settings, say=say))
