"""The job integration's edge: watches queued Jobs, and makes the one write ``core.jobs`` asks for.

Jobs come from an informer of their own that lists only Jobs with the queue-name label (the
server filters). Workloads come from the controller's informer, handed over by
``observe_workload``: one Workload watch for both, as Kueue's manager shares one cache. Every
change to a Job or to the Workload it owns queues the Job's key; workers take keys one at a time
per Job and decide from the newest state seen. A write that fails is retried after a backoff; a
Job changed meanwhile fails its guarded patch (409), is read again and retried the same way. Every
known Job is also decided again every `resync_seconds`, as an informer's resync does: a decision
missed for any reason (a lost event) costs at most that long instead of a Job suspended for good.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from scheduler.api import contenttypes, groups
from scheduler.controller import informing, metering, podsreadiness, statuses, workqueues
from scheduler.core import jobs, podsready
from scheduler.core.kinds import ResourceFlavor
from scheduler.core.workloads import Workload
from scheduler.kube import client as kube

log = logging.getLogger(__name__)

JOBS_PATH = "/apis/batch/v1/jobs"
FIELD_MANAGER = "kqbench-job-reconciler"
"""Its own manager: applying Finished under the admission's manager would drop the admission."""
PODS_READY_FIELD_MANAGER = FIELD_MANAGER + "-" + podsready.PODS_READY
"""The PodsReady condition's own manager, as Kueue's (its job controller's name + "-PodsReady"): applying it
under FIELD_MANAGER would drop Finished, and Finished under it would drop PodsReady."""
JobKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class JobSettings:
    workers: int = 8
    """Jobs reconciled at once (each does at most one write at a time)."""
    retry_seconds: float = 0.5
    """First wait before a failed write is tried again; doubles per failure of the same Job."""
    max_retry_seconds: float = 30.0
    resync_seconds: float = 30.0
    """Every known Job is decided again this often (no write when it agrees with its Workload)."""


def _rv(job: jobs.Job) -> int:
    try:
        return int(job.resource_version or 0)
    except ValueError:
        return 0


def _job_path(namespace: str, name: str) -> str:
    return f"/apis/batch/v1/namespaces/{namespace}/jobs/{name}"


@dataclass
class JobReconciler:
    client: kube.KubeClient
    flavors: Callable[[], Mapping[str, ResourceFlavor]]
    """The ResourceFlavors as the scheduler's core knows them."""
    metrics: metering.SchedulerMetrics
    settings: JobSettings = field(default_factory=JobSettings)
    clock: Callable[[], float] = time.time
    wait_for_pods_ready: bool = False
    """Keep each Workload's PodsReady condition up with its Job's pods (Kueue's jobframework, waitForPodsReady on)."""

    def __post_init__(self) -> None:
        self.queue = workqueues.WorkQueue()
        # The PodsReady condition of each Job's Workload as last seen (by the Job's uid).
        self._pods_ready: dict[str, podsready.PodsReadyCondition | None] = {}
        # The Job as last seen, and its object while a Workload may still have to be made from its
        # template (a Job object is kilobytes: 100k of them are not kept for nothing).
        self._jobs: dict[JobKey, tuple[jobs.Job, dict | None]] = {}
        self._workloads: dict[str, Workload] = {}  # by the uid of the Job that owns it
        # Job uids whose Workload write has not come back through the watch yet: deciding again from
        # the Workload as it was would repeat the write.
        self._created: set[str] = set()
        self._finishing: set[str] = set()
        self._failures: dict[JobKey, int] = {}
        self.informer: informing.Informer | None = None

    # -- what the informers say ----------------------------------------------------------------
    def observe_workload(self, kind: str, obj: dict, workload: Workload | None) -> None:
        """A Workload event as the controller applied it (``workload`` None when deleted)."""
        owner = jobs.owner_job(obj)
        if owner is None:
            return
        name, uid = owner
        if kind == "DELETED" or workload is None:
            self._workloads.pop(uid, None)
            self._pods_ready.pop(uid, None)
            self._finishing.discard(uid)
        else:
            self._workloads[uid] = workload
            self._pods_ready[uid] = podsreadiness.pods_ready_of(statuses.conditions_of(obj))
            self._created.discard(uid)
            if workload.finished:
                self._finishing.discard(uid)
        self.queue.add((obj["metadata"].get("namespace", "default"), name))

    def _remember_job(self, obj: dict, queue: bool = True) -> None:
        job = jobs.job_from_dict(obj)
        known = self._jobs.get(job.key)
        if known is not None and _rv(known[0]) > _rv(job):
            return  # a write's response already told us newer
        may_need_workload = job.suspended and job.finish is None and job.uid not in self._workloads
        self._jobs[job.key] = (job, obj if may_need_workload else None)
        if queue:
            self.queue.add(job.key)

    def _on_list(self, items: list[dict]) -> None:
        listed = set()
        for obj in items:
            self._remember_job(obj)
            listed.add(jobs.job_from_dict(obj).key)
        for key in set(self._jobs) - listed:
            del self._jobs[key]

    def _on_event(self, kind: str, obj: dict) -> None:
        if kind == "DELETED":
            job = jobs.job_from_dict(obj)
            self._jobs.pop(job.key, None)
            self._failures.pop(job.key, None)
            self._created.discard(job.uid)
            self._finishing.discard(job.uid)
        else:
            self._remember_job(obj)

    # -- deciding and writing ------------------------------------------------------------------
    async def reconcile(self, key: JobKey) -> None:
        """Make the one write the Job's state calls for; a failure queues it again after a backoff."""
        known = self._jobs.get(key)
        if known is None:
            return
        job, obj = known
        step = jobs.next_step(job, self._workloads.get(job.uid), self.flavors(), self.wait_for_pods_ready,
                              self._pods_ready.get(job.uid))
        if step is None or self._awaiting_echo(step):
            self._failures.pop(key, None)
            return
        name = _STEP_NAMES[type(step)]
        try:
            await self._write(step, obj)
        except kube.FAILURES as error:
            code = kube.failure_code(error)
            self.metrics.write_failures.labels(_STEP_RESOURCES[type(step)], code).inc()
            if code == "409":  # changed meanwhile: decided again, after the retry delay, from the Job as it is now
                await self._read_again(key)
            failures = self._failures[key] = self._failures.get(key, 0) + 1
            delay = workqueues.backoff(failures, self.settings.retry_seconds, self.settings.max_retry_seconds)
            log.warning("job %s/%s: %s failed (%s); retrying in %.1fs", *key, name, error, delay)
            self.queue.add_after(key, delay)
            return
        self._failures.pop(key, None)
        self.metrics.job_steps.labels(name).inc()

    async def _read_again(self, key: JobKey) -> None:
        """Remember the Job as the server has it now (a failed read leaves the retry to the newest seen)."""
        try:
            self._remember_job(await self.client.get(_job_path(*key)), queue=False)
        except kube.FAILURES:
            pass

    async def _resync(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.settings.resync_seconds)
            except asyncio.TimeoutError:
                for key in list(self._jobs):
                    self.queue.add(key)

    def _awaiting_echo(self, step: jobs.Step) -> bool:
        uid = step.job.uid
        return ((isinstance(step, jobs.CreateWorkload) and uid in self._created)
                or (isinstance(step, jobs.FinishWorkload) and uid in self._finishing))

    async def _write(self, step: jobs.Step, obj: dict | None) -> None:
        job = step.job
        if isinstance(step, jobs.CreateWorkload):
            if obj is None:  # its Workload was deleted: the template is read again
                obj = await self.client.get(_job_path(job.namespace, job.name))
            body = jobs.workload_for(obj)
            try:
                await self.client.request("POST", f"{groups.PATH}/namespaces/{job.namespace}/workloads", body)
            except kube.ApiError as error:
                if error.status != 409:  # already there: its event is on the way
                    raise
            self._created.add(job.uid)
            return
        if isinstance(step, jobs.FinishWorkload):
            workload = step.workload
            body = {"apiVersion": groups.API_VERSION, "kind": "Workload",
                    "metadata": {"name": workload.name, "namespace": workload.namespace},
                    "status": {"conditions": [jobs.finished_condition(step.finish, statuses.rfc3339(self.clock()))]}}
            path = f"{groups.PATH}/namespaces/{workload.namespace}/workloads/{workload.name}/status"
            await self.client.request("PATCH", f"{path}?fieldManager={FIELD_MANAGER}&force=true", body,
                                      contenttypes.APPLY_PATCH)
            self._finishing.add(job.uid)
            return
        if isinstance(step, jobs.SetPodsReady):
            await self._write_pods_ready(step)
            return
        path = _job_path(job.namespace, job.name)
        if isinstance(step, jobs.StartJob):
            result = await self.client.request("PATCH", path, jobs.start_patch(step), contenttypes.MERGE_PATCH)
        elif isinstance(step, jobs.StopJob):
            result = await self.client.request("PATCH", path, jobs.stop_patch(step), contenttypes.MERGE_PATCH)
        elif isinstance(step, jobs.ClearStartTime):
            result = await self.client.request("PATCH", f"{path}/status", jobs.clear_start_time_patch(step),
                                               contenttypes.MERGE_PATCH)
        else:
            result = await self.client.request("PATCH", path, jobs.restore_patch(step), contenttypes.MERGE_PATCH)
        # Decide the next step from what we wrote, not from the older Job the watch may still bring.
        self._remember_job(result)

    async def _write_pods_ready(self, step: jobs.SetPodsReady) -> None:
        """Apply the PodsReady condition; its lastTransitionTime stays while its status does (SetStatusCondition)."""
        workload, now = step.workload, self.clock()
        current = self._pods_ready.get(step.job.uid)
        since = current.last_transition if current is not None and current.status == step.status else now
        condition = statuses.condition(podsready.PODS_READY, step.status == "True", step.reason, step.message, since)
        body = {"apiVersion": groups.API_VERSION, "kind": "Workload",
                "metadata": {"name": workload.name, "namespace": workload.namespace},
                "status": {"conditions": [condition]}}
        path = f"{groups.PATH}/namespaces/{workload.namespace}/workloads/{workload.name}/status"
        result = await self.client.request("PATCH", f"{path}?fieldManager={PODS_READY_FIELD_MANAGER}&force=true",
                                           body, contenttypes.APPLY_PATCH)
        # Decide the next step from what we wrote (the watch's echo may come later).
        self._pods_ready[step.job.uid] = podsreadiness.pods_ready_of(statuses.conditions_of(result))

    async def run(self, stop: asyncio.Event, workloads_synced: asyncio.Event) -> None:
        """Watch queued Jobs and reconcile them until stop is set.

        Starts once the controller has listed the Workloads: a Job seen before its Workload would
        get a second one created (refused, but a wasted write per Job at start-up)."""
        await workloads_synced.wait()
        self.informer = informing.Informer(self.client, JOBS_PATH, self._on_list, self._on_event,
                                           label_selector=jobs.QUEUE_LABEL)
        await workqueues.run_workers(stop, self.queue, self.reconcile, self.settings.workers, "job",
                                     self.informer.run(stop), self._resync(stop))


_STEP_NAMES = {
    jobs.CreateWorkload: "create-workload", jobs.StartJob: "start-job", jobs.StopJob: "stop-job",
    jobs.ClearStartTime: "clear-start-time", jobs.RestoreJob: "restore-job", jobs.FinishWorkload: "finish-workload",
    jobs.SetPodsReady: "set-pods-ready",
}
_STEP_RESOURCES = {
    jobs.CreateWorkload: "workloads", jobs.StartJob: "jobs", jobs.StopJob: "jobs", jobs.ClearStartTime: "jobs/status",
    jobs.RestoreJob: "jobs", jobs.FinishWorkload: "workloads/status", jobs.SetPodsReady: "workloads/status",
}
