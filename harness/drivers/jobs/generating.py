"""Creating the Jobs on schedule and watching what the cluster makes of them (the I/O edge).

One asyncio loop in the harness process: a creator POSTs each Job at its due time (bounded in
flight, lag recorded), and three informers (Jobs and pods by our class label, Workloads by their
owner) feed the Recorder, which times every step in the cluster's revision order at the end.
Nothing here writes to a Workload or a pod: admission is the scheduler's, pods are the job
controller's and kube-scheduler's, Running and Succeeded are kwok's, the Workload's Finished is the
scheduler's once the Job completed.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import aiohttp

from harness import waiting
from harness.drivers.jobs import plans, recording
from scheduler.api import groups
from scheduler.controller import informing
from scheduler.kube import client as kube

BATCH = "/apis/batch/v1"
JOBS = f"{BATCH}/jobs"
PODS = "/api/v1/pods"
WORKLOADS = f"{groups.PATH}/workloads"


@dataclass(frozen=True, slots=True)
class GeneratorSettings:
    max_seconds: float = 900.0
    in_flight: int = 32
    progress_seconds: float = 15.0
    sync_timeout_seconds: float = 120.0


@dataclass(slots=True)
class Outcome:
    recorder: recording.Recorder
    start: float = 0.0
    end: float = 0.0
    lags: list[float] = field(default_factory=list)
    create_failures: int = 0
    first_failure: str = ""
    timed_out: bool = False


class Generator:
    def __init__(self, client: kube.KubeClient, plan: plans.Plan, settings: GeneratorSettings,
                 clock: Callable[[], float] = time.time, say: Callable[[str], None] = print) -> None:
        self.client = client
        self.plan = plan
        self.settings = settings
        self.clock = clock
        self.say = say
        self.outcome = Outcome(recording.Recorder())
        self._slots = asyncio.Semaphore(settings.in_flight)
        self._tasks: set[asyncio.Task] = set()
        self._created_all = False
        self._done = asyncio.Event()

    def _check_done(self) -> None:
        if self._created_all and self.outcome.recorder.done():
            self._done.set()

    def _handler(self, fold: Callable[[dict, float], object]):
        def on_event(kind: str, obj: dict) -> None:
            if kind != "DELETED":
                fold(obj, self.clock())
                self._check_done()

        def on_list(items: list[dict]) -> None:
            for obj in items:
                on_event("ADDED", obj)
        return on_list, on_event

    async def _create(self, creation, record: recording.JobRecord) -> None:
        body = plans.job_manifest(creation, self.plan.shapes[creation.workload_class.name])
        try:
            stored = await self.client.request("POST", f"{BATCH}/namespaces/{record.namespace}/jobs", body)
            self.outcome.recorder.on_created(record, stored, self.clock())
        except (kube.ApiError, aiohttp.ClientError, asyncio.TimeoutError) as error:
            self.outcome.create_failures += 1
            self.outcome.first_failure = self.outcome.first_failure or str(error)[:300]
            self.outcome.recorder.jobs.pop(record.key, None)
        finally:
            self._slots.release()
        self._check_done()

    async def _create_all(self) -> None:
        start = self.outcome.start
        for creation in self.plan.schedule():
            wait = start + creation.at - self.clock()
            if wait > 0:
                await asyncio.sleep(wait)
            await self._slots.acquire()
            self.outcome.lags.append(max(0.0, self.clock() - (start + creation.at)))
            cls = creation.workload_class
            record = recording.JobRecord(creation.queue.namespace, creation.name, cls.name,
                                         creation.queue.cluster_queue, self.plan.shapes[cls.name].pods)
            self.outcome.recorder.jobs[record.key] = record  # before the POST: its events may come first
            task = asyncio.get_running_loop().create_task(self._create(creation, record))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self._created_all = True
        self._check_done()

    async def _progress(self) -> None:
        while True:
            await asyncio.sleep(self.settings.progress_seconds)
            jobs = self.outcome.recorder.jobs.values()
            pods = self.outcome.recorder.pods.values()
            self.say(f"    jobs t={self.clock() - self.outcome.start:.0f}s: created {sum(j.created is not None for j in jobs)}"
                     f"/{self.plan.total_jobs}, admitted {sum(j.admitted is not None for j in jobs)}, "
                     f"complete {sum(j.completed is not None for j in jobs)}; pods {len(pods)} created, "
                     f"{sum(p.running is not None for p in pods)} ran, {sum(p.succeeded is not None for p in pods)} succeeded")

    async def run(self) -> Outcome:
        stop = asyncio.Event()
        recorder = self.outcome.recorder
        selector = plans.CLASS_LABEL
        informers = [informing.Informer(self.client, JOBS, *self._handler(recorder.on_job), label_selector=selector),
                     informing.Informer(self.client, PODS, *self._handler(recorder.on_pod), label_selector=selector),
                     informing.Informer(self.client, WORKLOADS, *self._handler(recorder.on_workload))]
        watching = [asyncio.create_task(i.run(stop)) for i in informers]
        progress = asyncio.create_task(self._progress())
        creating = None
        try:
            for informer in informers:
                await asyncio.wait_for(informer.synced.wait(), timeout=self.settings.sync_timeout_seconds)
            self.outcome.start = self.clock()
            creating = asyncio.create_task(self._create_all())
            try:
                await asyncio.wait_for(self._done.wait(), timeout=max(1.0, self.settings.max_seconds))
            except asyncio.TimeoutError:
                self.outcome.timed_out = True
        finally:
            self.outcome.end = self.clock()
            stop.set()
            await waiting.cancel(creating, progress, *watching, *self._tasks)
            recorder.settle()
        return self.outcome


async def _run(creds, plan: plans.Plan, settings: GeneratorSettings, say) -> Outcome:
    client = kube.KubeClient(creds, None, 1, user_agent="kqbench-jobs", connections=settings.in_flight + 8)
    try:
        return await Generator(client, plan, settings, say=say).run()
    finally:
        await client.close()


def generate(creds, plan: plans.Plan, settings: GeneratorSettings, say: Callable[[str], None] = print) -> Outcome:
    """The whole generation in a fresh event loop; returns when every Job completed or at the deadline."""
    return asyncio.run(_run(creds, plan, settings, say))
