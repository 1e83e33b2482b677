"""``PendingReader``: the one interface through which pending lists and positions are read.

The visibility server (Kueue's visibility API, pkg/visibility) and the position publishers read the
queues through it and nothing else; ``pendinglists.PendingLists`` answers it (``QueueManager`` hands
out its ``pending_lists``). Reads only: nothing here changes a queue. Pure: no I/O.
"""

from __future__ import annotations

from typing import Protocol

from scheduler.core.positions import PendingWorkloadItem
from scheduler.core.workloads import Workload, WorkloadKey


class PendingReader(Protocol):
    """What the visibility server and the publishers may ask of the pending lists."""

    def cluster_queue_names(self) -> list[str]:
        """Every ClusterQueue with a pending list."""
        ...

    def has_local_queue(self, namespace: str, local_queue: str) -> bool:
        """Whether the LocalQueue is known."""
        ...

    def generation(self, cluster_queue: str) -> int:
        """Changes whenever the queue's ordered pending list changes; raises QueueNotFoundError."""
        ...

    def local_queue_generation(self, namespace: str, local_queue: str) -> tuple[str, int] | None:
        """(ClusterQueue, its generation): what a LocalQueue's page depends on; None if either is unknown."""
        ...

    def pending_in_order(self, cluster_queue: str) -> list[Workload]:
        """Every pending workload of the queue (parked included), in queue order."""
        ...

    def summary_for_cluster_queue(
        self, cluster_queue: str, offset: object = 0, limit: object = 1000
    ) -> list[PendingWorkloadItem]:
        """A page of the queue's pending workloads; raises InvalidPageError/QueueNotFoundError."""
        ...

    def summary_for_local_queue(
        self, namespace: str, local_queue: str, offset: object = 0, limit: object = 1000
    ) -> list[PendingWorkloadItem]:
        """A page of one LocalQueue's pending workloads, positions in both queues."""
        ...

    def position_of(self, key: WorkloadKey) -> tuple[int, int] | None:
        """(positionInClusterQueue, positionInLocalQueue) of a pending workload, else None."""
        ...
