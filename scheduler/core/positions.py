"""Queue positions and visibility summaries, with interchangeable strategies.

Positions follow Kueue's visibility API (``visibility.kueue.x-k8s.io``
PendingWorkloadsSummary): every pending workload of a ClusterQueue, parked ones
included, in queue order; ``positionInClusterQueue`` and ``positionInLocalQueue`` count
from 0. Strategies, chosen by name through a ``PositionRegistry``:

- ``snapshot``: copy the queue's pending set and sort it on every request, as Kueue
  does today. Free to maintain, O(n log n) per request.
- ``indexed``: order-statistic lists (``sortedcontainers``) per ClusterQueue and per
  LocalQueue, updated on every change. O(log n) to maintain, O(log n) per position,
  O(log n + limit) per page (plus O(log n) per distinct LocalQueue on a page).

A strategy is told about every change through ``workload_added``/``workload_removed``
and answers pages given the queue's unordered pending set (which ``indexed`` ignores).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from sortedcontainers import SortedKeyList

from scheduler.core.workloads import Workload, order_key

DEFAULT_LIMIT = 1000
MAX_LIMIT = 100_000


class InvalidPageError(ValueError):
    """offset/limit are not non-negative integers (the visibility server answers 400)."""


class QueueNotFoundError(LookupError):
    """The ClusterQueue or LocalQueue is unknown (the visibility server answers 404)."""


@dataclass(slots=True, frozen=True)
class PageRequest:
    """A validated page: ``offset`` items skipped, at most ``limit`` returned."""

    offset: int = 0
    limit: int = DEFAULT_LIMIT

    @classmethod
    def of(cls, offset: object = 0, limit: object = DEFAULT_LIMIT) -> PageRequest:
        """Validate offset/limit given as ints or query-string text; a limit of 0 means the default
        (Kueue's SetDefaults_PendingWorkloadOptions, apis/visibility/v1beta2/defaults.go); clamp it to 100000."""
        offset_value = _non_negative_int("offset", offset, default=0)
        limit_value = _non_negative_int("limit", limit, default=DEFAULT_LIMIT) or DEFAULT_LIMIT
        return cls(offset_value, min(limit_value, MAX_LIMIT))


MAX_INT64 = 2**63 - 1
"""Kueue reads offset and limit as int64: a larger value is a bad request there too."""


def _shown(value: object) -> str:
    """The value in an error message, cut short (a query value may be megabytes, an int thousands of digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 128:
        return f"a {value.bit_length()}-bit number"
    text = repr(value)
    return text if len(text) <= 64 else f"{text[:60]}..."


def _non_negative_int(name: str, value: object, default: int) -> int:
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        raise InvalidPageError(f"{name} must be a non-negative integer, got {value!r}")
    if isinstance(value, str):
        text = value.strip()
        # an int64 has at most 19 digits; checked before int() (Python refuses 4,300+ digits with a ValueError)
        if not text.isdecimal() or not text.isascii():
            raise InvalidPageError(f"{name} must be a non-negative integer, got {_shown(value)}")
        if len(text.lstrip("0")) > 19:
            raise InvalidPageError(f"{name} must be a non-negative integer no larger than {MAX_INT64}, got {_shown(value)}")
        value = int(text)
    if isinstance(value, int):
        if value < 0:
            raise InvalidPageError(f"{name} must be a non-negative integer, got {_shown(value)}")
        if value > MAX_INT64:
            raise InvalidPageError(f"{name} must be a non-negative integer no larger than {MAX_INT64}, got {_shown(value)}")
        return value
    raise InvalidPageError(f"{name} must be a non-negative integer, got {_shown(value)}")


@dataclass(slots=True)
class PendingWorkloadItem:
    """One entry of a PendingWorkloadsSummary (not frozen: built per item on hot pages)."""

    name: str
    namespace: str
    creation_timestamp: str
    priority: int
    local_queue_name: str
    position_in_cluster_queue: int
    position_in_local_queue: int

    def to_dict(self) -> dict[str, Any]:
        """Kueue's visibility ``PendingWorkload`` JSON shape."""
        return {
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "creationTimestamp": self.creation_timestamp,
            },
            "priority": self.priority,
            "localQueueName": self.local_queue_name,
            "positionInClusterQueue": self.position_in_cluster_queue,
            "positionInLocalQueue": self.position_in_local_queue,
        }


def rfc3339(seconds: float) -> str:
    """POSIX seconds as Kubernetes' metav1.Time text (second precision, UTC)."""
    # gmtime + %-format is about twice as fast as datetime.strftime; pages call it per item.
    return "%04d-%02d-%02dT%02d:%02d:%02dZ" % time.gmtime(int(seconds))[:6]


def make_item(workload: Workload, in_cluster_queue: int, in_local_queue: int) -> PendingWorkloadItem:
    return PendingWorkloadItem(
        name=workload.name,
        namespace=workload.namespace,
        creation_timestamp=rfc3339(workload.creation_timestamp),
        priority=workload.priority,
        local_queue_name=workload.queue_name,
        position_in_cluster_queue=in_cluster_queue,
        position_in_local_queue=in_local_queue,
    )


class PositionStrategy(Protocol):
    """How positions are kept and served; implementations are registered by name."""

    name: ClassVar[str]

    def workload_added(self, cluster_queue: str, workload: Workload) -> None: ...

    def workload_removed(self, cluster_queue: str, workload: Workload) -> None: ...

    def cluster_queue_removed(self, cluster_queue: str) -> None: ...

    def page_cluster_queue(
        self, cluster_queue: str, pending: Collection[Workload], page: PageRequest
    ) -> list[PendingWorkloadItem]: ...

    def page_local_queue(
        self, cluster_queue: str, local_queue: tuple[str, str], pending: Collection[Workload], page: PageRequest
    ) -> list[PendingWorkloadItem]: ...

    def position_of(
        self, cluster_queue: str, workload: Workload, pending: Collection[Workload]
    ) -> tuple[int, int]: ...


class SnapshotPositions:
    """Copy and sort the pending set per request (Kueue's PendingWorkloadsInfo)."""

    name: ClassVar[str] = "snapshot"

    def workload_added(self, cluster_queue: str, workload: Workload) -> None:
        pass  # nothing to maintain: the cost is paid per request

    def workload_removed(self, cluster_queue: str, workload: Workload) -> None:
        pass

    def cluster_queue_removed(self, cluster_queue: str) -> None:
        pass

    def page_cluster_queue(
        self, cluster_queue: str, pending: Collection[Workload], page: PageRequest
    ) -> list[PendingWorkloadItem]:
        return sorted_page(pending, page)

    def page_local_queue(
        self, cluster_queue: str, local_queue: tuple[str, str], pending: Collection[Workload], page: PageRequest
    ) -> list[PendingWorkloadItem]:
        return sorted_local_page(pending, local_queue, page)

    def position_of(
        self, cluster_queue: str, workload: Workload, pending: Collection[Workload]
    ) -> tuple[int, int]:
        return sorted_position(pending, workload)


# Sorting per request, with a key other than the queue order where a ClusterQueue orders otherwise
# (admission fair sharing: pendinglists pages such a queue with these whatever the strategy).
SortKey = Callable[[Workload], Any]


def sorted_page(pending: Collection[Workload], page: PageRequest,
                key: SortKey = order_key) -> list[PendingWorkloadItem]:
    """A page of the ClusterQueue's pending workloads sorted by ``key``."""
    ordered = sorted(pending, key=key)
    per_local_queue: dict[tuple[str, str], int] = {}
    items = []
    stop = page.offset + page.limit
    for index, workload in enumerate(ordered):
        if index >= stop:
            break
        in_local_queue = per_local_queue.get(workload.local_queue, 0)
        per_local_queue[workload.local_queue] = in_local_queue + 1
        if index >= page.offset:
            items.append(make_item(workload, index, in_local_queue))
    return items


def sorted_local_page(pending: Collection[Workload], local_queue: tuple[str, str], page: PageRequest,
                      key: SortKey = order_key) -> list[PendingWorkloadItem]:
    """A page of one LocalQueue's pending workloads, the ClusterQueue's sorted by ``key``."""
    ordered = sorted(pending, key=key)
    items: list[PendingWorkloadItem] = []
    seen = 0
    for index, workload in enumerate(ordered):
        if len(items) >= page.limit:
            break
        if workload.local_queue != local_queue:
            continue
        if seen >= page.offset:
            items.append(make_item(workload, index, seen))
        seen += 1
    return items


def sorted_position(pending: Collection[Workload], workload: Workload, key: SortKey = order_key) -> tuple[int, int]:
    """(positionInClusterQueue, positionInLocalQueue) of ``workload`` among ``pending`` sorted by ``key``."""
    ordered = sorted(pending, key=key)
    in_local_queue = 0
    for index, other in enumerate(ordered):
        if other is workload:
            return index, in_local_queue
        if other.local_queue == workload.local_queue:
            in_local_queue += 1
    raise KeyError(workload.key)


class IndexedPositions:
    """Order-statistic lists per ClusterQueue and per LocalQueue, kept current on every change."""

    name: ClassVar[str] = "indexed"

    def __init__(self) -> None:
        self._by_cluster_queue: dict[str, SortedKeyList] = {}
        self._by_local_queue: dict[tuple[str, str], SortedKeyList] = {}

    def workload_added(self, cluster_queue: str, workload: Workload) -> None:
        cq_index = self._by_cluster_queue.get(cluster_queue)
        if cq_index is None:
            cq_index = self._by_cluster_queue[cluster_queue] = SortedKeyList(key=order_key)
        cq_index.add(workload)
        lq_index = self._by_local_queue.get(workload.local_queue)
        if lq_index is None:
            lq_index = self._by_local_queue[workload.local_queue] = SortedKeyList(key=order_key)
        lq_index.add(workload)

    def workload_removed(self, cluster_queue: str, workload: Workload) -> None:
        self._by_cluster_queue[cluster_queue].remove(workload)
        lq_index = self._by_local_queue[workload.local_queue]
        lq_index.remove(workload)
        if not lq_index:
            del self._by_local_queue[workload.local_queue]

    def cluster_queue_removed(self, cluster_queue: str) -> None:
        for workload in self._by_cluster_queue.pop(cluster_queue, ()):
            lq_index = self._by_local_queue.get(workload.local_queue)
            if lq_index is not None:
                lq_index.discard(workload)
                if not lq_index:
                    del self._by_local_queue[workload.local_queue]

    def page_cluster_queue(
        self, cluster_queue: str, pending: Collection[Workload], page: PageRequest
    ) -> list[PendingWorkloadItem]:
        cq_index = self._by_cluster_queue.get(cluster_queue)
        if not cq_index:
            return []
        # A LocalQueue's rank is looked up once per page, then counted forward.
        next_in_local_queue: dict[tuple[str, str], int] = {}
        items = []
        window = cq_index.islice(page.offset, page.offset + page.limit)
        for index, workload in enumerate(window, start=page.offset):
            lq = workload.local_queue
            in_local_queue = next_in_local_queue.get(lq)
            if in_local_queue is None:
                in_local_queue = self._by_local_queue[lq].bisect_key_left(workload.order_key)
            next_in_local_queue[lq] = in_local_queue + 1
            items.append(make_item(workload, index, in_local_queue))
        return items

    def page_local_queue(
        self, cluster_queue: str, local_queue: tuple[str, str], pending: Collection[Workload], page: PageRequest
    ) -> list[PendingWorkloadItem]:
        lq_index = self._by_local_queue.get(local_queue)
        cq_index = self._by_cluster_queue.get(cluster_queue)
        if not lq_index or cq_index is None:
            return []
        window: Iterable[Workload] = lq_index.islice(page.offset, page.offset + page.limit)
        return [
            make_item(workload, cq_index.bisect_key_left(workload.order_key), index)
            for index, workload in enumerate(window, start=page.offset)
        ]

    def position_of(
        self, cluster_queue: str, workload: Workload, pending: Collection[Workload]
    ) -> tuple[int, int]:
        return (
            self._by_cluster_queue[cluster_queue].bisect_key_left(workload.order_key),
            self._by_local_queue[workload.local_queue].bisect_key_left(workload.order_key),
        )


class PositionRegistry:
    """Maps strategy names to classes; explicit, so nothing registers at import time."""

    def __init__(self, strategies: Iterable[type[PositionStrategy]] = ()) -> None:
        self._classes: dict[str, type[PositionStrategy]] = {}
        for strategy in strategies:
            self.register(strategy)

    def register(self, strategy: type[PositionStrategy]) -> None:
        if strategy.name in self._classes:
            raise ValueError(f"position strategy {strategy.name!r} is already registered")
        self._classes[strategy.name] = strategy

    def names(self) -> list[str]:
        return sorted(self._classes)

    def create(self, name: str) -> PositionStrategy:
        try:
            return self._classes[name]()
        except KeyError:
            known = ", ".join(self.names())
            raise ValueError(f"unknown position strategy {name!r} (known: {known})") from None


def default_registry() -> PositionRegistry:
    """A new registry holding the built-in ``snapshot`` and ``indexed`` strategies."""
    return PositionRegistry([SnapshotPositions, IndexedPositions])
