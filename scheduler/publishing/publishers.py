"""The three strategies that write positions into the API: status-field, single-object, cq-status-topn.

Each runs beside the controller in the scheduler process, is notified after every queue change,
and writes through the same client-side rate limit as the controller's own writes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import orjson

from scheduler.api import contenttypes, groups
from scheduler.core.pendingreading import PendingReader
from scheduler.kube import client as kube
from scheduler.publishing import metering, strategies

KUEUE = groups.PATH
POSITIONS_API = "kqbench.dev/v1alpha1"
POSITIONS_PATH = f"/apis/{POSITIONS_API}/queuepositions"
TOO_LARGE_WORDS = ("too large", "too long", "exceeds", "request entity")


def failure_reason(error: kube.ApiError) -> str:
    text = error.reason.lower()
    if error.status == 413 or any(w in text for w in TOO_LARGE_WORDS):
        return "TooLarge"
    return {404: "NotFound", 409: "Conflict", 422: "Invalid", 429: "TooManyRequests"}.get(error.status, str(error.status))


async def wait_any(event: asyncio.Event, stop: asyncio.Event, timeout: float) -> None:
    """Return when event or stop is set, or after timeout seconds."""
    waiter = asyncio.ensure_future(event.wait())
    stopper = asyncio.ensure_future(stop.wait())
    await asyncio.wait({waiter, stopper}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    stopper.cancel()


class Publisher:
    """Base: a change flag with the time of the oldest change not yet published."""

    def __init__(self, pending: PendingReader, client: kube.KubeClient, metrics: metering.PublishMetrics,
                 settings: strategies.PublishSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.pending = pending
        self.client = client
        self.metrics = metrics
        self.settings = settings
        self.clock = clock
        self.changed = asyncio.Event()
        self.oldest_change: float | None = None
        self._generations: dict[str, int] = {}

    def notify(self) -> None:
        if self.oldest_change is None:
            self.oldest_change = self.clock()
        self.changed.set()

    def take_change(self) -> float:
        """The oldest unpublished change time, and clear the flag."""
        since = self.oldest_change if self.oldest_change is not None else self.clock()
        self.oldest_change = None
        self.changed.clear()
        return since

    def changed_queues(self) -> list[str]:
        """ClusterQueues whose ordered pending list changed since the last call."""
        result = []
        for cq in self.pending.cluster_queue_names():
            generation = self.pending.generation(cq)
            if self._generations.get(cq) != generation:
                self._generations[cq] = generation
                result.append(cq)
        return result

    async def wait(self, stop: asyncio.Event, timeout: float) -> None:
        await wait_any(self.changed, stop, timeout)

    async def run(self, stop: asyncio.Event) -> None:
        raise NotImplementedError


def ordered_positions(pending: PendingReader, cq: str) -> list[tuple[tuple[str, str], int, int, object]]:
    """(key, position in CQ, position in LQ, workload) for every pending workload of cq, in order."""
    per_lq: dict[tuple[str, str], int] = {}
    result = []
    for index, workload in enumerate(pending.pending_in_order(cq)):
        lq = (workload.namespace, workload.queue_name)
        lq_index = per_lq.get(lq, 0)
        per_lq[lq] = lq_index + 1
        result.append((workload.key, index, lq_index, workload))
    return result


class StatusFieldPublisher(Publisher):
    """Rewrites every pending Workload whose position changed: O(pending) writes per queue change."""

    def __init__(self, *args, writers: int = 16, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.writers = writers
        self.published: dict[tuple[str, str], tuple[int, int]] = {}
        self.backlog: dict[tuple[str, str], tuple[int, int, float]] = {}
        self._work = asyncio.Event()

    def compute(self, since: float) -> int:
        """Queue the writes the latest change needs; returns how many positions changed."""
        changed = 0
        for cq in self.changed_queues():
            for key, in_cq, in_lq, _ in ordered_positions(self.pending, cq):
                if self.published.get(key) != (in_cq, in_lq):
                    earlier = self.backlog.get(key)
                    self.backlog[key] = (in_cq, in_lq, min(since, earlier[2]) if earlier else since)
                    changed += 1
        self.metrics.changes.labels(self.metrics.strategy).inc(changed)
        self.metrics.backlog.labels(self.metrics.strategy).set(len(self.backlog))
        if self.backlog:
            self._work.set()
        return changed

    async def _writer(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            if not self.backlog:
                self._work.clear()
                await self.wait_work(stop)
                continue
            key = next(iter(self.backlog))
            in_cq, in_lq, since = self.backlog.pop(key)
            self.metrics.backlog.labels(self.metrics.strategy).set(len(self.backlog))
            body = {"status": {"positionInClusterQueue": in_cq, "positionInLocalQueue": in_lq}}
            try:
                await self.client.patch_status(f"{KUEUE}/namespaces/{key[0]}/workloads/{key[1]}", body)
            except kube.ApiError as error:
                reason = failure_reason(error)
                self.metrics.failed(reason)
                if reason == "TooManyRequests":
                    self.backlog.setdefault(key, (in_cq, in_lq, since))
                continue
            self.published[key] = (in_cq, in_lq)
            self.metrics.wrote("workloads/status", len(orjson.dumps(body)))
            self.metrics.staleness.labels(self.metrics.strategy).observe(max(0.0, self.clock() - since))

    async def wait_work(self, stop: asyncio.Event) -> None:
        await wait_any(self._work, stop, timeout=1.0)

    async def run(self, stop: asyncio.Event) -> None:
        writers = [asyncio.create_task(self._writer(stop)) for _ in range(self.writers)]
        try:
            while not stop.is_set():
                await self.wait(stop, timeout=1.0)
                if self.changed.is_set():
                    self.compute(self.take_change())
                    await asyncio.sleep(self.settings.min_interval_seconds)  # coalesce bursts of changes
        finally:
            for task in writers:
                task.cancel()
            await asyncio.gather(*writers, return_exceptions=True)


class SingleObjectPublisher(Publisher):
    """One QueuePositions object per ClusterQueue with the whole ordered list, rewritten at most every T s.

    It grows with the queue until etcd refuses the write (its request limit is 1.5 MiB by default);
    the first such failure is recorded and the scheduler carries on.
    """

    def document(self, cq: str) -> dict:
        entries = [{"name": w.name, "namespace": w.namespace, "localQueue": w.queue_name, "priority": w.priority,
                    "positionInLocalQueue": in_lq} for _, _, in_lq, w in ordered_positions(self.pending, cq)]
        return {"apiVersion": POSITIONS_API, "kind": "QueuePositions", "metadata": {"name": cq},
                "clusterQueue": cq, "pending": len(entries), "positions": entries}

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.largest = 0
        self.first_too_large: tuple[int, int] | None = None
        """(pending, bytes) of the first write etcd refused for size."""

    async def publish(self, cq: str, since: float) -> None:
        document = self.document(cq)
        body = orjson.dumps(document)
        try:
            try:
                # A merge patch replaces the list whole and needs no resourceVersion (a PUT of a
                # custom resource does): one write per change, as a real controller would do it.
                await self.client.request("PATCH", f"{POSITIONS_PATH}/{cq}", body, contenttypes.MERGE_PATCH)
            except kube.ApiError as error:
                if error.status != 404:
                    raise
                await self.client.request("POST", POSITIONS_PATH, body)
        except kube.ApiError as error:
            reason = failure_reason(error)
            self.metrics.failed(reason)
            if reason == "TooLarge" and self.first_too_large is None:
                self.first_too_large = (document["pending"], len(body))
                self.metrics.first_failure_pending.labels(self.metrics.strategy).set(document["pending"])
                self.metrics.first_failure_bytes.labels(self.metrics.strategy).set(len(body))
            return
        self.metrics.wrote("queuepositions", len(body))
        self.largest = max(self.largest, len(body))
        self.metrics.largest_object.labels(self.metrics.strategy).set(self.largest)
        self.metrics.staleness.labels(self.metrics.strategy).observe(max(0.0, self.clock() - since))

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            await self.wait(stop, timeout=1.0)
            if not self.changed.is_set():
                continue
            since = self.take_change()
            for cq in self.changed_queues():
                await self.publish(cq, since)
            await asyncio.sleep(self.settings.single_object_interval_seconds)


class TopNPublisher(Publisher):
    """ClusterQueue status.pendingWorkloadsStatus with the first N, refreshed every T s (Kueue's old QueueVisibility)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.last: dict[str, list] = {}

    async def refresh(self, since: float) -> None:
        coverage = 1.0
        for cq in self.pending.cluster_queue_names():
            pending = self.pending.pending_in_order(cq)
            head = [{"name": w.name, "namespace": w.namespace} for w in pending[: self.settings.topn]]
            if pending:
                coverage = min(coverage, len(head) / len(pending))
            if self.last.get(cq) == head:
                continue
            body = {"apiVersion": groups.API_VERSION, "kind": "ClusterQueue", "metadata": {"name": cq},
                    "status": {"pendingWorkloadsStatus": {
                        "clusterQueuePendingWorkload": head,
                        "lastChangeTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}}}
            try:
                await self.client.request("PATCH", f"{KUEUE}/clusterqueues/{cq}/status?fieldManager=kqbench-positions&force=true",
                                          body, contenttypes.APPLY_PATCH)
            except kube.ApiError as error:
                self.metrics.failed(failure_reason(error))
                continue
            self.last[cq] = head
            self.metrics.wrote("clusterqueues/status", len(orjson.dumps(body)))
            self.metrics.staleness.labels(self.metrics.strategy).observe(max(0.0, self.clock() - since))
        self.metrics.coverage.labels(self.metrics.strategy).set(coverage)

    async def run(self, stop: asyncio.Event) -> None:
        while not stop.is_set():
            since = self.take_change() if self.changed.is_set() else self.clock()
            await self.refresh(since)
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.settings.topn_interval_seconds)
            except asyncio.TimeoutError:
                pass


class NoPublisher(Publisher):
    """The aggregated strategies: positions are computed per request; nothing is written."""

    async def run(self, stop: asyncio.Event) -> None:
        self.metrics.coverage.labels(self.metrics.strategy).set(1.0)
        await stop.wait()


PUBLISHERS = {
    strategies.STATUS_FIELD: StatusFieldPublisher,
    strategies.SINGLE_OBJECT: SingleObjectPublisher,
    strategies.CQ_STATUS_TOPN: TopNPublisher,
    strategies.AGGREGATED_SNAPSHOT: NoPublisher,
    strategies.AGGREGATED_INDEXED: NoPublisher,
}


def create(strategy: str, pending: PendingReader, client: kube.KubeClient, metrics: metering.PublishMetrics,
           settings: strategies.PublishSettings) -> Publisher:
    return PUBLISHERS[strategies.get(strategy).name](pending, client, metrics, settings)
