"""A queue's pending list with its sticky Workload first, as Kueue's visibility API lists it.

A BestEffortFIFO queue's preemptor that waits for its evictions is *sticky*: Kueue's queue order puts
it before everything else until it leaves the queue, and its visibility API sorts the pending list by
that same order (pkg/cache/queue/cluster_queue.go: ``baseCompareFunc``, ``Snapshot``). The positions
strategies keep the order without it (their indexes stay as they are); here a page of that natural order
is turned into a page of the moved one: the sticky Workload at position 0 of its ClusterQueue and of its
LocalQueue, every Workload that was before it one place later. Pure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from scheduler.core.positions import PageRequest, PendingWorkloadItem

Item = PendingWorkloadItem
NaturalPage = Callable[[PageRequest], list[Item]]


def _local_queue(item: Item) -> tuple[str, str]:
    return item.namespace, item.local_queue_name


def moved(item: Item, sticky: Item) -> Item:
    """``item``'s positions once ``sticky`` (with its positions in the natural order) moves to the front."""
    if (item.namespace, item.name) == (sticky.namespace, sticky.name):
        return replace(item, position_in_cluster_queue=0, position_in_local_queue=0)
    in_cluster_queue = item.position_in_cluster_queue + (item.position_in_cluster_queue < sticky.position_in_cluster_queue)
    in_local_queue = item.position_in_local_queue
    if _local_queue(item) == _local_queue(sticky) and in_local_queue < sticky.position_in_local_queue:
        in_local_queue += 1
    return replace(item, position_in_cluster_queue=in_cluster_queue, position_in_local_queue=in_local_queue)


def page(natural: NaturalPage, sticky: Item, request: PageRequest, local_queue: tuple[str, str] | None = None) -> list[Item]:
    """The page ``request`` of the moved order, of the ClusterQueue or (``local_queue``) of one LocalQueue,
    from ``natural`` pages of the order without the move: one natural page, one item wider and one earlier,
    holds every item the moved page can show."""
    wider = natural(PageRequest(max(request.offset - 1, 0), request.limit + 1))
    position = ((lambda item: item.position_in_cluster_queue) if local_queue is None
                else (lambda item: item.position_in_local_queue))
    shown = [moved(item, sticky) for item in wider if (item.namespace, item.name) != (sticky.namespace, sticky.name)]
    if request.offset == 0 and (local_queue is None or _local_queue(sticky) == local_queue):
        shown.insert(0, moved(sticky, sticky))
    stop = request.offset + request.limit
    return [item for item in shown if request.offset <= position(item) < stop]
