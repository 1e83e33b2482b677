"""The topology ungater's edge: watches the pods topology-placed Jobs start, and ungates each into its
domain.

Pods come from an informer that starts with the first Workload admitted with a topology assignment (a
cluster without TAS costs no pod watch, as nodes are watched only once a TAS flavor exists) and lists only
pods with the pod set label a start puts on a Job's template (the server filters: other pods cost no
events); of those only pods with the Workload annotation are kept, a few fields each. Workloads come from
the controller's informer, handed over by ``observe_workload``. A pod event or a topology-admitted
Workload queues the Workload's key after ``batch_seconds`` (Kueue's UpdatesBatchPeriod), so that a Job's
pods, created one by one, are decided together; a worker then asks ``core.ungating`` which gated pods go
where and patches each. A patch's response replaces the pod as known, so a pod is never ungated twice from
a stale view; a failed patch (a 409: the pod changed) queues the Workload again after a backoff.
"""

from __future__ import annotations

import asyncio
import logging
from collections import defaultdict
from dataclasses import dataclass, field

from scheduler.api import contenttypes
from scheduler.controller import informing, metering, workqueues
from scheduler.core import jobs, ungating
from scheduler.core.workloads import Workload
from scheduler.kube import client as kube

log = logging.getLogger(__name__)

PODS_PATH = "/api/v1/pods"
STEP = "ungate-pod"
WorkloadKey = tuple[str, str]


@dataclass(frozen=True, slots=True)
class UngaterSettings:
    workers: int = 4
    patches_at_once: int = 8
    """A Workload's pods patched in parallel (Kueue's parallelize.Until: at most 8 at a time)."""
    batch_seconds: float = 1.0
    """Kueue's UpdatesBatchPeriod: a Workload is decided this long after the first event that queued it."""
    retry_seconds: float = 0.005
    """A failed patch (mostly a 409: kube-scheduler marked the pod SchedulingGated meanwhile) is tried again
    from the pod as the watch then has it, after 5 ms doubling per failure: controller-runtime's default
    per-item backoff, which Kueue's ungater gets on the error its strict patch returns."""
    max_retry_seconds: float = 30.0


@dataclass
class TopologyUngater:
    client: kube.KubeClient
    metrics: metering.SchedulerMetrics
    settings: UngaterSettings = field(default_factory=UngaterSettings)

    def __post_init__(self) -> None:
        self.queue = workqueues.WorkQueue()
        self._batching: set[WorkloadKey] = set()
        self._placed: dict[WorkloadKey, Workload] = {}  # admitted with a topology assignment
        self._pods: dict[tuple[str, str], ungating.GatedPod] = {}
        self._pods_of: dict[WorkloadKey, set[tuple[str, str]]] = defaultdict(set)
        self._failures: dict[WorkloadKey, int] = {}
        self._needed = asyncio.Event()
        self.informer: informing.Informer | None = None

    # -- what the informers say ----------------------------------------------------------------
    def observe_workload(self, kind: str, obj: dict, workload: Workload | None) -> None:
        """A Workload event as the controller applied it (``workload`` None when deleted)."""
        meta = obj.get("metadata") or {}
        key = (meta.get("namespace", "default"), meta.get("name", ""))
        placed = (workload is not None and workload.active and not workload.finished and workload.admission is not None
                  and any(a.topology_assignment is not None for a in workload.admission.pod_set_assignments))
        if placed:
            self._placed[key] = workload
            self._needed.set()
            self._batch(key)
        else:
            self._placed.pop(key, None)

    def _remember(self, obj: dict) -> None:
        pod = ungating.gated_pod_from_dict(obj)
        if pod is None:
            return
        self._forget(pod.key)
        self._pods[pod.key] = pod
        workload = (pod.namespace, pod.workload)
        self._pods_of[workload].add(pod.key)
        if pod.gated:
            self._batch(workload)

    def _forget(self, key: tuple[str, str]) -> None:
        pod = self._pods.pop(key, None)
        if pod is None:
            return
        workload = (pod.namespace, pod.workload)
        members = self._pods_of.get(workload)
        if members is not None:
            members.discard(key)
            if not members:
                del self._pods_of[workload]

    def _on_list(self, items: list[dict]) -> None:
        self._pods.clear()
        self._pods_of.clear()
        for obj in items:
            self._remember(obj)

    def _on_event(self, kind: str, obj: dict) -> None:
        if kind == "DELETED":
            meta = obj.get("metadata") or {}
            self._forget((meta.get("namespace", "default"), meta.get("name", "")))
        else:
            self._remember(obj)

    def _batch(self, key: WorkloadKey) -> None:
        if key in self._batching:
            return
        self._batching.add(key)

        def release() -> None:
            self._batching.discard(key)
            self.queue.add(key)
        asyncio.get_running_loop().call_later(self.settings.batch_seconds, release)

    # -- deciding and writing ------------------------------------------------------------------
    def decide(self, key: WorkloadKey) -> list[ungating.Ungate]:
        workload = self._placed.get(key)
        if workload is None or workload.admission is None:
            return []
        pods = sorted((self._pods[p] for p in self._pods_of.get(key, ())), key=lambda pod: pod.name)
        out: list[ungating.Ungate] = []
        for assignment in workload.admission.pod_set_assignments:
            if assignment.topology_assignment is not None:
                out += ungating.to_ungate(assignment.topology_assignment,
                                          [pod for pod in pods if pod.pod_set == assignment.name])
        return out

    async def _ungate(self, step: ungating.Ungate, room: asyncio.Semaphore) -> bool:
        """One pod's patch; False when it failed."""
        path = f"/api/v1/namespaces/{step.pod.namespace}/pods/{step.pod.name}"
        async with room:
            try:
                answer = await self.client.request("PATCH", path, ungating.ungate_patch(step), contenttypes.MERGE_PATCH)
            except kube.FAILURES as error:
                self.metrics.write_failures.labels("pods", kube.failure_code(error)).inc()
                log.warning("pod %s/%s: ungating failed (%s)", step.pod.namespace, step.pod.name, error)
                return False
        self._remember(answer)
        self.metrics.job_steps.labels(STEP).inc()
        return True

    async def reconcile(self, key: WorkloadKey) -> None:
        """Patch every pod the Workload's state calls for, ``patches_at_once`` at a time (Kueue's ungater patches
        a Workload's pods in parallel); any failure queues the Workload again after a backoff."""
        room = asyncio.Semaphore(self.settings.patches_at_once)
        done = await asyncio.gather(*(self._ungate(step, room) for step in self.decide(key)))
        if all(done):
            self._failures.pop(key, None)
            return
        failures = self._failures[key] = self._failures.get(key, 0) + 1
        self.queue.add_after(key, workqueues.backoff(failures, self.settings.retry_seconds,
                                                     self.settings.max_retry_seconds))

    async def run(self, stop: asyncio.Event) -> None:
        """Once a Workload is placed by topology, watch the pods Jobs' starts labelled and ungate them;
        until stop is set."""
        waiting = [asyncio.create_task(stop.wait()), asyncio.create_task(self._needed.wait())]
        await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
        for task in waiting:
            task.cancel()
        if stop.is_set():
            return
        log.info("a Workload is placed by topology: watching the pods Jobs start")
        self.informer = informing.Informer(self.client, PODS_PATH, self._on_list, self._on_event,
                                           label_selector=jobs.POD_SET_LABEL)
        await workqueues.run_workers(stop, self.queue, self.reconcile, self.settings.workers, "workload",
                                     self.informer.run(stop))
