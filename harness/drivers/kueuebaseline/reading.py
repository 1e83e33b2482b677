"""Reading the expected admission times the scheduler serves while a kueue-baseline phase runs (the I/O edge).

Every `every_seconds` the reader GETs each ClusterQueue's pendingworkloads through kube-apiserver's
aggregated visibility path, every page (`limit`/`offset`), as a user or a dashboard would read them, and
keeps one `Entry` per Workload per read: its position and the estimate fields the entry carries
(docs/eta.md, "On the visibility entries"). It runs on the generator's event loop and client, as a task the
generator cancels when its run ends (done, at the deadline, or failing), and is bounded in reads, pages and
entries. A read that fails (the scheduler restarting, a 503 while the APIService is unavailable) is
counted and the next one tried; a scheduler that serves no estimates gives entries without an estimator.
Each page read is also kept as a `Page`: how long the GET took and the size of its body, the read path's
cost beside what it told.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import orjson

from scheduler.api import groups
from scheduler.core import conversion
from scheduler.kube import client as kube

PAGE_LIMIT = 1000
"""Entries per page: the visibility API's default limit."""
MAX_PAGES = 1000
"""Pages per ClusterQueue per read at most (a million pending): the loop's bound, far above any scenario here."""
MAX_ENTRIES = 2_000_000
"""Entries kept at most over the phase; reading stops there (a deep queue read often for long)."""
READ_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True, slots=True)
class Entry:
    """One Workload's entry in one read: where it stood and what it was told (times are POSIX seconds)."""

    read: int
    """The read's index (0, 1, ...): every queue read in one round shares it."""
    read_at: float
    """When its page arrived, by this process's clock."""
    cluster_queue: str
    namespace: str
    workload: str
    position: int
    estimator: str
    """"" when the scheduler serves no estimates."""
    estimated_at: float | None
    """estimatedAdmissionTime (whole seconds); None with a reason or none served."""
    reason: str
    note: str
    snapshot_at: float | None
    age_seconds: float | None


@dataclass(frozen=True, slots=True)
class Page:
    """One page GET of one read: the read path's cost."""

    read: int
    cluster_queue: str
    offset: int
    seconds: float
    """From the request to the parsed body, by a monotonic clock."""
    entries: int
    json_bytes: int
    """The body as JSON again (orjson, the server's encoder: its size to within whitespace)."""


def page_path(cluster_queue: str, offset: int, limit: int = PAGE_LIMIT) -> str:
    return f"{groups.VISIBILITY_PATH}/clusterqueues/{cluster_queue}/pendingworkloads?limit={limit}&offset={offset}"


def _time(text: object) -> float | None:
    try:
        return conversion.parse_timestamp(str(text).replace("Z", "+00:00")) if text else None
    except ValueError:
        return None


def entries_of(items: Iterable[dict], read: int, read_at: float, cluster_queue: str) -> list[Entry]:
    """A page's items as entries (pure)."""
    out = []
    for item in items:
        meta = item.get("metadata") or {}
        age = item.get("estimateAgeSeconds")
        out.append(Entry(read, read_at, cluster_queue, str(meta.get("namespace", "")), str(meta.get("name", "")),
                         int(item.get("positionInClusterQueue", -1)), str(item.get("estimator", "")),
                         _time(item.get("estimatedAdmissionTime")), str(item.get("estimateReason", "")),
                         str(item.get("estimateNote", "")), _time(item.get("estimateSnapshotTime")),
                         float(age) if isinstance(age, (int, float)) else None))
    return out


class Reader:
    """Reads every ClusterQueue's pending Workloads with their estimates, every `every_seconds`."""

    def __init__(self, client: kube.KubeClient, cluster_queues: Iterable[str], every_seconds: float,
                 clock: Callable[[], float] = time.time, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 page_limit: int = PAGE_LIMIT, max_entries: int = MAX_ENTRIES) -> None:
        self.client = client
        self.cluster_queues = tuple(dict.fromkeys(cluster_queues))
        self.every_seconds = every_seconds
        self.clock = clock
        self.sleep = sleep
        self.page_limit = page_limit
        self.max_entries = max_entries
        self.entries: list[Entry] = []
        self.pages: list[Page] = []
        self.reads = 0
        self.failures = 0
        self.first_failure = ""
        self.truncated = False
        """Reading stopped at `max_entries`."""

    async def run(self, max_seconds: float) -> None:
        """Read until cancelled, `max_seconds` or `max_entries`, one round every `every_seconds`."""
        end = self.clock() + max_seconds
        for read in range(int(max_seconds / self.every_seconds) + 1):
            began = self.clock()
            if began >= end:
                return
            await self.read_once(read)
            self.reads += 1
            if len(self.entries) >= self.max_entries:
                self.truncated = True
                return
            await self.sleep(max(0.0, began + self.every_seconds - self.clock()))

    async def read_once(self, read: int) -> None:
        for cluster_queue in self.cluster_queues:
            offset = 0
            for _ in range(MAX_PAGES):
                started = time.monotonic()
                try:
                    body = await self.client.get(page_path(cluster_queue, offset, self.page_limit),
                                                 timeout=READ_TIMEOUT_SECONDS)
                except kube.FAILURES as error:
                    self.failures += 1
                    self.first_failure = self.first_failure or str(error)[:300]
                    break
                items = body.get("items") or []
                self.pages.append(Page(read, cluster_queue, offset, time.monotonic() - started, len(items),
                                       len(orjson.dumps(body))))
                self.entries.extend(entries_of(items, read, self.clock(), cluster_queue))
                if len(items) < self.page_limit:
                    break
                offset += self.page_limit
