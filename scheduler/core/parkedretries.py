"""``ParkedRetries``: when a change of capacity returns parked workloads to their active queues.

Any release of quota ("capacity changed") lifts StrictFIFO blocks in a ClusterQueue at once, and
returns its parked workloads ``batch_seconds`` after the first change: Kueue's
QueueInadmissibleWorkloads goes through a delaying work queue (pkg/cache/queue/inadmissible_workloads.go:
one retry per root cohort, ``requeueBatchPeriod`` after the change, later changes folded into it).
The caller says which queues a change touches (the queue and its cohort tree).

No clock of its own: ``retry_due(now)`` gives each retry asked for since the last call its time and
carries out those that are due. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from scheduler.core.pendingqueues import PendingQueue
from scheduler.core.workloads import Workload

REQUEUE_BATCH_SECONDS = 1.0
"""Kueue's requeueBatchPeriod (pkg/cache/queue/inadmissible_workloads.go; 10 s under its
SchedulerLongRequeueInterval gate, off by default)."""

StaysParked = Callable[[str], Callable[[Workload], bool] | None]
"""Given a ClusterQueue's name, what keeps a parked workload of it parked (None: nothing)."""


class ParkedRetries:
    """The retries asked for and the time each is due, per ClusterQueue.

    ``queues`` is the pending lists' own mapping, read here: the queues a retry finds are those that
    exist when it is due.
    """

    def __init__(self, queues: Mapping[str, PendingQueue], stays_parked: StaysParked,
                 batch_seconds: float = REQUEUE_BATCH_SECONDS) -> None:
        self._queues = queues
        self._stays_parked = stays_parked
        # 0 returns parked workloads at the change itself (for callers that drive no clock)
        self.batch_seconds = batch_seconds
        self._asked: set[str] = set()
        self._due: dict[str, float] = {}

    def capacity_changed(self, cluster_queues: Iterable[str]) -> None:
        """Capacity moved for these queues: offer their blocked heads again, and retry their parked workloads."""
        for name in cluster_queues:
            queue = self._queues.get(name)
            if queue is None:
                continue
            queue.unblock()
            if self.batch_seconds <= 0:
                queue.unpark(self._stays_parked(name))
            elif name not in self._due:  # a retry already waiting takes this change along
                self._asked.add(name)

    def retry_due(self, now: float) -> None:
        """Time every retry asked for since the last call (``now`` + the batch period); return the parked
        workloads of the queues whose retry is due."""
        for name in self._asked:
            self._due.setdefault(name, now + self.batch_seconds)
        self._asked.clear()
        for name, due in list(self._due.items()):
            if due <= now:
                del self._due[name]
                queue = self._queues.get(name)
                if queue is not None:
                    queue.unpark(self._stays_parked(name))

    def next_retry_at(self) -> float | None:
        """When the next parked workloads come back (None: no retry waiting, or one not yet timed)."""
        if self._asked:
            return None
        return min(self._due.values(), default=None)

    def waiting(self) -> bool:
        """Whether a retry is asked for or timed."""
        return bool(self._asked or self._due)
